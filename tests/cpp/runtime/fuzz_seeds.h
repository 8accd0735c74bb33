// fuzz_fusions' seeds replayed on the emulator by the runtime tests: each
// seed must build at least one kernel of the kind `counted` counts, and its
// segmented result must match the unsegmented ATen result.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>

#include "../fuzz/fuzz_case.h"

namespace nvfuser {

inline void expectFuzzSeedsMatchOnTheEmulator(
    std::initializer_list<uint64_t> seeds, int64_t FuzzOutcome::*counted) {
  for (uint64_t seed : seeds) {
    FuzzOutcome o = runFuzzCase(seed, 14, false, false, true);
    EXPECT_GE(o.*counted, 1) << "seed " << seed;
    EXPECT_TRUE(o.problems.empty())
        << "seed " << seed << ": " << o.problems.front() << "\n"
        << o.reproducer;
  }
}

}  // namespace nvfuser
