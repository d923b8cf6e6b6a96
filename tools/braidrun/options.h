// braidrun's command line: what the user asked for, validated, nothing run yet.
#pragma once

#include <string>
#include <vector>

namespace braid::run {

inline constexpr int kMaxRanks = 1024;

struct Options {
  int nranks = 0;                     // -n/--np: how many local ranks to start
  bool tagOutput = false;             // -t/--tag-output: prefix each line with "[rank] "
  double timeoutSeconds = 0;          // --timeout: 0 means no limit
  std::vector<std::string> extraEnv;  // -x VAR=VALUE, in command-line order
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
