// Binomial-tree broadcast: ceil(log2 n) hops and n - 1 messages, for small
// messages on more than two ranks.
//
// Why. A small broadcast is bound by hops in sequence and, when ranks share
// cores, by how many messages every rank must send and receive (each costs
// system calls and wake-ups). The chain needs n - 1 hops; the double binary
// tree needs ~log2 n hops but sends every byte as two halves, i.e. up to
// twice the messages per rank. The binomial tree has both minima: every rank
// receives once, and the data reaches everyone after L = ceil(log2 n) hops.
//
// Shape. Ranks are labelled by their position p in the host-grouped chain
// order from the root (rank_order.h; the root is p = 0). In round k
// (k = 0..L-1) the distance is D = 2^(L-1-k); every p with p % 2D == 0 that
// has the data sends it to p + D (when p + D < n). So a non-root p receives
// in the round whose D is lowbit(p), the lowest set bit of p, from p - D, and
// then sends in each later round to p + D' for every D' < lowbit(p). The
// subtree below p spans positions p .. p + lowbit(p) - 1: contiguous, so it
// stays within a host as far as its size allows.
//
// Chunks. Chunk j shifts every round by j steps: p receives chunk j in step
// round(p) + j and sends it to the child of round k' > round(p) in step k' + j.
// A rank therefore receives chunk j before it forwards it, and on every link
// chunks go in order, in the steps the receiver expects them. The root copies
// send to recv in step 0 (the runner skips it in place).
#include <cstddef>

#include "collectives/algorithms/builders.h"
#include "collectives/algorithms/rank_order.h"
#include "collectives/algorithms/schedule_writer.h"

namespace braid::coll {

namespace {

// The number of rounds, L = ceil(log2 n); 0 for a single rank.
int roundsFor(int n) {
  int rounds = 0;
  while ((1 << rounds) < n) ++rounds;
  return rounds;
}

// The round in which position p > 0 receives: the one whose distance is lowbit(p).
int receiveRound(int p, int rounds) {
  int lowBit = 0;
  while (((p >> lowBit) & 1) == 0) ++lowBit;
  return rounds - 1 - lowBit;
}

}  // namespace

Schedule buildBinomialBroadcast(const CollArgs& args) {
  ScheduleWriter w(args, "binomial");
  const int n = args.nranks;
  const RankOrder chain = RankOrder::chain(args, args.root);
  const int p = chain.positionOf(args.rank);
  const int rounds = roundsFor(n);
  const bool isRoot = p == 0;
  const int firstSendRound = isRoot ? 0 : receiveRound(p, rounds) + 1;
  const Slice whole{0, args.count};
  if (isRoot) w.addCopy(0, w.span(BufferId::kRecv, whole), w.span(BufferId::kSend, whole));

  for (size_t j = 0; j < numChunks(args.count, w.chunk()); ++j) {
    const Slice part = chunkOf(whole, w.chunk(), j);
    if (!isRoot) {
      const int distance = 1 << (rounds - 1 - receiveRound(p, rounds));
      w.addRecv(receiveRound(p, rounds) + j, chain.rankAt(p - distance),
                w.span(BufferId::kRecv, part));
    }
    const Span data = w.span(isRoot ? BufferId::kSend : BufferId::kRecv, part);
    for (int k = firstSendRound; k < rounds; ++k) {
      const int child = p + (1 << (rounds - 1 - k));
      if (child < n) w.addSend(k + j, chain.rankAt(child), data);
    }
  }
  return w.finish();
}

}  // namespace braid::coll
