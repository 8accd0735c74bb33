// Which element of an input a value reads for one of its own elements,
// worked out numerically through the ops that only map indices (casts and
// other elementwise ops, broadcasts, expands, squeezes, permutes,
// reshapes, slices, pads and cats). The scheduler asks it where a loop
// dim moves in an input's memory (scheduler/input_loop_order.h) without
// the generator's symbolic index maps.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/val.h"

namespace nvfuser {

// The coordinates of `input` that `value` reads at `coords` (one per dim
// of value), along the first path through the operands, in order, that
// reaches `input` with every pad and cat on the way reading an operand
// there (a pad's fill reads nothing). nullopt when no path does, or every
// path meets an op that is not an index map (a reduction, a gather, a
// matmul). Each value is walked at most once (the first coordinates it is
// reached with), so a query is linear in the fusion's size.
std::optional<std::vector<int64_t>> inputCoordinates(
    const Val* value, const std::vector<int64_t>& coords, const Val* input);

}  // namespace nvfuser
