// Differential fuzzing in CI: NVFUSER_FUZZ_COUNT (default 500) random
// fusions, segmented == unsegmented under every policy, invariants hold,
// and every 10th fusion's kernels compile with NVRTC. Most run through
// their symbolic twin (symbolic_twin.h): inputs defined with -1 sizes.
#include <gtest/gtest.h>

#include <cstdlib>

#include "../fuzz/fuzz_case.h"

namespace nvfuser {

TEST(FuzzTest, SegmentedEqualsUnsegmented) {
  const char* env = std::getenv("NVFUSER_FUZZ_COUNT");
  const uint64_t count = env ? std::strtoull(env, nullptr, 10) : 500;
  uint64_t skipped = 0;
  uint64_t symbolic = 0;
  for (uint64_t seed = 0; seed < count; ++seed) {
    FuzzOutcome o = runFuzzCase(seed, 14, seed % 10 == 0);
    skipped += o.skipped;
    symbolic += o.symbolic;
    EXPECT_TRUE(o.problems.empty())
        << "seed " << seed << ": " << o.problems.front() << "\n"
        << o.reproducer;
  }
  // The generator must mostly build fusions ATen accepts.
  EXPECT_LT(skipped, count / 5);
  // Most cases must reach concretization through symbolic sizes.
  EXPECT_GT(symbolic, count / 2);
}

}  // namespace nvfuser

namespace nvfuser {

// Random fusions of thousands of ops: no pass may recurse once per op or
// grow faster than the fusion (a 4,500-op chain once overflowed the
// generator's stack).
TEST(FuzzTest, ThousandsOfOps) {
  for (uint64_t seed = 1000; seed < 1004; ++seed) {
    FuzzOutcome o = runFuzzCase(seed, 3000, /*compileKernels=*/false);
    EXPECT_TRUE(o.problems.empty())
        << "seed " << seed << ": " << o.problems.front();
    EXPECT_GT(o.exprs, 1000) << "seed " << seed;
  }
}

}  // namespace nvfuser
