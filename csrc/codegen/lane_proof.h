// The kernel generators' lane proof (scheduler/kernel_plan.h: LaneProof):
// a family holds at its width when the generator of the plan's strategy
// builds its body at that width. planKernel asks it before it decides a
// width, so the generator never narrows a vector. The answer depends on
// the fusion's shapes and index maps (pad, cat and slice boundaries,
// reshapes), not on the inputs' strides: a load whose lanes are not
// consecutive in memory is a load per lane, never a failure.
#pragma once

#include <memory>

#include "codegen/kernel_codegen.h"
#include "scheduler/kernel_plan.h"

namespace nvfuser {

std::shared_ptr<const LaneProof> generatorLaneProof(
    KernelCodegenOptions options = {});

}  // namespace nvfuser
