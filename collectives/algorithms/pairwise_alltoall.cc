// Pairwise exchange all-to-all and all-to-all-v, and its one-step "direct" shape.
//
// Pairwise: step i = 1..n-1: rank r sends its block for r+i to r+i and
// receives the block from r-i. Every rank talks to exactly one peer in each
// direction per step, and both ends of a message are in step i.
//
// Direct: the same messages, all in one step (exchange i is posted i-th, so
// each rank starts with the peer pairwise would start with). A rank then
// never waits for one particular peer to reach its step: with more ranks than
// cores, pairwise costs a context switch at nearly every step boundary (the
// partner is descheduled), while direct moves data with whichever peers run.
// Each (peer, direction) is its own connector lane, so the one step keeps the
// FIFO matching rule and is deadlock-free like pairwise: every send's receive
// is posted in the same step.
//
// The rank's own block (half the data at 2 ranks) is copied locally during
// step 1, not before it: cut into chunks, local chunk c waits (`after`) for
// the step's c-th received chunk, so the copy runs in pieces between polls
// while the peer keeps the connector busy, instead of delaying every peer's
// first transfer. Chunks past the step's receives start with the step. (The
// runner also pumps the connectors between 128 KiB pieces of every local copy.)
//
// In place, the receives would overwrite blocks not sent yet, so step 0 first
// stages the input into scratch and every send reads from there. All-to-all's
// own block lies where it belongs already (same offset in and out), so it is
// neither staged nor copied; all-to-all-v's is copied from scratch.
// Every send is marked a block (Action::block): its receiver only stores it, so the
// transport may let the peer read it in place where that pays (shm: single copy for
// oversubscribed ranks, see single_copy.h).
// All-to-all-v sends one message even for an empty block (zero bytes travel
// and match), so mismatched counts surface as a size error, never a hang.
#include <algorithm>

#include "collectives/algorithm.h"
#include "collectives/algorithms/builders.h"
#include "collectives/algorithms/schedule_writer.h"

namespace braid::coll {

namespace {

// The per-peer layout of one all-to-all(v) call, in elements.
struct Blocks {
  std::vector<Slice> send, recv;
};

// Copies `extent` bytes of the send buffer into scratch at the same offsets,
// leaving out `skip` (a block that is never sent).
void stage(ScheduleWriter& w, size_t extent, Span skip) {
  if (skip.bytes == 0 || skip.offset + skip.bytes > extent) skip = Span{BufferId::kSend, extent, 0};
  const size_t tail = skip.offset + skip.bytes;
  if (skip.offset == 0 && tail == extent) return;  // one rank: nothing is ever sent
  w.needScratch(extent);
  if (skip.offset > 0) {
    w.addCopy(0, Span{BufferId::kScratch, 0, skip.offset}, Span{BufferId::kSend, 0, skip.offset});
  }
  if (tail < extent) {
    w.addCopy(0, Span{BufferId::kScratch, tail, extent - tail},
              Span{BufferId::kSend, tail, extent - tail});
  }
}

// `oneStep`: every exchange in step 1 (direct) instead of exchange i in step i (pairwise).
Schedule buildExchanges(const CollArgs& args, const Blocks& blocks, bool allowEmpty, bool oneStep) {
  ScheduleWriter w(args, oneStep ? "direct" : "pairwise");
  const int n = args.nranks;
  const int r = args.rank;
  const Slice own = blocks.recv[r];
  // In place, all-to-all's own block needs no copy at all. (Not all-to-all-v's:
  // its send blocks may overlap, so another block may need those bytes staged.)
  const bool ownInPlace = args.inPlace && args.kind == CollKind::kAllToAll;
  BufferId source = BufferId::kSend;
  const size_t extent = sendBufferBytes(args);
  if (args.inPlace && extent > 0) {
    stage(w, extent, ownInPlace ? w.span(BufferId::kSend, own) : Span{});
    source = BufferId::kScratch;
  }
  // Where the receives from ringPeer(r, n, -1) start in step 1: the own block's copy
  // follows them.
  size_t recvAt = 0;
  for (int i = 1; i < n; ++i) {
    const int to = ringPeer(r, n, i);
    const int from = ringPeer(r, n, -i);
    const size_t step = oneStep ? 1 : i;
    const size_t firstSend = w.actionCount(step);
    w.sendChunks(step, to, source, blocks.send[to], allowEmpty);
    w.markBlockSends(step, firstSend);
    if (i == 1) recvAt = w.actionCount(step);
    w.recvChunks(step, from, BufferId::kRecv, blocks.recv[from], allowEmpty);
  }
  const Slice src = blocks.send[r];
  if ((own.count == 0 && src.count == 0) || ownInPlace) return w.finish();
  const size_t step = n > 1 ? 1 : 0;
  if (src.count != own.count) {
    // All-to-all-v counts for itself that differ: one copy whose spans differ in
    // size, which the executor reports as an error (never a partial copy).
    w.addCopy(step, w.span(BufferId::kRecv, own), w.span(source, src));
    return w.finish();
  }
  // The own block's chunks, each after the matching receive from ringPeer(r, n, -1)
  // in step 1.
  const size_t recvs = n > 1 ? numChunks(blocks.recv[ringPeer(r, n, -1)].count, w.chunk()) : 0;
  for (size_t c = 0; c < numChunks(own.count, w.chunk()); ++c) {
    const Slice piece = chunkOf(own, w.chunk(), c);
    const Slice from{src.offset + (piece.offset - own.offset), piece.count};
    const int after = c < recvs ? static_cast<int>(recvAt + c) : -1;
    w.addCopy(step, w.span(BufferId::kRecv, piece), w.span(source, from), after);
  }
  return w.finish();
}

Blocks allToAllBlocks(const CollArgs& args) {
  Blocks blocks;
  for (int j = 0; j < args.nranks; ++j) {
    Slice block{j * args.count, args.count};
    blocks.send.push_back(block);
    blocks.recv.push_back(block);
  }
  return blocks;
}

Blocks allToAllvBlocks(const CollArgs& args) {
  Blocks blocks;
  for (int j = 0; j < args.nranks; ++j) {
    blocks.send.push_back(Slice{args.sendDispls[j], args.sendCounts[j]});
    blocks.recv.push_back(Slice{args.recvDispls[j], args.recvCounts[j]});
  }
  return blocks;
}

}  // namespace

Schedule buildPairwiseAllToAll(const CollArgs& args) {
  return buildExchanges(args, allToAllBlocks(args), /*allowEmpty=*/false, /*oneStep=*/false);
}

Schedule buildPairwiseAllToAllv(const CollArgs& args) {
  return buildExchanges(args, allToAllvBlocks(args), /*allowEmpty=*/true, /*oneStep=*/false);
}

Schedule buildDirectAllToAll(const CollArgs& args) {
  return buildExchanges(args, allToAllBlocks(args), /*allowEmpty=*/false, /*oneStep=*/true);
}

Schedule buildDirectAllToAllv(const CollArgs& args) {
  return buildExchanges(args, allToAllvBlocks(args), /*allowEmpty=*/true, /*oneStep=*/true);
}

}  // namespace braid::coll
