// Broadcasts of values computed through costly math become segment
// boundaries when their consumers are much larger (segmenter/
// broadcast_materialization.h): a RoPE's cos and sin of position ids,
// broadcast over the heads.
#include <gtest/gtest.h>

#include <string>

#include "../scoped_env.h"
#include "ops/arith.h"
#include "ops/reduction_ops.h"
#include "ops/shape_ops.h"
#include "segment_test_utils.h"
#include "segmenter/broadcast_materialization.h"

namespace nvfuser {

namespace {
// q [1, H, T, D] * cos(pos * inv_freq) broadcast over the H heads: what a
// Hugging Face RoPE with in-graph tables (phi-3.5, Mistral-NeMo) computes.
void defineRopeLikeFusion(Fusion& f, int64_t heads) {
  const int64_t T = 64, D = 16;
  TensorView* q = defineTensor(f, {1, heads, T, D}, DataType::Float);
  TensorView* pos = defineTensor(f, {1, T}, DataType::Int);
  TensorView* inv = defineTensor(f, {D}, DataType::Float);
  TensorView* freqs =
      binaryOp(BinaryOpType::Mul,
               broadcastInDim(castOp(pos, DataType::Float)->asTensor(),
                              {1, T, D}, {0, 1}),
               broadcastInDim(inv, {1, T, D}, {2}))
          ->asTensor();
  TensorView* cos = unaryOp(UnaryOpType::Cos, freqs)->asTensor();
  TensorView* perHead = broadcastInDim(cos, {1, heads, T, D}, {0, 2, 3});
  f.addOutput(binaryOp(BinaryOpType::Mul, q, perHead));
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const std::string& l : lines) {
    s += l + "\n";
  }
  return s;
}
}  // namespace

TEST(BroadcastMaterializationTest, CosBroadcastOverManyHeadsIsWrittenOnce) {
  Fusion f;
  defineRopeLikeFusion(f, 32);
  EXPECT_EQ(broadcastsToMaterialize(f).size(), 1u);
  Options logging = [] {
    ScopedEnv dump("NVFUSER_DUMP", "segmenter_logging");
    return Options::fromEnvironment();
  }();
  auto sf = segmentFusion(f, logging);
  // The table kernel, then the heads reading it.
  ASSERT_EQ(sf->groups().size(), 2u) << sf->toString();
  EXPECT_EQ(sf->groups()[0].outputs.size(), 1u);
  EXPECT_EQ(sf->groups()[0].outputs[0]->nDims(), 3);  // [1, T, D]: once
  const std::string log = joined(sf->log());
  EXPECT_NE(log.find("broadcast materialization: T"), std::string::npos) << log;

  // NVFUSER_DISABLE=broadcast_materialization: one kernel again.
  auto fused = segmentFusion(
      f, Options().withOverrides({}, {"broadcast_materialization"}));
  EXPECT_EQ(fused->groups().size(), 1u);
}

TEST(BroadcastMaterializationTest, FewCopiesOrCheapMathStayFused) {
  Fusion few;  // 4 heads: 4 copies, below kMaterializedBroadcastFactor
  defineRopeLikeFusion(few, 4);
  EXPECT_TRUE(broadcastsToMaterialize(few).empty());
  EXPECT_EQ(segmentFusion(few, Options())->groups().size(), 1u);

  Fusion cheap;  // a cast and a multiply: recomputed at no cost
  TensorView* q = defineTensor(cheap, {1, 32, 64, 16}, DataType::Float);
  TensorView* w = defineTensor(cheap, {1, 64, 16}, DataType::BFloat16);
  TensorView* scaled =
      binaryOp(BinaryOpType::Mul, castOp(w, DataType::Float), w)->asTensor();
  cheap.addOutput(binaryOp(BinaryOpType::Mul, q,
                           broadcastInDim(scaled, {1, 32, 64, 16}, {0, 2, 3})));
  EXPECT_TRUE(broadcastsToMaterialize(cheap).empty());
  EXPECT_EQ(segmentFusion(cheap, Options())->groups().size(), 1u);
}

TEST(BroadcastMaterializationTest, ReducedValuesStayInTheRowKernel) {
  // LayerNorm's rsqrt(var + eps) is costly and broadcast over the row, but
  // a row kernel computes it once per row: a boundary would split the norm.
  Fusion f;
  TensorView* x = defineTensor(f, {64, 256}, DataType::Float);
  TensorView* var =
      reduction(ReductionOpType::Sum,
                binaryOp(BinaryOpType::Mul, x, x)->asTensor(), {1}, false);
  TensorView* r = unaryOp(UnaryOpType::Rsqrt, var)->asTensor();
  f.addOutput(
      binaryOp(BinaryOpType::Mul, x, broadcastInDim(r, {64, 256}, {0})));
  EXPECT_TRUE(broadcastsToMaterialize(f).empty());
  EXPECT_EQ(segmentFusion(f, Options())->groups().size(), 1u);
}

}  // namespace nvfuser
