// Joining through the caller's broadcast (see broadcast_init.h).
#include "api/broadcast_init.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>

#include "api/guard.h"
#include "bootstrap/root_server.h"
#include "bootstrap/unique_id.h"
#include "comm/device_path.h"
#include "core/config.h"
#include "core/log.h"

namespace braid::api {
namespace {

// What rank 0 broadcasts: the id, or why there is none. Fixed size and trivially copyable,
// since every rank must pass the same byte count to the broadcast.
struct Announcement {
  static constexpr uint32_t kMagic = 0x42445242;  // "BRDB"
  uint32_t magic = kMagic;
  int32_t code = braidSuccess;  // rank 0's error while creating the id
  int32_t nranks = 0;           // rank 0's group size: every rank must agree
  braidUniqueId id = {};
  char message[244] = {};  // rank 0's error message, truncated
};

void copyMessage(const std::string& text, char (&out)[244]) {
  size_t n = std::min(text.size(), sizeof(out) - 1);
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

// Rank 0: the id, or rank 0's error written into the announcement (sent either way).
void announce(int nranks, Announcement* a) {
  a->nranks = nranks;
  Result<Config> config = Config::fromEnv();
  Result<bootstrap::UniqueId> id =
      config.isOk() ? bootstrap::createUniqueId(config->socketIfname, config->timeoutSeconds)
                    : Result<bootstrap::UniqueId>(config.status());
  if (id.isOk()) {
    id->writeTo(&a->id);
    return;
  }
  a->code = id.status().code();
  copyMessage(id.status().message(), a->message);
}

}  // namespace

Status initByBroadcast(braidComm_t* out, int nranks, int rank, const Broadcast& broadcast,
                       const std::string& tagPrefix, const std::string& api) {
  Announcement a;
  if (rank == 0) announce(nranks, &a);
  if (!broadcast(&a, sizeof(a))) {
    return Status(braidSystemError,
                  api + ": the broadcast of the unique id failed on rank " + std::to_string(rank));
  }
  if (a.magic != Announcement::kMagic) {
    return internalError(api +
                         ": the broadcast delivered something other than rank 0's "
                         "unique id (do all ranks call it at the same point?)");
  }
  if (a.code != braidSuccess) {
    a.message[sizeof(a.message) - 1] = '\0';
    return Status(static_cast<braidResult_t>(a.code),
                  api + ": rank 0 could not create the unique id: " + a.message);
  }
  if (a.nranks != nranks) {
    return invalidArgument(api + ": nranks " + std::to_string(nranks) + " on rank " +
                           std::to_string(rank) + " differs from rank 0's " +
                           std::to_string(a.nranks));
  }
  BRAID_INFO("%s: rank %d of %d joins with the unique id rank 0 broadcast", api.c_str(), rank,
             nranks);
  auto id = bootstrap::UniqueId::readFrom(a.id);
  if (!id.isOk()) return id.status().withContext(api);
  auto comm = Comm::create(*id, nranks, rank, tagPrefix);
  if (!comm.isOk()) return comm.status().withContext(api + ": rank " + std::to_string(rank));
  *out = publishComm(std::move(*comm));  // a checked handle: comm/handle_table.h
  if (*out == nullptr) {
    return Status(braidSystemError, api + ": too many live communicators in this process");
  }
  allowPeerDevices(toComm(*out));  // device buffers: comm/device_path.h
  return Status::ok();
}

}  // namespace braid::api
