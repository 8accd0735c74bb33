// Binds a symbolic fusion to real input sizes: validates every input against
// its definition, then replays the fusion so every extent is a constant.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/fusion.h"

namespace nvfuser {

// What concretization needs to know about one actual input. The runtime
// fills it from an at::Tensor or a Python number.
struct InputDescriptor {
  bool isTensor = true;
  DataType dtype = DataType::Float;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  bool isCpuScalarTensor = false;  // a 0-dim tensor on the CPU
  std::string typeName;            // for messages when the kind is wrong
};

// Checks count, kind, dtype, rank, static and broadcast sizes, symbolic
// sizes that the fusion requires to agree, and declared contiguity. Throws
// nvfuser::Error naming the input, the dim and the problem.
void validateInputs(const Fusion& fusion,
                    const std::vector<InputDescriptor>& inputs);

struct ConcreteFusion {
  std::unique_ptr<Fusion> fusion;
  // Outputs of the concrete fusion in the order of the symbolic one.
  std::vector<Val*> outputs;
  // Random ops without rng_seed/rng_offset: the concrete fusion's last two
  // inputs are then a seed and an offset (Int scalars) that the runtime
  // draws at every execute (runtime/aten_rng.h).
  bool drawsRngState = false;
};

// Replaces the replay of one expr (given its inputs in the new fusion) by
// other exprs with the same outputs, or returns nullopt to replay it as is.
using ReplayOverride = std::function<std::optional<std::vector<Val*>>(
    const Expr*, const std::vector<Val*>&)>;

// validateInputs, then replays the live part of the fusion on inputs with
// constant extents. Scalar inputs stay inputs; random ops take their
// tensor's sizes and, without a seed, the drawn seed and offset inputs.
// `override` may rewrite exprs once their sizes are known (the runtime splits
// long reductions).
ConcreteFusion concretize(const Fusion& fusion,
                          const std::vector<InputDescriptor>& inputs,
                          const ReplayOverride& override = {});

}  // namespace nvfuser
