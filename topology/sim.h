// GPU cluster simulation: predicted time and bus bandwidth of each collective on a
// machine described by a topology file, scaled to a number of GPUs (braid-sim).
//
// The cluster is summarised by what the channel search finds per host (ring and tree
// bandwidth over NVLink/PCIe), the hosts' NIC bandwidth and the fabric latency. Each
// (algorithm, protocol) gets latency + bytes/bandwidth with the shapes below; the tuner
// keeps the fastest. The GPU protocol constants (per-hop latency, share of link
// bandwidth a protocol delivers) are engineering estimates written down in sim.cc with
// their reasoning; link efficiencies come from published measurements (docs/TOPOLOGY.md).
//
// Shapes (N GPUs, H hosts of g; S = nccl-tests size; B_i intra ring, B_t intra tree,
// B_n NIC bandwidth per host, after efficiency; a_i / a_n per-step latency):
//   allreduce ring  2(N-1) steps (a_n if H>1), 2(N-1)/N S / min(B_i, B_n)
//   allreduce tree  2((g-1) a_i + log2 H a_n), max(S / B_t, 2S / B_n) (chain in host, double
//                   binary tree across hosts; S / B_n for two hosts)
//   allreduce hier  (H>1) intra reduce-scatter + all-gather: 2(g-1) a_i + 2(g-1)/g S / B_i,
//                   plus inter-host ring on 1/g of the data per GPU: 2(H-1) a_n + 2(H-1)/H S / B_n
//   allgather, reducescatter ring  (N-1) steps, (N-1)/N S / min(B_i, B_n)
//   broadcast ring  (N-1) steps, S / min(B_i, B_n) (pipelined chain)
//   alltoall pairwise  (N-1) steps, max((g-1)/N S / B_i, g (N-g)/N S / B_n)
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "topology/cost_model.h"
#include "topology/graph.h"

namespace braid::topo {

struct ClusterSummary {
  std::string hostName;
  int hosts = 1;
  int gpusPerHost = 1;
  double ringGBps = 0;  // intra-host, from the channel search (before efficiency)
  double treeGBps = 0;
  double nicGBps = 0;  // per host
  double netLatencyUs = 0;
  LinkType intraLink = LinkType::kNvLink;  // what the intra-host rings run over
};

/// The cluster of `graph`'s (single) host kind scaled to `gpus` GPUs (0: as in the file).
/// Errors when the file has several host kinds, no GPUs, or `gpus` is not a multiple of
/// the GPUs per host.
Result<ClusterSummary> summarize(const Graph& graph, int gpus);

struct Prediction {
  std::string algorithm;
  Protocol protocol = Protocol::kSimple;
  double us = 0;
  double algbw = 0;  // GB/s
  double busbw = 0;  // GB/s, nccl-tests' factor
};

/// Every (algorithm, protocol) the simulator knows for `kind` on this cluster.
std::vector<Prediction> predictAll(const ClusterSummary& cluster, coll::CollKind kind,
                                   double sizeBytes);

/// The fastest of predictAll (what the tuner would choose).
Prediction predictBest(const ClusterSummary& cluster, coll::CollKind kind, double sizeBytes);

/// nccl-tests' bus bandwidth factor for `kind` on n ranks.
double busFactor(coll::CollKind kind, int nranks);

}  // namespace braid::topo
