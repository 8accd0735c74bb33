// Slots in the order of the input a pointwise family reads most
// (scheduler/input_loop_order.h): a LitGPT RoPE forward reads qkv
// [B, T, heads, D] and writes q [B, heads, T, D]. Checked here: the
// element map the order is found with (analysis/element_map.h), the
// plan's order and when it keeps the outputs' order, and the reordered
// kernel's numerics on the emulator against ATen.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/element_map.h"
#include "codegen/kernel_codegen.h"
#include "emulated_run.h"
#include "fuzz_seeds.h"
#include "ops/arith.h"
#include "ops/reduction_ops.h"
#include "ops/shape_ops.h"
#include "scheduler/kernel_plan.h"

namespace nvfuser {

namespace {
constexpr const char* kReordered = "(the input read most)";
const Options kSwitchedOff = Options().withOverrides({}, {"input_loop_order"});

TensorView* tv(Val* v) {
  return v->asTensor();
}

// q of a fused qkv [B, T, G * 3 * D] rotated: q * cos + cat(-q2, q1) * sin
// with cos, sin [T, D], q [B, G, T, D] (LitGPT, one query head per group).
struct Rope {
  TensorView* qkv = nullptr;
  TensorView* out = nullptr;
};

Rope ropeForward(Fusion& f, int64_t B, int64_t T, int64_t G, int64_t D,
                 DataType dt = DataType::Float) {
  Rope r;
  r.qkv = defineTensor(f, {B, T, G * 3 * D}, dt);
  TensorView* cos = defineTensor(f, {T, D}, dt);
  TensorView* sin = defineTensor(f, {T, D}, dt);
  TensorView* x = permute(reshape(r.qkv, {B, T, G, 3, D}), {0, 2, 3, 1, 4});
  TensorView* q =
      reshape(slice(x, {0, 0, 0, 0, 0}, {B, G, 1, T, D}, {1, 1, 1, 1, 1}),
              {B, G, T, D});
  TensorView* q1 = slice(q, {0, 0, 0, 0}, {B, G, T, D / 2}, {1, 1, 1, 1});
  TensorView* q2 = slice(q, {0, 0, 0, D / 2}, {B, G, T, D}, {1, 1, 1, 1});
  TensorView* rot = cat({tv(castOp(unaryOp(UnaryOpType::Neg, q2), dt)), q1}, 3);
  auto table = [&](TensorView* t) {
    return expand(broadcast(t, {true, true, false, false}), {B, G, T, D});
  };
  r.out =
      tv(binaryOp(BinaryOpType::Add, binaryOp(BinaryOpType::Mul, q, table(cos)),
                  binaryOp(BinaryOpType::Mul, rot, table(sin))));
  if (dt != DataType::Float) {
    r.out = tv(castOp(r.out, dt));
  }
  f.addOutput(r.out);
  return r;
}

std::vector<at::Tensor> ropeInputs(int64_t B, int64_t T, int64_t G, int64_t D) {
  return {at::randn({B, T, G * 3 * D}), at::randn({T, D}), at::randn({T, D})};
}

KernelPlan planOf(Fusion& f, const KernelPlanOptions& options = {}) {
  KernelPlan plan;
  EXPECT_TRUE(planKernel(SchedulerType::PointWise, f, &plan, options));
  return plan;
}
}  // namespace

TEST(ElementMapTest, FollowsReshapesPermutesSlicesAndCats) {
  Fusion f;
  Rope r = ropeForward(f, 2, 5, 3, 8);
  // out[b, g, t, d] reads q at d first (q * cos, the add's first
  // operand): qkv [b, t, g * 3 * 8 + d].
  std::optional<std::vector<int64_t>> at =
      inputCoordinates(r.out, {1, 2, 3, 1}, r.qkv);
  ASSERT_TRUE(at.has_value());
  EXPECT_EQ(*at, (std::vector<int64_t>{1, 3, 2 * 24 + 1}));
  // The cos table is not where the walk looks first, but it is found.
  const Val* cos = f.inputs().at(1);
  at = inputCoordinates(r.out, {1, 2, 3, 6}, cos);
  ASSERT_TRUE(at.has_value());
  EXPECT_EQ(*at, (std::vector<int64_t>{3, 6}));
}

TEST(ElementMapTest, APadsFillAndAReductionReadNothing) {
  Fusion f;
  TensorView* a = defineTensor(f, {4, 6}, DataType::Float);
  TensorView* p = pad(a, {2, 0}, nullptr);  // last dim: 2 before
  f.addOutput(p);
  EXPECT_FALSE(inputCoordinates(p, {1, 1}, a).has_value());  // the fill
  EXPECT_EQ(*inputCoordinates(p, {1, 5}, a), (std::vector<int64_t>{1, 3}));
  TensorView* s = reduction(ReductionOpType::Sum, a, {1}, false);
  f.addOutput(s);
  EXPECT_FALSE(inputCoordinates(s, {2}, a).has_value());
}

TEST(InputLoopOrderTest, ARopeForwardTakesQkvsOrder) {
  Fusion f;
  ropeForward(f, 2, 8, 4, 32);  // rows of 32 floats: 128 bytes
  KernelPlan plan = planOf(f);
  ASSERT_EQ(plan.families.size(), 1u);
  EXPECT_EQ(plan.families[0].loop, (std::vector<int64_t>{2, 4, 8, 32}));
  EXPECT_EQ(plan.families[0].slotDims, (std::vector<int64_t>{0, 2, 1, 3}));
  EXPECT_NE(toString(plan).find("slots in loop dim order [0, 2, 1, 3]"),
            std::string::npos);
}

TEST(InputLoopOrderTest, AGqaOutputThatRepeatsItsGroupTakesTheQueryOrder) {
  // Output 0, v repeated over the P = 2 heads of its group, reads qkv at
  // the same element for both: its head dim does not move it, so the
  // order comes from output 1, q, which reads qkv at every head.
  const int64_t B = 2, T = 8, G = 2, P = 2, D = 32, H = G * P;
  Fusion f;
  TensorView* qkv = defineTensor(f, {B, T, G * (P + 2) * D}, DataType::Float);
  TensorView* x = permute(reshape(qkv, {B, T, G, P + 2, D}), {0, 2, 3, 1, 4});
  TensorView* v =
      slice(x, {0, 0, P + 1, 0, 0}, {B, G, P + 2, T, D}, {1, 1, 1, 1, 1});
  v = reshape(expand(v, {B, G, P, T, D}), {B, H, T, D});
  TensorView* q =
      reshape(slice(x, {0, 0, 0, 0, 0}, {B, G, P, T, D}, {1, 1, 1, 1, 1}),
              {B, H, T, D});
  f.addOutput(tv(unaryOp(UnaryOpType::Neg, v)));
  f.addOutput(tv(unaryOp(UnaryOpType::Neg, q)));
  KernelPlan plan = planOf(f);
  ASSERT_EQ(plan.families.size(), 1u);
  EXPECT_EQ(plan.families[0].slotDims, (std::vector<int64_t>{0, 2, 1, 3}));
  EmulatedRun run = runEmulatedAndAten(f, {at::randn({B, T, G * (P + 2) * D})});
  ASSERT_EQ(run.kernels, 1u);
  EXPECT_TRUE(at::equal(run.outs[0], run.ref[0]));
  EXPECT_TRUE(at::equal(run.outs[1], run.ref[1]));
}

TEST(InputLoopOrderTest, SwitchedOffPartLinesOrTheOutputsOrderKeepIt) {
  KernelPlanOptions off;
  off.inputLoopOrder = false;
  Fusion a;
  ropeForward(a, 2, 8, 4, 32);
  EXPECT_TRUE(planOf(a, off).families[0].slotDims.empty());
  Fusion shortRuns;  // 16 floats: runs of half a 128-byte line
  ropeForward(shortRuns, 2, 8, 4, 16);
  EXPECT_TRUE(planOf(shortRuns).families[0].slotDims.empty());
  Fusion partLines;  // 40 floats: 160 bytes, a line and a quarter
  ropeForward(partLines, 2, 8, 4, 40);
  EXPECT_TRUE(planOf(partLines).families[0].slotDims.empty());
  KernelPlanOptions anyRun;  // input_loop_order_everywhere
  anyRun.inputOrderMinRunBytes = 0;
  EXPECT_FALSE(planOf(partLines, anyRun).families[0].slotDims.empty());
  Fusion same;  // an input already in the output's order
  TensorView* x = defineTensor(same, {2, 8, 4, 32}, DataType::Float);
  same.addOutput(tv(unaryOp(UnaryOpType::Neg, x)));
  EXPECT_TRUE(planOf(same).families[0].slotDims.empty());
}

TEST(InputLoopOrderTest, AStridedInputSetsTheOrder) {
  // The same elementwise op, its input given as a permuted view: the plan
  // follows the strides the runtime hands it.
  Fusion f;
  TensorView* x = defineTensor(f, {2, 4, 8, 32}, DataType::Float,
                               {true, true, true, true}, {3, 1, 2, 0});
  f.addOutput(tv(unaryOp(UnaryOpType::Neg, x)));
  KernelPlanOptions options;
  options.inputStrides = {{1024, 32, 128, 1}};  // memory [2, 8, 4, 32]
  EXPECT_EQ(planOf(f, options).families[0].slotDims,
            (std::vector<int64_t>{0, 2, 1, 3}));
  const at::Tensor in = at::randn({2, 8, 4, 32}).permute({0, 2, 1, 3});
  EmulatedRun run = runEmulatedAndAten(f, {in});
  ASSERT_EQ(run.kernels, 1u);
  EXPECT_TRUE(at::equal(run.outs[0], run.ref[0]));
  EXPECT_NE(generatedKernels(f, {in}).find(kReordered), std::string::npos);
  EXPECT_EQ(generatedKernels(f, {in}, kSwitchedOff).find(kReordered),
            std::string::npos);
}

TEST(InputLoopOrderTest, AnInterleavedCatsOrderComesFirst) {
  // out [B, T, H, 2 * D] = permute(cat([-a, -b] as [B, H, 1, T, D], dim 2)):
  // in a's order the slots would go [B, H, T, 2D]; the cat's positions,
  // every D elements, order them instead (scheduler/interleaved_cat.h).
  const int64_t B = 2, H = 4, T = 8, D = 32;
  Fusion f;
  auto part = [&](TensorView* t) {
    return reshape(tv(unaryOp(UnaryOpType::Neg, t)), {B, H, 1, T, D});
  };
  TensorView* a = defineTensor(f, {B, H, T, D}, DataType::Float);
  TensorView* b = defineTensor(f, {B, H, T, D}, DataType::Float);
  TensorView* c = cat({part(a), part(b)}, 2);
  f.addOutput(reshape(permute(c, {0, 3, 1, 2, 4}), {B, T, H, 2 * D}));
  KernelPlan plan = planOf(f);
  EXPECT_FALSE(plan.interleavedCats.empty());
  EXPECT_TRUE(plan.families[0].slotDims.empty());
  KernelPlanOptions noCatOrder;
  noCatOrder.interleavedCatOrder = false;
  EXPECT_EQ(planOf(f, noCatOrder).families[0].slotDims,
            (std::vector<int64_t>{0, 2, 1, 3}));
}

TEST(InputLoopOrderTest, AnOrderedFamilyAfterAnotherMatchesAten) {
  // Family 0 (x [96], output order) takes slots 0..23, the rotated q's
  // family the rest: its slots are renumbered from its own first slot.
  const int64_t B = 2, T = 8, G = 3, D = 32;
  Fusion f;
  TensorView* x = defineTensor(f, {96}, DataType::Float);
  f.addOutput(tv(unaryOp(UnaryOpType::Neg, x)));
  ropeForward(f, B, T, G, D);
  KernelPlan plan = planOf(f);
  ASSERT_EQ(plan.families.size(), 2u);
  EXPECT_TRUE(plan.families[0].slotDims.empty());
  EXPECT_EQ(plan.families[1].slotDims, (std::vector<int64_t>{0, 2, 1, 3}));
  std::vector<at::Tensor> ins = {at::randn({96})};
  for (const at::Tensor& t : ropeInputs(B, T, G, D)) {
    ins.push_back(t);
  }
  EmulatedRun run = runEmulatedAndAten(f, ins);
  ASSERT_EQ(run.atenError, "");
  ASSERT_EQ(run.kernels, 1u);
  EXPECT_TRUE(at::equal(run.outs[0], run.ref[0]));
  EXPECT_TRUE(at::equal(run.outs[1], run.ref[1]));
}

TEST(InputLoopOrderTest, ReorderedRopeKernelsMatchAten) {
  // Float (4 lanes) and bf16 (8 lanes); the emulator's four blocks loop
  // over the slots, so every slot's remapped index is computed.
  for (DataType dt : {DataType::Float, DataType::BFloat16}) {
    Fusion f;
    ropeForward(f, 2, 40, 3, 64, dt);
    std::vector<at::Tensor> ins = ropeInputs(2, 40, 3, 64);
    if (dt == DataType::BFloat16) {
      for (at::Tensor& t : ins) {
        t = t.to(at::kBFloat16);
      }
    }
    EXPECT_NE(generatedKernels(f, ins).find(kReordered), std::string::npos);
    EmulatedRun run = runEmulatedAndAten(f, ins);
    ASSERT_EQ(run.atenError, "");
    ASSERT_EQ(run.kernels, 1u);
    EXPECT_TRUE(at::equal(run.outs[0], run.ref[0])) << toString(dt);
  }
}

TEST(InputLoopOrderTest, RandomFusionsInInputOrderMatchOnTheEmulator) {
  // fuzz_fusions' seeds 5 mod 16 end in a permute of two outer dims, and
  // seeds 1 mod 4 plan with NVFUSER_ENABLE=input_loop_order_everywhere.
  expectFuzzSeedsMatchOnTheEmulator({21, 37, 85, 117},
                                    &FuzzOutcome::inputOrderKernels);
}

}  // namespace nvfuser
