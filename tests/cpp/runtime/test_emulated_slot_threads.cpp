// Serial-reduction families with long loops and few slots get a group of
// threads per slot (scheduler/slot_threads.h), and reductions over the
// same elements of one slot share a loop (value_builder_shared_loops.cpp).
// Issue 16: Qwen2.5's RoPE backward summed 32 heads per slot in 65536
// threads, and read dq and q twice, once for the cos gradient and once for
// the sin gradient.
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
std::string kernelOf(const Fusion& f) {
  const std::string code = generateKernel(f, "k", {}).code;
  return code.substr(code.find("extern \"C\""));
}

void expectClose(const EmulatedRun& run, double tol = 1e-5) {
  ASSERT_EQ(run.atenError, "");
  ASSERT_EQ(run.outs.size(), run.ref.size());
  for (size_t k = 0; k < run.outs.size(); ++k) {
    EXPECT_EQ(run.outs[k].sizes(), run.ref[k].sizes()) << k;
    EXPECT_TRUE(at::allclose(run.outs[k].to(at::kDouble),
                             run.ref[k].to(at::kDouble), tol, tol))
        << "output " << k;
  }
}

// A GQA value sum ([heads / perGroup, T, D] from dv), then the cos and sin
// gradients of a rotate-half RoPE: dq (heads-major) times q ([T, heads, D],
// the attention input's layout) and times q rotated, summed over heads.
void ropeGradients(Fusion& f, int64_t heads, int64_t perGroup, int64_t T,
                   int64_t D) {
  TensorView* dv = defineTensor(f, {heads, T, D}, DataType::Float);
  TensorView* dq = defineTensor(f, {heads, T, D}, DataType::Float);
  TensorView* q = defineTensor(f, {T, heads, D}, DataType::Float);
  f.addOutput(reduction(ReductionOpType::Sum,
                        reshape(dv, {heads / perGroup, perGroup, T, D}), {1},
                        false));
  TensorView* qh = permute(q, {1, 0, 2});
  TensorView* x1 = slice(qh, {0, 0, 0}, {heads, T, D / 2}, {1, 1, 1});
  TensorView* x2 = slice(qh, {0, 0, D / 2}, {heads, T, D}, {1, 1, 1});
  TensorView* rotated = cat({unaryOp(UnaryOpType::Neg, x2)->asTensor(), x1}, 2);
  f.addOutput(reduction(ReductionOpType::Sum,
                        binaryOp(BinaryOpType::Mul, dq, qh)->asTensor(), {0},
                        false));
  f.addOutput(reduction(ReductionOpType::Sum,
                        binaryOp(BinaryOpType::Mul, dq, rotated)->asTensor(),
                        {0}, false));
}

std::vector<at::Tensor> ropeGradientInputs(int64_t heads, int64_t T,
                                           int64_t D) {
  return {at::randn({heads, T, D}), at::randn({heads, T, D}),
          at::randn({T, heads, D})};
}
}  // namespace

TEST(SlotThreadsTest, HeadSumsShareOneLoopSplitOverAGroupOfLanes) {
  // The cos/sin family: 5 x 16 elements in slots of 4, each summing 20
  // heads twice (40 reads): groups of 8 lanes, 2 or 3 heads per lane, one
  // loop. The value sums (4 reads per element) keep one thread per slot.
  Fusion f;
  ropeGradients(f, 20, 4, 5, 16);
  const std::string code = kernelOf(f);
  EXPECT_EQ(occurrences(code, "const unsigned nvf_group = 0xffu"), 1u) << code;
  EXPECT_NE(code.find("= nvf_k; "), std::string::npos) << code;
  EXPECT_NE(code.find(" += 8) {"), std::string::npos) << code;
  EXPECT_EQ(occurrences(code, "2 reductions in one loop"), 1u) << code;
  // One head loop for both gradients, one for the value sums.
  EXPECT_EQ(occurrences(code, "for (unsigned r"), 2u) << code;
  EXPECT_EQ(occurrences(code, "if (nvf_k == 0) nvf_vstore(out"), 2u) << code;
  EmulatedRun run = runEmulatedAndAten(f, ropeGradientInputs(20, 5, 16));
  EXPECT_EQ(run.kernels, 1u);
  expectClose(run);
}

TEST(SlotThreadsTest, AGroupAfterAnotherFamilyStartsOnItsOwnLanes) {
  // In output order the value sums' 100 slots come first; the split family
  // then starts at 104, a multiple of its 8 lanes, past unused slots.
  Fusion f;
  ropeGradients(f, 20, 4, 5, 16);
  const Options inOrder = Options().withOverrides({}, {"heavy_families_first"});
  EmulatedRun run =
      runEmulatedAndAten(f, ropeGradientInputs(20, 5, 16), {}, inOrder);
  EXPECT_EQ(run.kernels, 1u);
  expectClose(run);
  KernelPlanOptions planOptions;
  planOptions.heavyFamiliesFirst = false;
  const KernelSource ks = generateKernel(f, "k", {}, {}, planOptions);
  EXPECT_NE(ks.code.find("} else if (slot < 104) {  // no family"),
            std::string::npos)
      << ks.code;
  EXPECT_EQ(ks.slots, 104 + 20 * 8);
}

TEST(SlotThreadsTest, TheOptionsRestoreOneThreadAndOneLoopPerReduction) {
  Fusion f;
  ropeGradients(f, 20, 4, 5, 16);
  const Options off = Options().withOverrides(
      {}, {"threads_per_slot", "shared_reduction_loops"});
  EmulatedRun run =
      runEmulatedAndAten(f, ropeGradientInputs(20, 5, 16), {}, off);
  expectClose(run);
  KernelPlanOptions planOptions;
  planOptions.threadsPerSlot = false;
  KernelCodegenOptions codegen;
  codegen.sharedReductionLoops = false;
  const std::string code =
      generateKernel(f, "k", {}, codegen, planOptions).code;
  EXPECT_EQ(code.find("nvf_group"), std::string::npos) << code;
  EXPECT_EQ(code.find("reductions in one loop"), std::string::npos) << code;
  EXPECT_EQ(occurrences(code, "for (unsigned r"), 3u) << code;
}

TEST(SlotThreadsTest, VarMeanMaxMinAndIntegerSumsCombineAcrossTheGroup) {
  // 160 reads per slot: groups of 32 lanes over a dim of 40, so lanes 0-7
  // take two rows and the others one.
  Fusion f;
  TensorView* x = defineTensor(f, {40, 3, 8}, DataType::Float);
  TensorView* xi = defineTensor(f, {40, 3, 8}, DataType::Int);
  auto [var, mean] = varMean(x, {0}, 1, false);
  f.addOutput(var);
  f.addOutput(mean);
  f.addOutput(reduction(ReductionOpType::Max, x, {0}, false));
  f.addOutput(reduction(ReductionOpType::Min, x, {0}, false));
  f.addOutput(reduction(ReductionOpType::Sum, xi, {0}, false));
  const std::string code = kernelOf(f);
  EXPECT_NE(code.find("nvf_group = 0xffffffffu << (threadIdx.x & 0u)"),
            std::string::npos)
      << code;
  EXPECT_NE(code.find("nvf_max("), std::string::npos) << code;
  EmulatedRun run = runEmulatedAndAten(
      f, {at::randn({40, 3, 8}),
          at::randint(-1000, 1000, {40, 3, 8}, at::TensorOptions(at::kLong))});
  EXPECT_EQ(run.kernels, 1u);
  expectClose(run);
  for (size_t k : {2, 3, 4}) {
    EXPECT_TRUE(sameValues(run.outs[k], run.ref[k])) << k;
  }
}

TEST(SlotThreadsTest, ASumInsideAPadBranchSplitsToo) {
  // The sum is computed only inside the pad's branch: the whole group
  // takes it (its lanes share the slot), so the shuffles stay in step.
  Fusion f;
  TensorView* x = defineTensor(f, {32, 4, 8}, DataType::Float);
  f.addOutput(
      pad(reduction(ReductionOpType::Sum, x, {0}, false), {2, 2}, nullptr));
  const std::string code = kernelOf(f);
  EXPECT_NE(code.find("nvf_group"), std::string::npos) << code;
  EmulatedRun run = runEmulatedAndAten(f, {at::randn({32, 4, 8})});
  expectClose(run);
}

TEST(SlotThreadsTest, DependentSumsKeepTheirOwnLoops) {
  // s and s2 read the same elements and share a loop; the sum of squared
  // deviations needs s first, so it loops on its own.
  Fusion f;
  TensorView* x = defineTensor(f, {32, 4, 8}, DataType::Float);
  TensorView* s = reduction(ReductionOpType::Sum, x, {0}, false);
  TensorView* s2 =
      reduction(ReductionOpType::Sum,
                binaryOp(BinaryOpType::Mul, x, x)->asTensor(), {0}, false);
  Val* d = binaryOp(BinaryOpType::Sub, x, broadcast(s, {true, false, false}));
  TensorView* dev =
      reduction(ReductionOpType::Sum,
                binaryOp(BinaryOpType::Mul, d, d)->asTensor(), {0}, false);
  f.addOutput(binaryOp(BinaryOpType::Add, s2, dev));
  f.addOutput(s);
  const std::string code = kernelOf(f);
  EXPECT_EQ(occurrences(code, "2 reductions in one loop"), 1u) << code;
  EXPECT_EQ(occurrences(code, "for (unsigned r"), 2u) << code;
  expectClose(runEmulatedAndAten(f, {at::randn({32, 4, 8})}), 1e-4);
}

TEST(SlotThreadsTest, ASumOverSizeOneDimsIsNotCountedOncePerLane) {
  // The long sum gives the family groups of lanes; the sum over a size-1
  // dim opens no loop, so every lane holds the whole value. Combining it
  // over the group counted it 8 times (GPU fuzz seed 6526).
  Fusion f;
  TensorView* x = defineTensor(f, {40, 4, 8}, DataType::Float);
  TensorView* y = defineTensor(f, {1, 4, 8}, DataType::Float);
  f.addOutput(binaryOp(BinaryOpType::Add,
                       reduction(ReductionOpType::Sum, x, {0}, false),
                       reduction(ReductionOpType::Sum, y, {0}, false)));
  const std::string code = kernelOf(f);
  EXPECT_EQ(occurrences(code, "__shfl_xor_sync(nvf_group"), 1u) << code;
  expectClose(runEmulatedAndAten(
      f, {at::randn({40, 4, 8}), at::randn({1, 4, 8}) * 100}));
}

TEST(SlotThreadsTest, FuzzSeedsWithGroupsAndSharedLoopsMatchOnTheEmulator) {
  // 6526 is the GPU fuzz seed of the size-1-dim bug above; the others are
  // the first seeds with groups of lanes per slot (18, 33) and seeds with
  // shared reduction loops (7342; 356, since chains of serial reductions
  // are one kernel 7496's sums no longer share a loop).
  // `fuzz_fusions --features list` lists them.
  expectFuzzSeedsMatchOnTheEmulator({6526, 18, 33},
                                    &FuzzOutcome::slotGroupKernels);
  expectFuzzSeedsMatchOnTheEmulator({7342, 356},
                                    &FuzzOutcome::sharedLoopKernels);
}

}  // namespace nvfuser
