// Input validation and concretization against actual sizes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "analysis/tensor_shape.h"
#include "exceptions.h"
#include "ir/exprs.h"
#include "ops/arith.h"
#include "ops/concretize.h"
#include "ops/reduction_ops.h"
#include "ops/shape_ops.h"
#include "options.h"
#include "scheduler/reduction_split.h"

namespace nvfuser {

namespace {
InputDescriptor tensorArg(DataType t, std::vector<int64_t> sizes,
                          std::vector<int64_t> strides = {}) {
  InputDescriptor d;
  d.dtype = t;
  d.sizes = sizes;
  if (strides.empty()) {
    int64_t s = 1;
    strides.resize(sizes.size());
    for (size_t i = sizes.size(); i-- > 0;) {
      strides[i] = s;
      s *= sizes[i];
    }
  }
  d.strides = strides;
  return d;
}

std::string errorOf(const Fusion& f, const std::vector<InputDescriptor>& in) {
  try {
    concretize(f, in);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// a[-1, -1] + b[1, -1] -> reshape to [-1]
struct Example {
  Fusion f;
  Example() {
    TensorView* a = defineTensor(f, {-1, -1}, DataType::Float);
    TensorView* b = defineTensor(f, {1, -1}, DataType::Float);
    Val* c = binaryOp(BinaryOpType::Add, a, b);
    f.addOutput(reshape(c->asTensor(), {-1}));
  }
};
}  // namespace

TEST(ConcretizeTest, ConcreteShapesAfterReplay) {
  Example ex;
  ConcreteFusion c = concretize(ex.f, {tensorArg(DataType::Float, {3, 5}),
                                       tensorArg(DataType::Float, {1, 5})});
  const TensorView* out = c.outputs[0]->asTensor();
  ASSERT_EQ(out->nDims(), 1);
  EXPECT_EQ(out->axis(0).extent, Extent::constant(15));
  EXPECT_EQ(c.fusion->liveExprs().size(), 2u);
}

TEST(ConcretizeTest, ErrorsNameInputAndDim) {
  Example ex;
  EXPECT_NE(errorOf(ex.f, {tensorArg(DataType::Float, {3, 5})})
                .find("the fusion has 2 inputs but 1 were given"),
            std::string::npos);
  EXPECT_NE(errorOf(ex.f, {tensorArg(DataType::Float, {3, 5}),
                           tensorArg(DataType::Float, {2, 5})})
                .find("input 1 (T1) dim 0 was defined as a broadcast dim"),
            std::string::npos);
  EXPECT_NE(errorOf(ex.f, {tensorArg(DataType::Float, {3, 5}),
                           tensorArg(DataType::Float, {1, 4})})
                .find("input 1 (T1) dim 1 has size 4 but input 0 (T0) dim 1 "
                      "has size 5"),
            std::string::npos);
  EXPECT_NE(errorOf(ex.f, {tensorArg(DataType::Half, {3, 5}),
                           tensorArg(DataType::Float, {1, 5})})
                .find("defined with dtype Float but the tensor has dtype Half"),
            std::string::npos);
  EXPECT_NE(errorOf(ex.f, {tensorArg(DataType::Float, {3, 5, 1}),
                           tensorArg(DataType::Float, {1, 5})})
                .find("defined with rank 2 but the tensor has rank 3"),
            std::string::npos);
}

TEST(ConcretizeTest, ContiguityChecked) {
  Example ex;
  // A transposed [3, 5] tensor: strides (1, 3).
  std::string msg = errorOf(ex.f, {tensorArg(DataType::Float, {3, 5}, {1, 3}),
                                   tensorArg(DataType::Float, {1, 5})});
  EXPECT_NE(msg.find("input 0 (T0) is not contiguous as declared"),
            std::string::npos)
      << msg;
  Fusion f;
  TensorView* a =
      defineTensor(f, {-1, -1}, DataType::Float, {false, false}, {});
  f.addOutput(set(a));
  EXPECT_EQ(errorOf(f, {tensorArg(DataType::Float, {3, 5}, {1, 3})}), "");
}

TEST(ConcretizeTest, SliceOutOfRangeAtConcretization) {
  Fusion f;
  TensorView* a = defineTensor(f, {-1}, DataType::Float);
  f.addOutput(slice(a, {2}, {10}, {}));
  EXPECT_EQ(errorOf(f, {tensorArg(DataType::Float, {12})}), "");
  EXPECT_NE(errorOf(f, {tensorArg(DataType::Float, {8})})
                .find("slice: end 10 at dim 0 is out of range"),
            std::string::npos);
}

// The FX backend asks the compiler whether to dump instead of splitting
// NVFUSER_DUMP itself (it missed " fx_partition" after a comma).
TEST(OptionsTest, DumpEnabledParsesLikeTheCompiler) {
  setenv("NVFUSER_DUMP", "segmented_fusion, fx_partition", 1);
  EXPECT_TRUE(Options::dumpEnabled("fx_partition"));
  EXPECT_FALSE(Options::dumpEnabled("cuda_kernel"));
  ErrorKind kind = ErrorKind::Internal;
  try {
    Options::dumpEnabled("fx_partitions");
  } catch (const Error& e) {
    kind = e.kind();
  }
  EXPECT_EQ(kind, ErrorKind::Value);
  unsetenv("NVFUSER_DUMP");
  EXPECT_FALSE(Options::dumpEnabled("fx_partition"));
}

TEST(OptionsTest, UnknownOptionListsValidOnes) {
  try {
    Options::parseList(OptionGroup::Disable, "input_forwarding,inptu_fwd");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("NVFUSER_DISABLE: unknown option 'inptu_fwd'"),
              std::string::npos);
    EXPECT_NE(msg.find("input_forwarding"), std::string::npos);
  }
  auto list = Options::parseList(OptionGroup::Dump, " segmented_fusion , ");
  ASSERT_EQ(list.size(), 1u);
  list = Options::parseList(OptionGroup::Dump, "cuda_kernel,\n\tfx_partition");
  EXPECT_EQ(list, (std::vector<std::string>{"cuda_kernel", "fx_partition"}));
  Options o = Options().withOverrides({}, {"input_forwarding"});
  EXPECT_TRUE(o.disabled("input_forwarding"));
  EXPECT_FALSE(o.disabled("extended_input_forwarding"));
}

namespace {
std::string opNames(const Fusion& f) {
  std::string s;
  for (const Expr* e : f.exprs()) {
    s += (s.empty() ? "" : " ") + e->opName();
  }
  return s;
}
}  // namespace

// The runtime's reduction split, applied while concretizing.
TEST(ConcretizeTest, LongReductionWithEpilogueIsSplit) {
  Fusion f;
  TensorView* x = defineTensor(f, {-1, -1, 64}, DataType::Float);
  TensorView* s = reduction(ReductionOpType::Sum, x, {0, 1}, false);
  f.addOutput(castOp(unaryOp(UnaryOpType::Neg, s), DataType::Half));
  ConcreteFusion c = concretize(f, {tensorArg(DataType::Float, {4, 4096, 64})},
                                reductionSplitter());
  EXPECT_EQ(opNames(*c.fusion), "reshape sum segment_set sum neg cast");
  // The partials: 512 chunks of 32 rows (at least 32 rows per chunk).
  const auto* partial = c.fusion->exprs()[1]->output(0)->asTensor();
  EXPECT_EQ(concreteShape(partial), (std::vector<int64_t>{512, 64}));
  // Short reductions, many outputs, or a lone sum into an output: as is.
  ConcreteFusion shortRows = concretize(
      f, {tensorArg(DataType::Float, {2, 64, 64})}, reductionSplitter());
  EXPECT_EQ(opNames(*shortRows.fusion), "sum neg cast");
  Fusion g;
  TensorView* y = defineTensor(g, {-1, -1}, DataType::Float);
  g.addOutput(reduction(ReductionOpType::Sum, y, {0}, false));
  ConcreteFusion lone = concretize(g, {tensorArg(DataType::Float, {65536, 64})},
                                   reductionSplitter());
  EXPECT_EQ(opNames(*lone.fusion), "sum");
  // Cast into an output: still lone (the kernel generator splits it).
  Fusion h;
  TensorView* z = defineTensor(h, {-1, -1, 64}, DataType::Float);
  h.addOutput(castOp(reduction(ReductionOpType::Sum, z, {0, 1}, false),
                     DataType::Half));
  ConcreteFusion cast = concretize(
      h, {tensorArg(DataType::Float, {4, 4096, 64})}, reductionSplitter());
  EXPECT_EQ(opNames(*cast.fusion), "sum cast");
}

}  // namespace nvfuser
