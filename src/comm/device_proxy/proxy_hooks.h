// The hooks the C API calls on a communicator's device proxy (device_proxy.h).
//
// A proxy is created on a communicator's first call with device buffers that its device group
// does not run (comm/device_path.h), kept in the communicator's own device side
// (comm/device_side.h), and stopped when the communicator is destroyed or aborted, with it.
// Host-only programs never create one and pay one pointer test per host call.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "comm/device_proxy/stream_ops.h"
#include "comm/op.h"
#include "core/status.h"

namespace braid {

class Comm;

/// Gives `comm` a proxy on `ops` now, instead of CUDA's on first use (tests run the proxy
/// on a CPU fake this way, with small pieces). An error if `comm` already has one.
Status attachDeviceProxy(Comm* comm, std::shared_ptr<StreamOps> ops, size_t pieceBytes);

/// Enqueues the validated collective or send/recv `op` (device buffers) on `stream` through
/// its communicator's proxy, creating the proxy on first use.
Status enqueueOnProxy(const Op& op, void* stream);

/// Enqueues the validated device ops of one group on one communicator (ops[i] on
/// streams[i]) as one proxy item, run together as the host path runs a group.
Status enqueueGroupOnProxy(const std::vector<Op>& ops, const std::vector<void*>& streams);

/// Waits until `comm`'s proxy (if any) has finished the ops queued before: a host call
/// must not share the transport with the proxy thread, and runs after them in call order.
void waitForDeviceProxy(Comm* comm);

/// Device calls on `comm` the proxy has not finished (0 without a proxy); for tests and
/// diagnostics.
uint32_t pendingDeviceCalls(Comm* comm);

/// Finishes `comm`'s queued device ops (or fails them fast once braidCommAbort was called),
/// stops its proxy and frees its staging memory now; no-op without. Deleting `comm` does the
/// same (tests stop a proxy earlier to inspect what it left).
void stopDeviceProxy(Comm* comm);

}  // namespace braid
