// How braid-perf and braid-train join their ranks. Built with MPI (BRAID_WITH_MPI found one)
// and started by an MPI launcher, they do as nccl-tests built with MPI=1: MPI_Init, then
// braidCommInitMPI over MPI_COMM_WORLD (braid_mpi.h), so `mpirun -np 8 -H a:4,b:4 prog`
// needs no BRAID_* variable. Otherwise braidCommInitFromEnv reads the launcher's variables.
#pragma once

#include <string>

#include "braid.h"

namespace braid::launch {

/// True when an MPI launcher started this process (Open MPI, MPICH's Hydra, PMIx) and
/// braidrun or torchrun did not (their variables win).
bool startedByMpi();

/// True when this program was built with MPI.
bool builtWithMpi();

/// Joins this process's world communicator. Under an MPI launcher, with MPI built in: through
/// MPI (initialising it, on the calling thread); else braidCommInitFromEnv. On failure,
/// *error says why (naming the call).
braidResult_t joinWorld(int* argc, char*** argv, braidComm_t* comm, std::string* error);

/// Finalises MPI if joinWorld initialised it. Call after the last braid call on the world.
void leaveWorld();

}  // namespace braid::launch
