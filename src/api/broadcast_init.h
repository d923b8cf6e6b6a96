// Joining a communicator whose unique id travels over a broadcast the caller already has:
// MPI_Bcast through braid_mpi.h (braidCommInitRankBroadcast), or the MPI that
// braidCommInitFromEnv finds initialised in the process (bootstrap/mpi_world.h).
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "braid.h"
#include "core/status.h"

namespace braid::api {

/// Copies `bytes` bytes at `buffer` from the group's rank 0 to every rank; false on failure.
using Broadcast = std::function<bool(void* buffer, size_t bytes)>;

/// Rank 0 creates a unique id; `broadcast` carries it, or rank 0's error, to every rank, so
/// that no rank waits for an id that never comes; then every rank joins as `rank` of
/// `nranks`. `api` names the caller in messages. Collective over the broadcast's group.
Status initByBroadcast(braidComm_t* out, int nranks, int rank, const Broadcast& broadcast,
                       const std::string& tagPrefix, const std::string& api);

}  // namespace braid::api
