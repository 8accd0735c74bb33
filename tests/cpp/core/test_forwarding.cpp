// The cases FORWARDING.md says every implementation must get right.
#include <gtest/gtest.h>

#include "ops/arith.h"
#include "ops/reduction_ops.h"
#include "ops/shape_ops.h"
#include "segment_test_utils.h"

namespace nvfuser {

using V = std::vector<std::string>;

TEST(ForwardingTest, TwoCastUnaryChainsMeetAtBinaryOp) {
  Fusion f;
  TensorView* a = defineTensor(f, {4, 8}, DataType::Half);
  TensorView* b = defineTensor(f, {4, 8}, DataType::Half);
  Val* ea = unaryOp(UnaryOpType::Exp, castOp(a, DataType::Float));
  Val* sb = unaryOp(UnaryOpType::Sin, castOp(b, DataType::Float));
  f.addOutput(binaryOp(BinaryOpType::Add, ea, sb));
  auto ext = segmentFusion(f, policyOptions(ForwardingPolicy::Extended));
  EXPECT_EQ(describe(*ext), V{"pointwise: add [prologue: cast exp cast sin]"});
  auto off = segmentFusion(f, policyOptions(ForwardingPolicy::Off));
  EXPECT_EQ(describe(*off), V{"pointwise: cast exp cast sin add"});
  auto unary = segmentFusion(f, policyOptions(ForwardingPolicy::UnaryOnly));
  EXPECT_EQ(describe(*unary), describe(*ext));
}

TEST(ForwardingTest, ChainEndingInFusionOutputIsNotForwarded) {
  Fusion f;
  TensorView* a = defineTensor(f, {4, 8}, DataType::Half);
  Val* c = castOp(a, DataType::Float);
  f.addOutput(c);
  auto sf = segmentFusion(f, policyOptions(ForwardingPolicy::Extended));
  EXPECT_TRUE(sf->chains().empty());
  EXPECT_EQ(describe(*sf), V{"pointwise: cast"});
}

TEST(ForwardingTest, ForwardedTensorReadByTwoReductions) {
  Fusion f;
  TensorView* a = defineTensor(f, {4, 8}, DataType::Half);
  Val* e = unaryOp(UnaryOpType::Exp, castOp(a, DataType::Float));
  // A column max (a column sum would ride along in the row kernel).
  f.addOutput(reduction(ReductionOpType::Max, e->asTensor(), {0}, false));
  f.addOutput(reduction(ReductionOpType::Sum, e->asTensor(), {1}, false));
  auto ext = segmentFusion(f, policyOptions(ForwardingPolicy::Extended));
  EXPECT_EQ(describe(*ext), (V{"reduction: max [prologue: cast exp]",
                               "reduction: sum [prologue: cast exp]"}));
  EXPECT_FALSE(readsIntermediate(*ext, e->asTensor()));
  EXPECT_EQ(ext->boundaryBytes(), 0);
  auto off = segmentFusion(f, policyOptions(ForwardingPolicy::Off));
  ASSERT_EQ(off->groups().size(), 2u);
  EXPECT_TRUE(readsIntermediate(*off, e->asTensor()));
  EXPECT_EQ(off->boundaryBytes(), 4 * 8 * 4 * 2);  // written once, read once
}

// cos[T,D] -> broadcast -> expand [B,1,T,D], read by a q branch (H heads)
// and a k branch (Hk heads) that end in different segments.
TEST(ForwardingTest, RopeShapeNeverReadsExpandedTensor) {
  const int64_t B = 2, H = 8, Hk = 2, T = 16, D = 32;
  Fusion f;
  TensorView* q = defineTensor(f, {B, H, T, D}, DataType::BFloat16);
  TensorView* k = defineTensor(f, {B, Hk, T, D}, DataType::BFloat16);
  TensorView* cos = defineTensor(f, {T, D}, DataType::BFloat16);
  TensorView* cb =
      expand(broadcast(cos, {true, true, false, false}), {B, -1, -1, -1});
  f.addOutput(castOp(binaryOp(BinaryOpType::Mul, q, cb), DataType::BFloat16));
  f.addOutput(castOp(binaryOp(BinaryOpType::Mul, k, cb), DataType::BFloat16));
  // Forwarding alone (horizontal fusion off).
  auto ext = segmentFusion(f, policyOptions(ForwardingPolicy::Extended, false));
  EXPECT_EQ(describe(*ext),
            (V{"pointwise: mul cast [prologue: broadcast expand]",
               "pointwise: mul cast [prologue: broadcast expand]"}));
  EXPECT_FALSE(readsIntermediate(*ext, cb));
  auto unary =
      segmentFusion(f, policyOptions(ForwardingPolicy::UnaryOnly, false));
  EXPECT_EQ(describe(*unary),
            (V{"no_op: broadcast expand", "pointwise: mul cast",
               "pointwise: mul cast"}));
  EXPECT_TRUE(readsIntermediate(*unary, cb));
  // Horizontal fusion joins the q and k branches (two loop domains) into
  // one kernel that reads cos once per element it needs.
  auto hor = segmentFusion(f, policyOptions(ForwardingPolicy::Extended));
  EXPECT_EQ(describe(*hor),
            (V{"pointwise: mul cast mul cast [prologue: broadcast expand]"}));
  EXPECT_TRUE(hor->groups()[0].horizontal);
  EXPECT_EQ(hor->boundaryBytes(), 0);
  // Without forwarding, horizontal fusion joins the branches too, and the
  // no_op producer then joins them: one kernel in every policy.
  auto offHor = segmentFusion(f, policyOptions(ForwardingPolicy::Off));
  EXPECT_EQ(offHor->groups().size(), 1u);
  EXPECT_FALSE(readsIntermediate(*offHor, cb));
}

// Two groups that produce outputs of different loop domains from each
// other's values are never joined: a kernel would recompute one at the
// other's indices.
TEST(ForwardingTest, HorizontalFusionNeedsIndependentFamilies) {
  Fusion f;
  TensorView* a = defineTensor(f, {4, 8}, DataType::Float);
  TensorView* e = unaryOp(UnaryOpType::Exp, a)->asTensor();
  f.addOutput(e);
  TensorView* s = slice(e, {0, 0}, {4, 4}, {});
  f.addOutput(unaryOp(UnaryOpType::Neg, s));
  auto sf = segmentFusion(f, policyOptions(ForwardingPolicy::Extended));
  ASSERT_EQ(sf->groups().size(), 2u);
  EXPECT_FALSE(sf->groups()[0].horizontal && sf->groups()[1].horizontal);
}

TEST(ForwardingTest, ReshapeKinds) {
  Fusion f;
  TensorView* m = defineTensor(f, {4, 2, 8}, DataType::Float);
  TensorView* s = defineTensor(f, {8, 8}, DataType::Float);
  TensorView* x = defineTensor(f, {4, 1, 8}, DataType::Float);
  TensorView* merged = reshape(m, {8, 8});                   // merge-only
  TensorView* split = reshape(s, {4, 2, 8});                 // split
  TensorView* ex = reshape(expand(x, {-1, 2, -1}), {8, 8});  // expanded
  f.addOutput(binaryOp(BinaryOpType::Add, merged, ex));
  f.addOutput(unaryOp(UnaryOpType::Neg, split));
  Options o = policyOptions(ForwardingPolicy::Extended);
  auto sf = segmentFusion(f, o);
  std::vector<std::string> forwarded;
  for (const ForwardedChain& c : sf->chains()) {
    forwarded.push_back(c.seed->ref() + "->" + c.forwarded->ref());
  }
  // T0 through its merge-only reshape; T2 only up to its expand.
  EXPECT_EQ(forwarded, (V{"T0->T3", "T2->T5"}));
  auto unary = segmentFusion(f, policyOptions(ForwardingPolicy::UnaryOnly));
  EXPECT_TRUE(unary->chains().empty());
}

TEST(ForwardingTest, ReshapeIntoMatmulBacksOff) {
  Fusion f;
  TensorView* a = defineTensor(f, {12, 2, 8}, DataType::Float);
  TensorView* b = defineTensor(f, {8, 16}, DataType::Float);
  f.addOutput(matmul(reshape(a, {24, 8}), b));
  auto sf = segmentFusion(f, policyOptions(ForwardingPolicy::Extended));
  // The backed-off reshape is an ordinary op again, a view that the
  // matmul's expr_eval segment makes itself (ATen's view, no copy).
  EXPECT_EQ(describe(*sf), (V{"expr_eval: reshape matmul"}));
  ASSERT_EQ(sf->chains().size(), 1u);
  EXPECT_EQ(sf->chains()[0].backedOffConsumers.size(), 1u);
}

TEST(ForwardingTest, BackOffIsLoggedWithReason) {
  Fusion f;
  TensorView* a = defineTensor(f, {12, 2, 8}, DataType::Float);
  TensorView* b = defineTensor(f, {8, 16}, DataType::Float);
  f.addOutput(matmul(reshape(a, {24, 8}), b));
  setenv("NVFUSER_DUMP", "segmenter_logging", 1);
  Options logging = Options::fromEnvironment();
  unsetenv("NVFUSER_DUMP");
  auto sf = segmentFusion(f, logging);
  bool found = false;
  for (const std::string& line : sf->log()) {
    found = found ||
            (line.find("back-off: matmul T3 reads a materialized "
                       "T2") != std::string::npos &&
             line.find("expr_eval takes no prologue") != std::string::npos);
  }
  EXPECT_TRUE(found);
}

// The original discussion's repro: mul-sum with a slice or reshape prologue.
TEST(ForwardingTest, MulSumWithSlicePrologueIsOneSegment) {
  const int64_t M = 24, N = 16, K = 8;
  for (bool useReshape : {false, true}) {
    Fusion f;
    TensorView* t0 = useReshape ? defineTensor(f, {M / 2, 2, K}, DataType::Half)
                                : defineTensor(f, {M + 1, K}, DataType::Half);
    TensorView* t1 = defineTensor(f, {K, N}, DataType::Half);
    TensorView* t2 = useReshape ? reshape(t0, {M, K})
                                : slice(t0, {1, 0}, {M + 1, K}, {1, 1});
    TensorView* t3 = broadcastInDim(t2, {M, K, 1}, {0, 1});
    TensorView* t4 = broadcastInDim(t1, {1, K, N}, {1, 2});
    TensorView* t6 =
        reduction(ReductionOpType::Sum,
                  binaryOp(BinaryOpType::Mul, t3, t4)->asTensor(), {1}, false);
    f.addOutput(castOp(t6, DataType::Half));
    for (ForwardingPolicy p :
         {ForwardingPolicy::Off, ForwardingPolicy::UnaryOnly,
          ForwardingPolicy::Extended}) {
      auto sf = segmentFusion(f, policyOptions(p));
      ASSERT_EQ(sf->groups().size(), 1u) << toString(p);
      EXPECT_EQ(sf->groups()[0].scheduler, SchedulerType::Reduction);
    }
    auto ext = segmentFusion(f, policyOptions(ForwardingPolicy::Extended));
    EXPECT_EQ(describe(*ext)[0],
              useReshape
                  ? "reduction: mul sum cast [prologue: reshape broadcast "
                    "broadcast]"
                  : "reduction: slice broadcast mul sum cast [prologue: "
                    "broadcast]");
  }
}

TEST(ForwardingTest, SegmentSetBoundaryIsNeverCrossed) {
  Fusion f;
  TensorView* a = defineTensor(f, {4, 8}, DataType::Half);
  Val* c = castOp(a, DataType::Float);
  f.addOutput(unaryOp(UnaryOpType::Exp, segmentSet(c)));
  auto sf = segmentFusion(f, policyOptions(ForwardingPolicy::Extended));
  EXPECT_TRUE(sf->chains().empty());
  EXPECT_EQ(describe(*sf),
            (V{"pointwise: cast", "pointwise: segment_set exp"}));
}

TEST(ForwardingTest, FactoryUsedOnBothSidesOfABoundary) {
  Fusion f;
  TensorView* a = defineTensor(f, {4, 8}, DataType::Float);
  Scalar* one = defineScalar(f, DataType::Double, ScalarValue(1.5));
  TensorView* full8 = full(f, {4, 8}, one, DataType::Float);
  Val* m = binaryOp(BinaryOpType::Mul, a, full8);
  // A column max: a column sum would share the row kernel.
  f.addOutput(reduction(ReductionOpType::Max, m->asTensor(), {0}, false));
  Val* n = binaryOp(BinaryOpType::Add, a, full8);
  f.addOutput(reduction(ReductionOpType::Sum, n->asTensor(), {1}, false));
  for (ForwardingPolicy p :
       {ForwardingPolicy::UnaryOnly, ForwardingPolicy::Extended}) {
    auto sf = segmentFusion(f, policyOptions(p));
    EXPECT_EQ(describe(*sf), (V{"reduction: mul max [prologue: full]",
                                "reduction: add sum [prologue: full]"}))
        << toString(p);
    EXPECT_EQ(sf->boundaryBytes(), 0);
  }
  // Without forwarding something computed from the factory crosses.
  auto off = segmentFusion(f, policyOptions(ForwardingPolicy::Off));
  EXPECT_EQ(off->groups().size(), 2u);
  EXPECT_GT(off->boundaryBytes(), 0);
}

TEST(ForwardingTest, PolicyNames) {
  EXPECT_EQ(forwardingPolicyFrom(Options()), ForwardingPolicy::Extended);
  EXPECT_STREQ(toString(ForwardingPolicy::UnaryOnly), "unary-only");
}

}  // namespace nvfuser
