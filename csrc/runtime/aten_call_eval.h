// Runs an aten_call (ir/aten_call.h): the operator is looked up in
// PyTorch's dispatcher by name and called with the boxed arguments, as
// eager PyTorch would call it.
#pragma once

#include <ATen/ATen.h>

#include <optional>
#include <vector>

#include "ir/aten_call.h"
#include "ir/val.h"

namespace nvfuser {

// `in` holds the expr's inputs (scalars as 0-dim tensors), `scalars` the
// host values of the scalar ones where known (read from the device
// otherwise, which waits for it); returns the kept results, checked
// against their declared dtype and sizes (a mismatch raises RuntimeError
// naming the result).
std::vector<at::Tensor> evalAtenCall(
    const AtenCallOp& e, const std::vector<at::Tensor>& in,
    const std::vector<std::optional<ScalarValue>>& scalars);

}  // namespace nvfuser
