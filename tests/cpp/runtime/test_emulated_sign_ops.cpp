// A cast to a 16-bit float of -x or |x| of a value of that type is exact:
// the generator flips or clears the sign bit (nvf_neg16, nvf_abs16)
// instead of converting through float and rounding back. An FD's
// rotate-half, cast(neg(x2), bf16), had its rounding inside the branch
// (issue 16: that FD forward ran at 27.9 of 32 active threads per warp,
// the same rotation through torch.compile at 32).
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "codegen/kernel_codegen.h"
#include "emulated_run.h"
#include "ops/arith.h"

namespace nvfuser {

namespace {
std::string kernelOf(Fusion& f) {
  const std::string code = generateKernel(f, "k", {}).code;
  return code.substr(code.find("extern \"C\""));
}

at::Tensor specialValues(at::ScalarType t) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  return at::tensor({0.f, -0.f, 1.5f, -2.25f, inf, -inf, nan, 3e-8f, -65504.f,
                     1e-3f, -7.f, 0.5f, 100.f, -0.125f, 9.f, -1.f})
      .reshape({2, 8})
      .to(t);
}
}  // namespace

TEST(SignOpsTest, NegAndAbsOfBf16AndHalfFlipBitsAndMatchAten) {
  for (DataType dt : {DataType::BFloat16, DataType::Half}) {
    Fusion f;
    TensorView* x = defineTensor(f, {2, 8}, dt);
    Val* wide = castOp(x, DataType::Float);
    f.addOutput(castOp(unaryOp(UnaryOpType::Neg, wide), dt));
    f.addOutput(
        castOp(unaryOp(UnaryOpType::Abs, unaryOp(UnaryOpType::Neg, wide)), dt));
    // neg of the 16-bit value itself (computed in float) cast back.
    f.addOutput(castOp(unaryOp(UnaryOpType::Neg, x), dt));
    const std::string code = kernelOf(f);
    EXPECT_NE(code.find("nvf_neg16("), std::string::npos) << code;
    EXPECT_NE(code.find("nvf_abs16("), std::string::npos) << code;
    EXPECT_EQ(code.find("nvf_f2b"), std::string::npos) << code;
    EXPECT_EQ(code.find("nvf_f2h"), std::string::npos) << code;
    const at::ScalarType st =
        dt == DataType::BFloat16 ? at::kBFloat16 : at::kHalf;
    EmulatedRun run = runEmulatedAndAten(f, {specialValues(st)});
    ASSERT_EQ(run.atenError, "");
    for (size_t k = 0; k < run.outs.size(); ++k) {
      EXPECT_TRUE(sameValues(run.outs[k], run.ref[k])) << k;
    }
  }
}

TEST(SignOpsTest, RoundingCastsStillRound) {
  // Double through float and a product are not exact: they convert.
  Fusion f;
  TensorView* x = defineTensor(f, {2, 8}, DataType::Double);
  f.addOutput(castOp(unaryOp(UnaryOpType::Neg, x), DataType::BFloat16));
  TensorView* y = defineTensor(f, {2, 8}, DataType::BFloat16);
  Val* sq = binaryOp(BinaryOpType::Mul, y, y);
  f.addOutput(castOp(unaryOp(UnaryOpType::Neg, sq), DataType::BFloat16));
  const std::string code = kernelOf(f);
  EXPECT_EQ(code.find("nvf_neg16("), std::string::npos) << code;
  EmulatedRun run = runEmulatedAndAten(
      f, {specialValues(at::kDouble) * 1.001, specialValues(at::kBFloat16)});
  ASSERT_EQ(run.atenError, "");
  for (size_t k = 0; k < run.outs.size(); ++k) {
    EXPECT_TRUE(sameValues(run.outs[k], run.ref[k])) << k;
  }
}

TEST(SignOpsTest, AScalarSignChainIsReadAsAScalar) {
  // cast(neg(cast(cast(s, bf16), float)), bf16) of a scalar, added to a
  // tensor: the chain's source is a scalar, which has no tensor index (the
  // generator asserted there, found by review).
  Fusion f;
  TensorView* x = defineTensor(f, {8}, DataType::BFloat16);
  Scalar* s = defineScalar(f, DataType::Double, ScalarValue(2.75));
  Val* c =
      castOp(unaryOp(UnaryOpType::Neg,
                     castOp(castOp(s, DataType::BFloat16), DataType::Float)),
             DataType::BFloat16);
  f.addOutput(binaryOp(BinaryOpType::Add, x, c));
  EXPECT_NE(kernelOf(f).find("nvf_neg16("), std::string::npos);
  EmulatedRun run = runEmulatedAndAten(
      f,
      {specialValues(at::kBFloat16).reshape({16}).slice(0, 0, 8).contiguous()});
  ASSERT_EQ(run.atenError, "");
  EXPECT_TRUE(sameValues(run.outs[0], run.ref[0]));
}

}  // namespace nvfuser
