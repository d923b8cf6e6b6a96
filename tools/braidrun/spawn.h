// Starting one rank: fork, put the child in a process group of its own, wire
// its stdio, exec. An exec failure travels back to braidrun over a
// close-on-exec pipe, so that "no such program" is an error message from the
// launcher instead of N identical ones from N children.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "braidrun/output_forwarder.h"
#include "braidrun/signal_pipe.h"

namespace braid::run {

struct SpawnRequest {
  std::string programPath;        // as resolveProgram returned it
  std::vector<std::string> argv;  // argv[0] included
  std::vector<std::string> env;   // NAME=VALUE
  ChildOutput* output = nullptr;  // null: the rank writes straight to braidrun's stdout/stderr
  bool inheritStdin = false;      // false: the rank reads /dev/null
  const SignalPipe* signals = nullptr;  // whose saved dispositions the child restores
  int inheritFd = -1;  // a close-on-exec descriptor the rank keeps across exec (-1: none)
};

struct SpawnResult {
  pid_t pid = -1;           // also the rank's process group id
  bool execFailed = false;  // the program could not be started (child already reaped)
  std::string error;        // set when pid == -1
};

/// Starts one rank. Call with request.signals->blockSignals() in effect.
SpawnResult spawnRank(const SpawnRequest& request);

/// Finds `program` the way a shell would: as given when it contains a '/',
/// else in $PATH. Returns false with *error set when it is nowhere executable.
bool resolveProgram(const std::string& program, std::string* path, std::string* error);

}  // namespace braid::run
