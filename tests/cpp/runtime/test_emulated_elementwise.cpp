// The elementwise ops added for nvFuser's op list (acos ... signbit, atan2,
// nextafter, gcd, the shifts, addcmul) run as generated kernels on the CPU
// emulator against ATen, in every dtype they take and at the edges: NaN,
// infinities, -0.0, domain errors, zero and MIN operands of gcd, shift
// counts outside [0, bits). A CUDA spelling that computes something else
// (or a helper the device code lacks) fails here without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "emulated_run.h"
#include "ops/arith.h"

namespace nvfuser {

namespace {
const std::vector<UnaryOpType> kFloatMath = {
    UnaryOpType::Acos,   UnaryOpType::Asin,   UnaryOpType::Atan,
    UnaryOpType::Cosh,   UnaryOpType::Sinh,   UnaryOpType::Tan,
    UnaryOpType::Exp2,   UnaryOpType::Expm1,  UnaryOpType::Log10,
    UnaryOpType::Log1p,  UnaryOpType::Log2,   UnaryOpType::Erfc,
    UnaryOpType::Erfinv, UnaryOpType::Lgamma, UnaryOpType::Acosh,
    UnaryOpType::Asinh,  UnaryOpType::Atanh,  UnaryOpType::Erfcinv};

const std::vector<UnaryOpType> kPredicates = {
    UnaryOpType::IsNan,    UnaryOpType::IsInf,    UnaryOpType::IsFinite,
    UnaryOpType::IsNegInf, UnaryOpType::IsPosInf, UnaryOpType::Signbit};

// Special values first, then a spread over the interesting domains.
at::Tensor floatInputs(at::ScalarType t) {
  std::vector<double> v = {NAN,  INFINITY, -INFINITY, 0.0,    -0.0,
                           1.0,  -1.0,     0.5,       -0.5,   2.5,
                           -2.5, 0.999,    -0.999,    1e-3,   -3e-4,
                           30.0, -30.0,    150.0,     -150.0, 1e-30};
  for (int k = -24; k <= 24; ++k) {
    v.push_back(k / 8.0 + 0.03);
  }
  return at::tensor(v, at::kDouble).to(t);
}

at::Tensor intInputs(at::ScalarType t) {
  const bool wide = t == at::kLong;
  const int64_t lo = wide ? INT64_MIN : INT32_MIN;
  const int64_t hi = wide ? INT64_MAX : INT32_MAX;
  return at::tensor(
             std::vector<int64_t>{lo, -100, -7, -1, 0, 1, 2, 3, 64, 1000, hi})
      .to(t);
}

at::Tensor inputsOf(DataType d) {
  const at::ScalarType t = toAtenType(d);
  if (d == DataType::Bool) {
    return at::tensor(std::vector<int64_t>{1, 0, 1}).to(at::kBool);
  }
  return isFloatingType(d) ? floatInputs(t) : intInputs(t);
}

// Kernel and ATen agree: within `tol` (relative and absolute), NaN where
// the other has NaN, the same infinities, and the same sign of every zero.
void expectClose(const at::Tensor& kernel, const at::Tensor& aten,
                 const std::string& what, double tol) {
  ASSERT_EQ(kernel.scalar_type(), aten.scalar_type()) << what;
  at::Tensor a = kernel.to(at::kDouble);
  at::Tensor b = aten.to(at::kDouble);
  EXPECT_TRUE(at::allclose(a, b, tol, tol, /*equal_nan=*/true))
      << what << "\nkernel " << kernel << "\nATen " << aten;
  at::Tensor zeros = (a == 0) & (b == 0);
  EXPECT_TRUE(at::equal(at::signbit(a).masked_select(zeros),
                        at::signbit(b).masked_select(zeros)))
      << what << ": signs of zeros differ\nkernel " << kernel << "\nATen "
      << aten;
}

// One 1-D input of `in`'s dtype, one output per op.
void checkUnaries(const std::vector<UnaryOpType>& ops, const at::Tensor& in,
                  double tol) {
  Fusion f;
  TensorView* x = defineTensor(f, {in.numel()}, fromAtenType(in.scalar_type()));
  for (UnaryOpType op : ops) {
    f.addOutput(unaryOp(op, x));
  }
  EmulatedRun run = runEmulatedAndAten(f, {in});
  ASSERT_EQ(run.atenError, "");
  EXPECT_EQ(run.kernels, 1u);
  for (size_t k = 0; k < ops.size(); ++k) {
    const std::string what =
        std::string(toString(ops[k])) + " of " + at::toString(in.scalar_type());
    if (tol == 0) {
      EXPECT_TRUE(sameValues(run.outs.at(k), run.ref.at(k)))
          << what << "\ninput " << in << "\nkernel " << run.outs[k] << "\nATen "
          << run.ref[k];
    }
    expectClose(run.outs.at(k), run.ref.at(k), what, tol);
  }
}

// Every (a, b) pair of the two lists, as two 1-D tensors.
std::pair<at::Tensor, at::Tensor> allPairs(const at::Tensor& xs,
                                           const at::Tensor& ys) {
  const int64_t n = xs.numel(), m = ys.numel();
  return {xs.repeat_interleave(m), ys.repeat({n})};
}

// Outputs op(a, b) for each op; the results must equal ATen's exactly
// (tol 0) or within tol.
void checkBinaries(const std::vector<BinaryOpType>& ops, const at::Tensor& a,
                   const at::Tensor& b, double tol) {
  Fusion f;
  TensorView* x = defineTensor(f, {a.numel()}, fromAtenType(a.scalar_type()));
  TensorView* y = defineTensor(f, {b.numel()}, fromAtenType(b.scalar_type()));
  for (BinaryOpType op : ops) {
    f.addOutput(binaryOp(op, x, y));
  }
  EmulatedRun run = runEmulatedAndAten(f, {a, b});
  ASSERT_EQ(run.atenError, "");
  EXPECT_EQ(run.kernels, 1u);
  for (size_t k = 0; k < ops.size(); ++k) {
    const std::string what =
        std::string(toString(ops[k])) + " of " + at::toString(a.scalar_type());
    if (tol == 0) {
      EXPECT_TRUE(sameValues(run.outs.at(k), run.ref.at(k)))
          << what << "\na " << a << "\nb " << b << "\nkernel " << run.outs[k]
          << "\nATen " << run.ref[k];
    }
    expectClose(run.outs.at(k), run.ref.at(k), what, tol);
  }
}
}  // namespace

// acos ... lgamma: CUDA's math library against ATen's (a few ulp apart at
// most), from every input dtype (integers, Bool and Half/BFloat16 compute
// in Float).
TEST(EmulatedElementwiseTest, FloatMathInEveryDtype) {
  for (DataType d :
       {DataType::Float, DataType::Double, DataType::BFloat16, DataType::Half,
        DataType::Int, DataType::Int32, DataType::Bool}) {
    checkUnaries(kFloatMath, inputsOf(d), 2e-5);
  }
}

TEST(EmulatedElementwiseTest, PredicatesAreExact) {
  for (DataType d :
       {DataType::Float, DataType::Double, DataType::BFloat16, DataType::Half,
        DataType::Int, DataType::Int32, DataType::Bool}) {
    checkUnaries(kPredicates, inputsOf(d), 0);
  }
}

// sign, trunc and frac keep the sign of zeros as ATen does: sign(-0.0) is
// +0, trunc(-0.5) is -0.0, frac(-2.0) is +0.
TEST(EmulatedElementwiseTest, SignTruncFracAreExact) {
  for (DataType d : {DataType::Float, DataType::Double, DataType::BFloat16,
                     DataType::Half}) {
    checkUnaries({UnaryOpType::Sign, UnaryOpType::Trunc, UnaryOpType::Frac},
                 inputsOf(d), 0);
  }
  for (DataType d : {DataType::Int, DataType::Int32}) {
    checkUnaries({UnaryOpType::Sign, UnaryOpType::Trunc}, inputsOf(d), 0);
  }
  checkUnaries({UnaryOpType::Sign}, inputsOf(DataType::Bool), 0);
}

TEST(EmulatedElementwiseTest, Atan2OfSignedZerosAndInfinities) {
  for (DataType d : {DataType::Float, DataType::Double, DataType::BFloat16}) {
    at::Tensor v = at::tensor(std::vector<double>{NAN, INFINITY, -INFINITY, 0.0,
                                                  -0.0, 1.0, -2.5, 1e-3})
                       .to(toAtenType(d));
    auto [a, b] = allPairs(v, v);
    checkBinaries({BinaryOpType::Atan2}, a, b, 2e-6);
  }
  auto [a, b] = allPairs(inputsOf(DataType::Int32), inputsOf(DataType::Int32));
  checkBinaries({BinaryOpType::Atan2}, a, b, 2e-6);
}

// One step of each type's own format: Half and BFloat16 too (computed in
// float it would round back to the input), and every edge of a format.
TEST(EmulatedElementwiseTest, NextafterStepsInEachType) {
  const std::vector<double> v = {NAN,   INFINITY, -INFINITY, 0.0,  -0.0,
                                 1.0,   -1.0,     65504.0,   6e-8, -6e-8,
                                 1e-40, 3e38,     -2.5};
  for (DataType d : {DataType::Float, DataType::Double, DataType::BFloat16,
                     DataType::Half}) {
    at::Tensor t = at::tensor(v, at::kDouble).to(toAtenType(d));
    auto [a, b] = allPairs(t, t);
    checkBinaries({BinaryOpType::Nextafter}, a, b, 0);
  }
  // The ATen path's own Half and BFloat16 steps against known patterns.
  for (at::ScalarType st : {at::kHalf, at::kBFloat16}) {
    Fusion f;
    TensorView* x = defineTensor(f, {4}, fromAtenType(st));
    TensorView* y = defineTensor(f, {4}, fromAtenType(st));
    f.addOutput(binaryOp(BinaryOpType::Nextafter, x, y));
    at::Tensor a = at::tensor(std::vector<double>{1.0, 1.0, 0.0, -0.0}).to(st);
    at::Tensor b = at::tensor(std::vector<double>{2.0, 0.0, -1.0, 1.0}).to(st);
    EmulatedRun run = runEmulatedAndAten(f, {a, b});
    const int64_t one = st == at::kHalf ? 0x3c00 : 0x3f80;
    const std::vector<int64_t> want = {one + 1, one - 1, 0x8001 - 0x10000, 1};
    for (const at::Tensor& r : {run.outs.at(0), run.ref.at(0)}) {
      EXPECT_TRUE(at::equal(r.view(at::kShort).to(at::kLong), at::tensor(want)))
          << r;
    }
  }
}

// torch's gcd: zero operands, negative ones, and MIN (whose absolute value
// wraps to MIN: gcd(MIN, 6) == -2, gcd(MIN, 0) == MIN).
TEST(EmulatedElementwiseTest, GcdMatchesTorch) {
  for (DataType d : {DataType::Int, DataType::Int32}) {
    auto [a, b] = allPairs(inputsOf(d), inputsOf(d));
    checkBinaries({BinaryOpType::Gcd}, a, b, 0);
  }
}

// Counts in [0, bits) shift as C does; counts outside give 0 (left and
// logical right shifts) or the sign (arithmetic right shifts), the same in
// kernels and on the ATen path.
TEST(EmulatedElementwiseTest, ShiftsIncludingCountsOutOfRange) {
  const std::vector<BinaryOpType> ops = {BinaryOpType::BitwiseLeftShift,
                                         BinaryOpType::BitwiseRightShift,
                                         BinaryOpType::LogicalRightShift};
  for (DataType d : {DataType::Int, DataType::Int32}) {
    const int64_t bits = d == DataType::Int ? 64 : 32;
    at::Tensor counts =
        at::tensor(std::vector<int64_t>{0, 1, 3, bits - 1, bits, bits + 1,
                                        2 * bits + 3, -1, -bits, 1000})
            .to(toAtenType(d));
    auto [a, b] = allPairs(inputsOf(d), counts);
    checkBinaries(ops, a, b, 0);
  }
  // The defined values themselves, on the ATen path and in the kernel.
  Fusion f;
  TensorView* x = defineTensor(f, {4}, DataType::Int32);
  TensorView* s = defineTensor(f, {4}, DataType::Int32);
  for (BinaryOpType op : ops) {
    f.addOutput(binaryOp(op, x, s));
  }
  at::Tensor a = at::tensor(std::vector<int64_t>{-8, -8, 5, -1}).to(at::kInt);
  at::Tensor b = at::tensor(std::vector<int64_t>{32, -1, 31, 28}).to(at::kInt);
  EmulatedRun run = runEmulatedAndAten(f, {a, b});
  const std::vector<std::vector<int64_t>> want = {
      {0, 0, INT32_MIN, -(1 << 28)}, {-1, -1, 0, -1}, {0, 0, 0, 15}};
  for (size_t k = 0; k < ops.size(); ++k) {
    for (const at::Tensor& r : {run.outs.at(k), run.ref.at(k)}) {
      EXPECT_TRUE(at::equal(r.to(at::kLong), at::tensor(want[k])))
          << toString(ops[k]) << "\n"
          << r;
    }
  }
}

// x + value * t1 * t2 in torch's order: Float with NaN and infinities,
// BFloat16 (computed and returned in Float), integers wrapping.
TEST(EmulatedElementwiseTest, Addcmul) {
  for (DataType d :
       {DataType::Float, DataType::BFloat16, DataType::Int, DataType::Int32}) {
    at::Tensor in = inputsOf(d);
    const int64_t n = in.numel();
    Fusion f;
    TensorView* x = defineTensor(f, {n}, d);
    TensorView* t1 = defineTensor(f, {n}, d);
    TensorView* t2 = defineTensor(f, {n}, d);
    Scalar* value = isFloatingType(d) ? defineScalar(f, DataType::Double, -0.5)
                                      : defineScalar(f, DataType::Int, 3);
    f.addOutput(addcmul(x, t1, t2, value));
    EmulatedRun run = runEmulatedAndAten(f, {in, in.flip(0), in.roll(3)});
    ASSERT_EQ(run.atenError, "");
    EXPECT_EQ(run.kernels, 1u);
    expectClose(run.outs.at(0), run.ref.at(0),
                std::string("addcmul of ") + toString(d),
                isFloatingType(d) ? 1e-5 : 0.0);
    if (!isFloatingType(d)) {
      EXPECT_TRUE(sameValues(run.outs[0], run.ref[0]));
    }
  }
}

}  // namespace nvfuser
