// Slots ordered by the sides of pads on the innermost elements
// (scheduler/innermost_branches.h): a RoPE backward's rotate-half is two
// pads of the head dim, so a warp of 8-lane threads covering two heads ran
// both pads' branches in turn. The plan's digit now separates the halves:
// checked here are the periods the walk finds (through views, shifts and
// merges; not through cats or reductions), the digit combined with a
// cat's, the warp-or-block rule, and the ordered kernels' numerics on the
// emulator.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/tensor_shape.h"
#include "codegen/kernel_codegen.h"
#include "emulated_run.h"
#include "ops/arith.h"
#include "ops/reduction_ops.h"
#include "ops/shape_ops.h"
#include "scheduler/innermost_branches.h"
#include "scheduler/interleaved_cat.h"
#include "scheduler/kernel_plan.h"

namespace nvfuser {

namespace {
constexpr const char* kWarps = "warps on one cat position";
constexpr const char* kBlocks = "blocks on one cat position";

// The gradient of rotate-half(x) along the last dim of `g` ([..., D]):
// pad(g[..., D/2:], (0, D/2)) + pad(-g[..., :D/2], (D/2, 0)), as
// torch.compile writes slice_backward.
TensorView* rotateHalfGrad(TensorView* g) {
  std::vector<int64_t> shape = concreteShape(g);
  const size_t last = shape.size() - 1;
  const int64_t d = shape[last], h = d / 2;
  std::vector<int64_t> zeros(shape.size(), 0), ones(shape.size(), 1);
  std::vector<int64_t> loStop = shape, hiStart = zeros;
  loStop[last] = h;
  hiStart[last] = h;
  TensorView* lo = slice(g, zeros, loStop, ones);
  TensorView* hi = slice(g, hiStart, shape, ones);
  TensorView* a = pad(hi, {0, h}, nullptr);
  TensorView* b =
      pad(unaryOp(UnaryOpType::Neg, lo)->asTensor(), {h, 0}, nullptr);
  return binaryOp(BinaryOpType::Add, a, b)->asTensor();
}

// A GQA-like backward: the rotated gradient summed over `heads` heads of
// [B, heads, T, S, D], next to a rotated [B, T, S, D] gradient.
void headSumAndRotated(Fusion& f, int64_t heads, int64_t D) {
  TensorView* h = defineTensor(f, {2, heads, 8, 16, D}, DataType::Float);
  f.addOutput(reduction(ReductionOpType::Sum, rotateHalfGrad(h), {1}, false));
  TensorView* q = defineTensor(f, {2, 8, 16, D}, DataType::Float);
  f.addOutput(rotateHalfGrad(q));
}

KernelPlan planOf(Fusion& f, SchedulerType type,
                  const KernelPlanOptions& options = {}) {
  KernelPlan plan;
  EXPECT_TRUE(planKernel(type, f, &plan, options));
  return plan;
}

std::string kernelCode(Fusion& f, SchedulerType type,
                       const KernelPlanOptions& options = {}) {
  return generateKernel(f, planOf(f, type, options), "k", {}).code;
}
}  // namespace

TEST(InnermostBranchTest, RotateHalfPadsArePeriodsOfTheHeadDim) {
  Fusion f;
  TensorView* g = defineTensor(f, {2, 4, 8, 128}, DataType::Float);
  TensorView* out = rotateHalfGrad(g);
  f.addOutput(out);
  std::vector<BranchPeriod> p = innermostBranchPeriods(out);
  ASSERT_EQ(p.size(), 2u);
  for (const BranchPeriod& b : p) {
    EXPECT_EQ(b.unit, 64);
    EXPECT_EQ(b.span, 128);
  }
}

TEST(InnermostBranchTest, PeriodsSurviveAPermuteAndAMergeIntoTheOutput) {
  // [B, H, T, D] -> [B, T, H, D] -> [B, T, H * D]: the head dim is the low
  // digit of the merged one.
  Fusion f;
  TensorView* g = defineTensor(f, {2, 4, 8, 128}, DataType::Float);
  TensorView* out =
      reshape(permute(rotateHalfGrad(g), {0, 2, 1, 3}), {2, 8, 512});
  f.addOutput(out);
  std::vector<BranchPeriod> p = innermostBranchPeriods(out);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].unit, 64);
  EXPECT_EQ(p[0].span, 128);
  // A permute that moves the last dim ends the walk.
  Fusion moved;
  TensorView* h = defineTensor(moved, {2, 128, 8}, DataType::Float);
  TensorView* o2 = permute(rotateHalfGrad(permute(h, {0, 2, 1})), {0, 2, 1});
  moved.addOutput(o2);
  EXPECT_TRUE(innermostBranchPeriods(o2).empty());
}

TEST(InnermostBranchTest, ShiftedPadsAndPartialRotaryCombine) {
  // Partial rotary (D = 80, 32 rotated): pad(pass, (32, 0)) +
  // pad(rotateHalf(rot), (0, 48)). Sides change every 16 elements.
  Fusion f;
  TensorView* g = defineTensor(f, {2, 4, 8, 80}, DataType::Float);
  TensorView* rot = slice(g, {0, 0, 0, 0}, {2, 4, 8, 32}, {1, 1, 1, 1});
  TensorView* pass = slice(g, {0, 0, 0, 32}, {2, 4, 8, 80}, {1, 1, 1, 1});
  TensorView* out = binaryOp(BinaryOpType::Add, pad(pass, {32, 0}, nullptr),
                             pad(rotateHalfGrad(rot), {0, 48}, nullptr))
                        ->asTensor();
  f.addOutput(out);
  std::optional<InterleavedCat> d = slotOrderDigit(f, 0, true, 32);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->innerElements, 16);
  EXPECT_EQ(d->extent, 5);
  EXPECT_TRUE(d->splitsPads);
  // Off, or runs under 32 bytes (8 floats at a boundary every 8): none.
  EXPECT_FALSE(slotOrderDigit(f, 0, false, 32).has_value());
  EXPECT_FALSE(slotOrderDigit(f, 0, true, 128).has_value());
}

TEST(InnermostBranchTest, CatsAndReductionsAreNotBranchesToOrderBy) {
  // A forward's rotate-half is a cat along the last dim: walked through,
  // not counted. Pads under a reduction are predicated in its loop.
  Fusion f;
  TensorView* x = defineTensor(f, {4, 8, 128}, DataType::Float);
  TensorView* lo = slice(x, {0, 0, 0}, {4, 8, 64}, {1, 1, 1});
  TensorView* hi = slice(x, {0, 0, 64}, {4, 8, 128}, {1, 1, 1});
  TensorView* fwd = cat({unaryOp(UnaryOpType::Neg, hi)->asTensor(), lo}, 2);
  f.addOutput(fwd);
  EXPECT_TRUE(innermostBranchPeriods(fwd).empty());
  TensorView* summed =
      reduction(ReductionOpType::Sum, rotateHalfGrad(x), {0}, false);
  f.addOutput(summed);
  EXPECT_TRUE(innermostBranchPeriods(summed).empty());
}

TEST(InnermostBranchTest, PadsJoinACatsDigit) {
  // LitGPT's qkv gradient with rotated parts: positions of 128 elements,
  // each split in halves: a digit of 64-element runs, 6 per period.
  const int64_t B = 2, H = 2, T = 8, D = 128;
  Fusion f;
  std::vector<TensorView*> parts;
  for (int k = 0; k < 3; ++k) {
    TensorView* g = defineTensor(f, {B, H, T, D}, DataType::Float);
    parts.push_back(reshape(rotateHalfGrad(g), {B, H, 1, T, D}));
  }
  TensorView* c = cat(parts, 2);
  f.addOutput(reshape(permute(c, {0, 3, 1, 2, 4}), {B, T, H * 3 * D}));
  std::optional<InterleavedCat> d = slotOrderDigit(f, 0, true, 32);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->innerElements, 64);
  EXPECT_EQ(d->extent, 6);
  EXPECT_EQ(d->sidesPerCatPosition, 2);  // halves counted fastest
  std::optional<InterleavedCat> catOnly = slotOrderDigit(f, 0, false, 32);
  ASSERT_TRUE(catOnly.has_value());
  EXPECT_EQ(catOnly->innerElements, 128);
  EXPECT_FALSE(catOnly->splitsPads);
  EXPECT_EQ(catOnly->sidesPerCatPosition, 1);
  // Halves of 256 bytes under a 512-byte minimum run: the cat's digit,
  // not none (a small partial rotary lost its order so).
  std::optional<InterleavedCat> coarse = slotOrderDigit(f, 0, true, 512);
  ASSERT_TRUE(coarse.has_value());
  EXPECT_EQ(coarse->innerElements, 128);
  EXPECT_FALSE(coarse->splitsPads);
}

TEST(InnermostBranchTest, WarpsOnPadSidesBlocksWhereReductionsLoop) {
  // Pointwise: warps (the halves' blocks stay together).
  Fusion f;
  TensorView* g = defineTensor(f, {2, 8, 16, 128}, DataType::Float);
  f.addOutput(rotateHalfGrad(g));
  KernelPlan plan = planOf(f, SchedulerType::PointWise);
  ASSERT_EQ(plan.interleavedCats.size(), 1u);
  EXPECT_FALSE(plan.interleavedCats[0].blockUniform);
  EXPECT_NE(kernelCode(f, SchedulerType::PointWise).find(kWarps),
            std::string::npos);
  // A GQA-like sum over 4 heads of the rotated gradient: blocks.
  Fusion gqa;
  headSumAndRotated(gqa, 4, 128);
  KernelPlan gp = planOf(gqa, SchedulerType::Reduction);
  ASSERT_FALSE(gp.interleavedCats.empty());
  EXPECT_TRUE(gp.interleavedCats[0].blockUniform);
  // A sum over a size-1 dim loops over nothing: warps.
  Fusion one;
  headSumAndRotated(one, 1, 128);
  KernelPlan op = planOf(one, SchedulerType::Reduction);
  ASSERT_FALSE(op.interleavedCats.empty());
  EXPECT_FALSE(op.interleavedCats.back().blockUniform);
  // Switched off: no digit from pads alone.
  KernelPlanOptions off;
  off.innermostBranchOrder = false;
  EXPECT_TRUE(planOf(f, SchedulerType::PointWise, off).interleavedCats.empty());
}

TEST(InnermostBranchTest, OrderedRotateHalfGradientsMatchAten) {
  // Float, 4 lanes: halves of 16 elements are runs of 4 slots; 8 runs fill
  // a warp. With the partial rotary shape too (sides every 16 of 80).
  Fusion f;
  TensorView* g = defineTensor(f, {2, 4, 8, 32}, DataType::Float);
  f.addOutput(rotateHalfGrad(g));
  const std::string code = kernelCode(f, SchedulerType::PointWise);
  EXPECT_NE(code.find(kWarps), std::string::npos);
  EmulatedRun run = runEmulatedAndAten(f, {at::randn({2, 4, 8, 32})});
  ASSERT_EQ(run.atenError, "");
  EXPECT_TRUE(at::equal(run.outs[0], run.ref[0]));

  Fusion partial;
  TensorView* p = defineTensor(partial, {2, 4, 9, 80}, DataType::Float);
  TensorView* rot = slice(p, {0, 0, 0, 0}, {2, 4, 9, 32}, {1, 1, 1, 1});
  TensorView* pass = slice(p, {0, 0, 0, 32}, {2, 4, 9, 80}, {1, 1, 1, 1});
  partial.addOutput(binaryOp(BinaryOpType::Add, pad(pass, {32, 0}, nullptr),
                             pad(rotateHalfGrad(rot), {0, 48}, nullptr)));
  EXPECT_NE(kernelCode(partial, SchedulerType::PointWise).find(kWarps),
            std::string::npos);
  EmulatedRun pr = runEmulatedAndAten(partial, {at::randn({2, 4, 9, 80})});
  ASSERT_EQ(pr.atenError, "");
  EXPECT_TRUE(at::equal(pr.outs[0], pr.ref[0]));
}

TEST(InnermostBranchTest, OrderedGqaSumMatchesAten) {
  Fusion f;
  headSumAndRotated(f, 4, 64);
  EXPECT_NE(kernelCode(f, SchedulerType::Reduction).find(kBlocks),
            std::string::npos);
  EmulatedRun run = runEmulatedAndAten(
      f, {at::randn({2, 4, 8, 16, 64}), at::randn({2, 8, 16, 64})});
  ASSERT_EQ(run.atenError, "");
  ASSERT_EQ(run.outs.size(), 2u);
  EXPECT_TRUE(at::allclose(run.outs[0], run.ref[0], 1e-5, 1e-5));
  EXPECT_TRUE(at::equal(run.outs[1], run.ref[1]));
}

TEST(InnermostBranchTest, PadSidesInABlockMatchAten) {
  // A qkv-like cat of rotated gradients, q summed over 2 heads (a loop:
  // blocks on one cat position, both halves in the block), float, 4 lanes.
  const int64_t B = 2, T = 16, G = 2, D = 64;
  Fusion f;
  TensorView* q = defineTensor(f, {B, G, 2, T, D}, DataType::Float);
  TensorView* k = defineTensor(f, {B, G, T, D}, DataType::Float);
  TensorView* qs =
      reduction(ReductionOpType::Sum, rotateHalfGrad(q), {2}, false);
  TensorView* c = cat({reshape(qs, {B, G, 1, T, D}),
                       reshape(rotateHalfGrad(k), {B, G, 1, T, D})},
                      2);
  f.addOutput(reshape(permute(c, {0, 3, 1, 2, 4}), {B, T, G * 2 * D}));
  KernelPlan plan;
  ASSERT_TRUE(planKernel(SchedulerType::Reduction, f, &plan, {}));
  ASSERT_EQ(plan.interleavedCats.size(), 1u);
  EXPECT_EQ(plan.interleavedCats[0].sidesPerCatPosition, 2);
  EXPECT_TRUE(plan.interleavedCats[0].blockUniform);
  EXPECT_NE(generateKernel(f, plan, "k", {}).code.find(kBlocks),
            std::string::npos);
  EmulatedRun run = runEmulatedAndAten(
      f, {at::randn({B, G, 2, T, D}), at::randn({B, G, T, D})});
  ASSERT_EQ(run.atenError, "");
  EXPECT_TRUE(at::allclose(run.outs[0], run.ref[0], 1e-5, 1e-5));
}

}  // namespace nvfuser
