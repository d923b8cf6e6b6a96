/* An outside C99 MPI program built against the installed braid.h and braid_mpi.h only,
 * with the MPI's own compiler wrapper (mpicc.openmpi, mpicc.mpich). Every braid result is
 * checked against the same collective done by MPI. Modes (argv[1]):
 *   world    braidCommInitMPI on MPI_COMM_WORLD: ranks in MPI order (each prints its network
 *            namespace), all-reduce, broadcast,
 *            all-gather and all-to-all equal MPI's; then communicators from MPI_Comm_split
 *            (one per color, ranked by the split's key) and the bad handles of a split:
 *            MPI_COMM_NULL and an inter-communicator are clear errors, NULL comm too.
 *   fromenv  braidCommInitFromEnv after MPI_Init, no BRAID_* variable: braid finds the MPI
 *            and broadcasts its id over MPI_COMM_WORLD; all-reduce equals MPI's.
 *   uninit   braidCommInitMPI before MPI_Init and after MPI_Finalize: clear errors.
 * Exits 0 when every check passed; prints what differed otherwise. */
#define _DEFAULT_SOURCE /* readlink */
#include <braid_mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define COUNT 1031 /* odd, not a multiple of anything braid chunks by */

static int failures = 0;

#define CHECK(cond, ...)                                 \
  do {                                                   \
    if (!(cond)) {                                       \
      fprintf(stderr, "mpi_outside: FAIL: ");            \
      fprintf(stderr, __VA_ARGS__);                      \
      fprintf(stderr, " (%s:%d)\n", __FILE__, __LINE__); \
      ++failures;                                        \
    }                                                    \
  } while (0)

/* braidSuccess, or prints braid's message and counts a failure. */
static int ok(braidResult_t rc, braidComm_t comm, const char* what) {
  if (rc == braidSuccess) return 1;
  fprintf(stderr, "mpi_outside: FAIL: %s: %s: %s\n", what, braidGetErrorString(rc),
          braidGetLastError(comm));
  ++failures;
  return 0;
}

/* The error of a call expected to fail: its code and that its message names `needle`. */
static void expectError(braidResult_t rc, braidResult_t code, const char* needle,
                        const char* what) {
  const char* message = braidGetLastError(NULL);
  CHECK(rc == code, "%s: returned %d (%s), expected %d", what, (int)rc, braidGetErrorString(rc),
        (int)code);
  CHECK(strstr(message, needle) != NULL, "%s: message '%s' does not name '%s'", what, message,
        needle);
}

/* All-reduce (sum, int64 and float32 max) on `comm`, compared with MPI's on `mpiComm`. */
static void checkAllReduce(braidComm_t comm, MPI_Comm mpiComm, const char* name) {
  static long long send[COUNT], recv[COUNT], ref[COUNT];
  static float fsend[COUNT], frecv[COUNT], fref[COUNT];
  int rank, i;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (i = 0; i < COUNT; ++i) {
    send[i] = (long long)(rank + 1) * 1000003LL + i;
    fsend[i] = (float)((rank * 7 + i) % 13) - 6.0f;
  }
  if (ok(braidAllReduce(send, recv, COUNT, braidInt64, braidSum, comm, NULL), comm, name)) {
    MPI_Allreduce(send, ref, COUNT, MPI_LONG_LONG, MPI_SUM, mpiComm);
    CHECK(memcmp(recv, ref, sizeof(ref)) == 0, "%s: int64 sum differs from MPI_Allreduce", name);
  }
  if (ok(braidAllReduce(fsend, frecv, COUNT, braidFloat32, braidMax, comm, NULL), comm, name)) {
    MPI_Allreduce(fsend, fref, COUNT, MPI_FLOAT, MPI_MAX, mpiComm);
    CHECK(memcmp(frecv, fref, sizeof(fref)) == 0, "%s: float max differs from MPI_Allreduce", name);
  }
}

static void checkWorldCollectives(braidComm_t comm, int rank, int size) {
  static int bsend[COUNT], brecv[COUNT], bref[COUNT];
  int *gsend = malloc(sizeof(int) * COUNT), *grecv = malloc(sizeof(int) * COUNT * size),
      *gref = malloc(sizeof(int) * COUNT * size), *asend = malloc(sizeof(int) * size * 3),
      *arecv = malloc(sizeof(int) * size * 3), *aref = malloc(sizeof(int) * size * 3);
  int i, root = size - 1;
  checkAllReduce(comm, MPI_COMM_WORLD, "world allreduce");
  for (i = 0; i < COUNT; ++i) bsend[i] = bref[i] = rank == root ? i * 31 + 5 : -1;
  if (ok(braidBroadcast(bsend, brecv, COUNT, braidInt32, root, comm, NULL), comm, "broadcast")) {
    MPI_Bcast(bref, COUNT, MPI_INT, root, MPI_COMM_WORLD);
    CHECK(memcmp(brecv, bref, sizeof(bref)) == 0, "broadcast differs from MPI_Bcast");
  }
  for (i = 0; i < COUNT; ++i) gsend[i] = rank * 100000 + i;
  if (ok(braidAllGather(gsend, grecv, COUNT, braidInt32, comm, NULL), comm, "allgather")) {
    MPI_Allgather(gsend, COUNT, MPI_INT, gref, COUNT, MPI_INT, MPI_COMM_WORLD);
    CHECK(memcmp(grecv, gref, sizeof(int) * COUNT * size) == 0,
          "allgather differs from MPI_Allgather");
  }
  for (i = 0; i < size * 3; ++i) asend[i] = rank * 1000 + i;
  if (ok(braidAllToAll(asend, arecv, 3, braidInt32, comm, NULL), comm, "alltoall")) {
    MPI_Alltoall(asend, 3, MPI_INT, aref, 3, MPI_INT, MPI_COMM_WORLD);
    CHECK(memcmp(arecv, aref, sizeof(int) * size * 3) == 0, "alltoall differs from MPI_Alltoall");
  }
  free(gsend), free(grecv), free(gref), free(asend), free(arecv), free(aref);
}

/* A braid communicator per color of an MPI split, ranked as the split ranks them. */
static void checkSplit(int rank, int size) {
  MPI_Comm part;
  braidComm_t comm = NULL;
  int partRank, partSize, braidRank = -1, braidSize = -1;
  /* Two colors; the key reverses the order, so split ranks differ from world ranks. */
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &part);
  MPI_Comm_rank(part, &partRank);
  MPI_Comm_size(part, &partSize);
  if (ok(braidCommInitMPI(&comm, part), NULL, "braidCommInitMPI(split)")) {
    braidCommUserRank(comm, &braidRank);
    braidCommCount(comm, &braidSize);
    CHECK(braidRank == partRank && braidSize == partSize,
          "split: braid rank %d of %d, MPI rank %d of %d", braidRank, braidSize, partRank,
          partSize);
    checkAllReduce(comm, part, "split allreduce");
    braidCommDestroy(comm);
  }
  MPI_Comm_free(&part);
}

/* Bad handles: MPI_COMM_NULL (a split's MPI_UNDEFINED), an inter-communicator, NULL comm. */
static void checkBadHandles(int rank, int size) {
  MPI_Comm part, inter;
  braidComm_t comm = (braidComm_t)&comm; /* must come back NULL */
  MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : 0, rank, &part);
  if (rank == 0) {
    CHECK(part == MPI_COMM_NULL, "MPI_UNDEFINED gave a communicator");
    expectError(braidCommInitMPI(&comm, part), braidInvalidArgument, "MPI_COMM_NULL",
                "braidCommInitMPI(MPI_COMM_NULL)");
    CHECK(comm == NULL, "*comm is not NULL after a failure");
  } else {
    /* The others still form their communicator. */
    if (ok(braidCommInitMPI(&comm, part), NULL, "braidCommInitMPI(split without rank 0)")) {
      checkAllReduce(comm, part, "split-without-0 allreduce");
      braidCommDestroy(comm);
    }
    MPI_Comm_free(&part);
  }
  expectError(braidCommInitMPI(NULL, MPI_COMM_WORLD), braidInvalidArgument, "comm is NULL",
              "braidCommInitMPI(NULL)");
  if (size >= 2) {
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &part);
    MPI_Intercomm_create(part, 0, MPI_COMM_WORLD, rank % 2 == 0 ? 1 : 0, 77, &inter);
    expectError(braidCommInitMPI(&comm, inter), braidInvalidArgument, "inter-communicator",
                "braidCommInitMPI(inter-communicator)");
    MPI_Comm_free(&inter);
    MPI_Comm_free(&part);
  }
}

static int runWorld(void) {
  braidComm_t comm = NULL;
  int rank, size, braidRank = -1, braidSize = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (!ok(braidCommInitMPI(&comm, MPI_COMM_WORLD), NULL, "braidCommInitMPI(MPI_COMM_WORLD)")) {
    return 1;
  }
  braidCommUserRank(comm, &braidRank);
  braidCommCount(comm, &braidSize);
  CHECK(braidRank == rank && braidSize == size, "world: braid rank %d of %d, MPI rank %d of %d",
        braidRank, braidSize, rank, size);
  checkWorldCollectives(comm, rank, size);
  { /* where this rank ran: tests on namespace hosts check the placement */
    char ns[64] = "";
    if (readlink("/proc/self/ns/net", ns, sizeof(ns) - 1) > 0) {
      printf("mpi_outside rank %d netns %s\n", rank, ns);
    }
  }
  braidCommDestroy(comm);
  checkSplit(rank, size);
  checkBadHandles(rank, size);
  if (rank == 0 && failures == 0) printf("mpi_outside world: %d ranks ok\n", size);
  return failures != 0;
}

static int runFromEnv(void) {
  braidComm_t comm = NULL;
  int rank, size, braidRank = -1, braidSize = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (!ok(braidCommInitFromEnv(&comm), NULL, "braidCommInitFromEnv")) return 1;
  braidCommUserRank(comm, &braidRank);
  braidCommCount(comm, &braidSize);
  CHECK(braidRank == rank && braidSize == size, "fromenv: braid rank %d of %d, MPI rank %d of %d",
        braidRank, braidSize, rank, size);
  checkAllReduce(comm, MPI_COMM_WORLD, "fromenv allreduce");
  braidCommDestroy(comm);
  if (rank == 0 && failures == 0) printf("mpi_outside fromenv: %d ranks ok\n", size);
  return failures != 0;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "world";
  int status;
  if (strcmp(mode, "uninit") == 0) {
    braidComm_t comm = NULL;
    expectError(braidCommInitMPI(&comm, MPI_COMM_WORLD), braidInvalidUsage, "MPI_Init",
                "braidCommInitMPI before MPI_Init");
    MPI_Init(&argc, &argv);
    MPI_Finalize();
    expectError(braidCommInitMPI(&comm, MPI_COMM_WORLD), braidInvalidUsage, "finalised",
                "braidCommInitMPI after MPI_Finalize");
    if (failures == 0) printf("mpi_outside uninit: ok\n");
    return failures != 0;
  }
  MPI_Init(&argc, &argv);
  if (strcmp(mode, "world") == 0) {
    status = runWorld();
  } else if (strcmp(mode, "fromenv") == 0) {
    status = runFromEnv();
  } else {
    fprintf(stderr, "mpi_outside: unknown mode '%s'\n", mode);
    status = 2;
  }
  MPI_Finalize();
  return status;
}
