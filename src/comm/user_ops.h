// Reduction operators created on a communicator: braidRedOpCreatePreMulSum's
// sum_r(scalar_r * x_r). Each rank scales its own input by its own scalar, in the element
// type (fp16 and bf16 through fp32, rounded once back), and the collective then sums, so
// the scaling costs one pass over this rank's input and no algorithm needs to know of it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>

#include "braid.h"
#include "core/status.h"

namespace braid {

/// One operator: its element type and the scalar's bytes (host copy, read at creation).
struct PreMulSum {
  braidDataType_t type = braidFloat32;
  uint64_t scalar = 0;  // the scalar's bytes, typeSize(type) of them
};

class UserOps {
 public:
  /// A new operator value (braidNumOps and up) for `type`, scaling by the scalar at `scalar`.
  Result<braidRedOp_t> create(braidDataType_t type, const void* scalar);
  /// Releases `op`; an error naming it when this communicator did not create it.
  Status destroy(braidRedOp_t op);
  /// The operator `op` stands for, if this communicator created it.
  std::optional<PreMulSum> find(braidRedOp_t op) const;

 private:
  mutable std::mutex mu_;  // guards ops_ and next_
  std::map<int, PreMulSum> ops_;
  int next_ = braidNumOps;
};

/// dst[i] = scalar * src[i] for `count` elements of `op.type` (dst and src may be equal).
void scaleElements(const PreMulSum& op, const void* src, void* dst, size_t count);

}  // namespace braid
