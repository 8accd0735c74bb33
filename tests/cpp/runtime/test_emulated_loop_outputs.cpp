// Outputs stored inside a serial reduction's loop (scheduler/loop_outputs.h)
// and serial reductions of reduced values in one kernel, run by the CPU
// emulator against ATen. Issue 16: Qwen2.5's RoPE backward read dq twice
// (its own gradient's slots, then the cos and sin gradients' loop over the
// heads) in two kernels, because the cos gradient also sums the k gradient,
// itself a sum over the query heads of each group. The plans here are for a
// device of one SM of 32 threads, so the small tensors fill it.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "analysis/tensor_shape.h"
#include "emulated_run.h"
#include "fuzz_seeds.h"
#include "ops/arith.h"
#include "ops/reduction_ops.h"
#include "ops/shape_ops.h"
#include "runtime/runtime_args.h"

namespace nvfuser {

namespace {

const Options kSmallDevice = Options().withDevice(1, 32);

TensorView* mul(TensorView* a, TensorView* b) {
  return binaryOp(BinaryOpType::Mul, a, b)->asTensor();
}
TensorView* add(TensorView* a, TensorView* b) {
  return binaryOp(BinaryOpType::Add, a, b)->asTensor();
}

// rotate-half of x along its last dim (D): cat(-x[D/2:], x[:D/2]).
TensorView* rotateHalf(TensorView* x) {
  std::vector<int64_t> shape = concreteShape(x);
  const int64_t r = static_cast<int64_t>(shape.size());
  const int64_t d = shape.back();
  std::vector<int64_t> zero(r, 0), one(r, 1), mid = shape;
  mid.back() = d / 2;
  std::vector<int64_t> start(r, 0);
  start.back() = d / 2;
  TensorView* lo = slice(x, zero, mid, one);
  TensorView* hi = slice(x, start, shape, one);
  return cat({unaryOp(UnaryOpType::Neg, hi)->asTensor(), lo}, r - 1);
}

void expectClose(const EmulatedRun& run, double tol = 1e-4) {
  expectCloseToAten(run, tol);
}

// Lines of code holding `what` and not `unless`.
size_t lines(const std::string& code, const std::string& what,
             const std::string& unless) {
  size_t n = 0;
  size_t start = 0;
  while (start < code.size()) {
    size_t end = code.find('\n', start);
    end = end == std::string::npos ? code.size() : end;
    const std::string l = code.substr(start, end - start);
    n += l.find(what) != std::string::npos &&
         l.find(unless) == std::string::npos;
    start = end + 1;
  }
  return n;
}

// dq's own gradient ([T, H * D]: dq * cos + rotate(dq) * sin, heads moved
// inside) and the cos gradient (dq times q, [T, H, D] as the attention
// input's layout, summed over the heads).
void qwenLike(Fusion& f, int64_t H, int64_t T, int64_t D) {
  TensorView* dq = defineTensor(f, {H, T, D}, DataType::Float);
  TensorView* q = defineTensor(f, {T, H, D}, DataType::Float);
  TensorView* cos = defineTensor(f, {T, D}, DataType::Float);
  TensorView* sin = defineTensor(f, {T, D}, DataType::Float);
  TensorView* cb = broadcast(cos, {true, false, false});
  TensorView* sb = broadcast(sin, {true, false, false});
  TensorView* grad = add(mul(dq, cb), rotateHalf(mul(dq, sb)));
  f.addOutput(reshape(permute(grad, {1, 0, 2}), {T, H * D}));
  f.addOutput(reduction(ReductionOpType::Sum, mul(dq, permute(q, {1, 0, 2})),
                        {0}, false));
}

std::vector<at::Tensor> qwenInputs(int64_t H, int64_t T, int64_t D) {
  return {at::randn({H, T, D}), at::randn({T, H, D}), at::randn({T, D}),
          at::randn({T, D})};
}

}  // namespace

TEST(LoopOutputsTest, AGradientIsStoredInTheHeadLoopThatReadsItsInput) {
  const int64_t H = 6, T = 5, D = 16;
  Fusion f;
  qwenLike(f, H, T, D);
  const std::string code =
      generatedKernels(f, qwenInputs(H, T, D), kSmallDevice);
  // One kernel of one family (no family comments): dq loaded once per
  // head, its gradient stored in the loop of the cos gradient's sum.
  EXPECT_EQ(occurrences(code, "extern \"C\""), 1u) << code;
  EXPECT_EQ(occurrences(code, "// output 0 in this loop"), 1u) << code;
  EXPECT_EQ(occurrences(code, "// family"), 0u) << code;
  // dq: one plain load per head, the rotate-half's other half predicated.
  EXPECT_EQ(lines(code, ", in0 + ", "nvf_vload_if"), 1u) << code;
  EXPECT_NE(code.find("nvf_vstore(out0 + "), std::string::npos) << code;
  expectClose(runEmulatedAndAten(f, qwenInputs(H, T, D), {}, kSmallDevice));
}

TEST(LoopOutputsTest, DisabledOrOnAFullSizeDeviceTheGradientKeepsItsSlots) {
  const int64_t H = 6, T = 5, D = 16;
  Fusion f;
  qwenLike(f, H, T, D);
  const Options off = kSmallDevice.withOverrides({}, {"loop_outputs"});
  for (const Options& o : {off, Options()}) {
    const std::string code = generatedKernels(f, qwenInputs(H, T, D), o);
    EXPECT_EQ(code.find("in this loop"), std::string::npos) << code;
    EXPECT_EQ(occurrences(code, "// family"), 2u) << code;
    expectClose(runEmulatedAndAten(f, qwenInputs(H, T, D), {}, o));
  }
}

TEST(LoopOutputsTest, LanesOfAGroupStoreTheHeadsTheyTake) {
  // 32 heads over few slots: groups of 2 lanes per slot, each lane storing
  // the heads it sums. A second sum, over a dim of size 1, opens no loop:
  // every lane holds it, so only the group's first lane stores the output
  // kept in its "loop" ([D, T], another family's shape).
  const int64_t H = 32, T = 8, D = 16;
  Fusion f;
  qwenLike(f, H, T, D);
  TensorView* z = defineTensor(f, {1, T, D}, DataType::Float);
  TensorView* zz = mul(z, z);
  f.addOutput(reduction(ReductionOpType::Sum, zz, {0}, false));
  f.addOutput(permute(reshape(add(zz, z), {T, D}), {1, 0}));
  std::vector<at::Tensor> in = qwenInputs(H, T, D);
  in.push_back(at::randn({1, T, D}));
  const Options device = Options().withDevice(1, 64);
  const std::string code = generatedKernels(f, in, device);
  EXPECT_NE(code.find("const unsigned nvf_k = slot % 2;"), std::string::npos)
      << code;
  EXPECT_NE(code.find(" = nvf_k; r1 < 32; r1 += 2) {"), std::string::npos)
      << code;
  EXPECT_EQ(occurrences(code, "in this loop"), 2u) << code;
  EXPECT_NE(code.find("if (nvf_k == 0) {"), std::string::npos) << code;
  expectClose(runEmulatedAndAten(f, in, {}, device));
}

TEST(LoopOutputsTest, AGroupSumIsComputedInsideTheLoopOverGroups) {
  // k's gradient summed over the P query heads of each of G groups, then
  // the cos gradient sums it times k over the groups (a reduction of a
  // reduced value: one kernel), and k's own gradient ([T, G * D]) is
  // stored in that loop.
  const int64_t G = 3, P = 4, T = 5, D = 8;
  Fusion f;
  TensorView* dk = defineTensor(f, {G * P, T, D}, DataType::Float);
  TensorView* k = defineTensor(f, {T, G, D}, DataType::Float);
  TensorView* cos = defineTensor(f, {T, D}, DataType::Float);
  TensorView* summed =
      reduction(ReductionOpType::Sum, reshape(dk, {G, P, T, D}), {1}, false);
  TensorView* grad = mul(summed, broadcast(cos, {true, false, false}));
  f.addOutput(reshape(permute(grad, {1, 0, 2}), {T, G * D}));
  f.addOutput(reduction(ReductionOpType::Sum,
                        mul(summed, permute(k, {1, 0, 2})), {0}, false));
  std::vector<at::Tensor> in = {at::randn({G * P, T, D}), at::randn({T, G, D}),
                                at::randn({T, D})};
  const std::string code = generatedKernels(f, in, kSmallDevice);
  EXPECT_EQ(occurrences(code, "extern \"C\""), 1u) << code;
  EXPECT_EQ(occurrences(code, "// output 0 in this loop"), 1u) << code;
  expectClose(runEmulatedAndAten(f, in, {}, kSmallDevice));
  // Without loop outputs the chain is still one kernel.
  const Options off = kSmallDevice.withOverrides({}, {"loop_outputs"});
  EXPECT_EQ(occurrences(generatedKernels(f, in, off), "extern \"C\""), 1u);
  expectClose(runEmulatedAndAten(f, in, {}, off));
}

TEST(LoopOutputsTest, ChainsOfSerialReductionsStopAtThreeDeep) {
  // Each sum reduces the previous one's result over its outermost dim. The
  // generator nests a loop (and its own calls) per link, so a chain longer
  // than kMaxChainedReductions starts another kernel.
  Fusion f;
  TensorView* x = defineTensor(f, {2, 3, 2, 3, 2, 8}, DataType::Float);
  TensorView* t = x;
  for (int k = 0; k < 5; ++k) {
    t = reduction(ReductionOpType::Sum, mul(t, t), {0}, false);
  }
  f.addOutput(t);
  std::vector<at::Tensor> in = {at::randn({2, 3, 2, 3, 2, 8}) * 0.5};
  EXPECT_EQ(occurrences(generatedKernels(f, in), "extern \"C\""), 2u);
  expectClose(runEmulatedAndAten(f, in), 1e-3);
}

TEST(LoopOutputsTest, FuzzSeedsWithLoopOutputsMatchOnTheEmulator) {
  // Fuzz seeds that plan loop outputs (every fourth seed plans for a small
  // device): one alone, one with groups of lanes per slot, one with those
  // and shared reduction loops (`fuzz_fusions --features list`).
  expectFuzzSeedsMatchOnTheEmulator({231, 723, 2435},
                                    &FuzzOutcome::loopOutputKernels);
}

TEST(LoopOutputsTest, RandomViewsAndReductionsMatchAten) {
  // Stress: random sizes and dtypes, a loop output viewed through a random
  // permute and a merge of two of its dims (lanes contiguous in it or
  // not), reduced over random outer dims.
  std::mt19937 rng(1604);
  auto pick = [&](int n) { return static_cast<int>(rng() % unsigned(n)); };
  int stored = 0;
  for (int trial = 0; trial < 24; ++trial) {
    const int64_t A = 1 + pick(5), B = 1 + pick(6);
    const int64_t D = std::vector<int64_t>{2, 4, 8, 12, 16}[pick(5)];
    const DataType dt = std::vector<DataType>{
        DataType::Float, DataType::BFloat16, DataType::Half}[pick(3)];
    Fusion f;
    TensorView* x = defineTensor(f, {A, B, D}, dt);
    TensorView* y = defineTensor(f, {A, B, D}, DataType::Float);
    TensorView* xf = castOp(x, DataType::Float)->asTensor();
    TensorView* value =
        castOp(add(mul(xf, xf), y), dt)->asTensor();  // what is stored
    std::vector<int64_t> perm{0, 1, 2};
    std::shuffle(perm.begin(), perm.end(), rng);
    TensorView* viewed = permute(value, perm);
    std::vector<int64_t> s = concreteShape(viewed);
    if (pick(2) == 0) {
      viewed = reshape(viewed, {s[0] * s[1], s[2]});
    } else {
      viewed = reshape(viewed, {s[0], s[1] * s[2]});
    }
    f.addOutput(viewed);
    const std::vector<std::vector<int64_t>> axes{{0}, {1}, {0, 1}};
    f.addOutput(reduction(ReductionOpType::Sum, mul(xf, y), axes[pick(3)],
                          pick(2) == 0));
    std::vector<at::Tensor> in = {at::randn({A, B, D}).to(toAtenType(dt)),
                                  at::randn({A, B, D})};
    const std::string code = generatedKernels(f, in, kSmallDevice);
    stored += code.find("in this loop") != std::string::npos;
    SCOPED_TRACE("trial " + std::to_string(trial) + "\n" + code);
    expectClose(runEmulatedAndAten(f, in, {}, kSmallDevice),
                dt == DataType::Float ? 1e-4 : 1e-2);
  }
  EXPECT_GE(stored, 8);
}

}  // namespace nvfuser
