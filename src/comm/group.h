// braidGroupStart / braidGroupEnd: per-thread queues of ops run together. Host ops run at
// the outermost braidGroupEnd; device ops are enqueued on their streams there.
#pragma once

#include "comm/op.h"
#include "core/status.h"

namespace braid {

/// Runs `op` now, or queues it when this thread is inside a group.
Status submit(Op op);

/// For device buffers (validated): enqueues `op` on `stream` now (comm/device_path.h), or
/// inside a group at the outermost braidGroupEnd, the group's device ops together.
Status submitOnDevice(Op op, void* stream);

Status groupStart();
/// Ends one nesting level; the outermost end runs everything queued.
Status groupEnd();

}  // namespace braid
