// Generated kernels executed on the CPU through the emulator
// (tests/cpp/emu): numerics of vectorized loads, horizontal families, row
// reductions, persistent rows and split sums checked against ATen without a
// GPU. NVFUSER_EMU_FUZZ_COUNT (default 20) random fusions as well.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "../core/norm_fusions.h"
#include "../emu/kernel_emulator.h"
#include "../fuzz/fuzz_case.h"
#include "emulated_run.h"
#include "exceptions.h"
#include "ops/arith.h"
#include "ops/concretize.h"
#include "ops/reduction_ops.h"
#include "ops/shape_ops.h"
#include "runtime/aten_evaluator.h"
#include "scheduler/generated_kernel_rules.h"
#include "scheduler/reduction_split.h"
#include "segmenter/segment_candidate_finder.h"

namespace nvfuser {

namespace {
// Segments the fusion for `args`, runs every generated kernel through the
// emulator; returns how many groups were kernels. Outputs must match ATen.
size_t checkEmulated(Fusion& f, const std::vector<at::Tensor>& inputs,
                     double tol = 1e-5, const ReplayOverride& rewrite = {}) {
  EmulatedRun run = runEmulatedAndAten(f, inputs, rewrite);
  EXPECT_EQ(run.atenError, "");
  EXPECT_EQ(run.outs.size(), run.ref.size());
  for (size_t k = 0; k < run.outs.size() && k < run.ref.size(); ++k) {
    at::Tensor a = run.outs[k].to(at::kDouble);
    at::Tensor b = run.ref[k].to(at::kDouble);
    EXPECT_TRUE(at::allclose(a, b, tol, tol))
        << "output " << k << " max diff " << (a - b).abs().max().item<double>();
  }
  return run.kernels;
}

TensorView* rowBroadcast(TensorView* t, int64_t rows, int64_t cols) {
  return expand(broadcast(t, {false, true}), {rows, cols});
}

// Outputs softmax(x), var(x) and mean(x) over the rows of a Float input
// x [rows, cols]: four row reductions in one row kernel.
void defineSoftmaxAndVarMean(Fusion& f, int64_t rows, int64_t cols,
                             int64_t correction) {
  TensorView* x = defineTensor(f, {rows, cols}, DataType::Float);
  TensorView* m = reduction(ReductionOpType::Max, x, {1}, false);
  TensorView* e =
      unaryOp(UnaryOpType::Exp,
              binaryOp(BinaryOpType::Sub, x, rowBroadcast(m, rows, cols)))
          ->asTensor();
  TensorView* s = reduction(ReductionOpType::Sum, e, {1}, false);
  f.addOutput(binaryOp(BinaryOpType::Div, e, rowBroadcast(s, rows, cols)));
  auto [var, mean] = varMean(x, {1}, correction, false);
  f.addOutput(var);
  f.addOutput(mean);
}
}  // namespace

TEST(EmulatedKernelTest, VectorizedLayoutsAndRotateHalf) {
  const int64_t B = 2, H = 4, T = 8, D = 32;
  Fusion f;
  TensorView* q = defineTensor(f, {B, H, T, D}, DataType::Float,
                               std::vector<std::optional<bool>>(4, false));
  TensorView* cos = defineTensor(f, {T, D}, DataType::Float);
  TensorView* cb = broadcastInDim(cos, {B, H, T, D}, {2, 3});
  TensorView* x1 = slice(q, {0, 0, 0, 0}, {B, H, T, D / 2}, {});
  TensorView* x2 = slice(q, {0, 0, 0, D / 2}, {B, H, T, D}, {});
  TensorView* rot = cat({unaryOp(UnaryOpType::Neg, x2)->asTensor(), x1}, 3);
  f.addOutput(binaryOp(BinaryOpType::Add, binaryOp(BinaryOpType::Mul, q, cb),
                       binaryOp(BinaryOpType::Mul, rot, cb)));
  at::Tensor c = at::randn({T, D});
  // Dense, misaligned (one element into a buffer) and transposed q.
  at::Tensor dense = at::randn({B, H, T, D});
  at::Tensor buf = at::randn({B * H * T * D + 1});
  at::Tensor misaligned = buf.narrow(0, 1, B * H * T * D).view({B, H, T, D});
  at::Tensor transposed = at::randn({B, H, D, T}).transpose(2, 3);
  for (const at::Tensor& x : {dense, misaligned, transposed}) {
    EXPECT_EQ(checkEmulated(f, {x, c}), 1u);
  }
}

// Inside a reduction loop, pads and cats compute their parts without
// branches, loads predicated on each part's range. A part that cannot keep
// two lanes (a pad of width 2 then 1) throws mid-way through the lane
// proof; the plan takes one lane, and the kernel must not inherit the
// abandoned proof's predicate (when the generator retried narrower itself
// it did, and "i1 < 6 && i1 >= 6" zeroed the cat's second half; fuzz seed
// 12, when every pad and cat was predicated).
TEST(EmulatedKernelTest, PredicatedLoadsSurviveAFailedLaneProof) {
  Fusion f;
  TensorView* a = defineTensor(f, {5, 3, 2}, DataType::Double);
  TensorView* b = defineTensor(f, {5, 3, 2}, DataType::Double);
  TensorView* t =
      permute(binaryOp(BinaryOpType::Add, a, b)->asTensor(), {0, 2, 1});
  TensorView* p =
      pad(t, {2, 1}, defineScalar(f, DataType::Double, ScalarValue(0.5)));
  TensorView* c = cat({p, p}, 2);  // [5, 2, 12]
  f.addOutput(reduction(ReductionOpType::Sum, c, {0}, false));
  EXPECT_EQ(checkEmulated(f, {at::randn({5, 3, 2}, at::kDouble),
                              at::randn({5, 3, 2}, at::kDouble)}),
            1u);
}

TEST(EmulatedKernelTest, HorizontalKernelWithTwoLoopDomains) {
  Fusion f;
  TensorView* q = defineTensor(f, {2, 8, 16}, DataType::Float);
  TensorView* k = defineTensor(f, {2, 2, 16}, DataType::Float);
  TensorView* c = defineTensor(f, {16}, DataType::Float);
  f.addOutput(
      binaryOp(BinaryOpType::Mul, q, broadcastInDim(c, {2, 8, 16}, {2})));
  f.addOutput(
      binaryOp(BinaryOpType::Sub, k, broadcastInDim(c, {2, 2, 16}, {2})));
  EXPECT_EQ(checkEmulated(f, {at::randn({2, 8, 16}), at::randn({2, 2, 16}),
                              at::randn({16})}),
            1u);
}

TEST(EmulatedKernelTest, DivisionByASharedDivisorIsCorrectlyRounded) {
  // Each row of x divided by one value of y: the kernel multiplies by y's
  // reciprocal and corrects with an fma; the quotients must equal IEEE
  // division bit for bit, across exponents, zeros, infinities, NaNs and
  // subnormals.
  const int64_t R = 64, C = 256;
  Fusion f;
  TensorView* x = defineTensor(f, {R, C}, DataType::Float);
  TensorView* y = defineTensor(f, {R}, DataType::Float);
  f.addOutput(binaryOp(BinaryOpType::Div, x,
                       expand(broadcast(y, {false, true}), {R, C})));
  at::manual_seed(7);
  auto spread = [](at::Tensor t) {
    return t * at::pow(2.0, at::randint(-140, 140, t.sizes()));
  };
  at::Tensor a = spread(at::randn({R, C}));
  at::Tensor b = spread(at::randn({R}));
  const float specials[] = {0.f,     -0.f,  INFINITY, -INFINITY, NAN,    1e-40f,
                            -3e-39f, 3e38f, 1.f,      0x1p-50f,  0x1p50f};
  for (size_t k = 0; k < sizeof(specials) / sizeof(float); ++k) {
    a[0][k] = specials[k];
    a[1][k] = specials[k];
    b[2 + k] = specials[k];
  }
  b[1] = 3.f;
  std::vector<RuntimeArg> args = {RuntimeArg::fromTensor(a),
                                  RuntimeArg::fromTensor(b)};
  ConcreteFusion c = concretize(f, describeArgs(f, args));
  SegmentedRuntime runtime(segmentFusion(*c.fusion, Options()), args,
                           Options());
  ASSERT_NE(runtime.kernels().at(0), nullptr);
  EXPECT_NE(runtime.kernels()[0]->predictedSource().code.find("nvf_div_rcp(v"),
            std::string::npos);
  at::Tensor out = runEmulated(runtime, args).at(0);
  at::Tensor ref = a / b.unsqueeze(1);
  at::Tensor same = (out == ref) | (at::isnan(out) & at::isnan(ref));
  EXPECT_TRUE(same.all().item<bool>())
      << (~same).sum().item<int64_t>() << " quotients differ";
  EXPECT_TRUE(at::equal(at::signbit(out.masked_fill(at::isnan(out), 0)),
                        at::signbit(ref.masked_fill(at::isnan(ref), 0))));
}

TEST(EmulatedKernelTest, SoftmaxLayerNormAndLongRows) {
  // Persistent rows with masked vectors (96, 1000), persistent rows that
  // the block covers exactly (4096: no masks), rows too long to hold (loop).
  for (int64_t cols : {96, 1000, 4096, 12288}) {
    const int64_t rows = 6;
    Fusion f;
    defineSoftmaxAndVarMean(f, rows, cols, 1);
    EXPECT_GE(checkEmulated(f, {at::randn({rows, cols})}, 1e-4), 1u) << cols;
  }
}

TEST(EmulatedKernelTest, BlockReductionsNeedNoMoreBarriersThanTheyHave) {
  // Warp 0 runs ahead after every block barrier (NVF_EMU_SKEW): a block
  // reduction writing shared memory that other warps still read from the
  // previous reduction of the row would give wrong sums. Softmax (max, sum)
  // and var_mean (sum, squares) over 4 warps, several rows per block.
  setenv("NVF_EMU_SKEW", "1", 1);
  const int64_t rows = 8, cols = 1024;
  Fusion f;
  defineSoftmaxAndVarMean(f, rows, cols, 0);
  EXPECT_EQ(checkEmulated(f, {at::randn({rows, cols}) * 3}, 1e-4), 1u);
  unsetenv("NVF_EMU_SKEW");
}

TEST(EmulatedKernelTest, SplitColumnSumAndMiddleAxisSums) {
  Fusion f;
  TensorView* x = defineTensor(f, {4096, 24}, DataType::Float);
  f.addOutput(reduction(ReductionOpType::Sum, x, {0}, false));
  EXPECT_EQ(checkEmulated(f, {at::randn({4096, 24})}, 1e-3), 1u);
  // 1001 rows: 26 chunks of 40, the last one short; idle warps in the last
  // tile of chunks.
  Fusion f2;
  TensorView* x2 = defineTensor(f2, {1001, 24}, DataType::Float);
  f2.addOutput(reduction(ReductionOpType::Sum, x2, {0}, false));
  EXPECT_EQ(checkEmulated(f2, {at::randn({1001, 24})}, 1e-3), 1u);
  // 128 vectors: several tiles of vectors.
  Fusion f3;
  TensorView* x3 = defineTensor(f3, {2048, 512}, DataType::Float);
  f3.addOutput(reduction(ReductionOpType::Sum, x3, {0}, false));
  EXPECT_EQ(checkEmulated(f3, {at::randn({2048, 512})}, 1e-3), 1u);
  Fusion g;
  TensorView* y = defineTensor(g, {2, 3, 5, 16}, DataType::Float);
  g.addOutput(reduction(ReductionOpType::Max, y, {1, 2}, false));
  g.addOutput(reduction(ReductionOpType::Mean, y, {1}, true));
  EXPECT_GE(checkEmulated(g, {at::randn({2, 3, 5, 16})}), 1u);
}

// A reduction of the innermost dim and a dim not next to it (sum over
// {0, 2}) had no scheduler: the row strategy needs trailing reduced dims,
// the serial one an unreduced innermost dim. It reduces a permuted view
// now, one row kernel; keepdim and var_mean too.
TEST(EmulatedKernelTest, ReductionOfInnermostAndOuterDimsIsOneRowKernel) {
  Fusion f;
  TensorView* x = defineTensor(f, {6, 5, 64}, DataType::Float);
  f.addOutput(reduction(ReductionOpType::Sum, x, {0, 2}, false));
  f.addOutput(reduction(ReductionOpType::Max, x, {2, 0}, true));
  auto vm = varMean(x, {0, 2}, 1, true);
  f.addOutput(vm.first);
  f.addOutput(vm.second);
  EXPECT_EQ(checkEmulated(f, {at::randn({6, 5, 64})}, 1e-4), 1u);
}

// Softmax over [B*T, V] of an input viewed as [B, T, V], its max viewed
// back as [B, T, 1] (a Hugging Face loss): the row kernel looked the max up
// under the reshaped index, missed, and recomputed it per element (a loop
// over the whole row for every element: 110 ms for a Llama step's loss).
// One pass per reduction now, and the same numbers.
TEST(EmulatedKernelTest, ReshapedRowReductionIsNotRecomputed) {
  Fusion f;
  TensorView* x = defineTensor(f, {2, 8, 256}, DataType::Float);
  TensorView* x2 = reshape(x, {16, 256});
  TensorView* m =
      reshape(reduction(ReductionOpType::Max, x2, {1}, true), {2, 8, 1});
  TensorView* e =
      unaryOp(
          UnaryOpType::Exp,
          binaryOp(BinaryOpType::Sub, x, expand(m, {2, 8, 256}))->asTensor())
          ->asTensor();
  TensorView* e2 = reshape(e, {16, 256});
  TensorView* s = reduction(ReductionOpType::Sum, e2, {1}, true);
  f.addOutput(binaryOp(BinaryOpType::Div, e2, expand(s, {16, 256})));
  EXPECT_EQ(checkEmulated(f, {at::randn({2, 8, 256})}, 1e-5), 1u);
  KernelSource ks = generateKernel(f, "k", {});
  EXPECT_TRUE(ks.rowReduction);
  size_t loops = 0;  // the row loop only
  for (size_t p = ks.code.find("for (unsigned r"); p != std::string::npos;
       p = ks.code.find("for (unsigned r", p + 1)) {
    ++loops;
  }
  EXPECT_EQ(loops, 1u);
}

// A row-reduced value read at another row (sliced along the rows) is not a
// row kernel: the inner_persistent scheduler says why.
TEST(EmulatedKernelTest, RowReducedValueMovedAcrossRowsIsRejected) {
  Fusion f;
  TensorView* x = defineTensor(f, {16, 256}, DataType::Float);
  TensorView* m = reduction(ReductionOpType::Max, x, {1}, true);  // [16, 1]
  TensorView* shifted =
      pad(slice(m, {1, 0}, {16, 1}, {1, 1}), {0, 0, 0, 1}, nullptr);
  f.addOutput(binaryOp(BinaryOpType::Sub, x, expand(shifted, {16, 256})));
  Decision d = generatedKernelFits(f);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.reason().find("moves a row-reduced value across rows"),
            std::string::npos)
      << d.reason();
  EXPECT_GE(checkEmulated(f, {at::randn({16, 256})}), 1u);  // still right
}

// A full sum of 2^20 values was one block (one row): the splitter gives it
// 256 rows of 4096 first, then sums the partials; a max over the two inner
// dims of [2, 1024, 512] likewise (2 rows of 2^19).
TEST(EmulatedKernelTest, FewLongRowsAreSplit) {
  Fusion f;
  TensorView* x = defineTensor(f, {2, 1024, 512}, DataType::Float);
  f.addOutput(reduction(ReductionOpType::Sum, x, {}, false));
  Fusion g;
  TensorView* y = defineTensor(g, {2, 1024, 512}, DataType::Float);
  g.addOutput(reduction(ReductionOpType::Max, y, {1, 2}, true));
  at::Tensor a = at::randn({2, 1024, 512});
  EXPECT_EQ(checkEmulated(f, {a}, 1e-3, reductionSplitter()), 2u);
  EXPECT_EQ(checkEmulated(g, {a}, 0, reductionSplitter()), 2u);
  EXPECT_EQ(checkEmulated(f, {a}, 1e-3), 1u);  // without the split
}

namespace {
// sum over the first two dims of x * g, both Float [2, 2048, 64].
TensorView* productSum(Fusion& f, bool keepdim) {
  TensorView* x = defineTensor(f, {2, 2048, 64}, DataType::Float);
  TensorView* g = defineTensor(f, {2, 2048, 64}, DataType::Float);
  return reduction(ReductionOpType::Sum,
                   binaryOp(BinaryOpType::Mul, x, g)->asTensor(), {0, 1},
                   keepdim);
}
}  // namespace

// A sum over 2 x 2048 rows into 64 values with an epilogue: split into
// partial sums over 512 chunks (its own kernel) and the sum of the
// partials with the epilogue (another). Without the segmenter's split the
// reduction scheduler still refuses one serial kernel (64 values, each
// one thread's loop over 4096 rows): the sum is a segment of its own,
// which the generator splits, and the epilogue another.
TEST(EmulatedKernelTest, LongReductionWithEpilogueIsSplit) {
  Fusion f;
  TensorView* s = productSum(f, false);
  f.addOutput(castOp(unaryOp(UnaryOpType::Neg, s), DataType::Half));
  at::Tensor a = at::randn({2, 2048, 64});
  at::Tensor b = at::randn({2, 2048, 64});
  EXPECT_EQ(checkEmulated(f, {a, b}, 2e-3, reductionSplitter()), 2u);
  EXPECT_EQ(checkEmulated(f, {a, b}, 2e-3), 2u);  // without the split
}

// A norm's weight gradient: the same sum cast to half. One kernel splits
// the 2048 rows into chunks; several blocks per column add into the
// workspace and the last casts and writes (the emulator checks that it
// leaves the workspace zeroed).
TEST(EmulatedKernelTest, WeightGradientIsSplitInOneKernel) {
  Fusion f;
  f.addOutput(castOp(productSum(f, false), DataType::Half));
  KernelSource ks = generateKernel(f, "wgrad", {});
  EXPECT_GT(ks.workspaceBytes, 0);
  EXPECT_NE(ks.code.find("out0[col] = nvf_f2h(__ldcg(nvf_acc + col));"),
            std::string::npos);
  at::Tensor a = at::randn({2, 2048, 64});
  at::Tensor b = at::randn({2, 2048, 64});
  EXPECT_EQ(checkEmulated(f, {a, b}, 2e-3, reductionSplitter()), 1u);
  // As autograd writes it: a keepdim sum, cast, viewed as the weight.
  Fusion k;
  k.addOutput(
      reshape(castOp(productSum(k, true), DataType::Half)->asTensor(), {64}));
  EXPECT_GT(generateKernel(k, "wgrad", {}).workspaceBytes, 0);
  EXPECT_EQ(checkEmulated(k, {a, b}, 2e-3, reductionSplitter()), 1u);
}

// A norm backward's weight (and bias) gradient next to its input
// gradient: one row kernel that reads x and dy once (the column sums were
// a second kernel reading both again). Persistent rows, masked persistent
// rows (1000), rows a block loops over (8192), several row dims;
// the workspace is left zero (the emulator checks) and a second launch of
// the same kernel gives the same sums.
TEST(EmulatedKernelTest, NormBackwardColumnSumsInTheRowKernel) {
  struct Case {
    int64_t rows, cols;
    bool bias;
  };
  for (Case c : {Case{64, 256, false}, Case{40, 1000, true},
                 Case{9, 4096, true}, Case{6, 8192, false}}) {
    Fusion f;
    defineNormBackward(f, c.rows, c.cols, DataType::Float, c.bias);
    at::Tensor x = at::randn({c.rows, c.cols});
    at::Tensor rstd = at::rsqrt(x.pow(2).mean({1}, true) + 1e-6);
    std::vector<at::Tensor> in = {x, at::randn({c.cols}), rstd,
                                  at::randn({c.rows, c.cols})};
    EXPECT_EQ(checkEmulated(f, in, 1e-4), 1u) << c.cols;
    EXPECT_EQ(checkEmulated(f, in, 1e-4), 1u) << c.cols;
    KernelSource ks = generateKernel(f, "norm_bwd", {});
    EXPECT_TRUE(ks.rowReduction && ks.columnSums);
    EXPECT_GT(ks.workspaceBytes, c.cols * 4);
  }
}

// A layer norm backward: its second row sum reads x, mean and rstd, which
// the first does not, so those loads come before the first block
// reduction (codegen test LaterPassesLoadBeforeTheFirstBlockReduction).
// Persistent rows, and masked persistent rows (1000); bf16 outputs may
// differ by an ulp where the sums' order rounds them the other way.
TEST(EmulatedKernelTest, LayerNormBackwardLoadsEveryPassFirst) {
  for (int64_t cols : {1024, 1000}) {
    const int64_t rows = 24;
    Fusion f;
    defineLayerNormBackward(f, rows, cols);
    at::Tensor x = at::randn({rows, cols});
    at::Tensor mean = x.mean({1}, true);
    at::Tensor rstd = at::rsqrt(x.var({1}, false, true) + 1e-5);
    std::vector<at::Tensor> in = {
        x.to(at::kBFloat16), at::randn({rows, cols}).to(at::kBFloat16), mean,
        rstd, at::randn({cols}).to(at::kBFloat16)};
    EXPECT_EQ(checkEmulated(f, in, 1e-2), 1u) << cols;
    KernelSource ks = generateKernel(f, "ln_bwd", {});
    EXPECT_TRUE(ks.rowReduction && ks.columnSums);
  }
}

// A column sum of a value computed from the row's reductions (the column
// sums of softmax probabilities): the adds read the reduced values of the
// row they are in.
TEST(EmulatedKernelTest, ColumnSumOfARowNormalizedValue) {
  const int64_t rows = 24, cols = 640;
  Fusion f;
  TensorView* x = defineTensor(f, {rows, cols}, DataType::Float);
  TensorView* m = reduction(ReductionOpType::Max, x, {1}, true);
  TensorView* e =
      unaryOp(UnaryOpType::Exp, binaryOp(BinaryOpType::Sub, x, m))->asTensor();
  TensorView* s = reduction(ReductionOpType::Sum, e, {1}, true);
  TensorView* p = binaryOp(BinaryOpType::Div, e, s)->asTensor();
  f.addOutput(p);
  f.addOutput(
      castOp(reduction(ReductionOpType::Sum, p, {0}, false), DataType::Half));
  RowReductionPlan plan;
  ASSERT_TRUE(planRowReduction(f, &plan).ok());
  EXPECT_EQ(plan.columnSums.size(), 1u);
  EXPECT_EQ(checkEmulated(f, {at::randn({rows, cols}) * 3}, 1e-3), 1u);
}

// Column sums the row kernel cannot take say why (and run as kernels of
// their own): one read in the kernel, rows too long for shared memory.
TEST(EmulatedKernelTest, ColumnSumsTheRowKernelRefuses) {
  Fusion f;
  TensorView* x = defineTensor(f, {8, 256}, DataType::Float);
  TensorView* cs = reduction(ReductionOpType::Sum, x, {0}, true);  // [1, 256]
  TensorView* rs = reduction(ReductionOpType::Sum, x, {1}, true);  // [8, 1]
  f.addOutput(binaryOp(BinaryOpType::Add,
                       binaryOp(BinaryOpType::Mul, x, expand(rs, {8, 256})),
                       expand(cs, {8, 256})));
  RowReductionPlan plan;
  Decision d = planRowReduction(f, &plan);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.reason().find("is read in the kernel"), std::string::npos)
      << d.reason();
  EXPECT_GE(checkEmulated(f, {at::randn({8, 256})}, 1e-4), 2u);
  Fusion g;
  defineNormBackward(g, 4, 12288, DataType::Float, true);
  d = planRowReduction(g, &plan);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.reason().find("need 98304 bytes of shared memory"),
            std::string::npos)
      << d.reason();
}

TEST(EmulatedKernelTest, SmallConstantPowers) {
  Fusion f;
  TensorView* x = defineTensor(f, {4, 64}, DataType::Float);
  Val* acc = nullptr;
  for (double p : {2.0, 3.0, 0.5, -0.5, -1.0, -2.0, 1.7}) {
    Val* y =
        binaryOp(BinaryOpType::Pow, x, defineScalar(f, DataType::Double, p));
    acc = acc ? binaryOp(BinaryOpType::Add, acc, y) : y;
  }
  f.addOutput(acc);
  EXPECT_EQ(checkEmulated(f, {at::rand({4, 64}) + 0.5}, 1e-5), 1u);
}

// torch divides the squared deviations by max(0, n - correction): inf
// where they are not all 0, NaN where they are (a constant row), for a
// correction of n and beyond; never a negative variance.
TEST(EmulatedKernelTest, VarianceWithCorrectionAtLeastTheCountIsInfOrNan) {
  const int64_t rows = 4, cols = 8;
  at::Tensor x = at::randn({rows, cols});
  x[1].fill_(3.f);             // row 1 is constant
  x.select(1, 2).fill_(-1.f);  // and so is column 2
  for (int64_t axis : {0, 1}) {
    at::Tensor constant = (x.amax(axis) == x.amin(axis));
    at::Tensor want = at::where(constant, NAN, INFINITY).to(at::kFloat);
    for (int64_t correction : {axis == 0 ? rows : cols, int64_t(100)}) {
      Fusion f;
      TensorView* in = defineTensor(f, {rows, cols}, DataType::Float);
      f.addOutput(varMean(in, {axis}, correction, false).first);
      EmulatedRun run = runEmulatedAndAten(f, {x});
      EXPECT_GE(run.kernels, 1u);
      EXPECT_TRUE(sameValues(run.outs.at(0), want))
          << "kernel, axis " << axis << ", correction " << correction << "\n"
          << run.outs[0];
      EXPECT_TRUE(sameValues(run.ref.at(0), want))
          << "ATen, axis " << axis << ", correction " << correction << "\n"
          << run.ref[0];
    }
  }
}

namespace {
// Every (base, exponent) pair of the two lists, as two 1-D tensors.
std::pair<at::Tensor, at::Tensor> allPairs(const std::vector<int64_t>& xs,
                                           const std::vector<int64_t>& ys,
                                           at::ScalarType t) {
  std::vector<int64_t> a, b;
  for (int64_t x : xs) {
    for (int64_t y : ys) {
      a.push_back(x);
      b.push_back(y);
    }
  }
  return {at::tensor(a).to(t), at::tensor(b).to(t)};
}

// Outputs op(a, b) for each op, a and b 1-D inputs of `n` elements.
void defineBinaries(Fusion& f, DataType t, int64_t n,
                    const std::vector<BinaryOpType>& ops) {
  TensorView* a = defineTensor(f, {n}, t);
  TensorView* b = defineTensor(f, {n}, t);
  for (BinaryOpType op : ops) {
    f.addOutput(binaryOp(op, a, b));
  }
}
}  // namespace

// Integer pow squares (an exponent of 2^62 must not take 2^62 steps),
// wraps like torch and gives torch's results for negative exponents.
TEST(EmulatedKernelTest, IntegerPowMatchesTorch) {
  for (DataType t : {DataType::Int, DataType::Int32}) {
    const int64_t hi = t == DataType::Int ? INT64_MAX : INT32_MAX;
    const int64_t lo = t == DataType::Int ? INT64_MIN : INT32_MIN;
    auto [a, b] = allPairs(
        {0, 1, -1, 2, -2, 3, 7},
        {0, 1, 2, 3, 31, 62, 63, 64, -1, -2, -3, hi / 2, hi / 2 + 1, hi, lo},
        toAtenType(t));
    Fusion f;
    defineBinaries(f, t, a.numel(), {BinaryOpType::Pow});
    EmulatedRun run = runEmulatedAndAten(f, {a, b});
    ASSERT_EQ(run.atenError, "");
    EXPECT_EQ(run.kernels, 1u);
    EXPECT_TRUE(sameValues(run.outs.at(0), run.ref.at(0)))
        << toString(t) << "\nbases " << a << "\nexponents " << b << "\nkernel "
        << run.outs[0] << "\ntorch " << run.ref[0];
  }
}

// MIN / -1 wraps to MIN with remainder 0 in kernels and on the CPU path
// alike (x86 would raise SIGFPE); everything else is C's truncation and
// torch's fmod / remainder.
TEST(EmulatedKernelTest, IntegerDivisionOfMinByMinusOneWraps) {
  const std::vector<BinaryOpType> ops = {BinaryOpType::Div, BinaryOpType::Fmod,
                                         BinaryOpType::Remainder};
  for (DataType t : {DataType::Int, DataType::Int32}) {
    const int64_t hi = t == DataType::Int ? INT64_MAX : INT32_MAX;
    const int64_t lo = t == DataType::Int ? INT64_MIN : INT32_MIN;
    auto [a, b] = allPairs({lo, lo + 1, -7, -1, 0, 5, hi},
                           {lo, -7, -2, -1, 1, 3, hi}, toAtenType(t));
    Fusion f;
    defineBinaries(f, t, a.numel(), ops);
    EmulatedRun run = runEmulatedAndAten(f, {a, b});
    ASSERT_EQ(run.atenError, "");
    for (size_t k = 0; k < ops.size(); ++k) {
      EXPECT_TRUE(sameValues(run.outs.at(k), run.ref.at(k)))
          << toString(ops[k]) << " " << toString(t) << "\nkernel "
          << run.outs[k] << "\nATen " << run.ref[k];
    }
    // Pair 3 is lo and -1.
    EXPECT_EQ(run.ref[0][3].item<int64_t>(), lo);
    EXPECT_EQ(run.ref[1][3].item<int64_t>(), 0);
    EXPECT_EQ(run.ref[2][3].item<int64_t>(), 0);
  }
}

// A zero divisor: the CPU path raises ZeroDivisionError like torch; a
// kernel cannot raise and gives quotient -1 and remainder a.
TEST(EmulatedKernelTest, IntegerDivisionByZeroIsDefinedInKernels) {
  at::Tensor a = at::tensor(std::vector<int64_t>{INT64_MIN, -5, 0, 9});
  at::Tensor b = at::zeros({4}, at::kLong);
  Fusion f;
  defineBinaries(
      f, DataType::Int, 4,
      {BinaryOpType::Div, BinaryOpType::Fmod, BinaryOpType::Remainder});
  EmulatedRun run = runEmulatedAndAten(f, {a, b});
  EXPECT_NE(run.atenError.find("div: integer division by zero"),
            std::string::npos)
      << run.atenError;
  EXPECT_TRUE(sameValues(run.outs.at(0), at::full({4}, -1, at::kLong)));
  EXPECT_TRUE(sameValues(run.outs.at(1), a));
  EXPECT_TRUE(sameValues(run.outs.at(2), a));
}

TEST(EmulatedKernelTest, RandomFusions) {
  const char* env = std::getenv("NVFUSER_EMU_FUZZ_COUNT");
  const uint64_t count = env ? std::strtoull(env, nullptr, 10) : 20;
  for (uint64_t seed = 0; seed < count; ++seed) {
    FuzzOutcome o = runFuzzCase(seed, 14, false, false, true);
    EXPECT_TRUE(o.problems.empty())
        << "seed " << seed << ": " << o.problems.front() << "\n"
        << o.reproducer;
  }
}

}  // namespace nvfuser

namespace nvfuser {

// torch.compile passes constants as 0-dim CPU tensors: the kernel takes
// their value as a parameter (the device never reads host memory), in
// every dtype, Half and BFloat16 included.
TEST(EmulatedKernelTest, CpuScalarTensorsArePassedByValue) {
  for (at::ScalarType st :
       {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16, at::kLong}) {
    Fusion f;
    TensorView* x = defineTensor(f, {4, 8}, DataType::Float);
    TensorView* s =
        defineTensor(f, {}, fromAtenType(st), {}, {}, /*isCpuScalar=*/true);
    f.addOutput(binaryOp(BinaryOpType::Mul, x, s));
    at::Tensor scalar = at::scalar_tensor(2.5, at::TensorOptions().dtype(st));
    EXPECT_EQ(checkEmulated(f, {at::randn({4, 8}), scalar}), 1u)
        << at::toString(st);
  }
}

}  // namespace nvfuser

namespace nvfuser {

// A norm whose output is viewed as [tokens, hidden] for the next matmul
// (torch.compile regions of every decoder): the row kernel writes the
// reshape at its source's offsets. It used to run through ATen instead.
TEST(EmulatedKernelTest, RowKernelWritesReshapedOutputs) {
  Fusion f;
  TensorView* x = defineTensor(f, {2, 32, 64}, DataType::Float);
  TensorView* w = defineTensor(f, {64}, DataType::Float);
  TensorView* ms = reduction(ReductionOpType::Mean,
                             binaryOp(BinaryOpType::Mul, x, x)->asTensor(), {2},
                             /*keepdim=*/true);
  Val* r = unaryOp(
      UnaryOpType::Rsqrt,
      binaryOp(BinaryOpType::Add, ms, defineScalar(f, DataType::Double, 1e-6)));
  Val* y = binaryOp(BinaryOpType::Mul, binaryOp(BinaryOpType::Mul, x, r),
                    broadcast(w, {true, true, false}));
  f.addOutput(r);
  f.addOutput(reshape(y->asTensor(), {64, 64}));
  f.addOutput(reshape(y->asTensor(), {4, 16, 64}));
  EXPECT_EQ(checkEmulated(f, {at::randn({2, 32, 64}), at::randn({64})}), 1u);
}

// The emulator compiles each kernel into files under /tmp; it used to leave
// them there (a few thousand per test run).
TEST(EmulatedKernelTest, EmulatorLeavesNoFilesBehind) {
  auto probe = reinterpret_cast<int (*)()>(
      compileEmulated("extern \"C\" int nvf_emu_files_probe() { return 7; }\n",
                      "nvf_emu_files_probe"));
  EXPECT_EQ(probe(), 7);
  // Shared objects only: a kernel that failed to compile keeps its source
  // and log on purpose, and never had a shared object.
  const std::string ours = "_" + std::to_string(::getpid()) + ".so";
  for (const auto& entry : std::filesystem::directory_iterator("/tmp")) {
    const std::string name = entry.path().filename().string();
    EXPECT_FALSE(name.rfind("nvf_emu_", 0) == 0 &&
                 name.find(ours) != std::string::npos)
        << name;
  }
}

}  // namespace nvfuser
