// Pairwise exchange all-to-all and all-to-all-v.
//
// Step i = 1..n-1: rank r sends its block for r+i to r+i and receives the
// block from r-i. Every rank talks to exactly one peer in each direction per
// step, and both ends of a message are in step i. Step 0 copies the rank's
// block for itself into place.
// In place, the receives would overwrite blocks not sent yet, so step 0 first
// stages the input into scratch and every send reads from there.
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

Schedule buildPairwise(const CollArgs& args, const Blocks& blocks, bool allowEmpty) {
  ScheduleWriter w(args, "pairwise");
  const int n = args.nranks;
  const int r = args.rank;
  BufferId source = BufferId::kSend;
  int staged = -1;
  const size_t extent = sendBufferBytes(args);
  if (args.inPlace && extent > 0) {
    w.needScratch(extent);
    staged = w.addCopy(0, Span{BufferId::kScratch, 0, extent}, Span{BufferId::kSend, 0, extent});
    source = BufferId::kScratch;
  }
  if (blocks.recv[r].count > 0) {
    w.addCopy(0, w.span(BufferId::kRecv, blocks.recv[r]), w.span(source, blocks.send[r]), staged);
  }
  for (int i = 1; i < n; ++i) {
    int to = ringPeer(r, n, i);
    int from = ringPeer(r, n, -i);
    w.sendChunks(i, to, source, blocks.send[to], allowEmpty);
    w.recvChunks(i, from, BufferId::kRecv, blocks.recv[from], allowEmpty);
  }
  return w.finish();
}

}  // namespace

Schedule buildPairwiseAllToAll(const CollArgs& args) {
  Blocks blocks;
  for (int j = 0; j < args.nranks; ++j) {
    Slice block{j * args.count, args.count};
    blocks.send.push_back(block);
    blocks.recv.push_back(block);
  }
  return buildPairwise(args, blocks, /*allowEmpty=*/false);
}

Schedule buildPairwiseAllToAllv(const CollArgs& args) {
  Blocks blocks;
  for (int j = 0; j < args.nranks; ++j) {
    blocks.send.push_back(Slice{args.sendDispls[j], args.sendCounts[j]});
    blocks.recv.push_back(Slice{args.recvDispls[j], args.recvCounts[j]});
  }
  return buildPairwise(args, blocks, /*allowEmpty=*/true);
}

}  // namespace braid::coll
