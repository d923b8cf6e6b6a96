/* An NCCL program, compiled against NCCL's own nccl.h and linked with braid's libnccl.so.2,
 * run on host buffers under braidrun (BRAID_RANK / BRAID_NRANKS give the rank and size;
 * rank 0 hands the unique id to the others through the file named by argv[1]).
 * Every collective and point-to-point call is checked against values computed here, then
 * bad input is checked to fail with NCCL's result codes and a sentence. Exit 0 on success. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <nccl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures = 0;
static int rank = -1;

#define CHECK(cond, ...)                                     \
  do {                                                       \
    if (!(cond)) {                                           \
      fprintf(stderr, "rank %d: line %d: ", rank, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                          \
      fputc('\n', stderr);                                   \
      ++failures;                                            \
    }                                                        \
  } while (0)

#define OK(call, comm)                                                      \
  do {                                                                      \
    ncclResult_t r_ = (call);                                               \
    CHECK(r_ == ncclSuccess, "%s -> %s: %s", #call, ncclGetErrorString(r_), \
          ncclGetLastError(comm));                                          \
  } while (0)

/* Rank `writer` writes *id to `path`; every other rank reads it from there. */
static void shareIdFrom(ncclUniqueId* id, const char* path, int writer) {
  if (rank == writer) {
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE* f = fopen(tmp, "wb");
    if (f == NULL || fwrite(id, sizeof(*id), 1, f) != 1 || fclose(f) != 0 || rename(tmp, path)) {
      fprintf(stderr, "rank %d: cannot write %s\n", rank, path);
      exit(1);
    }
    return;
  }
  for (int tries = 0; tries < 3000; ++tries) {
    FILE* f = fopen(path, "rb");
    if (f != NULL) {
      size_t got = fread(id, sizeof(*id), 1, f);
      fclose(f);
      if (got == 1) return;
    }
    usleep(10000);
  }
  fprintf(stderr, "rank %d: no unique id in %s\n", rank, path);
  exit(1);
}

static void shareId(ncclUniqueId* id, const char* path) { shareIdFrom(id, path, 0); }

/* The value rank r contributes at index i. */
static int32_t input(int r, size_t i) { return (int32_t)(r * 1000 + (int)i); }

static void collectives(ncclComm_t comm, int n) {
  enum { kCount = 37 };
  int32_t send[kCount], recv[kCount * 8], expect;
  float fsend[kCount], frecv[kCount];
  for (size_t i = 0; i < kCount; ++i) {
    send[i] = input(rank, i);
    fsend[i] = (float)(rank + 1);
  }

  OK(ncclAllReduce(send, recv, kCount, ncclInt32, ncclSum, comm, NULL), comm);
  for (size_t i = 0; i < kCount; ++i) {
    expect = 0;
    for (int r = 0; r < n; ++r) expect += input(r, i);
    CHECK(recv[i] == expect, "allreduce sum [%zu] = %d, expected %d", i, recv[i], expect);
  }
  OK(ncclAllReduce(fsend, frecv, kCount, ncclFloat32, ncclAvg, comm, NULL), comm);
  CHECK(frecv[3] == (float)(n + 1) / 2, "allreduce avg = %f", frecv[3]);
  OK(ncclAllReduce(send, recv, kCount, ncclInt32, ncclMax, comm, NULL), comm);
  CHECK(recv[5] == input(n - 1, 5), "allreduce max = %d", recv[5]);
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 32, 0)
  /* Per-call configuration: resource knobs are accepted; a forced algorithm is refused. */
  {
    ncclCollConfig_t cc = NCCL_COLLCONFIG_INITIALIZER;
    cc.minCTAs = 2;
    OK(ncclAllReduceConfig(send, recv, kCount, ncclInt32, ncclMin, comm, NULL, &cc), comm);
    CHECK(recv[5] == input(0, 5), "allreduce config min = %d", recv[5]);
    cc.algSelection = "ring";
    ncclResult_t forced =
        ncclAllReduceConfig(send, recv, kCount, ncclInt32, ncclMin, comm, NULL, &cc);
    CHECK(forced == ncclInvalidUsage, "forced algorithm -> %s", ncclGetErrorString(forced));
    CHECK(strstr(ncclGetLastError(comm), "algSelection") != NULL, "last error: %s",
          ncclGetLastError(comm));
  }
#endif

  memcpy(recv, send, sizeof(send));
  OK(ncclBroadcast(send, recv, kCount, ncclInt32, 1 % n, comm, NULL), comm);
  CHECK(recv[7] == input(1 % n, 7), "broadcast [7] = %d", recv[7]);
  int32_t bcast[kCount];
  memcpy(bcast, send, sizeof(send));
  OK(ncclBcast(bcast, kCount, ncclInt32, 0, comm, NULL), comm);
  CHECK(bcast[9] == input(0, 9), "bcast [9] = %d", bcast[9]);

  memset(recv, 0, sizeof(recv));
  OK(ncclReduce(send, recv, kCount, ncclInt32, ncclMin, n - 1, comm, NULL), comm);
  if (rank == n - 1) CHECK(recv[2] == input(0, 2), "reduce min = %d", recv[2]);

  OK(ncclAllGather(send, recv, kCount, ncclInt32, comm, NULL), comm);
  for (int r = 0; r < n; ++r) {
    CHECK(recv[r * kCount + 4] == input(r, 4), "allgather block %d = %d", r, recv[r * kCount + 4]);
  }

  int32_t big[kCount * 8];
  for (int i = 0; i < kCount * n; ++i) big[i] = input(rank, (size_t)i);
  OK(ncclReduceScatter(big, recv, kCount, ncclInt32, ncclSum, comm, NULL), comm);
  expect = 0;
  for (int r = 0; r < n; ++r) expect += input(r, (size_t)(rank * kCount + 1));
  CHECK(recv[1] == expect, "reducescatter [1] = %d, expected %d", recv[1], expect);

  OK(ncclAlltoAll(big, recv, kCount, ncclInt32, comm, NULL), comm);
  for (int r = 0; r < n; ++r) {
    CHECK(recv[r * kCount] == input(r, (size_t)(rank * kCount)), "alltoall from %d = %d", r,
          recv[r * kCount]);
  }

  memset(recv, 0, sizeof(recv));
  OK(ncclGather(send, recv, kCount, ncclInt32, 0, comm, NULL), comm);
  if (rank == 0) {
    for (int r = 0; r < n; ++r) CHECK(recv[r * kCount + 3] == input(r, 3), "gather from %d", r);
  }
  OK(ncclScatter(big, recv, kCount, ncclInt32, n - 1, comm, NULL), comm);
  CHECK(recv[0] == input(n - 1, (size_t)(rank * kCount)), "scatter [0] = %d", recv[0]);

  /* A ring shift in one group. */
  int32_t fromLeft[kCount];
  OK(ncclGroupStart(), comm);
  OK(ncclSend(send, kCount, ncclInt32, (rank + 1) % n, comm, NULL), comm);
  OK(ncclRecv(fromLeft, kCount, ncclInt32, (rank + n - 1) % n, comm, NULL), comm);
  OK(ncclGroupEnd(), comm);
  CHECK(fromLeft[6] == input((rank + n - 1) % n, 6), "send/recv ring = %d", fromLeft[6]);

  /* A pre-multiplied sum: sum_r((r + 1) * x_r). */
  float scalar = (float)(rank + 1);
  ncclRedOp_t premul;
  OK(ncclRedOpCreatePreMulSum(&premul, &scalar, ncclFloat32, ncclScalarHostImmediate, comm), comm);
  OK(ncclAllReduce(fsend, frecv, kCount, ncclFloat32, premul, comm, NULL), comm);
  float fexpect = 0;
  for (int r = 0; r < n; ++r) fexpect += (float)((r + 1) * (r + 1));
  CHECK(frecv[0] == fexpect, "premulsum = %f, expected %f", frecv[0], fexpect);
  OK(ncclRedOpDestroy(premul, comm), comm);

  /* fp8 (e4m3, e5m2) by NCCL's enum values: 1.0 and 1.5 from every rank. Codes written out
   * from the OCP formats: e4m3 1.0 = 0x38, 1.5 = 0x3c; e5m2 1.0 = 0x3c, 1.5 = 0x3e. */
  {
    uint8_t f8send[2] = {0x38, 0x3c}, f8recv[2] = {0, 0};
    OK(ncclAllReduce(f8send, f8recv, 2, ncclFloat8e4m3, ncclSum, comm, NULL), comm);
    /* n <= 4: n * 1.0 and n * 1.5 (1.5, 3, 4.5, 6) are exact in e4m3. */
    static const uint8_t e4m3Ones[] = {0, 0x38, 0x40, 0x44, 0x48};
    static const uint8_t e4m3Halves[] = {0, 0x3c, 0x44, 0x49, 0x4c};
    if (n <= 4) {
      CHECK(f8recv[0] == e4m3Ones[n] && f8recv[1] == e4m3Halves[n],
            "fp8 e4m3 allreduce = 0x%02x 0x%02x", f8recv[0], f8recv[1]);
    }
    uint8_t e5send[1] = {0x3c}, e5recv[1] = {0};
    OK(ncclAllReduce(e5send, e5recv, 1, ncclFloat8e5m2, ncclMax, comm, NULL), comm);
    CHECK(e5recv[0] == 0x3c, "fp8 e5m2 allreduce max = 0x%02x", e5recv[0]);
  }

  /* A simulated group: an estimate, and nothing runs (recv keeps its contents). */
  {
    enum { kBig = 1 << 20 };
    int32_t* big = calloc(kBig, sizeof(int32_t));
    int32_t* sim = malloc(kBig * sizeof(int32_t));
    for (int i = 0; i < kBig; ++i) sim[i] = -7;
    ncclSimInfo_t small = NCCL_SIM_INFO_INITIALIZER, large = NCCL_SIM_INFO_INITIALIZER;
    OK(ncclGroupStart(), comm);
    OK(ncclAllReduce(big, sim, 1, ncclInt32, ncclSum, comm, NULL), comm);
    OK(ncclGroupSimulateEnd(&small), comm);
    OK(ncclGroupStart(), comm);
    OK(ncclAllReduce(big, sim, kBig, ncclInt32, ncclSum, comm, NULL), comm);
    OK(ncclGroupSimulateEnd(&large), comm);
    CHECK(small.estimatedTime > 0 && large.estimatedTime > small.estimatedTime,
          "simulated times %f, %f", small.estimatedTime, large.estimatedTime);
    CHECK(sim[0] == -7 && sim[kBig - 1] == -7, "a simulated group ran");
    free(big);
    free(sim);
  }

  /* Registration is accepted (and changes nothing). */
  void* handle = NULL;
  OK(ncclCommRegister(comm, recv, sizeof(recv), &handle), comm);
  OK(ncclCommDeregister(comm, handle), comm);

  /* Split by parity, keyed in reverse. */
  ncclComm_t half = NULL;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  OK(ncclCommSplit(comm, rank % 2, -rank, &half, &config), comm);
  int halfCount = 0, halfRank = -1;
  OK(ncclCommCount(half, &halfCount), half);
  OK(ncclCommUserRank(half, &halfRank), half);
  CHECK(halfCount == (n + 1 - rank % 2) / 2, "split count %d", halfCount);
  CHECK(halfRank == halfCount - 1 - rank / 2, "split rank %d", halfRank);
  int32_t one = 1, total = 0;
  OK(ncclAllReduce(&one, &total, 1, ncclInt32, ncclSum, half, NULL), half);
  CHECK(total == halfCount, "split allreduce %d", total);
  OK(ncclCommDestroy(half), NULL);
}

/* Polls *comm, made with a non-blocking config (the call answered `made`), until it is ready.
 * A pointer, since C leaves the order of a call's arguments open. */
static void settle(ncclResult_t made, const ncclComm_t* where) {
  ncclComm_t comm = *where;
  CHECK(made == ncclSuccess || made == ncclInProgress, "-> %s: %s", ncclGetErrorString(made),
        ncclGetLastError(comm));
  ncclResult_t state = made;
  while (comm != NULL && state == ncclInProgress) OK(ncclCommGetAsyncError(comm, &state), comm);
  CHECK(state == ncclSuccess, "state %s: %s", ncclGetErrorString(state), ncclGetLastError(comm));
}

/* Sums `r + 1` over the ranks of `comm`, which holds the old ranks first..last. */
static void checkSum(ncclComm_t comm, int first, int last, const char* what) {
  int32_t mine = rank + 1, total = 0, expect = 0;
  for (int r = first; r <= last; ++r) expect += r + 1;
  OK(ncclAllReduce(&mine, &total, 1, ncclInt32, ncclSum, comm, NULL), comm);
  CHECK(total == expect, "%s allreduce %d, expected %d", what, total, expect);
}

/* Shrink with a non-blocking config; grow back with a new rank (NCCL 2.29+ headers); shrink
 * with NCCL_SHRINK_ABORT, which ends the parent. */
static void shrinkAndGrow(ncclComm_t comm, int n, const char* idPath) {
  ncclConfig_t nonBlocking = NCCL_CONFIG_INITIALIZER;
  nonBlocking.blocking = 0;
  int last = n - 1;
  ncclComm_t shrunk = NULL;
  ncclResult_t r = ncclCommShrink(comm, &last, 1, &shrunk, &nonBlocking, NCCL_SHRINK_DEFAULT);
  if (rank == last) {
    CHECK(r == ncclSuccess && shrunk == NULL, "excluded rank's shrink -> %s",
          ncclGetErrorString(r));
  } else {
    settle(r, &shrunk);
    checkSum(shrunk, 0, n - 2, "shrunk");
  }
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 29, 0)
  /* The excluded rank comes back as a new rank of a grown communicator. */
  char growPath[4096];
  snprintf(growPath, sizeof(growPath), "%s.grow", idPath);
  ncclUniqueId growId;
  memset(&growId, 0, sizeof(growId));
  if (rank == 0) OK(ncclCommGetUniqueId(shrunk, &growId), shrunk);
  shareIdFrom(&growId, growPath, 0);
  ncclComm_t grown = NULL;
  if (rank == last) {
    OK(ncclCommGrow(NULL, n, &growId, last, &grown, NULL), NULL);
  } else { /* a NULL config: shrunk's non-blocking mode */
    settle(ncclCommGrow(shrunk, n, rank == 0 ? &growId : NULL, -1, &grown, NULL), &grown);
  }
  int grownRank = -1;
  OK(ncclCommUserRank(grown, &grownRank), grown);
  CHECK(grownRank == rank, "grown rank %d", grownRank);
  checkSum(grown, 0, n - 1, "grown");
  OK(ncclCommDestroy(grown), NULL);
  /* A new rank that names an existing rank is refused. */
  ncclComm_t refused = NULL;
  r = ncclCommGrow(NULL, n + 1, &growId, 0, &refused, NULL);
  CHECK(r == ncclInvalidArgument && strstr(ncclGetLastError(NULL), "not a new rank") != NULL,
        "grow as rank 0 -> %s: %s", ncclGetErrorString(r), ncclGetLastError(NULL));
#else
  (void)idPath;
#endif
  if (shrunk != NULL) OK(ncclCommDestroy(shrunk), NULL);

  /* NCCL_SHRINK_ABORT on a copy of comm: the survivors go on, the copy takes no more work. */
  ncclComm_t copy = NULL;
  settle(ncclCommSplit(comm, 0, rank, &copy, NULL), &copy); /* comm's non-blocking mode */
  int first = 0;
  ncclComm_t tail = NULL;
  settle(ncclCommShrink(copy, &first, 1, &tail, NULL, NCCL_SHRINK_ABORT), &tail);
  if (rank != 0) checkSum(tail, 1, n - 1, "shrunk after abort");
  int32_t one = 1, sum = 0;
  r = ncclAllReduce(&one, &sum, 1, ncclInt32, ncclSum, copy, NULL);
  CHECK(r != ncclSuccess, "the aborted parent took an all-reduce");
  ncclComm_t none = NULL;
  r = ncclCommShrink(comm, &first, 1, &none, NULL, 5);
  CHECK(r == ncclInvalidArgument && none == NULL, "shrinkFlags 5 -> %s", ncclGetErrorString(r));
  if (tail != NULL) OK(ncclCommDestroy(tail), NULL);
  OK(ncclCommAbort(copy), NULL);
}

static void badInput(ncclComm_t comm) {
  int32_t buf[4] = {0};
  ncclResult_t r = ncclAllReduce(buf, buf, 4, (ncclDataType_t)42, ncclSum, comm, NULL);
  CHECK(r == ncclInvalidArgument, "bad datatype -> %s", ncclGetErrorString(r));
  CHECK(strstr(ncclGetLastError(comm), "datatype") != NULL, "last error: %s",
        ncclGetLastError(comm));
  r = ncclAllReduce(buf, buf, 4, ncclInt32, ncclSum, NULL, NULL);
  CHECK(r == ncclInvalidArgument, "NULL comm -> %s", ncclGetErrorString(r));
  void* window = NULL;
  r = ncclCommWindowRegister(comm, buf, sizeof(buf), (ncclWindow_t*)&window, 0);
  CHECK(r == ncclInvalidUsage, "window register -> %s", ncclGetErrorString(r));
  CHECK(strstr(ncclGetLastError(comm), "not available") != NULL, "last error: %s",
        ncclGetLastError(comm));
  /* ncclGroupSimulateEnd with no struct, or one not from NCCL_SIM_INFO_INITIALIZER. */
  OK(ncclGroupStart(), comm);
  r = ncclGroupSimulateEnd(NULL);
  CHECK(r == ncclInvalidArgument, "simulate NULL -> %s", ncclGetErrorString(r));
  CHECK(strstr(ncclGetLastError(comm), "simInfo") != NULL, "last error: %s",
        ncclGetLastError(comm));
  ncclSimInfo_t badSim = NCCL_SIM_INFO_INITIALIZER;
  badSim.magic = 0;
  r = ncclGroupSimulateEnd(&badSim);
  CHECK(r == ncclInvalidArgument, "simulate bad magic -> %s", ncclGetErrorString(r));
  OK(ncclGroupEnd(), comm);
  /* A config not made by NCCL_CONFIG_INITIALIZER. */
  ncclConfig_t junk;
  memset(&junk, 0, sizeof(junk));
  ncclComm_t other = NULL;
  r = ncclCommSplit(comm, 0, 0, &other, &junk);
  CHECK(r == ncclInvalidArgument, "split with a junk config -> %s", ncclGetErrorString(r));
  CHECK(strstr(ncclGetLastError(comm), "NCCL_CONFIG_INITIALIZER") != NULL, "last error: %s",
        ncclGetLastError(comm));
}

int main(int argc, char** argv) {
  const char* r = getenv("BRAID_RANK");
  const char* nr = getenv("BRAID_NRANKS");
  if (argc != 2 || r == NULL || nr == NULL) {
    fprintf(stderr, "usage: braidrun -n N %s ID_FILE\n", argv[0]);
    return 2;
  }
  rank = atoi(r);
  const int n = atoi(nr);
  /* Proof that this NCCL program runs on braid, not on NVIDIA's library. */
  CHECK(dlsym(RTLD_DEFAULT, "braidCommInitRank") != NULL, "libnccl.so.2 is not braid's");
  int version = 0;
  OK(ncclGetVersion(&version), NULL);
  CHECK(version >= NCCL_VERSION(2, 14, 0), "version %d", version);

  ncclUniqueId id;
  if (rank == 0) OK(ncclGetUniqueId(&id), NULL);
  shareId(&id, argv[1]);

  /* Non-blocking init, finished through ncclCommGetAsyncError, as NCCL's docs show. */
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t comm = NULL;
  ncclResult_t init = ncclCommInitRankConfig(&comm, n, id, rank, &config);
  CHECK(init == ncclSuccess || init == ncclInProgress, "init -> %s: %s", ncclGetErrorString(init),
        ncclGetLastError(NULL));
  ncclResult_t state = ncclInProgress;
  while (comm != NULL && state == ncclInProgress) OK(ncclCommGetAsyncError(comm, &state), comm);
  CHECK(state == ncclSuccess, "init state %s", ncclGetErrorString(state));
  if (failures > 0) return 1;
  int count = 0, me = -1, device = -2;
  OK(ncclCommCount(comm, &count), comm);
  OK(ncclCommUserRank(comm, &me), comm);
  OK(ncclCommCuDevice(comm, &device), comm);
  CHECK(count == n && me == rank && device == -1, "count %d rank %d device %d", count, me, device);

  collectives(comm, n);
  shrinkAndGrow(comm, n, argv[1]);
  badInput(comm);

  OK(ncclCommFinalize(comm), comm);
  OK(ncclCommDestroy(comm), NULL);
  if (failures == 0)
    printf("rank %d: all NCCL calls matched (NCCL header %d)\n", rank, NCCL_VERSION_CODE);
  return failures == 0 ? 0 : 1;
}
