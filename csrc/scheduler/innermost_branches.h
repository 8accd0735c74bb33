// Branches that depend on an output's innermost elements: pads along the
// innermost dim (a RoPE backward's rotate-half, slice_backward, and
// partial rotary's rotated and passed dims). Cats along it are walked
// through but not counted (a forward's rotate-half measured slower with
// warps on one half). Each is uniform over the runs of `unit` consecutive
// elements that start at multiples of `unit` in the output's row-major
// order, and repeats every `span` elements, so an
// order of slots that keeps a warp (block) on one run of every branch keeps
// it off divergent branches (interleaved_cat.h orders slots by such a
// digit). Found by walking back from the output through ops that keep the
// innermost dim (elementwise, casts, broadcasts, expands, squeezes and
// permutes that keep it last, reshapes that keep or merge into it, pads,
// slices and cats, which shift it); the walk stops at reductions (their
// loops predicate pads instead of branching) and anything else.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/fusion.h"

namespace nvfuser {

struct BranchPeriod {
  int64_t unit = 1;  // output elements over which the branch is uniform
  int64_t span = 1;  // output elements after which the pattern repeats
};

std::vector<BranchPeriod> innermostBranchPeriods(const TensorView* out);

}  // namespace nvfuser
