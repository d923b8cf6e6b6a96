// What a braidConfig_t asks of a new communicator, and how a new communicator is joined
// accordingly: at once, in the background (blocking = 0), or at braidGroupEnd.
#pragma once

#include "braid.h"
#include "comm/handle_table.h"
#include "core/status.h"

namespace braid::api {

struct InitOptions {
  bool blocking = true;
};

/// The options of a braidConfig_t the caller filled from BRAID_CONFIG_INITIALIZER. Unset
/// fields keep `*out`'s values; NULL keeps them all. Fields past the caller's `size` count as
/// unset, so an older header's smaller struct is read correctly.
Status readConfig(const braidConfig_t* config, const char* api, InitOptions* out);

/// Creates a communicator with `join` and publishes it in *out: at once when blocking and
/// outside a group; else *out is set at once and the join runs in the background
/// (*inProgress = true: the C call returns braidInProgress) or at braidGroupEnd.
Status joinNowOrLater(JoinFn join, const InitOptions& options, braidComm_t* out, bool* inProgress);

}  // namespace braid::api
