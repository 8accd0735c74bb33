// Reductions in generated kernels: each thread loops over the reduced dims
// of its own output elements. Every kernel here compiles with NVRTC.
#include <gtest/gtest.h>

#include "codegen/kernel_codegen.h"
#include "compiler/nvrtc_compiler.h"
#include "norm_fusions.h"
#include "ops/arith.h"
#include "ops/reduction_ops.h"
#include "ops/shape_ops.h"
#include "scheduler/generated_kernel_rules.h"
#include "segment_test_utils.h"

namespace nvfuser {

namespace {
KernelSource compile(const Fusion& f) {
  Decision d = generatedKernelFits(f);
  EXPECT_TRUE(d.ok()) << d.reason();
  KernelSource ks = generateKernel(f, "k", {});
  EXPECT_GT(compileWithNvrtc(ks.code, ks.name, "sm_90").cubin.size(), 0u);
  return ks;
}

}  // namespace

TEST(ReductionCodegenTest, MiddleAxisSumLoopsInsideTheThread) {
  Fusion f;
  TensorView* x = defineTensor(f, {2, 8, 4, 16, 64}, DataType::BFloat16);
  TensorView* s = reduction(ReductionOpType::Sum, x, {2}, false);
  f.addOutput(castOp(s, DataType::BFloat16));
  KernelSource ks = compile(f);
  EXPECT_EQ(ks.families[0].numel, 2 * 8 * 16 * 64);
  EXPECT_EQ(ks.families[0].vectorWidth, 8);  // along the kept innermost dim
  EXPECT_EQ(countOf(ks.code, "< 4; ++r"), 1u);
  EXPECT_EQ(vectorLoads(ks.code), 1u);  // inside the loop
}

TEST(ReductionCodegenTest, EveryReductionKindCompiles) {
  for (ReductionOpType op :
       {ReductionOpType::Sum, ReductionOpType::Max, ReductionOpType::Min,
        ReductionOpType::Prod, ReductionOpType::Mean}) {
    Fusion f;
    TensorView* x = defineTensor(f, {6, 5, 8}, DataType::Float);
    TensorView* i = defineTensor(f, {6, 8}, DataType::Int32);
    f.addOutput(reduction(op, x, {0, 1}, false));
    if (op != ReductionOpType::Mean) {
      f.addOutput(reduction(op, i, {0}, true));
    }
    KernelSource ks = compile(f);
    EXPECT_NE(ks.code.find("for (unsigned r"), std::string::npos);
  }
}

TEST(ReductionCodegenTest, VarMeanIsTwoPass) {
  Fusion f;
  TensorView* x = defineTensor(f, {32, 16}, DataType::Half);
  auto [var, mean] = varMean(x, {0}, 1, false);
  f.addOutput(var);
  f.addOutput(mean);
  KernelSource ks = compile(f);
  // mean, then deviations (each lane of a slot's group taking every K-th row)
  EXPECT_EQ(countOf(ks.code, " < 32; "), 2u);
  EXPECT_NE(ks.code.find("/ (float)31"), std::string::npos);
}

TEST(ReductionCodegenTest, RowReductionUsesOneBlockPerRow) {
  Fusion f;
  TensorView* x = defineTensor(f, {16, 4096}, DataType::BFloat16);
  f.addOutput(reduction(ReductionOpType::Sum, x, {1}, false));
  KernelSource ks = compile(f);
  EXPECT_TRUE(ks.rowReduction);
  EXPECT_EQ(ks.slots, 16);
  // 512 vectors of 8 lanes: 4 per thread in registers, 128 threads.
  EXPECT_EQ(ks.block, 128);
  EXPECT_NE(ks.code.find("k3 = threadIdx.x * 8 + 3072;"), std::string::npos);
  EXPECT_EQ(vectorLoads(ks.code), 4u);
  // One block reduction, the row's first: it waits for the buffer.
  EXPECT_EQ(countOf(ks.code, "nvf_block_reduce<true>("), 1u);
  EXPECT_EQ(countOf(ks.code, "nvf_block_reduce<false>("), 0u);
  LaunchParams lp = computeLaunchParams(ks, 132, 4);
  EXPECT_EQ(lp.grid, 16);
  EXPECT_EQ(lp.block, 128);
  // More rows than one wave holds: still a block per row.
  KernelSource many = ks;
  many.slots = 16384;
  EXPECT_EQ(computeLaunchParams(many, 132, 4).grid, 16384);
}

TEST(ReductionCodegenTest, LongRowsLoopInsteadOfStayingInRegisters) {
  Fusion f;
  TensorView* x = defineTensor(f, {4, 65536}, DataType::BFloat16);
  TensorView* m = reduction(ReductionOpType::Max, x, {1}, false);
  f.addOutput(binaryOp(BinaryOpType::Sub, x,
                       expand(broadcast(m, {false, true}), {4, 65536})));
  KernelSource ks = compile(f);
  EXPECT_TRUE(ks.rowReduction);
  EXPECT_EQ(ks.block, 512);
  EXPECT_EQ(ks.code.find("const bool active"), std::string::npos);
  EXPECT_EQ(countOf(ks.code, "k += blockDim.x * 4"), 2u);  // pass, outputs
}

// softmax, RMS norm and layer norm: reductions broadcast back over the row.
TEST(ReductionCodegenTest, NormalizationsAreRowKernels) {
  const int64_t R = 8, K = 1024;
  auto full = [&](TensorView* t) {
    return expand(broadcast(t, {false, true}), {R, K});
  };
  Fusion softmax;
  defineSoftmax(softmax, R, K);
  KernelSource ks = compile(softmax);
  EXPECT_TRUE(ks.rowReduction);
  // max, then sum: the second uses the other buffer and needs no barrier
  // before its write.
  EXPECT_EQ(countOf(ks.code, "nvf_block_reduce<true>("), 1u);
  EXPECT_NE(ks.code.find("nvf_block_reduce<false>(v"), std::string::npos);
  EXPECT_NE(ks.code.find("reinterpret_cast<float*>(nvf_smem + 32))"),
            std::string::npos);
  EXPECT_EQ(countOf(ks.code, "; ++r"), 0u);  // no serial reduction loop
  Fusion layerNorm;
  {
    TensorView* x = defineTensor(layerNorm, {R, K}, DataType::BFloat16);
    auto [var, mean] = varMean(x, {1}, 0, false);
    TensorView* centred =
        binaryOp(BinaryOpType::Sub, x, full(mean))->asTensor();
    TensorView* inv = unaryOp(UnaryOpType::Rsqrt, var)->asTensor();
    layerNorm.addOutput(castOp(binaryOp(BinaryOpType::Mul, centred, full(inv)),
                               DataType::BFloat16));
    layerNorm.addOutput(mean);
  }
  ks = compile(layerNorm);
  EXPECT_EQ(countOf(ks.code, "nvf_block_reduce<true>("), 1u);   // sum
  EXPECT_EQ(countOf(ks.code, "nvf_block_reduce<false>("), 1u);  // squares
  EXPECT_NE(ks.code.find("out1[row] ="), std::string::npos);
  Fusion rms;
  {
    TensorView* x = defineTensor(rms, {R, K}, DataType::Half);
    TensorView* w = defineTensor(rms, {K}, DataType::Half);
    TensorView* sq = binaryOp(BinaryOpType::Mul, x, x)->asTensor();
    TensorView* ms = reduction(ReductionOpType::Mean, sq, {1}, false);
    TensorView* inv = unaryOp(UnaryOpType::Rsqrt, ms)->asTensor();
    TensorView* y = binaryOp(BinaryOpType::Mul, x, full(inv))->asTensor();
    rms.addOutput(castOp(binaryOp(BinaryOpType::Mul, y,
                                  expand(broadcast(w, {true, false}), {R, K})),
                         DataType::Half));
  }
  ks = compile(rms);
  // x is loaded once and kept in registers for the output; w once. Row
  // kernels load through L1 (skipping it made RMS norm slower).
  EXPECT_EQ(countOf(ks.code, "nvf_vload(v"), 2u);
  // 128 threads x 8 lanes cover the row exactly: no masked vectors.
  EXPECT_EQ(ks.code.find("const bool active"), std::string::npos);
}

TEST(ReductionCodegenTest, PersistentRowsMaskOnlyVectorsPastTheRowEnd) {
  // 1000 floats: 250 vectors of 4 lanes over 128 threads, 2 each; the
  // first vector of every thread is inside the row, the second is not
  // for threads 122..127.
  Fusion f;
  TensorView* x = defineTensor(f, {8, 1000}, DataType::Float);
  TensorView* m = reduction(ReductionOpType::Max, x, {1}, false);
  f.addOutput(binaryOp(BinaryOpType::Sub, x,
                       expand(broadcast(m, {false, true}), {8, 1000})));
  KernelSource ks = compile(f);
  EXPECT_EQ(ks.block, 128);
  EXPECT_EQ(ks.code.find("const bool active0"), std::string::npos);
  EXPECT_NE(ks.code.find("const bool active1 = k1 < 1000;"), std::string::npos);
}

TEST(ReductionCodegenTest, RowReductionsOfDifferentLayoutsAreRejected) {
  Fusion f;
  TensorView* x = defineTensor(f, {16, 64}, DataType::Float);
  TensorView* y = defineTensor(f, {8, 32}, DataType::Float);
  f.addOutput(reduction(ReductionOpType::Sum, x, {1}, false));
  f.addOutput(reduction(ReductionOpType::Sum, y, {1}, false));
  Decision d = generatedKernelFits(f);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.reason().find("row reductions of different layouts"),
            std::string::npos);
}

TEST(ReductionCodegenTest, BroadcastBackOnlyForSmallReductions) {
  auto build = [](Fusion& f, int64_t r) {
    TensorView* x = defineTensor(f, {r, 64}, DataType::Float);
    TensorView* m = reduction(ReductionOpType::Max, x, {0}, true);
    f.addOutput(binaryOp(BinaryOpType::Sub, x, expand(m, {r, -1})));
  };
  Fusion small;
  build(small, 8);  // recomputing 8 elements per output is cheap
  compile(small);
  Fusion large;
  build(large, 1024);
  Decision d = generatedKernelFits(large);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.reason().find("broadcasts a reduction of 1024"),
            std::string::npos);
}

TEST(ReductionCodegenTest, ReducedValuesFeedACat) {
  // The LitGPT backward pattern: GQA sums concatenated with a pass-through.
  Fusion f;
  TensorView* g = defineTensor(f, {2, 4, 3, 64}, DataType::Float);
  TensorView* q = defineTensor(f, {2, 4, 64}, DataType::Float);
  TensorView* s = reduction(ReductionOpType::Sum, g, {2}, false);
  f.addOutput(cat({q, s}, 2));
  KernelSource ks = compile(f);
  EXPECT_EQ(ks.families.size(), 1u);
  EXPECT_EQ(countOf(ks.code, "< 3; ++r"), 1u);
}

TEST(ReductionCodegenTest, ColumnSumWithFewColumnsIsSplit) {
  Fusion f;
  TensorView* x = defineTensor(f, {65536, 1024}, DataType::BFloat16);
  f.addOutput(reduction(ReductionOpType::Sum, x, {0}, false));
  KernelSource ks = compile(f);
  // 1024 float accumulators, then 4 counters (one per column of tiles).
  EXPECT_EQ(ks.workspaceBytes, 1024 * 4 + 4 * 4);
  EXPECT_TRUE(ks.blockPerSlot);
  EXPECT_EQ(ks.families[0].vectorWidth, 8);  // 16-byte loads of bf16
  // 1024 chunks of 64 rows, 128 vectors: tiles of 32 vectors x 8 threads
  // per vector, one block each, combined in shared memory. The 1024 threads
  // of a vector take the rows in turns, the grid walking them together.
  EXPECT_EQ(ks.slots, 4 * 128);
  EXPECT_EQ(ks.block, 256);
  EXPECT_NE(ks.code.find("nvf_rb = (tile / 4) * 8 + threadIdx.x / 32;"),
            std::string::npos);
  EXPECT_NE(ks.code.find("r1 = nvf_rb; r1 < 65536; r1 += 1024"),
            std::string::npos)
      << ks.code;
  EXPECT_NE(ks.code.find("nvf_vload_stream(v2, in0 + (r1 * 1024 + i0));"),
            std::string::npos);
  // One add per element and tile, one count per tile; the 128th tile of a
  // column writes it out.
  EXPECT_NE(ks.code.find("atomicAdd(nvf_acc + col, s)"), std::string::npos);
  EXPECT_NE(ks.code.find("atomicAdd(nvf_count + (tile % 4), 1u) == 127u"),
            std::string::npos);
  EXPECT_EQ(countOf(ks.code, "atomicAdd("), 2u);
  EXPECT_NE(ks.code.find("out0[col] = __ldcg(nvf_acc + col);"),
            std::string::npos);
  LaunchParams lp = computeLaunchParams(ks, 132, 8);
  EXPECT_EQ(lp.grid, 512);
  EXPECT_EQ(lp.block, 256);
  // Enough columns, or a max instead of a sum: no split.
  Fusion g;
  TensorView* y = defineTensor(g, {64, 1 << 20}, DataType::Float);
  g.addOutput(reduction(ReductionOpType::Sum, y, {0}, false));
  EXPECT_EQ(compile(g).workspaceBytes, 0);
  Fusion h;
  TensorView* z = defineTensor(h, {65536, 1024}, DataType::Float);
  h.addOutput(reduction(ReductionOpType::Max, z, {0}, false));
  EXPECT_EQ(compile(h).workspaceBytes, 0);
}

// A split sum's loads skip L1 only for inputs it reads once per element:
// x, not the per-column scale every row reads again.
TEST(ReductionCodegenTest, SplitSumStreamsOnlyInputsReadOnce) {
  Fusion f;
  TensorView* x = defineTensor(f, {65536, 1024}, DataType::BFloat16);
  TensorView* w = defineTensor(f, {1024}, DataType::BFloat16);
  TensorView* p = binaryOp(BinaryOpType::Mul, x,
                           expand(broadcast(w, {true, false}), {65536, 1024}))
                      ->asTensor();
  f.addOutput(reduction(ReductionOpType::Sum, p, {0}, false));
  KernelSource ks = compile(f);
  EXPECT_GT(ks.workspaceBytes, 0);
  EXPECT_EQ(countOf(ks.code, "nvf_vload_stream(v"), 1u);
  EXPECT_EQ(countOf(ks.code, "nvf_vload(v"), 1u);
  // The streamed load moves with the row, w's load does not.
  const size_t streamed = ks.code.find("nvf_vload_stream(v");
  EXPECT_EQ(ks.code.substr(ks.code.find(',', streamed), 8), ", in0 + ");
  EXPECT_NE(ks.code.find(" * 1024 + i0));", streamed), std::string::npos);
  const size_t plain = ks.code.find("nvf_vload(v");
  EXPECT_EQ(ks.code.substr(ks.code.find(',', plain), 9), ", in1 + i")
      << ks.code.substr(plain, 40);
}

// RMSNorm and LayerNorm backward (bf16, as autograd writes them): one row
// kernel computes dx and adds the weight (and bias) gradient's columns on
// the side, in shared memory laid out lane-major (no bank conflicts), then
// four floats per atomic on sm_90; NVRTC compiles it for sm_90 and sm_80.
// Launched as one wave of kColumnSumBlocksPerSm blocks per SM at most.
TEST(ReductionCodegenTest, NormBackwardSumsColumnsInTheRowKernel) {
  for (bool bias : {false, true}) {
    Fusion f;
    defineNormBackward(f, 16384, 4096, DataType::BFloat16, bias);
    auto sf = segmentFusion(f, Options());
    ASSERT_EQ(sf->groups().size(), 1u)
        << ::testing::PrintToString(describe(*sf));
    EXPECT_EQ(sf->groups()[0].scheduler, SchedulerType::InnerPersistent);
    KernelSource ks = generateKernel(f, "norm_bwd", {});
    EXPECT_TRUE(ks.rowReduction && ks.columnSums);
    EXPECT_EQ(ks.workspaceBytes, (bias ? 2 : 1) * 4096 * 4 + 4);
    EXPECT_NE(ks.code.find("nvf_csum0[512 + k0 / 8] += "), std::string::npos)
        << ks.code;
    EXPECT_NE(ks.code.find("atomicAdd(reinterpret_cast<float4*>(nvf_acc0 + "
                           "c), make_float4("),
              std::string::npos);
    // x, dy and w once each: one vector of 8 per thread, 512 threads.
    EXPECT_EQ(countOf(ks.code, "nvf_vload(v"), 3u);
    EXPECT_EQ(ks.block, 512);
    for (const char* arch : {"sm_90", "sm_80"}) {
      EXPECT_GT(compileWithNvrtc(ks.code, ks.name, arch).cubin.size(), 0u)
          << arch;
    }
    if (bias) {  // rows a block loops over: shared, lane-major partials
      Fusion g;
      defineNormBackward(g, 64, 8192, DataType::Float, false);
      KernelSource loop = generateKernel(g, "norm_bwd", {});
      EXPECT_NE(loop.code.find("nvf_csum0[2048 + k / 4] += "),
                std::string::npos)
          << loop.code;
      for (const char* arch : {"sm_90", "sm_80"}) {
        EXPECT_GT(compileWithNvrtc(loop.code, loop.name, arch).cubin.size(), 0u)
            << arch;
      }
    }
    LaunchParams p = computeLaunchParams(ks, 132, 16);
    EXPECT_EQ(p.grid, 132 * kColumnSumBlocksPerSm);
    EXPECT_EQ(computeLaunchParams(ks, 132, 1).grid, 132);
  }
}

// A persistent row kernel issues the loads of its later passes before its
// first block reduction (a layer norm backward read x only after the sum
// of dy * w: each row waited for a barrier and then for memory, 180 -> 160
// us on an H100). Kernels whose later passes read nothing new keep their
// code, loads only the outputs read included (a layer norm forward's
// weight loaded early took 123 registers).
TEST(ReductionCodegenTest, LaterPassesLoadBeforeTheFirstBlockReduction) {
  Fusion f;
  defineLayerNormBackward(f, 16384, 4096);
  KernelCodegenOptions late;
  late.earlyLoads = false;
  KernelSource early = generateKernel(f, "ln_bwd", {});
  KernelSource where = generateKernel(f, "ln_bwd", {}, late);
  ASSERT_TRUE(early.rowReduction && early.columnSums);
  auto before = [](const std::string& code, const std::string& what) {
    const size_t at = code.find(what);
    EXPECT_NE(at, std::string::npos) << what;
    return at < code.find("nvf_block_reduce<true>(");
  };
  for (const char* load :
       {"in0 + (o0 * 4096 + k0)", "= in2[o0];", "= in3[o0];"}) {
    EXPECT_TRUE(before(early.code, load)) << load << "\n" << early.code;
    EXPECT_FALSE(before(where.code, load)) << load << "\n" << where.code;
  }
  EXPECT_GT(compileWithNvrtc(early.code, early.name, "sm_90").cubin.size(), 0u);
  Fusion softmax, rms;
  defineSoftmax(softmax, 16384, 4096);
  {
    TensorView* x = defineTensor(rms, {64, 4096}, DataType::BFloat16);
    TensorView* w = defineTensor(rms, {4096}, DataType::BFloat16);
    TensorView* xf = castOp(x, DataType::Float)->asTensor();
    TensorView* ms =
        reduction(ReductionOpType::Mean,
                  binaryOp(BinaryOpType::Mul, xf, xf)->asTensor(), {1}, true);
    TensorView* y =
        binaryOp(BinaryOpType::Mul, xf, unaryOp(UnaryOpType::Rsqrt, ms))
            ->asTensor();
    rms.addOutput(
        castOp(binaryOp(BinaryOpType::Mul, y,
                        castOp(expand(broadcast(w, {true, false}), {64, 4096}),
                               DataType::Float)),
               DataType::BFloat16));
  }
  for (const Fusion* same : {&softmax, &rms}) {
    EXPECT_EQ(generateKernel(*same, "k", {}).code,
              generateKernel(*same, "k", {}, late).code);
  }
}

}  // namespace nvfuser
