// ScheduleWriter: the small vocabulary every builder writes schedules with.
//
// Builders place actions at step indices computed from a global clock (e.g.
// "round k, chunk c" -> k * chunks + c), so that the two ends of every message
// sit at the same step index on both ranks. That invariant is what makes the
// schedules deadlock-free even over connectors with no buffering at all: a
// send is always matched by a receive the peer posts in the same step.
// Steps nobody uses at this rank are dropped by finish().
//
// Sizes are in elements here; the writer converts to byte Spans.
#pragma once

#include <string>
#include <vector>

#include "collectives/algorithms/patterns.h"
#include "collectives/schedule.h"

namespace braid::coll {

class ScheduleWriter {
 public:
  ScheduleWriter(const CollArgs& args, std::string algorithm);

  size_t elemBytes() const { return elemBytes_; }
  /// Elements per pipelining chunk (args.chunkBytes in whole elements, at least one).
  size_t chunk() const { return chunkElems_; }
  /// True when the collective must divide its reduced result by nranks (op avg).
  bool averages() const { return averages_; }

  /// The byte span of `slice` (in elements) inside `buf`.
  Span span(BufferId buf, Slice slice) const;

  // Each add* appends one action to step `step` and returns its index in that
  // step, for use as another action's `after`.
  int addSend(size_t step, int peer, Span src);
  int addRecv(size_t step, int peer, Span dst, int after = -1);
  int addRecvReduce(size_t step, int peer, Span dst, Span src, int after = -1);
  int addCopy(size_t step, Span dst, Span src, int after = -1);
  int addDivide(size_t step, Span dst, int after = -1);
  int addReduce(size_t step, Span dst, Span src, int after = -1);

  /// Sends `slice` of `buf` to `peer` within one step as messages of at most one chunk.
  /// With `atLeastOne`, an empty slice still travels as one zero-byte message.
  void sendChunks(size_t step, int peer, BufferId buf, Slice slice, bool atLeastOne = false);
  /// The receiving side of sendChunks(): cuts `slice` exactly as the sender does.
  void recvChunks(size_t step, int peer, BufferId buf, Slice slice, bool atLeastOne = false);

  /// Marks the sends among actions [first, actionCount(step)) of `step` as blocks their
  /// receiver only stores (Action::block), which a transport may let the peer read in place.
  void markBlockSends(size_t step, size_t first);

  /// The number of actions in step `step` so far (the index the next add* returns).
  size_t actionCount(size_t step) const {
    return step < schedule_.steps.size() ? schedule_.steps[step].actions.size() : 0;
  }

  /// Makes the scratch buffer at least `bytes` long.
  void needScratch(size_t bytes);

  /// The schedule, with empty steps removed.
  Schedule finish();

 private:
  int add(size_t step, Action action);

  size_t elemBytes_;
  size_t chunkElems_;
  bool averages_;
  Schedule schedule_;
};

}  // namespace braid::coll
