// Reading a rank's identity from the launcher's environment.
//
// braidrun:  BRAID_RANK, BRAID_NRANKS, BRAID_ROOT=host:port, BRAID_SECRET (32 hex)
// torchrun:  RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT (braid's root listens on
//            MASTER_PORT+1, since torch's own store may hold MASTER_PORT)
// OpenMPI:   OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE
// Slurm:     SLURM_PROCID, SLURM_NTASKS
// For OpenMPI and Slurm the root is BRAID_ROOT, else MASTER_ADDR, else — when
// every rank is on one node — 127.0.0.1 on a port derived from the job id.
// When none of these name a root and MPI is initialised in the process, braidCommInitFromEnv
// broadcasts the unique id over MPI_COMM_WORLD instead (bootstrap/mpi_world.h).
// BRAID_ROOT_PORT overrides the port in every case. Without BRAID_SECRET the
// secret is derived from the job's identity, which keeps out strays but not a
// determined local user; braidrun always passes a random one.
#pragma once

#include <cstdint>
#include <string>

#include "bootstrap/unique_id.h"
#include "core/status.h"

namespace braid::bootstrap {

struct LaunchInfo {
  std::string launcher;  // "braidrun", "torchrun", "openmpi", "slurm"
  int rank = -1;
  int nranks = 0;
  std::string rootHost;
  int rootPort = 0;
  uint8_t secret[kSecretBytes] = {};
  std::string tagPrefix;  // BRAID_JOB_TAG: names this job's shared-memory segments
  /// BRAID_ROOT_FD (braidrun, rank 0 only): a socket already listening on the root's
  /// port, inherited from the launcher so no other program can take the port first.
  int rootListenFd = -1;
};

/// The launch description of this process, or an error naming what is missing.
Result<LaunchInfo> launchInfoFromEnv();

/// True when the environment itself says where the bootstrap root is (braidrun's or
/// torchrun's variables, BRAID_ROOT or MASTER_ADDR). Otherwise an initialised MPI in the
/// process, when there is one, carries the unique id instead (bootstrap/mpi_world.h).
bool launchEnvNamesRoot();

}  // namespace braid::bootstrap
