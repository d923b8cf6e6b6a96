// Version, result strings and last-error reporting.
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "api/guard.h"
#include "core/log.h"

namespace braid::api {
namespace {
thread_local std::string threadLastError;
thread_local std::string returnedError;  // keeps braidGetLastError's pointer valid
}  // namespace

braidResult_t record(Comm* comm, const Status& status) {
  std::string message = status.message();
  if (status.peer() >= 0 &&
      message.find("rank " + std::to_string(status.peer())) == std::string::npos) {
    message += " (peer rank " + std::to_string(status.peer()) + ")";
  }
  threadLastError = message;
  if (comm != nullptr) comm->setLastError(message);
  BRAID_INFO("%s: %s", braidGetErrorString(status.code()), message.c_str());
  return status.code();
}

}  // namespace braid::api

using braid::api::guard;

extern "C" {

braidResult_t braidGetVersion(int* version) {
  return guard(nullptr, [&] {
    if (version == nullptr) return braid::invalidArgument("braidGetVersion: version is NULL");
    *version = BRAID_VERSION_CODE;
    return braid::Status::ok();
  });
}

braidResult_t braidMemAlloc(void** ptr, size_t size) {
  return guard(nullptr, [&] {
    if (ptr == nullptr) return braid::invalidArgument("braidMemAlloc: ptr is NULL");
    *ptr = nullptr;
    if (size == 0) return braid::invalidArgument("braidMemAlloc: size is 0");
    const long page = sysconf(_SC_PAGESIZE);
    if (posix_memalign(ptr, page > 0 ? size_t(page) : 4096, size) != 0) {
      *ptr = nullptr;
      return braid::Status(braidSystemError,
                           "braidMemAlloc: cannot allocate " + std::to_string(size) + " bytes");
    }
    return braid::Status::ok();
  });
}

braidResult_t braidMemFree(void* ptr) {
  std::free(ptr);
  return braidSuccess;
}

const char* braidGetErrorString(braidResult_t result) {
  switch (result) {
    case braidSuccess:
      return "no error";
    case braidUnhandledCudaError:
      return "unhandled cuda error";
    case braidSystemError:
      return "unhandled system error";
    case braidInternalError:
      return "internal error";
    case braidInvalidArgument:
      return "invalid argument";
    case braidInvalidUsage:
      return "invalid usage";
    case braidRemoteError:
      return "remote process exited or there was a network error";
    case braidInProgress:
      return "operation in progress";
    case braidTimeout:
      return "operation timed out";
    default:
      return "unknown result code";
  }
}

braidResult_t braidSetLastError(braidResult_t result, const char* message) {
  braid::api::threadLastError = message != nullptr ? message : "";
  return result;
}

void braidResetDebugInit(void) {
  try {
    braid::reloadLogSettings();
  } catch (...) {  // out of memory: the settings in force stay, as the call cannot say so
  }
}

const char* braidGetLastError(braidComm_t comm) {
  using namespace braid::api;
  if (comm == nullptr) {
    returnedError = threadLastError;
  } else {
    braid::Lease lease(comm);
    returnedError = lease.comm() != nullptr ? lease.comm()->lastError()
                                            : lease.error("braidGetLastError").message();
  }
  return returnedError.c_str();
}

}  // extern "C"
