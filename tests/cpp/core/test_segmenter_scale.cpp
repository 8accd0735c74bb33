// The segmenter's work grows linearly with the fusion: counted, not timed
// (SegmentedFusion::stats()), on fusions with thousands of outputs, where
// the horizontal merge used to ask a question per pair of candidates and
// rebuild ever larger views.
#include <gtest/gtest.h>

#include "ops/arith.h"
#include "ops/reduction_ops.h"
#include "scheduler/pointwise_scheduler.h"
#include "segment_test_utils.h"
#include "segmenter/reachability_matrix.h"

namespace nvfuser {

namespace {
using Finder = SegmentCandidateFinder;

// `chains` independent short chains, each reading two of a few shared
// inputs (6 loop domains) and ending in its own output; every third ends
// in a row sum and every third other one in a softmax-like normalization.
std::unique_ptr<Fusion> outputChains(int64_t chains, int64_t length) {
  auto f = std::make_unique<Fusion>();
  constexpr int64_t kShapes = 6;
  std::vector<TensorView*> in;
  for (int64_t s = 0; s < 2 * kShapes; ++s) {
    in.push_back(defineTensor(*f, {8 + s / 2, 32}, DataType::Float));
  }
  for (int64_t i = 0; i < chains; ++i) {
    const size_t s = size_t(i % kShapes);
    Val* v = binaryOp(BinaryOpType::Add, in[2 * s], in[2 * s + 1]);
    for (int64_t k = 1; k < length; ++k) {
      v = k % 2 ? unaryOp(UnaryOpType::Tanh, v)
                : binaryOp(BinaryOpType::Mul, v, in[2 * s]);
    }
    if (i % 3 == 0) {
      v = reduction(ReductionOpType::Sum, v->asTensor(), {1}, false);
    } else if (i % 3 == 1) {
      v = binaryOp(BinaryOpType::Div, v,
                   reduction(ReductionOpType::Sum, v->asTensor(), {1}, true));
    }
    f->addOutput(v);
  }
  return f;
}

// Every counter that would grow faster than the fusion if a pass turned
// quadratic.
std::vector<int64_t> work(const SegmenterStats& s) {
  return {s.mergeAttempts, s.mergedViews, s.mergedViewExprs,
          s.horizontalPairChecks, s.searchVisits};
}
}  // namespace

// Four times the chains cost at most about four times the work. Before the
// bounds, the horizontal merge's view exprs grew with the square of the
// chains (each candidate was checked against a group holding all earlier
// ones).
TEST(SegmenterScaleTest, HorizontalMergeWorkIsLinear) {
  auto small = outputChains(300, 6);
  auto large = outputChains(1200, 6);
  auto s = segmentFusion(*small, Options());
  auto l = segmentFusion(*large, Options());
  std::vector<int64_t> ws = work(s->stats());
  std::vector<int64_t> wl = work(l->stats());
  ASSERT_GT(s->stats().horizontalPairChecks, 0);
  ASSERT_GT(s->stats().mergedViewExprs, 0);
  for (size_t i = 0; i < ws.size(); ++i) {
    EXPECT_LE(wl[i], 5 * std::max<int64_t>(ws[i], 1))
        << "counter " << i << ": " << l->stats().toString() << " vs "
        << s->stats().toString();
  }
  // Each candidate takes at most a window of questions per set it is in
  // (the readers of its two inputs, the terminal groups), per pass.
  const SegmenterStats& st = l->stats();
  EXPECT_LE(st.horizontalPairChecks, 3 * st.horizontalPasses *
                                         int64_t(Finder::kHorizontalWindow) *
                                         st.initialGroups);
}

// A horizontal group never exceeds the output cap; every output is still
// produced once, and the chains still merge into few groups.
TEST(SegmenterScaleTest, HorizontalGroupsRespectTheOutputCap) {
  auto f = outputChains(1200, 4);
  auto sf = segmentFusion(*f, Options());
  size_t outputs = 0;
  for (const SegmentedGroup& g : sf->groups()) {
    if (g.horizontal) {
      EXPECT_LE(g.outputs.size(), Finder::kMaxHorizontalOutputs);
    }
    outputs += g.outputs.size();
  }
  EXPECT_EQ(outputs, f->outputs().size());
  EXPECT_GE(sf->groups().size(),
            f->outputs().size() / Finder::kMaxHorizontalOutputs);
  EXPECT_LT(sf->groups().size(), f->outputs().size() / 4);
}

// Above the matrix's limit the horizontal merge searches, each search
// bounded; the result is still acyclic (finalize checks) and merged.
TEST(SegmenterScaleTest, SearchesAboveTheMatrixLimitAreBounded) {
  const int64_t chains = ReachabilityMatrix::kMaxGroups + 1000;
  auto f = std::make_unique<Fusion>();
  TensorView* a = defineTensor(*f, {8, 32}, DataType::Float);
  TensorView* b = defineTensor(*f, {8, 32}, DataType::Float);
  for (int64_t i = 0; i < chains; ++i) {
    f->addOutput(unaryOp(UnaryOpType::Exp, binaryOp(BinaryOpType::Add, a, b)));
  }
  auto sf = segmentFusion(*f, Options());
  const SegmenterStats& st = sf->stats();
  EXPECT_GT(st.searchVisits, 0);
  EXPECT_LE(st.searchVisits,
            2 * Finder::kSearchBudget * st.horizontalPairChecks);
  EXPECT_LE(st.horizontalPairChecks, 3 * st.horizontalPasses *
                                         int64_t(Finder::kHorizontalWindow) *
                                         st.initialGroups);
  EXPECT_EQ(sf->groups().size(),
            size_t((chains + Finder::kMaxHorizontalOutputs - 1) /
                   Finder::kMaxHorizontalOutputs));
}

}  // namespace nvfuser
