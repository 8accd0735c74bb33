// ATen implementation of triu, cumsum and scatter (ir/more_exprs.h).
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "ir/more_exprs.h"

namespace nvfuser {

// Raises IndexError naming the op, the first index outside [0, size) along
// `dim` of `tensor`, and the value being computed, when `valid` (whether
// each index is in range) is not all true.
void checkIndexRange(const at::Tensor& index, const at::Tensor& valid,
                     const std::string& op, int64_t dim,
                     const std::string& tensor, int64_t size,
                     const std::string& computing);

at::Tensor evalTriu(const TriuOp& e, const at::Tensor& in);
at::Tensor evalCumsum(const ScanOp& e, const at::Tensor& in);
// An index outside [0, size of dim) raises IndexError on the CPU, as torch
// does; elsewhere its element is dropped (ATen's device-side assert would
// end the process's CUDA context).
at::Tensor evalScatter(const ScatterOp& e, const std::vector<at::Tensor>& in);

}  // namespace nvfuser
