/*
 * braid — collective communication for distributed training.
 *
 * The public C API. NCCL-shaped: the same names (braid instead of nccl), the
 * same argument order and the same enum values, so that code written against
 * NCCL ports by renaming. The header is C99-compatible and exposes no C++ and
 * no internal structure: communicators are opaque handles.
 *
 * Host buffers with stream == NULL complete before the call returns, except
 * between braidGroupStart and braidGroupEnd, where the work completes at
 * braidGroupEnd. Every call returns a braidResult_t; braidGetLastError gives
 * a sentence naming the argument, rank or peer at fault. No call aborts the
 * process, and no call waits longer than BRAID_TIMEOUT seconds.
 */
#ifndef BRAID_H_
#define BRAID_H_

#include <limits.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BRAID_MAJOR 0
#define BRAID_MINOR 1
#define BRAID_PATCH 0
#define BRAID_VERSION(X, Y, Z) ((X)*10000 + (Y)*100 + (Z))
#define BRAID_VERSION_CODE BRAID_VERSION(BRAID_MAJOR, BRAID_MINOR, BRAID_PATCH)

/** Passed as `color` to braidCommSplit by ranks that want no new communicator. */
#define BRAID_SPLIT_NOCOLOR (-1)

/**
 * An opaque communicator: one rank's membership in a group of ranks. A handle is a
 * checked token, not an address: a handle that was destroyed or aborted, or never returned
 * by an init call, makes every call return braidInvalidArgument (never a crash).
 */
typedef struct braidComm* braidComm_t;

/** A cudaStream_t for device buffers; NULL for host buffers. */
typedef void* braidStream_t;

/** Produced by braidGetUniqueId on one rank and handed to every other rank. */
#define BRAID_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[BRAID_UNIQUE_ID_BYTES];
} braidUniqueId;

/** Result codes; the same values as NCCL's ncclResult_t. */
typedef enum {
  braidSuccess = 0,
  braidUnhandledCudaError = 1,
  braidSystemError = 2,
  braidInternalError = 3,
  braidInvalidArgument = 4,
  braidInvalidUsage = 5,
  braidRemoteError = 6,
  braidInProgress = 7,
  braidTimeout = 8,
  braidNumResults = 9
} braidResult_t;

/**
 * Element types, numbered from 0 in this order (NCCL's values). The fp8 types are the OCP
 * formats: e4m3 (bias 7, no infinities, S.1111.111 is NaN, largest 448) and e5m2 (bias 15,
 * IEEE-like with infinities). Reductions on them compute each step in fp32 and round once to
 * nearest even, saturating to the largest finite value as NCCL does (an infinity in e5m2
 * input comes out as +-57344); a NaN result is stored as 0x7f.
 */
typedef enum {
  braidInt8 = 0,
  braidUint8 = 1,
  braidInt32 = 2,
  braidUint32 = 3,
  braidInt64 = 4,
  braidUint64 = 5,
  braidFloat16 = 6,
  braidFloat32 = 7,
  braidFloat64 = 8,
  braidBfloat16 = 9,
  braidFloat8e4m3 = 10,
  braidFloat8e5m2 = 11,
  braidNumTypes = 12
} braidDataType_t;

/**
 * Reduction operators. fp16 and bf16 reduce in fp32; avg divides once, at the end.
 * braidRedOpCreatePreMulSum returns further values, from braidNumOps up to braidMaxRedOp.
 */
typedef enum {
  braidSum = 0,
  braidProd = 1,
  braidMax = 2,
  braidMin = 3,
  braidAvg = 4,
  braidNumOps = 5,
  braidMaxRedOp = 0x7fffffff
} braidRedOp_t;

/** Where braidRedOpCreatePreMulSum's scalar lives (NCCL's values). */
typedef enum {
  braidScalarDevice = 0,       /**< a pointer to device memory, read when the call runs */
  braidScalarHostImmediate = 1 /**< a pointer to host memory, read at op creation */
} braidScalarResidence_t;

/* ---- Communicator configuration ----------------------------------------
 * Versioned as NCCL's ncclConfig_t: size, magic and version come first, so a program built
 * against an older braid.h keeps working with a newer library. Start from
 * BRAID_CONFIG_INITIALIZER and set only the fields you need; unset fields take defaults.
 */
#define BRAID_CONFIG_UNDEF_INT INT_MIN
#define BRAID_CONFIG_UNDEF_PTR NULL
#define BRAID_CONFIG_MAGIC 0xb7a1dc0fu

/** Options for braidCommInitRankConfig and braidCommInitRankScalable. */
typedef struct braidConfig_v1 {
  size_t size;          /**< sizeof(braidConfig_t) of the caller's header */
  unsigned int magic;   /**< BRAID_CONFIG_MAGIC */
  unsigned int version; /**< BRAID_VERSION_CODE of the caller's header */
  /** 1 (default): init returns when the communicator is ready. 0: init may return
   *  braidInProgress; poll braidCommGetAsyncError until it stops answering braidInProgress. */
  int blocking;
  /** A name for logs and error messages; NULL: none. */
  const char* commName;
} braidConfig_t;

#define BRAID_CONFIG_INITIALIZER                                                           \
  {                                                                                        \
    sizeof(braidConfig_t), BRAID_CONFIG_MAGIC, BRAID_VERSION_CODE, BRAID_CONFIG_UNDEF_INT, \
        BRAID_CONFIG_UNDEF_PTR                                                             \
  }

/* ---- Library ---------------------------------------------------------- */

/** Writes BRAID_VERSION_CODE of the linked library to *version. */
braidResult_t braidGetVersion(int* version);

/** A short, static description of a result code. Never NULL. */
const char* braidGetErrorString(braidResult_t result);

/**
 * The last error message of `comm` (or of this thread's last call that had no
 * communicator, when comm is NULL): names the argument, rank or peer at fault.
 * Empty when there was none. Valid until the next call on the same thread.
 */
const char* braidGetLastError(braidComm_t comm);

/* ---- Communicators ---------------------------------------------------- */

/**
 * Creates a unique id on the rank that will be rank 0: the address and port of
 * a bootstrap listener started in this process, and a 128-bit random secret
 * that every connection must prove. Call once per communicator.
 */
braidResult_t braidGetUniqueId(braidUniqueId* uniqueId);

/**
 * Joins communicator `commId` as `rank` of `nranks`; collective over all ranks. Inside
 * braidGroupStart/End the join is only queued: *comm is set at once, and the communicator
 * is ready when braidGroupEnd returns, so one thread can create several communicators.
 */
braidResult_t braidCommInitRank(braidComm_t* comm, int nranks, braidUniqueId commId, int rank);

/**
 * braidCommInitRank with options (`config` may be NULL: defaults). With config->blocking
 * = 0 the join runs in the background: the call returns braidInProgress with *comm set,
 * braidCommGetAsyncError(*comm) answers braidInProgress until the join ends (then
 * braidSuccess or its error), and other calls on *comm before then return braidInvalidUsage.
 */
braidResult_t braidCommInitRankConfig(braidComm_t* comm, int nranks, braidUniqueId commId, int rank,
                                      braidConfig_t* config);

/**
 * braidCommInitRankConfig for very large jobs, as NCCL's: every rank passes the same
 * `nId` >= 1 unique ids. braid's bootstrap has one root, so the ranks join through
 * commIds[0]; the others are accepted and unused.
 */
braidResult_t braidCommInitRankScalable(braidComm_t* newcomm, int nranks, int myrank, int nId,
                                        braidUniqueId* commIds, braidConfig_t* config);

/**
 * Creates `ndev` communicators in this process, one per rank (host ranks run on
 * threads; `devlist` names CUDA devices and may be NULL for host-only use).
 * Drive them from one thread inside braidGroupStart/End, as with NCCL.
 */
braidResult_t braidCommInitAll(braidComm_t* comms, int ndev, const int* devlist);

/**
 * Joins the communicator described by the launcher's environment: braidrun
 * (BRAID_RANK, BRAID_NRANKS, BRAID_ROOT), torchrun (RANK, WORLD_SIZE,
 * MASTER_ADDR, MASTER_PORT), OpenMPI (OMPI_COMM_WORLD_*) or Slurm (SLURM_*).
 * When no root address is given (BRAID_ROOT, MASTER_ADDR) and MPI is initialised
 * in this process (MPI_Init before this call; braid finds it at run time and
 * never links it), the unique id travels by MPI_Bcast over MPI_COMM_WORLD, ranks
 * in MPI order: works with any launcher of that MPI, across hosts too (call it
 * then from a thread that may call MPI). docs/MPI.md has the details.
 */
braidResult_t braidCommInitFromEnv(braidComm_t* comm);

/**
 * A broadcast over the caller's own group of processes (MPI_Bcast, a framework's
 * store): copies `bytes` bytes at `buffer` on the group's rank 0 into `buffer` on
 * every other rank. Returns 0 on success, anything else on failure.
 */
typedef int (*braidBroadcastFn_t)(void* buffer, size_t bytes, void* context);

/**
 * Joins a communicator as `rank` of `nranks`, the unique id carried by the caller's
 * broadcast: rank 0 creates it (as braidGetUniqueId) and `broadcast(..., context)`
 * hands it, with whether creating it worked, to every rank, so no rank waits for an
 * id that never comes. Collective: every rank of the group calls it with the same
 * `nranks`, in the same order as its other collective calls on that group.
 * braid_mpi.h's braidCommInitMPI is this call with MPI_Bcast.
 */
braidResult_t braidCommInitRankBroadcast(braidComm_t* comm, int nranks, int rank,
                                         braidBroadcastFn_t broadcast, void* context);

/**
 * Records `message` as this thread's last error (what braidGetLastError(NULL)
 * returns) and returns `result`: for companions such as braid_mpi.h that check
 * their own arguments before they call braid. NULL records an empty message.
 */
braidResult_t braidSetLastError(braidResult_t result, const char* message);

/**
 * Reads the logging variables (BRAID_DEBUG, BRAID_DEBUG_FILE) again: lines logged after it
 * follow their current values. They are otherwise read once, at the first line logged.
 */
void braidResetDebugInit(void);

/**
 * Splits `comm` into disjoint communicators, one per `color`, ranked by `key`
 * (ties by old rank). Ranks passing BRAID_SPLIT_NOCOLOR get *newcomm = NULL.
 * Collective over all ranks of `comm`.
 */
braidResult_t braidCommSplit(braidComm_t comm, int color, int key, braidComm_t* newcomm);

/**
 * Creates a communicator of the ranks of `comm` not listed in `excludeRanks`
 * (old ranks, any order, `excludeCount` of them), ranked in their old order.
 * Meant for recovery: after a rank died or hung and a call returned
 * braidRemoteError or braidTimeout, every survivor calls it with the same
 * list; it does not use the broken communicator's connections, and each of
 * its two phases (agreeing on a new id, joining it) ends within BRAID_TIMEOUT
 * (+2 s) with an error naming the rank that did not come. Excluded ranks need not
 * call it; those that do get *newcomm = NULL. Afterwards, release `comm`
 * with braidCommAbort (or braidCommDestroy).
 */
braidResult_t braidCommShrink(braidComm_t comm, const int* excludeRanks, int excludeCount,
                              braidComm_t* newcomm);

/** braidCommShrinkConfig flags (NCCL's values). */
#define BRAID_SHRINK_DEFAULT 0x00 /**< leave the parent's work alone */
#define BRAID_SHRINK_ABORT 0x01   /**< first end the parent's work in flight on this rank */

/**
 * braidCommSplit with options for the new communicator. `config` NULL: the new communicator
 * takes the parent's (its blocking mode); otherwise as braidCommInitRankConfig (unset fields
 * take the defaults, not the parent's). With blocking
 * = 0 the ranks agree on the split before the call returns and the new communicator is joined
 * in the background: the call returns braidInProgress with *newcomm set, finished through
 * braidCommGetAsyncError(*newcomm). braidCommSplit is this call with a blocking config.
 */
braidResult_t braidCommSplitConfig(braidComm_t comm, int color, int key, braidComm_t* newcomm,
                                   braidConfig_t* config);

/**
 * braidCommShrink with options and flags (NCCL's argument order). `config` as in
 * braidCommSplitConfig (NULL: the parent's). `shrinkFlags` BRAID_SHRINK_DEFAULT leaves the
 * parent as it is (a healthy parent stays usable); BRAID_SHRINK_ABORT first fails the parent
 * on this rank (calls in flight on it return an error, at once, here and on its peers, and so
 * do later ones) and waits, up to BRAID_TIMEOUT, for them to leave: for survivors whose
 * threads are stuck in a call on the parent. braidCommShrink is this call with a blocking
 * config and BRAID_SHRINK_DEFAULT.
 */
braidResult_t braidCommShrinkConfig(braidComm_t comm, const int* excludeRanks, int excludeCount,
                                    braidComm_t* newcomm, braidConfig_t* config, int shrinkFlags);

/**
 * Creates the unique id with which new ranks join `comm` through braidCommGrow. Called by one
 * rank of `comm` (the coordinator), which hands the id to the new ranks (out of band, as a
 * braidGetUniqueId id) and passes it to its own braidCommGrow. One id at a time: a second
 * call before the grow has used the first returns braidInvalidUsage. The id serves for
 * BRAID_TIMEOUT seconds after this call.
 */
braidResult_t braidCommGetUniqueId(braidComm_t comm, braidUniqueId* uniqueId);

/**
 * Grows `comm` into a new communicator of `nRanks` ranks (elastic training), as NCCL's
 * ncclCommGrow. Collective over every rank of `comm` and every new rank:
 *  - the coordinator: braidCommGrow(comm, nRanks, &id, -1, &newcomm, config), `id` from its
 *    braidCommGetUniqueId;
 *  - the other ranks of comm: braidCommGrow(comm, nRanks, NULL, -1, &newcomm, config);
 *  - each new rank: braidCommGrow(NULL, nRanks, &id, rank, &newcomm, config), with `rank` one
 *    of count(comm)..nRanks-1, each taken once.
 * Existing ranks keep their rank. `config` NULL: existing ranks take their parent's options,
 * new ranks the defaults; blocking = 0 as in braidCommSplitConfig. `comm` stays usable.
 * Wrong input is braidInvalidArgument naming it (nRanks not above the current size, an id
 * not from braidCommGetUniqueId, a rank that is not a new one, ranks that disagree); a new
 * rank that never comes ends the grow on every rank within BRAID_TIMEOUT with an error
 * naming the missing ranks.
 */
braidResult_t braidCommGrow(braidComm_t comm, int nRanks, const braidUniqueId* uniqueId, int rank,
                            braidComm_t* newcomm, braidConfig_t* config);

/**
 * Finishes this rank's outstanding work (device calls queued on streams included) and
 * marks the communicator finalized: later collectives, splits and a second finalize return
 * braidInvalidUsage; queries and braidCommDestroy remain. Returns the communicator's sticky
 * error when it has failed.
 */
braidResult_t braidCommFinalize(braidComm_t comm);

/**
 * Releases the communicator and everything it owns. NULL is accepted. Calls still inside
 * it from other threads are waited for (up to BRAID_TIMEOUT, then aborted); a second
 * destroy returns braidInvalidArgument.
 */
braidResult_t braidCommDestroy(braidComm_t comm);

/**
 * Aborts all work on `comm` (safe from another thread: waits return with an
 * error), tells the peers, and releases the communicator once the calls inside it
 * have returned. Later calls with the handle return braidInvalidArgument.
 */
braidResult_t braidCommAbort(braidComm_t comm);

/**
 * Ends `comm`'s work in flight on every rank and refuses new work, but keeps the handle
 * (for braidCommShrink, braidCommDestroy and queries): calls in flight and later calls
 * return braidInvalidUsage, and peers learn of it as of any failure. `revokeFlags` must be
 * 0 (NCCL_REVOKE_DEFAULT).
 */
braidResult_t braidCommRevoke(braidComm_t comm, int revokeFlags);

/**
 * The communicator's sticky error: braidSuccess while it is healthy, braidInProgress while
 * a non-blocking init still runs.
 */
braidResult_t braidCommGetAsyncError(braidComm_t comm, braidResult_t* asyncError);

/** Number of ranks in `comm`. */
braidResult_t braidCommCount(braidComm_t comm, int* count);

/** This rank's index in `comm`. */
braidResult_t braidCommUserRank(braidComm_t comm, int* rank);

/**
 * The CUDA device of `comm`: its braidCommInitAll devlist entry, or the device of its first
 * call on device buffers (braid binds a device at first use); -1 while it has none.
 */
braidResult_t braidCommCuDevice(braidComm_t comm, int* device);

/**
 * The host that rank `rank` of `comm` runs on, as an index: hosts are numbered 0, 1, ... in
 * the order of their lowest rank, so every rank gets the same answer. Ranks with one host
 * share memory (BRAID_HOST_ID overrides the detection).
 */
braidResult_t braidCommRankHost(braidComm_t comm, int rank, int* host);

/* ---- Collectives -------------------------------------------------------
 * `count` is the per-rank element count: for AllGather the send count, for
 * ReduceScatter the receive count, for AllToAll the count exchanged with each
 * peer. In-place works as in NCCL: sendbuff == recvbuff, or, for AllGather and
 * ReduceScatter, the rank's own slice of the larger buffer.
 */

braidResult_t braidAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                             braidDataType_t datatype, braidRedOp_t op, braidComm_t comm,
                             braidStream_t stream);

braidResult_t braidBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                             braidDataType_t datatype, int root, braidComm_t comm,
                             braidStream_t stream);

/** In-place broadcast (NCCL's legacy form): braidBroadcast(buff, buff, ...). */
braidResult_t braidBcast(void* buff, size_t count, braidDataType_t datatype, int root,
                         braidComm_t comm, braidStream_t stream);

braidResult_t braidReduce(const void* sendbuff, void* recvbuff, size_t count,
                          braidDataType_t datatype, braidRedOp_t op, int root, braidComm_t comm,
                          braidStream_t stream);

braidResult_t braidAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                             braidDataType_t datatype, braidComm_t comm, braidStream_t stream);

braidResult_t braidReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                 braidDataType_t datatype, braidRedOp_t op, braidComm_t comm,
                                 braidStream_t stream);

braidResult_t braidAllToAll(const void* sendbuff, void* recvbuff, size_t count,
                            braidDataType_t datatype, braidComm_t comm, braidStream_t stream);

/** Counts and displacements are in elements, one entry per peer. */
braidResult_t braidAllToAllv(const void* sendbuff, const size_t sendcounts[],
                             const size_t sdispls[], void* recvbuff, const size_t recvcounts[],
                             const size_t rdispls[], braidDataType_t datatype, braidComm_t comm,
                             braidStream_t stream);

braidResult_t braidGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                          braidDataType_t datatype, int root, braidComm_t comm,
                          braidStream_t stream);

braidResult_t braidScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                           braidDataType_t datatype, int root, braidComm_t comm,
                           braidStream_t stream);

braidResult_t braidSend(const void* sendbuff, size_t count, braidDataType_t datatype, int peer,
                        braidComm_t comm, braidStream_t stream);

braidResult_t braidRecv(void* recvbuff, size_t count, braidDataType_t datatype, int peer,
                        braidComm_t comm, braidStream_t stream);

/** Returns once every rank of `comm` has entered the barrier. */
braidResult_t braidBarrier(braidComm_t comm, braidStream_t stream);

/* ---- Reduction operators and memory ------------------------------------ */

/**
 * Creates a reduction operator for `comm` that multiplies each rank's input by `*scalar`
 * (of `datatype`) and sums: sum_r(scalar_r * x_r), with the scalar applied in the element
 * type, as NCCL does. `residence` braidScalarHostImmediate reads the scalar now; device
 * scalars need the device path and are refused on host-only communicators. *op is valid
 * only on `comm` (until braidRedOpDestroy) and only with `datatype`.
 */
braidResult_t braidRedOpCreatePreMulSum(braidRedOp_t* op, void* scalar, braidDataType_t datatype,
                                        braidScalarResidence_t residence, braidComm_t comm);

/** Releases an operator of braidRedOpCreatePreMulSum; built-in operators are refused. */
braidResult_t braidRedOpDestroy(braidRedOp_t op, braidComm_t comm);

/**
 * Allocates `size` bytes suited to braid's transports: page-aligned host memory (braid's
 * host executor stages through its own buffers, so no special memory is needed).
 * Free with braidMemFree.
 */
braidResult_t braidMemAlloc(void** ptr, size_t size);

/** Frees memory from braidMemAlloc; NULL is accepted. */
braidResult_t braidMemFree(void* ptr);

/**
 * Registers a buffer with `comm` for later calls, as NCCL's user-buffer registration. braid's
 * transports copy through their own buffers, so registration is checked and recorded but
 * changes nothing: calls work the same with or without it. *handle is for
 * braidCommDeregister.
 */
braidResult_t braidCommRegister(const braidComm_t comm, void* buff, size_t size, void** handle);

/** Releases a registration of braidCommRegister on the same communicator. */
braidResult_t braidCommDeregister(const braidComm_t comm, void* handle);

/* ---- Groups ------------------------------------------------------------
 * Calls between braidGroupStart and braidGroupEnd are queued and run together
 * at braidGroupEnd, in one progress loop: send/recv pairs in one group never
 * deadlock, and one thread can drive several communicators (braidCommInitAll).
 * Groups nest; the outermost braidGroupEnd runs the work. As in NCCL, a call rejected
 * inside a group fails the outermost braidGroupEnd with that call's error, and none of the
 * group's calls run.
 */
braidResult_t braidGroupStart(void);
braidResult_t braidGroupEnd(void);

#define BRAID_SIM_INFO_MAGIC 0xb7a151e0u
#define BRAID_UNDEF_FLOAT -1.0f

/** What braidGroupSimulateEnd reports; versioned like braidConfig_t (size, magic, version
 *  first). Start from BRAID_SIM_INFO_INITIALIZER. */
typedef struct braidSimInfo_v1 {
  size_t size;          /**< sizeof(braidSimInfo_t) of the caller's header */
  unsigned int magic;   /**< BRAID_SIM_INFO_MAGIC */
  unsigned int version; /**< BRAID_VERSION_CODE of the caller's header */
  float estimatedTime;  /**< out: microseconds the group's calls are estimated to take */
} braidSimInfo_t;
#define BRAID_SIM_INFO_INITIALIZER \
  { sizeof(braidSimInfo_t), BRAID_SIM_INFO_MAGIC, BRAID_VERSION_CODE, BRAID_UNDEF_FLOAT }

/**
 * Ends the group like braidGroupEnd, but instead of running the calls queued in it, sets
 * simInfo->estimatedTime to the cost model's estimate of how long they would take (in
 * microseconds, summed over the calls; each collective with the algorithm braid would pick).
 * The outermost end drops the calls; communicator inits in the group still run. Nested, it
 * ends one level and the calls stay queued. braidInvalidArgument for a NULL simInfo or one
 * not set up with BRAID_SIM_INFO_INITIALIZER; braidInvalidUsage outside a group.
 */
braidResult_t braidGroupSimulateEnd(braidSimInfo_t* simInfo);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BRAID_H_ */
