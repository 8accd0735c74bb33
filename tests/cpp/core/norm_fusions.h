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

}  // namespace nvfuser
