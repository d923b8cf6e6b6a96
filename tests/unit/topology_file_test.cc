// The topology file: every reference machine parses; dump/parse round-trips; the
// parser rejects malformed input with an error naming the line and field.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "topology/topo_file.h"

namespace braid::topo {
namespace {

std::string referencePath(const std::string& name) {
  return std::string(BRAID_TOPOLOGY_REFERENCE_DIR) + "/" + name;
}

TEST(TopologyFileTest, ReferenceMachinesParseWithTheirSpecifiedShape) {
  struct Expect {
    const char* file;
    int hosts, gpus, nics, nvswitches;
  };
  for (const Expect& e :
       {Expect{"dgx1.topo", 1, 8, 4, 0}, Expect{"dgx_a100.topo", 1, 8, 8, 1},
        Expect{"dgx_h100.topo", 1, 8, 8, 1}, Expect{"pcie8.topo", 1, 8, 2, 0},
        Expect{"dgx1_x4.topo", 4, 8, 4, 0}, Expect{"dgx_h100_x128.topo", 128, 8, 8, 1}}) {
    SCOPED_TRACE(e.file);
    Result<Graph> graph = loadFile(referencePath(e.file));
    ASSERT_TRUE(graph.isOk()) << graph.status().message();
    ASSERT_EQ(graph->hosts.size(), 1u);
    const HostKind& host = graph->hosts[0];
    EXPECT_EQ(graph->hostCount(), e.hosts);
    EXPECT_EQ(host.nodesOf(NodeType::kGpu).size(), static_cast<size_t>(e.gpus));
    EXPECT_EQ(host.nodesOf(NodeType::kNic).size(), static_cast<size_t>(e.nics));
    EXPECT_EQ(host.nodesOf(NodeType::kNvSwitch).size(), static_cast<size_t>(e.nvswitches));
    EXPECT_EQ(graph->endpointCount(), e.hosts * e.gpus);
  }
}

TEST(TopologyFileTest, EveryReferenceFileRoundTripsThroughDump) {
  for (const auto& entry : std::filesystem::directory_iterator(BRAID_TOPOLOGY_REFERENCE_DIR)) {
    SCOPED_TRACE(entry.path().string());
    Result<Graph> first = loadFile(entry.path().string());
    ASSERT_TRUE(first.isOk()) << first.status().message();
    std::string text = dump(*first);
    Result<Graph> second = parse(text);
    ASSERT_TRUE(second.isOk()) << second.status().message();
    EXPECT_EQ(dump(*second), text);
  }
}

TEST(TopologyFileTest, DumpKeepsEveryField) {
  const std::string text =
      "braid-topology 1\n"
      "network ib latency=2.5\n"
      "host box count=3\n"
      "node cpu cpu0 model=Xeon numa=1 cores=8\n"
      "node gpu g0 bus=0000:18:00.0\n"
      "node nic n0 speed=12.5\n"
      "link cpu0 g0 pcie 24\n"
      "link cpu0 n0 pcie 12.5\n";
  Result<Graph> graph = parse(text);
  ASSERT_TRUE(graph.isOk()) << graph.status().message();
  const HostKind& host = graph->hosts[0];
  EXPECT_EQ(host.count, 3);
  EXPECT_EQ(host.nodes[0].numa, 1);
  EXPECT_EQ(host.nodes[0].cores, 8);
  EXPECT_EQ(host.nodes[0].model, "Xeon");
  EXPECT_EQ(host.nodes[1].busId, "0000:18:00.0");
  EXPECT_DOUBLE_EQ(host.nodes[2].nicGBps, 12.5);
  EXPECT_DOUBLE_EQ(graph->network.latencyUs, 2.5);
  EXPECT_EQ(host.links[1].type, LinkType::kPcie);
  EXPECT_DOUBLE_EQ(host.links[1].gbps, 12.5);
  Result<Graph> again = parse(dump(*graph));
  ASSERT_TRUE(again.isOk());
  EXPECT_EQ(dump(*again), dump(*graph));
}

// Each bad input must fail, and the message must name the line and the bad field.
TEST(TopologyFileTest, MalformedInputNamesLineAndField) {
  const std::string head = "braid-topology 1\nhost h\nnode cpu c0\n";
  struct Bad {
    std::string text;
    std::string mentions;
  };
  const Bad cases[] = {
      {"", "expected 'braid-topology 1'"},
      {"host h\n", "line 1, field 1 ('host')"},
      {"braid-topology 2\n", "line 1, field 2 ('2')"},
      {"braid-topology 1\nnode cpu c0\n", "before any 'host'"},
      {head + "node gpux g0\n", "line 4, field 2 ('gpux')"},
      {head + "node cpu c0\n", "line 4, field 3 ('c0')"},
      {head + "node cpu c1 numa=x\n", "line 4, field 4 ('numa=x')"},
      {head + "node cpu c1 numa=-1\n", "line 4, field 4"},
      {head + "node gpu g0 cores=4\n", "unknown key for a gpu node"},
      {head + "node cpu c1 novalue\n", "expected key=value"},
      {head + "node nic n0\n", "a nic needs speed"},
      {head + "node nic n0 speed=nan\n", "line 4, field 4 ('speed=nan')"},
      {head + "link c0 zz pcie 12\n", "line 4, field 3 ('zz')"},
      {head + "link c0 c0 pcie 12\n", "two different nodes"},
      {head + "node gpu g0\nlink c0 g0 pci 12\n", "line 5, field 4 ('pci')"},
      {head + "node gpu g0\nlink c0 g0 pcie 0\n", "line 5, field 5 ('0')"},
      {head + "node gpu g0\nlink c0 g0 pcie 1e400\n", "line 5, field 5"},
      {head + "node gpu g0\nlink c0 g0 pcie 12 extra\n", "line 5"},
      {head + "bogus\n", "line 4, field 1 ('bogus')"},
      {"braid-topology 1\nhost h count=2\nnode cpu c0\n", "no 'network' line"},
      {"braid-topology 1\nhost h count=0\nnode cpu c0\n", "line 2, field 3 ('count=0')"},
      {"braid-topology 1\nhost h\nnode gpu g0\n", "has no cpu node"},
      {"braid-topology 1\nhost h\n", "has no nodes"},
      {head + "host h\n", "line 4, field 2 ('h')"},
      {"braid-topology 1\nnetwork ib\n", "line 2"},
      {"braid-topology 1\nnetwork ib latency=1\nnetwork ib latency=1\n", "second 'network'"},
  };
  for (const Bad& bad : cases) {
    SCOPED_TRACE(bad.text);
    Result<Graph> graph = parse(bad.text);
    ASSERT_FALSE(graph.isOk());
    EXPECT_EQ(graph.status().code(), braidInvalidArgument);
    EXPECT_NE(graph.status().message().find(bad.mentions), std::string::npos)
        << graph.status().message();
  }
}

TEST(TopologyFileTest, CommentsAndBlankLinesAreIgnored) {
  Result<Graph> graph = parse("# a machine\n\nbraid-topology 1  # header\nhost h\n  node cpu c0\n");
  ASSERT_TRUE(graph.isOk()) << graph.status().message();
  EXPECT_EQ(graph->hosts[0].nodes.size(), 1u);
}

// Mutated files (bytes flipped, cut, duplicated; a fixed seed) must parse or fail with a
// message, never crash; whatever parses must dump to text that parses again.
TEST(TopologyFileTest, MutatedInputNeverCrashes) {
  Result<Graph> base = loadFile(referencePath("dgx1.topo"));
  ASSERT_TRUE(base.isOk());
  const std::string text = dump(*base);
  uint64_t state = 0x9e3779b97f4a7c15ull;
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  const std::string alphabet = " \n\t#=0123456789.-eEnaiflkpcgu";
  for (int round = 0; round < 3000; ++round) {
    std::string mutated = text;
    for (int edits = 1 + next() % 4; edits > 0; --edits) {
      size_t at = next() % mutated.size();
      switch (next() % 4) {
        case 0:
          mutated[at] = alphabet[next() % alphabet.size()];
          break;
        case 1:
          mutated.erase(at, next() % 16);
          break;
        case 2:
          mutated.insert(at, mutated.substr(next() % mutated.size(), next() % 32));
          break;
        default:
          mutated[at] = static_cast<char>(next());
          break;
      }
      if (mutated.empty()) mutated = "x";
    }
    Result<Graph> graph = parse(mutated);
    if (graph.isOk()) {
      EXPECT_TRUE(parse(dump(*graph)).isOk()) << mutated;
    } else {
      EXPECT_NE(graph.status().message().find("line "), std::string::npos);
    }
  }
}

TEST(TopologyFileTest, MissingFileIsAnErrorNamingThePath) {
  Result<Graph> graph = loadFile("/nonexistent/machine.topo");
  ASSERT_FALSE(graph.isOk());
  EXPECT_NE(graph.status().message().find("/nonexistent/machine.topo"), std::string::npos);
}

}  // namespace
}  // namespace braid::topo
