#include "comm/runner_task.h"

namespace braid {

void RunnerTask::bind(const Op& op) {
  op_ = &op;
  api_ = op.apiName;
  const coll::Schedule& s = schedule();
  coll::Buffers b;
  b.send = static_cast<const uint8_t*>(op.send);
  b.recv = static_cast<uint8_t*>(op.recv);
  b.sendBytes = bytes_.send;
  b.recvBytes = bytes_.recv;
  b.scratchBytes = s.scratchBytes;
  // Looked up per call: another shape may have grown (moved) the scratch buffer.
  b.scratch = b.scratchBytes ? comm_.scratch(b.scratchBytes) : nullptr;
  if (runners_.empty()) {
    runners_.push_back(std::make_unique<coll::ScheduleRunner>(comm_.transport(), &s, b, op.type,
                                                              op.op, comm_.nranks()));
  } else {
    runners_.front()->restart(b);
  }
}

}  // namespace braid
