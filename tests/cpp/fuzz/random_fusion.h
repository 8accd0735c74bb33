// Seeded random fusions over every op family the IR supports, with concrete
// sizes (0 and 1 included), broadcast and expanded dims, several dtypes,
// shared subexpressions, several inputs and outputs, segment_set
// boundaries, both kinds of reshape, resize ops, reductions, matmuls and
// gathers (at in-range indices).
// The same seed always builds the same fusion.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "ir/fusion.h"

namespace nvfuser {

struct RandomFusion {
  std::unique_ptr<Fusion> fusion;
  // Concrete sizes of each input (empty for scalar inputs).
  std::vector<std::vector<int64_t>> inputSizes;
};

// maxOps: how many ops to try to add (failed attempts are skipped).
RandomFusion makeRandomFusion(uint64_t seed, int maxOps = 14);

}  // namespace nvfuser
