/*
 * braid_mpi.h — braid communicators made from MPI communicators.
 *
 * A header-only companion to braid.h: it is compiled with the program's own
 * mpi.h, so it works with any MPI (Open MPI, MPICH and the MPIs built on it),
 * and libbraid itself never links MPI. Build as any MPI program that uses
 * braid:
 *
 *   mpicc prog.c $(pkg-config --cflags --libs braid_mpi)          (pkg-config)
 *   target_link_libraries(prog PRIVATE braid::braid_mpi)          (CMake: find_package(braid))
 *
 *   MPI_Init(&argc, &argv);
 *   braidComm_t comm;
 *   if (braidCommInitMPI(&comm, MPI_COMM_WORLD) != braidSuccess)
 *     fprintf(stderr, "%s\n", braidGetLastError(NULL));
 *
 * Start it with the MPI's own launcher (mpirun, mpiexec, srun): no BRAID_*
 * variable is needed, on one host or many.
 */
#ifndef BRAID_MPI_H_
#define BRAID_MPI_H_

#include <mpi.h>
#include <stddef.h>

#include "braid.h"

#ifdef __cplusplus
extern "C" {
#endif

/* braidBroadcastFn_t over MPI: `context` points at the MPI_Comm. Not for direct use. */
static inline int braidMpiBroadcast_(void* buffer, size_t bytes, void* context) {
  if (bytes > (size_t)0x7fffffff) return 1; /* MPI counts are int; braid's payload is small */
  return MPI_Bcast(buffer, (int)bytes, MPI_BYTE, 0, *(MPI_Comm*)context) == MPI_SUCCESS ? 0 : 1;
}

/**
 * Creates `*comm`, a braid communicator of the processes of `mpiComm`: one braid
 * rank per process, braid rank = the process's rank in `mpiComm`. The unique id
 * is made on `mpiComm`'s rank 0 and sent to the others with MPI_Bcast; the
 * collectives then run on braid's own transports (shared memory inside a host,
 * TCP between hosts), not through MPI.
 *
 * Collective over `mpiComm`. Any intra-communicator works the same way:
 * MPI_COMM_WORLD, a duplicate, or one of MPI_Comm_split's: after
 * MPI_Comm_split(MPI_COMM_WORLD, color, key, &part), braidCommInitMPI(&c, part)
 * gives each color its own braid communicator, ranked as in `part`.
 *
 * MPI must be initialised and not finalised, and the call made from a thread
 * that may call MPI (under MPI_THREAD_FUNNELED, the main thread).
 * Errors (braidGetLastError(NULL) says which): braidInvalidArgument when `comm`
 * is NULL or `mpiComm` is MPI_COMM_NULL or an inter-communicator;
 * braidInvalidUsage when MPI is not initialised or already finalised; any error
 * of braidCommInitRankBroadcast.
 */
static inline braidResult_t braidCommInitMPI(braidComm_t* comm, MPI_Comm mpiComm) {
  int initialized = 0, finalized = 0, inter = 0, rank = 0, size = 0;
  if (comm == NULL) {
    return braidSetLastError(braidInvalidArgument, "braidCommInitMPI: comm is NULL");
  }
  *comm = NULL;
  MPI_Initialized(&initialized);
  if (!initialized) {
    return braidSetLastError(braidInvalidUsage,
                             "braidCommInitMPI: MPI is not initialised; call MPI_Init (or "
                             "MPI_Init_thread) before braidCommInitMPI");
  }
  MPI_Finalized(&finalized);
  if (finalized) {
    return braidSetLastError(braidInvalidUsage,
                             "braidCommInitMPI: MPI is already finalised; create braid "
                             "communicators between MPI_Init and MPI_Finalize");
  }
  if (mpiComm == MPI_COMM_NULL) {
    return braidSetLastError(braidInvalidArgument,
                             "braidCommInitMPI: mpiComm is MPI_COMM_NULL (a process outside "
                             "the group, e.g. MPI_Comm_split with MPI_UNDEFINED, has no "
                             "communicator to join)");
  }
  if (MPI_Comm_test_inter(mpiComm, &inter) != MPI_SUCCESS || inter) {
    return braidSetLastError(braidInvalidArgument,
                             "braidCommInitMPI: mpiComm is an inter-communicator; pass an "
                             "intra-communicator (MPI_Intercomm_merge makes one)");
  }
  if (MPI_Comm_rank(mpiComm, &rank) != MPI_SUCCESS ||
      MPI_Comm_size(mpiComm, &size) != MPI_SUCCESS) {
    return braidSetLastError(braidInvalidArgument,
                             "braidCommInitMPI: MPI_Comm_rank/MPI_Comm_size failed on mpiComm");
  }
  return braidCommInitRankBroadcast(comm, size, rank, braidMpiBroadcast_, &mpiComm);
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BRAID_MPI_H_ */
