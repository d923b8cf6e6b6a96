// The StreamOps of real CUDA streams: the BraidStreamOps table of libbraid_cuda.so
// (collectives/device/cuda/stream_ops_abi.h), found beside the device path's table and
// wrapped so the proxy sees Status and Result.
#pragma once

#include <memory>

#include "comm/device_proxy/stream_ops.h"
#include "core/status.h"

namespace braid {

/// The process's CUDA StreamOps (loaded once), or why there are none: a build without CUDA,
/// a libbraid_cuda.so that does not load or does not match.
Result<std::shared_ptr<StreamOps>> cudaStreamOps();

}  // namespace braid
