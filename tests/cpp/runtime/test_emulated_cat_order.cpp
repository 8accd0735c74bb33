// Interleaved cats (scheduler/interleaved_cat.h): a RoPE backward writes
// dq, dk and dv into one qkv gradient [B, T, H * 3 * D], so along memory
// the cat position changes every D elements, and a warp of 8-lane threads
// covering 256 elements ran two or three parts' branches in turn. The plan
// names the cat; the generator reorders slots so blocks (or, where no group
// of blocks fits, warps) stay on one part. Checked here: the analysis, the
// order's rule, the reordered kernel's numerics on the emulator (whole
// groups and a tail), and the switches.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codegen/kernel_codegen.h"
#include "emulated_run.h"
#include "fuzz_seeds.h"
#include "ops/arith.h"
#include "ops/shape_ops.h"
#include "scheduler/interleaved_cat.h"
#include "scheduler/kernel_plan.h"

namespace nvfuser {

namespace {
constexpr const char* kReordered = "on one cat position";
constexpr const char* kBlocks = "blocks on one cat position";
constexpr const char* kWarps = "warps on one cat position";

// out [B, T, H * 3 * D] = permute(cat([dq', dk', 0], dim 2)) of
// dq, dk [B, H, T, D], as torch.compile hands LitGPT's backward.
void qkvGradient(Fusion& f, int64_t B, int64_t H, int64_t T, int64_t D) {
  TensorView* dq = defineTensor(f, {B, H, T, D}, DataType::Float);
  TensorView* dk = defineTensor(f, {B, H, T, D}, DataType::Float);
  auto part = [&](TensorView* t) {
    return reshape(unaryOp(UnaryOpType::Neg, t)->asTensor(), {B, H, 1, T, D});
  };
  TensorView* zeros = full(f, {B, H, 1, T, D},
                           defineScalar(f, DataType::Double, ScalarValue(0.0)),
                           DataType::Float);
  TensorView* c = cat({part(dq), part(dk), zeros}, 2);
  f.addOutput(reshape(permute(c, {0, 3, 1, 2, 4}), {B, T, H * 3 * D}));
}

std::string kernelCode(Fusion& f, const KernelPlanOptions& options = {}) {
  KernelPlan plan;
  EXPECT_TRUE(planKernel(SchedulerType::PointWise, f, &plan, options));
  return generateKernel(f, plan, "k", {}).code;
}

void expectMatchesAten(Fusion& f, const std::vector<at::Tensor>& inputs) {
  EmulatedRun run = runEmulatedAndAten(f, inputs);
  ASSERT_EQ(run.atenError, "");
  ASSERT_EQ(run.kernels, 1u);
  EXPECT_TRUE(at::equal(run.outs[0], run.ref[0]));
}

// A qkv gradient whose kernel orders `ordered` slots with `unit` (a
// kWarps or kBlocks marker) and keeps the rest in order; numerics on the
// emulator.
void expectOrderedWithTail(int64_t B, int64_t H, int64_t T, int64_t D,
                           const char* unit, int64_t ordered) {
  Fusion f;
  qkvGradient(f, B, H, T, D);
  const std::string code = kernelCode(f);
  EXPECT_NE(code.find(unit), std::string::npos);
  EXPECT_NE(code.find("if (s < " + std::to_string(ordered) + ")"),
            std::string::npos);
  expectMatchesAten(f, {at::randn({B, H, T, D}), at::randn({B, H, T, D})});
}
}  // namespace

TEST(InterleavedCatTest, FindsTheCatPositionInTheOutputsOrder) {
  Fusion f;
  qkvGradient(f, 2, 4, 8, 16);
  std::optional<InterleavedCat> c = slotOrderDigit(f, 0, false, 0);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->output, 0u);
  EXPECT_EQ(c->innerElements, 16);  // D: the dims inside the cat dim
  EXPECT_EQ(c->extent, 3);
}

TEST(InterleavedCatTest, ACatComputedFurtherIsNotOne) {
  // A binary op after the cat: the chain to the output is not a view.
  Fusion f;
  TensorView* a = defineTensor(f, {4, 8}, DataType::Float);
  TensorView* b = defineTensor(f, {4, 8}, DataType::Float);
  TensorView* c = cat({a, b}, 0);
  f.addOutput(binaryOp(BinaryOpType::Mul, c, c));
  EXPECT_FALSE(slotOrderDigit(f, 0, false, 0).has_value());
}

TEST(InterleavedCatTest, AnEmptyOutputHasNoOrderToFind) {
  // H = 0: the reshape's trailing extent products are 0 (the walk divided
  // by them).
  Fusion f;
  qkvGradient(f, 2, 0, 8, 16);
  EXPECT_FALSE(slotOrderDigit(f, 0, false, 0).has_value());
  KernelPlan plan;
  EXPECT_TRUE(planKernel(SchedulerType::PointWise, f, &plan));
  EXPECT_TRUE(plan.interleavedCats.empty());
}

TEST(InterleavedCatTest, WholeGroupsReorderedKernelMatchesAten) {
  // Float: 4 lanes, runs of 16 / 4 = 4 slots, 8 runs per warp: groups of
  // 8 x 3 x 4 slots, and B T H = 64 runs per position divide evenly.
  const int64_t B = 2, H = 8, T = 4, D = 16;
  Fusion f;
  qkvGradient(f, B, H, T, D);
  EXPECT_NE(kernelCode(f).find(kBlocks), std::string::npos);
  expectMatchesAten(f, {at::randn({B, H, T, D}), at::randn({B, H, T, D})});
}

TEST(InterleavedCatTest, BlockGroupsWithATailMatchAten) {
  // Runs of 4 slots, 32 per 128-thread block: groups of 32 x 3 x 4 = 384
  // slots; B T H = 80 runs per position give 960 slots, 192 past the
  // second group.
  expectOrderedWithTail(2, 8, 5, 16, kBlocks, 768);
}

TEST(InterleavedCatTest, OrderTakesBlocksWhereAGroupOfThemFits) {
  // LitGPT Llama-3: D = 128 bf16 in 8 lanes (runs of 16 slots), q q q q k v.
  InterleavedCat cat{0, 128, 6};
  std::optional<CatSlotOrder> o = catSlotOrder(cat, 6291456, 8, 128);
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->unitThreads, 128);
  EXPECT_EQ(o->runsPerGroup, 8);
  EXPECT_EQ(o->groupSlots(), 768);
  EXPECT_EQ(o->orderedSlots, 6291456);
  // Fewer slots than a group of blocks: warps (2 runs each).
  o = catSlotOrder(cat, 700, 8, 128);
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->unitThreads, 32);
  EXPECT_EQ(o->runsPerGroup, 2);
  EXPECT_EQ(o->orderedSlots, 576);
  // Switched to warps; runs of whole blocks need no order; nor lanes that
  // split a run.
  cat.blockUniform = false;
  EXPECT_EQ(catSlotOrder(cat, 6291456, 8, 128)->unitThreads, 32);
  cat.blockUniform = true;
  EXPECT_FALSE(catSlotOrder(InterleavedCat{0, 1024, 3}, 4096, 8, 128));
  EXPECT_FALSE(catSlotOrder(InterleavedCat{0, 12, 3}, 4096, 8, 128));
  EXPECT_FALSE(catSlotOrder(cat, 100, 8, 128));  // not one group of warps
}

TEST(InterleavedCatTest, ABlockHoldsThePadSidesOfOneCatPosition) {
  // LitGPT Llama-3's backward: 6 positions of 128, each two halves of 64
  // (the rotate-half's pads): 12 digits, 8 lanes, runs of 8 slots. Blocks
  // of 128 threads hold both halves of one position, a warp on each half,
  // so a half's loads of the other half hit lines the same SM loaded
  // (ncu, session 19: split over blocks b and b^1, L1 hit rate 8%).
  InterleavedCat cat{0, 64, 12};
  cat.sidesPerCatPosition = 2;
  std::optional<CatSlotOrder> o = catSlotOrder(cat, 6291456, 8, 128);
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->unitThreads, 128);
  EXPECT_EQ(o->runsPerGroup, 8);
  EXPECT_EQ(o->groupSlots(), 768);
  // The generator's remap (interleavedCatOrder): slot -> memory slot.
  const int64_t r = o->runSlots, k = o->runsPerGroup, c = o->positions;
  auto memorySlot = [&](int64_t slot) {
    const int64_t g = slot % o->groupSlots();
    return slot - g + ((g / r % k) * c + g / (k * r)) * r + g % r;
  };
  auto digitOf = [&](int64_t slot) { return memorySlot(slot) % (12 * r) / r; };
  for (int64_t slot = 0; slot < 2 * o->groupSlots(); ++slot) {
    const int64_t digit = digitOf(slot);
    EXPECT_EQ(digit / 2, digitOf(slot / 128 * 128) / 2) << slot;  // block
    EXPECT_EQ(digit, digitOf(slot / 32 * 32)) << slot;  // one half per warp
  }
  // Sides that do not split a block evenly: blocks on one digit.
  cat.sidesPerCatPosition = 3;
  EXPECT_EQ(catSlotOrder(cat, 6291456, 8, 128)->runsPerGroup, 16);
}

TEST(InterleavedCatTest, TailSlotsKeepTheirOrderAndMatchAten) {
  // Runs of 20 / 4 = 5 slots: 32 runs per warp-aligned group, and
  // B T H = 2 x 3 x 7 = 42 runs leave a tail past the only whole group.
  // No group of 128 runs x 3 x 5 slots fits the 630: warps, 32 x 3 x 5.
  expectOrderedWithTail(2, 7, 3, 20, kWarps, 480);
}

TEST(InterleavedCatTest, SwitchedOffOrRunsOfWholeUnitsKeepTheOrder) {
  Fusion f;
  qkvGradient(f, 2, 4, 8, 16);
  KernelPlanOptions off;
  off.interleavedCatOrder = false;
  EXPECT_EQ(kernelCode(f, off).find(kReordered), std::string::npos);
  KernelPlanOptions warps;
  warps.interleavedCatBlockOrder = false;
  EXPECT_NE(kernelCode(f, warps).find(kWarps), std::string::npos);
  // D = 128 floats: runs of 32 slots, already a warp each: ordered only
  // so that blocks stay on one part (4 runs each).
  Fusion wide;
  qkvGradient(wide, 1, 2, 2, 128);
  EXPECT_NE(kernelCode(wide).find(kBlocks), std::string::npos);
  EXPECT_EQ(kernelCode(wide, warps).find(kReordered), std::string::npos);
  expectMatchesAten(wide,
                    {at::randn({1, 2, 2, 128}), at::randn({1, 2, 2, 128})});
  // D = 512 floats: runs of a whole block.
  Fusion wider;
  qkvGradient(wider, 1, 2, 2, 512);
  EXPECT_EQ(kernelCode(wider).find(kReordered), std::string::npos);
}

TEST(InterleavedCatTest, RunsShorterThanASectorKeepTheOrder) {
  // D = 4 floats: 16-byte runs. Reordered, a warp would store one vector
  // per 32-byte sector, 3 sectors apart.
  Fusion narrow;
  qkvGradient(narrow, 2, 8, 8, 4);
  ASSERT_TRUE(slotOrderDigit(narrow, 0, false, 0).has_value());
  EXPECT_EQ(kernelCode(narrow).find(kReordered), std::string::npos);
  // D = 8 floats: 32 bytes, runs of two 4-lane slots; reordered.
  Fusion sector;
  qkvGradient(sector, 2, 8, 8, 8);
  EXPECT_NE(kernelCode(sector).find(kReordered), std::string::npos);
}

TEST(InterleavedCatTest, RandomFusionsWithInterleavedCatsMatchOnTheEmulator) {
  // The seed of fuzz_fusions (14 ops) among 0..1999 whose kernels take
  // the cat order (fuzz_fusions prints the count).
  expectFuzzSeedsMatchOnTheEmulator({1324u},
                                    &FuzzOutcome::interleavedCatKernels);
}

}  // namespace nvfuser
