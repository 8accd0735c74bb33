// Builders for ops that move, insert or remove dimensions.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "ir/exprs.h"
#include "ir/fusion.h"

namespace nvfuser {

// isBroadcastDim has the output's rank; false entries take the input's dims
// in order.
TensorView* broadcast(TensorView* in, const std::vector<bool>& isBroadcastDim);
// nvFuser's broadcast_in_dim: broadcastDims[i] is the output position of
// input dim i; size-1 input dims may be expanded to outputShape.
TensorView* broadcastInDim(TensorView* in,
                           const std::vector<int64_t>& outputShape,
                           const std::vector<int64_t>& broadcastDims);
// shape has the input's rank; -1 keeps a dim.
TensorView* expand(TensorView* in, const std::vector<int64_t>& shape);
// newShape may hold one -1, inferred from the element count.
TensorView* reshape(TensorView* in, const std::vector<int64_t>& newShape);
TensorView* permute(TensorView* in, const std::vector<int64_t>& dims);
TensorView* squeeze(TensorView* in, const std::vector<int64_t>& dims);
TensorView* slice(TensorView* in, const std::vector<int64_t>& starts,
                  const std::vector<int64_t>& stops,
                  const std::vector<int64_t>& steps);
// padWidths in torch.nn.functional.pad order: last dim first, pairs of
// (before, after). value: nullptr pads with zero.
TensorView* pad(TensorView* in, const std::vector<int64_t>& padWidths,
                Val* value);
TensorView* cat(const std::vector<TensorView*>& ins, int64_t dim);

}  // namespace nvfuser
