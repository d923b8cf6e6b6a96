// The checks on a cuda_p2p group's exchanged records (see the header).
#include "transports/cuda_p2p/peer_exchange.h"

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <random>

namespace braid::transport::cuda_p2p {
namespace {

std::string bounded(const char* field, size_t bytes) {
  return std::string(field, strnlen(field, bytes));
}

std::string describe(const PeerFifoConfig& c) {
  return std::to_string(c.channels) + " channels, Simple " + std::to_string(c.simpleSlots) + " x " +
         std::to_string(c.simpleSlotBytes) + " B, LL " + std::to_string(c.llSlots) + " x " +
         std::to_string(c.llSlotBytes) + " B";
}

}  // namespace

uint64_t thisProcessToken() {
  static const uint64_t token = [] {
    std::random_device entropy;
    std::seed_seq seed{entropy(), entropy(), unsigned(getpid()),
                       unsigned(std::chrono::steady_clock::now().time_since_epoch().count())};
    std::mt19937_64 draw(seed);
    uint64_t t = 0;
    while (t == 0) t = draw();  // 0 means "unset" in a record
    return t;
  }();
  return token;
}

void setPeerError(char (&field)[192], const std::string& message) {
  std::snprintf(field, sizeof(field), "%s", message.c_str());
}

Status checkPeerRecords(const std::vector<PeerRecord>& records, int rank) {
  if (rank < 0 || size_t(rank) >= records.size()) {
    return invalidArgument("device group: rank " + std::to_string(rank) + " is not among the " +
                           std::to_string(records.size()) + " exchanged records");
  }
  const PeerRecord& mine = records[size_t(rank)];
  for (size_t r = 0; r < records.size(); ++r) {
    const PeerRecord& peer = records[r];
    const std::string who = "device group: rank " + std::to_string(r);
    if (peer.magic != kPeerRecordMagic || peer.version != kPeerRecordVersion) {
      return internalError(who + " sent a malformed device-group record (magic " +
                           std::to_string(peer.magic) + ", version " +
                           std::to_string(peer.version) + "; is it running another braid?)");
    }
    if (peer.failed != 0) {
      return internalError(
          who + " could not set up its device FIFOs: " + bounded(peer.error, sizeof(peer.error)));
    }
    if (!(peer.config == mine.config) || peer.regionBytes != mine.regionBytes) {
      return invalidUsage(who + " uses " + describe(peer.config) + " but rank " +
                          std::to_string(rank) + " uses " + describe(mine.config) +
                          " (every rank must run the same braid build)");
    }
    if (peer.processToken == 0) return internalError(who + " sent no process token");
  }
  return Status::ok();
}

Status checkPeerOpens(const std::vector<PeerOpenResult>& results) {
  for (size_t r = 0; r < results.size(); ++r) {
    if (results[r].failed != 0) {
      return internalError("device group: rank " + std::to_string(r) +
                           " could not map its peers' FIFOs: " +
                           bounded(results[r].error, sizeof(results[r].error)));
    }
  }
  return Status::ok();
}

}  // namespace braid::transport::cuda_p2p
