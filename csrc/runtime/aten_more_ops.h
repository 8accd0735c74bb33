// ATen implementation of triu, cumsum and scatter (ir/more_exprs.h).
#pragma once

#include <ATen/ATen.h>

#include <vector>

#include "ir/more_exprs.h"

namespace nvfuser {

at::Tensor evalTriu(const TriuOp& e, const at::Tensor& in);
at::Tensor evalCumsum(const ScanOp& e, const at::Tensor& in);
// An index outside [0, size of dim) raises IndexError on the CPU, as torch
// does; elsewhere its element is dropped (ATen's device-side assert would
// end the process's CUDA context).
at::Tensor evalScatter(const ScatterOp& e, const std::vector<at::Tensor>& in);

}  // namespace nvfuser
