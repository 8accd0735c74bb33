// The plan a scheduler hands the generator (scheduler/kernel_plan.h): one
// strategy per scheduler kind, refused with a reason when the segment is
// not of that kind, and the generator builds exactly the plan it is given.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "codegen/kernel_codegen.h"
#include "codegen/lane_proof.h"
#include "exceptions.h"
#include "ops/arith.h"
#include "ops/reduction_ops.h"
#include "ops/shape_ops.h"
#include "scheduler/kernel_plan.h"
#include "segment_test_utils.h"

namespace nvfuser {

namespace {
// Row sums of x [rows, cols]: a row kernel for the reduction scheduler.
void rowSum(Fusion& f) {
  TensorView* x = defineTensor(f, {64, 256}, DataType::Float);
  f.addOutput(reduction(ReductionOpType::Sum, x, {1}, false));
}
// -x of x [8, 16]: a pointwise segment.
void negate(Fusion& f) {
  TensorView* x = defineTensor(f, {8, 16}, DataType::Float);
  f.addOutput(unaryOp(UnaryOpType::Neg, x));
}
// A column sum of x [4096, 64] straight into the output: a lone sum.
void columnSum(Fusion& f) {
  TensorView* x = defineTensor(f, {4096, 64}, DataType::Float);
  f.addOutput(reduction(ReductionOpType::Sum, x, {0}, false));
}
}  // namespace

TEST(KernelPlanTest, EachSchedulerPlansItsOwnStrategy) {
  Fusion pw;
  negate(pw);
  KernelPlan plan;
  ASSERT_TRUE(planKernel(SchedulerType::PointWise, pw, &plan));
  EXPECT_EQ(plan.strategy, KernelStrategy::Pointwise);

  Fusion rows;
  rowSum(rows);
  ASSERT_TRUE(planKernel(SchedulerType::Reduction, rows, &plan));
  EXPECT_EQ(plan.strategy, KernelStrategy::Rows);
  EXPECT_TRUE(plan.rows.active);
  ASSERT_TRUE(planKernel(SchedulerType::InnerPersistent, rows, &plan));
  EXPECT_EQ(plan.strategy, KernelStrategy::Rows);

  Fusion cols;
  columnSum(cols);
  ASSERT_TRUE(planKernel(SchedulerType::Reduction, cols, &plan));
  EXPECT_EQ(plan.strategy, KernelStrategy::SerialReduction);
  EXPECT_NE(plan.split.sum, nullptr);
}

TEST(KernelPlanTest, RegisterCapsAreTheRowKernelsUnlessAskedEverywhere) {
  Fusion pw, rows;
  negate(pw);
  rowSum(rows);
  KernelPlan plan;
  ASSERT_TRUE(planKernel(SchedulerType::PointWise, pw, &plan));
  EXPECT_FALSE(plan.capRegisters);
  EXPECT_FALSE(generateKernel(pw, plan, "k", {}).capRegisters);
  ASSERT_TRUE(planKernel(SchedulerType::Reduction, rows, &plan));
  EXPECT_TRUE(plan.capRegisters);
  KernelPlanOptions everywhere;
  everywhere.registerCapsEverywhere = true;
  ASSERT_TRUE(planKernel(SchedulerType::PointWise, pw, &plan, everywhere));
  EXPECT_TRUE(plan.capRegisters);
  EXPECT_TRUE(generateKernel(pw, plan, "k", {}).capRegisters);
}

TEST(KernelPlanTest, ASegmentOfAnotherKindIsRefusedWithAReason) {
  Fusion rows;
  rowSum(rows);
  KernelPlan plan;
  Decision d = planKernel(SchedulerType::PointWise, rows, &plan);
  EXPECT_FALSE(d);
  EXPECT_EQ(d.reason(), "a pointwise segment with a reduction");

  Fusion cols;
  columnSum(cols);
  d = planKernel(SchedulerType::InnerPersistent, cols, &plan);
  EXPECT_FALSE(d);
  EXPECT_EQ(d.reason(), "an inner_persistent segment without row reductions");

  d = planKernel(SchedulerType::ExprEval, cols, &plan);
  EXPECT_FALSE(d);
  EXPECT_NE(d.reason().find("not generated kernels"), std::string::npos);
}

TEST(KernelPlanTest, TheGeneratorBuildsThePlanItIsGiven) {
  // The column sum planned without its split candidate: the generator
  // loops over the rows in each thread and adds no workspace, where its
  // own plan splits the sum over blocks.
  Fusion cols;
  columnSum(cols);
  KernelPlan plan;
  ASSERT_TRUE(planKernel(SchedulerType::Reduction, cols, &plan));
  EXPECT_GT(generateKernel(cols, plan, "k", {}).workspaceBytes, 0);
  plan.split = SplitSumPlan();
  EXPECT_EQ(generateKernel(cols, plan, "k", {}).workspaceBytes, 0);
}

TEST(KernelPlanTest, ThreadsTakingSlotsGetAFullGridUnlessSwitchedOff) {
  // Pointwise and looping sums: a block per blockDim slots. A split sum's
  // tiles and row kernels launch their own way.
  Fusion pw;
  negate(pw);
  KernelPlan plan;
  ASSERT_TRUE(planKernel(SchedulerType::PointWise, pw, &plan));
  EXPECT_TRUE(plan.fullGrid);
  EXPECT_TRUE(generateKernel(pw, plan, "k", {}).fullGrid);
  KernelPlanOptions wave;
  wave.fullGrid = false;
  ASSERT_TRUE(planKernel(SchedulerType::PointWise, pw, &plan, wave));
  EXPECT_FALSE(plan.fullGrid);
  EXPECT_FALSE(generateKernel(pw, plan, "k", {}).fullGrid);

  Fusion cols;
  columnSum(cols);
  ASSERT_TRUE(planKernel(SchedulerType::Reduction, cols, &plan));
  ASSERT_NE(plan.split.sum, nullptr);
  EXPECT_TRUE(plan.fullGrid);  // but the split kernel keeps one wave
  KernelSource split = generateKernel(cols, plan, "k", {});
  EXPECT_TRUE(split.blockPerSlot);
  EXPECT_FALSE(split.fullGrid);
  Fusion rows;
  rowSum(rows);
  ASSERT_TRUE(planKernel(SchedulerType::Reduction, rows, &plan));
  EXPECT_FALSE(plan.fullGrid);
}

TEST(KernelPlanTest, FamiliesGetTheirWidestVectorsFromDtypesAndExtents) {
  // Float out: 16-byte stores are 4 lanes; a bf16 family of the same
  // kernel takes 8; an innermost extent of 6 allows 2; vectorization off,
  // one.
  Fusion f;
  TensorView* x = defineTensor(f, {8, 16}, DataType::Float);
  TensorView* y = defineTensor(f, {8, 6}, DataType::Float);
  f.addOutput(unaryOp(UnaryOpType::Neg, x));
  f.addOutput(castOp(unaryOp(UnaryOpType::Neg, x), DataType::BFloat16));
  f.addOutput(unaryOp(UnaryOpType::Neg, y));
  KernelPlan plan;
  ASSERT_TRUE(planKernel(SchedulerType::PointWise, f, &plan));
  ASSERT_EQ(plan.families.size(), 2u);
  EXPECT_EQ(plan.families[0].outputs, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(plan.families[0].vectorWidth, 4);  // the float output's
  EXPECT_EQ(plan.families[1].vectorWidth, 2);
  Fusion bf;
  TensorView* z = defineTensor(bf, {8, 16}, DataType::BFloat16);
  bf.addOutput(castOp(unaryOp(UnaryOpType::Neg, z), DataType::BFloat16));
  ASSERT_TRUE(planKernel(SchedulerType::PointWise, bf, &plan));
  EXPECT_EQ(plan.families[0].vectorWidth, 8);
  KernelPlanOptions scalar;
  scalar.vectorize = false;
  ASSERT_TRUE(planKernel(SchedulerType::PointWise, bf, &plan, scalar));
  EXPECT_EQ(plan.families[0].vectorWidth, 1);
}

TEST(KernelPlanTest, ALoneSumSplitsByTheDevicesThreads) {
  // [4096, 64] floats summed over rows: 16 vectors of 4 lanes. On 132 SMs
  // the thread budget allows more chunks than rows / 8 and total / 32
  // (128); on 2 SMs, 2048 threads / 16 vectors = 128 too; with 64 x
  // more vectors than that, 2; with the GPU full, none.
  Fusion cols;
  columnSum(cols);
  KernelPlan plan;
  ASSERT_TRUE(planKernel(SchedulerType::Reduction, cols, &plan));
  const SplitSumPlan& split = plan.split;
  EXPECT_EQ(split.axis, 0);
  EXPECT_EQ(split.rows, 4096);
  EXPECT_EQ(split.total, 4096);
  EXPECT_EQ(split.targetThreads, 132 * 1024);
  EXPECT_EQ(split.factorFor(16), 128);
  EXPECT_EQ(split.factorFor(132 * 1024), 1);
  KernelPlanOptions small;
  small.device.smCount = 2;
  ASSERT_TRUE(planKernel(SchedulerType::Reduction, cols, &plan, small));
  EXPECT_EQ(plan.split.factorFor(16), 128);
  EXPECT_EQ(plan.split.factorFor(1024), 2);
  EXPECT_EQ(SplitSumPlan::chunksPerBlock(2), 2);
  EXPECT_EQ(SplitSumPlan::chunksPerBlock(128), 8);
  EXPECT_EQ(SplitSumPlan::rowStride(13), 16);
}

TEST(KernelPlanTest, RowsArePersistentUpTo1024VectorsPerRow) {
  RowReductionPlan rows;
  rows.rowLength = 4096;  // 512 vectors of 8: 4 per thread of 128
  RowLaunch l = rowLaunch(rows, 8);
  EXPECT_TRUE(l.persistent);
  EXPECT_EQ(l.vectorsPerThread, 4);
  EXPECT_EQ(l.threads, 128);
  EXPECT_EQ(l.stride, 1024);
  rows.rowLength = 96;  // 12 vectors: one warp, one each
  l = rowLaunch(rows, 8);
  EXPECT_EQ(l.threads, 32);
  EXPECT_EQ(l.vectorsPerThread, 1);
  rows.rowLength = 100000;  // 25000 vectors of 4: looping, 512 threads
  l = rowLaunch(rows, 4);
  EXPECT_FALSE(l.persistent);
  EXPECT_EQ(l.threads, 512);
  rows.rowLength = 300;  // no whole vectors of 8: looping, 64 threads
  l = rowLaunch(rows, 8);
  EXPECT_FALSE(l.persistent);
  EXPECT_EQ(l.threads, 64);
}

TEST(KernelPlanTest, TheGeneratorTakesThePlansWidthsAndBlock) {
  Fusion pw;
  negate(pw);
  KernelPlan plan;
  ASSERT_TRUE(planKernel(SchedulerType::PointWise, pw, &plan));
  plan.families[0].vectorWidth = 2;
  plan.blockThreads = 256;
  KernelSource ks = generateKernel(pw, plan, "k", {});
  EXPECT_EQ(ks.families[0].vectorWidth, 2);
  EXPECT_EQ(ks.block, 256);
  Fusion rows;
  rowSum(rows);
  ASSERT_TRUE(planKernel(SchedulerType::Reduction, rows, &plan));
  EXPECT_EQ(plan.rowVectorWidth, 4);
  plan.rowVectorWidth = 1;
  plan.rowLaunch = rowLaunch(plan.rows, 1);
  ks = generateKernel(rows, plan, "k", {});
  EXPECT_EQ(ks.families[0].vectorWidth, 1);
  EXPECT_EQ(ks.block, 128);  // 256 one-element vectors: 2 per thread
}

TEST(KernelPlanTest, FamiliesTogetherPast2To31SlotsIndexIn64Bits) {
  // Three families of 2^30, 1.5 x 2^30 and 1.5 x 2^30 elements: each fits
  // unsigned 32-bit math, but the slot loop counts them together; with
  // unsigned slots it would wrap and never end.
  Fusion f;
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{int64_t(1) << 30},
        std::vector<int64_t>{3, int64_t(1) << 29},
        std::vector<int64_t>{int64_t(1) << 29, 3}}) {
    TensorView* x = defineTensor(f, shape, DataType::Float);
    f.addOutput(unaryOp(UnaryOpType::Neg, x));
  }
  KernelSource ks = generateKernel(f, "k", {});
  ASSERT_EQ(ks.families.size(), 3u);
  EXPECT_NE(ks.code.find("for (int64_t slot"), std::string::npos);
  // One such family alone keeps 32-bit slots.
  Fusion one;
  one.addOutput(unaryOp(UnaryOpType::Neg, defineTensor(one, {int64_t(1) << 30},
                                                       DataType::Float)));
  EXPECT_NE(generateKernel(one, "k", {}).code.find("for (unsigned slot"),
            std::string::npos);
}

}  // namespace nvfuser

namespace nvfuser {

TEST(KernelPlanTest, FamiliesWithLongerSerialLoopsComeFirst) {
  // Output 0 sums 2 elements per element of its [4, 64] family; output 1
  // sums 16 twice (two reductions) per element of its [64] family: it
  // goes first. Without the option, output order.
  Fusion f;
  TensorView* a = defineTensor(f, {4, 2, 64}, DataType::Float);
  f.addOutput(reduction(ReductionOpType::Sum, a, {1}, false));
  TensorView* b = defineTensor(f, {16, 64}, DataType::Float);
  TensorView* c = defineTensor(f, {16, 64}, DataType::Float);
  f.addOutput(binaryOp(BinaryOpType::Add,
                       reduction(ReductionOpType::Sum, b, {0}, false),
                       reduction(ReductionOpType::Sum, c, {0}, false)));
  KernelPlan plan;
  ASSERT_TRUE(planKernel(SchedulerType::Reduction, f, &plan));
  ASSERT_EQ(plan.families.size(), 2u);
  EXPECT_EQ(plan.families[0].outputs, std::vector<size_t>{1});
  EXPECT_EQ(plan.families[1].outputs, std::vector<size_t>{0});
  KernelPlanOptions inOrder;
  inOrder.heavyFamiliesFirst = false;
  ASSERT_TRUE(planKernel(SchedulerType::Reduction, f, &plan, inOrder));
  EXPECT_EQ(plan.families[0].outputs, std::vector<size_t>{0});
  // The generated kernel takes the families in the plan's order.
  ASSERT_TRUE(planKernel(SchedulerType::Reduction, f, &plan));
  const KernelSource ks = generateKernel(f, plan, "k", {});
  ASSERT_EQ(ks.families.size(), 2u);
  EXPECT_EQ(ks.families[0].outputs, std::vector<size_t>{1});
}

TEST(KernelPlanTest, ThreadsPerSlotGoToLongLoopsOfFewSlots) {
  // Qwen2.5's cos gradient at T=4096: 65536 slots of 8 bf16 lanes, each
  // summing 28 q heads and 4 k heads. Groups of 4 lanes fill an H200's
  // 132 x 2048 threads; a GPU of half the SMs gets groups of 2.
  Fusion f;
  auto headSum = [&](int64_t heads) {
    TensorView* d = defineTensor(f, {heads, 4096, 128}, DataType::BFloat16);
    TensorView* x = defineTensor(f, {heads, 4096, 128}, DataType::BFloat16);
    return reduction(ReductionOpType::Sum,
                     binaryOp(BinaryOpType::Mul, d, x)->asTensor(), {0}, false,
                     DataType::Float);
  };
  f.addOutput(castOp(binaryOp(BinaryOpType::Add, headSum(28), headSum(4)),
                     DataType::BFloat16));
  // A GQA value sum, 7 heads per slot: too short to share.
  TensorView* dv = defineTensor(f, {4, 7, 4096, 128}, DataType::BFloat16);
  f.addOutput(
      castOp(reduction(ReductionOpType::Sum, dv, {1}, false, DataType::Float),
             DataType::BFloat16));
  KernelPlan plan;
  ASSERT_TRUE(planKernel(SchedulerType::Reduction, f, &plan));
  ASSERT_EQ(plan.families.size(), 2u);
  EXPECT_EQ(plan.families[0].outputs, std::vector<size_t>{0});
  EXPECT_EQ(plan.families[0].threadsPerSlot, 4);
  EXPECT_EQ(plan.families[1].threadsPerSlot, 1);
  KernelPlanOptions half;
  half.device.smCount = 66;
  ASSERT_TRUE(planKernel(SchedulerType::Reduction, f, &plan, half));
  EXPECT_EQ(plan.families[0].threadsPerSlot, 2);
  KernelPlanOptions off;
  off.threadsPerSlot = false;
  ASSERT_TRUE(planKernel(SchedulerType::Reduction, f, &plan, off));
  EXPECT_EQ(plan.families[0].threadsPerSlot, 1);
}

TEST(KernelPlanTest, ThreadsPerSlotNeedAShuffledAccumulator) {
  // A boolean max has no warp shuffle of its type: one thread per slot,
  // however long its loop.
  Fusion f;
  TensorView* x = defineTensor(f, {64, 4, 8}, DataType::Float);
  f.addOutput(reduction(ReductionOpType::Max,
                        castOp(x, DataType::Bool)->asTensor(), {0}, false));
  KernelPlan plan;
  ASSERT_TRUE(planKernel(SchedulerType::Reduction, f, &plan));
  ASSERT_EQ(plan.families.size(), 1u);
  EXPECT_EQ(plan.families[0].threadsPerSlot, 1);
  // The same as a float max splits.
  Fusion g;
  g.addOutput(reduction(ReductionOpType::Max,
                        defineTensor(g, {64, 4, 8}, DataType::Float), {0},
                        false));
  ASSERT_TRUE(planKernel(SchedulerType::Reduction, g, &plan));
  EXPECT_GT(plan.families[0].threadsPerSlot, 1);
}

TEST(KernelPlanTest, ThreadsPerSlotStayWithinTheSplitDim) {
  // Three reductions over dims of 8 and 8 read 192 elements per slot, but
  // the lanes split one dim of 8: 32 lanes left 24 idle (review).
  Fusion f;
  TensorView* x = defineTensor(f, {8, 8, 2, 4}, DataType::Int32);
  for (ReductionOpType op :
       {ReductionOpType::Max, ReductionOpType::Min, ReductionOpType::Sum}) {
    f.addOutput(reduction(op, x, {0, 1}, false));
  }
  KernelPlan plan;
  ASSERT_TRUE(planKernel(SchedulerType::Reduction, f, &plan));
  ASSERT_EQ(plan.families.size(), 1u);
  EXPECT_EQ(plan.families[0].threadsPerSlot, 8);
}

namespace {
// x [4, 6] padded by one element on each side of its last dim: the pad's
// boundary at element 1 splits every 4-lane vector of the [4, 8] output.
void padOneEachSide(Fusion& f) {
  TensorView* x = defineTensor(f, {4, 6}, DataType::Float);
  f.addOutput(pad(x, {1, 1}, nullptr));
}
// The sum over dim `axis` of x [rows, cols] padded by one element on each
// side of its last dim (boundaries at 1 and cols + 1 split every vector).
void sumOfPadded(Fusion& f, int64_t rows, int64_t cols, int64_t axis) {
  TensorView* x = defineTensor(f, {rows, cols}, DataType::Float);
  f.addOutput(
      reduction(ReductionOpType::Sum, pad(x, {1, 1}, nullptr), {axis}, false));
}
}  // namespace

// The scheduler decides the width with the generator's lane proof; the
// generator never narrows a vector on its own (issue 16: "codegen never
// re-decides"). Before the proof moved into planKernel the generator
// halved the plan's width itself and this plan ran at one lane silently.
TEST(KernelPlanTest, TheLaneProofNarrowsThePlanNotTheGenerator) {
  Fusion f;
  padOneEachSide(f);
  KernelPlan unproven;
  ASSERT_TRUE(planKernel(SchedulerType::PointWise, f, &unproven));
  EXPECT_EQ(unproven.families[0].vectorWidth, 4);  // 16-byte float stores
  EXPECT_TRUE(unproven.families[0].narrowedBecause.empty());
  try {
    generateKernel(f, unproven, "k", {});
    ADD_FAILURE() << "the generator built 4 lanes the proof refuses";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Internal);
    EXPECT_NE(std::string(e.what()).find(
                  "the plan's 4 lanes do not hold (a pad boundary at 1)"),
              std::string::npos)
        << e.what();
  }

  KernelPlanOptions options;
  options.laneProof = generatorLaneProof();
  KernelPlan proven;
  ASSERT_TRUE(planKernel(SchedulerType::PointWise, f, &proven, options));
  EXPECT_EQ(proven.families[0].vectorWidth, 1);
  // Halved a round at a time: 2 lanes were the last that did not hold.
  EXPECT_EQ(proven.families[0].narrowedBecause,
            "2 lanes do not hold: a pad boundary at 1");
  KernelSource ks = generateKernel(f, proven, "k", {});
  EXPECT_EQ(ks.families[0].vectorWidth, 1);
  EXPECT_NE(ks.code.find("(2 lanes do not hold: a pad boundary at 1)"),
            std::string::npos)
      << ks.code;
  // generateKernel(fusion, ...) plans with the proof itself.
  EXPECT_EQ(generateKernel(f, "k", {}).families[0].vectorWidth, 1);
}

// A width the proof narrows changes what depends on it: a split sum's
// factor follows the slots at the proven width. x [2048, 62] padded to 64
// columns and summed over its rows, on a device of one SM (1024 target
// threads): 4 lanes (16-byte float loads) would make 16 slots and 64
// chunks; the pad holds one lane, so 64 slots and 16 chunks.
TEST(KernelPlanTest, ASplitSumTakesItsFactorAtTheProvenWidth) {
  Fusion f;
  sumOfPadded(f, 2048, 62, 0);
  KernelPlanOptions options;
  options.device.smCount = 1;
  KernelPlan unproven;
  ASSERT_TRUE(planKernel(SchedulerType::Reduction, f, &unproven, options));
  ASSERT_NE(unproven.split.sum, nullptr);
  EXPECT_EQ(unproven.families[0].vectorWidth, 4);
  EXPECT_EQ(unproven.split.factor, 64);

  options.laneProof = generatorLaneProof();
  KernelPlan proven;
  ASSERT_TRUE(planKernel(SchedulerType::Reduction, f, &proven, options));
  EXPECT_EQ(proven.families[0].vectorWidth, 1);
  EXPECT_EQ(proven.split.factor, 16);
  EXPECT_EQ(proven.split.factor, proven.split.factorFor(64));
  KernelSource ks = generateKernel(f, proven, "k", {});
  // Tiles of 32 one-element vectors by 8 chunks: 2 tiles of columns x 2
  // of chunks.
  EXPECT_EQ(ks.slots, 2 * 2);
}

// NVFUSER_DUMP=scheduler_params prints plans with toString.
TEST(KernelPlanTest, PlansPrintTheirStrategyLaunchAndFamilies) {
  Fusion rows;
  rowSum(rows);
  KernelPlan plan;
  ASSERT_TRUE(planKernel(SchedulerType::Reduction, rows, &plan));
  EXPECT_EQ(toString(plan),
            "rows: 64 rows of 256 elements, 4 lane(s), 64 threads per row, 1 "
            "vector(s) per thread held in registers");

  Fusion cols;
  columnSum(cols);
  ASSERT_TRUE(planKernel(SchedulerType::Reduction, cols, &plan));
  EXPECT_EQ(
      toString(plan),
      "serial reduction: T1 split over dim 0 in 128 chunks, blocks of 256 "
      "threads each summing a tile of 32 vectors x 8 chunks, one wave\n"
      "  family 0: output(s) [0], loop [64], 4 lane(s)");

  Fusion t;
  TensorView* x = defineTensor(t, {64, 96}, DataType::Float);
  t.addOutput(permute(x, {1, 0}));
  KernelPlanOptions transposed;
  transposed.inputStrides = {{96, 1}};
  ASSERT_TRUE(planKernel(SchedulerType::PointWise, t, &plan, transposed));
  EXPECT_EQ(toString(plan),
            "transpose: 32 x 32 tiles over output dims 0 and 1, input(s) [0] "
            "staged in shared memory\n"
            "  family 0: output(s) [0], loop [96, 64], 1 lane(s)");
}

// Threads per slot follow the slots at the proven width. Sums over the
// 1024 rows of x [1024, 62] padded to 64 columns, next to a second output
// (so no split), on a device of 128 resident threads: 4 lanes would make
// 16 slots and groups of 8 threads; the pad holds one lane, so 64 slots
// and groups of 2.
TEST(KernelPlanTest, ThreadsPerSlotFollowTheProvenWidth) {
  Fusion f;
  sumOfPadded(f, 1024, 62, 0);
  TensorView* y = defineTensor(f, {64}, DataType::Float);
  f.addOutput(unaryOp(UnaryOpType::Neg, y));
  KernelPlanOptions options;
  options.device.smCount = 1;
  options.device.residentThreadsPerSm = 128;
  KernelPlan unproven;
  ASSERT_TRUE(planKernel(SchedulerType::Reduction, f, &unproven, options));
  ASSERT_EQ(unproven.families.size(), 1u);
  EXPECT_EQ(unproven.split.sum, nullptr);
  EXPECT_EQ(unproven.families[0].vectorWidth, 4);
  EXPECT_EQ(unproven.families[0].threadsPerSlot, 8);
  options.laneProof = generatorLaneProof();
  KernelPlan proven;
  ASSERT_TRUE(planKernel(SchedulerType::Reduction, f, &proven, options));
  EXPECT_EQ(proven.families[0].vectorWidth, 1);
  EXPECT_EQ(proven.families[0].threadsPerSlot, 2);
  EXPECT_EQ(generateKernel(f, proven, "k", {}).families[0].threadsPerSlot, 2);
}

// Rows narrow as a whole, their launch with them: row sums of x [64, 254]
// padded to 256 columns read 4 floats per lane where the pad allows.
TEST(KernelPlanTest, RowsTakeTheirLaunchAtTheProvenWidth) {
  Fusion f;
  sumOfPadded(f, 64, 254, 1);
  KernelPlanOptions options;
  options.laneProof = generatorLaneProof();
  KernelPlan plan;
  ASSERT_TRUE(planKernel(SchedulerType::Reduction, f, &plan, options));
  ASSERT_EQ(plan.strategy, KernelStrategy::Rows);
  EXPECT_EQ(plan.rowVectorWidth, 1);
  EXPECT_EQ(plan.rowLaunch, rowLaunch(plan.rows, 1));
  EXPECT_EQ(plan.families[0].narrowedBecause,
            "2 lanes do not hold: a pad boundary at 1");
  KernelSource ks = generateKernel(f, plan, "k", {});
  EXPECT_EQ(ks.families[0].vectorWidth, 1);
  EXPECT_EQ(ks.block, rowLaunch(plan.rows, 1).threads);
}

// An output nothing splits keeps its width when another output of its
// family, or the family a loop output is stored in, narrows (reviews of
// the lane proof: the host family's cap leaked to the loop output's
// original family; then, on larger devices, the padded output shared a
// family with p in the first round and p kept its cap after the padded
// output moved into the loop). x [8, 254] padded to 256: r sums it over
// the 8 rows and the padded value itself is stored in r's loop where that
// fills the device; p = -y of y [8, 256] has the padded value's loop shape.
TEST(KernelPlanTest, AnOutputNothingSplitsKeepsItsWidth) {
  for (int64_t threadsPerSm : {512, 2048, 4096}) {
    Fusion f;
    TensorView* x = defineTensor(f, {8, 254}, DataType::Float);
    TensorView* y = defineTensor(f, {8, 256}, DataType::Float);
    TensorView* padded = pad(x, {1, 1}, nullptr);
    f.addOutput(reduction(ReductionOpType::Sum, padded, {0}, false));
    f.addOutput(padded);
    f.addOutput(unaryOp(UnaryOpType::Neg, y));
    KernelPlanOptions options;
    options.device.smCount = 1;
    options.device.residentThreadsPerSm = threadsPerSm;
    options.laneProof = generatorLaneProof();
    KernelPlan plan;
    ASSERT_TRUE(planKernel(SchedulerType::Reduction, f, &plan, options));
    bool found = false;
    for (const OutputFamilyPlan& fam : plan.families) {
      const bool hasNegated = std::find(fam.outputs.begin(), fam.outputs.end(),
                                        size_t{2}) != fam.outputs.end();
      const bool hasPadded = std::find(fam.outputs.begin(), fam.outputs.end(),
                                       size_t{1}) != fam.outputs.end();
      if (hasNegated && !hasPadded) {
        found = true;
        EXPECT_EQ(fam.vectorWidth, 4) << threadsPerSm << ": " << toString(plan);
        EXPECT_TRUE(fam.narrowedBecause.empty()) << toString(plan);
      }
    }
    // With the padded value in p's family, the family must narrow; the
    // proof may leave them together only where no loop takes it.
    if (!found) {
      EXPECT_EQ(plan.families.size(), 2u) << toString(plan);
    }
    KernelSource ks = generateKernel(f, plan, "k", {});
    EXPECT_FALSE(ks.code.empty());
  }
}

}  // namespace nvfuser
