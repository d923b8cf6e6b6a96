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

}  // namespace braid::api
