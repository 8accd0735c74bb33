// One differential fuzz case: a random fusion segmented under every
// forwarding policy, checked for invariants and run against the
// unsegmented ATen evaluation (bitwise on the CPU).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nvfuser {

struct FuzzOutcome {
  bool skipped = false;  // ATen itself rejects the generated fusion
  std::vector<std::string> problems;
  int64_t exprs = 0;
  int64_t segments = 0;    // under the default policy
  std::string reproducer;  // Python script of the fusion
};

// compileKernels: also generate every pointwise kernel and compile it with
// NVRTC for sm_90.
FuzzOutcome runFuzzCase(uint64_t seed, int maxOps, bool compileKernels);

}  // namespace nvfuser
