// Where the shm transport puts FIFO pages (transports/shm/numa_placement.h).
//
// 1. The decision, on faked layouts: every FIFO of a rank's segment, and its control block,
//    goes to the node of the rank that reads it (the segment's owner), never the writer's;
//    an unknown owner node binds nothing.
// 2. For real, on this machine's memory: a segment created with a placement carries
//    MPOL_PREFERRED for that node on every piece, seen through the creator's mapping and a
//    peer's, and its pages lie on that node; without a placement the policy stays the
//    default; a node the kernel refuses is reported, not fatal. These checks read the policy
//    the kernel holds, so they fail when placement is skipped, on one node as on several.
// 3. The transport: two ranks' segments carry their ranks' nodes (read back from
//    /proc/self/numa_maps), and Config::numaNode = -1 leaves them unbound.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "support/local_bootstrap.h"
#include "transports/shm/numa_placement.h"
#include "transports/shm/shm_segment.h"
#include "transports/shm/shm_transport.h"

namespace braid::transport::shm {
namespace {

constexpr size_t kPage = 4096;

SegmentLayout layoutOf(int nranks, size_t slotBytes = 4096, int slots = 2) {
  Result<SegmentLayout> layout = SegmentLayout::compute(nranks, slotBytes, slots);
  EXPECT_TRUE(layout.isOk()) << layout.status().message();
  return *layout;
}

// The node of the piece that holds [offset, offset + bytes), or -2 when no one piece does.
int nodeCovering(const std::vector<PagePlacement>& placement, size_t offset, size_t bytes) {
  for (const PagePlacement& p : placement) {
    if (offset >= p.offset && offset + bytes <= p.offset + p.bytes) return p.node;
  }
  return -2;
}

TEST(SegmentPlacementTest, EveryFifoGoesToItsReadersNode) {
  const std::vector<std::vector<int>> fakedNodes = {
      {0, 1, 0, 1},        // two sockets, ranks alternating
      {3, 3},              // both on node 3
      {2, -1, 0, 7, 1},    // one rank unknown, the others on four nodes
      {1, 0, 1, 0, 1, 0},  // six ranks, more slots
  };
  for (const std::vector<int>& nodes : fakedNodes) {
    const int n = static_cast<int>(nodes.size());
    const SegmentLayout layout = layoutOf(n, n == 6 ? 8192 : 4096, n == 6 ? 4 : 2);
    for (int owner = 0; owner < n; ++owner) {
      SCOPED_TRACE("owner " + std::to_string(owner) + " of " + std::to_string(n));
      const std::vector<PagePlacement> placement = segmentPlacement(layout, owner, nodes[owner]);
      if (nodes[owner] < 0) {
        EXPECT_TRUE(placement.empty()) << "an unknown node must bind nothing";
        continue;
      }
      // The pieces tile the segment in page-aligned order.
      size_t end = 0;
      for (const PagePlacement& p : placement) {
        EXPECT_EQ(p.offset, end);
        EXPECT_EQ(p.offset % kPage, 0u);
        EXPECT_EQ(p.bytes % kPage, 0u);
        end = p.offset + p.bytes;
      }
      EXPECT_EQ(end, layout.totalBytes);
      EXPECT_EQ(nodeCovering(placement, 0, sizeof(ControlBlock)), nodes[owner]);
      for (int writer = 0; writer < n; ++writer) {
        if (writer == owner) continue;
        EXPECT_EQ(nodeCovering(placement, layout.fifoOffset(owner, writer), layout.fifoBytes),
                  nodes[owner])
            << "the FIFO rank " << writer << " (node " << nodes[writer] << ") writes";
      }
    }
  }
  EXPECT_TRUE(segmentPlacement(layoutOf(1), 0, 0).empty()) << "one rank has no FIFO";
}

// A node whose memory this process uses, when the kernel lets braid set memory policies
// here; -1 (the tests skip) on a kernel without NUMA support or behind a filter that
// refuses mbind, where braid leaves placement to first touch.
int placeableNode() {
  void* page = mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) return -1;
  static_cast<volatile char*>(page)[0] = 1;
  int node = pageNodeAt(page);
  if (node >= 0 && !applyPlacement(page, {{0, kPage, node}}).isOk()) node = -1;
  munmap(page, kPage);
  return node;
}

std::string testName(const char* what) {
  return "/braid-numatest-" + std::to_string(getpid()) + "-" + what;
}

TEST(SegmentPlacementTest, PagesOfAPlacedSegmentLieOnTheNodeAsked) {
  const int node = placeableNode();
  if (node < 0) GTEST_SKIP() << "this kernel sets no NUMA memory policy";
  const SegmentLayout layout = layoutOf(3);
  const std::vector<PagePlacement> placement = segmentPlacement(layout, 1, node);
  auto created = ShmSegment::create(testName("placed"), layout.totalBytes, placement);
  ASSERT_TRUE(created.isOk()) << created.status().message();
  ShmSegment& segment = **created;
  ASSERT_TRUE(segment.placementStatus().isOk()) << segment.placementStatus().message();
  auto opened = ShmSegment::open(segment.name(), layout.totalBytes);  // as a peer maps it
  ASSERT_TRUE(opened.isOk()) << opened.status().message();
  for (const PagePlacement& p : placement) {
    for (size_t at : {p.offset, p.offset + p.bytes - kPage}) {
      SCOPED_TRACE("offset " + std::to_string(at));
      EXPECT_EQ(preferredNodeAt(segment.base() + at), node);
      EXPECT_EQ(preferredNodeAt((*opened)->base() + at), node) << "the peer's mapping";
      EXPECT_EQ(pageNodeAt((*opened)->base() + at), node);
    }
  }
}

TEST(SegmentPlacementTest, WithoutAPlacementThePolicyStaysTheDefault) {
  if (placeableNode() < 0) GTEST_SKIP() << "this kernel sets no NUMA memory policy";
  const SegmentLayout layout = layoutOf(2);
  auto created = ShmSegment::create(testName("unplaced"), layout.totalBytes,
                                    segmentPlacement(layout, 0, /*ownerNode=*/-1));
  ASSERT_TRUE(created.isOk()) << created.status().message();
  EXPECT_TRUE((*created)->placementStatus().isOk());
  for (size_t at = 0; at < layout.totalBytes; at += kPage) {
    EXPECT_EQ(preferredNodeAt((*created)->base() + at), -1) << "offset " << at;
    EXPECT_GE(pageNodeAt((*created)->base() + at), 0) << "offset " << at;
  }
}

TEST(SegmentPlacementTest, ARefusedNodeIsReportedAndTheSegmentStillWorks) {
  if (placeableNode() < 0) GTEST_SKIP() << "this kernel sets no NUMA memory policy";
  const SegmentLayout layout = layoutOf(2);
  // Linux has at most 1024 nodes: 4000 is nobody's.
  auto created = ShmSegment::create(testName("refused"), layout.totalBytes,
                                    segmentPlacement(layout, 0, /*ownerNode=*/4000));
  ASSERT_TRUE(created.isOk()) << created.status().message();
  const Status& placed = (*created)->placementStatus();
  ASSERT_FALSE(placed.isOk());
  EXPECT_NE(placed.message().find("NUMA node 4000"), std::string::npos) << placed.message();
  EXPECT_EQ(preferredNodeAt((*created)->base()), -1);
  (*created)->base()[layout.totalBytes - 1] = 1;  // the memory is there

  Status outOfRange = applyPlacement((*created)->base(), {{0, kPage, 5000}});
  EXPECT_EQ(outOfRange.code(), braidInvalidArgument);
  EXPECT_NE(outOfRange.message().find("5000"), std::string::npos) << outOfRange.message();
}

// The policies /proc/self/numa_maps shows for the mappings of communicator `tag`'s segments
// ("prefer:0", "default", ...), one per mapping.
std::vector<std::string> segmentPolicies(const std::string& tag) {
  std::vector<std::string> policies;
  std::ifstream maps("/proc/self/numa_maps");
  const std::string file = "file=/dev/shm/braid-" + tag + "-";
  for (std::string line; std::getline(maps, line);) {
    if (line.find(file) == std::string::npos) continue;
    const size_t begin = line.find(' ') + 1;
    policies.push_back(line.substr(begin, line.find(' ', begin) - begin));
  }
  return policies;
}

void connectWithNode(int numaNode, const std::string& wantPolicy) {
  testing::LocalBootstrapGroup group(2, 30);
  testing::runOnRankThreads(group, [&](int, Bootstrap& b) {
    Config config;
    config.shmSlotBytes = 4096;
    config.shmSlots = 2;
    config.numaNode = numaNode;
    auto t = createShmTransport(b, config);
    ASSERT_TRUE(t.isOk()) << t.status().message();
    ASSERT_TRUE(b.barrier().isOk());  // both ranks have mapped both segments
    // Each rank maps both segments: its own and its peer's, in one process.
    const std::vector<std::string> policies = segmentPolicies(b.commTag());
    EXPECT_EQ(policies.size(), 4u);
    for (const std::string& policy : policies) EXPECT_EQ(policy, wantPolicy);
    ASSERT_TRUE(b.barrier().isOk());  // nobody unmaps before both have looked
  });
}

TEST(ShmTransportPlacementTest, SegmentsFollowTheRanksNode) {
  const int node = placeableNode();
  if (node < 0) GTEST_SKIP() << "this kernel sets no NUMA memory policy";
  connectWithNode(node, "prefer:" + std::to_string(node));
  connectWithNode(-1, "default");
  connectWithNode(4000, "default");  // refused by the kernel: setup goes on unbound
}

}  // namespace
}  // namespace braid::transport::shm
