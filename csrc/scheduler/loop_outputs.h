// Outputs stored inside a serial reduction's loop. A serial-reduction
// family's slots, with their loops, visit every element of each of its
// reductions' inputs once. Another family's output that is a view of a
// value of such an input's shape, and reads what the reduction reads, can
// be stored there, at each iteration, instead of by slots of its own that
// load the same elements again: Qwen2.5's RoPE backward sums dq * q over
// the 28 query heads for the cos gradient, and dq's own gradient
// ([T, 28 * D], a permute and reshape of [28, T, D]) then costs no second
// read of dq. The loop of a reduction the family computes at its own index
// (reached from an output through elementwise ops: computed once per slot,
// at the top level of its code) writes the output at each of its
// iterations; a lane of a group (slot_threads.h) writes the iterations it
// takes.
#pragma once

#include <vector>

#include "ir/fusion.h"
#include "scheduler/decision.h"
#include "scheduler/kernel_launch.h"

namespace nvfuser {

// The reductions a family computes once per slot at its own index: reached
// from its outputs through elementwise ops, casts, sets, and broadcasts and
// squeezes of size-1 dims, every value on the way of the family's loop
// shape (size-1 dims aside), the reduction's output too.
std::vector<const ReductionOp*> slotReductions(const Fusion& segment,
                                               const OutputFamilyPlan& family);

// Moves outputs of the families into the loops of serial-reduction
// families' slotReductions where: the output is a view (set, permute,
// reshape, squeeze, broadcast of size-1 dims) of a value of the
// reduction input's shape; that value and the reduction input reach a
// common value (a fusion input, a reduced value, a pad...) through
// elementwise ops, casts and size-1 broadcasts and squeezes of that shape
// (so what the loop loads or computes serves both); and the family's
// slots, with up to 32 lanes each (at most the reduction's longest dim),
// fill half the device's resident threads (a few slots looping over a
// large output would leave it idle). Families left with no outputs are
// dropped; the receiving family's vector width fits the moved outputs'
// stores.
void planLoopOutputs(const Fusion& segment, const DeviceTraits& device,
                     std::vector<OutputFamilyPlan>* families);

// The view ops from a loop output's source to the output, source side
// first (set, permute, reshape, squeeze, broadcast).
std::vector<const Expr*> loopOutputViews(const Fusion& segment,
                                         const LoopOutputPlan& planned);

}  // namespace nvfuser
