// Background bootstrap servers, stopped and waited for when the process exits.
//
// A root server runs on its own thread and ends by itself, on success or at its
// deadline. The process may exit first: a rank that gave up sooner, a program that
// returns from main while the root still waits for a rank. A server nobody waits for
// would then run on while the process tears down its statics (OpenSSL's among them) and crash it.
// So every server is started here; at exit each is asked to stop, and the exit waits.
#pragma once

#include <functional>

namespace braid::bootstrap {

/// Runs `serve` on a new thread. At process exit `stop` is called from the exiting thread
/// and the exit waits for `serve` to return; `stop` must be safe to call concurrently
/// with `serve` and make it return promptly. A server still running kExitGraceSeconds
/// after `stop` is left behind rather than hanging the exit.
void startServerThread(std::function<void()> serve, std::function<void()> stop);

inline constexpr double kExitGraceSeconds = 2;

}  // namespace braid::bootstrap
