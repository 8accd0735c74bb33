// uniform, normal, rand_like and randn_like in the core: shapes, dtypes and
// errors, printing (rng_index only where a script would renumber), the
// concretized form (sizes of rand_like's tensor; drawn seed and offset as
// inputs), segmentation (generated kernels, never forwarded, computed in
// one segment) and NVRTC compiles. Their values: tests/cpp/runtime/
// test_rng.cpp and tests/python/test_rng.py.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "codegen/kernel_codegen.h"
#include "compiler/nvrtc_compiler.h"
#include "ir/python_printer.h"
#include "ir/rng_op.h"
#include "ops/arith.h"
#include "ops/concretize.h"
#include "ops/reduction_ops.h"
#include "ops/rng_ops.h"
#include "ops/shape_ops.h"
#include "ops_test_utils.h"
#include "segment_test_utils.h"
#include "segmenter/forwarding_policy.h"
#include "segmenter/segment_extractor.h"

namespace nvfuser {

namespace {
Val* constant(Fusion& f, double v) {
  return defineScalar(f, DataType::Double, v);
}
Val* intConstant(Fusion& f, int64_t v) {
  return defineScalar(f, DataType::Int, v);
}

TensorView* seededUniform(Fusion& f, const std::vector<int64_t>& shape,
                          DataType dtype = DataType::Float) {
  return rngOp(f, RngOpType::Uniform, constant(f, -1.0), constant(f, 2.0),
               shape, dtype, intConstant(f, 42), intConstant(f, 7));
}

InputDescriptor scalarInput() {
  InputDescriptor d;
  d.isTensor = false;
  return d;
}

size_t countRng(const std::vector<const Expr*>& exprs) {
  return static_cast<size_t>(
      std::count_if(exprs.begin(), exprs.end(),
                    [](const Expr* e) { return e->type() == ExprType::Rng; }));
}
}  // namespace

TEST(RngOpsTest, ShapesDtypesAndStreams) {
  Fusion f;
  TensorView* x = defineTensor(f, {-1, 1, 8}, DataType::Half);
  TensorView* u = seededUniform(f, {3, 1, 5}, DataType::BFloat16);
  EXPECT_EQ(u->dtype(), DataType::BFloat16);
  EXPECT_EQ(staticShape(u), (std::vector<int64_t>{3, 1, 5}));
  EXPECT_TRUE(u->axis(1).isBroadcast());
  TensorView* r =
      rngLike(RngOpType::Uniform, x, DataType::Null, nullptr, nullptr);
  EXPECT_EQ(r->dtype(), DataType::Half);  // arg's dtype
  EXPECT_EQ(staticShape(r), (std::vector<int64_t>{-1, 1, 8}));
  // The same symbolic extent as x: the two combine elementwise.
  EXPECT_EQ(staticShape(binaryOp(BinaryOpType::Add, r, x)->asTensor()),
            (std::vector<int64_t>{-1, 1, 8}));
  TensorView* n =
      rngLike(RngOpType::Normal, x, DataType::Double, nullptr, nullptr, 9);
  EXPECT_EQ(n->dtype(), DataType::Double);
  // Streams: definition order, unless given.
  EXPECT_EQ(exprAs<RngOp>(u->definition())->index(), 0);
  EXPECT_EQ(exprAs<RngOp>(r->definition())->index(), 1);
  EXPECT_EQ(exprAs<RngOp>(n->definition())->index(), 9);
  EXPECT_EQ(r->definition()->opName(), "rand_like");
  EXPECT_EQ(n->definition()->opName(), "randn_like");
  EXPECT_FALSE(exprAs<RngOp>(r->definition())->hasSeed());
  EXPECT_TRUE(exprAs<RngOp>(u->definition())->hasSeed());
}

TEST(RngOpsTest, ErrorsNameTheOpAndTheProblem) {
  Fusion f;
  TensorView* x = defineTensor(f, {4}, DataType::Float);
  TensorView* k = defineTensor(f, {4}, DataType::Int);
  Val* zero = constant(f, 0.0);
  Val* one = constant(f, 1.0);
  Val* seed = intConstant(f, 1);
  Val* fseed = constant(f, 1.0);
  struct Case {
    std::function<void()> fn;
    const char* message;
    ErrorKind kind;
  };
  std::vector<Case> cases = {
      {[&] {
         rngOp(f, RngOpType::Uniform, zero, one, {2}, DataType::Int, nullptr,
               nullptr);
       },
       "uniform: dtype must be Float, Double, Half or BFloat16, got Int",
       ErrorKind::Type},
      {[&] {
         rngOp(f, RngOpType::Normal, zero, one, {2}, DataType::Bool, nullptr,
               nullptr);
       },
       "normal: dtype must be Float, Double, Half or BFloat16, got Bool",
       ErrorKind::Type},
      {[&] {
         rngLike(RngOpType::Uniform, k, DataType::Null, nullptr, nullptr);
       },
       "is not floating point", ErrorKind::Type},
      {[&] {
         rngOp(f, RngOpType::Uniform, zero, one, {2}, DataType::Float, seed,
               nullptr);
       },
       "rng_seed and rng_offset must be given together", ErrorKind::Value},
      {[&] {
         rngOp(f, RngOpType::Uniform, zero, one, {2}, DataType::Float, fseed,
               seed);
       },
       "rng_seed must be an Int or Int32 scalar", ErrorKind::Type},
      {[&] {
         rngOp(f, RngOpType::Uniform, x, one, {2}, DataType::Float, nullptr,
               nullptr);
       },
       "uniform: minval must be a scalar, got T0", ErrorKind::Type},
      {[&] {
         rngOp(f, RngOpType::Uniform, one, zero, {2}, DataType::Float, nullptr,
               nullptr);
       },
       "uniform: minval 1 must be <= maxval 0", ErrorKind::Value},
      {[&] {
         rngOp(f, RngOpType::Normal, zero, constant(f, -1.0), {2},
               DataType::Float, nullptr, nullptr);
       },
       "normal: std must be >= 0, got -1", ErrorKind::Value},
      {[&] {
         rngOp(f, RngOpType::Normal, constant(f, NAN), one, {2},
               DataType::Float, nullptr, nullptr);
       },
       "normal: mean must be finite", ErrorKind::Value},
      {[&] {
         rngOp(f, RngOpType::Uniform, constant(f, -1e308), constant(f, 1e308),
               {2}, DataType::Float, nullptr, nullptr);
       },
       "overflows a Double", ErrorKind::Value},
      {[&] {
         rngOp(f, RngOpType::Uniform, zero, one, {2, -3}, DataType::Float,
               nullptr, nullptr);
       },
       "uniform: shape[1] = -3 must be >= 0", ErrorKind::Value},
      {[&] {
         rngOp(f, RngOpType::Uniform, zero, one, {1 << 25, 1 << 24},
               DataType::Float, nullptr, nullptr);
       },
       "more than 2^48 elements", ErrorKind::Value},
      {[&] {
         rngOp(f, RngOpType::Uniform, zero, one, {2}, DataType::Float, nullptr,
               nullptr, 65536);
       },
       "rng_index 65536 is outside [0, 65536)", ErrorKind::Value},
  };
  for (const Case& c : cases) {
    ErrorKind kind = ErrorKind::Internal;
    const std::string msg = errorOf(c.fn, &kind);
    EXPECT_NE(msg.find(c.message), std::string::npos)
        << "expected '" << c.message << "', got '" << msg << "'";
    EXPECT_EQ(kind, c.kind) << c.message;
  }
  // 2^48 elements exactly are fine; an empty shape with a huge dim too.
  rngOp(f, RngOpType::Uniform, zero, one, {1 << 24, 1 << 24}, DataType::Float,
        nullptr, nullptr);
  rngOp(f, RngOpType::Uniform, zero, one, {int64_t(1) << 60, 0},
        DataType::Float, nullptr, nullptr);
}

TEST(RngOpsTest, PrintedWithNvFusersCalls) {
  Fusion f;
  TensorView* x = defineTensor(f, {-1, -1}, DataType::Float);
  Val* s = defineScalar(f, DataType::Int, std::nullopt);
  Val* o = defineScalar(f, DataType::Int, std::nullopt);
  f.addOutput(rngOp(f, RngOpType::Uniform, constant(f, -0.1), constant(f, 2.0),
                    {2, 3}, DataType::Half, s, o));
  f.addOutput(rngLike(RngOpType::Normal, x, DataType::Null, nullptr, nullptr));
  f.addOutput(rngLike(RngOpType::Uniform, x, DataType::BFloat16, s, o));
  const std::string text = fusionToPython(f);
  for (const char* call :
       {"t1 = fd.ops.uniform(-0.1, 2.0, shape=[2, 3], rng_seed=s0, "
        "rng_offset=s1, dtype=DataType.Half)\n",
        "t2 = fd.ops.randn_like(t0)\n",
        "t3 = fd.ops.rand_like(t0, rng_seed=s0, rng_offset=s1, "
        "dtype=DataType.BFloat16)\n"}) {
    EXPECT_NE(text.find(call), std::string::npos) << call << "\n" << text;
  }
  EXPECT_EQ(text.find("rng_index"), std::string::npos) << text;
}

TEST(RngOpsTest, PrintedStreamWhereAScriptWouldRenumber) {
  Fusion f;
  seededUniform(f, {4});  // unused: not printed
  TensorView* kept = seededUniform(f, {4});
  f.addOutput(kept);
  f.addOutput(seededUniform(f, {4}));
  const std::string text = fusionToPython(f);
  // The script's first random op is stream 1, its second stream 2.
  EXPECT_EQ(countOf(text, "rng_index=1)"), 1u) << text;
  EXPECT_EQ(countOf(text, "rng_index=2)"), 1u) << text;
}

TEST(RngOpsTest, ConcretizedFormAndDrawnState) {
  Fusion f;
  TensorView* x = defineTensor(f, {-1, 1, -1}, DataType::Float);
  Val* s = defineScalar(f, DataType::Int, std::nullopt);
  TensorView* seeded =
      rngLike(RngOpType::Uniform, x, DataType::Null, s, intConstant(f, 3));
  f.addOutput(seeded);
  ConcreteFusion c = concretize(
      f, {inputDescriptor({5, 1, 7}, DataType::Float), scalarInput()});
  EXPECT_FALSE(c.drawsRngState);
  ASSERT_EQ(c.fusion->inputs().size(), 2u);
  const auto* r = exprAs<RngOp>(c.outputs[0]->definition());
  ASSERT_NE(r, nullptr);
  EXPECT_FALSE(r->isLike());  // rand_like took x's sizes
  EXPECT_EQ(r->shape(), (std::vector<int64_t>{5, 1, 7}));
  EXPECT_EQ(r->seed(), c.fusion->inputs()[1]);

  // Unseeded ops share two drawn Int inputs, after the fusion's own.
  f.addOutput(rngLike(RngOpType::Normal, x, DataType::Half, nullptr, nullptr));
  f.addOutput(rngOp(f, RngOpType::Uniform, constant(f, 0.0), constant(f, 1.0),
                    {4}, DataType::Double, nullptr, nullptr));
  c = concretize(f,
                 {inputDescriptor({5, 1, 7}, DataType::Float), scalarInput()});
  EXPECT_TRUE(c.drawsRngState);
  ASSERT_EQ(c.fusion->inputs().size(), 4u);
  for (size_t k : {2u, 3u}) {
    EXPECT_FALSE(c.fusion->inputs()[k]->isTensor());
    EXPECT_EQ(c.fusion->inputs()[k]->dtype(), DataType::Int);
  }
  for (size_t k : {1u, 2u}) {
    const auto* d = exprAs<RngOp>(c.outputs[k]->definition());
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->seed(), c.fusion->inputs()[2]);
    EXPECT_EQ(d->offset(), c.fusion->inputs()[3]);
    EXPECT_EQ(d->index(), static_cast<int64_t>(k));  // streams kept
  }
}

TEST(RngOpsTest, NeverForwarded) {
  Fusion f;
  TensorView* x = defineTensor(f, {8, 8}, DataType::Float);
  TensorView* r =
      rngLike(RngOpType::Uniform, x, DataType::Null, nullptr, nullptr);
  for (ForwardingPolicy p :
       {ForwardingPolicy::UnaryOnly, ForwardingPolicy::Extended}) {
    Decision d = isForwardableOp(r->definition(), p);
    EXPECT_FALSE(d.ok());
    EXPECT_NE(d.reason().find("draws random numbers (never forwarded)"),
              std::string::npos)
        << d.reason();
    EXPECT_FALSE(isForwardableFactory(r->definition(), p));
  }
}

// A random tensor read by a matmul (expr_eval) and by an elementwise op
// lives in one segment: the matmul reads it from memory, nothing
// replicates its op, under every forwarding policy.
TEST(RngOpsTest, ComputedInOneSegmentOnly) {
  for (ForwardingPolicy p : {ForwardingPolicy::Off, ForwardingPolicy::UnaryOnly,
                             ForwardingPolicy::Extended}) {
    Fusion f;
    TensorView* a = defineTensor(f, {16, 16}, DataType::Float);
    TensorView* r = seededUniform(f, {16, 16});
    TensorView* c = castOp(r, DataType::Double)->asTensor();  // a unary op
    f.addOutput(matmul(a, castOp(c, DataType::Float)->asTensor()));
    f.addOutput(unaryOp(UnaryOpType::Exp, c));
    auto sf = segmentFusion(f, policyOptions(p));
    size_t computed = 0;
    for (const SegmentedGroup& g : sf->groups()) {
      EXPECT_EQ(countRng(g.prologue), 0u) << describe(g);
      computed += countRng(g.body);
    }
    EXPECT_EQ(computed, 1u) << ::testing::PrintToString(describe(*sf));
  }
}

TEST(RngOpsTest, GeneratedKernelsCompile) {
  Fusion f;
  TensorView* x = defineTensor(f, {-1, -1}, DataType::BFloat16);
  Val* s = defineScalar(f, DataType::Int, std::nullopt);
  Val* o = defineScalar(f, DataType::Int32, std::nullopt);
  for (DataType t : {DataType::Float, DataType::Double, DataType::Half,
                     DataType::BFloat16}) {
    f.addOutput(rngLike(RngOpType::Uniform, x, t, s, o));
    f.addOutput(rngLike(RngOpType::Normal, x, t, nullptr, nullptr));
  }
  // In a reduction too: the row sums of normal(mean, std) values.
  TensorView* n = rngLike(RngOpType::Normal, x, DataType::Float, s, o);
  f.addOutput(reduction(ReductionOpType::Sum, n, {1}, false, DataType::Null));
  ConcreteFusion c =
      concretize(f, {inputDescriptor({33, 130}, DataType::BFloat16),
                     scalarInput(), scalarInput()});
  auto sf = segmentFusion(*c.fusion, Options());
  size_t kernels = 0;
  for (const SegmentedGroup& g : sf->groups()) {
    ASSERT_NE(g.scheduler, SchedulerType::ExprEval) << describe(g);
    if (g.scheduler == SchedulerType::NoOp) {
      continue;
    }
    ExtractedSegment seg = extractSegment(g);
    KernelSource ks =
        generateKernel(*seg.fusion, "rng_kernel", {}, KernelCodegenOptions());
    EXPECT_NE(ks.code.find("nvf_philox("), std::string::npos);
    for (const char* arch : {"sm_90", "sm_80", "sm_75"}) {
      EXPECT_GT(compileWithNvrtc(ks.code, ks.name, arch).cubin.size(), 0u)
          << ks.code;
    }
    ++kernels;
  }
  EXPECT_GE(kernels, 1u);
  // Kernels without random ops do not carry the helpers.
  Fusion plain;
  TensorView* y = defineTensor(plain, {8}, DataType::Float);
  plain.addOutput(unaryOp(UnaryOpType::Exp, y));
  KernelSource ks = generateKernel(plain, "plain", {}, KernelCodegenOptions());
  EXPECT_EQ(ks.code.find("nvf_philox"), std::string::npos);
}

}  // namespace nvfuser
