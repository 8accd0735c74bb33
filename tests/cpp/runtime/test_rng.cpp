// The values of nvFuser's random ops: Philox4x32-10 against Random123's
// known answers and ATen's engine, the transforms against libm and tables
// derived from those answers, and the generated kernels (CUDA device code
// compiled for the CPU emulator) against the CPU path bit for bit, in
// every dtype, vectorized or not, 32- or 64-bit indexed, inside
// reductions, and under different segmentations.
#include <ATen/core/PhiloxRNGEngine.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "../core/ops_test_utils.h"
#include "emulated_run.h"
#include "ops/arith.h"
#include "ops/reduction_ops.h"
#include "ops/rng_ops.h"
#include "ops/shape_ops.h"
#include "runtime/aten_rng.h"
#include "runtime/philox.h"

namespace nvfuser {

namespace {
using Words = std::array<uint32_t, 4>;

// Bitwise equality (NaN payloads and signs of zeros included).
bool sameBits(const at::Tensor& a, const at::Tensor& b) {
  if (a.sizes() != b.sizes() || a.scalar_type() != b.scalar_type()) {
    return false;
  }
  const at::ScalarType bits = a.element_size() == 2   ? at::kShort
                              : a.element_size() == 4 ? at::kInt
                                                      : at::kLong;
  return at::equal(a.contiguous().view(bits), b.contiguous().view(bits));
}

struct Runs {
  std::vector<at::Tensor> kernels;  // generated kernels on the emulator
  std::vector<at::Tensor> cpu;      // the whole fusion through ATen
  size_t numKernels = 0;
};

// args: the fusion's own inputs; the drawn seed and offset, when the
// fusion takes them, are the fixed values given here.
Runs runBoth(Fusion& f, std::vector<RuntimeArg> args,
             KernelCodegenOptions codegen = {},
             const Options& options = Options()) {
  ConcreteFusion c = concretize(f, describeArgs(f, args));
  if (c.drawsRngState) {
    args.push_back(RuntimeArg::fromScalar(int64_t{-5}, "int"));
    args.push_back(RuntimeArg::fromScalar(int64_t{1} << 40, "int"));
  }
  SegmentedRuntime runtime(segmentFusion(*c.fusion, options), args, options);
  Runs r;
  r.kernels = runEmulated(runtime, args, codegen);
  r.cpu = AtenEvaluator::run(*c.fusion, args, at::kCPU);
  for (const auto& k : runtime.kernels()) {
    r.numKernels += k != nullptr;
  }
  return r;
}

Val* dconst(Fusion& f, double v) {
  return defineScalar(f, DataType::Double, v);
}
}  // namespace

// Random123's kat_vectors for philox4x32-10: counter, key -> output.
TEST(RngTest, PhiloxKnownAnswers) {
  struct Kat {
    Words counter;
    std::array<uint32_t, 2> key;
    Words out;
  };
  const Kat kats[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
       {0xffffffff, 0xffffffff},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
       {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const Kat& k : kats) {
    EXPECT_EQ(philox::philox4x32(k.counter, k.key), k.out);
  }
}

// block(seed, offset, stream, group) is the first output of ATen's
// philox_engine(seed, subsequence = group | stream << 48, offset).
TEST(RngTest, CounterLayoutMatchesAtensEngine) {
  std::mt19937_64 gen(1234);
  for (int n = 0; n < 200; ++n) {
    const uint64_t seed = gen();
    const uint64_t offset = n % 3 == 0 ? gen() : gen() % 1000;
    const uint64_t stream = gen() % (1 << 16);
    const uint64_t group = gen() % (uint64_t{1} << 48);
    at::philox_engine engine(seed, group | (stream << 48), offset);
    Words expected;
    for (uint32_t& w : expected) {
      w = engine();
    }
    EXPECT_EQ(philox::block(seed, offset, stream, group), expected)
        << seed << " " << offset << " " << stream << " " << group;
  }
}

TEST(RngTest, LogAndSinCosAreAccurate) {
  std::mt19937_64 gen(5);
  for (int n = 0; n < 20000; ++n) {
    // Every binade of (0, 1], and the ends.
    const double x = n == 0   ? 1.0
                     : n == 1 ? 0x1p-53
                              : std::ldexp(0.5 + 0.5 * (gen() >> 11) * 0x1p-53,
                                           -static_cast<int>(n % 54));
    const double ref = std::log(x);
    EXPECT_LE(std::fabs(philox::logUnit(x) - ref),
              4 * std::nextafter(std::fabs(ref), INFINITY) -
                  4 * std::fabs(ref) + 1e-300)
        << x;
    const double t = (gen() >> 11) * 0x1p-53;
    double s = 0;
    double c = 0;
    philox::sinCos2Pi(t, &s, &c);
    EXPECT_NEAR(s, std::sin(2 * M_PI * t), 2e-15) << t;
    EXPECT_NEAR(c, std::cos(2 * M_PI * t), 2e-15) << t;
  }
  double s = 1;
  double c = 0;
  philox::sinCos2Pi(0.0, &s, &c);
  EXPECT_EQ(s, 0.0);
  EXPECT_EQ(c, 1.0);
  philox::sinCos2Pi(0.25, &s, &c);
  EXPECT_EQ(s, 1.0);
  EXPECT_EQ(philox::logUnit(1.0), 0.0);
}

// Element values from the known answer of seed 0, offset 0, stream 0,
// group 0 (the first row above).
TEST(RngTest, ValuesFromTheKnownAnswer) {
  const Words w = {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8};
  for (uint64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(philox::uniformAt(DataType::Float, 0, 0, 0, i, 0.0, 1.0),
              (w[i] >> 8) * 0x1p-24);
    const double u1 = (w[i / 2 * 2] + 1.0) * 0x1p-32;
    const double t = w[i / 2 * 2 + 1] * 0x1p-32;
    const double z = std::sqrt(-2 * std::log(u1)) *
                     (i % 2 ? std::sin(2 * M_PI * t) : std::cos(2 * M_PI * t));
    const float got = static_cast<float>(
        philox::normalAt(DataType::Float, 0, 0, 0, i, 0.0, 1.0));
    EXPECT_LE(std::fabs(got - static_cast<float>(z)),
              std::nextafter(std::fabs(static_cast<float>(z)), INFINITY) -
                  std::fabs(static_cast<float>(z)))
        << i;
  }
  // Double: two elements per block, 53 bits each.
  const double d0 =
      static_cast<double>((uint64_t{w[0] >> 5} << 26) | (w[1] >> 6)) * 0x1p-53;
  EXPECT_EQ(philox::uniformAt(DataType::Double, 0, 0, 0, 0, 0.0, 1.0), d0);
  // [lo, hi): a Half value that rounds to hi becomes lo.
  for (uint64_t i = 0; i < 4096; ++i) {
    const double v =
        philox::uniformAt(DataType::Half, 3, 0, 0, i, 0.0, 0.0009765625);
    EXPECT_GE(v, 0.0);
    EXPECT_LT(v, 0.0009765625);
  }
}

class RngKernelTest
    : public ::testing::TestWithParam<std::tuple<DataType, bool, bool>> {};

// uniform and normal of scalar-input seeds and parameters (Float and Int
// scalars), rand_like/randn_like (one of them unseeded), a consumer and
// odd sizes: the emulated kernels give the CPU path's bits.
TEST_P(RngKernelTest, KernelsMatchTheCpuPathBitForBit) {
  const auto [dtype, vectorize, int64Index] = GetParam();
  Fusion f;
  TensorView* x = defineTensor(f, {-1, -1}, DataType::Float);
  Val* seed = defineScalar(f, DataType::Int, std::nullopt);
  Val* offset = defineScalar(f, DataType::Int32, std::nullopt);
  Val* mean = defineScalar(f, DataType::Float, std::nullopt);
  Val* hi = defineScalar(f, DataType::Int, std::nullopt);
  f.addOutput(rngOp(f, RngOpType::Uniform, dconst(f, -3.0), hi, {37, 130},
                    dtype, seed, offset));
  f.addOutput(rngOp(f, RngOpType::Normal, mean, dconst(f, 2.0), {37, 130},
                    dtype, seed, offset));
  f.addOutput(rngOp(f, RngOpType::Uniform, dconst(f, 0.0), dconst(f, 1.0),
                    {5, 1, 64}, dtype, seed, offset));
  f.addOutput(rngOp(f, RngOpType::Normal, dconst(f, 0.0), dconst(f, 1.0), {},
                    dtype, seed, offset));
  TensorView* r = rngLike(RngOpType::Uniform, x, dtype, seed, offset);
  f.addOutput(binaryOp(BinaryOpType::Add, r, x));
  f.addOutput(rngLike(RngOpType::Normal, x, dtype, nullptr, nullptr));
  KernelCodegenOptions codegen;
  codegen.forceInt64Index = int64Index;
  const Options options =
      vectorize ? Options() : Options().withOverrides({}, {"vectorization"});
  Runs runs = runBoth(f,
                      {RuntimeArg::fromTensor(at::randn({37, 130})),
                       RuntimeArg::fromScalar(int64_t{-123456789}, "int"),
                       RuntimeArg::fromScalar(int64_t{77}, "int"),
                       RuntimeArg::fromScalar(1.5, "float"),
                       RuntimeArg::fromScalar(int64_t{5}, "int")},
                      codegen, options);
  EXPECT_GE(runs.numKernels, 1u);
  ASSERT_EQ(runs.kernels.size(), runs.cpu.size());
  for (size_t k = 0; k < runs.cpu.size(); ++k) {
    EXPECT_TRUE(sameBits(runs.kernels[k], runs.cpu[k]))
        << "output " << k << "\nkernel "
        << runs.kernels[k].flatten().slice(0, 0, 8) << "\nCPU "
        << runs.cpu[k].flatten().slice(0, 0, 8);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Dtypes, RngKernelTest,
    ::testing::Combine(::testing::Values(DataType::Float, DataType::Double,
                                         DataType::Half, DataType::BFloat16),
                       ::testing::Bool(), ::testing::Bool()),
    [](const auto& info) {
      return std::string(toString(std::get<0>(info.param))) +
             (std::get<1>(info.param) ? "_vectorized" : "_scalar") +
             (std::get<2>(info.param) ? "_int64" : "_int32");
    });

// Random values read inside reductions (a serial column sum, a row
// kernel's mean and deviations) are the values the op gives alone.
TEST(RngTest, RandomValuesInsideReductions) {
  auto build = [](Fusion& f, bool reduce) {
    Val* seed = defineScalar(f, DataType::Int, int64_t{9});
    Val* offset = defineScalar(f, DataType::Int, int64_t{2});
    TensorView* n = rngOp(f, RngOpType::Normal, dconst(f, 0.5), dconst(f, 3.0),
                          {64, 300}, DataType::Float, seed, offset);
    TensorView* u = rngOp(f, RngOpType::Uniform, dconst(f, 0.0), dconst(f, 1.0),
                          {300, 32}, DataType::Half, seed, offset);
    if (!reduce) {
      f.addOutput(n);
      f.addOutput(u);
      return;
    }
    TensorView* rowMean =
        reduction(ReductionOpType::Mean, n, {1}, true, DataType::Null);
    f.addOutput(binaryOp(BinaryOpType::Sub, n, rowMean));  // row kernel
    f.addOutput(
        reduction(ReductionOpType::Sum, u, {0}, false, DataType::Float));
  };
  Fusion plain;
  build(plain, false);
  Runs values = runBoth(plain, {});
  Fusion reduced;
  build(reduced, true);
  Runs runs = runBoth(reduced, {});
  EXPECT_GE(runs.numKernels, 1u);
  at::Tensor n = values.cpu[0];
  at::Tensor centered = n - n.mean(1, true);
  EXPECT_TRUE(at::allclose(runs.kernels[0], centered, 1e-5, 1e-5));
  EXPECT_TRUE(at::allclose(runs.cpu[0], centered, 1e-5, 1e-5));
  at::Tensor colSum = values.cpu[1].to(at::kFloat).sum(0);
  EXPECT_TRUE(at::allclose(runs.kernels[1], colSum, 1e-4, 1e-4));
  EXPECT_TRUE(at::allclose(runs.cpu[1], colSum, 1e-4, 1e-4));
  for (size_t k = 0; k < 2; ++k) {
    EXPECT_TRUE(sameBits(values.kernels[k], values.cpu[k])) << k;
  }
}

// The same op gives the same bits whatever else the fusion holds and
// however it is segmented (forwarding and horizontal fusion off or on, a
// segment_set in the way).
TEST(RngTest, SegmentationDoesNotChangeValues) {
  auto build = [](Fusion& f, bool more) {
    Val* seed = defineScalar(f, DataType::Int, int64_t{2024});
    Val* offset = defineScalar(f, DataType::Int, int64_t{0});
    TensorView* u =
        rngOp(f, RngOpType::Uniform, dconst(f, -1.0), dconst(f, 1.0), {48, 96},
              DataType::BFloat16, seed, offset);
    TensorView* n = rngOp(f, RngOpType::Normal, dconst(f, 0.0), dconst(f, 1.0),
                          {48, 96}, DataType::Float, seed, offset);
    if (!more) {
      f.addOutput(u);
      f.addOutput(n);
      return;
    }
    TensorView* s =
        reduction(ReductionOpType::Sum, n, {1}, true, DataType::Null);
    f.addOutput(binaryOp(BinaryOpType::Mul, u, s));
    f.addOutput(segmentSet(u));
    f.addOutput(unaryOp(UnaryOpType::Exp, segmentSet(n)));
    f.addOutput(n);
  };
  Fusion alone;
  build(alone, false);
  Runs ref = runBoth(alone, {});
  for (const char* off :
       {"", "input_forwarding", "horizontal_fusion", "reduction_split"}) {
    Options options = std::string(off).empty()
                          ? Options()
                          : Options().withOverrides({}, {off});
    Fusion f;
    build(f, true);
    Runs runs = runBoth(f, {}, {}, options);
    EXPECT_TRUE(sameBits(runs.kernels[1], ref.cpu[0])) << off;
    EXPECT_TRUE(sameBits(runs.kernels[3], ref.cpu[1])) << off;
    EXPECT_TRUE(sameBits(runs.cpu[1], ref.cpu[0])) << off;
    EXPECT_TRUE(sameBits(runs.cpu[3], ref.cpu[1])) << off;
  }
}

TEST(RngTest, DrawnStateFollowsTorchsGenerator) {
  at::manual_seed(7);
  auto first = drawRngState(at::kCPU);
  auto second = drawRngState(at::kCPU);
  EXPECT_NE(first.first, second.first);
  EXPECT_EQ(first.second, 0);
  at::manual_seed(7);
  EXPECT_EQ(drawRngState(at::kCPU), first);
}

TEST(RngTest, CpuPathRaisesForParametersOutsideTheirDomain) {
  Fusion f;
  Val* lo = defineScalar(f, DataType::Double, std::nullopt);
  Val* hi = defineScalar(f, DataType::Double, std::nullopt);
  Val* seed = defineScalar(f, DataType::Int, int64_t{1});
  f.addOutput(
      rngOp(f, RngOpType::Uniform, lo, hi, {4}, DataType::Float, seed, seed));
  f.addOutput(
      rngOp(f, RngOpType::Normal, lo, hi, {4}, DataType::Float, seed, seed));
  auto run = [&](double a, double b) {
    std::vector<RuntimeArg> args = {RuntimeArg::fromScalar(a, "float"),
                                    RuntimeArg::fromScalar(b, "float")};
    ConcreteFusion c = concretize(f, describeArgs(f, args));
    return errorOf([&] { AtenEvaluator::run(*c.fusion, args, at::kCPU); });
  };
  EXPECT_NE(run(2.0, 1.0).find("uniform: minval 2 must be <= maxval 1"),
            std::string::npos);
  EXPECT_NE(run(0.0, NAN).find("must be finite"), std::string::npos);
  EXPECT_EQ(run(0.0, 1.0), "");
}

}  // namespace nvfuser
