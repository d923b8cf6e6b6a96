// Printing every live communicator's flight recorder on a signal (`kill -USR1`).
//
// Opt-in: only when BRAID_FLIGHT_RECORDER_SIGNAL names a signal (USR1, USR2
// or a number) is a handler installed, when the first communicator registers;
// it is removed, and the previous disposition restored, when the last one
// unregisters. The handler is async-signal-safe: it writes one byte to a pipe
// (and calls a previously installed handler, if any); a helper thread reads
// the pipe and does the printing, under the registry lock, outside the
// signal context. With the variable unset nothing is installed or started.
#pragma once

namespace braid {

class FlightRecorder;

/// Adds / removes a recorder to those printed on the signal (any thread).
void registerFlightRecorder(const FlightRecorder* recorder);
void unregisterFlightRecorder(const FlightRecorder* recorder);

}  // namespace braid
