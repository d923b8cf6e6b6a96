// Fuzz target: BRAID_TOPO_FILE is read from disk at communicator start and by braid-topo /
// braid-sim, so topo::parse must refuse malformed text with an error, never crash or
// hang; and whatever it accepts must survive dump/parse unchanged (dump is its inverse).
#include <cstdint>
#include <cstdlib>
#include <string>

#include "topology/topo_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto graph = braid::topo::parse(text);
  if (!graph.isOk()) return 0;
  const std::string once = braid::topo::dump(*graph);
  auto again = braid::topo::parse(once);
  if (!again.isOk() || braid::topo::dump(*again) != once) std::abort();
  return 0;
}
