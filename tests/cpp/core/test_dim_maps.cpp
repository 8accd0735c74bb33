// Per-dim maps through broadcasts, squeezes and permutes
// (analysis/dim_maps.h): each against the op's meaning, and a fuzzer that
// maps random dims through random chains of the three ops and back.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "analysis/dim_maps.h"
#include "ir/fusion.h"
#include "ops/arith.h"
#include "ops/shape_ops.h"

namespace nvfuser {
namespace {

using Dims = std::vector<int64_t>;

TEST(DimMapsTest, EachOpMovesDimsAsItsOutputDoes) {
  Fusion f;
  TensorView* t = defineTensor(f, {2, 1, 3}, DataType::Float);
  const Expr* b = broadcast(t, {true, false, false, true, false})->definition();
  EXPECT_EQ(operandDims(b, Dims{10, 11, 12, 13, 14}, int64_t{-1}),
            (Dims{11, 12, 14}));
  EXPECT_EQ(consumerDims(b, Dims{11, 12, 14}, int64_t{-1}),
            (Dims{-1, 11, 12, -1, 14}));

  const Expr* s = squeeze(t, {1})->definition();
  EXPECT_EQ(operandDims(s, Dims{10, 12}, int64_t{-1}), (Dims{10, -1, 12}));
  EXPECT_EQ(consumerDims(s, Dims{10, 11, 12}, int64_t{-1}), (Dims{10, 12}));

  // permute(t, [2, 0, 1]): output dim i is input dim perm[i].
  const Expr* p = permute(t, {2, 0, 1})->definition();
  EXPECT_EQ(consumerDims(p, Dims{10, 11, 12}, int64_t{-1}), (Dims{12, 10, 11}));
  EXPECT_EQ(operandDims(p, Dims{12, 10, 11}, int64_t{-1}), (Dims{10, 11, 12}));
  EXPECT_TRUE(movesDimsOnly(p));
  EXPECT_FALSE(movesDimsOnly(unaryOp(UnaryOpType::Neg, t)->definition()));
}

// A random chain of broadcasts, squeezes (of the size-1 dims) and permutes;
// each dim of the input carried forward and back must come back unchanged,
// and forward it must land where the op puts that dim.
TEST(DimMapsTest, RandomChainsMapForwardAndBackAgain) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    Fusion f;
    const int64_t rank = 1 + trial % 4;
    TensorView* t = defineTensor(f, Dims(size_t(rank), 1), DataType::Float);
    Dims labels(static_cast<size_t>(rank));
    std::iota(labels.begin(), labels.end(), 0);
    for (int step = 0; step < 6; ++step) {
      const int64_t n = t->nDims();
      const Expr* e = nullptr;
      const int kind = int(rng() % 3);
      if (kind == 0) {
        std::vector<bool> added(size_t(n) + 1, false);
        added[rng() % added.size()] = true;
        e = broadcast(t, added)->definition();
      } else if (kind == 1 && n > 1) {
        e = squeeze(t, {int64_t(rng() % size_t(n))})->definition();
      } else {
        Dims perm(static_cast<size_t>(n));
        std::iota(perm.begin(), perm.end(), 0);
        std::shuffle(perm.begin(), perm.end(), rng);
        e = permute(t, perm)->definition();
      }
      const Dims out = consumerDims(e, labels, int64_t{-1});
      ASSERT_EQ(int64_t(out.size()), e->out()->nDims());
      // Back again: the labels, except that a squeezed dim comes back as
      // the filler.
      Dims back = operandDims(e, out, int64_t{-1});
      Dims expected = labels;
      if (const auto* sq = exprAs<SqueezeOp>(e)) {
        for (size_t d = 0; d < expected.size(); ++d) {
          expected[d] = sq->isSqueezed()[d] ? -1 : expected[d];
        }
      }
      ASSERT_EQ(back, expected) << e->toString();
      t = e->out();
      labels = out;
    }
  }
}

}  // namespace
}  // namespace nvfuser
