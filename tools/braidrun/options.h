// braidrun's command line: what the user asked for, validated, nothing run yet.
#pragma once

#include <string>
#include <vector>

#include "braidrun/host_list.h"
#include "braidrun/launch_template.h"

namespace braid::run {

inline constexpr int kMaxRanks = 1024;

inline constexpr const char* kDefaultLauncher = "ssh {host}";

struct Options {
  int nranks = 0;                     // -n/--np: how many ranks to start
  bool tagOutput = false;             // -t/--tag-output: prefix each line with "[rank] "
  double timeoutSeconds = 0;          // --timeout: 0 means no limit
  std::vector<std::string> extraEnv;  // -x VAR=VALUE (or -x VAR, its value here), in order
  std::vector<HostSlots> hosts;       // -H/--hosts or --hostfile; empty: all on this machine
  MapBy mapBy = MapBy::kSlot;         // --map-by slot|node
  LaunchTemplate launch;              // --launcher (kDefaultLauncher when hosts are given)
  std::string rootAddress;            // --root-addr: "" chooses (root_address.h)
  int rootPort = 0;                   // --root-port: 0 picks a free one
  std::vector<std::string> command;   // the program and its arguments
  bool showHelp = false;              // --help: print usage, run nothing
  bool showVersion = false;           // --version: print the version, run nothing
};

/// Parses argv (argv[0] is braidrun itself). On a malformed command line returns
/// false and sets *error to a sentence naming the offending option.
bool parseOptions(int argc, const char* const* argv, Options* options, std::string* error);

/// The text printed by --help.
std::string usageText();

}  // namespace braid::run
