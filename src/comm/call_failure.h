// What a failed call does to its communicator, shared by the group engine
// (comm/engine.h) and the direct path (comm/direct_collective.h), so that a
// failure reads and behaves the same whichever ran the call.
#pragma once

#include <string>

#include "core/status.h"

namespace braid {

class Comm;

/// Ends the flight recorder's current stage with `error`, prints the recorder
/// (BRAID_DEBUG=WARN), marks `comm` failed (its peers are told) and records
/// the message as its last error. Take the recorder's snapshot first.
void markCallFailed(Comm& comm, const Status& error);

/// The timeout of a call on `rank` whose wait saw no progress for `seconds`;
/// `pending` says what it waited for.
Status noProgressError(const char* api, int rank, double seconds, const std::string& pending);

/// The error of a call stopped by braidCommAbort on `rank`.
Status abortCalledError(int rank);

/// `status` with "<api> on rank <rank>" in front of its message.
Status inCall(const Status& status, const char* api, int rank);

}  // namespace braid
