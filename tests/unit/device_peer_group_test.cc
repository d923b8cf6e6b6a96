// The host-side pieces of the cuda_p2p device group (collectives/device/cuda/ipc_group.h over
// transports/cuda_p2p/), proven on CPUs:
//  - PeerRegionLayout: every FIFO of a receive region inside it, aligned, none overlapping,
//    and the executor's view of it (peerFifo) the same places;
//  - wirePeerEnds over host memory standing in for each rank's device region (the pointers
//    a process would get from cudaIpcOpenMemHandle), with the device executor compiled as
//    host code and one thread per rank: a sequence of collectives on the same ends (FIFO
//    counters carry over from call to call, as on the GPU), both protocols, in and out of
//    place, checked against the float64 reference;
//  - the exchange records: a failed, malformed or mismatched peer becomes an error naming it.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <thread>
#include <type_traits>
#include <vector>

#include "collectives/device/executor.h"
#include "collectives/device/group_plans.h"
#include "collectives/device/peer_ends.h"
#include "support/device_rank_case.h"
#include "transports/cuda_p2p/peer_exchange.h"

namespace braid::device {
namespace {

using coll::CollArgs;
using coll::CollKind;
using transport::cuda_p2p::checkPeerOpens;
using transport::cuda_p2p::checkPeerRecords;
using transport::cuda_p2p::kPeerRecordVersion;
using transport::cuda_p2p::PeerOpenResult;
using transport::cuda_p2p::PeerRecord;
using transport::cuda_p2p::setPeerError;
using transport::cuda_p2p::thisProcessToken;

TEST(PeerRegionLayout, FifosAreInsideAlignedAndDisjoint) {
  using transport::cuda_p2p::FifoLane;
  using transport::cuda_p2p::FifoPlace;
  using transport::cuda_p2p::kPeerCounterBytes;
  for (int n : {1, 2, 3, 8}) {
    for (uint32_t channels : {1u, 2u, 3u}) {
      PeerFifoConfig config{channels, 3, 48, 5, 32};
      PeerRegionLayout layout(config, n);
      // A real (aligned) region: offsets are checked as the addresses a rank would use.
      std::vector<std::array<uint8_t, 128>> region(layout.bytes() / 128 + 1);
      auto* base = reinterpret_cast<uint8_t*>(region.data());
      std::vector<std::pair<size_t, size_t>> spans;  // [begin, end) offsets
      for (Protocol p : {Protocol::kSimple, Protocol::kLl}) {
        const FifoLane lane = p == Protocol::kLl ? FifoLane::kLl : FifoLane::kSimple;
        for (int c = 0; c < int(channels); ++c) {
          for (int from = 0; from < n; ++from) {
            const FifoPlace f = layout.fifo(base, lane, c, from);
            const auto counters = size_t(f.counters - base);
            const auto slots = size_t(f.slots - base);
            EXPECT_EQ(counters % 128, 0u);
            EXPECT_EQ(slots % 16, 0u);
            EXPECT_EQ(f.slotCount, p == Protocol::kLl ? 5u : 3u);
            EXPECT_EQ(f.slotBytes, p == Protocol::kLl ? 32u : 48u);
            spans.emplace_back(counters, counters + kPeerCounterBytes);
            spans.emplace_back(slots, slots + size_t(f.slotCount) * f.slotBytes);
            // The executor's FIFO is the same memory.
            const FifoMemory m = peerFifo(layout, base, p, c, from);
            EXPECT_EQ(reinterpret_cast<uint8_t*>(m.counters), f.counters);
            EXPECT_EQ(m.slots, f.slots);
            EXPECT_EQ(m.slotCount, f.slotCount);
            EXPECT_EQ(m.slotBytes, f.slotBytes);
          }
        }
      }
      std::sort(spans.begin(), spans.end());
      for (size_t i = 0; i < spans.size(); ++i) {
        EXPECT_LE(spans[i].second, layout.bytes()) << "n=" << n;
        if (i > 0) {
          EXPECT_LE(spans[i - 1].second, spans[i].first) << "overlap, n=" << n;
        }
      }
    }
  }
}

// Ranks whose "device" regions are host memory, wired as IpcDeviceGroup wires them.
class HostPeerGroup {
 public:
  HostPeerGroup(int n, const PeerFifoConfig& config) : n_(n), layout_(config, n) {
    for (int r = 0; r < n; ++r) {
      regions_.emplace_back(layout_.bytes() / sizeof(Line) + 1);
      bases_.push_back(reinterpret_cast<uint8_t*>(regions_.back().data()));
    }
    for (int r = 0; r < n; ++r) {
      simple_.push_back(wirePeerEnds<SimpleProtocol>(layout_, Protocol::kSimple, bases_, r));
      ll_.push_back(wirePeerEnds<LlProtocol>(layout_, Protocol::kLl, bases_, r));
    }
  }

  // Runs `base` on every rank (one thread each); false if a rank's executor failed.
  bool run(const CollArgs& base, const coll::Overrides& overrides,
           std::vector<std::vector<uint8_t>>* outputs) {
    Result<GroupPlans> plans = planGroupCall(base, int(layout_.config().channels), overrides);
    EXPECT_TRUE(plans.isOk()) << plans.status().message();
    if (!plans.isOk()) return false;
    const testing::InputPattern pattern = testing::patternFor(base, 7);
    outputs->assign(size_t(n_), {});
    std::vector<int> status(size_t(n_), kExecOk);
    std::vector<std::thread> threads;
    for (int r = 0; r < n_; ++r) {
      threads.emplace_back([&, r] {
        CollArgs a = base;
        a.rank = r;
        const testing::RankBufferLayout l = testing::rankBufferLayout(a);
        std::vector<uint8_t> whole(l.wholeBytes + 1, 0xee), send(l.sendBytes + 1),
            recv(l.recvBytes + 1, 0xee), scratch(plans->scratchBytes[size_t(r)] + 1);
        uint8_t* sendAt = a.inPlace ? whole.data() + l.sendOffset : send.data();
        uint8_t* recvAt = a.inPlace ? whole.data() + l.recvOffset : recv.data();
        testing::fillRankInput(a, pattern, sendAt);
        const DevicePlan& plan = plans->ranks[size_t(r)];
        ExecArgs e;
        e.plan =
            PlanView{plan.ops.data(), plan.stepStarts.data(), uint32_t(plan.stepStarts.size() - 1)};
        e.send = sendAt;
        e.recv = recvAt;
        e.scratch = scratch.data();
        e.op = a.op;
        e.nranks = n_;
        e.channels = plans->channels;
        withType(a.type, [&](auto tag) {
          using T = decltype(tag);
          StepTable table;
          for (int c = 0; c < e.channels && status[size_t(r)] == kExecOk; ++c) {
            e.channel = c;
            status[size_t(r)] = plans->protocol == Protocol::kLl
                                    ? runRank<T, LlProtocol>(e, ll_[size_t(r)], c, table)
                                    : runRank<T, SimpleProtocol>(e, simple_[size_t(r)], c, table);
          }
        });
        (*outputs)[size_t(r)].assign(recvAt, recvAt + l.recvBytes);
      });
    }
    for (auto& t : threads) t.join();
    for (int r = 0; r < n_; ++r) EXPECT_EQ(status[size_t(r)], kExecOk) << "rank " << r;
    return status == std::vector<int>(size_t(n_), kExecOk);
  }

 private:
  struct alignas(128) Line {
    uint8_t bytes[128];
  };
  template <class T, class P>
  int runRank(ExecArgs e, WiredEnds<P>& ends, int channel, StepTable& table) {
    const size_t at = size_t(channel) * size_t(n_);  // [channel][peer], as the kernel indexes
    return runChannel<T, P>(Group{}, e, &ends.sends[at], &ends.recvs[at], table);
  }

  int n_;
  PeerRegionLayout layout_;
  std::vector<std::vector<Line>> regions_;  // zeroed, as cudaMemset leaves a device region
  std::vector<uint8_t*> bases_;
  std::vector<WiredEnds<SimpleProtocol>> simple_;
  std::vector<WiredEnds<LlProtocol>> ll_;
};

TEST(PeerGroupWiring, CollectivesOverWiredHostRegionsMatchTheReference) {
  for (int n : {2, 3}) {
    // Tiny slots: every call wraps every FIFO many times.
    HostPeerGroup group(n, PeerFifoConfig{2, 4, 64, 4, 64});
    for (const char* protocol : {"simple", "ll"}) {  // BRAID_PROTO: Simple only, then LL only
      Result<coll::Overrides> overrides = coll::Overrides::parse("", protocol);
      ASSERT_TRUE(overrides.isOk()) << overrides.status().message();
      for (CollKind kind : {CollKind::kAllReduce, CollKind::kReduceScatter, CollKind::kAllGather,
                            CollKind::kBroadcast, CollKind::kAllToAll}) {
        for (braidDataType_t type : {braidFloat32, braidBfloat16, braidInt64, braidUint8}) {
          for (size_t count : {size_t(0), size_t(1), size_t(301)}) {
            for (bool inPlace : {false, true}) {
              CollArgs a;
              a.kind = kind;
              a.type = type;
              a.op = type == braidUint8 ? braidMax : braidSum;
              a.nranks = n;
              a.count = count;
              a.root = n - 1;
              a.inPlace = inPlace;
              std::vector<std::vector<uint8_t>> outputs;
              ASSERT_TRUE(group.run(a, *overrides, &outputs)) << testing::describeCall(a);
              const testing::InputPattern pattern = testing::patternFor(a, 7);
              for (int r = 0; r < n; ++r) {
                a.rank = r;
                ASSERT_EQ(testing::checkRankOutput(a, pattern, outputs[size_t(r)].data()), "")
                    << testing::describeCall(a) << " rank " << r << " " << protocol;
              }
            }
          }
        }
      }
    }
  }
}

std::vector<PeerRecord> goodRecords(int n) {
  std::vector<PeerRecord> records(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    records[size_t(r)].processToken = 100 + uint64_t(r);
    records[size_t(r)].regionBytes = 4096;
  }
  return records;
}

TEST(PeerExchange, RecordsAreFixedSizeBytes) {
  static_assert(std::is_trivially_copyable_v<PeerRecord>);
  static_assert(std::is_trivially_copyable_v<PeerOpenResult>);
  EXPECT_TRUE(checkPeerRecords(goodRecords(3), 1).isOk());
  EXPECT_NE(thisProcessToken(), 0u);
  EXPECT_EQ(thisProcessToken(), thisProcessToken());
}

TEST(PeerExchange, AFailedPeerIsNamedWithItsReason) {
  auto records = goodRecords(3);
  records[2].failed = 1;
  setPeerError(records[2].error, "cudaMalloc: out of memory");
  Status s = checkPeerRecords(records, 0);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("rank 2"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("out of memory"), std::string::npos) << s.message();
}

TEST(PeerExchange, MalformedAndMismatchedRecordsAreRefused) {
  auto bad = goodRecords(2);
  bad[1].magic = 7;
  EXPECT_NE(checkPeerRecords(bad, 0).message().find("rank 1"), std::string::npos);
  auto version = goodRecords(2);
  version[0].version = kPeerRecordVersion + 1;
  EXPECT_FALSE(checkPeerRecords(version, 1).isOk());
  auto config = goodRecords(2);
  config[1].config.channels = 3;
  Status s = checkPeerRecords(config, 0);
  EXPECT_EQ(s.code(), braidInvalidUsage);
  EXPECT_NE(s.message().find("rank 1"), std::string::npos) << s.message();
  auto size = goodRecords(2);
  size[0].regionBytes = 1;
  EXPECT_FALSE(checkPeerRecords(size, 1).isOk());
  EXPECT_FALSE(checkPeerRecords(goodRecords(2), 2).isOk());  // no such rank
}

TEST(PeerExchange, AFailedOpenIsNamedAndLongReasonsAreCut) {
  std::vector<PeerOpenResult> opens(3);
  EXPECT_TRUE(checkPeerOpens(opens).isOk());
  opens[1].failed = 1;
  setPeerError(opens[1].error, std::string(1000, 'x'));
  Status s = checkPeerOpens(opens);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("rank 1"), std::string::npos);
  EXPECT_LT(s.message().size(), 400u);
}

}  // namespace
}  // namespace braid::device
