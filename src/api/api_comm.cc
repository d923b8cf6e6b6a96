// Communicator lifecycle: unique ids, init (by id, all-in-process, from the
// launcher's environment), finalize, destroy, abort and queries. Split, shrink and grow:
// api_elastic.cc.
#include <arpa/inet.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "api/broadcast_init.h"
#include "api/comm_options.h"
#include "api/guard.h"
#include "api/rank_threads.h"
#include "bootstrap/launch_env.h"
#include "bootstrap/mpi_world.h"
#include "bootstrap/root_server.h"
#include "comm/device_path.h"
#include "comm/device_proxy/proxy_hooks.h"
#include "core/config.h"
#include "core/log.h"

using braid::Comm;
using braid::Result;
using braid::Status;
using braid::api::guard;
using braid::api::guardComm;
namespace bootstrap = braid::bootstrap;
namespace transport = braid::transport;

namespace {

Status checkOut(const void* out, const char* api, const char* name) {
  if (out == nullptr) return braid::invalidArgument(std::string(api) + ": " + name + " is NULL");
  return Status::ok();
}

// A handle for `comm`, or an error (the table is full) after freeing it.
Status publish(std::unique_ptr<Comm> comm, braidComm_t* out) {
  *out = braid::publishComm(std::move(comm));
  if (*out == nullptr) {
    return Status(braidSystemError, "too many live communicators in this process");
  }
  return Status::ok();
}

Status initRank(braidComm_t* out, int nranks, const bootstrap::UniqueId& id, int rank,
                const std::string& tagPrefix) {
  auto comm = Comm::create(id, nranks, rank, tagPrefix);
  if (!comm.isOk()) return comm.status().withContext("rank " + std::to_string(rank) + " init");
  return publish(std::move(*comm), out);
}

Status checkRank(int nranks, int rank, const char* api);

// Every init by unique id: at once; queued until braidGroupEnd inside a group; or, with
// config->blocking = 0, on a thread of its own (braidInProgress until braidCommGetAsyncError
// says otherwise).
braidResult_t initWithConfig(const char* api, braidComm_t* comm, int nranks,
                             const braidUniqueId& commId, int rank, braidConfig_t* config) {
  Status deferred;
  braidResult_t result = guard(nullptr, [&]() -> Status {
    BRAID_RETURN_IF_ERROR(checkOut(comm, api, "comm"));
    *comm = nullptr;
    BRAID_RETURN_IF_ERROR(checkRank(nranks, rank, api));
    braid::api::InitOptions options;
    BRAID_RETURN_IF_ERROR(braid::api::readConfig(config, api, &options));
    auto id = bootstrap::UniqueId::readFrom(commId);
    if (!id.isOk()) return id.status().withContext(api);
    const char* tagEnv = std::getenv("BRAID_JOB_TAG");
    const std::string tag = tagEnv ? tagEnv : "";
    const bool blocking = options.blocking;
    auto join = [id = *id, nranks, rank, tag, blocking]() -> Result<std::unique_ptr<Comm>> {
      auto made = Comm::create(id, nranks, rank, tag);
      if (!made.isOk()) return made.status().withContext("rank " + std::to_string(rank) + " init");
      braid::allowPeerDevices(made->get());  // device buffers: cuda_p2p, comm/device_path.h
      (*made)->setBlocking(blocking);        // what splits with a NULL config inherit
      return made;
    };
    bool inProgress = false;
    BRAID_RETURN_IF_ERROR(braid::api::joinNowOrLater(join, options, comm, &inProgress));
    if (inProgress) {
      deferred = Status(braidInProgress, std::string(api) + ": initializing in the background");
    }
    return Status::ok();
  });
  if (result == braidSuccess && !deferred.isOk()) return braidInProgress;
  return result;
}

Status checkRank(int nranks, int rank, const char* api) {
  if (nranks <= 0) {
    return braid::invalidArgument(std::string(api) + ": nranks " + std::to_string(nranks) +
                                  " must be positive");
  }
  if (rank < 0 || rank >= nranks) {
    return braid::invalidArgument(std::string(api) + ": rank " + std::to_string(rank) +
                                  " is out of range for nranks " + std::to_string(nranks));
  }
  return Status::ok();
}

}  // namespace

extern "C" {

braidResult_t braidGetUniqueId(braidUniqueId* uniqueId) {
  return guard(nullptr, [&]() -> Status {
    BRAID_RETURN_IF_ERROR(checkOut(uniqueId, "braidGetUniqueId", "uniqueId"));
    BRAID_ASSIGN_OR_RETURN(braid::Config config, braid::Config::fromEnv());
    BRAID_ASSIGN_OR_RETURN(bootstrap::UniqueId id,
                           bootstrap::createUniqueId(config.socketIfname, config.timeoutSeconds));
    id.writeTo(uniqueId);
    return Status::ok();
  });
}

braidResult_t braidCommInitRank(braidComm_t* comm, int nranks, braidUniqueId commId, int rank) {
  return initWithConfig("braidCommInitRank", comm, nranks, commId, rank, nullptr);
}

braidResult_t braidCommInitRankConfig(braidComm_t* comm, int nranks, braidUniqueId commId, int rank,
                                      braidConfig_t* config) {
  return initWithConfig("braidCommInitRankConfig", comm, nranks, commId, rank, config);
}

braidResult_t braidCommInitRankScalable(braidComm_t* newcomm, int nranks, int myrank, int nId,
                                        braidUniqueId* commIds, braidConfig_t* config) {
  if (nId < 1 || commIds == nullptr) {
    return guard(nullptr, [&] {
      return braid::invalidArgument("braidCommInitRankScalable: nId " + std::to_string(nId) +
                                    " must be at least 1, with commIds not NULL");
    });
  }
  // One bootstrap root serves any number of ranks here: every rank joins through the first.
  return initWithConfig("braidCommInitRankScalable", newcomm, nranks, commIds[0], myrank, config);
}

braidResult_t braidCommInitAll(braidComm_t* comms, int ndev, const int* devlist) {
  return guard(nullptr, [&]() -> Status {
    BRAID_RETURN_IF_ERROR(checkOut(comms, "braidCommInitAll", "comms"));
    if (ndev <= 0) {
      return braid::invalidArgument("braidCommInitAll: ndev " + std::to_string(ndev) +
                                    " must be positive");
    }
    std::string noDevices;
    if (devlist != nullptr && !braid::deviceListSupported(devlist, ndev, &noDevices)) {
      return braid::invalidUsage("braidCommInitAll: devlist names CUDA devices, but " + noDevices +
                                 "; pass NULL for host ranks");
    }
    BRAID_ASSIGN_OR_RETURN(braid::Config config, braid::Config::fromEnv());
    BRAID_ASSIGN_OR_RETURN(bootstrap::UniqueId id,
                           bootstrap::createUniqueId(config.socketIfname, config.timeoutSeconds));
    std::vector<Status> results(ndev);
    for (int r = 0; r < ndev; ++r) comms[r] = nullptr;
    auto releaseAll = [&] {
      for (int k = 0; k < ndev; ++k) {
        (void)braid::releaseComm(comms[k], "braidCommInitAll", braid::Release::kAbort);
        comms[k] = nullptr;
      }
    };
    BRAID_RETURN_IF_ERROR(braid::api::runOnRankThreads(ndev, [&](int r) {
                            results[r] = initRank(&comms[r], ndev, id, r, "");
                          }).withContext("braidCommInitAll"));
    for (int r = 0; r < ndev; ++r) {
      if (results[r].isOk()) continue;
      releaseAll();
      return results[r].withContext("braidCommInitAll");
    }
    if (devlist != nullptr) {  // ranks sharing one device: comm/device_path.h
      std::vector<braid::Comm*> ranks;
      for (int r = 0; r < ndev; ++r) ranks.push_back(braid::peekComm(comms[r]));
      Status attached = braid::attachDeviceGroup(ranks, devlist);
      if (!attached.isOk()) {
        releaseAll();
        return attached.withContext("braidCommInitAll");
      }
    }
    return Status::ok();
  });
}

braidResult_t braidCommInitFromEnv(braidComm_t* comm) {
  return guard(nullptr, [&]() -> Status {
    BRAID_RETURN_IF_ERROR(checkOut(comm, "braidCommInitFromEnv", "comm"));
    *comm = nullptr;
    if (!bootstrap::launchEnvNamesRoot()) {
      // No root address given: an initialised MPI carries the unique id (any MPI launcher,
      // any number of hosts, ranks in MPI_COMM_WORLD's order).
      auto mpi = bootstrap::findInitializedMpi();
      if (!mpi.isOk()) {
        return mpi.status().withContext(
            "braidCommInitFromEnv (set BRAID_ROOT=host:port to an address of rank 0's host "
            "instead, or use braidCommInitMPI from braid_mpi.h)");
      }
      if (mpi->initialized) {
        BRAID_INFO("bootstrap: unique id by MPI_Bcast over %s's MPI_COMM_WORLD (rank %d of %d)",
                   mpi->library.c_str(), mpi->rank, mpi->size);
        const char* tag = std::getenv("BRAID_JOB_TAG");
        return braid::api::initByBroadcast(comm, mpi->size, mpi->rank, mpi->broadcast,
                                           tag ? tag : "",
                                           "braidCommInitFromEnv (over " + mpi->library + ")");
      }
    }
    auto launch = bootstrap::launchInfoFromEnv();
    if (!launch.isOk()) return launch.status().withContext("braidCommInitFromEnv");
    bootstrap::UniqueId id;
    std::memcpy(id.secret, launch->secret, sizeof(id.secret));
    BRAID_ASSIGN_OR_RETURN(bootstrap::SockAddr root,
                           transport::socket::resolveHost(launch->rootHost, launch->rootPort));
    id.root = bootstrap::WireAddr::from(root);
    if (launch->rank == 0) {
      BRAID_ASSIGN_OR_RETURN(braid::Config config, braid::Config::fromEnv());
      // Rank 0 hosts the root: on the socket braidrun bound for it (no other program can
      // take the port in between), else listening on every interface.
      bootstrap::SockAddr any = root;
      if (any.storage.ss_family == AF_INET) {
        reinterpret_cast<sockaddr_in*>(&any.storage)->sin_addr.s_addr = htonl(INADDR_ANY);
      } else {
        reinterpret_cast<sockaddr_in6*>(&any.storage)->sin6_addr = in6addr_any;
      }
      Status s = braid::internalError("no inherited root socket");
      if (launch->rootListenFd >= 0) {
        s = bootstrap::startRootServerOn(launch->rootListenFd, launch->rootPort, id.secret,
                                         config.timeoutSeconds);
        ::unsetenv("BRAID_ROOT_FD");  // used once: a later init binds the port itself
        if (!s.isOk()) BRAID_WARN("%s; binding the root's port instead", s.message().c_str());
      }
      if (!s.isOk()) s = bootstrap::startRootServer(any, id.secret, config.timeoutSeconds, nullptr);
      if (!s.isOk()) {
        return s.withContext("braidCommInitFromEnv: rank 0 cannot host the bootstrap root at " +
                             root.toString() + " (" + launch->launcher + ")");
      }
    }
    BRAID_RETURN_IF_ERROR(initRank(comm, launch->nranks, id, launch->rank, launch->tagPrefix));
    braid::allowPeerDevices(
        braid::peekComm(*comm));  // device buffers: cuda_p2p, comm/device_path.h
    return Status::ok();
  });
}

braidResult_t braidCommInitRankBroadcast(braidComm_t* comm, int nranks, int rank,
                                         braidBroadcastFn_t broadcast, void* context) {
  return guard(nullptr, [&]() -> Status {
    const char* api = "braidCommInitRankBroadcast";
    BRAID_RETURN_IF_ERROR(checkOut(comm, api, "comm"));
    *comm = nullptr;
    BRAID_RETURN_IF_ERROR(checkOut(reinterpret_cast<const void*>(broadcast), api, "broadcast"));
    BRAID_RETURN_IF_ERROR(checkRank(nranks, rank, api));
    const char* tag = std::getenv("BRAID_JOB_TAG");
    return braid::api::initByBroadcast(
        comm, nranks, rank,
        [&](void* buffer, size_t bytes) { return broadcast(buffer, bytes, context) == 0; },
        tag ? tag : "", api);
  });
}

braidResult_t braidCommFinalize(braidComm_t comm) {
  // Host operations complete before their calls return; device calls queued on the host
  // proxy (comm/device_proxy/) are finished here. As in NCCL, a finalized communicator
  // takes no more work (only braidCommDestroy), and a broken one reports why.
  return guardComm(comm, "braidCommFinalize", [&](Comm& c) -> Status {
    if (!c.markFinalized()) {
      return braid::invalidUsage("braidCommFinalize: rank " + std::to_string(c.rank()) +
                                 "'s communicator was already finalized; only "
                                 "braidCommDestroy may follow");
    }
    braid::waitForDeviceProxy(&c);
    return c.health().withContext("braidCommFinalize");
  });
}

braidResult_t braidCommDestroy(braidComm_t comm) {
  return guard(nullptr,
               [&] { return braid::releaseComm(comm, "braidCommDestroy", braid::Release::kWait); });
}

braidResult_t braidCommAbort(braidComm_t comm) {
  return guard(nullptr,
               [&] { return braid::releaseComm(comm, "braidCommAbort", braid::Release::kAbort); });
}

braidResult_t braidCommGetAsyncError(braidComm_t comm, braidResult_t* asyncError) {
  // A communicator still being created (non-blocking init, init inside a group) answers
  // braidInProgress, then its init's error or its health.
  const Status state = braid::initState(comm, "braidCommGetAsyncError");
  if (state.code() == braidInvalidArgument) return guard(nullptr, [&] { return state; });
  if (!state.isOk()) {
    return guard(nullptr, [&]() -> Status {
      BRAID_RETURN_IF_ERROR(checkOut(asyncError, "braidCommGetAsyncError", "asyncError"));
      *asyncError = state.code();
      return Status::ok();
    });
  }
  return guardComm(comm, "braidCommGetAsyncError", [&](Comm& c) -> Status {
    BRAID_RETURN_IF_ERROR(checkOut(asyncError, "braidCommGetAsyncError", "asyncError"));
    *asyncError = c.health().code();
    return Status::ok();
  });
}

braidResult_t braidCommRevoke(braidComm_t comm, int revokeFlags) {
  return guardComm(comm, "braidCommRevoke", [&](Comm& c) -> Status {
    if (revokeFlags != 0) {
      return braid::invalidArgument("braidCommRevoke: revokeFlags " + std::to_string(revokeFlags) +
                                    " must be 0 (NCCL_REVOKE_DEFAULT)");
    }
    // The sticky error ends calls in flight here and, through the transport, on the peers.
    c.fail(braid::invalidUsage("rank " + std::to_string(c.rank()) +
                               " revoked the communicator (braidCommRevoke); only "
                               "braidCommShrink, braidCommDestroy and queries remain"));
    return Status::ok();
  });
}

braidResult_t braidCommRegister(const braidComm_t comm, void* buff, size_t size, void** handle) {
  return guardComm(comm, "braidCommRegister", [&](Comm& c) -> Status {
    BRAID_RETURN_IF_ERROR(checkOut(handle, "braidCommRegister", "handle"));
    *handle = nullptr;
    if (buff == nullptr && size > 0) {
      return braid::invalidArgument("braidCommRegister: buff is NULL but size is " +
                                    std::to_string(size));
    }
    BRAID_ASSIGN_OR_RETURN(*handle, c.registrations().add(buff, size));
    return Status::ok();
  });
}

braidResult_t braidCommDeregister(const braidComm_t comm, void* handle) {
  return guardComm(comm, "braidCommDeregister",
                   [&](Comm& c) -> Status { return c.registrations().remove(handle); });
}

braidResult_t braidCommCount(braidComm_t comm, int* count) {
  return guardComm(comm, "braidCommCount", [&](Comm& c) -> Status {
    BRAID_RETURN_IF_ERROR(checkOut(count, "braidCommCount", "count"));
    *count = c.nranks();
    return Status::ok();
  });
}

braidResult_t braidCommUserRank(braidComm_t comm, int* rank) {
  return guardComm(comm, "braidCommUserRank", [&](Comm& c) -> Status {
    BRAID_RETURN_IF_ERROR(checkOut(rank, "braidCommUserRank", "rank"));
    *rank = c.rank();
    return Status::ok();
  });
}

braidResult_t braidCommCuDevice(braidComm_t comm, int* device) {
  return guardComm(comm, "braidCommCuDevice", [&](Comm& c) -> Status {
    BRAID_RETURN_IF_ERROR(checkOut(device, "braidCommCuDevice", "device"));
    *device = c.device();
    return Status::ok();
  });
}

braidResult_t braidCommRankHost(braidComm_t comm, int rank, int* host) {
  return guardComm(comm, "braidCommRankHost", [&](Comm& c) -> Status {
    BRAID_RETURN_IF_ERROR(checkOut(host, "braidCommRankHost", "host"));
    if (rank < 0 || rank >= c.nranks()) {
      return braid::invalidArgument("braidCommRankHost: rank " + std::to_string(rank) +
                                    " is outside the communicator's 0.." +
                                    std::to_string(c.nranks() - 1));
    }
    const auto& hosts = c.hosts();
    *host = hosts != nullptr && rank < static_cast<int>(hosts->size()) ? (*hosts)[rank] : 0;
    return Status::ok();
  });
}

}  // extern "C"
