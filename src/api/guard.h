// The C boundary. Every extern "C" body runs through guard(): it catches
// everything (no exception ever crosses the C ABI), turns a Status into a
// braidResult_t, and records the message for braidGetLastError.
#pragma once

#include <new>
#include <string>

#include "braid.h"
#include "comm/comm.h"
#include "core/status.h"

namespace braid::api {

inline Comm* toComm(braidComm_t comm) { return reinterpret_cast<Comm*>(comm); }
inline braidComm_t toHandle(Comm* comm) { return reinterpret_cast<braidComm_t>(comm); }

/// Remembers `status` as this thread's and `comm`'s last error; returns its code.
braidResult_t record(Comm* comm, const Status& status);

/// Counts a call on `comm` as in flight (Comm::enter/leave) for its whole length, error
/// recording included: braidCommAbort from another thread drains in-flight calls before it
/// deletes the communicator, and must not do so while this call still writes its last error.
class InFlight {
 public:
  explicit InFlight(Comm* comm) : comm_(comm) {
    if (comm_ != nullptr) comm_->enter();
  }
  ~InFlight() {
    if (comm_ != nullptr) comm_->leave();
  }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;

 private:
  Comm* const comm_;  // the caller's handle; valid until this call returns
};

template <typename Body>
braidResult_t guard(Comm* comm, Body&& body) noexcept {
  InFlight inFlight(comm);  // destroyed after record() below has run
  try {
    Status s = body();
    if (s.isOk()) return braidSuccess;
    return record(comm, s);
  } catch (const std::bad_alloc&) {
    return record(comm, Status(braidSystemError, "out of memory"));
  } catch (const std::exception& e) {
    return record(comm, internalError(std::string("unexpected exception: ") + e.what()));
  } catch (...) {
    return record(comm, internalError("unexpected exception"));
  }
}

}  // namespace braid::api
