// Generated pointwise kernels compile with NVRTC (no GPU needed) and index
// through every op's dimension map.
#include <gtest/gtest.h>

#include "codegen/kernel_codegen.h"
#include "compiler/nvrtc_compiler.h"
#include "exceptions.h"
#include "ops/arith.h"
#include "ops/reduction_ops.h"
#include "ops/shape_ops.h"
#include "scheduler/generated_kernel_rules.h"
#include "segment_test_utils.h"
#include "segmenter/segment_extractor.h"

namespace nvfuser {

namespace {
// Segments the fusion, generates and compiles every pointwise group;
// returns the kernels' sources.
std::vector<std::string> compileAll(const Fusion& f,
                                    const std::string& arch = "sm_90") {
  auto sf = segmentFusion(f, Options());
  std::vector<std::string> sources;
  for (const SegmentedGroup& g : sf->groups()) {
    if (g.scheduler != SchedulerType::PointWise) {
      continue;
    }
    ExtractedSegment seg = extractSegment(g);
    // The vectorized kernel, then the one-element-per-thread one.
    for (bool vectorize : {true, false}) {
      KernelPlanOptions options;
      options.vectorize = vectorize;
      KernelSource ks = generateKernel(
          *seg.fusion, "kernel_g" + std::to_string(g.id), {}, {}, options);
      CompiledKernel k = compileWithNvrtc(ks.code, ks.name, arch);
      EXPECT_GT(k.cubin.size(), 0u);
      if (vectorize) {
        sources.push_back(ks.code);
      }
    }
  }
  return sources;
}
}  // namespace

TEST(CodegenTest, RopeKernelCompilesForTwoArchs) {
  const int64_t B = 2, H = 4, T = 16, D = 32;
  Fusion f;
  TensorView* q = defineTensor(f, {B, H, T, D}, DataType::BFloat16);
  TensorView* cos = defineTensor(f, {T, D}, DataType::BFloat16);
  TensorView* sin = defineTensor(f, {T, D}, DataType::BFloat16);
  TensorView* cb = broadcastInDim(cos, {B, H, T, D}, {2, 3});
  TensorView* sb = broadcastInDim(sin, {B, H, T, D}, {2, 3});
  TensorView* x1 = slice(q, {0, 0, 0, 0}, {B, H, T, D / 2}, {});
  TensorView* x2 = slice(q, {0, 0, 0, D / 2}, {B, H, T, D}, {});
  TensorView* rot = cat(
      {castOp(unaryOp(UnaryOpType::Neg, x2), DataType::BFloat16)->asTensor(),
       x1},
      3);
  Val* out = binaryOp(BinaryOpType::Add, binaryOp(BinaryOpType::Mul, q, cb),
                      binaryOp(BinaryOpType::Mul, rot, sb));
  f.addOutput(castOp(out, DataType::BFloat16));
  auto sources = compileAll(f);
  ASSERT_EQ(sources.size(), 1u);
  // q is read at two indices (i3 and the rotated one): two loads of in0.
  const std::string& code = sources[0];
  EXPECT_NE(code.find("nvf_f2b("), std::string::npos);
  EXPECT_NE(code.find("} else {"), std::string::npos);  // the cat
  compileAll(f, "sm_80");
  compileAll(f, "sm_75");  // the software bf16 rounding path
}

TEST(CodegenTest, ResizeAndLayoutOpsCompile) {
  Fusion f;
  TensorView* a = defineTensor(f, {4, 6, 8}, DataType::Half);
  TensorView* b = defineTensor(f, {8, 6, 4}, DataType::Float);
  TensorView* p = permute(b, {2, 1, 0});
  TensorView* r = reshape(reshape(a, {24, 8}), {4, 6, 8});
  TensorView* padded = pad(slice(r, {0, 0, 1}, {4, 6, 8}, {}), {0, 1}, nullptr);
  Val* s = defineScalar(f, DataType::Double, std::nullopt);
  Val* sum = binaryOp(BinaryOpType::Add, padded, p);
  Val* w = where(binaryOp(BinaryOpType::Gt, sum, s), sum,
                 unaryOp(UnaryOpType::Exp, sum));
  f.addOutput(clamp(w, defineScalar(f, DataType::Double, ScalarValue(-1.0)),
                    defineScalar(f, DataType::Double, ScalarValue(1.0))));
  f.addOutput(castOp(
      squeeze(
          expand(
              broadcast(
                  iota(f, 8,
                       defineScalar(f, DataType::Int, ScalarValue(int64_t(0))),
                       defineScalar(f, DataType::Int, ScalarValue(int64_t(1))),
                       DataType::Int),
                  {true, false}),
              {1, -1}),
          {0}),
      DataType::Float));
  EXPECT_FALSE(compileAll(f).empty());
}

TEST(CodegenTest, EveryElementwiseOpCompiles) {
  Fusion f;
  TensorView* a = defineTensor(f, {32}, DataType::Float);
  TensorView* i = defineTensor(f, {32}, DataType::Int32);
  Val* acc = a;
  for (int u = 0; u <= static_cast<int>(UnaryOpType::Round); ++u) {
    acc = binaryOp(BinaryOpType::Add, acc,
                   unaryOp(static_cast<UnaryOpType>(u), a));
  }
  for (int op = 0; op <= static_cast<int>(BinaryOpType::Minimum); ++op) {
    acc = binaryOp(static_cast<BinaryOpType>(op), acc, a);
  }
  Val* ints = i;
  for (BinaryOpType op :
       {BinaryOpType::Add, BinaryOpType::Div, BinaryOpType::Pow,
        BinaryOpType::Fmod, BinaryOpType::Remainder, BinaryOpType::BitwiseAnd,
        BinaryOpType::BitwiseOr, BinaryOpType::BitwiseXor}) {
    ints = binaryOp(op, ints, i);
  }
  Val* flags =
      binaryOp(BinaryOpType::LogicalAnd, unaryOp(UnaryOpType::IsNan, acc),
               binaryOp(BinaryOpType::Le, a, acc));
  f.addOutput(acc);
  f.addOutput(unaryOp(UnaryOpType::BitwiseNot, ints));
  f.addOutput(unaryOp(UnaryOpType::LogicalNot, flags));
  f.addOutput(lerp(a, acc, a));
  // The integer branch is independent of the float one: horizontal fusion
  // puts both into one kernel.
  EXPECT_EQ(compileAll(f).size(), 1u);
}

// The ops of nvFuser's list added later, from every dtype they take: the
// CUDA spellings must exist for float, double, the integers, Bool, Half
// and BFloat16 (nextafter steps in those).
TEST(CodegenTest, EveryAddedElementwiseOpCompiles) {
  Fusion f;
  std::vector<Val*> ins;
  for (DataType t :
       {DataType::Float, DataType::Double, DataType::Int, DataType::Int32,
        DataType::Bool, DataType::Half, DataType::BFloat16}) {
    ins.push_back(defineTensor(f, {32}, t));
  }
  for (Val* x : ins) {
    for (int u = static_cast<int>(UnaryOpType::Acos);
         u <= static_cast<int>(UnaryOpType::Signbit); ++u) {
      const auto op = static_cast<UnaryOpType>(u);
      const DataType t = x->dtype();
      if ((op == UnaryOpType::Frac && !isFloatingType(t)) ||
          (op == UnaryOpType::Trunc && t == DataType::Bool)) {
        continue;
      }
      f.addOutput(unaryOp(op, x));
    }
    const DataType t = x->dtype();
    f.addOutput(binaryOp(BinaryOpType::Atan2, x, x));
    if (isFloatingType(t)) {
      f.addOutput(binaryOp(BinaryOpType::Nextafter, x, x));
    }
    if (isIntegralType(t)) {
      for (int b = static_cast<int>(BinaryOpType::Gcd);
           b <= static_cast<int>(BinaryOpType::LogicalRightShift); ++b) {
        f.addOutput(binaryOp(static_cast<BinaryOpType>(b), x, x));
      }
    }
    if (t != DataType::Bool) {
      f.addOutput(addcmul(x, x, x, defineScalar(f, DataType::Int, 2)));
    }
  }
  std::string all;
  for (const std::string& code : compileAll(f)) {
    all += code;
  }
  for (const char* spelling :
       {"erfinvf(", "lgamma(", "nvf_nextafter_h(", "nvf_nextafter_b(",
        "nextafterf(", "nvf_gcd(", "nvf_shl(", "nvf_lshr(", "truncf(", "fmaf(",
        " fma("}) {
    EXPECT_NE(all.find(spelling), std::string::npos) << spelling;
  }
  compileAll(f, "sm_80");
}

// Found by the fuzzer (seed 2175): a pad whose widths are all zero.
TEST(CodegenTest, ZeroWidthPadCompiles) {
  Fusion f;
  TensorView* a = defineTensor(f, {3, 4}, DataType::Float);
  f.addOutput(
      pad(unaryOp(UnaryOpType::Exp, a)->asTensor(), {0, 0, 0, 0}, nullptr));
  EXPECT_EQ(compileAll(f).size(), 1u);
}

// Found by the fuzzer (seed 50): comparing two BFloat16 values.
TEST(CodegenTest, ReducedFloatComparisonsCompile) {
  Fusion f;
  TensorView* a = defineTensor(f, {3, 4}, DataType::BFloat16);
  TensorView* b = defineTensor(f, {3, 4}, DataType::Half);
  f.addOutput(where(binaryOp(BinaryOpType::Lt, a, a), a, a));
  f.addOutput(binaryOp(BinaryOpType::Ge, b, b));
  EXPECT_EQ(compileAll(f).size(), 1u);  // two branches, one kernel
}

// ATen's special exponents become products and roots, not powf.
TEST(CodegenTest, SmallConstantPowersAreProducts) {
  Fusion f;
  TensorView* x = defineTensor(f, {4, 8}, DataType::Float);
  f.addOutput(
      binaryOp(BinaryOpType::Pow, x, defineScalar(f, DataType::Double, 2.0)));
  f.addOutput(
      binaryOp(BinaryOpType::Pow, x, defineScalar(f, DataType::Double, -0.5)));
  std::vector<std::string> codes = compileAll(f);
  ASSERT_EQ(codes.size(), 1u);
  EXPECT_EQ(codes[0].find("powf("), std::string::npos);
  EXPECT_NE(codes[0].find("rsqrtf("), std::string::npos);
  Fusion g;
  TensorView* y = defineTensor(g, {4, 8}, DataType::Float);
  g.addOutput(
      binaryOp(BinaryOpType::Pow, y, defineScalar(g, DataType::Double, 1.7)));
  EXPECT_NE(compileAll(g)[0].find("powf("), std::string::npos);
}

TEST(CodegenTest, MatmulIsNotGenerated) {
  Fusion f;
  TensorView* a = defineTensor(f, {4, 8}, DataType::Float);
  TensorView* b = defineTensor(f, {8, 4}, DataType::Float);
  f.addOutput(matmul(a, b));
  Decision d = generatedKernelFits(f);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.reason().find("is not generated (an ATen call)"),
            std::string::npos);
}

TEST(CodegenTest, PtxasVerboseReportsRegisters) {
  const std::string src =
      "extern \"C\" __global__ void k(float* p) { p[threadIdx.x] *= 2.f; }";
  CompiledKernel quiet = compileWithNvrtc(src, "k", "sm_90");
  EXPECT_EQ(quiet.log.find("registers"), std::string::npos);
  // Registers and spills are kept either way.
  EXPECT_GT(quiet.registers, 0);
  EXPECT_EQ(quiet.spillBytes, 0);
  testing::internal::CaptureStdout();
  CompiledKernel k = compileWithNvrtc(src, "k", "sm_90", true);
  const std::string printed = testing::internal::GetCapturedStdout();
  EXPECT_NE(k.log.find("registers"), std::string::npos) << k.log;
  EXPECT_NE(printed.find("// ptxas k (sm_90):"), std::string::npos);
  EXPECT_EQ(k.log.find('\0'), std::string::npos);
  EXPECT_FALSE(k.cubin.empty());
}

TEST(CodegenTest, NvrtcErrorsAreReported) {
  try {
    compileWithNvrtc("extern \"C\" __global__ void k() { nope; }", "k",
                     "sm_90");
    FAIL() << "expected a compile error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("NVRTC could not compile kernel k"),
              std::string::npos);
  }
}

}  // namespace nvfuser
