// braidCommRegister / braidCommDeregister: the buffers an application registered with a
// communicator. braid's transports copy through their own buffers, so a registration only
// has to be remembered and checked (a deregistration must name a live one of this
// communicator); no call consults it.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>

#include "core/status.h"

namespace braid {

class Registrations {
 public:
  /// Records `buff` (`size` bytes); the handle to pass to remove().
  Result<void*> add(void* buff, size_t size);
  /// Forgets a handle of add(); an error naming it when it is not one of this communicator's.
  Status remove(void* handle);
  size_t count() const;

 private:
  struct Entry {
    void* buff;
    size_t size;
  };
  mutable std::mutex mu_;  // guards entries_: any thread may register
  std::map<const Entry*, std::unique_ptr<Entry>> entries_;
};

}  // namespace braid
