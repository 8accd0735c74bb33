// index_select, gather and take_along_axis in the core: shapes (nvFuser's),
// errors, printing and replay, the scheduler rule that a gather reads its
// lookup from memory, forwarding, segmentation, and NVRTC compiles of the
// generated kernels. Their values: tests/cpp/runtime/test_emulated_indexing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/kernel_codegen.h"
#include "compiler/nvrtc_compiler.h"
#include "exceptions.h"
#include "ir/python_printer.h"
#include "ops/arith.h"
#include "ops/concretize.h"
#include "ops/indexing_ops.h"
#include "ops/reduction_ops.h"
#include "ops/shape_ops.h"
#include "ops_test_utils.h"
#include "scheduler/scheduler_registry.h"
#include "segment_test_utils.h"
#include "segmenter/forwarding_policy.h"
#include "segmenter/segment_extractor.h"

namespace nvfuser {

using V = std::vector<std::string>;

namespace {
// The embedding shape: ids [2, 8] into a [64, 32] weight's rows.
TensorView* embedding(Fusion& f, DataType t = DataType::Float) {
  TensorView* w = defineTensor(f, {64, 32}, t);
  TensorView* ids = defineTensor(f, {2, 8}, DataType::Int);
  return reshape(indexSelect(w, reshape(ids, {16}), 0), {2, 8, 32});
}
}  // namespace

TEST(IndexingOpsTest, ShapesFollowNvFuser) {
  Fusion f;
  TensorView* x = defineTensor(f, {-1, 8}, DataType::BFloat16);
  TensorView* i = defineTensor(f, {-1}, DataType::Int32);
  TensorView* s = defineTensor(f, {}, DataType::Int);
  TensorView* sel = indexSelect(x, i, -1);
  EXPECT_EQ(sel->dtype(), DataType::BFloat16);
  EXPECT_EQ(exprAs<GatherOp>(sel->definition())->dim(), 1);
  EXPECT_EQ(f.canonical(sel->axis(1).extent),
            f.canonical(i->axis(0).extent));  // the index's length
  EXPECT_EQ(staticShape(indexSelect(x, s, 1)), (std::vector<int64_t>{-1, 1}));

  Fusion g;
  TensorView* a = defineTensor(g, {8, 16}, DataType::Float);
  TensorView* row = defineTensor(g, {1, 16}, DataType::Float);
  TensorView* k = defineTensor(g, {4, 4}, DataType::Int);
  TensorView* one = defineTensor(g, {8, 1}, DataType::Int);
  TensorView* wide = defineTensor(g, {6, 3}, DataType::Int);
  EXPECT_EQ(staticShape(gather(a, k, 0)), (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(staticShape(takeAlongAxis(a, one, 1)),
            (std::vector<int64_t>{8, 1}));
  EXPECT_EQ(staticShape(takeAlongAxis(row, wide, 1)),
            (std::vector<int64_t>{6, 3}));  // the input broadcasts
  EXPECT_EQ(
      staticShape(takeAlongAxis(a, defineTensor(g, {1, 5}, DataType::Int), 1)),
      (std::vector<int64_t>{8, 5}));  // the index broadcasts
}

TEST(IndexingOpsTest, ErrorsNameTheOpAndOperands) {
  Fusion f;
  TensorView* x = defineTensor(f, {4, 6}, DataType::Float);
  TensorView* fi = defineTensor(f, {3}, DataType::Float);
  TensorView* i2 = defineTensor(f, {5, 2}, DataType::Int);
  ErrorKind kind = ErrorKind::Value;
  EXPECT_NE(errorOf([&] { indexSelect(x, fi, 0); }, &kind)
                .find("index_select: the index T1 [3] Float must be Int or "
                      "Int32"),
            std::string::npos);
  EXPECT_EQ(kind, ErrorKind::Type);
  EXPECT_NE(errorOf([&] { indexSelect(x, i2, 0); }).find("must be 1-D"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { gather(x, defineTensor(f, {3}, DataType::Int), 0); })
                .find("gather: the index T3 [3] Int must have the rank of the "
                      "input T0 [4, 6] Float"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { gather(x, i2, 1); })
                .find("is larger than the input T0 [4, 6] Float at dim 0 (5 > "
                      "4); only dim 1 may be larger"),
            std::string::npos);
  EXPECT_EQ(errorOf([&] { gather(x, i2, 0); }), "");  // along dim: any size
  EXPECT_NE(errorOf([&] { takeAlongAxis(x, i2, 1); })
                .find("take_along_axis: operands T0 [4, 6] Float and T2 [5, "
                      "2] Int have incompatible sizes at dim 0"),
            std::string::npos);
  EXPECT_NE(errorOf([&] {
              takeAlongAxis(x, i2, -3);
            }).find("take_along_axis: dim -3 is out of range"),
            std::string::npos);
}

TEST(IndexingOpsTest, PrintedAndReplayed) {
  Fusion f;
  TensorView* x = defineTensor(f, {-1, -1}, DataType::Float);
  TensorView* i = defineTensor(f, {-1, 1}, DataType::Int);
  TensorView* j = defineTensor(f, {-1}, DataType::Int32);
  f.addOutput(takeAlongAxis(x, i, -1));
  f.addOutput(gather(x, i, 0));
  f.addOutput(indexSelect(x, j, 1));
  const std::string py = fusionToPython(f);
  EXPECT_NE(py.find("t3 = fd.ops.take_along_axis(t0, t1, dim=1)"),
            std::string::npos)
      << py;
  EXPECT_NE(py.find("t4 = fd.ops.gather(t0, t1, dim=0)"), std::string::npos);
  EXPECT_NE(py.find("t5 = fd.ops.index_select(t0, t2, dim=1)"),
            std::string::npos);
  EXPECT_NE(f.toString().find("= take_along_axis(T0, T1, dim=1)"),
            std::string::npos);
  ConcreteFusion c = concretize(f, {inputDescriptor({6, 10}, DataType::Float),
                                    inputDescriptor({6, 1}, DataType::Int),
                                    inputDescriptor({3}, DataType::Int32)});
  EXPECT_EQ(staticShape(c.outputs[0]->asTensor()),
            (std::vector<int64_t>{6, 1}));
  EXPECT_EQ(staticShape(c.outputs[1]->asTensor()),
            (std::vector<int64_t>{6, 1}));
  EXPECT_EQ(staticShape(c.outputs[2]->asTensor()),
            (std::vector<int64_t>{6, 3}));
  // take_along_axis unified the non-indexed dims of its operands.
  EXPECT_NE(errorOf([&] {
              concretize(f, {inputDescriptor({4, 10}, DataType::Float),
                             inputDescriptor({6, 1}, DataType::Int),
                             inputDescriptor({3}, DataType::Int32)});
            }).find("the fusion requires these sizes to be equal"),
            std::string::npos);
  // gather's size rule is checked once the sizes are known.
  Fusion g;
  TensorView* y = defineTensor(g, {-1, -1}, DataType::Float);
  g.addOutput(gather(y, defineTensor(g, {-1, -1}, DataType::Int), 1));
  EXPECT_NE(
      errorOf([&] {
        concretize(g, {inputDescriptor({4, 10}, DataType::Float),
                       inputDescriptor({6, 2}, DataType::Int)});
      })
          .find("gather: the index T1 [6, 2] Int is larger than the input "
                "T0 [4, 10] Float at dim 0"),
      std::string::npos);
}

TEST(IndexingSchedulerTest, AGatherReadsItsLookupFromMemory) {
  Fusion f;
  TensorView* a = defineTensor(f, {8, 16}, DataType::Float);
  TensorView* k = defineTensor(f, {4, 4}, DataType::Int);
  f.addOutput(gather(binaryOp(BinaryOpType::Add, a, a)->asTensor(), k, 0));
  SchedulerRegistry r;
  EXPECT_EQ(r.proposeScheduler(wholeView(f)), std::nullopt);
  const std::string reasons = r.rejectionReasons(wholeView(f));
  EXPECT_NE(reasons.find("pointwise: gather T3 gathers from T2, which this "
                         "segment computes (a gather reads its input from "
                         "memory)"),
            std::string::npos)
      << reasons;
  SegmentView gatherAlone(f, {f.exprs()[1]}, {}, nullptr);
  EXPECT_EQ(r.proposeScheduler(gatherAlone), SchedulerType::PointWise);
}

TEST(IndexingSchedulerTest, GathersAreNeverForwarded) {
  Fusion f;
  TensorView* w = defineTensor(f, {8, 4}, DataType::Float);
  TensorView* i = defineTensor(f, {3}, DataType::Int);
  TensorView* e = indexSelect(w, i, 0);
  Decision d = isForwardableOp(e->definition(), ForwardingPolicy::Extended);
  EXPECT_FALSE(d);
  EXPECT_NE(d.reason().find("index_select T2 is an indexed load"),
            std::string::npos);
}

// Segmentation tests: groups, schedulers and ops (values: the emulator
// tests and tests/python/test_indexing_ops.py).
TEST(IndexingSegmenterTest, EmbeddingAndPointwiseOpsAreOneGroup) {
  Fusion f;
  TensorView* e = embedding(f, DataType::BFloat16);
  f.addOutput(castOp(binaryOp(BinaryOpType::Mul, unaryOp(UnaryOpType::Silu, e),
                              defineScalar(f, DataType::Double, 0.5)),
                     DataType::BFloat16));
  auto sf = segmentFusion(f, Options());
  EXPECT_EQ(describe(*sf),
            V{"pointwise: index_select reshape silu mul cast [prologue: "
              "reshape]"});
}

// Two pointwise groups merge from their summaries unless one has a
// gather: the add and the gather have one loop domain, but the gather
// must read the sum from memory.
TEST(IndexingSegmenterTest, AComputedLookupStaysInAnEarlierGroup) {
  Fusion f;
  TensorView* a = defineTensor(f, {8, 16}, DataType::Float);
  TensorView* k = defineTensor(f, {8, 16}, DataType::Int);
  TensorView* s = binaryOp(BinaryOpType::Add, a, a)->asTensor();
  // One statement per op: the order of a call's arguments is unspecified
  // (Clang built exp first), and the groups list ops in creation order.
  TensorView* looked = gather(s, k, 1);
  Val* e = unaryOp(UnaryOpType::Exp, s);
  f.addOutput(binaryOp(BinaryOpType::Mul, looked, e));
  auto sf = segmentFusion(f, Options());
  EXPECT_EQ(describe(*sf), (V{"pointwise: add", "pointwise: gather exp mul"}));
}

TEST(IndexingSegmenterTest, AForwardedLookupIsBackedOff) {
  Fusion f;
  TensorView* w = defineTensor(f, {16, 8}, DataType::BFloat16);
  TensorView* i = defineTensor(f, {3}, DataType::Int);
  f.addOutput(
      unaryOp(UnaryOpType::Neg,
              indexSelect(castOp(w, DataType::Float)->asTensor(), i, 0)));
  auto sf = segmentFusion(f, Options());
  EXPECT_EQ(describe(*sf),
            (V{"pointwise: cast", "pointwise: index_select neg"}));
  ASSERT_EQ(sf->chains().size(), 1u);
  EXPECT_EQ(sf->chains()[0].backedOffConsumers.size(), 1u);
}

TEST(IndexingSegmenterTest, GathersOfOneLookupMergeHorizontally) {
  Fusion f;
  TensorView* w = defineTensor(f, {16, 8}, DataType::Float);
  TensorView* i = defineTensor(f, {3}, DataType::Int);
  TensorView* j = defineTensor(f, {16, 2}, DataType::Int);
  f.addOutput(indexSelect(w, i, 0));
  f.addOutput(takeAlongAxis(w, j, 1));
  auto sf = segmentFusion(f, Options());
  EXPECT_EQ(describe(*sf), V{"pointwise: index_select take_along_axis"});
  EXPECT_TRUE(sf->groups()[0].horizontal);
}

// Every generated gather compiles with NVRTC: vector and per-lane loads,
// a row kernel (embedding + RMS norm) and a serial reduction.
TEST(IndexingCodegenTest, GeneratedGathersCompileWithNvrtc) {
  Fusion f;
  TensorView* e = embedding(f, DataType::BFloat16);
  TensorView* ef = castOp(e, DataType::Float)->asTensor();
  TensorView* ms = reduction(ReductionOpType::Mean,
                             binaryOp(BinaryOpType::Mul, ef, ef)->asTensor(),
                             {2}, /*keepdim=*/true);
  f.addOutput(binaryOp(BinaryOpType::Mul, ef, unaryOp(UnaryOpType::Rsqrt, ms)));
  TensorView* x = defineTensor(f, {8, 16}, DataType::Half);
  TensorView* k = defineTensor(f, {8, 16}, DataType::Int32);
  f.addOutput(gather(x, k, 1));
  f.addOutput(
      reduction(ReductionOpType::Sum, takeAlongAxis(x, k, 0), {0}, false));
  auto sf = segmentFusion(f, Options());
  size_t kernels = 0;
  for (const SegmentedGroup& g : sf->groups()) {
    ExtractedSegment seg = extractSegment(g);
    for (bool vectorize : {true, false}) {
      KernelPlanOptions options;
      options.vectorize = vectorize;
      KernelSource ks = generateKernel(
          *seg.fusion, "kernel_g" + std::to_string(g.id), {}, {}, options);
      for (const char* arch : {"sm_90", "sm_80"}) {
        EXPECT_GT(compileWithNvrtc(ks.code, ks.name, arch).cubin.size(), 0u)
            << ks.code;
      }
      kernels += vectorize;
    }
  }
  EXPECT_EQ(kernels, sf->groups().size());
  std::vector<SchedulerType> types;
  for (const SegmentedGroup& g : sf->groups()) {
    types.push_back(g.scheduler);
  }
  EXPECT_NE(
      std::find(types.begin(), types.end(), SchedulerType::InnerPersistent),
      types.end());
}

}  // namespace nvfuser
