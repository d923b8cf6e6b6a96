#include "core/status.h"

#include <cstring>

namespace braid {

Status systemError(const std::string& what, int err) {
  return Status(braidSystemError, what + ": " + std::strerror(err));
}

}  // namespace braid
