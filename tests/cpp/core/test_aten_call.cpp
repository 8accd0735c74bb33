// aten_call in the core: result shapes (constants and extents of tensor
// arguments, symbolic ones kept), the builder's errors, printing as
// Python, concretization and segmentation (one expr_eval segment per
// call, the ops around it fused, forwarding backing off for the call
// alone). Its values: tests/python/test_aten_call.py.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ir/python_printer.h"
#include "ops/arith.h"
#include "ops/aten_call_ops.h"
#include "ops/concretize.h"
#include "ops_test_utils.h"
#include "segment_test_utils.h"

namespace nvfuser {

using V = std::vector<std::string>;

namespace {
AtenCallArg inputArg(int64_t k) {
  AtenCallArg a;
  a.kind = AtenCallArg::Kind::Input;
  a.input = k;
  return a;
}

AtenCallArg intArg(int64_t v) {
  AtenCallArg a;
  a.kind = AtenCallArg::Kind::Int;
  a.intValue = v;
  return a;
}

// topk(x, k) keeping values (and indices): [(x, 0), k].
std::vector<TensorView*> topk(TensorView* x, int64_t k, bool indices) {
  std::vector<AtenCallResult> results = {
      {0, x->dtype(), {{0, 0, 0}, {-1, 0, k}}}};
  if (indices) {
    results.push_back({1, DataType::Int, {{0, 0, 0}, {-1, 0, k}}});
  }
  return atenCall("aten::topk", {x}, {inputArg(0), intArg(k)}, results);
}
}  // namespace

TEST(AtenCallTest, ResultShapesFollowTheDeclaration) {
  Fusion f;
  TensorView* x = defineTensor(f, {-1, 8}, DataType::Half);
  std::vector<TensorView*> r = topk(x, 3, true);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0]->dtype(), DataType::Half);
  EXPECT_EQ(r[1]->dtype(), DataType::Int);
  // Dim 0 is x's symbolic extent, dim 1 the constant 3.
  EXPECT_EQ(staticShape(r[0]), (std::vector<int64_t>{-1, 3}));
  EXPECT_EQ(f.canonical(r[1]->axis(0).extent), f.canonical(x->axis(0).extent));
  // A size-1 result dim is a broadcast, as a size-1 input dim is.
  EXPECT_TRUE(topk(x, 1, false)[0]->axis(1).isBroadcast());
}

TEST(AtenCallTest, ErrorsNameTheProblem) {
  Fusion f;
  TensorView* x = defineTensor(f, {4}, DataType::Float);
  Val* s = defineScalar(f, DataType::Double, std::nullopt);
  std::vector<AtenCallResult> one = {{0, DataType::Float, {{-1, 0, 4}}}};
  auto call = [&](const std::string& op, std::vector<Val*> ins,
                  std::vector<AtenCallArg> args,
                  std::vector<AtenCallResult> results) {
    return errorOf([&] { atenCall(op, ins, args, results); });
  };
  for (const char* bad : {"topk", "aten::", "::topk", "aten::topk.",
                          "aten::to pk", "a::b::c", "aten::topk.x'y"}) {
    EXPECT_NE(
        call(bad, {x}, {inputArg(0)}, one).find("is not an operator name"),
        std::string::npos)
        << bad;
  }
  EXPECT_NE(call("aten::abs", {x}, {inputArg(1)}, one).find("refers to input"),
            std::string::npos);
  EXPECT_NE(call("aten::abs", {x, s}, {inputArg(0)}, one)
                .find("every input must be an argument"),
            std::string::npos);
  EXPECT_NE(call("aten::abs", {s}, {inputArg(0)}, one).find("tensor"),
            std::string::npos);
  EXPECT_NE(call("aten::abs", {x}, {inputArg(0)}, {}).find("keeps no result"),
            std::string::npos);
  EXPECT_NE(call("aten::abs", {x}, {inputArg(0)},
                 {{0, DataType::Float, {{-1, 0, -3}}}})
                .find("negative size"),
            std::string::npos);
  EXPECT_NE(call("aten::abs", {x, s}, {inputArg(0), inputArg(1)},
                 {{0, DataType::Float, {{1, 0, 0}}}})
                .find("which is not a tensor"),
            std::string::npos);
  AtenCallArg list;
  list.kind = AtenCallArg::Kind::TensorList;
  list.inputs = {0, -1, 1};
  EXPECT_NE(call("aten::index.Tensor", {x, s}, {inputArg(0), list}, one)
                .find("argument 1 lists input 1, which is not a tensor"),
            std::string::npos);
  list.inputs = {0, 2};
  EXPECT_NE(call("aten::cat", {x}, {list}, one)
                .find("argument 0 refers to input 2 of 1"),
            std::string::npos);
}

TEST(AtenCallTest, PrintsAsPython) {
  Fusion f;
  TensorView* x = defineTensor(f, {-1, 8}, DataType::Float);
  AtenCallArg none;
  AtenCallArg flag;
  flag.kind = AtenCallArg::Kind::Bool;
  flag.boolValue = true;
  AtenCallArg scale;
  scale.kind = AtenCallArg::Kind::Double;
  scale.doubleValue = 0.1;
  AtenCallArg text;
  text.kind = AtenCallArg::Kind::String;
  text.text = "it's\n";
  AtenCallArg dims;
  dims.kind = AtenCallArg::Kind::IntList;
  dims.ints = {0, 1};
  AtenCallArg list;
  list.kind = AtenCallArg::Kind::TensorList;
  list.inputs = {-1, 0};
  f.addOutput(atenCall("ns::op.over", {x},
                       {inputArg(0), none, flag, scale, text, dims, list},
                       {{2, DataType::Half, {{0, 1, 0}, {-1, 0, 5}}}})[0]);
  const std::string py = fusionToPython(f);
  EXPECT_NE(py.find("t1, = fd.ops.aten_call('ns::op.over', [t0, None, True, "
                    "0.1, 'it\\'s\\x0a', [0, 1], [None, t0]], "
                    "results=[(2, DataType.Half, [(t0, 1), 5])])"),
            std::string::npos)
      << py;
}

TEST(AtenCallTest, OneExprEvalSegmentPerCallAndForwardingBacksOff) {
  Fusion f;
  TensorView* x = defineTensor(f, {-1, -1}, DataType::Half);
  Val* xf = castOp(x, DataType::Float);
  TensorView* top = topk(xf->asTensor(), 2, false)[0];
  f.addOutput(unaryOp(UnaryOpType::Neg, top));
  f.addOutput(unaryOp(UnaryOpType::Exp, xf));
  ConcreteFusion c = concretize(f, {inputDescriptor({6, 5}, DataType::Half)});
  auto sf = segmentFusion(*c.fusion, Options());
  V groups = describe(*sf);
  std::sort(groups.begin(), groups.end());
  // The cast runs once for the call; the kernel after it (neg and exp,
  // merged horizontally) recomputes it.
  EXPECT_EQ(groups, (V{"expr_eval: aten_call", "pointwise: cast",
                       "pointwise: neg exp [prologue: cast]"}))
      << ::testing::PrintToString(groups);
}

}  // namespace nvfuser
