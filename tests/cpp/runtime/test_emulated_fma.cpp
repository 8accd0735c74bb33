// addcmul of floating tensors is mul(value, t1) and one fma with t2 and
// the input, as ATen's CPU kernel computes it: the product is not rounded
// before the add (session 24: an FX fuzz seed whose frac() of an addcmul
// showed the extra rounding 300 times over).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "emulated_run.h"
#include "ops/arith.h"

namespace nvfuser {

namespace {
// x, t1, t2 of `dt`: random values and ones where x + t1 * t2 cancels
// (x = -3 * t1 and t2 = 3 rounds the product of the unfused form).
std::vector<at::Tensor> cancellingInputs(at::ScalarType dt) {
  at::manual_seed(5);
  at::Tensor t1 = at::randn({4, 64}, at::kDouble).to(dt);
  at::Tensor x = (t1 * -3).to(dt);
  x.index_put_({0}, at::randn({64}, at::kDouble).to(dt));
  at::Tensor t2 = at::full({4, 64}, 3.0, at::kDouble).to(dt);
  t2.index_put_({1}, at::randn({64}, at::kDouble).to(dt));
  return {x, t1, t2};
}
}  // namespace

TEST(FmaTest, AddcmulRoundsOnceLikeAtenAndTheKernelSaysFma) {
  for (DataType dt : {DataType::Float, DataType::Double}) {
    Fusion f;
    TensorView* x = defineTensor(f, {4, 64}, dt);
    TensorView* t1 = defineTensor(f, {4, 64}, dt);
    TensorView* t2 = defineTensor(f, {4, 64}, dt);
    f.addOutput(addcmul(x, t1, t2, defineScalar(f, DataType::Double, 1.0)));
    const at::ScalarType at = dt == DataType::Float ? at::kFloat : at::kDouble;
    std::vector<at::Tensor> in = cancellingInputs(at);
    const std::string code = generatedKernels(f, in);
    EXPECT_EQ(occurrences(code, dt == DataType::Float ? "fmaf(" : " fma("), 1u)
        << code;
    EmulatedRun run = runEmulatedAndAten(f, in);
    ASSERT_EQ(run.atenError, "");
    const at::Tensor want = at::addcmul(in[0], in[1], in[2]);
    // Bit for bit: the ATen path and the emulated kernel both round once.
    EXPECT_TRUE(at::equal(run.ref[0], want));
    EXPECT_TRUE(at::equal(run.outs[0], want));
    // The unfused form differs on the cancelling rows.
    EXPECT_FALSE(at::equal(in[0] + in[1] * in[2], want));
  }
}

TEST(FmaTest, IntegerAddcmulStaysMultiplyAndAdd) {
  Fusion f;
  TensorView* x = defineTensor(f, {8}, DataType::Int);
  f.addOutput(addcmul(x, x, x, defineScalar(f, DataType::Int, int64_t{2})));
  for (const Expr* e : f.liveExprs()) {
    EXPECT_NE(e->opName(), "fma");
  }
}

TEST(FmaTest, FmaRefusesIntegerOperands) {
  Fusion f;
  TensorView* x = defineTensor(f, {8}, DataType::Int);
  try {
    fma(x, x, x);
    FAIL() << "fma of Int tensors was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Type);
    EXPECT_NE(std::string(e.what()).find("fma: operands must be floating"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace nvfuser
