// A cat whose parts interleave in an output's memory: the output is the cat
// through permutes, reshapes, copies and unary ops only, so along the
// output's row-major element order the position on the cat dim is the digit
// (i / innerElements) % extent. When a run of innerElements is not a whole
// number of warps' slots, warps straddle parts and run each part's branch
// in turn; the generator then hands slots to threads in an order that keeps
// each warp on one position (kernel_plan.h: KernelPlan::interleavedCat).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "ir/fusion.h"

namespace nvfuser {

struct InterleavedCat {
  size_t output = 0;          // index into the fusion's outputs
  int64_t innerElements = 1;  // output elements per position on the cat dim
  int64_t extent = 1;         // the cat dim's extent (every part's together)
};

// The first output that is a cat through permutes, reshapes, copies and
// unary ops, with its digit; none when no output is.
std::optional<InterleavedCat> findInterleavedCat(const Fusion& fusion);

}  // namespace nvfuser
