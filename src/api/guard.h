// The C boundary. Every extern "C" body runs through guard(): it catches
// everything (no exception ever crosses the C ABI), turns a Status into a
// braidResult_t, and records the message for braidGetLastError. Calls on a
// communicator run through guardComm(), which first proves the handle live
// (comm/handle_table.h) and holds it for the whole call.
#pragma once

#include <new>
#include <string>

#include "braid.h"
#include "comm/comm.h"
#include "comm/handle_table.h"
#include "core/status.h"

namespace braid::api {

/// The communicator of a live handle, or null (no lease: tests and internal use).
inline Comm* toComm(braidComm_t comm) { return peekComm(comm); }

/// Remembers `status` as this thread's and `comm`'s last error; returns its code.
braidResult_t record(Comm* comm, const Status& status);

template <typename Body>
braidResult_t guard(Comm* comm, Body&& body) noexcept {
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

/// guard() for a call on `handle`: a NULL, garbage or released handle is
/// braidInvalidArgument naming `api`; otherwise `body(Comm&)` runs while a lease keeps the
/// communicator alive (braidCommAbort from another thread waits for it to leave, error
/// recording included).
template <typename Body>
braidResult_t guardComm(braidComm_t handle, const char* api, Body&& body) noexcept {
  Lease lease(handle);  // destroyed after record() has run
  if (lease.comm() == nullptr) return guard(nullptr, [&] { return lease.error(api); });
  return guard(lease.comm(), [&] { return body(*lease.comm()); });
}

}  // namespace braid::api
