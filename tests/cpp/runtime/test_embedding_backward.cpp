// The touched-rows embedding backward (runtime/embedding_backward.h) on
// the CPU against ATen's embedding_dense_backward: Float exactly (both sum
// a row's ids in order), BFloat16 to its rounding (ours sums in Float and
// rounds once, ATen's CPU kernel rounds every add); repeated ids, 1-3 dim
// ids, int32 ids, padding_idx in and out of range, rows nobody touches,
// no ids at all; bad arguments raise; nvfuser::embedding_dense_backward
// is in the dispatcher.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "exceptions.h"
#include "runtime/embedding_backward.h"
#include "runtime/torch_operators.h"

namespace nvfuser {

namespace {
struct Case {
  std::vector<int64_t> idShape;
  int64_t numWeights;
  int64_t maxId;  // ids are drawn from [0, maxId): repeats when small
  int64_t paddingIdx;
};

const int64_t kDim = 7;

std::vector<Case> cases() {
  return {
      {{20}, 5, 5, -1},       // every row repeated
      {{3, 8}, 10, 10, -1},   // 2-D ids
      {{2, 3, 4}, 9, 9, -1},  // 3-D ids
      {{4, 6}, 50, 6, -1},    // most rows untouched
      {{4, 6}, 6, 6, 2},      // padding row among the ids
      {{4, 6}, 6, 6, 6},      // padding_idx past the table
      {{4, 6}, 6, 6, 100},    // far past it
      {{0}, 4, 4, -1},        // no ids
      {{2, 0}, 4, 4, 1},      // no ids, 2-D
  };
}

// grad [ids..., kDim] and ids of `dtype`.
std::pair<at::Tensor, at::Tensor> inputs(const Case& c, at::ScalarType grad,
                                         at::ScalarType ids) {
  std::vector<int64_t> gradShape = c.idShape;
  gradShape.push_back(kDim);
  return {at::randn(gradShape).to(grad),
          at::randint(0, c.maxId, c.idShape, at::kLong).to(ids)};
}

void expectMatchesAten(at::ScalarType grad, at::ScalarType ids, double tol) {
  at::manual_seed(0);
  for (const Case& c : cases()) {
    auto [g, i] = inputs(c, grad, ids);
    const at::Tensor want =
        at::embedding_dense_backward(g, i, c.numWeights, c.paddingIdx, false);
    const at::Tensor got =
        embeddingBackwardByTouchedRows(g, i, c.numWeights, c.paddingIdx);
    SCOPED_TRACE(testing::Message()
                 << "ids " << i.sizes() << " of " << c.numWeights
                 << ", padding " << c.paddingIdx);
    ASSERT_EQ(got.sizes(), want.sizes());
    ASSERT_EQ(got.scalar_type(), want.scalar_type());
    if (tol == 0.0) {
      EXPECT_TRUE(at::equal(got, want));
    } else {
      EXPECT_TRUE(
          at::allclose(got.to(at::kFloat), want.to(at::kFloat), tol, tol));
    }
  }
}
}  // namespace

TEST(EmbeddingBackward, FloatMatchesAtenExactly) {
  expectMatchesAten(at::kFloat, at::kLong, 0.0);
  expectMatchesAten(at::kDouble, at::kLong, 0.0);
}

TEST(EmbeddingBackward, Int32Ids) {
  expectMatchesAten(at::kFloat, at::kInt, 0.0);
}

TEST(EmbeddingBackward, BFloat16SumsInFloat) {
  expectMatchesAten(at::kBFloat16, at::kLong, 5e-2);
  expectMatchesAten(at::kHalf, at::kInt, 1e-2);
}

TEST(EmbeddingBackward, BFloat16RoundsTheFloatSumOnce) {
  // 256 + 1 + ... + 1 (eight ones) is 264 in Float; BFloat16 adds that
  // round each step stay at 256.
  const at::Tensor ids = at::zeros({9}, at::kLong);
  at::Tensor grad = at::ones({9, 2}, at::kBFloat16);
  grad[0].fill_(256);
  const at::Tensor got = embeddingBackwardByTouchedRows(grad, ids, 3, -1);
  EXPECT_EQ(got[0][0].item<float>(), 264.0f);
  EXPECT_TRUE(at::equal(got.narrow(0, 1, 2), at::zeros({2, 2}, at::kBFloat16)));
}

TEST(EmbeddingBackward, StridedGrad) {
  at::manual_seed(3);
  const at::Tensor g = at::randn({kDim, 4, 5}).permute({1, 2, 0});
  const at::Tensor i = at::randint(0, 3, {4, 5}, at::kLong);
  EXPECT_TRUE(at::equal(embeddingBackwardByTouchedRows(g, i, 3, -1),
                        at::embedding_dense_backward(g, i, 3, -1, false)));
}

TEST(EmbeddingBackward, EmptyEmbeddingDim) {
  const at::Tensor i = at::tensor({1, 1, 0}, at::kLong);
  for (at::ScalarType t : {at::kFloat, at::kBFloat16}) {
    const at::Tensor got =
        embeddingBackwardByTouchedRows(at::zeros({3, 0}, t), i, 4, -1);
    EXPECT_EQ(got.sizes(), (std::vector<int64_t>{4, 0}));
  }
}

TEST(EmbeddingBackward, DenseBackwardOnTheCpuIsAtens) {
  // Off CUDA (and with scale_grad_by_freq) ATen's kernel runs as eager's.
  at::manual_seed(1);
  auto [g, i] = inputs({{5, 6}, 8, 8, 3}, at::kBFloat16, at::kLong);
  for (bool scale : {false, true}) {
    EXPECT_TRUE(at::equal(embeddingDenseBackward(g, i, 8, 3, scale),
                          at::embedding_dense_backward(g, i, 8, 3, scale)));
  }
}

// ATen views grad as [indices.numel(), D]: any shape holding those rows is
// taken, as ATen takes it.
TEST(EmbeddingBackward, GradOfAnyShapeWithOneRowPerIdAsAtenTakesIt) {
  const at::Tensor ids = at::tensor({1, 3, 1, 0, 3, 1}, at::kLong).view({2, 3});
  const at::Tensor g = at::randn({6, 4});
  EXPECT_TRUE(at::equal(embeddingBackwardByTouchedRows(g, ids, 5, -1),
                        at::embedding_dense_backward(g, ids, 5, -1, false)));
  EXPECT_TRUE(at::equal(embeddingDenseBackward(g, ids, 5, -1, false),
                        at::embedding_dense_backward(g, ids, 5, -1, false)));
}

// The sizes measured (session 26, H100): Llama's 4096 ids x 2048 were
// faster summed by touched rows, Llama 3's 8192 x 4096 slower.
TEST(EmbeddingBackward, TouchedRowsOnlyWhereTheyWereMeasuredFaster) {
  EXPECT_TRUE(touchedRowsPays(4096, 2048));
  EXPECT_TRUE(touchedRowsPays(2048, 4096));
  EXPECT_FALSE(touchedRowsPays(8192, 4096));
  EXPECT_FALSE(touchedRowsPays(4097, 2048));
}

TEST(EmbeddingBackward, BadArgumentsRaise) {
  const at::Tensor ids = at::zeros({2, 3}, at::kLong);
  for (bool touched : {false, true}) {
    auto call = [&](const at::Tensor& g, const at::Tensor& i, int64_t n) {
      return touched ? embeddingBackwardByTouchedRows(g, i, n, -1)
                     : embeddingDenseBackward(g, i, n, -1, false);
    };
    EXPECT_THROW(call(at::zeros({2, 3}), ids, 4), Error);     // no dim D
    EXPECT_THROW(call(at::zeros({2, 4, 4}), ids, 4), Error);  // 4 != 3
    EXPECT_THROW(call(at::zeros({2, 3, 4}), ids.to(at::kFloat), 4), Error);
    EXPECT_THROW(call(at::zeros({2, 3, 4}), ids, -1), Error);
  }
  try {
    embeddingDenseBackward(at::zeros({2, 4, 4}), ids, 4, -1, false);
    ADD_FAILURE() << "grad [2, 4, 4] for ids [2, 3] did not raise";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("per index (6 indices)"),
              std::string::npos)
        << e.what();
  }
}

TEST(EmbeddingBackward, RegisteredWithTheDispatcher) {
  linkTorchOperators();
  auto handle = c10::Dispatcher::singleton().findSchema(
      {"nvfuser::embedding_dense_backward", ""});
  ASSERT_TRUE(handle.has_value());
  at::manual_seed(2);
  auto [g, i] = inputs({{3, 4}, 6, 6, 1}, at::kFloat, at::kInt);
  const at::Tensor got =
      handle
          ->typed<at::Tensor(const at::Tensor&, const at::Tensor&, int64_t,
                             int64_t, bool)>()
          .call(g, i, 6, 1, false);
  EXPECT_TRUE(at::equal(got, at::embedding_dense_backward(g, i, 6, 1, false)));
  // The meta kernel: the result's sizes and dtype alone.
  const at::Tensor meta =
      handle
          ->typed<at::Tensor(const at::Tensor&, const at::Tensor&, int64_t,
                             int64_t, bool)>()
          .call(g.to(at::kMeta), i.to(at::kMeta), 6, 1, false);
  EXPECT_TRUE(meta.is_meta());
  EXPECT_EQ(meta.sizes(), (std::vector<int64_t>{6, kDim}));
}

}  // namespace nvfuser
