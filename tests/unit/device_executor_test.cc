// The device executor (collectives/device/executor.h) compiled as host code: host threads
// stand in for the thread blocks of n ranks, FIFOs live in host memory, and the plans come
// from the same schedules the host executor runs (collectives/algorithm.h). Results are
// compared with the float64 reference (tests/support/reference.h), so these prove the
// kernel's protocol and step logic on CPUs; the GPU tests (tests/gpu) rerun it on a device.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "collectives/device/executor.h"
#include "collectives/device/ll_protocol.h"
#include "collectives/device/plan_builder.h"
#include "collectives/device/simple_protocol.h"
#include "collectives/select.h"
#include "support/device_host_fabric.h"
#include "support/element_bits.h"
#include "support/input_pattern.h"
#include "support/reference.h"

namespace braid::device {
namespace {

using coll::CollArgs;
using coll::CollKind;

enum class Proto { kSimple, kLl };

struct RunSetup {
  Proto proto = Proto::kSimple;
  int channels = 1;
  bool fuse = true;
  uint32_t slotCount = 4;
  uint32_t slotBytes = 64;
  std::string algorithm;  // "" = default
};

// Runs `base` on base.nranks host threads; returns each rank's receive buffer.
template <class P>
std::vector<std::vector<uint8_t>> runAs(const CollArgs& base, const RunSetup& setup,
                                        const testing::InputPattern& pattern, size_t* fused) {
  const int n = base.nranks;
  const size_t elem = testing::elementBytes(base.type);
  testing::DeviceHostFabric<P> fabric(n, setup.channels, setup.slotCount, setup.slotBytes);
  std::vector<std::vector<uint8_t>> recvs(n);
  std::vector<int> status(n, -1);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      CollArgs args = base;
      args.rank = r;
      Result<coll::Schedule> schedule = coll::buildSchedule(args, setup.algorithm);
      ASSERT_TRUE(schedule.isOk()) << schedule.status().message();
      PlanBufferSizes sizes{coll::sendBufferBytes(args), coll::recvBufferBytes(args),
                            schedule->scratchBytes, false};
      Result<DevicePlan> plan = buildDevicePlan(*schedule, sizes, elem, setup.fuse);
      ASSERT_TRUE(plan.isOk()) << plan.status().message();
      if (r == 0) *fused = plan->fusedOps;
      std::vector<uint8_t> send(sizes.sendBytes), scratch(sizes.scratchBytes);
      recvs[r].assign(sizes.recvBytes, 0xee);
      pattern.fill(r, 0, sizes.sendBytes / elem, send.data());
      ExecArgs exec;
      exec.plan = PlanView{plan->ops.data(), plan->stepStarts.data(),
                           uint32_t(plan->stepStarts.size() - 1)};
      exec.send = send.data();
      exec.recv = recvs[r].data();
      exec.scratch = scratch.data();
      exec.op = args.op;
      exec.nranks = n;
      exec.channels = plan->splittable ? setup.channels : 1;
      int result = kExecOk;
      withType(args.type, [&](auto tag) {
        using T = decltype(tag);
        // Channels are independent; one thread may run them one after another.
        StepTable table;
        for (int c = 0; c < exec.channels && result == kExecOk; ++c) {
          exec.channel = c;
          result = runChannel<T, P>(Group{}, exec, fabric.sends(r, c), fabric.recvs(r, c), table);
        }
      });
      status[r] = result;
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < n; ++r) EXPECT_EQ(status[r], kExecOk) << "rank " << r;
  return recvs;
}

std::vector<std::vector<uint8_t>> run(const CollArgs& base, const RunSetup& setup,
                                      const testing::InputPattern& pattern, size_t* fused) {
  return setup.proto == Proto::kSimple ? runAs<SimpleProtocol>(base, setup, pattern, fused)
                                       : runAs<LlProtocol>(base, setup, pattern, fused);
}

std::string label(const CollArgs& a, const RunSetup& s) {
  return std::string(coll::collName(a.kind)) + " " + testing::typeLabel(a.type) + " " +
         testing::opLabel(a.op) + " n=" + std::to_string(a.nranks) +
         " count=" + std::to_string(a.count) + (s.proto == Proto::kLl ? " LL" : " Simple") +
         " channels=" + std::to_string(s.channels) + (s.fuse ? " fused" : "");
}

// chunkBytes: the schedule's pipelining chunk; the device fuses a ring's receive with the
// next round's send only when a round is one chunk (see plan_builder.cc).
void checkAllReduce(braidDataType_t type, braidRedOp_t op, int n, size_t count, RunSetup setup,
                    size_t chunkBytes = 96) {
  CollArgs args;
  args.kind = CollKind::kAllReduce;
  args.type = type;
  args.op = op;
  args.nranks = n;
  args.count = count;
  args.chunkBytes = chunkBytes;
  const testing::InputPattern pattern(type, op, 11);
  size_t fused = 0;
  auto recvs = run(args, setup, pattern, &fused);
  const auto source = testing::sourceFromPattern(pattern);
  for (int r = 0; r < n; ++r) {
    const std::string err = testing::checkReduced(type, op, n, recvs[r].data(), count, source, 0);
    ASSERT_EQ(err, "") << label(args, setup) << " rank " << r;
  }
  const size_t bytes = count * testing::elementBytes(type);
  // (At 2 ranks avg's division waits on the only receive, which then cannot fuse.)
  const bool fusable = count >= size_t(n) && chunkBytes >= bytes && !(op == braidAvg && n == 2);
  if (setup.fuse && setup.algorithm == "ring" && fusable) {
    EXPECT_GT(fused, 0u) << label(args, setup);
  }
}

TEST(DeviceExecutor, RingAllReduceEveryTypeAndOp) {
  for (int n = 2; n <= 4; ++n) {
    for (int t = 0; t < braidNumTypes; ++t) {
      for (int op = 0; op < braidNumOps; ++op) {
        for (Proto proto : {Proto::kSimple, Proto::kLl}) {
          RunSetup setup;
          setup.proto = proto;
          setup.algorithm = "ring";
          checkAllReduce(braidDataType_t(t), braidRedOp_t(op), n, 301, setup, 1 << 20);
        }
      }
    }
  }
}

TEST(DeviceExecutor, RingAllReduceUnfusedSplitAndOddSizes) {
  for (size_t count : {size_t(0), size_t(1), size_t(7), size_t(1000)}) {
    for (int channels : {1, 3}) {
      for (bool fuse : {false, true}) {
        RunSetup setup{Proto::kSimple, channels, fuse, 2, 32, "ring"};
        checkAllReduce(braidFloat16, braidSum, 3, count, setup);
        setup.proto = Proto::kLl;
        checkAllReduce(braidInt8, braidMax, 4, count, setup);
      }
    }
  }
}

TEST(DeviceExecutor, EveryAllReduceAlgorithm) {
  for (const std::string& algo : coll::algorithmNames(CollKind::kAllReduce)) {
    for (int n = 2; n <= 4; ++n) {
      RunSetup setup;
      setup.algorithm = algo;
      checkAllReduce(braidFloat32, braidSum, n, 333, setup);
      setup.proto = Proto::kLl;
      checkAllReduce(braidBfloat16, braidAvg, n, 333, setup);
    }
  }
}

// Data movement collectives: every output element must be one rank's input, bit for bit.
TEST(DeviceExecutor, MovementCollectives) {
  for (CollKind kind : {CollKind::kAllGather, CollKind::kBroadcast, CollKind::kAllToAll}) {
    for (int n = 2; n <= 4; ++n) {
      for (Proto proto : {Proto::kSimple, Proto::kLl}) {
        CollArgs args;
        args.kind = kind;
        args.type = braidUint8;
        args.nranks = n;
        args.count = 77;
        args.root = n - 1;
        args.chunkBytes = 40;
        const auto pattern = testing::InputPattern::forMove(args.type, 5);
        const auto source = testing::sourceFromPattern(pattern);
        RunSetup setup;
        setup.proto = proto;
        setup.channels = 2;
        size_t fused = 0;
        auto recvs = run(args, setup, pattern, &fused);
        for (int r = 0; r < n; ++r) {
          for (int p = 0; p < (kind == CollKind::kBroadcast ? 1 : n); ++p) {
            const uint8_t* got = recvs[r].data() + p * args.count;
            const std::string err =
                kind == CollKind::kBroadcast
                    ? testing::checkCopied(args.type, got, args.count, source, args.root, 0)
                : kind == CollKind::kAllGather
                    ? testing::checkCopied(args.type, got, args.count, source, p, 0)
                    : testing::checkCopied(args.type, got, args.count, source, p, r * args.count);
            ASSERT_EQ(err, "") << label(args, setup) << " rank " << r << " block " << p;
          }
        }
      }
    }
  }
}

TEST(DeviceExecutor, ReduceScatter) {
  for (int n = 2; n <= 4; ++n) {
    for (braidRedOp_t op : {braidSum, braidMin, braidAvg}) {
      CollArgs args;
      args.kind = CollKind::kReduceScatter;
      args.type = braidFloat16;
      args.op = op;
      args.nranks = n;
      args.count = 50;
      args.chunkBytes = 32;
      const testing::InputPattern pattern(args.type, op, 3);
      size_t fused = 0;
      auto recvs = run(args, RunSetup{}, pattern, &fused);
      const auto source = testing::sourceFromPattern(pattern);
      for (int r = 0; r < n; ++r) {
        ASSERT_EQ(testing::checkReduced(args.type, op, n, recvs[r].data(), args.count, source,
                                        r * args.count),
                  "")
            << label(args, RunSetup{}) << " rank " << r;
      }
    }
  }
}

TEST(DevicePlanBuilder, RefusesOutOfBoundsSpans) {
  coll::Schedule s;
  s.steps.resize(1);
  coll::Action a;
  a.kind = coll::ActionKind::kCopy;
  a.src = coll::Span{coll::BufferId::kSend, 0, 64};
  a.dst = coll::Span{coll::BufferId::kRecv, 32, 64};
  s.steps[0].actions.push_back(a);
  Result<DevicePlan> plan = buildDevicePlan(s, PlanBufferSizes{64, 64, 0, false}, 4, true);
  ASSERT_FALSE(plan.isOk());
  EXPECT_NE(plan.status().message().find("64-byte buffer"), std::string::npos);
}

}  // namespace
}  // namespace braid::device
