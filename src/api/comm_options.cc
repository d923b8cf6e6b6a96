#include "api/comm_options.h"

#include <string>
#include <utility>

#include "comm/comm.h"
#include "comm/group.h"

namespace braid::api {

Status readConfig(const braidConfig_t* config, const char* api, InitOptions* out) {
  if (config == nullptr) return Status::ok();
  if (config->magic != BRAID_CONFIG_MAGIC || config->size < offsetof(braidConfig_t, commName)) {
    return invalidArgument(
        std::string(api) + ": config was not set up with BRAID_CONFIG_INITIALIZER (size " +
        std::to_string(config->size) + ", magic " + std::to_string(config->magic) + ")");
  }
  if (config->blocking != BRAID_CONFIG_UNDEF_INT) {
    if (config->blocking != 0 && config->blocking != 1) {
      return invalidArgument(std::string(api) + ": config->blocking " +
                             std::to_string(config->blocking) + " must be 0 or 1");
    }
    out->blocking = config->blocking == 1;
  }
  return Status::ok();
}

Status joinNowOrLater(JoinFn join, const InitOptions& options, braidComm_t* out, bool* inProgress) {
  *inProgress = false;
  const bool grouped = inGroup();
  if (options.blocking && !grouped) {
    auto made = join();
    if (!made.isOk()) return made.status();
    *out = publishComm(std::move(*made));
    if (*out == nullptr)
      return Status(braidSystemError, "too many live communicators in this process");
    return Status::ok();
  }
  *out = publishPending(std::move(join));
  if (*out == nullptr) {
    return Status(braidSystemError, "too many live communicators in this process");
  }
  if (grouped) return deferJoin(*out);  // started and awaited at braidGroupEnd
  BRAID_RETURN_IF_ERROR(startJoin(*out));
  *inProgress = true;
  return Status::ok();
}

}  // namespace braid::api
