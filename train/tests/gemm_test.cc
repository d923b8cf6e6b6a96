/*
 * The blocked GEMM against the textbook double-precision loop, over shapes
 * that hit every edge of the blocking (1, odd, exactly a block, a block + 1)
 * and all four transpose combinations; and the property tensor and data
 * parallelism rely on: a column or row block of C computed alone is bitwise
 * equal to that block of the whole product.
 */
#include "train/gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "train/random.h"

namespace braid::train {
namespace {

std::vector<float> randomMatrix(int rows, int cols, uint64_t stream) {
  std::vector<float> m(static_cast<size_t>(rows) * cols);
  for (size_t i = 0; i < m.size(); ++i) m[i] = static_cast<float>(normalAt(7, stream, i));
  return m;
}

struct Shape {
  int m, n, k;
};

class GemmTest : public ::testing::TestWithParam<std::tuple<Shape, bool, bool, bool>> {};

TEST_P(GemmTest, MatchesReference) {
  auto [shape, transA, transB, accumulate] = GetParam();
  std::vector<float> a =
      transA ? randomMatrix(shape.k, shape.m, 1) : randomMatrix(shape.m, shape.k, 1);
  std::vector<float> b =
      transB ? randomMatrix(shape.n, shape.k, 2) : randomMatrix(shape.k, shape.n, 2);
  std::vector<float> c = randomMatrix(shape.m, shape.n, 3), expected = c;
  GemmArgs g;
  g.transA = transA, g.transB = transB, g.m = shape.m, g.n = shape.n, g.k = shape.k;
  g.a = a.data(), g.lda = transA ? shape.m : shape.k;
  g.b = b.data(), g.ldb = transB ? shape.k : shape.n;
  g.c = c.data(), g.ldc = shape.n, g.accumulate = accumulate;
  gemm(g);
  g.c = expected.data();
  gemmReference(g);
  for (size_t i = 0; i < c.size(); ++i) {
    // fp32 sums of k products of unit normals: error grows like sqrt(k)·eps.
    ASSERT_NEAR(c[i], expected[i], 1e-5 * (4 + std::sqrt(double(shape.k)) * 4)) << "at " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, GemmTest,
                         ::testing::Combine(::testing::Values(Shape{1, 1, 1}, Shape{3, 5, 7},
                                                              Shape{4, 16, 256}, Shape{65, 17, 257},
                                                              Shape{64, 1025, 3},
                                                              Shape{33, 40, 600}),
                                            ::testing::Bool(), ::testing::Bool(),
                                            ::testing::Bool()));

TEST(Gemm, ZeroDepthClearsOrKeeps) {
  std::vector<float> c = {1, 2, 3, 4};
  GemmArgs g;
  g.m = 2, g.n = 2, g.k = 0, g.c = c.data(), g.ldc = 2, g.accumulate = true;
  gemm(g);
  EXPECT_EQ(c, (std::vector<float>{1, 2, 3, 4}));
  g.accumulate = false;
  gemm(g);
  EXPECT_EQ(c, (std::vector<float>{0, 0, 0, 0}));
}

TEST(Gemm, BlocksOfTheProductAreBitwiseEqual) {
  const int m = 70, n = 90, k = 300;
  std::vector<float> a = randomMatrix(m, k, 4), b = randomMatrix(k, n, 5);
  std::vector<float> whole(static_cast<size_t>(m) * n);
  GemmArgs g;
  g.m = m, g.n = n, g.k = k, g.a = a.data(), g.lda = k, g.b = b.data(), g.ldb = n;
  g.c = whole.data(), g.ldc = n;
  gemm(g);
  // Columns [37, 61) alone (a tensor-parallel column shard), rows [5, 50) alone (a replica).
  std::vector<float> columns(static_cast<size_t>(m) * 24), rows(static_cast<size_t>(45) * n);
  GemmArgs col = g;
  col.n = 24, col.b = b.data() + 37, col.c = columns.data(), col.ldc = 24;
  gemm(col);
  GemmArgs row = g;
  row.m = 45, row.a = a.data() + 5 * k, row.c = rows.data();
  gemm(row);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < 24; ++j) ASSERT_EQ(columns[i * 24 + j], whole[i * n + 37 + j]);
  }
  for (int i = 0; i < 45; ++i) {
    for (int j = 0; j < n; ++j) ASSERT_EQ(rows[i * n + j], whole[(i + 5) * n + j]);
  }
}

}  // namespace
}  // namespace braid::train
