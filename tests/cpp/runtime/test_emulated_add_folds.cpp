// Adds the generator folds (codegen/value_builder_folds.cpp). Issue 16:
// torch.compile's RoPE backwards add the zeros of an empty slice's
// slice_backward (LitGPT Llama-3: 80.1 us on an H200 against 77.0 for the
// same FusionDefinition without them) and sum the pads of a partial
// rotary's two parts (48 registers against the FusionDefinition's cat,
// 40): each element converted, added to zero and rounded back.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "emulated_run.h"
#include "ops/arith.h"
#include "ops/reduction_ops.h"
#include "ops/shape_ops.h"

namespace nvfuser {

namespace {
const Options kUnfolded = Options().withOverrides({}, {"add_folds"});

Val* add(Val* a, Val* b) {
  return binaryOp(BinaryOpType::Add, a, b);
}
Val* mul(Val* a, Val* b) {
  return binaryOp(BinaryOpType::Mul, a, b);
}
Scalar* zero(Fusion& f) {
  return defineScalar(f, DataType::Double, ScalarValue(0.0));
}

// Every output equals ATen's, value for value (NaN for NaN; -0 and 0 are
// equal values).
void expectSameAsAten(Fusion& f, const std::vector<at::Tensor>& in,
                      const Options& options = Options()) {
  EmulatedRun run = runEmulatedAndAten(f, in, {}, options);
  ASSERT_EQ(run.atenError, "");
  ASSERT_EQ(run.outs.size(), run.ref.size());
  for (size_t k = 0; k < run.outs.size(); ++k) {
    EXPECT_TRUE(sameValues(run.outs[k], run.ref[k])) << "output " << k;
  }
}

// f's kernels with and without the folds round to bf16 `folded` and
// `unfolded` times (nvf_f2b*), and both match ATen value for value;
// returns the folded code.
std::string expectRoundings(Fusion& f, const std::vector<at::Tensor>& in,
                            size_t folded, size_t unfolded) {
  const std::string code = generatedKernels(f, in);
  const std::string plain = generatedKernels(f, in, kUnfolded);
  EXPECT_EQ(occurrences(code, "nvf_f2b"), folded) << code;
  EXPECT_EQ(occurrences(plain, "nvf_f2b"), unfolded) << plain;
  expectSameAsAten(f, in);
  expectSameAsAten(f, in, kUnfolded);
  return code;
}

// A partial rotary's gradient through torch.compile, [rows, 80] bf16: the
// first 32 columns x * cos (rounded to bf16) padded by 48 zeros, plus the
// other 48 columns of x padded by 32 zeros in front, cast to bf16.
void definePartialRotaryGradient(Fusion& f, int64_t rows, bool tailFirst) {
  TensorView* x = defineTensor(f, {rows, 80}, DataType::BFloat16);
  TensorView* cos = defineTensor(f, {rows, 32}, DataType::BFloat16);
  TensorView* head = slice(x, {0, 0}, {rows, 32}, {1, 1});
  TensorView* tail = slice(x, {0, 32}, {rows, 80}, {1, 1});
  Val* rotated = castOp(mul(head, cos), DataType::BFloat16);
  TensorView* a = pad(rotated->asTensor(), {0, 48}, zero(f));
  TensorView* b = pad(tail, {32, 0}, zero(f));
  f.addOutput(castOp(tailFirst ? add(b, a) : add(a, b), DataType::BFloat16));
}
}  // namespace

TEST(AddFoldsTest, AnAddOfTheZerosOfAnEmptySliceIsItsOtherOperand) {
  // torch.compile: slice_backward of x[..., 16:] of a 16-wide x is a pad
  // of an empty tensor, added to the gradient and cast back to bf16.
  Fusion f;
  TensorView* x = defineTensor(f, {6, 16}, DataType::BFloat16);
  TensorView* none = slice(x, {0, 16}, {6, 16}, {1, 1});
  Val* grad = castOp(mul(x, x), DataType::BFloat16);
  f.addOutput(
      castOp(add(pad(none, {16, 0}, zero(f)), grad), DataType::BFloat16));
  const std::vector<at::Tensor> in = {at::randn({6, 16}).to(at::kBFloat16)};
  // One rounding (the product's), not three.
  expectRoundings(f, in, 1, 3);
}

TEST(AddFoldsTest, APlainRoundTripIsTheValue) {
  Fusion f;
  TensorView* x = defineTensor(f, {4, 8}, DataType::Half);
  f.addOutput(castOp(castOp(x, DataType::Float), DataType::Half));
  const std::vector<at::Tensor> in = {at::randn({4, 8}).to(at::kHalf)};
  EXPECT_EQ(occurrences(generatedKernels(f, in), "nvf_f2h"), 0u);
  EXPECT_EQ(occurrences(generatedKernels(f, in, kUnfolded), "nvf_f2h"), 1u);
  expectSameAsAten(f, in);
}

TEST(AddFoldsTest, ASumOfPadsThatDoNotOverlapIsASelect) {
  for (bool tailFirst : {false, true}) {
    Fusion f;
    definePartialRotaryGradient(f, 5, tailFirst);
    const std::vector<at::Tensor> in = {at::randn({5, 80}).to(at::kBFloat16),
                                        at::randn({5, 32}).to(at::kBFloat16)};
    // The product's rounding only: the tail is moved, not converted, and
    // read wherever the product is not (the parts cover the row).
    const std::string folded = expectRoundings(f, in, 1, 4);
    EXPECT_EQ(occurrences(folded, "} else {"), 1u) << folded;
  }
}

TEST(AddFoldsTest, TheFoldKeepsTheSignOfANegativeZero) {
  // -0 + 0 is +0 (ATen's answer); the select passes -0 through. The two
  // are equal values; the sign bit is the documented difference.
  Fusion f;
  definePartialRotaryGradient(f, 2, false);
  at::Tensor x = at::randn({2, 80});
  x.index_put_({0, 40}, -0.0);
  const std::vector<at::Tensor> in = {x.to(at::kBFloat16),
                                      at::randn({2, 32}).to(at::kBFloat16)};
  EmulatedRun run = runEmulatedAndAten(f, in);
  ASSERT_EQ(run.atenError, "");
  EXPECT_TRUE(sameValues(run.outs[0], run.ref[0]));
  EXPECT_TRUE(
      at::signbit(run.outs[0].index({0, 40}).to(at::kFloat)).item<bool>());
  EXPECT_FALSE(
      at::signbit(run.ref[0].index({0, 40}).to(at::kFloat)).item<bool>());
}

TEST(AddFoldsTest, PadSumsInAReductionLoopSelectPredicatedLoads) {
  // A GQA backward's shape: the sum over dim 0 of a rotate-half's two pads;
  // in the loop, each side's loads are predicated and selected.
  Fusion f;
  TensorView* x = defineTensor(f, {4, 3, 16}, DataType::Float);
  TensorView* lo = slice(x, {0, 0, 0}, {4, 3, 8}, {1, 1, 1});
  TensorView* hi = slice(x, {0, 0, 8}, {4, 3, 16}, {1, 1, 1});
  Val* sum =
      add(pad(hi, {0, 8}, zero(f)),
          pad(unaryOp(UnaryOpType::Neg, lo)->asTensor(), {8, 0}, zero(f)));
  f.addOutput(reduction(ReductionOpType::Sum, sum->asTensor(), {0}, false));
  const std::vector<at::Tensor> in = {at::randn({4, 3, 16})};
  const std::string folded = generatedKernels(f, in);
  const std::string unfolded = generatedKernels(f, in, kUnfolded);
  EXPECT_EQ(occurrences(folded, "nvf_vload_if"), 2u) << folded;
  EXPECT_EQ(occurrences(folded, "} else {"), 0u) << folded;
  // One select of the two sides, not a select of each and their sum.
  EXPECT_EQ(occurrences(folded, " ? "), 1u) << folded;
  EXPECT_EQ(occurrences(unfolded, " ? "), 2u) << unfolded;
  EmulatedRun run = runEmulatedAndAten(f, in);
  expectCloseToAten(run, 1e-6);
}

TEST(AddFoldsTest, AZeroThroughFloat8E8m0IsNotZero) {
  // e8m0fnu has no zero: 0 cast to it reads back as 2^-127, so the add is
  // computed (found by review).
  Fusion f;
  TensorView* x = defineTensor(f, {4, 8}, DataType::Float);
  TensorView* z = full(f, {4, 8}, zero(f), DataType::Float);
  Val* tiny = castOp(castOp(z, DataType::Float8_e8m0fnu), DataType::Float);
  f.addOutput(add(x, tiny));
  const std::vector<at::Tensor> in = {at::zeros({4, 8})};
  const std::string code = generatedKernels(f, in);
  EXPECT_NE(code.find("e8m0"), std::string::npos) << code;
  EXPECT_EQ(code, generatedKernels(f, in, kUnfolded));
}

TEST(AddFoldsTest, OverlappingNonZeroIntegerAndSharedSumsAddAsWritten) {
  // Overlapping pads, a pad by 1, integer pads: the add is computed. A
  // sum of disjoint pads that is also an output is a select once, and its
  // cast converts that value (no second select).
  auto build = [](Fusion& f, int which) {
    const DataType t = which == 2 ? DataType::Int32 : DataType::Float;
    TensorView* x = defineTensor(f, {3, 8}, t);
    TensorView* lo = slice(x, {0, 0}, {3, 5}, {1, 1});
    TensorView* hi = slice(x, {0, 3}, {3, 8}, {1, 1});
    Val* value = which == 1
                     ? defineScalar(f, DataType::Double, ScalarValue(1.0))
                     : static_cast<Val*>(zero(f));
    if (which == 0) {  // [0, 5) and [3, 8) overlap
      f.addOutput(add(pad(lo, {0, 3}, value), pad(hi, {3, 0}, value)));
    } else {
      TensorView* left = slice(x, {0, 0}, {3, 3}, {1, 1});
      f.addOutput(add(pad(left, {0, 5}, value), pad(hi, {3, 0}, value)));
    }
  };
  for (int which = 0; which < 3; ++which) {
    Fusion f;
    build(f, which);
    const std::vector<at::Tensor> in = {
        which == 2 ? at::randint(-9, 9, {3, 8}, at::kInt) : at::randn({3, 8})};
    EXPECT_EQ(generatedKernels(f, in), generatedKernels(f, in, kUnfolded))
        << which;
    expectSameAsAten(f, in);
  }
  Fusion f;
  TensorView* x = defineTensor(f, {3, 8}, DataType::BFloat16);
  TensorView* left = slice(x, {0, 0}, {3, 3}, {1, 1});
  TensorView* right = slice(x, {0, 3}, {3, 8}, {1, 1});
  Val* sum = add(pad(left, {0, 5}, zero(f)), pad(right, {3, 0}, zero(f)));
  f.addOutput(sum);
  f.addOutput(castOp(sum, DataType::BFloat16));
  const std::vector<at::Tensor> in = {at::randn({3, 8}).to(at::kBFloat16)};
  const std::string code = generatedKernels(f, in);
  EXPECT_EQ(occurrences(code, "} else {"), 1u) << code;
  expectSameAsAten(f, in);
}

}  // namespace nvfuser
