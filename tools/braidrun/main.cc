// braidrun: starts N ranks of a program, on this machine or on several hosts
// (through a launcher command such as ssh), with the environment that
// braidCommInitFromEnv reads, and supervises them (see launcher.h).
#include <cstdio>
#include <string>

#include "braid.h"
#include "braidrun/launcher.h"
#include "braidrun/options.h"
#include "tools/cli/cli.h"

int main(int argc, char** argv) {
  using namespace braid::run;
  Options options;
  std::string error;
  if (!parseOptions(argc, argv, &options, &error)) {
    braid::cli::usageError("braidrun", error);
    return braid::cli::kUsageError;
  }
  if (options.showHelp) {
    std::fputs(usageText().c_str(), stdout);
    return 0;
  }
  if (options.showVersion) {
    std::printf("braidrun %d.%d.%d\n", BRAID_MAJOR, BRAID_MINOR, BRAID_PATCH);
    return 0;
  }
  return Launcher(std::move(options)).run();
}
