// Detection on whatever machine runs the tests: it must never fail, must find at least
// one CPU node with cores, must produce a graph the file format round-trips, and must
// say why a missing piece (GPU driver, hwloc) is missing. Also BRAID_TOPO_FILE and
// BRAID_TOPO_DUMP_FILE at communicator start.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "topology/detect.h"
#include "topology/startup.h"
#include "topology/topo_file.h"

namespace braid::topo {
namespace {

TEST(TopologyDetectTest, ThisMachineHasCpusAndRoundTrips) {
  Detection d = detectLocalMachine();
  ASSERT_EQ(d.graph.hosts.size(), 1u);
  const HostKind& host = d.graph.hosts[0];
  std::vector<int> cpus = host.nodesOf(NodeType::kCpu);
  ASSERT_FALSE(cpus.empty());
  int cores = 0;
  for (int c : cpus) cores += host.nodes[c].cores;
  EXPECT_GE(cores, 1);
  EXPECT_LE(cores, static_cast<int>(sysconf(_SC_NPROCESSORS_CONF)));
  Result<Graph> again = parse(dump(d.graph));
  ASSERT_TRUE(again.isOk()) << again.status().message() << "\n" << dump(d.graph);
  EXPECT_EQ(dump(*again), dump(d.graph));
  if (host.nodesOf(NodeType::kGpu).empty()) {
    bool explained = false;
    for (const std::string& note : d.notes) explained |= note.rfind("cuda:", 0) == 0;
    EXPECT_TRUE(explained) << "no GPU and no note saying why";
  }
}

// The sysfs path alone (what a machine without hwloc gets) still yields a valid graph.
TEST(TopologyDetectTest, SysfsFallbackAloneGivesAValidGraph) {
  Graph graph;
  graph.hosts.push_back({});
  HostKind& host = graph.hosts[0];
  host.name = "fallback";
  std::vector<std::string> notes;
  detail::addCpusFromSysfs(&host, &notes);
  detail::linkCpuNodes(&host, &notes);
  detail::addNicsFromSysfs(&host, &notes);
  ASSERT_FALSE(host.nodesOf(NodeType::kCpu).empty());
  for (int nic : host.nodesOf(NodeType::kNic)) EXPECT_GT(host.nodes[nic].nicGBps, 0);
  Result<Graph> again = parse(dump(graph));
  EXPECT_TRUE(again.isOk()) << again.status().message() << "\n" << dump(graph);
}

TEST(TopologyDetectTest, HostIdentityIsStableAndFileSafeNamesAre) {
  EXPECT_EQ(hostIdentity(), hostIdentity());
  EXPECT_EQ(fileSafe("NVIDIA H100 80GB#x=y"), "NVIDIA-H100-80GB-x-y");
  EXPECT_EQ(fileSafe(""), "-");
}

class TopoEnv {
 public:
  TopoEnv(const char* name, const std::string& value) : name_(name) {
    setenv(name, value.c_str(), 1);
  }
  ~TopoEnv() { unsetenv(name_); }

 private:
  const char* name_;
};

std::string tempPath(const char* tag) {
  return "/tmp/braid-topo-test-" + std::to_string(getpid()) + "-" + tag;
}

TEST(TopologyDetectTest, StartupLoadsTheFileAndDumpsOnRankZero) {
  const std::string in = tempPath("in.topo"), out = tempPath("out.topo");
  {
    std::ofstream f(in);
    f << "braid-topology 1\nhost h\nnode cpu c0 numa=0 cores=4\n";
  }
  {
    TopoEnv file("BRAID_TOPO_FILE", in);
    TopoEnv dumpFile("BRAID_TOPO_DUMP_FILE", out);
    Result<Graph> graph = prepareTopology(1);  // rank 1 does not write
    ASSERT_TRUE(graph.isOk());
    EXPECT_NE(access(out.c_str(), F_OK), 0);
    graph = prepareTopology(0);
    ASSERT_TRUE(graph.isOk());
    Result<Graph> written = loadFile(out);
    ASSERT_TRUE(written.isOk()) << written.status().message();
    EXPECT_EQ(written->hosts[0].nodes[0].cores, 4);
  }
  {
    std::ofstream f(in);
    f << "braid-topology 1\nhost h\nnode cpu c0 cores=zero\n";
  }
  {
    TopoEnv file("BRAID_TOPO_FILE", in);
    Result<Graph> graph = prepareTopology(0);
    ASSERT_FALSE(graph.isOk());
    EXPECT_NE(graph.status().message().find("BRAID_TOPO_FILE"), std::string::npos);
    EXPECT_NE(graph.status().message().find("line 3, field 4"), std::string::npos);
  }
  std::remove(in.c_str());
  std::remove(out.c_str());
}

}  // namespace
}  // namespace braid::topo
