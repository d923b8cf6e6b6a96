// A program on the public API that uses the shared command-line header: allowed.
#include "tools/cli/cli.h"
