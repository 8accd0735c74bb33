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
// of value), along a path through the operands (the first operand first)
// that reaches `input` with every pad and cat on the way reading an
// operand there (a pad's fill reads nothing). nullopt when the walk finds
// none, or meets only ops that are not index maps (a reduction, a gather,
// a matmul). Each value is walked at most once, at the first coordinates
// it is reached with, so a query is linear in the fusion's size; a value
// reached again at other coordinates is not walked again, so a path that
// only those coordinates would open (past a cat part or a pad's fill the
// first visit met) is missed: nullopt where such a path exists. Callers
// treat nullopt as "no answer", never as "does not read".
std::optional<std::vector<int64_t>> inputCoordinates(
    const Val* value, const std::vector<int64_t>& coords, const Val* input);

}  // namespace nvfuser
