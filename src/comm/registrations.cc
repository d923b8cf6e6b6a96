#include "comm/registrations.h"

#include <cstdio>
#include <string>

namespace braid {

Result<void*> Registrations::add(void* buff, size_t size) {
  auto entry = std::make_unique<Entry>(Entry{buff, size});
  Entry* handle = entry.get();  // a fresh address: never confused with another registration
  std::lock_guard<std::mutex> lock(mu_);
  entries_.emplace(handle, std::move(entry));
  return static_cast<void*>(handle);
}

Status Registrations::remove(void* handle) {
  std::lock_guard<std::mutex> lock(mu_);
  if (entries_.erase(static_cast<const Entry*>(handle)) == 1) return Status::ok();
  char text[32];
  std::snprintf(text, sizeof(text), "%p", handle);
  return invalidArgument(std::string("braidCommDeregister: handle ") + text +
                         " is not a registration of this communicator (never returned by "
                         "braidCommRegister on it, or already deregistered)");
}

size_t Registrations::count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

}  // namespace braid
