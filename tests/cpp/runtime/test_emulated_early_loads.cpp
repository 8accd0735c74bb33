// Load order and branch-free simplifications in generated kernels. A RoPE
// backward's qkv gradient is a cat of parts, each part a rotate-half (two
// pads: two branches) plus a plain product; the product's loads came after
// both branches, so a warp waited for each branch's loads and then for its
// own (Llama-2 through torch.compile: 127.6 us, 107.2 with the plain loads
// first). torch.compile also hands cats with an empty part and pads of an
// empty slice (slice_backward of x[..., 128:]); those took a branch each.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codegen/kernel_codegen.h"
#include "compiler/nvrtc_compiler.h"
#include "emulated_run.h"
#include "ops/arith.h"
#include "ops/shape_ops.h"
#include "scheduler/kernel_plan.h"

namespace nvfuser {

namespace {
// rotate_half(x) * s + x * c over the last dim (16) of [4, 8, 16] floats.
TensorView* ropeGradient(TensorView* x, TensorView* c, TensorView* s) {
  TensorView* hi = slice(x, {0, 0, 8}, {4, 8, 16}, {});
  TensorView* lo = slice(x, {0, 0, 0}, {4, 8, 8}, {});
  TensorView* rot =
      binaryOp(BinaryOpType::Add, pad(hi, {0, 8}, nullptr),
               pad(unaryOp(UnaryOpType::Neg, lo)->asTensor(), {8, 0}, nullptr))
          ->asTensor();
  return binaryOp(BinaryOpType::Add, binaryOp(BinaryOpType::Mul, rot, s),
                  binaryOp(BinaryOpType::Mul, x, c))
      ->asTensor();
}

// cat([grad(q), grad(k)], 1): each part computed inside a branch.
void qkGradient(Fusion& f) {
  TensorView* q = defineTensor(f, {4, 8, 16}, DataType::Float);
  TensorView* k = defineTensor(f, {4, 8, 16}, DataType::Float);
  TensorView* c = defineTensor(f, {4, 8, 16}, DataType::Float);
  TensorView* s = defineTensor(f, {4, 8, 16}, DataType::Float);
  f.addOutput(cat({ropeGradient(q, c, s), ropeGradient(k, c, s)}, 1));
}

// The kernel function, without the device helpers before it; NVRTC
// compiles the whole translation unit first (the emulator's host compiler
// is not the GPU's).
std::string kernelCode(Fusion& f, const KernelCodegenOptions& options) {
  KernelPlan plan;
  EXPECT_TRUE(planKernel(SchedulerType::PointWise, f, &plan));
  const KernelSource ks = generateKernel(f, plan, "k", {}, options);
  EXPECT_GT(compileWithNvrtc(ks.code, ks.name, "sm_90").cubin.size(), 0u);
  return ks.code.substr(ks.code.find("extern \"C\""));
}

std::vector<at::Tensor> randoms(size_t n, at::IntArrayRef shape) {
  std::vector<at::Tensor> ts;
  for (size_t i = 0; i < n; ++i) {
    ts.push_back(at::randn(shape));
  }
  return ts;
}

void expectMatchesAten(Fusion& f, const std::vector<at::Tensor>& inputs) {
  EmulatedRun run = runEmulatedAndAten(f, inputs);
  ASSERT_EQ(run.atenError, "");
  ASSERT_EQ(run.kernels, 1u);
  for (size_t i = 0; i < run.ref.size(); ++i) {
    EXPECT_TRUE(at::allclose(run.outs[i], run.ref[i])) << "output " << i;
  }
}
}  // namespace

TEST(EarlyLoadsTest, APartsPlainLoadsComeBeforeItsRotateBranches) {
  Fusion f;
  qkGradient(f);
  // in2 is c: read by the plain product x * c of the first part.
  const std::string early = kernelCode(f, {});
  const size_t part = early.find("if (");  // the cat's first part
  ASSERT_NE(part, std::string::npos);
  const size_t rotate = early.find("if (", part + 1);
  const size_t cLoad = early.find("nvf_vload", part);
  ASSERT_NE(rotate, std::string::npos);
  EXPECT_LT(early.find("in2 +", cLoad), rotate) << early;
  KernelCodegenOptions late;
  late.earlyLoads = false;
  const std::string code = kernelCode(f, late);
  const size_t lateRotate = code.find("if (", code.find("if (") + 1);
  EXPECT_GT(code.find("in2 +"), lateRotate) << code;
  expectMatchesAten(f, randoms(4, {4, 8, 16}));
}

TEST(EarlyLoadsTest, TheTopLevelKeepsItsOrderUnlessEnabled) {
  // One rotate output, no cat around it: at a slot's top level the loads
  // stay where they are first used (hoisting them there cost 5-9% on
  // two-output RoPE forwards); NVFUSER_ENABLE=early_loads_everywhere
  // hoists them too.
  Fusion f;
  TensorView* x = defineTensor(f, {4, 8, 16}, DataType::Float);
  TensorView* c = defineTensor(f, {4, 8, 16}, DataType::Float);
  TensorView* s = defineTensor(f, {4, 8, 16}, DataType::Float);
  f.addOutput(ropeGradient(x, c, s));
  const std::string plain = kernelCode(f, {});
  EXPECT_GT(plain.find("in1 +"), plain.find("if ("));
  KernelCodegenOptions everywhere;
  everywhere.earlyLoadsEverywhere = true;
  const std::string hoisted = kernelCode(f, everywhere);
  EXPECT_LT(hoisted.find("in1 +"), hoisted.find("if (")) << hoisted;
  expectMatchesAten(f, randoms(3, {4, 8, 16}));
}

TEST(EarlyLoadsTest, ACatWithEmptyPartsIsItsOnePartWithoutABranch) {
  // cat([y, x[:, 16:]], 1) as torch.compile writes a slice_backward.
  Fusion f;
  TensorView* x = defineTensor(f, {4, 16}, DataType::Float);
  TensorView* y = unaryOp(UnaryOpType::Neg, x)->asTensor();  // computed
  f.addOutput(cat({y, slice(x, {0, 16}, {4, 16}, {})}, 1));
  const std::string code = kernelCode(f, {});
  EXPECT_EQ(code.find("if ("), std::string::npos) << code;
  expectMatchesAten(f, randoms(1, {4, 16}));
}

TEST(EarlyLoadsTest, TheOnePartMayComeAfterEmptyOnes) {
  // cat([x[:, :0], y, x[:, 16:]], 1): the part starts at offset 0 anyway.
  Fusion f;
  TensorView* x = defineTensor(f, {4, 16}, DataType::Float);
  TensorView* y = unaryOp(UnaryOpType::Exp, x)->asTensor();
  f.addOutput(cat(
      {slice(x, {0, 0}, {4, 0}, {}), y, slice(x, {0, 16}, {4, 16}, {})}, 1));
  EXPECT_EQ(kernelCode(f, {}).find("if ("), std::string::npos);
  expectMatchesAten(f, randoms(1, {4, 16}));
}

namespace {
// pad(x[:, at:at], widths) + x over x [4, 16]: the pad is all zeros.
void padOfNothingPlusX(Fusion& f, int64_t at,
                       const std::vector<int64_t>& widths) {
  TensorView* x = defineTensor(f, {4, 16}, DataType::Float);
  TensorView* empty = slice(x, {0, at}, {4, at}, {});
  f.addOutput(binaryOp(BinaryOpType::Add, pad(empty, widths, nullptr), x));
}
}  // namespace

TEST(EarlyLoadsTest, APadOfNothingIsItsPadValueWithoutABranch) {
  Fusion f;
  padOfNothingPlusX(f, 16, {16, 0});
  const std::string code = kernelCode(f, {});
  EXPECT_EQ(code.find("if ("), std::string::npos) << code;
  expectMatchesAten(f, randoms(1, {4, 16}));
  // At 3 the boundary splits a vector, but there is nothing to read on
  // either side of it: the lanes stay 4.
  Fusion unaligned;
  padOfNothingPlusX(unaligned, 3, {3, 13});
  KernelPlan plan;
  ASSERT_TRUE(planKernel(SchedulerType::PointWise, unaligned, &plan));
  const KernelSource ks = generateKernel(unaligned, plan, "k", {});
  EXPECT_EQ(ks.families[0].vectorWidth, 4);
  EXPECT_GT(compileWithNvrtc(ks.code, ks.name, "sm_90").cubin.size(), 0u);
  expectMatchesAten(unaligned, randoms(1, {4, 16}));
}

}  // namespace nvfuser
