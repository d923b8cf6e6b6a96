// Communicator lifecycle: unique ids, init (by id, all-in-process, from the
// launcher's environment), split, finalize, destroy, abort and queries.
#include <arpa/inet.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "api/broadcast_init.h"
#include "api/guard.h"
#include "bootstrap/launch_env.h"
#include "bootstrap/mpi_world.h"
#include "bootstrap/root_server.h"
#include "comm/device_path.h"
#include "comm/device_proxy/proxy_registry.h"
#include "comm/shrink.h"
#include "core/config.h"
#include "core/log.h"

using braid::Comm;
using braid::Result;
using braid::Status;
using braid::api::guard;
using braid::api::toComm;
using braid::api::toHandle;
namespace bootstrap = braid::bootstrap;
namespace transport = braid::transport;

namespace {

Status checkOut(const void* out, const char* api, const char* name) {
  if (out == nullptr) return braid::invalidArgument(std::string(api) + ": " + name + " is NULL");
  return Status::ok();
}

Status checkComm(braidComm_t comm, const char* api) {
  if (comm == nullptr) return braid::invalidArgument(std::string(api) + ": comm is NULL");
  return Status::ok();
}

Status initRank(braidComm_t* out, int nranks, const bootstrap::UniqueId& id, int rank,
                const std::string& tagPrefix) {
  auto comm = Comm::create(id, nranks, rank, tagPrefix);
  if (!comm.isOk()) return comm.status().withContext("rank " + std::to_string(rank) + " init");
  *out = toHandle(comm->release());
  return Status::ok();
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
  return guard(nullptr, [&]() -> Status {
    BRAID_RETURN_IF_ERROR(checkOut(comm, "braidCommInitRank", "comm"));
    *comm = nullptr;
    BRAID_RETURN_IF_ERROR(checkRank(nranks, rank, "braidCommInitRank"));
    auto id = bootstrap::UniqueId::readFrom(commId);
    if (!id.isOk()) return id.status().withContext("braidCommInitRank");
    const char* tag = std::getenv("BRAID_JOB_TAG");
    BRAID_RETURN_IF_ERROR(initRank(comm, nranks, *id, rank, tag ? tag : ""));
    braid::allowPeerDevices(toComm(*comm));  // device buffers: cuda_p2p, comm/device_path.h
    return Status::ok();
  });
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
    std::vector<std::thread> threads;
    for (int r = 0; r < ndev; ++r) {
      comms[r] = nullptr;
      threads.emplace_back([&, r] { results[r] = initRank(&comms[r], ndev, id, r, ""); });
    }
    for (auto& t : threads) t.join();
    for (int r = 0; r < ndev; ++r) {
      if (results[r].isOk()) continue;
      for (int k = 0; k < ndev; ++k) {
        delete toComm(comms[k]);
        comms[k] = nullptr;
      }
      return results[r].withContext("braidCommInitAll");
    }
    if (devlist != nullptr) {  // ranks sharing one device: comm/device_path.h
      std::vector<braid::Comm*> ranks;
      for (int r = 0; r < ndev; ++r) ranks.push_back(toComm(comms[r]));
      Status attached = braid::attachDeviceGroup(ranks, devlist);
      if (!attached.isOk()) {
        for (int r = 0; r < ndev; ++r) {
          braid::detachDevice(ranks[r]);
          delete ranks[r];
          comms[r] = nullptr;
        }
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
    braid::allowPeerDevices(toComm(*comm));  // device buffers: cuda_p2p, comm/device_path.h
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

braidResult_t braidCommSplit(braidComm_t comm, int color, int key, braidComm_t* newcomm) {
  return guard(toComm(comm), [&]() -> Status {
    BRAID_RETURN_IF_ERROR(checkComm(comm, "braidCommSplit"));
    BRAID_RETURN_IF_ERROR(checkOut(newcomm, "braidCommSplit", "newcomm"));
    *newcomm = nullptr;
    if (color < 0 && color != BRAID_SPLIT_NOCOLOR) {
      return braid::invalidArgument("braidCommSplit: color " + std::to_string(color) +
                                    " must be >= 0 or BRAID_SPLIT_NOCOLOR");
    }
    BRAID_RETURN_IF_ERROR(toComm(comm)->health());
    auto split = toComm(comm)->split(color, key);
    if (!split.isOk()) return split.status().withContext("braidCommSplit");
    *newcomm = toHandle(split->release());
    return Status::ok();
  });
}

braidResult_t braidCommShrink(braidComm_t comm, const int* excludeRanks, int excludeCount,
                              braidComm_t* newcomm) {
  return guard(toComm(comm), [&]() -> Status {
    BRAID_RETURN_IF_ERROR(checkComm(comm, "braidCommShrink"));
    BRAID_RETURN_IF_ERROR(checkOut(newcomm, "braidCommShrink", "newcomm"));
    *newcomm = nullptr;
    if (excludeCount < 0 || (excludeCount > 0 && excludeRanks == nullptr)) {
      return braid::invalidArgument("braidCommShrink: excludeRanks is NULL or excludeCount " +
                                    std::to_string(excludeCount) + " is negative");
    }
    // No health check: shrinking is how a failed communicator's survivors go on.
    std::vector<int> exclude(excludeRanks, excludeRanks + excludeCount);
    auto shrunk = braid::shrinkComm(*toComm(comm), exclude);
    if (!shrunk.isOk()) return shrunk.status();
    *newcomm = toHandle(shrunk->release());
    return Status::ok();
  });
}

braidResult_t braidCommFinalize(braidComm_t comm) {
  // Host operations complete before their calls return; device calls queued on the host
  // proxy (comm/device_proxy/) are finished here.
  return guard(toComm(comm), [&]() -> Status {
    BRAID_RETURN_IF_ERROR(checkComm(comm, "braidCommFinalize"));
    braid::waitForDeviceProxy(toComm(comm));
    return Status::ok();
  });
}

braidResult_t braidCommDestroy(braidComm_t comm) {
  return guard(nullptr, [&]() -> Status {
    braid::detachDevice(toComm(comm));
    delete toComm(comm);
    return Status::ok();
  });
}

braidResult_t braidCommAbort(braidComm_t comm) {
  return guard(nullptr, [&]() -> Status {
    if (comm == nullptr) return Status::ok();
    toComm(comm)->requestAbort();
    toComm(comm)->drain();
    braid::detachDevice(toComm(comm));
    delete toComm(comm);
    return Status::ok();
  });
}

braidResult_t braidCommGetAsyncError(braidComm_t comm, braidResult_t* asyncError) {
  return guard(toComm(comm), [&]() -> Status {
    BRAID_RETURN_IF_ERROR(checkComm(comm, "braidCommGetAsyncError"));
    BRAID_RETURN_IF_ERROR(checkOut(asyncError, "braidCommGetAsyncError", "asyncError"));
    *asyncError = toComm(comm)->health().code();
    return Status::ok();
  });
}

braidResult_t braidCommCount(braidComm_t comm, int* count) {
  return guard(toComm(comm), [&]() -> Status {
    BRAID_RETURN_IF_ERROR(checkComm(comm, "braidCommCount"));
    BRAID_RETURN_IF_ERROR(checkOut(count, "braidCommCount", "count"));
    *count = toComm(comm)->nranks();
    return Status::ok();
  });
}

braidResult_t braidCommUserRank(braidComm_t comm, int* rank) {
  return guard(toComm(comm), [&]() -> Status {
    BRAID_RETURN_IF_ERROR(checkComm(comm, "braidCommUserRank"));
    BRAID_RETURN_IF_ERROR(checkOut(rank, "braidCommUserRank", "rank"));
    *rank = toComm(comm)->rank();
    return Status::ok();
  });
}

braidResult_t braidCommCuDevice(braidComm_t comm, int* device) {
  return guard(toComm(comm), [&]() -> Status {
    BRAID_RETURN_IF_ERROR(checkComm(comm, "braidCommCuDevice"));
    BRAID_RETURN_IF_ERROR(checkOut(device, "braidCommCuDevice", "device"));
    *device = -1;  // host-only communicators until the CUDA path lands
    return Status::ok();
  });
}

}  // extern "C"
