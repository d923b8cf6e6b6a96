// braidGroupStart / braidGroupEnd: per-thread queues of ops run together.
#pragma once

#include "comm/op.h"
#include "core/status.h"

namespace braid {

/// Runs `op` now, or queues it when this thread is inside a group.
Status submit(Op op);

Status groupStart();
/// Ends one nesting level; the outermost end runs everything queued.
Status groupEnd();

}  // namespace braid
