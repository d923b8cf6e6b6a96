// Communicators derived from others: split, shrink (recovery) and grow (elastic training).
// Each runs in two phases (comm/join_plan.h): the ranks agree over the parent during the
// call, then join the new communicator at once, in the background (config->blocking = 0:
// braidInProgress, finished through braidCommGetAsyncError) or at braidGroupEnd. Inside a
// group both phases wait for braidGroupEnd, which runs the group's derivations together.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "api/comm_options.h"
#include "api/guard.h"
#include "comm/device_path.h"
#include "comm/group.h"
#include "comm/grow.h"
#include "comm/shrink.h"

using braid::Comm;
using braid::JoinPlan;
using braid::Result;
using braid::Status;
using braid::api::guard;
using braid::api::guardComm;
using braid::api::InitOptions;

namespace {

Status checkOut(const void* out, const char* api, const char* name) {
  if (out == nullptr) return braid::invalidArgument(std::string(api) + ": " + name + " is NULL");
  return Status::ok();
}

// Phase 2: joins what `plan` says, as `options` ask; sets *inProgress for a background join.
Status joinPlanned(const char* api, const JoinPlan& plan, const InitOptions& options,
                   braidComm_t* out, bool* inProgress) {
  const std::string where = std::string(api) + ": rank " + std::to_string(plan.rank) + " of " +
                            std::to_string(plan.nranks) + " joining";
  const bool blocking = options.blocking;
  auto join = [plan, where, blocking]() -> Result<std::unique_ptr<Comm>> {
    auto made = Comm::create(plan.id, plan.nranks, plan.rank, plan.tagPrefix);
    if (!made.isOk()) return made.status().withContext(where);
    braid::allowPeerDevices(made->get());  // device buffers: cuda_p2p, comm/device_path.h
    (*made)->setBlocking(blocking);
    return made;
  };
  return braid::api::joinNowOrLater(std::move(join), options, out, inProgress);
}

// The agreement over the parent that derives a communicator (phase 1), run later.
using PlanFn = std::function<Result<JoinPlan>(Comm& parent)>;

// Inside a group, phase 1 waits for the outermost braidGroupEnd too: the parent's other
// ranks may be driven by this same thread, later in the group, so agreeing now would wait
// for calls not made yet. At braidGroupEnd each deferred derivation runs on a thread of its
// own, all at once, those of one parent in call order; the parent must stay live until
// then. A rank that gets a communicator has its handle now (pending until the join); one
// that gets none (`joins` false: no color, excluded) still takes part in the agreement, as
// a task.
Status deferDerived(braidComm_t parent, const char* api, PlanFn plan, bool joins,
                    const InitOptions& options, braidComm_t* out) {
  std::shared_ptr<braid::Turns> turns = braid::parentTurns(parent);
  const int ticket = turns->take();
  auto agree = [parent, api, plan, turns, ticket]() -> Result<JoinPlan> {
    braid::Turns::Turn turn(*turns, ticket);  // one exchange on the parent at a time
    braid::Lease lease(parent);
    if (lease.comm() == nullptr) {
      return lease.error(api).withContext("at braidGroupEnd, the parent communicator");
    }
    auto planned = plan(*lease.comm());
    if (!planned.isOk()) return planned.status().withContext(api);
    return planned;
  };
  if (!joins) return braid::deferTask([agree] { return agree().status(); });
  const bool blocking = options.blocking;
  auto join = [agree, api, blocking]() -> Result<std::unique_ptr<Comm>> {
    BRAID_ASSIGN_OR_RETURN(JoinPlan plan, agree());
    if (!plan.joins()) {
      return braid::internalError(std::string(api) +
                                  ": this rank was planned out of the new "
                                  "communicator it has a handle of");
    }
    auto made = Comm::create(plan.id, plan.nranks, plan.rank, plan.tagPrefix);
    if (!made.isOk()) return made.status().withContext(api);
    braid::allowPeerDevices(made->get());
    (*made)->setBlocking(blocking);
    return made;
  };
  *out = braid::publishPending(std::move(join));
  if (*out == nullptr) {
    return Status(braidSystemError, "too many live communicators in this process");
  }
  return braid::deferJoin(*out);
}

// Inside a group, a refused call fails the group, as NCCL does: its other derivations and
// inits, whose peers would wait for this one, then never start, and braidGroupEnd says why.
braidResult_t failingGroup(braidResult_t result) {
  if (result != braidSuccess && result != braidInProgress && braid::inGroup()) {
    braid::failGroup(Status(result, braidGetLastError(nullptr)));
  }
  return result;
}

// The result of a call whose body succeeded: braidInProgress for a background join.
braidResult_t finish(braidResult_t result, bool inProgress) {
  return result == braidSuccess && inProgress ? braidInProgress : result;
}

// A derived communicator's options: the parent's for a NULL config; otherwise the config's,
// its unset fields taking the defaults (as in NCCL).
Status deriveOptions(const Comm& parent, const braidConfig_t* config, const char* api,
                     InitOptions* out) {
  *out = InitOptions();
  if (config == nullptr) out->blocking = parent.blocking();
  return braid::api::readConfig(config, api, out);
}

// Ends the parent's work in flight on this rank (BRAID_SHRINK_ABORT) and waits, up to
// BRAID_TIMEOUT, for the calls inside it to return.
Status abortParentWork(Comm& c) {
  c.fail(braid::invalidUsage("rank " + std::to_string(c.rank()) +
                             " ended the communicator's work to shrink it (BRAID_SHRINK_ABORT)"));
  c.requestAbort();
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(c.config().timeoutSeconds);
  while (c.inFlight() > 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      return braid::timeoutError("braidCommShrinkConfig: " + std::to_string(c.inFlight()) +
                                     " call(s) on the parent did not return within BRAID_TIMEOUT "
                                     "after BRAID_SHRINK_ABORT",
                                 c.rank());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return Status::ok();
}

}  // namespace

extern "C" {

braidResult_t braidCommSplitConfig(braidComm_t comm, int color, int key, braidComm_t* newcomm,
                                   braidConfig_t* config) {
  const char* api = "braidCommSplitConfig";
  bool inProgress = false;
  braidResult_t result = guardComm(comm, api, [&](Comm& c) -> Status {
    BRAID_RETURN_IF_ERROR(checkOut(newcomm, api, "newcomm"));
    *newcomm = nullptr;
    if (color < 0 && color != BRAID_SPLIT_NOCOLOR) {
      return braid::invalidArgument(std::string(api) + ": color " + std::to_string(color) +
                                    " must be >= 0 or BRAID_SPLIT_NOCOLOR");
    }
    InitOptions options;
    BRAID_RETURN_IF_ERROR(deriveOptions(c, config, api, &options));
    BRAID_RETURN_IF_ERROR(c.usable(api));
    if (braid::inGroup()) {
      return deferDerived(
          comm, api, [color, key](Comm& parent) { return parent.planSplit(color, key); },
          color != BRAID_SPLIT_NOCOLOR, options, newcomm);
    }
    auto plan = c.planSplit(color, key);
    if (!plan.isOk()) return plan.status().withContext(api);
    if (!plan->joins()) return Status::ok();  // BRAID_SPLIT_NOCOLOR
    return joinPlanned(api, *plan, options, newcomm, &inProgress);
  });
  return failingGroup(finish(result, inProgress));
}

braidResult_t braidCommSplit(braidComm_t comm, int color, int key, braidComm_t* newcomm) {
  braidConfig_t blocking = BRAID_CONFIG_INITIALIZER;
  blocking.blocking = 1;
  return braidCommSplitConfig(comm, color, key, newcomm, &blocking);
}

braidResult_t braidCommShrinkConfig(braidComm_t comm, const int* excludeRanks, int excludeCount,
                                    braidComm_t* newcomm, braidConfig_t* config, int shrinkFlags) {
  const char* api = "braidCommShrink";
  bool inProgress = false;
  braidResult_t result = guardComm(comm, api, [&](Comm& c) -> Status {
    BRAID_RETURN_IF_ERROR(checkOut(newcomm, api, "newcomm"));
    *newcomm = nullptr;
    if (excludeCount < 0 || (excludeCount > 0 && excludeRanks == nullptr)) {
      return braid::invalidArgument("braidCommShrink: excludeRanks is NULL or excludeCount " +
                                    std::to_string(excludeCount) + " is negative");
    }
    if (shrinkFlags != BRAID_SHRINK_DEFAULT && shrinkFlags != BRAID_SHRINK_ABORT) {
      return braid::invalidArgument("braidCommShrink: shrinkFlags " + std::to_string(shrinkFlags) +
                                    " is neither BRAID_SHRINK_DEFAULT nor BRAID_SHRINK_ABORT");
    }
    InitOptions options;
    BRAID_RETURN_IF_ERROR(deriveOptions(c, config, api, &options));
    if (shrinkFlags == BRAID_SHRINK_ABORT) BRAID_RETURN_IF_ERROR(abortParentWork(c));
    // No health check: shrinking is how a failed communicator's survivors go on.
    std::vector<int> exclude(excludeRanks, excludeRanks + excludeCount);
    if (braid::inGroup()) {
      const bool excluded = std::find(exclude.begin(), exclude.end(), c.rank()) != exclude.end();
      return deferDerived(
          comm, api, [exclude](Comm& parent) { return braid::planShrink(parent, exclude); },
          !excluded, options, newcomm);
    }
    BRAID_ASSIGN_OR_RETURN(JoinPlan plan, braid::planShrink(c, exclude));
    if (!plan.joins()) return Status::ok();  // this rank was excluded
    return joinPlanned(api, plan, options, newcomm, &inProgress);
  });
  return failingGroup(finish(result, inProgress));
}

braidResult_t braidCommShrink(braidComm_t comm, const int* excludeRanks, int excludeCount,
                              braidComm_t* newcomm) {
  braidConfig_t blocking = BRAID_CONFIG_INITIALIZER;
  blocking.blocking = 1;
  return braidCommShrinkConfig(comm, excludeRanks, excludeCount, newcomm, &blocking,
                               BRAID_SHRINK_DEFAULT);
}

braidResult_t braidCommGetUniqueId(braidComm_t comm, braidUniqueId* uniqueId) {
  const char* api = "braidCommGetUniqueId";
  return guardComm(comm, api, [&](Comm& c) -> Status {
    BRAID_RETURN_IF_ERROR(checkOut(uniqueId, api, "uniqueId"));
    BRAID_RETURN_IF_ERROR(c.usable(api));
    BRAID_ASSIGN_OR_RETURN(*uniqueId, c.growIds().create(c.nranks(), c.config().socketIfname,
                                                         c.config().timeoutSeconds));
    return Status::ok();
  });
}

braidResult_t braidCommGrow(braidComm_t comm, int nRanks, const braidUniqueId* uniqueId, int rank,
                            braidComm_t* newcomm, braidConfig_t* config) {
  const char* api = "braidCommGrow";
  bool inProgress = false;
  if (comm == nullptr) {  // a new rank
    braidResult_t result = guard(nullptr, [&]() -> Status {
      BRAID_RETURN_IF_ERROR(checkOut(newcomm, api, "newcomm"));
      *newcomm = nullptr;
      if (uniqueId == nullptr) {
        return braid::invalidArgument(
            "braidCommGrow: a new rank (comm NULL) needs the coordinator's uniqueId; it is "
            "NULL");
      }
      InitOptions options;
      BRAID_RETURN_IF_ERROR(braid::api::readConfig(config, api, &options));
      const char* tag = std::getenv("BRAID_JOB_TAG");
      BRAID_ASSIGN_OR_RETURN(JoinPlan plan,
                             braid::planGrowJoin(nRanks, *uniqueId, rank, tag ? tag : ""));
      return joinPlanned(api, plan, options, newcomm, &inProgress);
    });
    return failingGroup(finish(result, inProgress));
  }
  braidResult_t result = guardComm(comm, api, [&](Comm& c) -> Status {
    BRAID_RETURN_IF_ERROR(checkOut(newcomm, api, "newcomm"));
    *newcomm = nullptr;
    BRAID_RETURN_IF_ERROR(c.usable(api));
    InitOptions options;
    Status local = deriveOptions(c, config, api, &options);
    if (local.isOk() && rank != -1) {
      local = braid::invalidArgument("braidCommGrow: rank " + std::to_string(rank) +
                                     " must be -1 on a rank of comm (it keeps its rank " +
                                     std::to_string(c.rank()) + ")");
    }
    if (braid::inGroup()) {
      // The id is copied: the caller's may be gone by braidGroupEnd.
      std::optional<braidUniqueId> id;
      if (uniqueId != nullptr) id = *uniqueId;
      return deferDerived(
          comm, api,
          [nRanks, id, local](Comm& parent) {
            return braid::planGrow(parent, nRanks, id ? &*id : nullptr, local);
          },
          true, options, newcomm);
    }
    BRAID_ASSIGN_OR_RETURN(JoinPlan plan, braid::planGrow(c, nRanks, uniqueId, local));
    return joinPlanned(api, plan, options, newcomm, &inProgress);
  });
  return failingGroup(finish(result, inProgress));
}

}  // extern "C"
