// Chained sums (codegen/value_builder_chained_sums.cpp): an add of two
// sums at one index, read by nothing else, keeps one accumulator per lane.
// Issue 16: Qwen2.5's RoPE backward held the sums over the query heads of
// its cos and sin gradients through the loop over the kv groups (134
// registers a thread; chained, 96).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codegen/kernel_codegen.h"
#include "emulated_run.h"
#include "fuzz_seeds.h"
#include "ops/arith.h"
#include "ops/reduction_ops.h"
#include "ops/shape_ops.h"

namespace nvfuser {

namespace {
void expectClose(const EmulatedRun& run) {
  ASSERT_EQ(run.atenError, "");
  ASSERT_EQ(run.outs.size(), run.ref.size());
  for (size_t k = 0; k < run.outs.size(); ++k) {
    EXPECT_EQ(run.outs[k].sizes(), run.ref[k].sizes()) << k;
    EXPECT_TRUE(at::allclose(run.outs[k].to(at::kDouble),
                             run.ref[k].to(at::kDouble), 1e-5, 1e-5))
        << "output " << k;
  }
}

TensorView* sum(TensorView* x, const std::vector<int64_t>& axes) {
  return reduction(ReductionOpType::Sum, x, axes, false);
}

TensorView* add(Val* a, Val* b) {
  return binaryOp(BinaryOpType::Add, a, b)->asTensor();
}

TensorView* mul(Val* a, Val* b) {
  return binaryOp(BinaryOpType::Mul, a, b)->asTensor();
}

// Qwen2.5's cos gradient, small: the sum over `heads` query heads of
// dq * q plus the sum over the kv groups of k times the group's sum of dk
// (perGroup heads each), [T, D]; and dk's group sums, an output.
void cosGradient(Fusion& f, int64_t heads, int64_t perGroup, int64_t T,
                 int64_t D) {
  const int64_t groups = heads / perGroup;
  TensorView* dq = defineTensor(f, {heads, T, D}, DataType::Float);
  TensorView* q = defineTensor(f, {heads, T, D}, DataType::Float);
  TensorView* dk = defineTensor(f, {heads, T, D}, DataType::Float);
  TensorView* k = defineTensor(f, {groups, T, D}, DataType::Float);
  TensorView* dkSum = sum(reshape(dk, {groups, perGroup, T, D}), {1});
  f.addOutput(dkSum);
  f.addOutput(add(sum(mul(dq, q), {0}), sum(mul(dkSum, k), {0})));
}

std::vector<at::Tensor> cosGradientInputs(int64_t heads, int64_t perGroup,
                                          int64_t T, int64_t D) {
  return {at::randn({heads, T, D}), at::randn({heads, T, D}),
          at::randn({heads, T, D}), at::randn({heads / perGroup, T, D})};
}

const Options kUnchained = Options().withOverrides({}, {"chained_sums"});

// f's kernels chain no sum and match ATen.
void expectNoChainedSum(Fusion& f, const std::vector<at::Tensor>& in) {
  const std::string code = generatedKernels(f, in);
  EXPECT_EQ(code.find("chained sum"), std::string::npos) << code;
  expectClose(runEmulatedAndAten(f, in));
}
}  // namespace

TEST(ChainedSumsTest, TheKvGroupsLoopStartsFromTheHeadsLoopsPartialSums) {
  // 5 x 16 elements in slots of 4: groups of lanes per slot, each lane a
  // share of the 20 heads and of the 5 kv groups. Chained, the heads
  // loop's accumulator is combined over the group once, after both loops.
  Fusion f;
  cosGradient(f, 20, 4, 5, 16);
  const std::vector<at::Tensor> in = cosGradientInputs(20, 4, 5, 16);
  const std::string chained = generatedKernels(f, in);
  EXPECT_EQ(occurrences(chained, "// chained sum: starts from"), 1u) << chained;
  EXPECT_NE(chained.find("nvf_group"), std::string::npos) << chained;
  const std::string separate = generatedKernels(f, in, kUnchained);
  EXPECT_EQ(separate.find("chained sum"), std::string::npos) << separate;
  EXPECT_EQ(occurrences(separate, "__shfl_xor_sync(nvf_group"),
            occurrences(chained, "__shfl_xor_sync(nvf_group") + 1)
      << separate;
  expectClose(runEmulatedAndAten(f, in));
  expectClose(runEmulatedAndAten(f, in, {}, kUnchained));
}

TEST(ChainedSumsTest, SumsOfOneLoopShareOneAccumulator) {
  Fusion f;
  TensorView* a = defineTensor(f, {6, 4, 8}, DataType::Float);
  TensorView* b = defineTensor(f, {6, 4, 8}, DataType::Float);
  f.addOutput(add(sum(a, {0}), sum(mul(b, b), {0})));
  const std::vector<at::Tensor> in = {at::randn({6, 4, 8}),
                                      at::randn({6, 4, 8})};
  const std::string code = generatedKernels(f, in);
  EXPECT_EQ(occurrences(code, "2 reductions in one loop"), 1u) << code;
  EXPECT_EQ(occurrences(code, "// chained sums: "), 1u) << code;
  expectClose(runEmulatedAndAten(f, in));
}

TEST(ChainedSumsTest, ASplitLoopChainsToOneThatIsNotSplitEitherWay) {
  // x's 64 rows make groups of lanes per slot; y's dim of one is no loop,
  // so each lane holds all of its sum. First split then whole: the split
  // partials are combined before the whole sum adds to them. First whole
  // then split: the group's first lane carries the whole sum.
  for (bool splitFirst : {true, false}) {
    Fusion f;
    TensorView* x = defineTensor(f, {64, 2, 4}, DataType::Float);
    TensorView* y = defineTensor(f, {1, 2, 4}, DataType::Float);
    TensorView* sx = sum(x, {0});
    TensorView* sy = sum(y, {0});
    f.addOutput(splitFirst ? add(sx, sy) : add(sy, sx));
    const std::vector<at::Tensor> in = {at::randn({64, 2, 4}),
                                        at::randn({1, 2, 4})};
    const std::string code = generatedKernels(f, in);
    ASSERT_NE(code.find("nvf_group"), std::string::npos) << code;
    EXPECT_EQ(occurrences(code, "// chained sum: starts from"), 1u) << code;
    EXPECT_EQ(code.find("nvf_k == 0 ? ") != std::string::npos, !splitFirst)
        << code;
    expectClose(runEmulatedAndAten(f, in));
  }
}

TEST(ChainedSumsTest, SumsReadElsewhereRoundedOrAveragedAreNotChained) {
  // A sum that is also an output, sums rounded to bfloat16 before the add
  // (chaining would drop the rounding) and means keep their own
  // accumulators.
  Fusion f;
  TensorView* a = defineTensor(f, {6, 4, 8}, DataType::Float);
  TensorView* b = defineTensor(f, {5, 4, 8}, DataType::Float);
  TensorView* c = defineTensor(f, {6, 4, 8}, DataType::BFloat16);
  TensorView* d = defineTensor(f, {5, 4, 8}, DataType::BFloat16);
  TensorView* sa = sum(a, {0});
  f.addOutput(sa);
  f.addOutput(add(sa, sum(b, {0})));
  f.addOutput(add(castOp(sum(c, {0}), DataType::BFloat16),
                  castOp(sum(d, {0}), DataType::BFloat16)));
  f.addOutput(add(reduction(ReductionOpType::Mean, a, {0}, false),
                  reduction(ReductionOpType::Mean, b, {0}, false)));
  const std::vector<at::Tensor> in = {at::randn({6, 4, 8}),
                                      at::randn({5, 4, 8}),
                                      at::randn({6, 4, 8}).to(at::kBFloat16),
                                      at::randn({5, 4, 8}).to(at::kBFloat16)};
  expectNoChainedSum(f, in);
}

TEST(ChainedSumsTest, IntegerAndDoubleSumsChainToo) {
  // Sums of int32 (accumulated and returned as int64) and of doubles.
  Fusion f;
  TensorView* a = defineTensor(f, {6, 4, 8}, DataType::Int32);
  TensorView* b = defineTensor(f, {3, 4, 8}, DataType::Int32);
  TensorView* c = defineTensor(f, {6, 4, 8}, DataType::Double);
  TensorView* d = defineTensor(f, {3, 4, 8}, DataType::Double);
  f.addOutput(add(sum(a, {0}), sum(b, {0})));
  f.addOutput(add(sum(c, {0}), sum(d, {0})));
  const std::vector<at::Tensor> in = {at::randint(-50, 50, {6, 4, 8}, at::kInt),
                                      at::randint(-50, 50, {3, 4, 8}, at::kInt),
                                      at::randn({6, 4, 8}, at::kDouble),
                                      at::randn({3, 4, 8}, at::kDouble)};
  const std::string code = generatedKernels(f, in);
  EXPECT_EQ(occurrences(code, "// chained sum: starts from"), 2u) << code;
  EmulatedRun run = runEmulatedAndAten(f, in);
  expectClose(run);
  EXPECT_TRUE(at::equal(run.outs.at(0), run.ref.at(0)));
}

TEST(ChainedSumsTest, TheAddReadAtShiftedIndicesChainsAtEach) {
  // A rotate-half of the added sums: the add is read at its own index and
  // at the other half's, each its own chain from the same loops' code.
  Fusion f;
  TensorView* a = defineTensor(f, {6, 4, 16}, DataType::Float);
  TensorView* b = defineTensor(f, {3, 4, 16}, DataType::Float);
  TensorView* s = add(sum(a, {0}), sum(b, {0}));
  TensorView* lo = slice(s, {0, 0}, {4, 8}, {1, 1});
  TensorView* hi = slice(s, {0, 8}, {4, 16}, {1, 1});
  TensorView* rotated = cat({unaryOp(UnaryOpType::Neg, hi)->asTensor(), lo}, 1);
  f.addOutput(add(s, rotated));
  const std::vector<at::Tensor> in = {at::randn({6, 4, 16}),
                                      at::randn({3, 4, 16})};
  const std::string code = generatedKernels(f, in);
  EXPECT_GE(occurrences(code, "// chained sum: starts from"), 2u) << code;
  expectClose(runEmulatedAndAten(f, in));
}

TEST(ChainedSumsTest, SumsReadTwiceOrWidenedOrReadByAReductionAreNot) {
  // A sum with a second reader, a double sum returned as float (it rounds
  // to float: chaining would skip that), and added sums that a column sum
  // reads (computed inside its loop, where a group of lanes could not
  // combine a split partial) each keep their own accumulators.
  Fusion f;
  TensorView* a = defineTensor(f, {6, 4, 8}, DataType::Float);
  TensorView* b = defineTensor(f, {5, 4, 8}, DataType::Float);
  TensorView* c = defineTensor(f, {6, 4, 8}, DataType::Double);
  TensorView* d = defineTensor(f, {5, 4, 8}, DataType::Double);
  TensorView* sa = sum(a, {0});
  f.addOutput(add(sa, sum(b, {0})));
  f.addOutput(mul(sa, sa));
  f.addOutput(
      add(reduction(ReductionOpType::Sum, c, {0}, false, DataType::Float),
          reduction(ReductionOpType::Sum, d, {0}, false, DataType::Float)));
  TensorView* e = defineTensor(f, {6, 4, 8}, DataType::Float);
  TensorView* g = defineTensor(f, {5, 4, 8}, DataType::Float);
  f.addOutput(sum(add(sum(e, {0}), sum(g, {0})), {0}));
  const std::vector<at::Tensor> in = {at::randn({6, 4, 8}),
                                      at::randn({5, 4, 8}),
                                      at::randn({6, 4, 8}, at::kDouble),
                                      at::randn({5, 4, 8}, at::kDouble),
                                      at::randn({6, 4, 8}),
                                      at::randn({5, 4, 8})};
  expectNoChainedSum(f, in);
}

TEST(ChainedSumsTest, SumsReadThroughTheSameViewsChain) {
  // Autograd's graph adds keepdim sums: add(set(broadcast(sum)), ...) on
  // both sides (torch.compile's Qwen2.5 backward: 128 registers a thread
  // unchained, 100 chained). Also squeezed, reshaped and permuted views,
  // each the same on both sides, the add at the views' index.
  Fusion f;
  TensorView* a = defineTensor(f, {6, 4, 8}, DataType::Float);
  TensorView* b = defineTensor(f, {3, 4, 8}, DataType::Float);
  auto keepdim = [](TensorView* s) {
    return set(broadcast(s, {true, false, false}));
  };
  f.addOutput(add(keepdim(sum(a, {0})), keepdim(sum(b, {0}))));
  TensorView* c = defineTensor(f, {5, 4, 1, 8}, DataType::Float);
  TensorView* d = defineTensor(f, {2, 4, 1, 8}, DataType::Float);
  auto viewed = [](TensorView* s) {
    return permute(reshape(squeeze(s, {1}), {2, 2, 8}), {2, 0, 1});
  };
  f.addOutput(add(viewed(sum(c, {0})), viewed(sum(d, {0}))));
  const std::vector<at::Tensor> in = {
      at::randn({6, 4, 8}), at::randn({3, 4, 8}), at::randn({5, 4, 1, 8}),
      at::randn({2, 4, 1, 8})};
  const std::string code = generatedKernels(f, in);
  EXPECT_EQ(occurrences(code, "// chained sum: starts from"), 2u) << code;
  expectClose(runEmulatedAndAten(f, in));
  expectClose(runEmulatedAndAten(f, in, {}, kUnchained));
}

TEST(ChainedSumsTest, SumsReadThroughDifferentOrSharedViewsAreNot) {
  // Views that map the add's index differently (a transpose against a
  // reshape of a square, two permutes apart), and a view read twice.
  Fusion f;
  TensorView* a = defineTensor(f, {6, 4, 4}, DataType::Float);
  TensorView* b = defineTensor(f, {3, 4, 4}, DataType::Float);
  f.addOutput(add(permute(sum(a, {0}), {1, 0}), sum(b, {0})));
  TensorView* c = defineTensor(f, {6, 2, 3, 2}, DataType::Float);
  TensorView* d = defineTensor(f, {3, 2, 3, 2}, DataType::Float);
  f.addOutput(
      add(permute(sum(c, {0}), {2, 1, 0}), permute(sum(d, {0}), {0, 1, 2})));
  TensorView* e = defineTensor(f, {6, 4, 4}, DataType::Float);
  TensorView* g = defineTensor(f, {3, 4, 4}, DataType::Float);
  TensorView* shared = set(sum(e, {0}));
  f.addOutput(add(shared, set(sum(g, {0}))));
  f.addOutput(mul(shared, shared));
  const std::vector<at::Tensor> in = {
      at::randn({6, 4, 4}),    at::randn({3, 4, 4}), at::randn({6, 2, 3, 2}),
      at::randn({3, 2, 3, 2}), at::randn({6, 4, 4}), at::randn({3, 4, 4})};
  expectNoChainedSum(f, in);
}

TEST(ChainedSumsTest, FuzzSeedsWithSumPairsMatchAten) {
  // Seeds 13 and 15 mod 16 end with a pair of added sums (random_fusion):
  // fuzz_fusions --device emu found none of them wrong.
  expectFuzzSeedsMatchOnTheEmulator({45, 47, 63, 95},
                                    &FuzzOutcome::chainedSumKernels);
}

}  // namespace nvfuser
