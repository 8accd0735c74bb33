// Register caps for more resident row-kernel blocks (compiler/
// occupancy_tuner): ptxas runs without a GPU, so the choice is tested here.
#include <gtest/gtest.h>

#include "codegen/kernel_codegen.h"
#include "compiler/occupancy_tuner.h"
#include "norm_fusions.h"
#include "ops/arith.h"
#include "ops/reduction_ops.h"
#include "ops/shape_ops.h"
#include "segment_test_utils.h"

namespace nvfuser {

namespace {
constexpr int64_t R = 16384, K = 4096;

TensorView* full(TensorView* t) {
  return expand(broadcast(t, {false, true}), {R, K});
}
TensorView* row(TensorView* w) {
  return expand(broadcast(w, {true, false}), {R, K});
}

// As benchmarks/norm_bench.py defines it, bf16 in and out.
void layerNorm(Fusion& f) {
  TensorView* x = defineTensor(f, {R, K}, DataType::BFloat16);
  TensorView* w = defineTensor(f, {K}, DataType::BFloat16);
  TensorView* b = defineTensor(f, {K}, DataType::BFloat16);
  TensorView* xf = castOp(x, DataType::Float)->asTensor();
  auto [var, mean] = varMean(xf, {1}, 0, false);
  TensorView* inv = unaryOp(UnaryOpType::Rsqrt,
                            binaryOp(BinaryOpType::Add, var,
                                     defineScalar(f, DataType::Double, 1e-5)))
                        ->asTensor();
  TensorView* y =
      binaryOp(BinaryOpType::Mul, binaryOp(BinaryOpType::Sub, xf, full(mean)),
               full(inv))
          ->asTensor();
  y = binaryOp(BinaryOpType::Add, binaryOp(BinaryOpType::Mul, y, row(w)),
               row(b))
          ->asTensor();
  f.addOutput(castOp(y, DataType::BFloat16));
}
}  // namespace

TEST(OccupancyTest, ResidentBlocksByRegisters) {
  EXPECT_EQ(residentBlocksByRegisters(56, 128), 9);
  EXPECT_EQ(residentBlocksByRegisters(49, 128), 9);  // allocated as 56
  EXPECT_EQ(residentBlocksByRegisters(48, 128), 10);
  EXPECT_EQ(residentBlocksByRegisters(32, 128), 16);  // threads limit it
  EXPECT_EQ(residentBlocksByRegisters(16, 32), 32);   // blocks limit it
  EXPECT_EQ(residentBlocksByRegisters(40, 256), 6);
}

TEST(OccupancyTest, SoftmaxIsCappedForOneMoreBlockWithoutSpilling) {
  Fusion f;
  defineSoftmax(f, R, K);
  KernelSource ks = generateKernel(f, "softmax", {});
  ASSERT_TRUE(ks.rowReduction);
  CompiledKernel plain = compileWithNvrtc(ks.code, ks.name, "sm_90");
  ASSERT_GT(plain.registers, 48);
  CompiledKernel k = compileForOccupancy(ks.code, ks.name, "sm_90",
                                         static_cast<int>(ks.block));
  EXPECT_EQ(k.maxRegisters, 48);
  EXPECT_LE(k.registers, 48);
  EXPECT_EQ(k.spillBytes, 0);
  EXPECT_GT(residentBlocksByRegisters(k.registers, 128),
            residentBlocksByRegisters(plain.registers, 128));
}

TEST(OccupancyTest, LayerNormKeepsItsRegistersWhenACapWouldSpill) {
  Fusion f;
  layerNorm(f);
  KernelSource ks = generateKernel(f, "layer_norm", {});
  ASSERT_TRUE(ks.rowReduction);
  CompiledKernel capped =
      compileWithNvrtc(ks.code, ks.name, "sm_90", false, 48);
  ASSERT_GT(capped.spillBytes, 0);
  CompiledKernel k = compileForOccupancy(ks.code, ks.name, "sm_90",
                                         static_cast<int>(ks.block));
  EXPECT_EQ(k.maxRegisters, 0);
  EXPECT_EQ(k.spillBytes, 0);
  EXPECT_GT(k.registers, 48);
}

TEST(OccupancyTest, ThreadLimitedKernelsAreLeftAlone) {
  const std::string src =
      "extern \"C\" __global__ void k(float* p) { p[threadIdx.x] *= 2.f; }";
  CompiledKernel k = compileForOccupancy(src, "k", "sm_90", 128);
  EXPECT_GT(k.registers, 0);
  EXPECT_EQ(k.maxRegisters, 0);
}

}  // namespace nvfuser
