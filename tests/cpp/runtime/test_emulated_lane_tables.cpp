// Lane tables (codegen/value_builder_lane_tables.cpp): an interleaved
// (GPT-J style) RoPE views the head dim as pairs, [.., D] -> [.., D / 2, 2],
// and cats or pads along the pair dim. Its kernel used to run one element
// per thread; with lane tables the vector lanes stay, each lane picking its
// element of one aligned vector load and its side of the cat without a
// branch. Checked: the offsets' expressions, the vectorized kernels'
// code and their numerics on the emulator against ATen, and lane splits
// no table describes falling back to fewer lanes with the same results.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/tensor_shape.h"
#include "codegen/index_expr.h"
#include "codegen/kernel_codegen.h"
#include "emulated_run.h"
#include "fuzz_seeds.h"
#include "ops/arith.h"
#include "ops/shape_ops.h"

namespace nvfuser {
namespace codegen_detail {
IndexExpr laneOffsetExpr(const std::vector<int64_t>& offsets);
}  // namespace codegen_detail

namespace {

TensorView* mul(TensorView* a, TensorView* b) {
  return binaryOp(BinaryOpType::Mul, a, b)->asTensor();
}
TensorView* add(TensorView* a, TensorView* b) {
  return binaryOp(BinaryOpType::Add, a, b)->asTensor();
}
TensorView* sub(TensorView* a, TensorView* b) {
  return binaryOp(BinaryOpType::Sub, a, b)->asTensor();
}

// x [B, H, T, D] in dtype `dt`; cos and sin [T, D / 2]. The pair (x[2k],
// x[2k + 1]) rotates by angle k: [x1 c - x2 s, x2 c + x1 s], as Meta's
// Llama and GPT-J write it.
struct Interleaved {
  TensorView* x;
  TensorView* cos;
  TensorView* sin;
  TensorView* c;  // cos and sin broadcast to [B, H, T, D / 2, 1], float
  TensorView* s;
  std::vector<int64_t> pairs;  // [B, H, T, D / 2, 2]
};

Interleaved interleavedInputs(Fusion& f, const std::vector<int64_t>& shape,
                              DataType dt) {
  Interleaved r;
  const int64_t T = shape[2], D = shape[3];
  r.x = defineTensor(f, shape, dt);
  r.cos = defineTensor(f, {T, D / 2}, dt);
  r.sin = defineTensor(f, {T, D / 2}, dt);
  r.pairs = {shape[0], shape[1], T, D / 2, 2};
  auto table = [&](TensorView* t) {
    TensorView* b = broadcast(castOp(t, DataType::Float)->asTensor(),
                              {true, true, false, false, true});
    return b;
  };
  r.c = table(r.cos);
  r.s = table(r.sin);
  return r;
}

// The pair dim's two elements of `xp` ([.., D / 2, 2]) as [.., D / 2, 1].
std::pair<TensorView*, TensorView*> halves(TensorView* xp) {
  std::vector<int64_t> shape = concreteShape(xp);
  std::vector<int64_t> zeros(shape.size(), 0), ones(shape.size(), 1);
  std::vector<int64_t> firstStop = shape, secondStart = zeros;
  firstStop.back() = 1;
  secondStart.back() = 1;
  return {slice(xp, zeros, firstStop, ones),
          slice(xp, secondStart, shape, ones)};
}

TensorView* interleavedRope(Fusion& f, const std::vector<int64_t>& shape,
                            DataType dt) {
  Interleaved in = interleavedInputs(f, shape, dt);
  TensorView* xp = reshape(castOp(in.x, DataType::Float)->asTensor(), in.pairs);
  auto [x1, x2] = halves(xp);
  TensorView* o1 = sub(mul(x1, in.c), mul(x2, in.s));
  TensorView* o2 = add(mul(x2, in.c), mul(x1, in.s));
  TensorView* o = reshape(cat({o1, o2}, -1), shape);
  return castOp(o, dt)->asTensor();
}

// Its gradient as autograd writes it: the slices' backwards are pads of
// the pair dim.
TensorView* interleavedRopeGrad(Fusion& f, const std::vector<int64_t>& shape,
                                DataType dt) {
  Interleaved in = interleavedInputs(f, shape, dt);
  TensorView* gp = reshape(castOp(in.x, DataType::Float)->asTensor(), in.pairs);
  auto [g1, g2] = halves(gp);
  TensorView* d1 = add(mul(g1, in.c), mul(g2, in.s));  // d x1
  TensorView* d2 = sub(mul(g2, in.c), mul(g1, in.s));  // d x2
  TensorView* dx = add(pad(d1, {0, 1}, nullptr), pad(d2, {1, 0}, nullptr));
  return castOp(reshape(dx, shape), dt)->asTensor();
}

// The kernel without the helpers before it.
std::string kernelCode(Fusion& f) {
  const std::string code = generateKernel(f, "k", {}).code;
  return code.substr(code.find("extern \"C\""));
}

std::vector<at::Tensor> interleavedArgs(const std::vector<int64_t>& shape,
                                        at::ScalarType dt) {
  const int64_t T = shape[2], D = shape[3];
  return {at::randn(shape).to(dt), at::randn({T, D / 2}).to(dt),
          at::randn({T, D / 2}).to(dt)};
}

}  // namespace

TEST(LaneTableTest, OffsetExpressions) {
  auto text = [](const std::vector<int64_t>& offsets) {
    return codegen_detail::laneOffsetExpr(offsets).str();
  };
  EXPECT_EQ(text({0, 1, 2, 3}), "u");
  EXPECT_EQ(text({0, 0, 1, 1, 2, 2, 3, 3}), "u / 2");
  EXPECT_EQ(text({0, 1, 0, 1}), "u % 2");
  EXPECT_EQ(text({1, 1, 3, 3, 5, 5, 7, 7}), "(u / 2) * 2 + 1");
  EXPECT_EQ(text({0, 0, 0, 0}), "0");
  EXPECT_EQ(text({2, 0, 3, 1}), "u / 2 + (u % 2) * -2 + 2");
  EXPECT_EQ(text({3, 0, 2, 1}),
            "(u == 0 ? 3 : (u == 1 ? 0 : (u == 2 ? 2 : 1)))");
}

TEST(LaneTableTest, InterleavedRopeKeepsEightLanesAndMatchesAten) {
  const std::vector<int64_t> shape{1, 2, 6, 32};
  Fusion f;
  f.addOutput(interleavedRope(f, shape, DataType::BFloat16));
  const std::string code = kernelCode(f);
  // One 8-lane vector of x, each lane picking x[2k] and x[2k + 1] from it;
  // 4 of cos and of sin; the cat a select per lane.
  EXPECT_NE(code.find("i = s * 8;"), std::string::npos) << code;
  EXPECT_NE(code.find("[(u / 2) * 2 + 1]"), std::string::npos) << code;
  EXPECT_NE(code.find("nvf_array<nvf_bf16, 4>"), std::string::npos) << code;
  EXPECT_NE(code.find("(u % 2 == 0) ?"), std::string::npos) << code;
  EXPECT_EQ(code.find("if ("), std::string::npos) << code;
  EmulatedRun run =
      runEmulatedAndAten(f, interleavedArgs(shape, at::kBFloat16));
  ASSERT_EQ(run.atenError, "");
  EXPECT_EQ(run.kernels, 1u);
  EXPECT_TRUE(at::equal(run.outs[0], run.ref[0]));
}

TEST(LaneTableTest, InterleavedRopeGradientPadsSelectPerLane) {
  const std::vector<int64_t> shape{2, 3, 5, 16};
  Fusion f;
  f.addOutput(interleavedRopeGrad(f, shape, DataType::Float));
  const std::string code = kernelCode(f);
  EXPECT_NE(code.find("i = s * 4;"), std::string::npos) << code;
  EXPECT_EQ(code.find("if ("), std::string::npos) << code;
  EmulatedRun run = runEmulatedAndAten(f, interleavedArgs(shape, at::kFloat));
  ASSERT_EQ(run.atenError, "");
  EXPECT_TRUE(at::allclose(run.outs[0], run.ref[0], 1e-6, 1e-6));
}

TEST(LaneTableTest, TriplesNoTableDescribesRunWithFewerLanes) {
  // [.., 12] viewed as [.., 4, 3]: 4 lanes straddle the triples, so the
  // kernel runs with fewer lanes and the same results.
  Fusion f;
  TensorView* x = defineTensor(f, {3, 5, 12}, DataType::Float);
  TensorView* t = reshape(x, {3, 5, 4, 3});
  TensorView* a = slice(t, {0, 0, 0, 0}, {3, 5, 4, 1}, {1, 1, 1, 1});
  TensorView* b = slice(t, {0, 0, 0, 1}, {3, 5, 4, 3}, {1, 1, 1, 1});
  TensorView* neg = unaryOp(UnaryOpType::Neg, a)->asTensor();
  f.addOutput(reshape(cat({b, neg}, -1), {3, 5, 12}));
  EXPECT_EQ(kernelCode(f).find("i = s * 4;"), std::string::npos);
  EmulatedRun run = runEmulatedAndAten(f, {at::randn({3, 5, 12})});
  ASSERT_EQ(run.atenError, "");
  EXPECT_TRUE(at::equal(run.outs[0], run.ref[0]));
}

TEST(LaneTableTest, PairsOfPairsAndAPermutedLoad) {
  // [.., 16] as [.., 4, 2, 2], the middle pair dim swapped by a cat, read
  // through a permute of the input: tables through two splits and a load
  // whose lanes are not along the input's innermost dim.
  Fusion f;
  TensorView* x = defineTensor(f, {16, 6}, DataType::Float);
  TensorView* xt = permute(x, {1, 0});  // [6, 16], strided lanes
  TensorView* q = reshape(xt, {6, 4, 2, 2});
  TensorView* lo = slice(q, {0, 0, 0, 0}, {6, 4, 1, 2}, {1, 1, 1, 1});
  TensorView* hi = slice(q, {0, 0, 1, 0}, {6, 4, 2, 2}, {1, 1, 1, 1});
  TensorView* out =
      reshape(cat({hi, unaryOp(UnaryOpType::Neg, lo)->asTensor()}, 2), {6, 16});
  f.addOutput(out);
  EmulatedRun run = runEmulatedAndAten(f, {at::randn({16, 6})});
  ASSERT_EQ(run.atenError, "");
  EXPECT_TRUE(at::equal(run.outs[0], run.ref[0]));
}

TEST(LaneTableTest, PairsOfAPackedPartShiftTheirWindow) {
  // The k part of a packed [3, T, D] qkv viewed as pairs: every lane's
  // element is T * D past the window's start, and still one aligned
  // vector load serves x[2k] and x[2k + 1] (found by review: per-lane
  // loads before).
  const int64_t T = 5, D = 16;
  Fusion f;
  TensorView* qkv = defineTensor(f, {3, T, D}, DataType::BFloat16);
  TensorView* k = slice(qkv, {1, 0, 0}, {2, T, D}, {1, 1, 1});
  TensorView* p =
      reshape(castOp(k, DataType::Float)->asTensor(), {1, T, D / 2, 2});
  auto [a, b] = halves(p);
  TensorView* out = reshape(
      cat({b, unaryOp(UnaryOpType::Neg, a)->asTensor()}, -1), {1, T, D});
  f.addOutput(castOp(out, DataType::BFloat16));
  const std::string code = kernelCode(f);
  EXPECT_NE(code.find("i = s * 8;"), std::string::npos) << code;
  EXPECT_NE(code.find("+ 80)"), std::string::npos) << code;  // T * D
  EXPECT_EQ(code.find("in0["), std::string::npos) << code;
  EmulatedRun run =
      runEmulatedAndAten(f, {at::randn({3, T, D}).to(at::kBFloat16)});
  ASSERT_EQ(run.atenError, "");
  EXPECT_TRUE(at::equal(run.outs[0], run.ref[0]));
}

TEST(LaneTableTest, RandomFusionsWithLaneTablesMatchOnTheEmulator) {
  // Seeds of fuzz_fusions (14 ops) whose kernels have lane tables
  // (`fuzz_fusions --features list`): the pair views it builds.
  expectFuzzSeedsMatchOnTheEmulator({9u, 32u, 49u, 54u, 88u, 124u},
                                    &FuzzOutcome::laneTableKernels);
}

}  // namespace nvfuser
