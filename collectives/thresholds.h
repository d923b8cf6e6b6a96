// Where automatic selection (collectives/select.h) switches algorithm or protocol: one table,
// each threshold with the reason it sits where it does. The tuner's calibrated constants are
// in topology/calibrated_constants.cc; the measurements behind these values are in
// perf/RESULTS.md ("Measurements behind the defaults").
#pragma once

#include <cstddef>

namespace braid::coll {

struct Thresholds {
  // Below this many bytes per rank (and with more than two ranks) reduce, and all-reduces
  // too large for recursive doubling, use the double binary tree; broadcast goes direct or
  // binomial. Small messages are bound by per-hop latency: the tree needs O(log n) hops in
  // sequence where the ring needs O(n) (2(n-1) for all-reduce). Large ones are bound by
  // bandwidth, where the ring is optimal (each rank sends 2(n-1)/n of the buffer for
  // all-reduce) and pipelines without the tree's fill and drain. With two ranks both are
  // one hop.
  size_t treeMaxBytes;
  // Up to this many bytes per rank, all-reduce uses recursive doubling: log2(n) whole-buffer
  // exchanges (plus a fold and an unfold when n is not a power of two), the fewest hops in
  // sequence, against the tree's 2 log2(n) and the ring's 2(n-1). It moves log2(n) times the
  // buffer per rank, so it loses once bandwidth counts. Floating min/max are not bitwise
  // commutative, so those keep the tree.
  size_t recursiveDoublingMaxBytes;
  // Up to this many ranks (and treeMaxBytes), broadcast is direct: the root sends to every
  // rank itself, so each rank waits for one hop, the root's, and never for a forwarding rank
  // to be scheduled; with more ranks than cores that wait is a context switch, longer than a
  // small message's transfer. The root's n-1 sends (against the tree's two) keep it to few
  // ranks. Above it, small broadcasts take the binomial tree: as few hops as the double tree
  // with half the messages per rank.
  int directBroadcastMaxRanks;
  // With at least this many ranks on one host, all-to-all posts every exchange in one step
  // ("direct") instead of one peer per step: a rank then moves data with whichever peers are
  // running instead of waiting for one that was descheduled. With large blocks read in place
  // (transports/shm/single_copy.h) a posted block costs its sender nothing until the peer
  // reads it.
  int directAllToAllMinRanks;
  // Device buffers: the LL protocol (flag and data in one 8-byte word, no fence per slot)
  // up to this many bytes per rank, Simple (large slots, head/tail counters) above, where
  // LL's half-payload words cost more bandwidth than its saved fences gain latency.
  size_t llMaxBytes;
  // The calibrated cost model overrules the rule only where it predicts the alternative at
  // least this many times faster: fitted on a shared, loaded machine, its error against
  // measurement is large (docs/TOPOLOGY.md), so a smaller predicted gain is within it.
  double tunerTrustedGain;
  // The exchange ("exchange": every rank sends its whole input to every peer, then reduces
  // in rank order) runs all-reduces and barriers on at most this many ranks: past it the
  // (n-1) messages per rank cost more than a tree's log2(n) dependent steps save.
  int exchangeMaxRanks;
  // ... and at most this many bytes arriving at one rank per call ((n-1) x the message):
  // one round saves the schedules' dependent steps, but every rank receives and reduces
  // every other rank's whole message, so past a few KiB the schedules' fewer bytes win
  // (perf/RESULTS.md, "Algorithm choices"). Automatic selection prefers it on shared-memory
  // links up to BRAID_TINY_BYTES per rank, where a call costs host bookkeeping, not bytes.
  size_t exchangeMaxInboundBytes;
};

inline constexpr Thresholds kThresholds = {
    .treeMaxBytes = size_t{64} << 10,
    .recursiveDoublingMaxBytes = size_t{16} << 10,
    .directBroadcastMaxRanks = 4,
    .directAllToAllMinRanks = 4,
    .llMaxBytes = size_t{64} << 10,
    .tunerTrustedGain = 2.0,
    .exchangeMaxRanks = 8,
    .exchangeMaxInboundBytes = size_t{8} << 10,
};

}  // namespace braid::coll
