// Status and Result<T>: how errors travel inside braid.
//
// Every fallible internal function returns a [[nodiscard]] Status (or a
// Result<T>), never throws across module lines, and never aborts. A Status
// carries the braidResult_t code the C API will return, a sentence for
// braidGetLastError, and the peer rank at fault when there is one.
#pragma once

#include <string>
#include <utility>
#include <variant>

#include "braid.h"

namespace braid {

class [[nodiscard]] Status {
 public:
  Status() = default;  // success
  Status(braidResult_t code, std::string message, int peer = -1)
      : code_(code), message_(std::move(message)), peer_(peer) {}

  static Status ok() { return Status(); }

  bool isOk() const { return code_ == braidSuccess; }
  explicit operator bool() const { return isOk(); }
  braidResult_t code() const { return code_; }
  const std::string& message() const { return message_; }
  /// The rank at fault, or -1 when no single peer is to blame.
  int peer() const { return peer_; }

  /// Returns this status with `context` prepended to the message ("allreduce: ...").
  Status withContext(const std::string& context) const {
    if (isOk()) return *this;
    return Status(code_, context + ": " + message_, peer_);
  }

 private:
  braidResult_t code_ = braidSuccess;
  std::string message_;
  int peer_ = -1;
};

inline Status invalidArgument(std::string message) {
  return Status(braidInvalidArgument, std::move(message));
}
inline Status invalidUsage(std::string message) {
  return Status(braidInvalidUsage, std::move(message));
}
inline Status internalError(std::string message) {
  return Status(braidInternalError, std::move(message));
}
inline Status remoteError(std::string message, int peer) {
  return Status(braidRemoteError, std::move(message), peer);
}
inline Status timeoutError(std::string message, int peer = -1) {
  return Status(braidTimeout, std::move(message), peer);
}
/// A failed system call: appends strerror(err) to `what`.
Status systemError(const std::string& what, int err);

/// A value or the Status explaining why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {}  // NOLINT: implicit by design

  bool isOk() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return isOk() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  T& operator*() { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace braid

#define BRAID_CONCAT_INNER(a, b) a##b
#define BRAID_CONCAT(a, b) BRAID_CONCAT_INNER(a, b)

/// Returns from the enclosing function when `expr` (a Status) is an error.
#define BRAID_RETURN_IF_ERROR(expr)                  \
  do {                                               \
    ::braid::Status braid_status_ = (expr);          \
    if (!braid_status_.isOk()) return braid_status_; \
  } while (0)

/// `lhs = value of rexpr` (a Result<T>), or returns its Status.
#define BRAID_ASSIGN_OR_RETURN(lhs, rexpr)                 \
  auto BRAID_CONCAT(braid_result_, __LINE__) = (rexpr);    \
  if (!BRAID_CONCAT(braid_result_, __LINE__).isOk())       \
    return BRAID_CONCAT(braid_result_, __LINE__).status(); \
  lhs = std::move(BRAID_CONCAT(braid_result_, __LINE__)).value()
