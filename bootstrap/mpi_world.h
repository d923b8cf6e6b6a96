// The MPI of this process, found at run time: braidCommInitFromEnv bootstraps over
// MPI_COMM_WORLD when a program has initialised MPI, yet libbraid never links MPI.
//
// The functions come from dlsym(RTLD_DEFAULT), so they are found when the program (or a
// library it loaded globally, as mpi4py does) linked an MPI. MPI_COMM_WORLD and MPI_BYTE
// are not functions: their values belong to the MPI's ABI, and two ABIs cover the MPIs in
// use: Open MPI's (handles are addresses of the exported ompi_mpi_comm_world and
// ompi_mpi_byte) and MPICH's, shared by Intel MPI, MVAPICH and Cray MPICH (handles are the
// int constants of its mpi.h). Any other MPI is reported, never guessed at: the caller says
// what to set instead. braid_mpi.h needs none of this; it compiles against the real mpi.h.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "core/status.h"

namespace braid::bootstrap {

struct MpiWorld {
  bool initialized = false;  // false: no MPI in the process, or not (or no longer) initialised
  int rank = -1;             // in MPI_COMM_WORLD
  int size = 0;
  std::string library;  // "Open MPI", "MPICH": for messages and logs
  /// MPI_Bcast over MPI_COMM_WORLD from rank 0; false on failure. Call from a thread MPI
  /// allows (the main thread under MPI_THREAD_FUNNELED).
  std::function<bool(void* buffer, size_t bytes)> broadcast;
};

/// This process's MPI_COMM_WORLD when an MPI is loaded and initialised (and not finalised);
/// {initialized = false} when not; an error when an initialised MPI has an ABI braid does
/// not know, naming it.
Result<MpiWorld> findInitializedMpi();

}  // namespace braid::bootstrap
