// Sizes of tensors: of a concrete fusion (every extent constant), and the
// symbolic extents of any fusion.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/val.h"

namespace nvfuser {

class PermuteOp;

// concreteShape(tv): ir/val.h.
int64_t numel(const TensorView* tv);
// Row-major strides of a dense tensor (0 for size-1 dims).
std::vector<int64_t> denseStrides(const std::vector<int64_t>& shape);
// Bytes the tensor takes when materialized densely.
int64_t denseBytes(const TensorView* tv);
// The strides of input `i`, a tensor, from `given` (per input, as a plan's
// options hold them): its entry, or dense where the entry is empty or
// missing.
std::vector<int64_t> givenOrDenseStrides(
    const TensorView* tv, const std::vector<std::vector<int64_t>>& given,
    size_t i);
// The sizes with every size-1 dim removed.
std::vector<int64_t> shapeWithoutOnes(const TensorView* tv);
// The canonical logical extents without reduction dims and without the dims
// known to be 1; works on symbolic fusions too (a symbolic extent is kept,
// it may or may not be 1 once bound). On a concrete fusion it lists the same
// sizes as shapeWithoutOnes.
std::vector<Extent> extentsWithoutKnownOnes(const TensorView* tv);

// Whether `e` reads some element of its input `in` for more than one of its
// output elements (a broadcast made real by expand, an implicit broadcast in
// a binary op). Cat and pad place each input element once, however large
// their output.
bool replicatesInput(const Expr* e, const Val* in);
// Whether a permute changes the order of its input's non-size-1 dims (a
// real transpose; moving size-1 dims only relabels the same layout).
bool permutesNonUnitDims(const PermuteOp* p);

}  // namespace nvfuser
