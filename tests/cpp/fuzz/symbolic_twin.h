// A random fusion rebuilt over inputs with symbolic (-1) sizes, as users
// define them: concretization then binds the sizes, so the fuzzer also
// covers what only symbolic definitions reach (a keepdim sum of a [-1, -1]
// input, a [-1, -1] input bound to [3, 1]).
#pragma once

#include <cstdint>
#include <memory>

#include "ir/fusion.h"

namespace nvfuser {

// The same ops on inputs whose dims are symbolic where `seed` says so
// (most non-broadcast dims, some size-1 dims). nullptr when some op cannot
// be built on symbolic sizes (a reshape needs known sizes, say).
std::unique_ptr<Fusion> symbolicTwin(const Fusion& concrete, uint64_t seed);

}  // namespace nvfuser
