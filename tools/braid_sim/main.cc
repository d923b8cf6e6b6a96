// braid-sim: predicts, from a topology file and the cost model (topology/sim.h), the time
// and bus bandwidth of each collective on a cluster of that machine, at several scales,
// and sets the predictions against published NCCL figures (--compare).
//
//   braid-sim --file topology/reference/dgx_h100.topo               8 .. 1024 GPUs, 4 GiB
//   braid-sim --machine dgx_h100 --gpus 8,64,512 --size 1M,1G --collectives allreduce
//   braid-sim --machine hgx_a100_4nic_x3 --compare
//   braid-sim --machine list
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "tools/braid_sim/published.h"
#include "tools/cli/cli.h"
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

// The reference machines: installed beside the program (<prefix>/share/braid/machines, found
// from the program's own path, so any prefix works), else the source tree's, for a program run
// from its build folder.
std::filesystem::path machinesDir() {
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    std::filesystem::path installed = self.parent_path() / BRAID_SIM_MACHINES_FROM_BINDIR;
    if (std::filesystem::is_directory(installed, ec)) return installed.lexically_normal();
  }
  return BRAID_TOPOLOGY_REFERENCE_DIR;
}

std::vector<std::string> machineNames(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".topo") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

// Fills `o` from argv; returns the exit status when the program should stop here.
std::optional<int> parseArgs(int argc, char** argv, Options* o) {
  CLI::App app{
      "Predicts the time and bus bandwidth of each collective on a cluster of the machine a "
      "topology file describes, from braid's cost model.",
      "braid-sim"};
  std::string machine, gpus, sizes, collectives;
  auto* file = app.add_option("--file", o->file, "topology file (topology/TOPOLOGY.md's format)");
  app.add_option("--machine", machine,
                 "a reference machine by name, or 'list' to print their names")
      ->excludes(file);
  app.add_option("--gpus", gpus, "GPU counts, comma separated (default: doubling to 1024)");
  app.add_option("--size", sizes, "bytes per rank, comma separated, K/M/G suffixes (4G)");
  app.add_option("--collectives", collectives,
                 "allreduce, allgather, reducescatter, broadcast, alltoall, ... (all five)");
  app.add_flag("--compare", o->compare, "print published NCCL figures beside the prediction");
  if (std::optional<int> status = cli::parse(app, argc, argv)) return status;

  auto refuse = [](const std::string& why) {
    cli::usageError("braid-sim", why);
    return cli::kUsageError;
  };
  if (!machine.empty()) {
    std::filesystem::path dir = machinesDir();
    std::vector<std::string> names = machineNames(dir);
    if (machine == "list") {
      for (const std::string& name : names) std::printf("%s\n", name.c_str());
      return 0;
    }
    if (std::find(names.begin(), names.end(), machine) == names.end()) {
      return refuse("--machine: no reference machine '" + machine + "' in " + dir.string() +
                    " (known: " + joined(names) + ")");
    }
    o->file = (dir / (machine + ".topo")).string();
  }
  if (o->file.empty()) return refuse("give --file or --machine");
  if (!gpus.empty()) {
    for (const std::string& item : splitList(gpus)) {
      char* end = nullptr;
      long n = std::strtol(item.c_str(), &end, 10);
      if (item.empty() || *end != '\0' || n < 1 || n > (1 << 20)) {
        return refuse("--gpus: '" + item + "' is not a GPU count");
      }
      o->gpus.push_back(static_cast<int>(n));
    }
  }
  if (!sizes.empty()) {
    o->sizes.clear();
    for (const std::string& item : splitList(sizes)) {
      double bytes = 0;
      if (!parseBytes(item, &bytes)) {
        return refuse("--size: '" + item + "' is not a byte count (K, M, G suffixes)");
      }
      o->sizes.push_back(bytes);
    }
  }
  if (!collectives.empty()) {
    o->kinds.clear();
    for (const std::string& item : splitList(collectives)) {
      std::optional<coll::CollKind> kind = collKindFromName(item);
      if (!kind) return refuse("--collectives: '" + item + "' is not a collective");
      o->kinds.push_back(*kind);
    }
  }
  return std::nullopt;
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
  if (std::optional<int> status = parseArgs(argc, argv, &o)) return *status;
  // A file that does not load, or a GPU count the machine cannot make, is bad input: exit 2.
  Result<Graph> graph = loadFile(o.file);
  if (!graph.isOk()) {
    std::fprintf(stderr, "braid-sim: %s\n", graph.status().message().c_str());
    return cli::kUsageError;
  }
  Result<ClusterSummary> base = summarize(*graph, 0);
  if (!base.isOk()) {
    std::fprintf(stderr, "braid-sim: %s\n", base.status().message().c_str());
    return cli::kUsageError;
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
        std::fprintf(stderr, "braid-sim: --gpus: %s\n", c.status().message().c_str());
        return cli::kUsageError;
      }
      for (double size : o.sizes) printPrediction(*c, kind, size);
    }
  }
  if (o.compare) compare(*graph);
  return 0;
}
