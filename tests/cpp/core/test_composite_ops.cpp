// triu, welford, cumsum and scatter in the core: shapes and dtypes,
// errors, printing, concretization (triu and welford become ordinary ops),
// segmentation (generated kernels for the expanded ops, one-op expr_eval
// segments for cumsum and scatter) and NVRTC compiles of the triu kernel.
// Their values: tests/python/test_ops_part3.py.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "codegen/kernel_codegen.h"
#include "compiler/nvrtc_compiler.h"
#include "ir/python_printer.h"
#include "ops/arith.h"
#include "ops/composite_ops.h"
#include "ops/concretize.h"
#include "ops_test_utils.h"
#include "segment_test_utils.h"
#include "segmenter/segment_extractor.h"

namespace nvfuser {

using V = std::vector<std::string>;

namespace {
std::vector<std::string> opNames(const Fusion& f) {
  std::vector<std::string> out;
  for (const Expr* e : f.liveExprs()) {
    out.push_back(e->opName());
  }
  return out;
}
}  // namespace

TEST(CompositeOpsTest, ShapesAndDtypes) {
  Fusion f;
  TensorView* x = defineTensor(f, {-1, 8, 6}, DataType::Half);
  EXPECT_EQ(triu(x, -2)->dtype(), DataType::Half);
  auto [avg, varSum, n] = welford(x, {-1, 0});
  EXPECT_EQ(avg->dtype(), DataType::Float);
  EXPECT_EQ(varSum->dtype(), DataType::Float);
  EXPECT_EQ(n->dtype(), DataType::Int);
  EXPECT_EQ(staticShape(n), (std::vector<int64_t>{8}));
  EXPECT_EQ(cumsum(x, -1)->dtype(), DataType::Half);
  TensorView* b = defineTensor(f, {4}, DataType::Bool);
  EXPECT_EQ(cumsum(b, 0)->dtype(), DataType::Int);
  TensorView* i = defineTensor(f, {2, 8, 6}, DataType::Int32);
  TensorView* s = scatter(x, i, x, 0);
  EXPECT_EQ(s->dtype(), DataType::Half);
  EXPECT_EQ(staticShape(s), (std::vector<int64_t>{-1, 8, 6}));
}

TEST(CompositeOpsTest, ErrorsNameTheOpAndTheProblem) {
  Fusion f;
  TensorView* v = defineTensor(f, {4}, DataType::Float);
  TensorView* m = defineTensor(f, {4, 4}, DataType::Float);
  TensorView* k = defineTensor(f, {4, 4}, DataType::Int);
  ErrorKind kind = ErrorKind::Internal;
  EXPECT_NE(errorOf([&] { triu(v, 0); }, &kind).find("rank >= 2"),
            std::string::npos);
  EXPECT_EQ(kind, ErrorKind::Value);
  EXPECT_NE(errorOf([&] { welford(k, {0}); }, &kind).find("floating point"),
            std::string::npos);
  EXPECT_EQ(kind, ErrorKind::Type);
  EXPECT_NE(errorOf([&] { cumsum(m, 2); }).find("out of range"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { scatter(m, m, m, 0); }, &kind).find("Int or Int32"),
            std::string::npos);
  EXPECT_EQ(kind, ErrorKind::Type);
  TensorView* big = defineTensor(f, {4, 5}, DataType::Int);
  EXPECT_NE(errorOf([&] { scatter(m, big, m, 0); }).find("larger than"),
            std::string::npos);
}

TEST(CompositeOpsTest, PrintedWithNvFusersCalls) {
  Fusion f;
  TensorView* x = defineTensor(f, {-1, -1}, DataType::Float);
  TensorView* i = defineTensor(f, {-1, -1}, DataType::Int);
  f.addOutput(triu(x, 1));
  auto [avg, varSum, n] = welford(x, {1});
  f.addOutput(avg);
  f.addOutput(varSum);
  f.addOutput(n);
  f.addOutput(cumsum(x, 0));
  f.addOutput(scatter(x, i, x, 1));
  const std::string text = fusionToPython(f);
  for (const char* call :
       {"fd.ops.triu(t0, diagonal=1)",
        "t3, t4, t5 = fd.ops.welford(t0, dims=[1])", "fd.ops.cumsum(t0, dim=0)",
        "fd.ops.scatter(t0, t1, t0, dim=1)"}) {
    EXPECT_NE(text.find(call), std::string::npos) << call << "\n" << text;
  }
}

TEST(CompositeOpsTest, ConcretizationExpandsTriuAndWelford) {
  Fusion f;
  TensorView* x = defineTensor(f, {-1, -1}, DataType::BFloat16);
  f.addOutput(triu(x, -1));
  auto [avg, varSum, n] = welford(x, {1});
  f.addOutput(varSum);
  f.addOutput(n);
  ConcreteFusion c =
      concretize(f, {inputDescriptor({3, 5}, DataType::BFloat16)});
  EXPECT_EQ(opNames(*c.fusion),
            (V{"iota", "broadcast", "iota", "broadcast", "sub", "ge", "where",
               "mean", "broadcast", "sub", "mul", "sum", "full"}));
  EXPECT_EQ(c.outputs[0]->dtype(), DataType::BFloat16);
  EXPECT_EQ(exprAs<FullOp>(c.outputs[2]->definition())->shape(),
            (std::vector<int64_t>{3}));
}

TEST(CompositeOpsTest, SegmentsAndNvrtc) {
  Fusion f;
  TensorView* x = defineTensor(f, {-1, -1}, DataType::Float);
  TensorView* i = defineTensor(f, {-1, -1}, DataType::Int);
  Val* e = unaryOp(UnaryOpType::Exp, x);
  f.addOutput(unaryOp(UnaryOpType::Neg, triu(e->asTensor(), 2)));
  f.addOutput(unaryOp(UnaryOpType::Sigmoid, cumsum(x, 1)));
  f.addOutput(scatter(x, i, defineScalar(f, DataType::Double, 1.5), 0));
  ConcreteFusion c = concretize(f, {inputDescriptor({16, 16}, DataType::Float),
                                    inputDescriptor({2, 16}, DataType::Int)});
  auto sf = segmentFusion(*c.fusion, Options());
  V groups = describe(*sf);
  std::sort(groups.begin(), groups.end());
  EXPECT_EQ(groups,
            (V{"expr_eval: cumsum", "expr_eval: scatter",
               "pointwise: exp sub ge where neg sigmoid [prologue: iota "
               "broadcast iota broadcast]"}))
      << ::testing::PrintToString(groups);
  for (const SegmentedGroup& g : sf->groups()) {
    if (g.scheduler != SchedulerType::PointWise) {
      continue;
    }
    ExtractedSegment seg = extractSegment(g);
    KernelSource ks =
        generateKernel(*seg.fusion, "triu_kernel", {}, KernelCodegenOptions());
    for (const char* arch : {"sm_90", "sm_80"}) {
      EXPECT_GT(compileWithNvrtc(ks.code, ks.name, arch).cubin.size(), 0u)
          << ks.code;
    }
  }
}

}  // namespace nvfuser
