// braidrun: starts N ranks of a program, on this machine or on several hosts
// (through a launcher command such as ssh), with the environment that
// braidCommInitFromEnv reads, and supervises them (see launcher.h).
#include <cstdio>
#include <string>

#include "braid.h"
#include "braidrun/launcher.h"
#include "braidrun/options.h"

int main(int argc, char** argv) {
  using namespace braid::run;
  Options options;
  std::string error;
  if (!parseOptions(argc, argv, &options, &error)) {
    std::fprintf(stderr, "braidrun: %s (see braidrun --help)\n", error.c_str());
    return 2;  // a usage error, as getopt-based tools report it
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
