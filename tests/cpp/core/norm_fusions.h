// Normalization fusions shared by the codegen and occupancy tests.
#pragma once

#include "ir/fusion.h"
#include "ops/arith.h"
#include "ops/reduction_ops.h"
#include "ops/shape_ops.h"

namespace nvfuser {

// softmax over the rows of a bf16 [rows, cols] input, bf16 out, computed
// in Float (as benchmarks/norm_bench.py defines it).
inline void defineSoftmax(Fusion& f, int64_t rows, int64_t cols) {
  auto full = [&](TensorView* t) {
    return expand(broadcast(t, {false, true}), {rows, cols});
  };
  TensorView* x = defineTensor(f, {rows, cols}, DataType::BFloat16);
  TensorView* xf = castOp(x, DataType::Float)->asTensor();
  TensorView* m = reduction(ReductionOpType::Max, xf, {1}, false);
  TensorView* e =
      unaryOp(UnaryOpType::Exp, binaryOp(BinaryOpType::Sub, xf, full(m)))
          ->asTensor();
  TensorView* s = reduction(ReductionOpType::Sum, e, {1}, false);
  f.addOutput(
      castOp(binaryOp(BinaryOpType::Div, e, full(s)), DataType::BFloat16));
}

// RMSNorm backward as autograd writes it (LlamaRMSNorm: y = w * bf16(x *
// rstd)): inputs x, dy [rows, cols] and w [cols] in `dtype`, rstd [rows, 1]
// Float; outputs dw [cols] (a column sum over the rows, cast) and dx
// [rows, cols]. With `bias`, also db = sum(dy) over the rows (LayerNorm's
// second column sum).
inline void defineNormBackward(Fusion& f, int64_t rows, int64_t cols,
                               DataType dtype, bool bias = false) {
  auto fl = [](Val* v) { return castOp(v, DataType::Float)->asTensor(); };
  auto mul = [](Val* a, Val* b) {
    return binaryOp(BinaryOpType::Mul, a, b)->asTensor();
  };
  TensorView* x = defineTensor(f, {rows, cols}, dtype);
  TensorView* w = defineTensor(f, {cols}, dtype);
  TensorView* rstd = defineTensor(f, {rows, 1}, DataType::Float);
  TensorView* dy = defineTensor(f, {rows, cols}, dtype);
  TensorView* xf = fl(x);
  TensorView* xhat = castOp(mul(xf, rstd), dtype)->asTensor();
  f.addOutput(castOp(
      reduction(ReductionOpType::Sum, fl(mul(dy, xhat)), {0}, false), dtype));
  if (bias) {
    f.addOutput(
        castOp(reduction(ReductionOpType::Sum, fl(dy), {0}, false), dtype));
  }
  TensorView* wb = expand(broadcast(w, {true, false}), {rows, cols});
  TensorView* dxhat = fl(mul(dy, wb));
  TensorView* s = reduction(ReductionOpType::Sum, mul(dxhat, xf), {1}, true);
  TensorView* r3 = mul(mul(rstd, rstd), rstd);
  Val* mean = binaryOp(BinaryOpType::Div, s,
                       defineScalar(f, DataType::Double, double(cols)));
  f.addOutput(castOp(
      binaryOp(BinaryOpType::Sub, mul(dxhat, rstd), mul(mul(xf, r3), mean)),
      dtype));
}

// LayerNorm backward as torch's native_layer_norm_backward decomposes
// (our FX translation of it): inputs x, dy [rows, cols] bf16, mean and
// rstd [rows, 1] Float, w [cols] bf16; outputs dx, then dw and db (column
// sums, cast). Its second row sum reads x, mean and rstd, which its first
// (sum of dy * w) does not.
inline void defineLayerNormBackward(Fusion& f, int64_t rows, int64_t cols) {
  auto fl = [](Val* v) { return castOp(v, DataType::Float)->asTensor(); };
  auto bin = [](BinaryOpType op, Val* a, Val* b) {
    return binaryOp(op, a, b)->asTensor();
  };
  auto full = [&](TensorView* t) {
    return expand(broadcast(t, {false, true}), {rows, cols});
  };
  TensorView* x = defineTensor(f, {rows, cols}, DataType::BFloat16);
  TensorView* dy = defineTensor(f, {rows, cols}, DataType::BFloat16);
  TensorView* mean = defineTensor(f, {rows, 1}, DataType::Float);
  TensorView* rstd = defineTensor(f, {rows, 1}, DataType::Float);
  TensorView* w = defineTensor(f, {cols}, DataType::BFloat16);
  TensorView* xhat =
      bin(BinaryOpType::Mul, bin(BinaryOpType::Sub, fl(x), mean), rstd);
  TensorView* g = bin(BinaryOpType::Mul, fl(dy),
                      expand(broadcast(fl(w), {true, false}), {rows, cols}));
  TensorView* sumG = reduction(ReductionOpType::Sum, g, {1}, false);
  TensorView* sumGx = reduction(ReductionOpType::Sum,
                                bin(BinaryOpType::Mul, g, xhat), {1}, false);
  Val* n = defineScalar(f, DataType::Double, double(cols));
  TensorView* a =
      bin(BinaryOpType::Sub, bin(BinaryOpType::Mul, g, n), full(sumG));
  TensorView* dx =
      bin(BinaryOpType::Mul, bin(BinaryOpType::Div, rstd, n),
          bin(BinaryOpType::Sub, a, bin(BinaryOpType::Mul, xhat, full(sumGx))));
  f.addOutput(castOp(dx, DataType::BFloat16));
  f.addOutput(
      castOp(reduction(ReductionOpType::Sum,
                       bin(BinaryOpType::Mul, fl(dy), xhat), {0}, false),
             DataType::BFloat16));
  f.addOutput(castOp(reduction(ReductionOpType::Sum, fl(dy), {0}, false),
                     DataType::BFloat16));
}

}  // namespace nvfuser
