// Builders for reductions and matrix products.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "ir/exprs.h"
#include "ir/fusion.h"

namespace nvfuser {

// Empty dims reduce every dim. dtype: the output type, or Null for the
// default (Sum/Prod of integers give Int, of Half/BFloat16 give Float).
TensorView* reduction(ReductionOpType op, TensorView* in,
                      const std::vector<int64_t>& dims, bool keepdim,
                      DataType dtype = DataType::Null);
// Returns {variance, mean}.
std::pair<TensorView*, TensorView*> varMean(TensorView* in,
                                            const std::vector<int64_t>& dims,
                                            int64_t correction, bool keepdim);
TensorView* variance(TensorView* in, const std::vector<int64_t>& dims,
                     int64_t correction, bool keepdim);

// torch.matmul semantics, including 1-D operands and batch broadcasting.
TensorView* matmul(TensorView* a, TensorView* b);
// torch.nn.functional.linear: a @ w^T (+ bias).
TensorView* linear(TensorView* a, TensorView* w, Val* bias);

}  // namespace nvfuser
