#include "transports/shm/single_copy.h"

#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

namespace braid::transport::shm {
namespace {

constexpr uint64_t kProbeMagic = 0x6272642d70726f62;  // "brd-prob"

bool cmaForcedOff() {
  const char* value = std::getenv("BRAID_SHM_TEST_NO_CMA");
  return value != nullptr && std::strcmp(value, "1") == 0;
}

// One process_vm_readv call; returns bytes read or -1 with errno set.
ssize_t readOnce(int pid, uint64_t address, void* dst, size_t bytes) {
  iovec local{dst, bytes};
  iovec remote{reinterpret_cast<void*>(address), bytes};
  return process_vm_readv(pid, &local, 1, &remote, 1, 0);
}

}  // namespace

void fillProbePattern(uint64_t pattern[2], int pid, int rank) {
  pattern[0] = kProbeMagic ^ static_cast<uint64_t>(static_cast<uint32_t>(pid));
  pattern[1] = ~kProbeMagic ^ static_cast<uint64_t>(static_cast<uint32_t>(rank));
}

bool canReadPeer(const ProbeTarget& target) {
  if (cmaForcedOff()) return false;
  if (target.pid == getpid()) return true;
  uint64_t expected[2], got[2] = {0, 0};
  fillProbePattern(expected, target.pid, target.rank);
  if (readOnce(target.pid, target.address, got, sizeof(got)) != sizeof(got)) return false;
  return std::memcmp(expected, got, sizeof(got)) == 0;
}

Status readPeerMemory(const PeerMemory& peer, uint64_t address, void* dst, size_t bytes) {
  if (peer.sameProcess) {
    std::memcpy(dst, reinterpret_cast<const void*>(address), bytes);
    return Status::ok();
  }
  auto* out = static_cast<uint8_t*>(dst);
  size_t done = 0;
  while (done < bytes) {
    ssize_t n = readOnce(peer.pid, address + done, out + done, bytes - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    int error = n < 0 ? errno : EFAULT;  // 0 bytes read: the range is not mapped
    std::string who =
        "rank " + std::to_string(peer.rank) + " (pid " + std::to_string(peer.pid) + ")";
    if (error == ESRCH) {
      return remoteError("shm: " + who + " died during a single-copy transfer", peer.rank);
    }
    return remoteError("shm: single-copy read of " + std::to_string(bytes) + " bytes from " + who +
                           " failed: " + std::strerror(error),
                       peer.rank);
  }
  return Status::ok();
}

}  // namespace braid::transport::shm
