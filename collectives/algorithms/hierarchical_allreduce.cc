// Hierarchical all-reduce ("hier"): intra-host reduce-scatter -> inter-host
// all-reduce -> intra-host all-gather.
//
// Lanes. With K the largest number of ranks on one host, the buffer is cut
// into K nearly equal lanes. On a host of m ranks, lane j belongs to the rank
// of local index j mod m, so segment s of that host (its lanes j = s mod m)
// belongs to local rank s. With equal hosts every rank owns one lane; on a
// host with fewer ranks some own several.
//
// Phases, each a ring; H hosts, this rank has local index i on a host of m:
//   1. Reduce-scatter inside the host, rounds k = 0..m-2 over the ring of the
//      host's ranks in ascending order: send segment i-k-1, fold segment i-k-2
//      from the predecessor (recv = send (op) incoming). Afterwards local rank
//      i holds its host's sum of segment i in recv (m = 1: send already holds it).
//   2. For each lane j, an all-reduce ring over the owners of lane j on every
//      host, in host order (a ring all-reduce of the lane cut into H parts,
//      2(H-1) rounds). Afterwards every owner holds the global result of its lanes.
//   3. All-gather inside the host, rounds k = 0..m-2: forward segment i-k,
//      receive segment i-k-1.
// Timeline. Every message's two ends share a step index (schedule_writer.h):
// phase 1 of every host fits in T1 steps (the longest host's rounds times its
// chunks per segment), phase 2 starts at T1 on every rank and lasts
// 2(H-1) * C2 steps (C2: chunks of the largest lane part), phase 3 follows.
// Within a step, a rank lists the lanes it owns in ascending order, which is
// also the order its ring partners list them, so per-pair FIFO order holds.
// Determinism: each element is folded once per host in ring order, then once
// across hosts in ring order, then copied; every rank ends with the same bits.
// Avg divides once, where an element's reduction completes (phase 2's last
// round, or phase 1's when there is one host).
// In place (send == recv) is safe: as in the flat ring, a region is read from
// send only before this rank first writes it.
#include <algorithm>

#include "collectives/algorithms/hierarchical.h"
#include "collectives/algorithms/schedule_writer.h"

namespace braid::coll {

namespace {

int mod(long value, int m) { return static_cast<int>(((value % m) + m) % m); }

class HierarchicalAllReduce {
 public:
  HierarchicalAllReduce(const CollArgs& args, ScheduleWriter& w)
      : args_(args), w_(w), layout_(hostLayout(args)) {
    lanes_ = layout_.maxLocalRanks();
    hosts_ = layout_.numHosts();
    host_ = layout_.hostOf[args.rank];
    local_ = layout_.localIndex[args.rank];
    m_ = static_cast<int>(layout_.ranksOf[host_].size());
    laneChunks_ = numChunks(lane(0).count, w.chunk());
    for (const std::vector<int>& ranks : layout_.ranksOf) {
      int m = static_cast<int>(ranks.size());
      phase1Steps_ = std::max(phase1Steps_, (m - 1) * segmentSteps(m));
    }
    partSteps_ = numChunks(evenSlice(lane(0).count, hosts_, 0).count, w.chunk());
  }

  void build() {
    if (m_ > 1) reduceScatterInHost();
    if (hosts_ > 1) allReduceAcrossHosts(phase1Steps_);
    if (m_ > 1) allGatherInHost(phase1Steps_ + 2 * (hosts_ - 1) * partSteps_);
  }

 private:
  Slice lane(int j) const { return evenSlice(args_.count, lanes_, j); }

  // Steps one round of a host of m ranks takes: chunks of its largest segment.
  size_t segmentSteps(int m) const { return ((lanes_ + m - 1) / m) * laneChunks_; }

  // The chunks of segment s on this host, lane by lane.
  std::vector<Slice> segmentChunks(int s) const {
    std::vector<Slice> chunks;
    for (int j = s; j < lanes_; j += m_) {
      Slice l = lane(j);
      for (size_t c = 0; c < numChunks(l.count, w_.chunk()); ++c) {
        chunks.push_back(chunkOf(l, w_.chunk(), c));
      }
    }
    return chunks;
  }

  int localRank(long index) const { return layout_.ranksOf[host_][mod(index, m_)]; }

  void reduceScatterInHost() {
    const int next = localRank(local_ + 1), prev = localRank(local_ - 1);
    const size_t roundSteps = segmentSteps(m_);
    for (int k = 0; k < m_ - 1; ++k) {
      std::vector<Slice> out = segmentChunks(mod(local_ - k - 1, m_));
      std::vector<Slice> in = segmentChunks(mod(local_ - k - 2, m_));
      for (size_t c = 0; c < roundSteps; ++c) {
        size_t step = k * roundSteps + c;
        if (c < out.size()) {
          w_.addSend(step, next, w_.span(k == 0 ? BufferId::kSend : BufferId::kRecv, out[c]));
        }
        if (c < in.size()) {
          Span dst = w_.span(BufferId::kRecv, in[c]);
          int folded = w_.addRecvReduce(step, prev, dst, w_.span(BufferId::kSend, in[c]));
          if (k == m_ - 2 && hosts_ == 1 && w_.averages()) w_.addDivide(step, dst, folded);
        }
      }
    }
  }

  // Part x (mod H) of lane j, as the lane's ring cuts it.
  Slice lanePart(int j, long x) const {
    Slice l = lane(j);
    Slice part = evenSlice(l.count, hosts_, mod(x, hosts_));
    return Slice{l.offset + part.offset, part.count};
  }

  // The rank that owns lane j on host g.
  int owner(int j, int g) const {
    const std::vector<int>& ranks = layout_.ranksOf[g];
    return ranks[j % static_cast<int>(ranks.size())];
  }

  void allReduceAcrossHosts(size_t base) {
    // This rank's partial sums of its lanes: in recv after phase 1, in send without it.
    const BufferId partial = m_ > 1 ? BufferId::kRecv : BufferId::kSend;
    const int h = host_;
    for (int k = 0; k < 2 * (hosts_ - 1); ++k) {
      const bool reducing = k < hosts_ - 1;
      const int round = reducing ? k : k - (hosts_ - 1);
      for (size_t c = 0; c < partSteps_; ++c) {
        const size_t step = base + k * partSteps_ + c;
        for (int j = local_; j < lanes_; j += m_) {
          const int next = owner(j, mod(h + 1, hosts_)), prev = owner(j, mod(h - 1, hosts_));
          Slice out = chunkOf(lanePart(j, reducing ? h - round : h + 1 - round), w_.chunk(), c);
          Slice in = chunkOf(lanePart(j, reducing ? h - round - 1 : h - round), w_.chunk(), c);
          if (out.count > 0) {
            BufferId src = reducing && round == 0 ? partial : BufferId::kRecv;
            w_.addSend(step, next, w_.span(src, out));
          }
          if (in.count == 0) continue;
          Span dst = w_.span(BufferId::kRecv, in);
          if (!reducing) {
            w_.addRecv(step, prev, dst);
            continue;
          }
          int folded = w_.addRecvReduce(step, prev, dst, w_.span(partial, in));
          if (round == hosts_ - 2 && w_.averages()) w_.addDivide(step, dst, folded);
        }
      }
    }
  }

  void allGatherInHost(size_t base) {
    const int next = localRank(local_ + 1), prev = localRank(local_ - 1);
    const size_t roundSteps = segmentSteps(m_);
    for (int k = 0; k < m_ - 1; ++k) {
      std::vector<Slice> out = segmentChunks(mod(local_ - k, m_));
      std::vector<Slice> in = segmentChunks(mod(local_ - k - 1, m_));
      for (size_t c = 0; c < roundSteps; ++c) {
        size_t step = base + k * roundSteps + c;
        if (c < out.size()) w_.addSend(step, next, w_.span(BufferId::kRecv, out[c]));
        if (c < in.size()) w_.addRecv(step, prev, w_.span(BufferId::kRecv, in[c]));
      }
    }
  }

  const CollArgs& args_;
  ScheduleWriter& w_;
  const HostLayout layout_;
  int lanes_ = 1, hosts_ = 1, host_ = 0, local_ = 0, m_ = 1;
  size_t laneChunks_ = 0, phase1Steps_ = 0, partSteps_ = 0;
};

}  // namespace

Schedule buildHierarchicalAllReduce(const CollArgs& args) {
  ScheduleWriter w(args, "hier");
  if (args.nranks == 1) {
    const Slice whole{0, args.count};
    w.addCopy(0, w.span(BufferId::kRecv, whole), w.span(BufferId::kSend, whole));
    if (w.averages()) w.addDivide(1, w.span(BufferId::kRecv, whole));
    return w.finish();
  }
  HierarchicalAllReduce(args, w).build();
  return w.finish();
}

}  // namespace braid::coll
