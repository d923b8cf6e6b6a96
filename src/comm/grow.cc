#include "comm/grow.h"

#include <cstring>
#include <string>
#include <vector>

#include "bootstrap/root_server.h"
#include "bootstrap/wire.h"
#include "comm/comm.h"
#include "core/log.h"

namespace braid {
namespace {

// Written into the braidUniqueId bytes after the bootstrap id: marks a grow id and carries
// the size of the communicator it grows.
struct GrowTrailer {
  static constexpr uint32_t kMagic = 0x574f5247;  // "GROW"
  uint32_t magic = 0;
  int32_t oldRanks = 0;
};
constexpr size_t kTrailerOffset = 96;
static_assert(sizeof(bootstrap::UniqueId) <= kTrailerOffset);
static_assert(kTrailerOffset + sizeof(GrowTrailer) <= sizeof(braidUniqueId));

GrowTrailer trailerOf(const braidUniqueId& id) {
  GrowTrailer t;
  std::memcpy(&t, id.internal + kTrailerOffset, sizeof(t));
  return t;
}

Status checkNewSize(int nRanks, int oldRanks) {
  if (nRanks <= oldRanks || nRanks > bootstrap::wire::kMaxRanks) {
    return invalidArgument("braidCommGrow: nRanks " + std::to_string(nRanks) +
                           " must be larger than the communicator's " + std::to_string(oldRanks) +
                           " ranks and at most " + std::to_string(bootstrap::wire::kMaxRanks));
  }
  return Status::ok();
}

// What each existing rank tells the others in phase 1.
struct GrowEntry {
  int32_t nRanks = 0;
  int32_t role = 0;  // kNoId, kHasId or kRefused
  braidUniqueId id = {};
};
constexpr int32_t kNoId = 0, kHasId = 1, kRefused = -1;

}  // namespace

Result<braidUniqueId> GrowIds::create(int nranks, const std::string& ifname,
                                      double timeoutSeconds) {
  std::lock_guard<std::mutex> lock(mu_);
  if (pending_) {
    return invalidUsage(
        "braidCommGetUniqueId: this rank's previous grow id has not been used yet; call "
        "braidCommGrow with it first (one grow at a time)");
  }
  BRAID_ASSIGN_OR_RETURN(bootstrap::UniqueId made,
                         bootstrap::createUniqueId(ifname, timeoutSeconds));
  braidUniqueId out;
  std::memset(&out, 0, sizeof(out));
  made.writeTo(&out);
  GrowTrailer trailer;
  trailer.magic = GrowTrailer::kMagic;
  trailer.oldRanks = nranks;
  std::memcpy(out.internal + kTrailerOffset, &trailer, sizeof(trailer));
  pending_ = out;
  return out;
}

bool GrowIds::isPending(const braidUniqueId& id) const {
  std::lock_guard<std::mutex> lock(mu_);
  return pending_ && std::memcmp(pending_->internal, id.internal, sizeof(id.internal)) == 0;
}

void GrowIds::consume() {
  std::lock_guard<std::mutex> lock(mu_);
  pending_.reset();
}

Result<JoinPlan> planGrow(Comm& comm, int nRanks, const braidUniqueId* id, Status local) {
  // Local checks first, but their verdict travels in the exchange: a rank that refuses
  // still takes part, so the others fail at once instead of waiting for it.
  if (local.isOk()) local = checkNewSize(nRanks, comm.nranks());
  GrowEntry mine;
  mine.nRanks = nRanks;
  if (local.isOk() && id != nullptr) {
    if (comm.growIds().isPending(*id)) {
      mine.role = kHasId;
      mine.id = *id;
    } else {
      local = invalidArgument(
          "braidCommGrow: uniqueId is not this rank's unused id from braidCommGetUniqueId "
          "(made on another communicator or rank, or already used by a grow)");
    }
  }
  if (!local.isOk()) mine.role = kRefused;
  std::vector<GrowEntry> all(comm.nranks());
  all[comm.rank()] = mine;
  BRAID_RETURN_IF_ERROR(comm.bootstrap()
                            .allGather(all.data(), sizeof(GrowEntry))
                            .withContext("braidCommGrow: exchanging arguments"));
  BRAID_RETURN_IF_ERROR(local);

  int coordinator = -1;
  for (int r = 0; r < comm.nranks(); ++r) {
    if (all[r].role == kRefused) {
      return invalidArgument("braidCommGrow: rank " + std::to_string(r) +
                             " refused its arguments (its braidGetLastError says why)");
    }
    if (all[r].nRanks != all[0].nRanks) {
      return invalidArgument("braidCommGrow: ranks disagree on nRanks: rank 0 passes " +
                             std::to_string(all[0].nRanks) + ", rank " + std::to_string(r) +
                             " passes " + std::to_string(all[r].nRanks));
    }
    if (all[r].role != kHasId) continue;
    if (coordinator >= 0) {
      return invalidArgument("braidCommGrow: ranks " + std::to_string(coordinator) + " and " +
                             std::to_string(r) +
                             " both pass a uniqueId; only the rank that called "
                             "braidCommGetUniqueId does, the others pass NULL");
    }
    coordinator = r;
  }
  if (coordinator < 0) {
    return invalidArgument(
        "braidCommGrow: no rank passes a uniqueId; the rank that called braidCommGetUniqueId "
        "passes it, the others pass NULL");
  }
  if (coordinator == comm.rank()) comm.growIds().consume();
  JoinPlan plan;
  BRAID_ASSIGN_OR_RETURN(plan.id, bootstrap::UniqueId::readFrom(all[coordinator].id));
  plan.nranks = nRanks;
  plan.rank = comm.rank();
  plan.tagPrefix = comm.tagPrefix();
  BRAID_INFO("braidCommGrow: rank %d of %d stays rank %d of %d", comm.rank(), comm.nranks(),
             plan.rank, nRanks);
  return plan;
}

Result<JoinPlan> planGrowJoin(int nRanks, const braidUniqueId& id, int rank,
                              const std::string& tagPrefix) {
  const GrowTrailer trailer = trailerOf(id);
  if (trailer.magic != GrowTrailer::kMagic || trailer.oldRanks < 1) {
    return invalidArgument(
        "braidCommGrow: uniqueId was not made by braidCommGetUniqueId (an id of "
        "braidGetUniqueId starts a new communicator: braidCommInitRank)");
  }
  BRAID_RETURN_IF_ERROR(checkNewSize(nRanks, trailer.oldRanks));
  if (rank < trailer.oldRanks || rank >= nRanks) {
    return invalidArgument("braidCommGrow: rank " + std::to_string(rank) +
                           " is not a new rank: the communicator has ranks 0.." +
                           std::to_string(trailer.oldRanks - 1) + ", new ranks are " +
                           std::to_string(trailer.oldRanks) + ".." + std::to_string(nRanks - 1));
  }
  JoinPlan plan;
  auto parsed = bootstrap::UniqueId::readFrom(id);
  if (!parsed.isOk()) return parsed.status().withContext("braidCommGrow");
  plan.id = *parsed;
  plan.nranks = nRanks;
  plan.rank = rank;
  plan.tagPrefix = tagPrefix;
  return plan;
}

}  // namespace braid
