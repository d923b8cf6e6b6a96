// Cluster predictions for braid-sim (see sim.h for the shapes).
#include "topology/sim.h"

#include <algorithm>
#include <cmath>

#include "topology/search.h"

namespace braid::topo {
namespace {

// Share of a link's nominal bandwidth a bulk transfer achieves. NVLink 4: about 370 of
// 450 GB/s per direction is what NCCL users report as attainable (NVIDIA/nccl#1374);
// NDR InfiniBand: 46-48 of 50 GB/s per NIC (NVIDIA maintainer, NVIDIA/nccl-tests#290);
// PCIe: the reference files already use achievable x16 figures.
constexpr double kNvLinkEfficiency = 0.82;
constexpr double kNetEfficiency = 0.94;
constexpr double kPcieEfficiency = 1.0;
// A single-host file scaled to many hosts has no 'network' line: assume an InfiniBand
// fat tree's NIC-to-NIC latency through two switch levels.
constexpr double kDefaultNetLatencyUs = 3.0;

// Per-protocol constants (our estimates, not fitted): a kernel launch and completion
// costs a few microseconds; Simple pays a memory fence and flag round trip per step;
// LL writes 8-byte words half of which are flags (half the bandwidth, no fence); LL128
// keeps 120 of every 128 bytes. Network steps add the fabric latency from the file.
struct ProtocolConstants {
  Protocol protocol;
  double launchUs, intraStepUs, netStepUs, bandwidthShare;
};
constexpr ProtocolConstants kProtocols[] = {
    {Protocol::kSimple, 5.0, 2.0, 4.0, 1.0},
    {Protocol::kLL128, 5.0, 1.0, 2.5, 120.0 / 128.0},
    {Protocol::kLL, 5.0, 0.6, 2.0, 0.5},
};

double ceilLog2(int n) {
  double steps = 0;
  for (int reach = 1; reach < n; reach *= 2) ++steps;
  return steps;
}

double efficiency(LinkType type) {
  switch (type) {
    case LinkType::kNvLink:
      return kNvLinkEfficiency;
    case LinkType::kPcie:
    case LinkType::kCpuLink:
      return kPcieEfficiency;
  }
  return 1.0;
}

}  // namespace

double busFactor(coll::CollKind kind, int nranks) {
  const double n = nranks;
  switch (kind) {
    case coll::CollKind::kAllReduce:
      return 2 * (n - 1) / n;
    case coll::CollKind::kBroadcast:
    case coll::CollKind::kReduce:
      return 1;
    default:
      return (n - 1) / n;
  }
}

Result<ClusterSummary> summarize(const Graph& graph, int gpus) {
  if (graph.hosts.size() != 1) {
    return invalidArgument("braid-sim models clusters of one host kind; the file has " +
                           std::to_string(graph.hosts.size()));
  }
  const HostKind& host = graph.hosts[0];
  ClusterSummary c;
  c.hostName = host.name;
  c.gpusPerHost = static_cast<int>(host.nodesOf(NodeType::kGpu).size());
  if (c.gpusPerHost == 0) return invalidArgument("host '" + host.name + "' has no GPU");
  c.hosts = host.count;
  if (gpus > 0) {
    if (gpus % c.gpusPerHost != 0) {
      return invalidArgument(std::to_string(gpus) + " GPUs is not a whole number of '" + host.name +
                             "' hosts of " + std::to_string(c.gpusPerHost));
    }
    c.hosts = gpus / c.gpusPerHost;
  }
  Channels channels = searchChannels(host);
  c.ringGBps = channels.ringGBps();
  c.treeGBps = channels.treeGBps();
  c.intraLink = !channels.rings.empty() && ringUsesOnly(host, channels.rings[0], LinkType::kNvLink)
                    ? LinkType::kNvLink
                    : LinkType::kPcie;
  c.nicGBps = host.nicGBps();
  c.netLatencyUs = graph.network.name.empty() ? kDefaultNetLatencyUs : graph.network.latencyUs;
  if (c.hosts > 1 && c.nicGBps <= 0) {
    return invalidArgument("host '" + host.name + "' has no NIC, so hosts cannot be joined");
  }
  return c;
}

std::vector<Prediction> predictAll(const ClusterSummary& c, coll::CollKind kind, double s) {
  using coll::CollKind;
  const int n = c.hosts * c.gpusPerHost;
  const double g = c.gpusPerHost, h = c.hosts, nn = n;
  const bool multiHost = c.hosts > 1;
  std::vector<Prediction> out;
  for (const ProtocolConstants& p : kProtocols) {
    // GB/s = 1e3 bytes per microsecond.
    const double bi = c.ringGBps * efficiency(c.intraLink) * p.bandwidthShare * 1e3;
    const double bt = c.treeGBps * efficiency(c.intraLink) * p.bandwidthShare * 1e3;
    const double bn = c.nicGBps * kNetEfficiency * p.bandwidthShare * 1e3;
    const double ai = p.intraStepUs;
    const double an = p.netStepUs + c.netLatencyUs;
    const double step = multiHost ? an : ai;
    const double flat = multiHost ? std::min(bi, bn) : bi;
    auto add = [&](const char* algorithm, double us) {
      us += p.launchUs;
      double algbw = s / us / 1e3;
      out.push_back({algorithm, p.protocol, us, algbw, algbw * busFactor(kind, n)});
    };
    if (n == 1) {
      add("none", 0);
      continue;
    }
    switch (kind) {
      case CollKind::kAllReduce:
        add("ring", 2 * (nn - 1) * step + 2 * (nn - 1) / nn * s / flat);
        // Across hosts, a double binary tree makes each host interior in one tree and a leaf
        // in the other: 2S cross its NICs each way (S with two hosts, one edge per tree).
        add("tree", 2 * ((g - 1) * ai + ceilLog2(c.hosts) * an) +
                        std::max(s / bt, multiHost ? (c.hosts == 2 ? 1 : 2) * s / bn : 0));
        if (multiHost) {
          add("hier", 2 * (g - 1) * ai + 2 * (g - 1) / g * s / bi + 2 * (h - 1) * an +
                          2 * (h - 1) / h * s / bn);
        }
        break;
      case CollKind::kAllGather:
      case CollKind::kReduceScatter:
        add("ring", (nn - 1) * step + (nn - 1) / nn * s / flat);
        break;
      case CollKind::kBroadcast:
      case CollKind::kReduce:
        add("ring", (nn - 1) * step + s / flat);
        break;
      case CollKind::kAllToAll:
        add("pairwise", (nn - 1) * step + std::max((g - 1) / nn * s / bi,
                                                   multiHost ? g * (nn - g) / nn * s / bn : 0));
        break;
      default:
        break;
    }
  }
  return out;
}

Prediction predictBest(const ClusterSummary& cluster, coll::CollKind kind, double sizeBytes) {
  std::vector<Prediction> all = predictAll(cluster, kind, sizeBytes);
  if (all.empty()) return {};
  return *std::min_element(all.begin(), all.end(),
                           [](const Prediction& a, const Prediction& b) { return a.us < b.us; });
}

}  // namespace braid::topo
