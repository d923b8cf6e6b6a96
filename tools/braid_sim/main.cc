// braid-sim: predicts, from a topology file and the cost model (topology/sim.h), the time
// and bus bandwidth of each collective on a cluster of that machine, at several scales,
// and sets the predictions against published NCCL figures (--compare).
//
//   braid-sim --file topology/reference/dgx_h100.topo               8 .. 1024 GPUs, 4 GiB
//   braid-sim --machine dgx_h100 --gpus 8,64,512 --size 1M,1G --collectives allreduce
//   braid-sim --machine hgx_a100_4nic_x3 --compare
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "tools/braid_sim/published.h"
#include "topology/sim.h"
#include "topology/topo_file.h"

namespace {

using namespace braid;
using namespace braid::topo;

struct Options {
  std::string file;
  std::vector<int> gpus;  // empty: gpus per host, doubling, up to 1024
  std::vector<double> sizes = {4.0 * (1 << 30)};
  std::vector<coll::CollKind> kinds = {coll::CollKind::kAllReduce, coll::CollKind::kAllGather,
                                       coll::CollKind::kReduceScatter, coll::CollKind::kBroadcast,
                                       coll::CollKind::kAllToAll};
  bool compare = false;
};

int usage(const std::string& why) {
  std::fprintf(stderr,
               "braid-sim: %s\nusage: braid-sim (--file F.topo | --machine NAME) [--gpus N,..] "
               "[--size BYTES,..] [--collectives allreduce,..] [--compare]\n",
               why.c_str());
  return 2;
}

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(item);
  return out;
}

bool parseBytes(const std::string& text, double* out) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  double scale = 1;
  if (*end == 'K' || *end == 'k') scale = 1 << 10;
  if (*end == 'M' || *end == 'm') scale = 1 << 20;
  if (*end == 'G' || *end == 'g') scale = 1 << 30;
  if (scale != 1) ++end;
  if (end == text.c_str() || *end != '\0' || !(v > 0) || v * scale > 1e15) return false;
  *out = v * scale;
  return true;
}

bool parseArgs(int argc, char** argv, Options* o, std::string* why) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--compare") {
      o->compare = true;
      continue;
    }
    if (i + 1 >= argc) {
      *why = "'" + arg + "' needs a value or is unknown";
      return false;
    }
    std::string value = argv[++i];
    if (arg == "--file") {
      o->file = value;
    } else if (arg == "--machine") {
      o->file = std::string(BRAID_TOPOLOGY_REFERENCE_DIR) + "/" + value + ".topo";
    } else if (arg == "--gpus") {
      o->gpus.clear();
      for (const std::string& item : splitList(value)) {
        char* end = nullptr;
        long n = std::strtol(item.c_str(), &end, 10);
        if (item.empty() || *end != '\0' || n < 1 || n > (1 << 20)) {
          *why = "--gpus: '" + item + "' is not a GPU count";
          return false;
        }
        o->gpus.push_back(static_cast<int>(n));
      }
    } else if (arg == "--size") {
      o->sizes.clear();
      for (const std::string& item : splitList(value)) {
        double bytes = 0;
        if (!parseBytes(item, &bytes)) {
          *why = "--size: '" + item + "' is not a byte count (K, M, G suffixes)";
          return false;
        }
        o->sizes.push_back(bytes);
      }
    } else if (arg == "--collectives") {
      o->kinds.clear();
      for (const std::string& item : splitList(value)) {
        std::optional<coll::CollKind> kind = collKindFromName(item);
        if (!kind) {
          *why = "--collectives: '" + item + "' is not a collective";
          return false;
        }
        o->kinds.push_back(*kind);
      }
    } else {
      *why = "unknown option '" + arg + "'";
      return false;
    }
  }
  if (o->file.empty()) *why = "give --file or --machine";
  return !o->file.empty();
}

void printPrediction(const ClusterSummary& c, coll::CollKind kind, double size) {
  Prediction p = predictBest(c, kind, size);
  char algo[32];
  std::snprintf(algo, sizeof(algo), "%s/%s", p.algorithm.c_str(), protocolName(p.protocol));
  std::printf("%6d %6d %14s %14.0f %14s %12.1f %9.2f %9.2f\n", c.hosts * c.gpusPerHost, c.hosts,
              coll::collName(kind), size, algo, p.us, p.algbw, p.busbw);
}

void compare(const Graph& graph) {
  std::printf("\npublished NCCL all-reduce figures for host '%s' vs braid-sim:\n",
              graph.hosts[0].name.c_str());
  int shown = 0;
  for (const sim::PublishedFigure& f : sim::kPublished) {
    if (graph.hosts[0].name != f.host) continue;
    Result<ClusterSummary> c = summarize(graph, f.gpus);
    if (!c.isOk()) continue;
    // Like with like: the algorithm NCCL ran when braid-sim models it, else the tuner's pick.
    Prediction p = predictBest(*c, coll::CollKind::kAllReduce, f.sizeBytes);
    for (const Prediction& q : predictAll(*c, coll::CollKind::kAllReduce, f.sizeBytes)) {
      if (q.algorithm == f.algorithm && (p.algorithm != f.algorithm || q.us < p.us)) p = q;
    }
    double mid = (f.busbwLow + f.busbwHigh) / 2;
    std::printf(
        "  %4d GPUs %8.0f MiB: published %.1f-%.1f GB/s (%s) | predicted %.1f GB/s "
        "(%s/%s), %+.0f%%\n    source: %s\n",
        f.gpus, f.sizeBytes / (1 << 20), f.busbwLow, f.busbwHigh, f.algorithm, p.busbw,
        p.algorithm.c_str(), protocolName(p.protocol), 100 * (p.busbw / mid - 1), f.source);
    ++shown;
  }
  if (shown == 0) std::printf("  (none recorded for this machine)\n");
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::string why;
  if (!parseArgs(argc, argv, &o, &why)) return usage(why);
  Result<Graph> graph = loadFile(o.file);
  if (!graph.isOk()) {
    std::fprintf(stderr, "braid-sim: %s\n", graph.status().message().c_str());
    return 1;
  }
  Result<ClusterSummary> base = summarize(*graph, 0);
  if (!base.isOk()) {
    std::fprintf(stderr, "braid-sim: %s\n", base.status().message().c_str());
    return 1;
  }
  if (o.gpus.empty()) {
    for (int n = base->gpusPerHost; n <= 1024; n *= 2) o.gpus.push_back(n);
  }
  std::printf(
      "# %s: %d GPUs per host; intra-host rings %.0f GB/s, trees %.0f GB/s (%s); "
      "NICs %.0f GB/s per host; fabric latency %.1f us\n",
      base->hostName.c_str(), base->gpusPerHost, base->ringGBps, base->treeGBps,
      linkTypeName(base->intraLink), base->nicGBps, base->netLatencyUs);
  std::printf("%6s %6s %14s %14s %14s %12s %9s %9s\n", "gpus", "hosts", "collective", "size(B)",
              "algo/proto", "time(us)", "algbw", "busbw");
  for (coll::CollKind kind : o.kinds) {
    for (int gpus : o.gpus) {
      Result<ClusterSummary> c = summarize(*graph, gpus);
      if (!c.isOk()) {
        std::fprintf(stderr, "braid-sim: %s\n", c.status().message().c_str());
        return 1;
      }
      for (double size : o.sizes) printPrediction(*c, kind, size);
    }
  }
  if (o.compare) compare(*graph);
  return 0;
}
