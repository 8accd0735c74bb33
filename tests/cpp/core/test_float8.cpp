// Float8_e4m3fn, Float8_e5m2 and Float8_e8m0fnu in the core: storage only
// (casts, copies and views take them, every other op is a TypeError naming it),
// printed by name, and cast kernels to and from them generated and compiled by
// NVRTC for sm_90 and sm_80 without a GPU. Their conversions:
// tests/cpp/runtime/test_float8_conversions.cpp; against torch on a GPU:
// tests/python/test_gpu.py.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codegen/kernel_codegen.h"
#include "compiler/nvrtc_compiler.h"
#include "ir/python_printer.h"
#include "ops/arith.h"
#include "ops/concretize.h"
#include "ops/reduction_ops.h"
#include "ops/shape_ops.h"
#include "ops_test_utils.h"
#include "segment_test_utils.h"
#include "segmenter/segment_extractor.h"

namespace nvfuser {

namespace {
const std::vector<DataType> kFloat8 = {
    DataType::Float8_e4m3fn, DataType::Float8_e5m2, DataType::Float8_e8m0fnu};
}  // namespace

TEST(Float8Test, StorageOnly) {
  for (DataType t : kFloat8) {
    Fusion f;
    TensorView* x = defineTensor(f, {-1, 4}, t);
    EXPECT_EQ(dataTypeSize(t), 1);
    EXPECT_EQ(castOp(x, DataType::Float)->dtype(), DataType::Float);
    EXPECT_EQ(reshape(permute(x, {1, 0}), {-1})->dtype(), t);
    EXPECT_EQ(set(broadcast(x, {true, false, false}))->dtype(), t);
    const std::string name = toString(t);
    EXPECT_ERROR_CONTAINS(
        binaryOp(BinaryOpType::Add, x, x),
        "add: T0 [i0, 4] " + name + " holds storage-only Float8 values");
    EXPECT_ERROR_CONTAINS(unaryOp(UnaryOpType::Neg, x), "neg: T0");
    EXPECT_ERROR_CONTAINS(reduction(ReductionOpType::Sum, x, {1}, false),
                          "sum: T0");
    EXPECT_ERROR_CONTAINS(cat({x, x}, 0), "cat: T0");
    EXPECT_ERROR_CONTAINS(
        full(f, {2}, defineScalar(f, DataType::Double, ScalarValue(1.0)), t),
        "full: " + name + " values are storage only");
    ErrorKind kind = ErrorKind::Value;
    errorOf([&] { defineScalar(f, t, ScalarValue(1.0)); }, &kind);
    EXPECT_EQ(kind, ErrorKind::Type);
  }
}

TEST(Float8Test, PrintedByName) {
  Fusion f;
  TensorView* x = defineTensor(f, {-1}, DataType::Float8_e4m3fn);
  f.addOutput(
      castOp(castOp(x, DataType::Float), DataType::Float8_e5m2)->asTensor());
  f.addOutput(castOp(x, DataType::Float8_e8m0fnu)->asTensor());
  const std::string text = fusionToPython(f);
  EXPECT_NE(text.find("fd.ops.cast(t0, dtype=DataType.Float8_e8m0fnu)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("dtype=DataType.Float8_e4m3fn"), std::string::npos);
  EXPECT_NE(text.find("fd.ops.cast(t1, dtype=DataType.Float8_e5m2)"),
            std::string::npos)
      << text;
  EXPECT_NE(f.toString().find("T0_g_e4m3[iS{i0}]"), std::string::npos)
      << f.toString();
}

// Casts between every Float8 type and every real type, both ways, in one
// pointwise kernel (vectorized 16-byte Float8 loads and stores), compiled
// by NVRTC.
TEST(Float8Test, CastKernelsCompileWithNvrtc) {
  const std::vector<DataType> others = {
      DataType::Float, DataType::Double, DataType::Half, DataType::BFloat16,
      DataType::Int,   DataType::Int32,  DataType::Bool};
  for (DataType t : kFloat8) {
    Fusion f;
    TensorView* x = defineTensor(f, {-1, -1}, t);
    std::vector<InputDescriptor> inputs = {inputDescriptor({8, 64}, t)};
    for (DataType o : others) {
      TensorView* y = defineTensor(f, {-1, -1}, o);
      inputs.push_back(inputDescriptor({8, 64}, o));
      f.addOutput(castOp(x, o)->asTensor());
      f.addOutput(castOp(y, t)->asTensor());
    }
    f.addOutput(castOp(x, t == DataType::Float8_e4m3fn
                              ? DataType::Float8_e5m2
                              : DataType::Float8_e4m3fn)
                    ->asTensor());
    ConcreteFusion c = concretize(f, inputs);
    auto sf = segmentFusion(*c.fusion, Options());
    ASSERT_EQ(sf->groups().size(), 1u)
        << ::testing::PrintToString(describe(*sf));
    EXPECT_EQ(sf->groups()[0].scheduler, SchedulerType::PointWise);
    ExtractedSegment seg = extractSegment(sf->groups()[0]);
    KernelSource ks =
        generateKernel(*seg.fusion, "fp8_casts", {}, KernelCodegenOptions());
    const std::string name = std::string("nvf_f_to_") + shortName(t) + "(";
    EXPECT_NE(ks.code.find(name), std::string::npos) << name;
    EXPECT_GT(countOf(ks.code, "nvf_vload("), 0u) << ks.code;
    for (const char* arch : {"sm_90", "sm_80"}) {
      EXPECT_GT(compileWithNvrtc(ks.code, ks.name, arch).cubin.size(), 0u)
          << ks.code;
    }
  }
}

}  // namespace nvfuser
