// Reductions in generated kernels: each thread loops over the reduced dims
// of its own output elements. Every kernel here compiles with NVRTC.
#include <gtest/gtest.h>

#include "codegen/pointwise_codegen.h"
#include "compiler/nvrtc_compiler.h"
#include "ops/arith.h"
#include "ops/reduction_ops.h"
#include "ops/shape_ops.h"
#include "segment_test_utils.h"

namespace nvfuser {

namespace {
KernelSource compile(const Fusion& f) {
  Decision d = canGeneratePointwise(f);
  EXPECT_TRUE(d.ok()) << d.reason();
  KernelSource ks = generatePointwiseKernel(f, "k", {});
  EXPECT_GT(compileWithNvrtc(ks.code, ks.name, "sm_90").cubin.size(), 0u);
  return ks;
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos;
       p = s.find(what, p + 1)) {
    ++n;
  }
  return n;
}
}  // namespace

TEST(ReductionCodegenTest, MiddleAxisSumLoopsInsideTheThread) {
  Fusion f;
  TensorView* x = defineTensor(f, {2, 8, 4, 16, 64}, DataType::BFloat16);
  TensorView* s = reduction(ReductionOpType::Sum, x, {2}, false);
  f.addOutput(castOp(s, DataType::BFloat16));
  KernelSource ks = compile(f);
  EXPECT_EQ(ks.families[0].numel, 2 * 8 * 16 * 64);
  EXPECT_EQ(ks.families[0].vectorWidth, 8);  // along the kept innermost dim
  EXPECT_EQ(count(ks.code, "< 4; ++r"), 1u);
  EXPECT_EQ(count(ks.code, "nvf_vload(v"), 1u);  // inside the loop
}

TEST(ReductionCodegenTest, EveryReductionKindCompiles) {
  for (ReductionOpType op :
       {ReductionOpType::Sum, ReductionOpType::Max, ReductionOpType::Min,
        ReductionOpType::Prod, ReductionOpType::Mean}) {
    Fusion f;
    TensorView* x = defineTensor(f, {6, 5, 8}, DataType::Float);
    TensorView* i = defineTensor(f, {6, 8}, DataType::Int32);
    f.addOutput(reduction(op, x, {0, 1}, false));
    if (op != ReductionOpType::Mean) {
      f.addOutput(reduction(op, i, {0}, true));
    }
    KernelSource ks = compile(f);
    EXPECT_NE(ks.code.find("for (unsigned r"), std::string::npos);
  }
}

TEST(ReductionCodegenTest, VarMeanIsTwoPass) {
  Fusion f;
  TensorView* x = defineTensor(f, {32, 16}, DataType::Half);
  auto [var, mean] = varMean(x, {0}, 1, false);
  f.addOutput(var);
  f.addOutput(mean);
  KernelSource ks = compile(f);
  EXPECT_EQ(count(ks.code, "< 32; ++r"), 2u);  // mean, then deviations
  EXPECT_NE(ks.code.find("/ (float)31"), std::string::npos);
}

TEST(ReductionCodegenTest, RowReductionIsNotGenerated) {
  Fusion f;
  TensorView* x = defineTensor(f, {16, 256}, DataType::Float);
  f.addOutput(reduction(ReductionOpType::Sum, x, {1}, false));
  Decision d = canGeneratePointwise(f);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.reason().find("reduces the innermost dim"), std::string::npos);
}

TEST(ReductionCodegenTest, BroadcastBackOnlyForSmallReductions) {
  auto build = [](Fusion& f, int64_t r) {
    TensorView* x = defineTensor(f, {r, 64}, DataType::Float);
    TensorView* m = reduction(ReductionOpType::Max, x, {0}, true);
    f.addOutput(binaryOp(BinaryOpType::Sub, x, expand(m, {r, -1})));
  };
  Fusion small;
  build(small, 8);  // recomputing 8 elements per output is cheap
  compile(small);
  Fusion large;
  build(large, 1024);
  Decision d = canGeneratePointwise(large);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.reason().find("broadcasts a reduction of 1024"),
            std::string::npos);
}

TEST(ReductionCodegenTest, ReducedValuesFeedACat) {
  // The LitGPT backward pattern: GQA sums concatenated with a pass-through.
  Fusion f;
  TensorView* g = defineTensor(f, {2, 4, 3, 64}, DataType::Float);
  TensorView* q = defineTensor(f, {2, 4, 64}, DataType::Float);
  TensorView* s = reduction(ReductionOpType::Sum, g, {2}, false);
  f.addOutput(cat({q, s}, 2));
  KernelSource ks = compile(f);
  EXPECT_EQ(ks.families.size(), 1u);
  EXPECT_EQ(count(ks.code, "< 3; ++r"), 1u);
}

}  // namespace nvfuser
