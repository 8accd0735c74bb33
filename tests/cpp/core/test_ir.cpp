#include <gtest/gtest.h>

#include <set>
#include <string>

#include "exceptions.h"
#include "ir/exprs.h"
#include "ir/fusion.h"
#include "ops/arith.h"
#include "ops/shape_ops.h"

namespace nvfuser {

TEST(IrTest, DefineTensorDomains) {
  Fusion f;
  TensorView* t = defineTensor(f, {-1, 1, 8}, DataType::Half);
  ASSERT_EQ(t->nDims(), 3);
  EXPECT_FALSE(t->axis(0).extent.isConst());
  EXPECT_TRUE(t->axis(1).isBroadcast());
  EXPECT_EQ(t->axis(2).extent.value, 8);
  EXPECT_TRUE(f.isInput(t));
  EXPECT_EQ(t->toString(), "T0_g_half[iS{i0}, bS{1}, iS{8}]");
}

TEST(IrTest, PrinterShowsExpandedBroadcast) {
  Fusion f;
  TensorView* t = defineTensor(f, {1, 4}, DataType::Float);
  TensorView* e = expand(t, {8, -1});
  f.addOutput(e);
  EXPECT_EQ(e->toString(), "T1_g_float[bS{1 ex 8}, iS{4}]");
  std::string ir = f.toString();
  EXPECT_NE(ir.find("= expand(T0, shape=[8, -1])"), std::string::npos) << ir;
}

TEST(IrTest, UsesAndDefinitions) {
  Fusion f;
  TensorView* a = defineTensor(f, {-1}, DataType::Float);
  Val* b = unaryOp(UnaryOpType::Exp, a);
  Val* c = binaryOp(BinaryOpType::Add, a, b);
  f.addOutput(c);
  EXPECT_EQ(a->uses().size(), 2u);
  EXPECT_EQ(b->definition()->opName(), "exp");
  EXPECT_EQ(c->definition()->inputs()[1], b);
  EXPECT_EQ(f.liveExprs().size(), 2u);
}

TEST(IrTest, LiveExprsSkipDeadCode) {
  Fusion f;
  TensorView* a = defineTensor(f, {-1}, DataType::Float);
  unaryOp(UnaryOpType::Sin, a);  // dead
  Val* c = unaryOp(UnaryOpType::Cos, a);
  f.addOutput(c);
  ASSERT_EQ(f.liveExprs().size(), 1u);
  EXPECT_EQ(f.liveExprs()[0]->opName(), "cos");
}

TEST(IrTest, SymbolUnification) {
  Fusion f;
  TensorView* a = defineTensor(f, {-1, -1}, DataType::Float);
  TensorView* b = defineTensor(f, {-1, 4}, DataType::Float);
  Val* c = binaryOp(BinaryOpType::Mul, a, b);
  // a's dims unify with b's: dim 0 symbols merge, dim 1 becomes constant 4.
  EXPECT_EQ(f.canonical(a->axis(0).extent), f.canonical(b->axis(0).extent));
  EXPECT_EQ(f.canonical(a->axis(1).extent), Extent::constant(4));
  EXPECT_EQ(c->asTensor()->axis(1).extent.value, 4);
}

TEST(IrTest, ScalarPrinting) {
  Fusion f;
  Scalar* s = defineScalar(f, DataType::Double, ScalarValue(2.5));
  Scalar* in = defineScalar(f, DataType::Int, std::nullopt);
  EXPECT_EQ(s->ref(), "2.5");
  EXPECT_EQ(in->ref(), "s1");
  EXPECT_TRUE(f.isInput(in));
  EXPECT_FALSE(f.isInput(s));
}

// Membership is a flag on the val, so it must answer for this fusion only.
TEST(IrTest, InputAndOutputMembership) {
  Fusion f, other;
  TensorView* a = defineTensor(f, {4}, DataType::Float);
  Val* b = unaryOp(UnaryOpType::Neg, a);
  TensorView* x = defineTensor(other, {4}, DataType::Float);
  EXPECT_TRUE(f.isInput(a));
  EXPECT_FALSE(f.isOutput(a));
  EXPECT_FALSE(f.isOutput(b));
  f.addOutput(b);
  f.addOutput(a);  // an input may also be an output
  EXPECT_TRUE(f.isOutput(b));
  EXPECT_TRUE(f.isOutput(a));
  EXPECT_FALSE(f.isInput(b));
  EXPECT_FALSE(f.isInput(x));
  EXPECT_TRUE(other.isInput(x));
  EXPECT_FALSE(other.isInput(a));
  EXPECT_FALSE(other.isOutput(b));
}

// The printer and the Python bindings name ops by these strings: every op
// type has its own.
TEST(IrTest, EveryOpTypeHasItsOwnName) {
  std::set<std::string> unary;
  for (int u = 0; u <= static_cast<int>(UnaryOpType::IsReal); ++u) {
    const std::string name = toString(static_cast<UnaryOpType>(u));
    EXPECT_NE(name, "?") << u;
    EXPECT_TRUE(unary.insert(name).second) << name;
  }
  std::set<std::string> binary;
  for (int b = 0; b <= static_cast<int>(BinaryOpType::LogicalRightShift); ++b) {
    const std::string name = toString(static_cast<BinaryOpType>(b));
    EXPECT_NE(name, "?") << b;
    EXPECT_TRUE(binary.insert(name).second) << name;
  }
}

}  // namespace nvfuser
