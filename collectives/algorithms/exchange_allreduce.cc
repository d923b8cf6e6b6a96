// Exchange all-reduce ("exchange"): one round for tiny all-reduces and barriers.
//
// Selection (collectives/select.h) prefers it on shared-memory links up to
// BRAID_TINY_BYTES per rank, like any registry entry, so every rank picks it for
// the same calls whatever path runs them. A blocking call outside a group runs it
// without a runner (src/comm/exchange_task.h, the latency path); the engine runs
// this schedule. Both put the same messages on the wire.
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
#include "collectives/thresholds.h"
#include "core/types.h"

namespace braid::coll {

bool supportsExchange(const CollArgs& args) {
  const int n = args.nranks;
  if (n < 2 || n > kThresholds.exchangeMaxRanks) return false;
  if (args.kind == CollKind::kBarrier) return true;
  const size_t bytes = args.count * typeSize(args.type);
  // Each input travels as one message, so it must fit one chunk (as every message must).
  return args.kind == CollKind::kAllReduce && bytes > 0 && bytes <= args.chunkBytes &&
         bytes * static_cast<size_t>(n - 1) <= kThresholds.exchangeMaxInboundBytes;
}

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
