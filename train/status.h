/*
 * A small error type for the training harness.
 *
 * The harness is an application on braid's public C API, so it cannot use the
 * library's internal Status. This one carries just a sentence: empty means
 * success. Every fallible function returns it (or fills an out-parameter and
 * returns it), and main() prints the sentence and exits non-zero.
 */
#pragma once

#include <string>
#include <utility>

#include "braid.h"

namespace braid::train {

class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status error(std::string message) { return Status(std::move(message)); }

  bool ok() const { return message_.empty(); }
  const std::string& message() const { return message_; }

 private:
  explicit Status(std::string message) : message_(std::move(message)) {
    if (message_.empty()) message_ = "unknown error";
  }
  std::string message_;
};

/// Turns a braid result into a Status naming what was being done (`what`).
inline Status checkBraid(braidResult_t result, braidComm_t comm, const std::string& what) {
  if (result == braidSuccess) return Status();
  std::string detail = braidGetLastError(comm);
  if (detail.empty()) detail = braidGetErrorString(result);
  return Status::error(what + ": " + detail);
}

}  // namespace braid::train

/// Returns the Status of `expr` from the enclosing function when it is an error.
#define TRAIN_RETURN_IF_ERROR(expr)          \
  do {                                       \
    ::braid::train::Status status_ = (expr); \
    if (!status_.ok()) return status_;       \
  } while (0)
