// Index errors of device code. A gather in a generated kernel (and the
// ATen path of one on a GPU) cannot raise where it runs: an index out of
// range reads 0 there and sets one word in pinned host memory, which
// kernels reach through unified addressing. Every execute checks the word
// before it launches anything and raises IndexError for an earlier launch;
// NVFUSER_ENABLE=sync_index_checks synchronizes after a fusion that
// gathers and checks at once (CUDA_LAUNCH_BLOCKING's role for asserts).
#pragma once

#include <ATen/ATen.h>

namespace nvfuser {
namespace device_index_errors {

// The word's address (pinned on first use; CUDA must be available).
int* word();

// A one-element int tensor on `device` over the word, for ATen code.
at::Tensor wordOn(const at::Device& device);

// Raises IndexError, and clears the word, when a launch set it; a no-op
// before any kernel asked for the word.
void throwIfSet(const char* when);

}  // namespace device_index_errors
}  // namespace nvfuser
