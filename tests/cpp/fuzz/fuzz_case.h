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
  std::string skipReason;
  std::vector<std::string> problems;
  int64_t exprs = 0;
  int64_t segments = 0;  // under the default policy
  // Kernels (default policy) whose slots follow an interleaved cat's order
  // (scheduler/interleaved_cat.h): how often the fuzzer exercises it.
  int64_t interleavedCatKernels = 0;
  int64_t laneTableKernels = 0;  // kernels whose lanes are not consecutive
  // Kernels with groups of threads per slot (scheduler/slot_threads.h) and
  // with reductions sharing a loop.
  int64_t slotGroupKernels = 0;
  int64_t sharedLoopKernels = 0;
  int64_t chainedSumKernels = 0;  // added sums sharing an accumulator
  // Kernels storing outputs inside a reduction's loop (loop_outputs.h).
  int64_t loopOutputKernels = 0;
  int64_t transposeKernels = 0;  // shared-memory tiles (transpose_plan.h)
  // Kernels whose slots follow an input's order (input_loop_order.h).
  int64_t inputOrderKernels = 0;
  // Kernels with a vector narrower than the bytes allow (the lane proof,
  // scheduler/kernel_plan.h).
  int64_t narrowedKernels = 0;
  bool symbolic = false;   // ran through its symbolic twin (symbolic_twin.h)
  std::string reproducer;  // Python script of the fusion
};

// compileKernels: also generate every pointwise kernel and compile it with
// NVRTC for sm_90. cuda: run on the GPU instead, generated kernels against
// ATen on the GPU, default policy only; values must agree within 1e-2
// (relative and absolute) on at least 99% of the elements of every output,
// since FMA contraction and libdevice math differ from ATen's kernels in
// the last bits, which casts to integers can amplify.
// emulate: on the CPU, but every generated kernel runs through the CPU
// emulator of tests/cpp/emu (default policy only, same tolerance as cuda).
FuzzOutcome runFuzzCase(uint64_t seed, int maxOps, bool compileKernels,
                        bool cuda = false, bool emulate = false);

}  // namespace nvfuser
