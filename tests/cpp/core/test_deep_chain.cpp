// Fusions far deeper than any real model: nothing on the way from a
// definition to a kernel may recurse once per op (a chain of ~4,500 ops
// overflowed the generator's stack).
#include <gtest/gtest.h>

#include "analysis/tensor_shape.h"
#include "codegen/kernel_codegen.h"
#include "ir/python_printer.h"
#include "ops/arith.h"
#include "ops/concretize.h"
#include "segmenter/segment_candidate_finder.h"
#include "segmenter/segment_extractor.h"

namespace nvfuser {

namespace {
constexpr int kChainOps = 100000;

// x -> neg -> (+ x) -> sin -> (* x) ... : every op reads the previous one,
// and every fourth also reads the input, so the chain is one loop domain.
std::unique_ptr<Fusion> deepChain(int ops, bool symbolic) {
  auto f = std::make_unique<Fusion>();
  TensorView* x = defineTensor(
      *f, symbolic ? std::vector<int64_t>{-1, -1} : std::vector<int64_t>{4, 8},
      DataType::Float);
  Val* v = x;
  for (int i = 0; i < ops; ++i) {
    switch (i % 4) {
      case 0:
        v = unaryOp(UnaryOpType::Neg, v);
        break;
      case 1:
        v = binaryOp(BinaryOpType::Add, v, x);
        break;
      case 2:
        v = unaryOp(UnaryOpType::Sin, v);
        break;
      default:
        v = castOp(castOp(v, DataType::Half), DataType::Float);
    }
  }
  f->addOutput(v);
  return f;
}

InputDescriptor floatInput(std::vector<int64_t> sizes) {
  InputDescriptor d;
  d.dtype = DataType::Float;
  d.strides = denseStrides(sizes);
  d.sizes = std::move(sizes);
  return d;
}
}  // namespace

TEST(DeepChainTest, PrintsConcretizesSegmentsAndGenerates) {
  std::unique_ptr<Fusion> f = deepChain(kChainOps, /*symbolic=*/true);
  EXPECT_GT(f->toString().size(), size_t(kChainOps));
  EXPECT_GT(fusionToPython(*f).size(), size_t(kChainOps));
  ConcreteFusion c = concretize(*f, {floatInput({4, 8})});
  auto sf = segmentFusion(*c.fusion, Options());
  ASSERT_EQ(sf->groups().size(), 1u);
  EXPECT_GT(sf->toString().size(), size_t(kChainOps));
  ExtractedSegment seg = extractSegment(sf->groups()[0]);
  KernelSource ks = generateKernel(*seg.fusion, "deep", {}, {});
  EXPECT_GT(ks.code.size(), size_t(kChainOps));
}

// A scalar computed by a chain as long as the fusion, read by one tensor
// op: extraction replicates the whole chain into the segment.
TEST(DeepChainTest, ExtractsDeepScalarChains) {
  Fusion f;
  TensorView* x = defineTensor(f, {4, 8}, DataType::Float);
  Val* s = defineScalar(f, DataType::Double, std::nullopt);
  for (int i = 0; i < kChainOps; ++i) {
    s = binaryOp(i % 2 ? BinaryOpType::Add : BinaryOpType::Mul, s,
                 defineScalar(f, DataType::Double, 1.5));
  }
  f.addOutput(binaryOp(BinaryOpType::Add, x, s));
  auto sf = segmentFusion(f, Options());
  ASSERT_EQ(sf->groups().size(), 1u);
  ExtractedSegment seg = extractSegment(sf->groups()[0]);
  EXPECT_EQ(seg.inputs.size(), 2u);  // x and the scalar input
  EXPECT_EQ(seg.fusion->exprs().size(), size_t(kChainOps) + 1);
}

}  // namespace nvfuser
