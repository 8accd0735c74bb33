// index_select, gather and take_along_axis as generated kernels on the CPU
// emulator against ATen: every lookup dtype, Int and Int32 indices, every
// dim, 0-dim, 1-element and empty indices, broadcasting, the vector load of
// an embedding row and per-lane loads along the vector dim, out-of-range
// indices (0 in kernels, an IndexError from ATen on the CPU), and gathers
// inside row and serial reductions.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "emulated_run.h"
#include "ops/arith.h"
#include "ops/indexing_ops.h"
#include "ops/reduction_ops.h"
#include "ops/shape_ops.h"

namespace nvfuser {

namespace {
// A fusion segmented for its inputs, with the kernels it generates.
struct Segmented {
  ConcreteFusion concrete;
  std::unique_ptr<SegmentedRuntime> runtime;

  const std::string& code(size_t group) const {
    return runtime->kernels().at(group)->predictedSource().code;
  }
  std::vector<SchedulerType> schedulers() const {
    std::vector<SchedulerType> out;
    for (const SegmentedGroup& g : runtime->segmented().groups()) {
      out.push_back(g.scheduler);
    }
    return out;
  }
};

Segmented segment(Fusion& f, const std::vector<at::Tensor>& inputs) {
  std::vector<RuntimeArg> args;
  for (const at::Tensor& t : inputs) {
    args.push_back(RuntimeArg::fromTensor(t));
  }
  Segmented s;
  s.concrete = concretize(f, describeArgs(f, args));
  s.runtime = std::make_unique<SegmentedRuntime>(
      segmentFusion(*s.concrete.fusion, Options()), args, Options());
  return s;
}

// Kernels and ATen give the same values (exactly: a gather moves values);
// returns how many groups were generated kernels.
size_t expectSameAsAten(Fusion& f, const std::vector<at::Tensor>& inputs,
                        const std::string& what) {
  EmulatedRun run = runEmulatedAndAten(f, inputs);
  EXPECT_EQ(run.atenError, "") << what;
  EXPECT_EQ(run.outs.size(), run.ref.size()) << what;
  for (size_t k = 0; k < run.outs.size() && k < run.ref.size(); ++k) {
    EXPECT_TRUE(sameValues(run.outs[k], run.ref[k]))
        << what << ", output " << k << "\nkernel " << run.outs[k] << "\nATen "
        << run.ref[k];
  }
  return run.kernels;
}

at::Tensor lookupValues(std::vector<int64_t> shape, at::ScalarType t) {
  at::manual_seed(1);
  if (t == at::kBool) {
    return at::rand(shape) > 0.5;
  }
  if (at::isFloatingType(t)) {
    return at::randn(shape).to(t);
  }
  return at::randint(-1000, 1000, shape, at::TensorOptions().dtype(t));
}

TensorView* gatherOf(GatherOpType op, TensorView* x, TensorView* i,
                     int64_t dim) {
  return gatherOp(op, x, i, dim);
}
}  // namespace

// One fusion per dtype pair, one output per dim: horizontal fusion makes
// them one kernel (one host compile instead of four).
TEST(EmulatedIndexingTest, IndexSelectOfEveryDtypeAlongEveryDim) {
  for (at::ScalarType t :
       {at::kFloat, at::kBFloat16, at::kHalf, at::kLong, at::kInt, at::kBool}) {
    for (at::ScalarType it : {at::kLong, at::kInt}) {
      Fusion f;
      TensorView* x = defineTensor(f, {5, 6, 8}, fromAtenType(t));
      // 8 indices: along the innermost dim the lanes differ (one load per
      // lane); along the others each output vector is one row.
      TensorView* i = defineTensor(f, {8}, fromAtenType(it));
      for (int64_t dim : {0, 1, -1}) {
        f.addOutput(indexSelect(x, i, dim));
      }
      at::Tensor iv =
          at::tensor(std::vector<int64_t>{4, 0, 2, 2, 1, 3, 4, 0}).to(it);
      const std::string what =
          std::string(at::toString(t)) + " index " + at::toString(it);
      EXPECT_EQ(expectSameAsAten(f, {lookupValues({5, 6, 8}, t), iv}, what), 1u)
          << what;
    }
  }
}

// The embedding shape: one index per row of the output, so each output
// vector is one vector load of a weight row, whatever the weight's layout.
TEST(EmulatedIndexingTest, EmbeddingRowsAreVectorLoads) {
  const int64_t V = 64, H = 32;
  Fusion f;
  TensorView* w = defineTensor(f, {V, H}, DataType::Float,
                               std::vector<std::optional<bool>>(2, false));
  TensorView* ids = defineTensor(f, {2, 8}, DataType::Int);
  TensorView* e = reshape(indexSelect(w, reshape(ids, {16}), 0), {2, 8, H});
  f.addOutput(
      binaryOp(BinaryOpType::Mul, e, defineScalar(f, DataType::Double, 0.5)));
  at::Tensor idv = at::randint(0, V, {2, 8}, at::kLong);
  at::Tensor dense = at::randn({V, H});
  Segmented s = segment(f, {dense, idv});
  EXPECT_NE(s.code(0).find("nvf_vload(v"), std::string::npos) << s.code(0);
  EXPECT_NE(s.code(0).find(" < 64) {"), std::string::npos) << s.code(0);
  at::Tensor buf = at::randn({V * H + 1});
  at::Tensor misaligned = buf.narrow(0, 1, V * H).view({V, H});
  at::Tensor transposed = at::randn({H, V}).t();
  for (const at::Tensor& wv : {dense, misaligned, transposed}) {
    EXPECT_EQ(expectSameAsAten(f, {wv, idv}, "embedding"), 1u);
  }
}

// Along the vector's own dim each lane has its index: one load per lane.
TEST(EmulatedIndexingTest, GatherAlongTheVectorDimLoadsEachLane) {
  Fusion f;
  TensorView* x = defineTensor(f, {8, 16}, DataType::Float);
  TensorView* i = defineTensor(f, {8, 16}, DataType::Int32);
  f.addOutput(gather(x, i, 1));
  std::vector<at::Tensor> in = {at::randn({8, 16}),
                                at::randint(0, 16, {8, 16}, at::kInt)};
  Segmented s = segment(f, in);
  EXPECT_NE(s.code(0).find("[u] = ok ? "), std::string::npos) << s.code(0);
  EXPECT_NE(s.code(0).find("nvf_vstore("), std::string::npos) << s.code(0);
  EXPECT_EQ(expectSameAsAten(f, in, "gather dim 1"), 1u);
}

TEST(EmulatedIndexingTest, GatherWithSmallerAndLargerIndices) {
  for (int64_t dim : {0, 1}) {
    Fusion f;
    TensorView* x = defineTensor(f, {-1, -1}, DataType::BFloat16);
    TensorView* i = defineTensor(f, {-1, -1}, DataType::Int);
    f.addOutput(gather(x, i, dim));
    const std::vector<int64_t> ishape =
        dim == 0 ? std::vector<int64_t>{12, 5} : std::vector<int64_t>{4, 40};
    at::Tensor iv = at::randint(0, dim == 0 ? 8 : 16, ishape, at::kLong);
    EXPECT_EQ(expectSameAsAten(f, {lookupValues({8, 16}, at::kBFloat16), iv},
                               "gather dim " + std::to_string(dim)),
              1u);
  }
}

TEST(EmulatedIndexingTest, TakeAlongAxisBroadcastsEitherSide) {
  struct Case {
    std::vector<int64_t> x, i;
    int64_t dim;
  };
  for (const Case& c :
       {Case{{6, 10}, {6, 1}, 1}, Case{{6, 10}, {1, 4}, 1},
        Case{{1, 10}, {6, 4}, -1}, Case{{4, 1, 8}, {4, 3, 8}, 2},
        Case{{4, 7, 8}, {1, 2, 8}, 1},
        // One index per row: each row a vector load.
        Case{{8, 16}, {4, 1}, 0}}) {
    Fusion f;
    std::vector<int64_t> xs, is;
    for (int64_t d : c.x) {
      xs.push_back(d == 1 ? 1 : -1);
    }
    for (int64_t d : c.i) {
      is.push_back(d == 1 ? 1 : -1);
    }
    TensorView* x = defineTensor(f, xs, DataType::Float);
    TensorView* i = defineTensor(f, is, DataType::Int);
    f.addOutput(takeAlongAxis(x, i, c.dim));
    const int64_t n = c.x[size_t(c.dim < 0 ? c.dim + 2 : c.dim)];
    EXPECT_EQ(
        expectSameAsAten(f, {at::randn(c.x), at::randint(0, n, c.i, at::kLong)},
                         "take_along_axis"),
        1u);
  }
}

TEST(EmulatedIndexingTest, ZeroDimOneElementAndEmptyIndices) {
  at::Tensor x = at::randn({6, 8});
  for (const at::Tensor& iv :
       {at::scalar_tensor(3, at::kLong), at::tensor({5}, at::kLong),
        at::zeros({0}, at::kLong)}) {
    for (int64_t dim : {0, 1}) {
      // A 0-dim index also as a CPU scalar (torch.compile's constants):
      // the kernel takes its value as a parameter.
      for (bool cpuScalar : {false, true}) {
        if (cpuScalar && iv.dim() != 0) {
          continue;
        }
        Fusion f;
        TensorView* xt = defineTensor(f, {-1, -1}, DataType::Float);
        std::vector<int64_t> shape(size_t(iv.dim()), -1);
        TensorView* it =
            defineTensor(f, shape, DataType::Int, {}, {}, cpuScalar);
        f.addOutput(unaryOp(UnaryOpType::Neg, indexSelect(xt, it, dim)));
        expectSameAsAten(f, {x, iv},
                         "index of " + std::to_string(iv.numel()) +
                             (cpuScalar ? " (CPU scalar)" : ""));
      }
    }
  }
}

// Kernels cannot raise: an index outside [0, size) gives 0. ATen on the
// CPU raises IndexError, as torch does.
TEST(EmulatedIndexingTest, OutOfRangeIndicesGiveZeroInKernels) {
  const std::vector<int64_t> bad = {0, -1, 6, 5, int64_t(1) << 40, 2};
  for (GatherOpType op : {GatherOpType::IndexSelect, GatherOpType::Gather,
                          GatherOpType::TakeAlongAxis}) {
    for (at::ScalarType t : {at::kFloat, at::kBFloat16, at::kBool}) {
      Fusion f;
      TensorView* x = defineTensor(f, {4, 6}, fromAtenType(t));
      const bool oneD = op == GatherOpType::IndexSelect;
      TensorView* i = defineTensor(
          f, oneD ? std::vector<int64_t>{6} : std::vector<int64_t>{4, 6},
          DataType::Int);
      f.addOutput(gatherOf(op, x, i, 1));
      at::Tensor xv = lookupValues({4, 6}, t);
      at::Tensor iv = at::tensor(bad, at::kLong);
      if (!oneD) {
        iv = iv.expand({4, 6}).contiguous();
      }
      EmulatedRun run = runEmulatedAndAten(f, {xv, iv});
      const std::string what =
          std::string(toString(op)) + " " + at::toString(t);
      EXPECT_NE(run.atenError.find(std::string(toString(op)) +
                                   ": index -1 is out of range for dim 1"),
                std::string::npos)
          << what << ": " << run.atenError;
      at::Tensor valid = (iv >= 0) & (iv < 6);
      at::Tensor safe = at::where(valid, iv, at::zeros_like(iv));
      at::Tensor want = oneD ? xv.index_select(1, safe) : xv.gather(1, safe);
      want = at::where(oneD ? valid.unsqueeze(0) : valid, want,
                       at::zeros_like(want));
      ASSERT_EQ(run.outs.size(), 1u);
      EXPECT_TRUE(sameValues(run.outs[0], want))
          << what << "\nkernel " << run.outs[0] << "\nwant " << want;
    }
  }
}

// A kernel cannot raise: an index out of range sets the kernel's index
// error word (the runtime raises IndexError from it), in the embedding's
// one-index-per-vector path and the per-lane path alike; indices in range
// leave it 0.
TEST(EmulatedIndexingTest, OutOfRangeIndicesSetTheIndexErrorWord) {
  for (GatherOpType op : {GatherOpType::IndexSelect, GatherOpType::Gather}) {
    Fusion f;
    TensorView* x = defineTensor(f, {4, 8}, DataType::Float);
    const bool rows = op == GatherOpType::IndexSelect;
    TensorView* i = defineTensor(
        f, rows ? std::vector<int64_t>{3} : std::vector<int64_t>{4, 8},
        DataType::Int);
    f.addOutput(gatherOf(op, x, i, rows ? 0 : 1));
    KernelSource ks = generateKernel(f, "k", {});
    ASSERT_TRUE(ks.reportsIndexErrors);
    EXPECT_NE(ks.code.find("int* __restrict__ nvf_index_error"),
              std::string::npos);
    at::Tensor xv = at::randn({4, 8});
    for (int64_t bad : {int64_t(0), int64_t(-1), int64_t(4), int64_t(9)}) {
      at::Tensor iv = rows ? at::tensor({int64_t(1), bad, int64_t(2)})
                           : at::full({4, 8}, bad, at::kLong);
      const int64_t size = rows ? 4 : 8;
      int word = -1;
      KernelEmulator::run(
          ks, {RuntimeArg::fromTensor(xv), RuntimeArg::fromTensor(iv)}, &word);
      EXPECT_EQ(word, bad >= 0 && bad < size ? 0 : 1)
          << toString(op) << " index " << bad;
    }
  }
  // A fusion without gathers takes no word.
  Fusion f;
  TensorView* x = defineTensor(f, {4, 8}, DataType::Float);
  f.addOutput(unaryOp(UnaryOpType::Exp, x)->asTensor());
  EXPECT_FALSE(generateKernel(f, "k", {}).reportsIndexErrors);
}

// An embedding followed by an RMS norm: one row kernel.
TEST(EmulatedIndexingTest, EmbeddingAndRmsNormAreOneRowKernel) {
  const int64_t V = 50, H = 64;
  Fusion f;
  TensorView* w = defineTensor(f, {V, H}, DataType::BFloat16);
  TensorView* g = defineTensor(f, {H}, DataType::BFloat16);
  TensorView* ids = defineTensor(f, {2, 16}, DataType::Int);
  TensorView* e =
      castOp(reshape(indexSelect(w, reshape(ids, {32}), 0), {2, 16, H}),
             DataType::Float)
          ->asTensor();
  TensorView* ms = reduction(ReductionOpType::Mean,
                             binaryOp(BinaryOpType::Mul, e, e)->asTensor(), {2},
                             /*keepdim=*/true);
  Val* r = unaryOp(
      UnaryOpType::Rsqrt,
      binaryOp(BinaryOpType::Add, ms, defineScalar(f, DataType::Double, 1e-6)));
  Val* y = binaryOp(BinaryOpType::Mul, binaryOp(BinaryOpType::Mul, e, r),
                    broadcast(g, {true, true, false}));
  f.addOutput(castOp(y, DataType::BFloat16));
  std::vector<at::Tensor> in = {at::randn({V, H}).to(at::kBFloat16),
                                at::randn({H}).to(at::kBFloat16),
                                at::randint(0, V, {2, 16}, at::kLong)};
  Segmented s = segment(f, in);
  EXPECT_EQ(s.schedulers(),
            std::vector<SchedulerType>{SchedulerType::InnerPersistent});
  EmulatedRun run = runEmulatedAndAten(f, in);
  EXPECT_EQ(run.kernels, 1u);
  at::Tensor a = run.outs.at(0).to(at::kFloat);
  at::Tensor b = run.ref.at(0).to(at::kFloat);
  EXPECT_TRUE(at::allclose(a, b, 1e-2, 1e-2))
      << (a - b).abs().max().item<float>();
}

// A sum over the tokens of gathered rows: the gather inside a serial
// reduction loop, and inside the chunks of a split sum (many rows into few
// values); and an index computed by a row reduction.
TEST(EmulatedIndexingTest, GathersInsideReductions) {
  {
    Fusion f;
    TensorView* w = defineTensor(f, {100, 64}, DataType::Float);
    TensorView* ids = defineTensor(f, {4096}, DataType::Int);
    f.addOutput(
        reduction(ReductionOpType::Sum, indexSelect(w, ids, 0), {0}, false));
    std::vector<at::Tensor> in = {at::randn({100, 64}),
                                  at::randint(0, 100, {4096}, at::kLong)};
    Segmented s = segment(f, in);
    EXPECT_GT(s.runtime->kernels().at(0)->predictedSource().workspaceBytes, 0)
        << s.code(0);
    EmulatedRun run = runEmulatedAndAten(f, in);
    EXPECT_EQ(run.kernels, 1u);
    EXPECT_TRUE(at::allclose(run.outs.at(0), run.ref.at(0), 1e-4, 1e-4));
  }
  {
    Fusion f;
    TensorView* w = defineTensor(f, {30, 16}, DataType::Float);
    TensorView* ids = defineTensor(f, {40}, DataType::Int);
    f.addOutput(
        reduction(ReductionOpType::Sum, indexSelect(w, ids, 0), {0}, false));
    std::vector<at::Tensor> in = {at::randn({30, 16}),
                                  at::randint(0, 30, {40}, at::kLong)};
    EmulatedRun run = runEmulatedAndAten(f, in);
    EXPECT_EQ(run.kernels, 1u);
    EXPECT_TRUE(at::allclose(run.outs.at(0), run.ref.at(0), 1e-5, 1e-5));
  }
  {
    Fusion f;
    TensorView* x = defineTensor(f, {6, 8}, DataType::Int);
    TensorView* w = defineTensor(f, {40, 8}, DataType::Float);
    TensorView* k = reduction(ReductionOpType::Sum, x, {1}, false);
    TensorView* rows = indexSelect(w, k, 0);
    f.addOutput(binaryOp(BinaryOpType::Add, rows, castOp(x, DataType::Float)));
    std::vector<at::Tensor> in = {at::randint(0, 5, {6, 8}, at::kLong),
                                  at::randn({40, 8})};
    EXPECT_GE(expectSameAsAten(f, in, "index from a row sum"), 1u);
  }
}

// nvFuser's test_gather shape: the lookup is computed, so one kernel
// writes it and the next gathers from it.
TEST(EmulatedIndexingTest, AComputedLookupIsGatheredByTheNextKernel) {
  Fusion f;
  TensorView* a = defineTensor(f, {8, 16}, DataType::Float);
  TensorView* b = defineTensor(f, {8, 16}, DataType::Float);
  TensorView* i = defineTensor(f, {4, 4}, DataType::Int);
  f.addOutput(gather(binaryOp(BinaryOpType::Add, a, b)->asTensor(), i, 0));
  std::vector<at::Tensor> in = {at::randn({8, 16}), at::randn({8, 16}),
                                at::randint(0, 8, {4, 4}, at::kLong)};
  EXPECT_EQ(segment(f, in).schedulers(),
            (std::vector<SchedulerType>{SchedulerType::PointWise,
                                        SchedulerType::PointWise}));
  EXPECT_EQ(expectSameAsAten(f, in, "computed lookup"), 2u);
}

}  // namespace nvfuser
