// Complex dtypes in the core: torch's promotion rules, the builders'
// output types and refusals (TypeError naming the op), complex constants
// in printed text, and the schedulers' decision: every op on complex values
// is a one-op expr_eval segment, never forwarded, and the pointwise
// scheduler says why not. Their values: tests/python/test_complex.py.
#include <gtest/gtest.h>

#include <complex>
#include <limits>
#include <string>
#include <vector>

#include "ir/python_printer.h"
#include "ops/arith.h"
#include "ops/concretize.h"
#include "ops/reduction_ops.h"
#include "ops_test_utils.h"
#include "scheduler/expr_eval_scheduler.h"
#include "scheduler/pointwise_scheduler.h"
#include "segment_test_utils.h"

namespace nvfuser {

using V = std::vector<std::string>;

TEST(ComplexTest, PromotionFollowsTorch) {
  const DataType cf = DataType::ComplexFloat;
  const DataType cd = DataType::ComplexDouble;
  EXPECT_EQ(promoteTypes(cf, DataType::Double), cd);  // torch.promote_types
  EXPECT_EQ(promoteTypes(DataType::Double, cf), cd);
  EXPECT_EQ(promoteTypes(cf, DataType::Half), cf);
  EXPECT_EQ(promoteTypes(cf, DataType::BFloat16), cf);
  EXPECT_EQ(promoteTypes(cf, DataType::Int), cf);
  EXPECT_EQ(promoteTypes(cf, DataType::Bool), cf);
  EXPECT_EQ(promoteTypes(cf, cd), cd);
  EXPECT_EQ(complexTypeOf(DataType::Double), cd);
  EXPECT_EQ(complexTypeOf(DataType::Int32), cf);
  EXPECT_EQ(realTypeOf(cd), DataType::Double);
  EXPECT_EQ(realTypeOf(DataType::Half), DataType::Half);

  // A complex Python scalar gives the tensor's complex type.
  Fusion f;
  Scalar* c = defineScalar(f, cd, ScalarValue(std::complex<double>(1, 2)));
  for (auto [tensor, want] :
       std::vector<std::pair<DataType, DataType>>{{DataType::Float, cf},
                                                  {DataType::Double, cd},
                                                  {DataType::Int, cf},
                                                  {DataType::Bool, cf},
                                                  {DataType::BFloat16, cf},
                                                  {cf, cf}}) {
    TensorView* t = defineTensor(f, {4}, tensor);
    EXPECT_EQ(binaryOp(BinaryOpType::Mul, t, c)->dtype(), want)
        << toString(tensor);
  }
  // A real scalar keeps a complex tensor's type.
  TensorView* z = defineTensor(f, {4}, cf);
  EXPECT_EQ(binaryOp(BinaryOpType::Add, z,
                     defineScalar(f, DataType::Double, ScalarValue(2.5)))
                ->dtype(),
            cf);
}

TEST(ComplexTest, OutputTypesAndRefusals) {
  Fusion f;
  TensorView* z = defineTensor(f, {4}, DataType::ComplexDouble);
  TensorView* r = defineTensor(f, {4}, DataType::Float);
  EXPECT_EQ(unaryOp(UnaryOpType::Abs, z)->dtype(), DataType::Double);
  EXPECT_EQ(unaryOp(UnaryOpType::Real, z)->dtype(), DataType::Double);
  EXPECT_EQ(unaryOp(UnaryOpType::Imag, z)->dtype(), DataType::Double);
  EXPECT_EQ(unaryOp(UnaryOpType::IsReal, z)->dtype(), DataType::Bool);
  EXPECT_EQ(unaryOp(UnaryOpType::Exp, z)->dtype(), DataType::ComplexDouble);
  EXPECT_EQ(binaryOp(BinaryOpType::Eq, z, r)->dtype(), DataType::Bool);
  EXPECT_EQ(reduction(ReductionOpType::Mean, z, {0}, false)->dtype(),
            DataType::ComplexDouble);
  // real of a real value is a copy (nvFuser), imag of one an error.
  EXPECT_EQ(unaryOp(UnaryOpType::Real, r)->definition()->opName(), "set");
  EXPECT_EQ(unaryOp(UnaryOpType::IsReal, r)->dtype(), DataType::Bool);

  ErrorKind kind = ErrorKind::Value;
  EXPECT_NE(errorOf([&] { unaryOp(UnaryOpType::Imag, r); }, &kind)
                .find("imag: operand must be complex, got Float"),
            std::string::npos);
  EXPECT_EQ(kind, ErrorKind::Type);
  for (UnaryOpType op : {UnaryOpType::Floor, UnaryOpType::Erf,
                         UnaryOpType::Signbit, UnaryOpType::Lgamma}) {
    kind = ErrorKind::Value;
    EXPECT_NE(errorOf([&] { unaryOp(op, z); }, &kind)
                  .find(std::string(toString(op)) +
                        ": complex operands are not supported"),
              std::string::npos);
    EXPECT_EQ(kind, ErrorKind::Type);
  }
  for (BinaryOpType op : {BinaryOpType::Lt, BinaryOpType::Maximum,
                          BinaryOpType::Fmod, BinaryOpType::Atan2}) {
    EXPECT_NE(errorOf([&] { binaryOp(op, z, r); }, &kind)
                  .find(std::string(toString(op)) +
                        ": complex operands are not supported"),
              std::string::npos);
  }
  EXPECT_ERROR_CONTAINS(
      reduction(ReductionOpType::Max, z, {0}, false),
      "max: complex operands are not supported (complex values have no "
      "order)");
  EXPECT_ERROR_CONTAINS(
      defineScalar(f, DataType::Float, ScalarValue(std::complex<double>(0, 1))),
      "define_scalar: Float scalars take a Python int or float, got "
      "complex(0.0, 1.0)");
}

TEST(ComplexTest, ConstantsPrintSoPythonReadsThemBack) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(scalarValueToString(std::complex<double>(0.1, -2.0)),
            "complex(0.1, -2.0)");
  EXPECT_EQ(scalarValueToString(std::complex<double>(1.0 / 3, 1e-300)),
            "complex(0.3333333333333333, 1e-300)");
  EXPECT_EQ(scalarValueToString(std::complex<double>(nan, -0.0)),
            "complex(float('nan'), -0.0)");
  EXPECT_EQ(roundTripDouble(-std::numeric_limits<double>::infinity()), "-inf");
  Fusion f;
  TensorView* z = defineTensor(f, {-1}, DataType::ComplexFloat);
  f.addOutput(
      binaryOp(BinaryOpType::Mul, z,
               defineScalar(f, DataType::ComplexDouble,
                            ScalarValue(std::complex<double>(0.5, 0.25))))
          ->asTensor());
  const std::string text = fusionToPython(f);
  EXPECT_NE(text.find("dtype=DataType.ComplexFloat"), std::string::npos);
  EXPECT_NE(text.find("fd.ops.mul(t0, complex(0.5, 0.25))"), std::string::npos)
      << text;
}

TEST(ComplexTest, EachComplexOpIsAnExprEvalSegment) {
  Fusion f;
  TensorView* z = defineTensor(f, {-1, -1}, DataType::ComplexFloat);
  TensorView* r = defineTensor(f, {-1, -1}, DataType::Float);
  Val* e = unaryOp(UnaryOpType::Exp, binaryOp(BinaryOpType::Mul, z, r));
  Val* m = unaryOp(UnaryOpType::Abs, e);
  f.addOutput(
      unaryOp(UnaryOpType::Sin, binaryOp(BinaryOpType::Mul, m, r))->asTensor());
  ConcreteFusion c =
      concretize(f, {inputDescriptor({4, 8}, DataType::ComplexFloat),
                     inputDescriptor({4, 8}, DataType::Float)});
  for (ForwardingPolicy p :
       {ForwardingPolicy::Off, ForwardingPolicy::Extended}) {
    auto sf = segmentFusion(*c.fusion, policyOptions(p));
    EXPECT_EQ(describe(*sf), (V{"expr_eval: mul", "expr_eval: exp",
                                "expr_eval: abs", "pointwise: mul sin"}))
        << ::testing::PrintToString(describe(*sf));
  }
  // The decision, asked directly: the pointwise scheduler says why not.
  Fusion g;
  TensorView* x = defineTensor(g, {4}, DataType::ComplexFloat);
  g.addOutput(unaryOp(UnaryOpType::Neg, x)->asTensor());
  Decision pw = PointWiseScheduler().canSchedule(wholeView(g));
  EXPECT_FALSE(pw.ok());
  EXPECT_NE(pw.reason().find("has ComplexFloat values (no generated kernel "
                             "type)"),
            std::string::npos)
      << pw.reason();
  EXPECT_TRUE(ExprEvalScheduler().canSchedule(wholeView(g)).ok());
}

}  // namespace nvfuser
