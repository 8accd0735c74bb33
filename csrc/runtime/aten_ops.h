// ATen implementation of each op family, with nvFuser's dtype semantics.
#pragma once

#include <ATen/ATen.h>

#include <utility>
#include <vector>

#include "ir/exprs.h"
#include "ir/val.h"

namespace nvfuser {

at::Tensor scalarTensor(const ScalarValue& v, DataType dtype,
                        at::Device device);
// Evaluates a single-output expr on ATen tensors (scalars as 0-dim tensors).
at::Tensor evalExpr(const Expr& e, const std::vector<at::Tensor>& in,
                    at::Device device);
std::pair<at::Tensor, at::Tensor> evalVarMean(const VarMeanOp& e,
                                              const at::Tensor& in);

}  // namespace nvfuser
