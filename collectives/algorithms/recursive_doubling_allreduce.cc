// Recursive-doubling all-reduce: log2(n) rounds of whole-buffer exchanges, the
// fewest hops in sequence of any all-reduce, for buffers small enough that
// latency, not bandwidth, sets the cost.
//
// Let p be the largest power of two <= n and e = n - p. Phases, one step each:
//   Fold (only when e > 0): among ranks 0..2e-1, each even rank 2i is an extra
//     rank. It sends its input to 2i+1, which folds it into its own, and then
//     sits out the doubling.
//   Doubling, rounds k = 0..log2(p)-1: the p remaining ranks take the virtual
//     ranks v = 0..p-1 (2i+1 -> i for i < e, q -> q - e for q >= 2e). In round
//     k, v sends its whole partial to v XOR 2^k and folds the partner's partial
//     into its own. After round k a partial covers all 2^(k+1) virtual ranks
//     that agree with v above bit k (and the extras folded into them); after
//     the last round it covers every rank.
//   Unfold (only when e > 0): 2i+1 sends the result to the extra rank 2i.
// Avg divides once, on each doubling rank chunk by chunk right after its last
// fold, before the result is copied or sent to an extra.
//
// Determinism: by induction over the rounds, both partners of round k hold
// the same bits for their own group's partial, so they compute X op Y and
// Y op X from identical X, Y. Sum and prod are commutative bit for bit in
// IEEE arithmetic (fp16 and bf16 go through fp32 and round once) and for
// integers, and min/max of integers too, so every rank ends with the same
// bits. Floating min/max are not: the kernels answer a -0/+0 tie with their
// second operand, so partners would disagree; supports() refuses them (the
// tree reduces each element on one rank only).
//
// Buffers: a round's send and its fold read the same partial in the same
// step, so the fold must write elsewhere. Partials alternate between recv and
// one scratch slot, arranged so that the last one lands in recv. In place, the
// first fold cannot write recv (it reads send, the same memory); when that
// first fold is also one that would land in recv, the chain is shifted to end
// in scratch and the unfold step copies it to recv. Every exchange travels as
// chunk-sized messages within its step, so both ends of each message share
// a step index, as the ScheduleWriter rules require.
#include "collectives/algorithms/builders.h"
#include "collectives/algorithms/schedule_writer.h"
#include "core/types.h"

namespace braid::coll {

namespace {

// The largest power of two <= n (n >= 1).
int powerOfTwoFloor(int n) {
  int p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

// Where a rank sits in the fold: its virtual rank in the doubling (-1 for an
// extra rank) and its fold partner (-1 for none).
struct FoldRole {
  int virtualRank = -1;
  int partner = -1;
};

FoldRole foldRole(int rank, int extras) {
  if (rank >= 2 * extras) return FoldRole{rank - extras, -1};
  if (rank % 2 == 0) return FoldRole{-1, rank + 1};
  return FoldRole{rank / 2, rank - 1};
}

// The rank that holds virtual rank `v` of the doubling.
int realRank(int v, int extras) { return v < extras ? 2 * v + 1 : v + extras; }

// Sends `src` whole to `peer` and folds the peer's partial into `dst = src op incoming`,
// chunk by chunk within one step. With `divide`, each chunk is then divided (avg).
void exchangeAndFold(ScheduleWriter& w, size_t step, int peer, BufferId dst, BufferId src,
                     size_t count, bool divide, bool send) {
  const Slice whole{0, count};
  if (send) w.sendChunks(step, peer, src, whole);
  for (size_t c = 0; c < numChunks(count, w.chunk()); ++c) {
    Slice part = chunkOf(whole, w.chunk(), c);
    int fold = w.addRecvReduce(step, peer, w.span(dst, part), w.span(src, part));
    if (divide) w.addDivide(step, w.span(dst, part), fold);
  }
}

}  // namespace

bool supportsRecursiveDoublingAllReduce(const CollArgs& args) {
  const bool minMax = args.op == braidMax || args.op == braidMin;
  return args.kind == CollKind::kAllReduce && !(minMax && isFloatType(args.type));
}

Schedule buildRecursiveDoublingAllReduce(const CollArgs& args) {
  ScheduleWriter w(args, "rd");
  const int n = args.nranks;
  const Slice whole{0, args.count};
  const Span result = w.span(BufferId::kRecv, whole);
  if (n == 1) {
    w.addCopy(0, result, w.span(BufferId::kSend, whole));
    if (w.averages()) w.addDivide(1, result);
    return w.finish();
  }
  const int p = powerOfTwoFloor(n);
  const int extras = n - p;
  const FoldRole role = foldRole(args.rank, extras);
  size_t rounds = 0;
  for (int bit = 1; bit < p; bit *= 2) ++rounds;
  const size_t unfoldStep = rounds + 1;

  if (role.virtualRank < 0) {
    // An extra rank: hand the input over, get the result back.
    w.sendChunks(0, role.partner, BufferId::kSend, whole);
    w.recvChunks(unfoldStep, role.partner, BufferId::kRecv, whole);
    return w.finish();
  }

  // The folds this rank performs, in order; the last writes `lastInto`, the ones before
  // alternate so that no fold writes the partial it reads.
  const size_t folds = rounds + (role.partner >= 0 ? 1 : 0);
  const bool shifted = args.inPlace && folds % 2 == 1;  // see "Buffers" above
  const BufferId lastInto = shifted ? BufferId::kScratch : BufferId::kRecv;
  const BufferId other = shifted ? BufferId::kRecv : BufferId::kScratch;
  auto into = [&](size_t j) { return (folds - 1 - j) % 2 == 0 ? lastInto : other; };
  if (folds > 1 || shifted) w.needScratch(args.count * w.elemBytes());

  BufferId partial = BufferId::kSend;
  size_t j = 0;
  if (role.partner >= 0) {
    // Fold step: receive the extra rank's input; this rank sends nothing.
    exchangeAndFold(w, 0, role.partner, into(j), partial, args.count,
                    w.averages() && j + 1 == folds, /*send=*/false);
    partial = into(j++);
  }
  for (size_t k = 0; k < rounds; ++k, ++j) {
    const int peer = realRank(role.virtualRank ^ (1 << k), extras);
    exchangeAndFold(w, k + 1, peer, into(j), partial, args.count, w.averages() && j + 1 == folds,
                    /*send=*/true);
    partial = into(j);
  }
  // Unfold step: both only read the result where the last fold left it.
  if (shifted) w.addCopy(unfoldStep, result, w.span(BufferId::kScratch, whole));
  if (role.partner >= 0) w.sendChunks(unfoldStep, role.partner, partial, whole);
  return w.finish();
}

}  // namespace braid::coll
