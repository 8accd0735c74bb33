// The transpose strategy (scheduler/transpose_plan.h): pointwise segments
// that read an input along a dim other than the output's innermost go
// through 32 x 32 shared-memory tiles. Run by the CPU emulator (blocks of
// 256 threads with their barriers) against ATen.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "analysis/tensor_shape.h"
#include "emulated_run.h"
#include "ops/arith.h"
#include "ops/shape_ops.h"
#include "runtime/runtime_args.h"

namespace nvfuser {

namespace {

void expectEqual(const EmulatedRun& run) {
  expectCloseToAten(run, 1e-6);
}

}  // namespace

TEST(TransposeTest, APermutedCopyGoesThroughTilesAndMatchesAten) {
  // [B, M, N] -> [B, N, M] times 2, cast to bf16: x is read along N (its
  // contiguous dim) into the tile and written along M. Neither dim is a
  // multiple of 32 (partial tiles at both edges).
  const int64_t B = 2, M = 45, N = 70;
  Fusion f;
  TensorView* x = defineTensor(f, {B, M, N}, DataType::Float);
  TensorView* y = permute(x, {0, 2, 1});
  f.addOutput(castOp(binaryOp(BinaryOpType::Mul, y,
                              f.newScalar(DataType::Double, ScalarValue(2.0))),
                     DataType::BFloat16)
                  ->asTensor());
  std::vector<at::Tensor> in = {at::randn({B, M, N})};
  const std::string code = generatedKernels(f, in);
  EXPECT_NE(code.find("__shared__ float nvf_tile0[32][33];"), std::string::npos)
      << code;
  EXPECT_NE(code.find("nvf_tile0[tx][r]"), std::string::npos) << code;
  expectEqual(runEmulatedAndAten(f, in));
  // Switched off: the pointwise strategy, no tile, the same values.
  const Options off = Options().withOverrides({}, {"transpose_tiles"});
  EXPECT_EQ(generatedKernels(f, in, off).find("nvf_tile"), std::string::npos);
  expectEqual(runEmulatedAndAten(f, in, {}, off));
}

TEST(TransposeTest, OnlyInputsReadAcrossTheOutputAreStaged) {
  // out[b, n, m] = x[b, m, n] + z[b, n, m] + w[m]: x is staged; z is read
  // along the output's innermost dim already; w is a row broadcast.
  const int64_t B = 3, M = 64, N = 33;
  Fusion f;
  TensorView* x = defineTensor(f, {B, M, N}, DataType::Float);
  TensorView* z = defineTensor(f, {B, N, M}, DataType::Float);
  TensorView* w = defineTensor(f, {M}, DataType::Float);
  TensorView* sum =
      binaryOp(BinaryOpType::Add, permute(x, {0, 2, 1}), z)->asTensor();
  f.addOutput(
      binaryOp(BinaryOpType::Add, sum, broadcast(w, {true, true, false}))
          ->asTensor());
  std::vector<at::Tensor> in = {at::randn({B, M, N}), at::randn({B, N, M}),
                                at::randn({M})};
  const std::string code = generatedKernels(f, in);
  EXPECT_NE(code.find("1 input(s) staged"), std::string::npos) << code;
  expectEqual(runEmulatedAndAten(f, in));
}

TEST(TransposeTest, SmallOrUntransposedSegmentsStayPointwise) {
  // A dim under 32, and a permute that keeps the innermost dim.
  Fusion small;
  TensorView* a = defineTensor(small, {40, 8}, DataType::Float);
  small.addOutput(permute(a, {1, 0}));
  EXPECT_EQ(generatedKernels(small, {at::randn({40, 8})}).find("nvf_tile"),
            std::string::npos);
  Fusion heads;
  TensorView* h = defineTensor(heads, {4, 64, 64}, DataType::Float);
  heads.addOutput(castOp(permute(h, {1, 0, 2}), DataType::Half)->asTensor());
  EXPECT_EQ(generatedKernels(heads, {at::randn({4, 64, 64})}).find("nvf_tile"),
            std::string::npos);
}

TEST(TransposeTest, RandomPermutesMatchAten) {
  // Stress: random ranks, sizes and permutes of one or two inputs, some
  // strided (a transposed view as the input), checked on the emulator.
  std::mt19937 rng(2026);
  auto pick = [&](int n) { return static_cast<int>(rng() % unsigned(n)); };
  int tiled = 0;
  for (int trial = 0; trial < 16; ++trial) {
    const int rank = 2 + pick(2);
    std::vector<int64_t> shape;
    for (int d = 0; d < rank; ++d) {
      shape.push_back(d + 2 >= rank ? 30 + pick(40) : 1 + pick(3));
    }
    std::vector<int64_t> perm(rank);
    for (int d = 0; d < rank; ++d) {
      perm[d] = d;
    }
    std::shuffle(perm.begin(), perm.end(), rng);
    Fusion f;
    TensorView* x = defineTensor(f, shape, DataType::Float);
    TensorView* y = permute(x, perm);
    std::vector<int64_t> yShape = concreteShape(y);
    // z: row-major, or its last two dims swapped in memory.
    const bool swappedZ = pick(2) == 0;
    std::vector<int64_t> order(rank);
    for (int d = 0; d < rank; ++d) {
      order[d] = rank - 1 - d;  // strideOrder: 0 is the innermost
    }
    if (swappedZ) {
      std::swap(order[rank - 1], order[rank - 2]);
    }
    std::vector<std::optional<bool>> contiguity;
    for (int64_t e : yShape) {
      contiguity.push_back(e == 1 ? std::nullopt : std::optional<bool>(true));
    }
    TensorView* z = defineTensor(f, yShape, DataType::Float, contiguity, order);
    f.addOutput(binaryOp(BinaryOpType::Sub, y, z)->asTensor());
    f.addOutput(castOp(y, DataType::Double)->asTensor());
    at::Tensor xt = at::randn(shape);
    std::vector<int64_t> swapped = yShape;
    std::swap(swapped[rank - 1], swapped[rank - 2]);
    at::Tensor zt =
        swappedZ ? at::randn(swapped).transpose(-2, -1) : at::randn(yShape);
    const std::string code = generatedKernels(f, {xt, zt});
    tiled += code.find("nvf_tile") != std::string::npos;
    SCOPED_TRACE("trial " + std::to_string(trial) + "\n" + code);
    expectEqual(runEmulatedAndAten(f, {xt, zt}));
  }
  EXPECT_GE(tiled, 4);
}

}  // namespace nvfuser
