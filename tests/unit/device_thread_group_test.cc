// The device executor with several host threads per "thread block" (tests/support/
// host_thread_group.h): every rank's channel is run by a group of threads that split the
// data loops and follow the leader's decisions, as a CUDA block does. Ring all-reduce and
// all-gather for 3 ranks over both protocols, against the float64 reference.
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
#include "support/host_thread_group.h"
#include "support/input_pattern.h"
#include "support/reference.h"

namespace braid::device {
namespace {

using coll::CollArgs;
using coll::CollKind;

constexpr int kThreadsPerGroup = 3;

template <class P>
std::vector<std::vector<uint8_t>> runGroups(const CollArgs& base, int channels,
                                            const testing::InputPattern& pattern) {
  const int n = base.nranks;
  const size_t elem = testing::elementBytes(base.type);
  testing::DeviceHostFabric<P> fabric(n, channels, 3, 48);
  std::vector<std::vector<uint8_t>> sends(n), recvs(n), scratches(n);
  std::vector<DevicePlan> plans(n);
  for (int r = 0; r < n; ++r) {
    CollArgs a = base;
    a.rank = r;
    Result<coll::Schedule> schedule = coll::buildSchedule(a, "ring");
    EXPECT_TRUE(schedule.isOk());
    PlanBufferSizes sizes{coll::sendBufferBytes(a), coll::recvBufferBytes(a),
                          schedule->scratchBytes, false};
    Result<DevicePlan> plan = buildDevicePlan(*schedule, sizes, elem, true);
    EXPECT_TRUE(plan.isOk());
    plans[r] = std::move(*plan);
    EXPECT_TRUE(plans[r].splittable) << "ring plans split over channels";
    sends[r].resize(sizes.sendBytes);
    pattern.fill(r, 0, sizes.sendBytes / elem, sends[r].data());
    recvs[r].assign(sizes.recvBytes, 0xee);
    scratches[r].resize(sizes.scratchBytes);
  }
  // One group of threads per (rank, channel), all running at once, as blocks of a grid.
  // ... each with one StepTable that its threads share, as a block's shared memory.
  std::vector<std::unique_ptr<testing::HostThreadGroup>> groups;
  std::vector<std::unique_ptr<StepTable>> tables;
  std::vector<std::thread> threads;
  std::vector<int> status(size_t(n) * channels * kThreadsPerGroup, -1);
  for (int r = 0; r < n; ++r) {
    for (int c = 0; c < channels; ++c) {
      groups.push_back(std::make_unique<testing::HostThreadGroup>(kThreadsPerGroup));
      testing::HostThreadGroup* group = groups.back().get();
      tables.push_back(std::make_unique<StepTable>());
      StepTable* table = tables.back().get();
      for (int t = 0; t < kThreadsPerGroup; ++t) {
        threads.emplace_back([&, r, c, t, group, table] {
          ExecArgs e;
          e.plan = PlanView{plans[r].ops.data(), plans[r].stepStarts.data(),
                            uint32_t(plans[r].stepStarts.size() - 1)};
          e.send = sends[r].data();
          e.recv = recvs[r].data();
          e.scratch = scratches[r].data();
          e.op = base.op;
          e.nranks = n;
          e.channel = c;
          e.channels = channels;
          const testing::HostThreadGroup::Member member(group, t);
          withType(base.type, [&](auto tag) {
            using T = decltype(tag);
            status[(size_t(r) * channels + c) * kThreadsPerGroup + t] =
                runChannel<T, P>(member, e, fabric.sends(r, c), fabric.recvs(r, c), *table);
          });
        });
      }
    }
  }
  for (auto& t : threads) t.join();
  for (int s : status) EXPECT_EQ(s, kExecOk);
  return recvs;
}

template <class P>
void allReduceAndAllGather(braidDataType_t type) {
  const int n = 3;
  CollArgs a;
  a.kind = CollKind::kAllReduce;
  a.type = type;
  a.op = braidSum;
  a.nranks = n;
  a.count = 1001;
  const testing::InputPattern pattern(type, braidSum, 9);
  auto recvs = runGroups<P>(a, 2, pattern);
  const auto source = testing::sourceFromPattern(pattern);
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(testing::checkReduced(type, braidSum, n, recvs[r].data(), a.count, source, 0), "")
        << testing::typeLabel(type) << " all-reduce rank " << r;
  }
  a.kind = CollKind::kAllGather;
  a.count = 333;
  const auto move = testing::InputPattern::forMove(type, 4);
  recvs = runGroups<P>(a, 2, move);
  const auto moved = testing::sourceFromPattern(move);
  const size_t elem = testing::elementBytes(type);
  for (int r = 0; r < n; ++r) {
    for (int p = 0; p < n; ++p) {
      EXPECT_EQ(
          testing::checkCopied(type, recvs[r].data() + p * a.count * elem, a.count, moved, p, 0),
          "")
          << testing::typeLabel(type) << " all-gather rank " << r << " block " << p;
    }
  }
}

TEST(DeviceExecutorThreadGroups, SimpleProtocol) {
  for (braidDataType_t type : {braidFloat32, braidBfloat16, braidInt8}) {
    allReduceAndAllGather<SimpleProtocol>(type);
  }
}

TEST(DeviceExecutorThreadGroups, LlProtocol) {
  for (braidDataType_t type : {braidFloat16, braidInt64}) allReduceAndAllGather<LlProtocol>(type);
}

}  // namespace
}  // namespace braid::device
