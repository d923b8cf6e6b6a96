#include "collectives/algorithms/schedule_writer.h"

#include <algorithm>
#include <utility>

#include "core/types.h"

namespace braid::coll {

namespace {

bool isReduction(CollKind kind) {
  return kind == CollKind::kAllReduce || kind == CollKind::kReduce ||
         kind == CollKind::kReduceScatter;
}

}  // namespace

ScheduleWriter::ScheduleWriter(const CollArgs& args, std::string algorithm)
    : elemBytes_(typeSize(args.type)),
      chunkElems_(chunkElems(args.chunkBytes, elemBytes_)),
      averages_(isReduction(args.kind) && args.op == braidAvg) {
  schedule_.algorithm = std::move(algorithm);
}

Span ScheduleWriter::span(BufferId buf, Slice slice) const {
  return Span{buf, slice.offset * elemBytes_, slice.count * elemBytes_};
}

int ScheduleWriter::add(size_t step, Action action) {
  if (schedule_.steps.size() <= step) schedule_.steps.resize(step + 1);
  std::vector<Action>& actions = schedule_.steps[step].actions;
  actions.push_back(action);
  return static_cast<int>(actions.size()) - 1;
}

int ScheduleWriter::addSend(size_t step, int peer, Span src) {
  return add(step, Action{ActionKind::kSend, peer, Span{}, src, -1});
}

int ScheduleWriter::addRecv(size_t step, int peer, Span dst, int after) {
  return add(step, Action{ActionKind::kRecv, peer, dst, Span{}, after});
}

int ScheduleWriter::addRecvReduce(size_t step, int peer, Span dst, Span src, int after) {
  return add(step, Action{ActionKind::kRecvReduce, peer, dst, src, after});
}

int ScheduleWriter::addCopy(size_t step, Span dst, Span src, int after) {
  return add(step, Action{ActionKind::kCopy, -1, dst, src, after});
}

int ScheduleWriter::addDivide(size_t step, Span dst, int after) {
  return add(step, Action{ActionKind::kDivide, -1, dst, Span{}, after});
}

int ScheduleWriter::addReduce(size_t step, Span dst, Span src, int after) {
  return add(step, Action{ActionKind::kReduce, -1, dst, src, after});
}

void ScheduleWriter::sendChunks(size_t step, int peer, BufferId buf, Slice slice, bool atLeastOne) {
  size_t chunks = numChunks(slice.count, chunkElems_);
  if (chunks == 0 && atLeastOne) chunks = 1;
  if (slice.count == 0 && chunks == 1) {
    // A zero-byte message points at the buffer's start, wherever an empty slice lies.
    addSend(step, peer, Span{buf, 0, 0});
    return;
  }
  for (size_t c = 0; c < chunks; ++c) {
    addSend(step, peer, span(buf, chunkOf(slice, chunkElems_, c)));
  }
}

void ScheduleWriter::markBlockSends(size_t step, size_t first) {
  if (step >= schedule_.steps.size()) return;
  std::vector<Action>& actions = schedule_.steps[step].actions;
  for (size_t i = first; i < actions.size(); ++i) {
    if (actions[i].kind == ActionKind::kSend) actions[i].block = true;
  }
}

void ScheduleWriter::recvChunks(size_t step, int peer, BufferId buf, Slice slice, bool atLeastOne) {
  size_t chunks = numChunks(slice.count, chunkElems_);
  if (chunks == 0 && atLeastOne) chunks = 1;
  if (slice.count == 0 && chunks == 1) {
    // A zero-byte message points at the buffer's start, wherever an empty slice lies.
    addRecv(step, peer, Span{buf, 0, 0});
    return;
  }
  for (size_t c = 0; c < chunks; ++c) {
    addRecv(step, peer, span(buf, chunkOf(slice, chunkElems_, c)));
  }
}

void ScheduleWriter::needScratch(size_t bytes) {
  schedule_.scratchBytes = std::max(schedule_.scratchBytes, bytes);
}

Schedule ScheduleWriter::finish() {
  std::vector<Step>& steps = schedule_.steps;
  steps.erase(std::remove_if(steps.begin(), steps.end(),
                             [](const Step& step) { return step.actions.empty(); }),
              steps.end());
  return std::move(schedule_);
}

}  // namespace braid::coll
