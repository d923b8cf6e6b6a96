// Exchange all-reduce ("exchange"): the schedule form of the tiny path
// (src/comm/tiny_allreduce.h), for the calls that path takes when they run
// in the engine (grouped, BRAID_CHECK, the device proxy's groups).
//
// Why a schedule at all: the tiny path sends other messages than rd or tree,
// so a rank must use it for a call exactly when its peers do, and the choice
// may not depend on how a rank grouped the call. The direct path runs the
// exchange without a runner (the latency path); the engine runs this
// schedule. Both put the same messages on the wire.
//
// Steps, rank r of n, B bytes of input:
//   step 0: r sends its whole input to every peer and receives every peer's
//           input into scratch slot peer (in place, ranks past 0 first keep
//           their own input in slot r, since the result overwrites it);
//   step 1: recv = in0, then recv = recv (op) in_k for k = 1..n-1, each after
//           the one before, then one division for avg. Every rank folds the
//           same inputs in the same order, so all get the same bits.
// A barrier (count 0) is step 0 alone with empty messages: a rank leaves once
// every peer has entered.
#include "collectives/algorithms/builders.h"
#include "collectives/algorithms/schedule_writer.h"

namespace braid::coll {

Schedule buildExchangeAllReduce(const CollArgs& args) {
  ScheduleWriter w(args, "exchange");
  const int n = args.nranks;
  const int r = args.rank;
  const Slice whole{0, args.count};
  const size_t bytes = args.count * w.elemBytes();
  auto slot = [&](int rank) { return Span{BufferId::kScratch, size_t(rank) * bytes, bytes}; };
  w.needScratch(size_t(n) * bytes);
  // In place the first fold overwrites this rank's input, which rank r > 0 needs later.
  const bool keepOwn = args.inPlace && r > 0 && args.kind != CollKind::kBarrier;
  if (keepOwn) w.addCopy(0, slot(r), w.span(BufferId::kSend, whole));
  for (int k = 1; k < n; ++k) {
    const int peer = (r + k) % n;
    w.addSend(0, peer, w.span(BufferId::kSend, whole));
    w.addRecv(0, peer, slot(peer));
  }
  if (args.kind == CollKind::kBarrier) return w.finish();

  const Span out = w.span(BufferId::kRecv, whole);
  auto input = [&](int rank) {
    if (rank != r) return slot(rank);
    return keepOwn ? slot(r) : w.span(BufferId::kSend, whole);
  };
  int last = w.addCopy(1, out, input(0));
  for (int k = 1; k < n; ++k) last = w.addReduce(1, out, input(k), last);
  if (w.averages()) w.addDivide(1, out, last);
  return w.finish();
}

}  // namespace braid::coll
