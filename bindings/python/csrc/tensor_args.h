/*
 * From c10d arguments to braid arguments: element types, reduction operators,
 * and the checks that turn bad tensors into clear errors before anything is
 * queued (so every rank's queue stays in step).
 *
 * Data-moving collectives (broadcast, gather, all-to-all, send, ...) move
 * bytes: any dtype works, including those braid cannot reduce (bool, int16,
 * complex). Reductions need a braid element type and operator.
 */
#ifndef BRAID_BINDINGS_PYTHON_TENSOR_ARGS_H_
#define BRAID_BINDINGS_PYTHON_TENSOR_ARGS_H_

#include <ATen/ATen.h>
#include <braid.h>

#include <string>
#include <torch/csrc/distributed/c10d/Types.hpp>
#include <vector>

namespace braid::torch_backend {

/// The braid element type for reducing `type`, or throws naming `api` and the dtype.
inline braidDataType_t reductionType(at::ScalarType type, const char* api) {
  switch (type) {
    case at::kChar:
      return braidInt8;
    case at::kByte:
      return braidUint8;
    case at::kInt:
      return braidInt32;
    case at::kUInt32:
      return braidUint32;
    case at::kLong:
      return braidInt64;
    case at::kUInt64:
      return braidUint64;
    case at::kHalf:
      return braidFloat16;
    case at::kFloat:
      return braidFloat32;
    case at::kDouble:
      return braidFloat64;
    case at::kBFloat16:
      return braidBfloat16;
    case at::kFloat8_e4m3fn:  // OCP e4m3 (no infinities), braid's and NCCL's e4m3
      return braidFloat8e4m3;
    case at::kFloat8_e5m2:
      return braidFloat8e5m2;
    default:
      TORCH_CHECK(false, "braid: ", api, " cannot reduce tensors of dtype ", type,
                  "; braid reduces int8, uint8, int32, uint32, int64, uint64, float16, "
                  "bfloat16, float32, float64, float8_e4m3fn and float8_e5m2");
  }
}

/// The braid operator for `op`, or throws naming `api` and the operator.
inline braidRedOp_t reductionOp(const c10d::ReduceOp& op, const char* api) {
  switch (op.op_) {
    case c10d::ReduceOp::SUM:
      return braidSum;
    case c10d::ReduceOp::AVG:
      return braidAvg;
    case c10d::ReduceOp::PRODUCT:
      return braidProd;
    case c10d::ReduceOp::MIN:
      return braidMin;
    case c10d::ReduceOp::MAX:
      return braidMax;
    default:
      TORCH_CHECK(false, "braid: ", api, " does not support ReduceOp ", static_cast<int>(op.op_),
                  " (braid reduces with SUM, AVG, PRODUCT, MIN and MAX; BAND, BOR, BXOR and "
                  "PREMUL_SUM are not available)");
  }
}

/// Rejects tensors braid cannot address: sparse ones, and devices other than CPU and CUDA.
inline void checkTensor(const at::Tensor& t, const char* api) {
  TORCH_CHECK(t.defined(), "braid: ", api, " got an undefined tensor");
  TORCH_CHECK(t.device().is_cpu() || t.is_cuda(), "braid: ", api, " got a tensor on ", t.device(),
              "; braid takes CPU and CUDA tensors");
  TORCH_CHECK(t.layout() == at::kStrided, "braid: ", api,
              " got a sparse tensor; braid moves dense tensors only");
}

/// Throws unless `t` lives where `like` does: one operation runs on one device.
inline void checkSameDevice(const at::Tensor& t, const at::Tensor& like, const char* api,
                            const char* what) {
  TORCH_CHECK(t.device() == like.device(), "braid: ", api, ": ", what, " is on ", t.device(),
              " but the operation's first tensor is on ", like.device(),
              "; every tensor of one operation must be on the same device");
}

/// Checks that every tensor of `list` matches `like` in dtype and element count.
inline void checkSameShape(const std::vector<at::Tensor>& list, const at::Tensor& like,
                           const char* api, const char* what) {
  for (size_t i = 0; i < list.size(); ++i) {
    checkTensor(list[i], api);
    checkSameDevice(list[i], like, api, what);
    TORCH_CHECK(list[i].scalar_type() == like.scalar_type(), "braid: ", api, ": ", what, "[", i,
                "] has dtype ", list[i].scalar_type(), " but the input has ", like.scalar_type());
    TORCH_CHECK(list[i].numel() == like.numel(), "braid: ", api, ": ", what, "[", i, "] has ",
                list[i].numel(), " elements but the input has ", like.numel());
  }
}

/// Throws unless `list` has exactly `expected` entries.
inline void checkCount(size_t actual, size_t expected, const char* api, const char* what) {
  TORCH_CHECK(actual == expected, "braid: ", api, " expects ", expected, " ", what, ", got ",
              actual);
}

inline size_t bytesOf(const at::Tensor& t) { return t.numel() * t.element_size(); }

}  // namespace braid::torch_backend

#endif  // BRAID_BINDINGS_PYTHON_TENSOR_ARGS_H_
