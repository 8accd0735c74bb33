// Vector loads and stores are emitted only where the index expression, the
// input's strides and its alignment prove V lanes contiguous and aligned;
// horizontal kernels cover several loop domains. Every kernel here is also
// compiled with NVRTC.
#include <gtest/gtest.h>

#include "codegen/kernel_codegen.h"
#include "compiler/nvrtc_compiler.h"
#include "ops/arith.h"
#include "ops/reduction_ops.h"
#include "ops/shape_ops.h"
#include "segment_test_utils.h"

namespace nvfuser {

namespace {
KernelSource generateAndCompile(const Fusion& f,
                                const std::vector<TensorLayout>& layouts = {},
                                KernelCodegenOptions options = {},
                                const KernelPlanOptions& planOptions = {}) {
  KernelSource ks = generateKernel(f, "k", layouts, options, planOptions);
  EXPECT_GT(compileWithNvrtc(ks.code, ks.name, "sm_90").cubin.size(), 0u);
  return ks;
}

// out = x * 2 over bf16 [rows, cols].
void scaleFusion(Fusion& f, int64_t rows, int64_t cols) {
  TensorView* x = defineTensor(f, {rows, cols}, DataType::BFloat16);
  f.addOutput(castOp(
      binaryOp(BinaryOpType::Mul, x, defineScalar(f, DataType::Double, 2.0)),
      DataType::BFloat16));
}
}  // namespace

TEST(VectorizeTest, DenseBf16UsesSixteenByteAccesses) {
  Fusion f;
  scaleFusion(f, 4, 64);
  KernelSource ks = generateAndCompile(f);
  ASSERT_EQ(ks.families.size(), 1u);
  EXPECT_EQ(ks.families[0].vectorWidth, 8);
  EXPECT_EQ(ks.slots, 4 * 64 / 8);
  EXPECT_EQ(vectorLoads(ks.code), 1u);
  EXPECT_EQ(countOf(ks.code, "nvf_vstore(out0"), 1u);
  // The float result goes back to bf16 two lanes per instruction.
  EXPECT_EQ(countOf(ks.code, "nvf_f2b_lanes(v"), 1u);
}

TEST(VectorizeTest, CastToHalfConvertsLanesInPairs) {
  Fusion f;
  TensorView* x = defineTensor(f, {4, 64}, DataType::Float);
  f.addOutput(castOp(x, DataType::Half));
  KernelSource ks = generateAndCompile(f);
  EXPECT_EQ(ks.families[0].vectorWidth, 8);
  EXPECT_EQ(countOf(ks.code, "nvf_f2h_lanes(v"), 1u);
}

TEST(VectorizeTest, DisabledGivesOneElementPerThread) {
  Fusion f;
  scaleFusion(f, 4, 64);
  KernelPlanOptions options;
  options.vectorize = false;
  KernelSource ks = generateAndCompile(f, {}, {}, options);
  EXPECT_EQ(ks.families[0].vectorWidth, 1);
  EXPECT_EQ(vectorLoads(ks.code), 0u);
}

TEST(VectorizeTest, TransposedInputIsGathered) {
  Fusion f;
  scaleFusion(f, 4, 64);
  // Column-major storage: consecutive lanes are 4 elements apart.
  KernelSource ks = generateAndCompile(f, {TensorLayout{{1, 4}, true}});
  EXPECT_EQ(ks.families[0].vectorWidth, 8);  // the store stays vectorized
  EXPECT_EQ(vectorLoads(ks.code), 0u);
  EXPECT_NE(ks.code.find("+ u * 4]"), std::string::npos);
  EXPECT_EQ(countOf(ks.code, "nvf_vstore(out0"), 1u);
}

TEST(VectorizeTest, MisalignedInputIsReadElementwise) {
  Fusion f;
  scaleFusion(f, 4, 64);
  KernelSource ks = generateAndCompile(f, {TensorLayout{{64, 1}, false}});
  EXPECT_EQ(vectorLoads(ks.code), 0u);
  EXPECT_NE(ks.code.find("+ u]"), std::string::npos);
  // A row stride that is not a multiple of 8 breaks alignment too.
  Fusion g;
  TensorView* x = defineTensor(g, {4, 64}, DataType::BFloat16);
  g.addOutput(unaryOp(UnaryOpType::Neg, x));
  KernelSource ks2 = generateAndCompile(g, {TensorLayout{{66, 1}, true}});
  EXPECT_EQ(vectorLoads(ks2.code), 0u);
}

TEST(VectorizeTest, BroadcastInputIsLoadedOncePerVector) {
  Fusion f;
  TensorView* x = defineTensor(f, {4, 64}, DataType::Float);
  TensorView* row = defineTensor(f, {4}, DataType::Float);
  TensorView* b = broadcastInDim(row, {4, 64}, {0});
  f.addOutput(binaryOp(BinaryOpType::Add, x, b));
  KernelSource ks = generateAndCompile(f);
  EXPECT_EQ(ks.families[0].vectorWidth, 4);               // 16 bytes of float
  EXPECT_EQ(vectorLoads(ks.code), 1u);                    // x only
  EXPECT_EQ(countOf(ks.code, "nvf_vload_stream(v"), 0u);  // not a split sum
  EXPECT_NE(ks.code.find("in1[i0]"), std::string::npos);  // one scalar load
}

TEST(VectorizeTest, UnalignedSliceStartNarrowsTheVector) {
  Fusion f;
  TensorView* x = defineTensor(f, {4, 68}, DataType::BFloat16);
  f.addOutput(slice(x, {0, 4}, {4, 68}, {}));  // start 4: 8-byte aligned
  KernelSource ks = generateAndCompile(f);
  EXPECT_EQ(ks.families[0].vectorWidth, 4);
  EXPECT_EQ(vectorLoads(ks.code), 1u);
  Fusion g;
  TensorView* y = defineTensor(g, {4, 65}, DataType::BFloat16);
  g.addOutput(slice(y, {0, 1}, {4, 65}, {}));  // start 1: scalar
  EXPECT_EQ(generateAndCompile(g).families[0].vectorWidth, 1);
}

TEST(VectorizeTest, OddInnerExtentIsScalar) {
  Fusion f;
  scaleFusion(f, 5, 3);
  KernelSource ks = generateAndCompile(f);
  EXPECT_EQ(ks.families[0].vectorWidth, 1);
  EXPECT_EQ(ks.slots, 15);
  EXPECT_EQ(countOf(ks.code, "nvf_f2b_lanes(v"), 0u);  // one lane: no pairs
}

TEST(VectorizeTest, RotateHalfKeepsVectorsOnOneSideOfTheCat) {
  const int64_t T = 16, D = 128;
  Fusion f;
  TensorView* q = defineTensor(f, {2, 4, T, D}, DataType::BFloat16);
  TensorView* x1 = slice(q, {0, 0, 0, 0}, {2, 4, T, D / 2}, {});
  TensorView* x2 = slice(q, {0, 0, 0, D / 2}, {2, 4, T, D}, {});
  TensorView* rot = cat({unaryOp(UnaryOpType::Neg, x2)->asTensor(),
                         castOp(x1, DataType::Float)->asTensor()},
                        3);
  f.addOutput(castOp(rot, DataType::BFloat16));
  KernelSource ks = generateAndCompile(f);
  EXPECT_EQ(ks.families[0].vectorWidth, 8);
  EXPECT_EQ(vectorLoads(ks.code), 2u);  // one per cat branch
  EXPECT_NE(ks.code.find("if (i3 < 64)"), std::string::npos);
  EXPECT_EQ(countOf(ks.code, "nvf_vload_if(v"), 0u);
}

// The GQA backward's sum over the query heads of a group, each head
// rotated: inside the reduction loop the halves take no branch (each would
// wait for its own loads every iteration); their loads are predicated and
// one select picks the value.
namespace {
// The sum over 4 heads of rotate-half(g), g [2, 4, 16, 128].
void rotatedHeadSum(Fusion& f) {
  const int64_t T = 16, D = 128;
  TensorView* g = defineTensor(f, {2, 4, T, D}, DataType::BFloat16);
  TensorView* x = castOp(g, DataType::Float)->asTensor();
  TensorView* x1 = slice(x, {0, 0, 0, 0}, {2, 4, T, D / 2}, {});
  TensorView* x2 = slice(x, {0, 0, 0, D / 2}, {2, 4, T, D}, {});
  TensorView* rot =
      cat({unaryOp(UnaryOpType::Neg, x2)->asTensor(), x1}, 3);  // [2,4,T,D]
  TensorView* sum = reduction(ReductionOpType::Sum, rot, {1}, false);
  f.addOutput(castOp(sum, DataType::BFloat16));
}
}  // namespace

TEST(VectorizeTest, RotateHalfInsideASumLoopIsPredicated) {
  Fusion f;
  rotatedHeadSum(f);
  KernelSource ks = generateAndCompile(f);
  EXPECT_EQ(ks.families[0].vectorWidth, 8);
  EXPECT_EQ(countOf(ks.code, "nvf_vload_if(v"), 2u);
  EXPECT_EQ(ks.code.find("if (j"), std::string::npos) << ks.code;
  EXPECT_NE(ks.code.find(" < 64) ? "), std::string::npos) << ks.code;

  KernelCodegenOptions branches;  // NVFUSER_DISABLE=predicated_loads
  branches.predicatedLoads = false;
  KernelSource plain = generateAndCompile(f, {}, branches);
  EXPECT_EQ(countOf(plain.code, "nvf_vload_if(v"), 0u);
  EXPECT_NE(plain.code.find(" < 64) {"), std::string::npos) << plain.code;
}

// The predicated loads' other two forms compile too: one lane (a scalar
// nvf_load_if) and lanes gathered from a transposed input (one
// nvf_load_if per lane).
TEST(VectorizeTest, PredicatedScalarAndGatheredLoadsCompile) {
  Fusion f;
  rotatedHeadSum(f);
  KernelPlanOptions scalar;
  scalar.vectorize = false;
  KernelSource one = generateAndCompile(f, {}, {}, scalar);
  EXPECT_EQ(one.families[0].vectorWidth, 1);
  EXPECT_EQ(countOf(one.code, "= nvf_load_if(in0 + "), 2u) << one.code;
  // T and D swapped in memory: consecutive lanes are 16 elements apart.
  KernelSource gathered =
      generateAndCompile(f, {TensorLayout{{8192, 2048, 1, 16}, true}});
  EXPECT_EQ(gathered.families[0].vectorWidth, 8);
  EXPECT_EQ(countOf(gathered.code, "[u] = nvf_load_if(in0 + ("), 2u)
      << gathered.code;
}

TEST(VectorizeTest, MergeReshapeKeepsLanesWhenInnerExtentDivides) {
  Fusion f;
  TensorView* x = defineTensor(f, {2, 8, 16}, DataType::Half);
  f.addOutput(reshape(permute(x, {1, 0, 2}), {8, 32}));
  KernelSource ks = generateAndCompile(f);
  EXPECT_EQ(ks.families[0].vectorWidth, 8);
  EXPECT_EQ(vectorLoads(ks.code), 1u);
  // A split reshape whose inner extent (6) the width does not divide.
  Fusion g;
  TensorView* y = defineTensor(g, {4, 24}, DataType::Half);
  g.addOutput(reshape(y, {4, 4, 6}));
  EXPECT_LT(generateAndCompile(g).families[0].vectorWidth, 8);
}

TEST(VectorizeTest, HorizontalKernelHasOneFamilyPerLoopDomain) {
  Fusion f;
  TensorView* q = defineTensor(f, {2, 8, 64}, DataType::BFloat16);
  TensorView* k = defineTensor(f, {2, 2, 64}, DataType::Float);
  TensorView* c = defineTensor(f, {64}, DataType::BFloat16);
  f.addOutput(
      castOp(binaryOp(BinaryOpType::Mul, q, broadcastInDim(c, {2, 8, 64}, {2})),
             DataType::BFloat16));
  f.addOutput(
      binaryOp(BinaryOpType::Mul, k, broadcastInDim(c, {2, 2, 64}, {2})));
  KernelSource ks = generateAndCompile(f);
  ASSERT_EQ(ks.families.size(), 2u);
  EXPECT_EQ(ks.families[0].vectorWidth, 8);
  EXPECT_EQ(ks.families[1].vectorWidth, 4);
  EXPECT_EQ(ks.slots, 2 * 8 * 64 / 8 + 2 * 2 * 64 / 4);
  EXPECT_NE(ks.code.find("} else if (slot < " + std::to_string(ks.slots)),
            std::string::npos);
  LaunchParams lp = computeLaunchParams(ks, 132, 12);
  EXPECT_EQ(lp.block, 128);
  EXPECT_EQ(lp.grid, (ks.slots + 127) / 128);  // fewer slots than a wave
  // Large kernels get a block per 128 slots (the plan's full grid), or
  // exactly one full wave when the plan says so.
  EXPECT_TRUE(ks.fullGrid);
  KernelSource big = ks;
  big.slots = int64_t(1) << 30;
  EXPECT_EQ(computeLaunchParams(big, 132, 12).grid, (int64_t(1) << 30) / 128);
  big.fullGrid = false;
  EXPECT_EQ(computeLaunchParams(big, 132, 12).grid, 132 * 12);
}

}  // namespace nvfuser
