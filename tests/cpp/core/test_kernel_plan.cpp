// The plan a scheduler hands the generator (scheduler/kernel_plan.h): one
// strategy per scheduler kind, refused with a reason when the segment is
// not of that kind, and the generator builds exactly the plan it is given.
#include <gtest/gtest.h>

#include <string>

#include "codegen/pointwise_codegen.h"
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
  EXPECT_NE(plan.splittableSum, nullptr);
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
  EXPECT_GT(generatePointwiseKernel(cols, plan, "k", {}).workspaceBytes, 0);
  plan.splittableSum = nullptr;
  EXPECT_EQ(generatePointwiseKernel(cols, plan, "k", {}).workspaceBytes, 0);
}

TEST(KernelPlanTest, ThreadsTakingSlotsGetAFullGridUnlessSwitchedOff) {
  // Pointwise and looping sums: a block per blockDim slots. A split sum's
  // tiles and row kernels launch their own way.
  Fusion pw;
  negate(pw);
  KernelPlan plan;
  ASSERT_TRUE(planKernel(SchedulerType::PointWise, pw, &plan));
  EXPECT_TRUE(plan.fullGrid);
  EXPECT_TRUE(generatePointwiseKernel(pw, plan, "k", {}).fullGrid);
  KernelPlanOptions wave;
  wave.fullGrid = false;
  ASSERT_TRUE(planKernel(SchedulerType::PointWise, pw, &plan, wave));
  EXPECT_FALSE(plan.fullGrid);
  EXPECT_FALSE(generatePointwiseKernel(pw, plan, "k", {}).fullGrid);

  Fusion cols;
  columnSum(cols);
  ASSERT_TRUE(planKernel(SchedulerType::Reduction, cols, &plan));
  ASSERT_NE(plan.splittableSum, nullptr);
  EXPECT_TRUE(plan.fullGrid);  // but the split kernel keeps one wave
  KernelSource split = generatePointwiseKernel(cols, plan, "k", {});
  EXPECT_TRUE(split.blockPerSlot);
  EXPECT_FALSE(split.fullGrid);
  Fusion rows;
  rowSum(rows);
  ASSERT_TRUE(planKernel(SchedulerType::Reduction, rows, &plan));
  EXPECT_FALSE(plan.fullGrid);
}

}  // namespace nvfuser
