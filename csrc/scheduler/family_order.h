// The order of a serial-reduction kernel's output families in its slot
// loop: the families whose slots loop longest first. The grid-stride loop
// hands out slots in order and a block keeps its warp slots until its
// slowest thread ends, so a heavy family placed last ran alone at the end
// (Qwen2.5's RoPE backward: the cos and sin gradients, 64 serial steps per
// slot, after the GQA value sums, 7 each).
#pragma once

#include <cstdint>
#include <vector>

#include "ir/fusion.h"
#include "scheduler/kernel_launch.h"

namespace nvfuser {

// The reductions and var_means (with a tensor input) that the family's
// outputs depend on, each once.
std::vector<const Expr*> reductionsOfFamily(const Fusion& segment,
                                            const OutputFamilyPlan& family);

// Elements the serial loops of one slot of `family` read, per output
// element: over every reduction its outputs depend on (each counted once),
// the reduction's input elements per element of the family.
double serialReadsPerElement(const Fusion& segment,
                             const OutputFamilyPlan& family);

// Sorts families by serialReadsPerElement, largest first; equal ones keep
// their output order.
void orderFamiliesByWork(const Fusion& segment,
                         std::vector<OutputFamilyPlan>* families);

}  // namespace nvfuser
