// Segmenter mechanics: scheduler decisions, acyclic merging, determinism,
// and the dumps.
#include <gtest/gtest.h>

#include "ops/arith.h"
#include "ops/reduction_ops.h"
#include "ops/shape_ops.h"
#include "scheduler/scheduler_registry.h"
#include "segment_test_utils.h"

namespace nvfuser {

using V = std::vector<std::string>;

TEST(SchedulerTest, RegistryPriorityAndReasons) {
  Fusion f;
  TensorView* a = defineTensor(f, {4, 8}, DataType::Float);
  f.addOutput(permute(a, {1, 0}));
  SchedulerRegistry r;
  EXPECT_EQ(r.proposeScheduler(wholeView(f)), SchedulerType::NoOp);

  Fusion g;
  TensorView* x = defineTensor(g, {4, 8}, DataType::Float);
  TensorView* s = reduction(ReductionOpType::Sum, x, {1}, true);
  g.addOutput(binaryOp(BinaryOpType::Div, x, s));  // softmax-like
  EXPECT_EQ(r.proposeScheduler(wholeView(g)), SchedulerType::InnerPersistent);
  std::string reasons = r.rejectionReasons(wholeView(g));
  EXPECT_NE(reasons.find("reduction: a reduced value is broadcast back"),
            std::string::npos)
      << reasons;
}

TEST(SchedulerTest, AReshapeOfUnitDimsIsAViewWhateverTheStrides) {
  // x [4, 3, 8] permuted and sliced to [1, 4, 8]: dropping the size-1 dim
  // is a view; merging the permuted dims needs a copy.
  SchedulerRegistry r;
  Fusion f;
  TensorView* x = defineTensor(f, {4, 3, 8}, DataType::Float);
  TensorView* s = slice(permute(x, {1, 0, 2}), {1, 0, 0}, {2, 4, 8}, {});
  f.addOutput(reshape(s, {4, 8}));
  EXPECT_EQ(r.proposeScheduler(wholeView(f)), SchedulerType::NoOp);

  // The same through an expanded dim (stride 0): one of its copies, its
  // size-1 dim reshaped away, is the input itself.
  Fusion e;
  TensorView* z = defineTensor(e, {4, 8}, DataType::Float);
  TensorView* copies = expand(broadcast(z, {false, true, false}), {4, 3, 8});
  e.addOutput(reshape(slice(copies, {0, 1, 0}, {4, 2, 8}, {}), {4, 8}));
  EXPECT_EQ(r.proposeScheduler(wholeView(e)), SchedulerType::NoOp);

  Fusion g;
  TensorView* y = defineTensor(g, {4, 3, 8}, DataType::Float);
  g.addOutput(reshape(permute(y, {1, 0, 2}), {12, 8}));
  EXPECT_NE(r.proposeScheduler(wholeView(g)), SchedulerType::NoOp);
  EXPECT_NE(r.rejectionReasons(wholeView(g))
                .find("reshapes a permuted or sliced tensor"),
            std::string::npos);
}

TEST(SchedulerTest, SplittingASlicedDimIsAViewMergingIsNot) {
  // An HF fused qkv [2, 4, 3 * 8]: its v slice split into heads [2, 4, 2,
  // 4] is a view; merging the slice's dims [2, 4, 8] to [8, 8] is a copy.
  SchedulerRegistry r;
  Fusion f;
  TensorView* qkv = defineTensor(f, {2, 4, 24}, DataType::Float);
  TensorView* v = slice(qkv, {0, 0, 16}, {2, 4, 24}, {});
  f.addOutput(permute(reshape(v, {2, 4, 2, 4}), {0, 2, 1, 3}));
  EXPECT_EQ(r.proposeScheduler(wholeView(f)), SchedulerType::NoOp);

  Fusion g;
  TensorView* qkv2 = defineTensor(g, {2, 4, 24}, DataType::Float);
  g.addOutput(reshape(slice(qkv2, {0, 0, 16}, {2, 4, 24}, {}), {8, 8}));
  EXPECT_NE(r.proposeScheduler(wholeView(g)), SchedulerType::NoOp);
}

TEST(SchedulerTest, ASliceOfAnInputIsNotCopiedByAKernel) {
  // x[:, 4:] next to x[:, :4] squared: the kernel would copy the slice; a
  // no_op segment returns it as a view.
  SchedulerRegistry r;
  Fusion f;
  TensorView* x = defineTensor(f, {4, 8}, DataType::Float);
  TensorView* left = slice(x, {0, 0}, {4, 4}, {});
  f.addOutput(binaryOp(BinaryOpType::Mul, left, left));
  f.addOutput(slice(x, {0, 4}, {4, 8}, {}));
  EXPECT_NE(r.proposeScheduler(wholeView(f)), SchedulerType::PointWise);
  EXPECT_NE(r.rejectionReasons(wholeView(f)).find("is a view of input"),
            std::string::npos)
      << r.rejectionReasons(wholeView(f));
}

TEST(SchedulerTest, ExprEvalTakesViewsOfItsOperandsOnly) {
  // x @ w.t(): one expr_eval segment (a no_op segment per weight transpose
  // cost an FX region's execute a segment each). The result's view is a
  // segment of its own: a kernel reading it would plan for the result's
  // dense layout.
  Fusion f;
  TensorView* x = defineTensor(f, {8, 32}, DataType::Float);
  TensorView* w = defineTensor(f, {16, 32}, DataType::Float);
  f.addOutput(reshape(matmul(x, permute(w, {1, 0})), {2, 4, 16}));
  auto sf = segmentFusion(f, Options());
  EXPECT_EQ(describe(*sf), (V{"expr_eval: permute matmul", "no_op: reshape"}));
  SchedulerRegistry r;
  EXPECT_NE(r.rejectionReasons(wholeView(f))
                .find("expr_eval takes views of its operands only, but "
                      "reshape"),
            std::string::npos)
      << r.rejectionReasons(wholeView(f));

  // A transpose of the result read by a kernel joins the kernel (transpose
  // tiles), as before.
  Fusion t;
  TensorView* a0 = defineTensor(t, {8, 32}, DataType::Float);
  TensorView* b0 = defineTensor(t, {32, 16}, DataType::Float);
  t.addOutput(unaryOp(UnaryOpType::Neg, permute(matmul(a0, b0), {1, 0})));
  EXPECT_EQ(describe(*segmentFusion(t, Options())),
            (V{"expr_eval: matmul", "pointwise: permute neg"}));

  // A value computed next to it is a kernel's, not ATen's.
  Fusion g;
  TensorView* a = defineTensor(g, {8, 32}, DataType::Float);
  TensorView* b = defineTensor(g, {32, 16}, DataType::Float);
  g.addOutput(matmul(a, unaryOp(UnaryOpType::Neg, b)->asTensor()));
  EXPECT_NE(r.proposeScheduler(wholeView(g)), SchedulerType::ExprEval);
  EXPECT_NE(r.rejectionReasons(wholeView(g))
                .find("and views of its operands, not neg"),
            std::string::npos)
      << r.rejectionReasons(wholeView(g));
  // Two ATen ops are two segments.
  Fusion h;
  TensorView* c = defineTensor(h, {8, 8}, DataType::Float);
  h.addOutput(matmul(matmul(c, c), permute(c, {1, 0})));
  EXPECT_NE(r.proposeScheduler(wholeView(h)), SchedulerType::ExprEval);
  // A reshape of a transposed operand is a copy: not a view op.
  Fusion k;
  TensorView* d = defineTensor(k, {4, 8, 2}, DataType::Float);
  TensorView* e = defineTensor(k, {8, 8}, DataType::Float);
  k.addOutput(matmul(e, reshape(permute(d, {1, 0, 2}), {8, 8})));
  EXPECT_NE(r.proposeScheduler(wholeView(k)), SchedulerType::ExprEval);
}

TEST(SegmenterTest, AViewAnExprEvalSegmentMakesOfItsInputCostsNoBytes) {
  // w.t() read by two matmuls: the first one's segment makes the view and
  // hands it to the second; no byte of it is written.
  Fusion f;
  TensorView* x = defineTensor(f, {8, 32}, DataType::Float);
  TensorView* w = defineTensor(f, {16, 32}, DataType::Float);
  TensorView* wt = permute(w, {1, 0});
  f.addOutput(matmul(x, wt));
  f.addOutput(matmul(binaryOp(BinaryOpType::Add, x, x)->asTensor(), wt));
  auto sf = segmentFusion(f, Options());
  EXPECT_EQ(describe(*sf), (V{"expr_eval: permute matmul", "pointwise: add",
                              "expr_eval: matmul"}));
  // x + x crosses (written once, read once); w.t() does not count.
  EXPECT_EQ(sf->boundaryBytes(), 8 * 32 * 4 * 2);
}

TEST(SchedulerTest, PointwiseNeedsOneLoopDomain) {
  Fusion f;
  TensorView* a = defineTensor(f, {4, 8}, DataType::Float);
  TensorView* b = defineTensor(f, {4, 6}, DataType::Float);
  f.addOutput(unaryOp(UnaryOpType::Neg, a));
  f.addOutput(unaryOp(UnaryOpType::Neg, b));
  SchedulerRegistry r;
  EXPECT_FALSE(r.proposeScheduler(wholeView(f)).has_value());
  EXPECT_NE(r.rejectionReasons(wholeView(f))
                .find("pointwise outputs need one loop domain"),
            std::string::npos);
}

TEST(SchedulerTest, DifferentReductionSignaturesRejected) {
  Fusion f;
  TensorView* a = defineTensor(f, {4, 8}, DataType::Float);
  f.addOutput(reduction(ReductionOpType::Sum, a, {0}, false));
  f.addOutput(reduction(ReductionOpType::Sum, a, {1}, false));
  SchedulerRegistry r;
  EXPECT_NE(r.rejectionReasons(wholeView(f))
                .find("reductions with different signatures"),
            std::string::npos);
}

// A bias gradient (column sum of [4096, 2048] into 2048 values) next to
// another output: one serial kernel would loop over 4096 rows in each of
// 256 threads (4.7 ms on an H200 in a Qwen2 backward). The reduction
// scheduler says no unless the sum is the segment's only output (the
// generator then splits it over the GPU).
TEST(SchedulerTest, StarvedSerialSumOnlyAlone) {
  Fusion f;
  TensorView* x = defineTensor(f, {4096, 2048}, DataType::BFloat16);
  TensorView* s = reduction(ReductionOpType::Sum,
                            castOp(x, DataType::Float)->asTensor(), {0}, false);
  f.addOutput(castOp(s, DataType::BFloat16));
  SchedulerRegistry r;
  EXPECT_EQ(r.proposeScheduler(wholeView(f)), SchedulerType::Reduction);
  f.addOutput(s);  // the float sum too: two outputs
  EXPECT_FALSE(r.proposeScheduler(wholeView(f)).has_value());
  std::string reasons = r.rejectionReasons(wholeView(f));
  EXPECT_NE(reasons.find("sums 4096 rows into 2048 values: only a lone sum"),
            std::string::npos)
      << reasons;

  Fusion g;  // short columns stay one serial kernel
  TensorView* y = defineTensor(g, {64, 2048}, DataType::Float);
  TensorView* t = reduction(ReductionOpType::Sum, y, {0}, false);
  g.addOutput(t);
  g.addOutput(unaryOp(UnaryOpType::Neg, t));
  EXPECT_EQ(r.proposeScheduler(wholeView(g)), SchedulerType::Reduction);
}

// exp -> sum over dim 0 -> broadcast back and add to exp: merging exp with
// the add directly would close a cycle through the reduction.
TEST(SegmenterTest, MergingNeverCreatesCycles) {
  Fusion f;
  TensorView* a = defineTensor(f, {4, 8}, DataType::Float);
  Val* e = unaryOp(UnaryOpType::Exp, a);
  TensorView* s = reduction(ReductionOpType::Sum, e->asTensor(), {0}, true);
  f.addOutput(binaryOp(BinaryOpType::Add, e, s));
  auto sf = segmentFusion(f, policyOptions(ForwardingPolicy::Off));
  EXPECT_EQ(describe(*sf),
            (V{"reduction: exp sum broadcast", "pointwise: add"}));
}

TEST(SegmenterTest, ScalarOpsAreReplicatedNotGrouped) {
  Fusion f;
  TensorView* a = defineTensor(f, {4, 8}, DataType::Float);
  Scalar* s = defineScalar(f, DataType::Double, std::nullopt);
  Val* twice = binaryOp(BinaryOpType::Mul, s, s);
  f.addOutput(binaryOp(BinaryOpType::Add, a, twice));
  auto sf = segmentFusion(f, Options());
  EXPECT_EQ(describe(*sf), V{"pointwise: add"});
}

TEST(SegmenterTest, LongChainMergesIntoOneGroup) {
  Fusion f;
  TensorView* a = defineTensor(f, {4, 8}, DataType::Float);
  TensorView* b = defineTensor(f, {4, 8}, DataType::Float);
  Val* v = binaryOp(BinaryOpType::Add, a, b);
  for (int i = 0; i < 200; ++i) {
    v = binaryOp(i % 2 ? BinaryOpType::Mul : BinaryOpType::Sub, v, a);
  }
  f.addOutput(v);
  auto sf = segmentFusion(f, Options());
  ASSERT_EQ(sf->groups().size(), 1u);
  EXPECT_EQ(sf->groups()[0].body.size(), 201u);
}

TEST(SegmenterTest, DeterministicAndDumps) {
  auto build = [](Fusion& f) {
    TensorView* a = defineTensor(f, {4, 8}, DataType::Half);
    Val* e = unaryOp(UnaryOpType::Exp, castOp(a, DataType::Float));
    // Column and row max: two reduction groups (a column sum would join
    // the row kernel).
    f.addOutput(reduction(ReductionOpType::Max, e->asTensor(), {0}, false));
    f.addOutput(reduction(ReductionOpType::Max, e->asTensor(), {1}, false));
  };
  Fusion f1, f2;
  build(f1);
  build(f2);
  auto s1 = segmentFusion(f1, Options());
  auto s2 = segmentFusion(f2, Options());
  EXPECT_EQ(s1->toString(), s2->toString());
  std::string text = s1->toString();
  EXPECT_NE(text.find("g{(reduction)\ngroup id: 0\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("  [forwarded] T1_l_float"), std::string::npos) << text;
  std::string dot = s1->toDot();
  EXPECT_NE(dot.find("subgraph cluster_0"), std::string::npos);
  EXPECT_NE(dot.find("style=dashed"), std::string::npos);
}

TEST(SegmenterTest, EmptyFusionHasNoGroups) {
  Fusion f;
  TensorView* a = defineTensor(f, {4}, DataType::Float);
  f.addOutput(a);
  auto sf = segmentFusion(f, Options());
  EXPECT_TRUE(sf->groups().empty());
}

}  // namespace nvfuser
