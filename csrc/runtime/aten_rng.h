// nvFuser's random ops on the CPU path (and through it for ATen segments on
// the GPU), and the seed and offset drawn per execute for random ops that
// have none (docs/rng.md).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "ir/rng_op.h"
#include "ops/concretize.h"
#include "runtime/runtime_args.h"

namespace nvfuser {

// The op's values (runtime/philox.h), computed on the CPU and moved to
// `device`. Parameters outside their domain (not finite, minval > maxval,
// std < 0) raise ValueError here; a generated kernel cannot raise and
// computes the formula.
at::Tensor evalRng(const RngOp& e, const std::vector<at::Tensor>& in,
                   at::Device device);

// A seed and an offset for one execute, from torch's default generator of
// `device`: on the CPU a fresh 64-bit seed (offset 0); on a GPU the CUDA
// generator's seed and its Philox offset in 128-bit blocks, which then
// advances by 4 (one block per thread, as torch counts), so torch's own
// kernels never reuse the counters.
std::pair<int64_t, int64_t> drawRngState(at::Device device);

// args, plus the drawn seed and offset when the concrete fusion takes them
// (ConcreteFusion::drawsRngState).
std::vector<RuntimeArg> withRngState(const ConcreteFusion& c,
                                     std::vector<RuntimeArg> args,
                                     at::Device device);

}  // namespace nvfuser
