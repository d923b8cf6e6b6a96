// Fuzz target: the braidUniqueId a user hands to braidCommInitRank is opaque bytes that may
// come from anywhere (a file, a broadcast, a bug); UniqueId::readFrom must refuse anything
// braidGetUniqueId did not make, and what it accepts must survive writeTo/readFrom intact.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "bootstrap/unique_id.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  braidUniqueId id;
  std::memset(&id, 0, sizeof(id));
  std::memcpy(&id, data, std::min(size, sizeof(id)));
  auto parsed = braid::bootstrap::UniqueId::readFrom(id);
  if (!parsed.isOk()) return 0;
  if (!parsed->root.validate().isOk()) std::abort();
  braidUniqueId again;
  parsed->writeTo(&again);
  auto reparsed = braid::bootstrap::UniqueId::readFrom(again);
  if (!reparsed.isOk() || std::memcmp(&*reparsed, &*parsed, sizeof(*parsed)) != 0) std::abort();
  return 0;
}
