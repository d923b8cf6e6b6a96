// A peer killed in the middle of a device-buffer exchange through the host proxy
// (src/comm/device_proxy/), on the CPU fake of CUDA streams, over shm and socket.
//
// Rank 1 runs in a forked process: it queues its half of the exchange (a receive only, so
// the exchange can never complete), says so through a pipe and waits to be SIGKILLed. Rank
// 0 (this process) queues a send and a receive in one group, kills rank 1 once both are
// queued, and must then see its stream released, an asynchronous error naming rank 1 and
// a failed next call — through the transport's death detection, long before BRAID_TIMEOUT.
// The child is forked before this process starts any braid thread (gtest runs each test
// in a process of its own under ctest), and dies with its parent (PR_SET_PDEATHSIG).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <string>

#include "api/guard.h"
#include "comm/device_proxy/proxy_hooks.h"
#include "support/fake_device_memory.h"
#include "support/fake_proxy.h"
#include "support/fake_stream_ops.h"
#include "support/proxy_calls.h"
#include "support/spawn.h"

namespace braid::testing {
namespace {

using api::toComm;
using Clock = std::chrono::steady_clock;

constexpr size_t kCount = size_t{1} << 18;  // 1 MiB of int32: more than any eager buffer
constexpr double kFailsWithinSeconds = 30;

bool readAll(int fd, void* data, size_t bytes) {
  auto* p = static_cast<uint8_t*>(data);
  while (bytes > 0) {
    const ssize_t n = read(fd, p, bytes);
    if (n <= 0) return false;
    p += n;
    bytes -= size_t(n);
  }
  return true;
}

// Rank 1, in the child: queue a receive rank 0's send will never be matched with, then wait.
[[noreturn]] void runVictim(int idFd, int readyFd) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  braidUniqueId id;
  braidComm_t comm = nullptr;
  if (!readAll(idFd, &id, sizeof(id)) || braidCommInitRank(&comm, 2, id, 1) != braidSuccess) {
    _exit(2);
  }
  auto ops = std::make_shared<FakeStreamOps>();
  if (!attachFakeProxy(comm, ops).isOk()) _exit(3);
  static FakeStream stream;  // never destroyed: the process ends by SIGKILL
  static FakeDeviceBuffer in(kCount, kProxyPoison);
  if (braidRecv(in.data(), kCount, braidInt32, 0, comm, stream.handle()) != braidSuccess) _exit(4);
  const char ready = 'r';
  if (write(readyFd, &ready, 1) != 1) _exit(5);
  while (true) pause();
}

class DeviceProxyKill : public ::testing::TestWithParam<std::string> {};

TEST_P(DeviceProxyKill, APeerKilledMidCallFailsTheSurvivorAndReleasesItsStream) {
  ScopedEnv env(fakeProxyOptions(GetParam()).env);  // BRAID_TIMEOUT 60: detection must win
  FakeDeviceMemoryScope fakeDevice;
  int idPipe[2], readyPipe[2];
  ASSERT_EQ(pipe(idPipe), 0);
  ASSERT_EQ(pipe(readyPipe), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) runVictim(idPipe[0], readyPipe[1]);
  close(idPipe[0]);
  close(readyPipe[1]);
  // Whatever fails below, the child does not outlive the test.
  std::unique_ptr<pid_t, void (*)(pid_t*)> reaper(new pid_t(child), [](pid_t* pid) {
    kill(*pid, SIGKILL);
    waitpid(*pid, nullptr, 0);
    delete pid;
  });

  braidUniqueId id;
  ASSERT_EQ(braidGetUniqueId(&id), braidSuccess);
  ASSERT_EQ(write(idPipe[1], &id, sizeof(id)), ssize_t(sizeof(id)));
  braidComm_t comm = nullptr;
  ASSERT_EQ(braidCommInitRank(&comm, 2, id, 0), braidSuccess) << braidGetLastError(nullptr);
  auto ops = std::make_shared<FakeStreamOps>();
  ASSERT_TRUE(attachFakeProxy(comm, ops).isOk());
  FakeStream stream;
  FakeDeviceBuffer out(kCount, 1), in(kCount, kProxyPoison);
  ASSERT_EQ(braidGroupStart(), braidSuccess);
  EXPECT_EQ(braidSend(out.data(), kCount, braidInt32, 1, comm, stream.handle()), braidSuccess);
  EXPECT_EQ(braidRecv(in.data(), kCount, braidInt32, 1, comm, stream.handle()), braidSuccess);
  EXPECT_EQ(braidGroupEnd(), braidSuccess) << braidGetLastError(nullptr);

  char ready = 0;
  ASSERT_TRUE(readAll(readyPipe[0], &ready, 1)) << "rank 1 died before queueing its call";
  const auto start = Clock::now();
  ASSERT_EQ(kill(child, SIGKILL), 0);
  EXPECT_TRUE(stream.synchronize().isOk());  // released, not hung
  waitForDeviceProxy(toComm(comm));
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_LT(seconds, kFailsWithinSeconds) << "found by the deadline, not by death detection";
  braidResult_t async = braidSuccess;
  EXPECT_EQ(braidCommGetAsyncError(comm, &async), braidSuccess);
  EXPECT_NE(async, braidSuccess);
  int32_t x = 1;
  EXPECT_NE(braidAllReduce(&x, &x, 1, braidInt32, braidSum, comm, nullptr), braidSuccess);
  const std::string why = braidGetLastError(comm);
  EXPECT_NE(why.find("rank 1"), std::string::npos) << "the error does not name rank 1: " << why;
  stopDeviceProxy(toComm(comm));
  EXPECT_EQ(ops->liveAllocations(), 0);
  EXPECT_EQ(braidCommDestroy(comm), braidSuccess);
  close(idPipe[1]);
  close(readyPipe[0]);
}

INSTANTIATE_TEST_SUITE_P(ShmAndSocket, DeviceProxyKill, ::testing::Values("shm", "socket"));

}  // namespace
}  // namespace braid::testing
