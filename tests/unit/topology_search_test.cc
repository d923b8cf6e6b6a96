// Channel search on the reference machines, against bandwidths derived by hand from
// their specifications (topology/reference/*.topo):
//  - DGX-1: each V100 has 6 NVLinks of 25 GB/s per direction, so no set of rings can
//    leave a GPU faster than 150 GB/s; the hybrid cube-mesh splits into a Hamiltonian cycle
//    of double links (0-3-2-1-5-6-7-4) and one of single links (0-1-3-7-5-4-6-2), which,
//    each run both ways, give exactly 6 rings of 25 GB/s over NVLink alone.
//  - DGX A100 / H100: every GPU reaches the NVSwitch fabric at 300 / 450 GB/s per
//    direction, the bound and the answer.
//  - 8-GPU PCIe server: each GPU's x16 link (24 GB/s) bounds a ring; the best ring keeps
//    the two GPUs of a switch adjacent and so crosses the socket link once each way.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "topology/search.h"
#include "topology/topo_file.h"

namespace braid::topo {
namespace {

HostKind load(const std::string& name) {
  Result<Graph> graph = loadFile(std::string(BRAID_TOPOLOGY_REFERENCE_DIR) + "/" + name);
  EXPECT_TRUE(graph.isOk()) << graph.status().message();
  return graph.isOk() ? graph->hosts[0] : HostKind{};
}

// Every ring visits every endpoint exactly once, and each hop's path really joins the
// two endpoints (checked by walking the links, independently of the search).
void expectValidRings(const HostKind& host, const Channels& channels) {
  std::vector<int> endpoints = host.endpoints();
  std::sort(endpoints.begin(), endpoints.end());
  for (const Ring& ring : channels.rings) {
    std::vector<int> order = ring.order;
    std::sort(order.begin(), order.end());
    EXPECT_EQ(order, endpoints);
    ASSERT_EQ(ring.hopLinks.size(), ring.order.size());
    for (size_t i = 0; i < ring.order.size(); ++i) {
      int at = ring.order[i];
      for (int l : ring.hopLinks[i]) {
        const Link& link = host.links[l];
        ASSERT_TRUE(link.a == at || link.b == at) << "hop " << i << " is not a path";
        at = link.a == at ? link.b : link.a;
      }
      EXPECT_EQ(at, ring.order[(i + 1) % ring.order.size()]);
    }
  }
}

TEST(TopologySearchTest, Dgx1RingsUseNvLinkOnlyAndReachTheNvLinkBound) {
  HostKind host = load("dgx1.topo");
  Channels channels = searchChannels(host);
  expectValidRings(host, channels);
  EXPECT_EQ(channels.rings.size(), 6u);
  EXPECT_DOUBLE_EQ(channels.ringGBps(), 6 * 25.0);
  for (const Ring& ring : channels.rings) {
    EXPECT_TRUE(ringUsesOnly(host, ring, LinkType::kNvLink)) << describeRing(host, ring);
    for (const std::vector<int>& hop : ring.hopLinks) EXPECT_EQ(hop.size(), 1u);  // direct
  }
}

TEST(TopologySearchTest, Dgx1TreesUseNvLinkOnly) {
  HostKind host = load("dgx1.topo");
  Channels channels = searchChannels(host);
  ASSERT_FALSE(channels.trees.empty());
  for (const Tree& tree : channels.trees) {
    int roots = 0;
    for (size_t i = 0; i < tree.parent.size(); ++i) {
      if (tree.parent[i] < 0) {
        ++roots;
        continue;
      }
      for (int l : tree.edgeLinks[i]) EXPECT_EQ(host.links[l].type, LinkType::kNvLink);
    }
    EXPECT_EQ(roots, 1);
  }
}

TEST(TopologySearchTest, NvSwitchMachinesReachTheirPerGpuBandwidth) {
  for (const auto& [file, gbps] : {std::pair{"dgx_a100.topo", 300.0}, {"dgx_h100.topo", 450.0}}) {
    SCOPED_TRACE(file);
    HostKind host = load(file);
    Channels channels = searchChannels(host);
    expectValidRings(host, channels);
    EXPECT_DOUBLE_EQ(channels.ringGBps(), gbps);
    for (const Ring& ring : channels.rings) {
      EXPECT_TRUE(ringUsesOnly(host, ring, LinkType::kNvLink));
    }
  }
}

TEST(TopologySearchTest, PcieServerRingIsBoundByOneX16LinkAndCrossesSocketsOnceEachWay) {
  HostKind host = load("pcie8.topo");
  Channels channels = searchChannels(host);
  expectValidRings(host, channels);
  EXPECT_DOUBLE_EQ(channels.ringGBps(), 24.0);
  int smpHops = 0;
  for (const Ring& ring : channels.rings) {
    for (const std::vector<int>& hop : ring.hopLinks) {
      for (int l : hop) smpHops += host.links[l].type == LinkType::kCpuLink;
    }
  }
  EXPECT_EQ(smpHops, 2 * static_cast<int>(channels.rings.size()));
}

TEST(TopologySearchTest, SearchIsDeterministic) {
  HostKind host = load("dgx1.topo");
  Channels a = searchChannels(host), b = searchChannels(host);
  ASSERT_EQ(a.rings.size(), b.rings.size());
  for (size_t i = 0; i < a.rings.size(); ++i) EXPECT_EQ(a.rings[i].order, b.rings[i].order);
}

TEST(TopologySearchTest, OneEndpointGetsATrivialRing) {
  Result<Graph> graph = parse("braid-topology 1\nhost h\nnode cpu c0 numa=0 cores=2\n");
  ASSERT_TRUE(graph.isOk());
  Channels channels = searchChannels(graph->hosts[0]);
  ASSERT_EQ(channels.rings.size(), 1u);
  EXPECT_EQ(channels.rings[0].order.size(), 1u);
}

TEST(TopologySearchTest, CpuOnlyHostsRingOverNumaNodes) {
  Result<Graph> graph = parse(
      "braid-topology 1\nhost h\nnode cpu c0 numa=0 cores=8\nnode cpu c1 numa=1 cores=8\n"
      "link c0 c1 smp 20\n");
  ASSERT_TRUE(graph.isOk());
  Channels channels = searchChannels(graph->hosts[0]);
  expectValidRings(graph->hosts[0], channels);
  EXPECT_DOUBLE_EQ(channels.ringGBps(), 20.0);
}

TEST(TopologySearchTest, HostLocalOrderCrossesEachHostBoundaryOnce) {
  EXPECT_EQ(hostLocalRingOrder({0, 1, 0, 1}), (std::vector<int>{0, 2, 1, 3}));
  EXPECT_EQ(hostLocalRingOrder({5, 5, 2, 9, 2, 5}), (std::vector<int>{0, 1, 5, 2, 4, 3}));
  EXPECT_EQ(hostLocalRingOrder({}), std::vector<int>{});
  // Independent check: a ring in this order changes host exactly (hosts) times.
  std::vector<int> hosts = {3, 1, 3, 2, 1, 2, 3};
  std::vector<int> order = hostLocalRingOrder(hosts);
  int changes = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    changes += hosts[order[i]] != hosts[order[(i + 1) % order.size()]];
  }
  EXPECT_EQ(changes, 3);
}

TEST(TopologySearchTest, HostLocalOrderGroupsDomainsInsideHosts) {
  EXPECT_EQ(hostLocalRingOrder({0, 0, 0, 0}, {0, 1, 0, 1}), (std::vector<int>{0, 2, 1, 3}));
  // Domain numbers are local to a host: domain 0 of host 1 is not domain 0 of host 0.
  EXPECT_EQ(hostLocalRingOrder({0, 1, 0, 1}, {0, 0, 1, 1}), (std::vector<int>{0, 2, 1, 3}));
  EXPECT_EQ(hostLocalRingOrder({0, 0, 1, 1, 0, 1}, {7, 3, 3, 3, 7, 7}),
            (std::vector<int>{0, 4, 1, 2, 3, 5}));
  // No domains (or a list of the wrong size): hosts alone.
  EXPECT_EQ(hostLocalRingOrder({0, 1, 0, 1}, {}), hostLocalRingOrder({0, 1, 0, 1}));
  EXPECT_EQ(hostLocalRingOrder({0, 0, 0}, {1, 0}), (std::vector<int>{0, 1, 2}));
}

}  // namespace
}  // namespace braid::topo
