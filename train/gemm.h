/*
 * Single-precision matrix multiply for the MLP: C = op(A)·op(B) (+ C).
 *
 * Row-major, like the rest of the harness. op(X) is X or its transpose, which
 * covers the three products of a linear layer: Y = X·W, dW = Xᵀ·dY and
 * dX = dY·Wᵀ. The result is deterministic: element C[i][j] is summed over k in
 * the same order whatever M and N are and wherever (i, j) falls in a block, so
 * a column- or row-block of C computed alone (a tensor- or data-parallel shard)
 * is bitwise equal to the same block of the whole product.
 */
#pragma once

namespace braid::train {

struct GemmArgs {
  bool transA = false;  // op(A) = Aᵀ: A is stored K × M
  bool transB = false;  // op(B) = Bᵀ: B is stored N × K
  int m = 0, n = 0, k = 0;
  const float* a = nullptr;
  int lda = 0;  // row stride of A as stored
  const float* b = nullptr;
  int ldb = 0;
  float* c = nullptr;
  int ldc = 0;
  bool accumulate = false;  // C += op(A)·op(B) instead of C = op(A)·op(B)
};

/// Computes the product described by `args` (cache-blocked, vectorised).
void gemm(const GemmArgs& args);

/// The textbook triple loop in double precision: the tests' independent reference.
void gemmReference(const GemmArgs& args);

}  // namespace braid::train
