// braid-topo: prints what braid knows about a machine — the detected (or loaded) graph,
// the channels the search finds on it, and the algorithm the tuner picks per size —
// and fits the cost model to measurements (--calibrate).
//
//   braid-topo                       detect this machine (and this process's L3/NUMA domains)
//   braid-topo --file F.topo         load a topology file instead (BRAID_TOPO_FILE too)
//   braid-topo --dump F.topo         also write the graph to F (BRAID_TOPO_DUMP_FILE too)
//   braid-topo --ranks N --max-bytes B   shape of the tuning table (CPU machines: what
//                                    automatic selection picks; GPU machines: braid-sim's
//                                    algorithm/protocol per size for the file's host count)
//   braid-topo --calibrate samples.csv [--fit-min-ranks 3] [--cores N]   fit the model, print
//                                    its rows and how well it predicts the samples
//   braid-topo --check samples.csv   how well the compiled-in constants predict new samples
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "collectives/select.h"
#include "tools/cli/cli.h"
#include "topology/cache_domain.h"
#include "topology/calibration.h"
#include "topology/detect.h"
#include "topology/search.h"
#include "topology/sim.h"
#include "topology/topo_file.h"
#include "topology/tuner.h"

namespace {

using namespace braid;
using namespace braid::topo;

struct Options {
  std::string file, dump, calibrate, check;
  int ranks = 4;
  int fitMinRanks = 3;
  int cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));  // of the measured runs
  size_t maxBytes = 64 << 20;
};

// Fills `o` from the environment and argv; returns the exit status when the program should stop.
std::optional<int> parseArgs(int argc, char** argv, Options* o) {
  if (const char* f = std::getenv("BRAID_TOPO_FILE")) o->file = f;
  if (const char* f = std::getenv("BRAID_TOPO_DUMP_FILE")) o->dump = f;
  CLI::App app{
      "Prints what braid knows about a machine: the detected (or loaded) topology graph, the "
      "channels the search finds on it and the algorithm the tuner picks per size; fits the "
      "cost model to measurements.",
      "braid-topo"};
  app.add_option("--file", o->file,
                 "load this topology file instead of detecting (BRAID_TOPO_FILE)");
  app.add_option("--dump", o->dump, "also write the graph to this file (BRAID_TOPO_DUMP_FILE)");
  app.add_option("--ranks", o->ranks, "ranks of the tuning table on a CPU machine")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--max-bytes", o->maxBytes, "largest size of the tuning table")
      ->check(CLI::Range(size_t{8}, size_t{1} << 40));
  auto* cal =
      app.add_option("--calibrate", o->calibrate,
                     "fit the cost model to these samples (topology/calibration/measure.sh)");
  app.add_option("--check", o->check, "how well the compiled-in constants predict these samples")
      ->excludes(cal);
  app.add_option("--fit-min-ranks", o->fitMinRanks,
                 "samples with fewer ranks are reported, not fitted")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--cores", o->cores, "cores of the machine the samples were measured on")
      ->check(CLI::Range(1, 1 << 20));
  return cli::parse(app, argc, argv);
}

// What automatic selection picks (coll::defaultAlgorithm), "*" where the tuner overruled
// the built-in rule, and in brackets the model's fastest when it differs but not by enough.
std::string selection(coll::CollKind kind, size_t bytes, int nranks) {
  coll::CollArgs args;
  args.kind = kind;
  args.type = braidInt8;
  args.count = bytes;
  args.nranks = nranks;
  if (kind == coll::CollKind::kAllToAllv) return "-";
  std::string picked = coll::defaultAlgorithm(args).name;
  std::optional<Choice> best =
      fastest(CostModel::calibrated(), "shm", kind, static_cast<double>(bytes), nranks,
              coll::algorithmNames(kind));
  if (best && best->algorithm != picked) picked += "(" + best->algorithm + ")";
  return picked;
}

// Prints how `model` predicts `samples`, per link and for fewer / at least fitMinRanks.
void report(const CostModel& model, const std::vector<Sample>& samples, const Options& o) {
  for (const std::string link : {"shm", "socket"}) {
    for (const bool small : {true, false}) {
      std::vector<Sample> mine;
      for (const Sample& s : samples) {
        if (s.link == link && (s.nranks < o.fitMinRanks) == small) mine.push_back(s);
      }
      if (mine.empty()) continue;
      FitReport r = evaluate(model, mine, o.cores);
      if (r.predicted == 0) {
        std::printf("%-6s: no constants for these %zu samples\n", link.c_str(), mine.size());
        continue;
      }
      std::printf(
          "%-6s %s %d ranks, %3zu samples: |error| median %.0f%%, p90 %.0f%%; fastest picked in "
          "%d of %d cases; measured time of the picks vs the fastest: mean +%.0f%%, max "
          "+%.0f%%\n",
          link.c_str(), small ? "< " : ">=", o.fitMinRanks, mine.size(), 100 * r.medianRelError,
          100 * r.p90RelError, r.agreed, r.cases, 100 * r.meanRegret, 100 * r.maxRegret);
    }
  }
}

int calibrate(const Options& o) {
  const std::string& path = o.check.empty() ? o.calibrate : o.check;
  std::ifstream in(path);
  if (!in) {
    cli::usageError("braid-topo", "cannot read " + path);
    return cli::kUsageError;
  }
  std::stringstream text;
  text << in.rdbuf();
  Result<std::vector<Sample>> samples = parseSamples(text.str());
  if (!samples.isOk()) {
    std::fprintf(stderr, "braid-topo: %s\n", samples.status().message().c_str());
    return cli::kUsageError;
  }
  if (!o.check.empty()) {  // the compiled-in constants against new measurements
    report(CostModel::calibrated(), *samples, o);
    return 0;
  }
  // Two ranks spin-wait (BRAID_SPIN auto: ranks <= cores), which on a loaded machine costs
  // whole scheduler slices per step; the fit uses the futex regime (3+ ranks on 2 cores)
  // and the report shows both.
  std::vector<Sample> fitted;
  for (const Sample& s : *samples) {
    if (s.nranks >= o.fitMinRanks) fitted.push_back(s);
  }
  CostModel model = fitModel(fitted, o.cores);
  std::printf("// {collective, algorithm, link, overhead us, per-step us, GB/s}\n%s\n",
              toCppTable(model).c_str());
  report(model, *samples, o);
  return 0;
}

void printChannels(const HostKind& host) {
  Channels channels = searchChannels(host);
  std::printf("\nchannels of host %s (x%d): %zu ring(s), %.4g GB/s; %zu tree(s), %.4g GB/s\n",
              host.name.c_str(), host.count, channels.rings.size(), channels.ringGBps(),
              channels.trees.size(), channels.treeGBps());
  for (const Ring& ring : channels.rings)
    std::printf("  ring %s\n", describeRing(host, ring).c_str());
  for (const Tree& tree : channels.trees)
    std::printf("  tree %s\n", describeTree(host, tree).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (std::optional<int> status = parseArgs(argc, argv, &o)) return *status;
  if (!o.calibrate.empty() || !o.check.empty()) return calibrate(o);

  Graph graph;
  if (!o.file.empty()) {
    Result<Graph> loaded = loadFile(o.file);
    if (!loaded.isOk()) {
      std::fprintf(stderr, "braid-topo: %s\n", loaded.status().message().c_str());
      return cli::kUsageError;
    }
    graph = std::move(*loaded);
    std::printf("# loaded from %s\n", o.file.c_str());
  } else {
    Detection d = detectLocalMachine();
    graph = std::move(d.graph);
    std::printf("# detected on this machine (host id %016llx)\n",
                static_cast<unsigned long long>(hostIdentity()));
    for (const std::string& note : d.notes) std::printf("# note: %s\n", note.c_str());
    // Where this process (a rank started the same way) may run, in cache and memory domains.
    std::printf("# this process: %s\n", describe(thisThreadDomains()).c_str());
  }
  std::printf("%s", dump(graph).c_str());
  if (!o.dump.empty()) {
    Status s = dumpFile(graph, o.dump);
    if (!s.isOk()) {
      std::fprintf(stderr, "braid-topo: %s\n", s.message().c_str());
      return 1;
    }
  }
  for (const HostKind& host : graph.hosts) printChannels(host);
  Result<ClusterSummary> gpus = summarize(graph, 0);
  if (gpus.isOk()) {  // a GPU machine: the GPU cluster model's choices (topology/sim.h)
    const int n = gpus->hosts * gpus->gpusPerHost;
    std::printf("\ntuning table: %d GPUs on %d host(s), algorithm/protocol the GPU model picks\n%s",
                n, gpus->hosts,
                tuningTable(n, o.maxBytes,
                            {coll::CollKind::kAllReduce, coll::CollKind::kBroadcast,
                             coll::CollKind::kAllGather, coll::CollKind::kReduceScatter,
                             coll::CollKind::kAllToAll},
                            [&](coll::CollKind kind, size_t bytes, int) {
                              Prediction p = predictBest(
                                  *gpus, kind, reportedSize(kind, static_cast<double>(bytes), n));
                              return p.algorithm + "/" + protocolName(p.protocol);
                            })
                    .c_str());
    return 0;
  }
  std::printf(
      "\ntuning table: %d ranks, what automatic selection picks (in brackets: the calibrated\n"
      "shm model's fastest where selection does not follow it: a gain below the one selection\n"
      "trusts, or a collective the model does not choose for)\n%s",
      o.ranks,
      tuningTable(o.ranks, o.maxBytes,
                  {coll::CollKind::kAllReduce, coll::CollKind::kBroadcast, coll::CollKind::kReduce,
                   coll::CollKind::kAllGather, coll::CollKind::kReduceScatter,
                   coll::CollKind::kAllToAll, coll::CollKind::kGather},
                  selection)
          .c_str());
  return 0;
}
