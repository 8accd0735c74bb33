// Shape and dtype inference of the builders, and their error messages.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "exceptions.h"
#include "ir/exprs.h"
#include "ir/fusion.h"
#include "ops/arith.h"
#include "ops/reduction_ops.h"
#include "ops/shape_ops.h"
#include "ops_test_utils.h"

namespace nvfuser {

TEST(OpsTest, HalfArithmeticReturnsFloat) {
  Fusion f;
  TensorView* a = defineTensor(f, {-1}, DataType::Half);
  TensorView* b = defineTensor(f, {-1}, DataType::BFloat16);
  EXPECT_EQ(binaryOp(BinaryOpType::Add, a, a)->dtype(), DataType::Float);
  EXPECT_EQ(binaryOp(BinaryOpType::Mul, a, b)->dtype(), DataType::Float);
  EXPECT_EQ(unaryOp(UnaryOpType::Exp, a)->dtype(), DataType::Float);
  EXPECT_EQ(unaryOp(UnaryOpType::Neg, b)->dtype(), DataType::Float);
  EXPECT_EQ(binaryOp(BinaryOpType::Lt, a, a)->dtype(), DataType::Bool);
  EXPECT_EQ(castOp(a, DataType::BFloat16)->dtype(), DataType::BFloat16);
  EXPECT_EQ(where(binaryOp(BinaryOpType::Lt, a, a), a, a)->dtype(),
            DataType::Half);
}

TEST(OpsTest, ScalarsOnlyRaiseTheCategory) {
  Fusion f;
  TensorView* i = defineTensor(f, {-1}, DataType::Int32);
  TensorView* h = defineTensor(f, {-1}, DataType::Half);
  Scalar* d = defineScalar(f, DataType::Double, ScalarValue(2.0));
  Scalar* n = defineScalar(f, DataType::Int, ScalarValue(int64_t(2)));
  EXPECT_EQ(binaryOp(BinaryOpType::Add, i, n)->dtype(), DataType::Int32);
  EXPECT_EQ(binaryOp(BinaryOpType::Add, i, d)->dtype(), DataType::Float);
  EXPECT_EQ(binaryOp(BinaryOpType::Mul, h, d)->dtype(), DataType::Float);
  EXPECT_EQ(unaryOp(UnaryOpType::Sqrt, i)->dtype(), DataType::Float);
  EXPECT_FALSE(binaryOp(BinaryOpType::Add, d, n)->isTensor());
}

TEST(OpsTest, ImplicitRankBroadcast) {
  Fusion f;
  TensorView* a = defineTensor(f, {-1, -1, 4}, DataType::Float);
  TensorView* b = defineTensor(f, {4}, DataType::Float);
  Val* c = binaryOp(BinaryOpType::Add, a, b);
  EXPECT_EQ(c->asTensor()->nDims(), 3);
  EXPECT_EQ(c->definition()->input(1)->definition()->opName(), "broadcast");
}

TEST(OpsTest, BroadcastMismatchNamesOperands) {
  Fusion f;
  TensorView* a = defineTensor(f, {4, 8}, DataType::Float);
  TensorView* b = defineTensor(f, {4, 6}, DataType::Float);
  EXPECT_ERROR_CONTAINS(binaryOp(BinaryOpType::Add, a, b),
                        "add: operands T0 [4, 8] Float and T1 [4, 6] Float "
                        "have incompatible sizes at dim 1 (8 vs 6)");
}

TEST(OpsTest, BroadcastInDimAndExpand) {
  Fusion f;
  TensorView* cos = defineTensor(f, {-1, 64}, DataType::BFloat16);
  TensorView* e = broadcastInDim(cos, {2, 8, 128, 64}, {2, 3});
  EXPECT_EQ(staticShape(e), (std::vector<int64_t>{2, 8, 128, 64}));
  EXPECT_TRUE(e->axis(0).hasExpanded);
  EXPECT_EQ(e->definition()->opName(), "expand");
  EXPECT_ERROR_CONTAINS(broadcastInDim(cos, {2, 128, 64}, {0}),
                        "broadcast_dims has 1 entries but the input");
  EXPECT_ERROR_CONTAINS(broadcastInDim(cos, {2, 128, 64}, {2, 1}),
                        "strictly increasing");
  EXPECT_ERROR_CONTAINS(broadcastInDim(cos, {2, 128, 32}, {1, 2}),
                        "cannot be broadcast to 32");
  EXPECT_ERROR_CONTAINS(expand(cos, {-1, 128}), "cannot be expanded to 128");
}

TEST(OpsTest, ReshapeInfersAndValidates) {
  Fusion f;
  TensorView* a = defineTensor(f, {12, 2, 8}, DataType::Float);
  TensorView* r = reshape(a, {24, -1});
  EXPECT_EQ(staticShape(r), (std::vector<int64_t>{24, 8}));
  EXPECT_ERROR_CONTAINS(reshape(a, {5, 8}),
                        "cannot reshape T0 [12, 2, 8] Float with 192 "
                        "elements to new_shape with 40 elements");
  EXPECT_ERROR_CONTAINS(reshape(a, {-1, -1}), "more than one -1");
  TensorView* s = defineTensor(f, {-1, 8}, DataType::Float);
  TensorView* rs = reshape(s, {-1, 2, 4});
  EXPECT_EQ(staticShape(rs), (std::vector<int64_t>{-1, 2, 4}));
}

TEST(OpsTest, PermuteSqueeze) {
  Fusion f;
  TensorView* a = defineTensor(f, {2, 1, 5}, DataType::Float);
  EXPECT_EQ(staticShape(permute(a, {2, 0, 1})),
            (std::vector<int64_t>{5, 2, 1}));
  EXPECT_ERROR_CONTAINS(permute(a, {0, 0, 1}), "appears more than once");
  EXPECT_EQ(staticShape(squeeze(a, {1})), (std::vector<int64_t>{2, 5}));
  EXPECT_ERROR_CONTAINS(squeeze(a, {0}), "only size-1 dims can be squeezed");
  EXPECT_ERROR_CONTAINS(squeeze(a, {3}), "dim 3 is out of range");
}

TEST(OpsTest, SlicePadCat) {
  Fusion f;
  TensorView* a = defineTensor(f, {25, 8}, DataType::Half);
  TensorView* s = slice(a, {1, 0}, {25, 8}, {});
  EXPECT_EQ(staticShape(s), (std::vector<int64_t>{24, 8}));
  EXPECT_ERROR_CONTAINS(slice(a, {0, 0}, {26, 8}, {}),
                        "end 26 at dim 0 is out of range");
  EXPECT_ERROR_CONTAINS(slice(a, {3, 0}, {2, 8}, {}), "is invalid");
  TensorView* p = pad(a, {1, 2}, nullptr);
  EXPECT_EQ(staticShape(p), (std::vector<int64_t>{25, 11}));
  EXPECT_ERROR_CONTAINS(pad(a, {1}, nullptr), "even number");
  TensorView* b = defineTensor(f, {25, 4}, DataType::Half);
  EXPECT_EQ(staticShape(cat({a, b}, -1)), (std::vector<int64_t>{25, 12}));
  TensorView* c = defineTensor(f, {24, 4}, DataType::Half);
  EXPECT_ERROR_CONTAINS(cat({a, c}, 1), "does not match tensor 0");
  TensorView* d = defineTensor(f, {25, 4}, DataType::Float);
  ErrorKind kind = ErrorKind::Value;
  errorOf([&] { cat({a, d}, 1); }, &kind);
  EXPECT_EQ(kind, ErrorKind::Type);
}

TEST(OpsTest, Reductions) {
  Fusion f;
  TensorView* a = defineTensor(f, {4, 6, 8}, DataType::Half);
  TensorView* s = reduction(ReductionOpType::Sum, a, {1}, false);
  EXPECT_EQ(s->dtype(), DataType::Float);
  EXPECT_EQ(staticShape(s), (std::vector<int64_t>{4, 8}));
  EXPECT_TRUE(s->domain()[1].isReduction());
  TensorView* k = reduction(ReductionOpType::Max, a, {-1}, true);
  EXPECT_EQ(k->dtype(), DataType::Half);
  EXPECT_EQ(staticShape(k), (std::vector<int64_t>{4, 6, 1}));
  auto [var, mean] = varMean(a, {0, 2}, 1, false);
  EXPECT_EQ(staticShape(var), (std::vector<int64_t>{6}));
  EXPECT_EQ(mean->dtype(), DataType::Float);
  EXPECT_ERROR_CONTAINS(reduction(ReductionOpType::Sum, a, {1, 1}, false),
                        "appears more than once");
  TensorView* i = defineTensor(f, {4}, DataType::Int32);
  EXPECT_EQ(reduction(ReductionOpType::Sum, i, {}, false)->dtype(),
            DataType::Int);
}

TEST(OpsTest, MatmulShapes) {
  Fusion f;
  TensorView* a = defineTensor(f, {3, 4, 5}, DataType::Float);
  TensorView* b = defineTensor(f, {5, 7}, DataType::Float);
  EXPECT_EQ(staticShape(matmul(a, b)), (std::vector<int64_t>{3, 4, 7}));
  TensorView* v = defineTensor(f, {5}, DataType::Float);
  EXPECT_EQ(staticShape(matmul(a, v)), (std::vector<int64_t>{3, 4}));
  EXPECT_ERROR_CONTAINS(matmul(b, a), "contraction sizes differ");
  TensorView* w = defineTensor(f, {9, 5}, DataType::Float);
  EXPECT_EQ(staticShape(linear(a, w, nullptr)),
            (std::vector<int64_t>{3, 4, 9}));
  TensorView* h = defineTensor(f, {5, 7}, DataType::Half);
  EXPECT_ERROR_CONTAINS(matmul(a, h), "must have the same dtype");
}

TEST(OpsTest, ForeignOperandRejected) {
  Fusion f1;
  Fusion f2;
  TensorView* a = defineTensor(f1, {4}, DataType::Float);
  TensorView* b = defineTensor(f2, {4}, DataType::Float);
  EXPECT_ERROR_CONTAINS(binaryOp(BinaryOpType::Add, a, b),
                        "belongs to another FusionDefinition");
}

TEST(OpsTest, FactoriesAndComplexOpsRefused) {
  Fusion f;
  Scalar* one = defineScalar(f, DataType::Double, ScalarValue(1.0));
  TensorView* t = full(f, {2, 1, 3}, one, DataType::Float);
  EXPECT_TRUE(t->axis(1).isBroadcast());
  Scalar* z = defineScalar(f, DataType::Int, ScalarValue(int64_t(0)));
  EXPECT_EQ(staticShape(iota(f, 5, z, z, DataType::Int)),
            (std::vector<int64_t>{5}));
  // Complex tensors are defined; an op torch has no complex kernel for is
  // a TypeError naming it.
  TensorView* c = defineTensor(f, {2}, DataType::ComplexFloat);
  ErrorKind kind = ErrorKind::Value;
  errorOf([&] { unaryOp(UnaryOpType::Relu, c); }, &kind);
  EXPECT_EQ(kind, ErrorKind::Type);
  EXPECT_ERROR_CONTAINS(unaryOp(UnaryOpType::Relu, c),
                        "relu: complex operands are not supported");
}

// Sizes from user input are multiplied and added with overflow checks: an
// unchecked 8 * (2^61 + 3) wraps to 24 and let 24 elements pass as that
// shape (undefined behaviour the sanitizer build also reports).
TEST(OpsTest, ShapesBeyondInt64AreRejected) {
  const int64_t big = int64_t(1) << 61;
  Fusion f;
  TensorView* a = defineTensor(f, {24}, DataType::Float);
  EXPECT_ERROR_CONTAINS(reshape(a, {8, big + 3}),
                        "reshape: new_shape [8, 2305843009213693955] has "
                        "more than 2^63 - 1 elements");
  EXPECT_ERROR_CONTAINS(reshape(a, {-1, 2 * big, 4}),
                        "has more than 2^63 - 1 elements");
  EXPECT_ERROR_CONTAINS(defineTensor(f, {2 * big, 2}, DataType::Float),
                        "a tensor of sizes [" + std::to_string(2 * big) +
                            ", 2] has more than 2^63 - 1 elements");
  Scalar* one = defineScalar(f, DataType::Double, ScalarValue(1.0));
  EXPECT_ERROR_CONTAINS(full(f, {big, big}, one, DataType::Float),
                        "has more than 2^63 - 1 elements");
  TensorView* b = defineTensor(f, {1, 1}, DataType::Float);
  EXPECT_ERROR_CONTAINS(expand(b, {big, 8}), "has more than 2^63 - 1");
  EXPECT_ERROR_CONTAINS(pad(a, {2 * big, 2 * big}, nullptr),
                        "pad: dim 0 of T0 [24] Float padded by");
  TensorView* c = defineTensor(f, {2 * big}, DataType::Bool);
  EXPECT_ERROR_CONTAINS(cat({c, c}, 0), "add up to more than 2^63 - 1");
  EXPECT_ERROR_CONTAINS(full(f, {big}, one, DataType::Double),
                        "a Double tensor of sizes [2305843009213693952] has "
                        "more than 2^63 - 1 bytes");
  // A zero size makes any other sizes fit, as in torch.
  EXPECT_EQ(staticShape(full(f, {0, big, big}, one, DataType::Float)),
            (std::vector<int64_t>{0, big, big}));
  // The slice size is ceil((stop - start) / step) even for a huge step.
  EXPECT_EQ(staticShape(slice(a, {3}, {24}, {INT64_MAX})),
            (std::vector<int64_t>{1}));
}

}  // namespace nvfuser
