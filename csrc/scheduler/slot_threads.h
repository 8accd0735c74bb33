// Threads per slot of a serial-reduction family: a family whose slots each
// loop long over reduced elements (Qwen2.5's RoPE backward: the cos and sin
// gradients sum 32 heads of q and k per slot) but has too few slots to keep
// the GPU's threads busy gets a group of adjacent lanes per slot. Each lane
// takes every K-th iteration of the slot's outermost reduction loops and the
// group combines its partial results with warp shuffles; one lane stores.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/fusion.h"
#include "scheduler/interleaved_cat.h"
#include "scheduler/kernel_launch.h"

namespace nvfuser {

// Loop steps a lane keeps at least (fewer: the shuffles cost more than the
// loads they spread).
constexpr int64_t kMinLoopStepsPerLane = 4;

// K for `family` (a power of two up to 32; 1: one thread per slot): doubled
// while the family's slots times K stay within one resident wave of the
// device, each lane keeps kMinLoopStepsPerLane of the slot's serial reads
// (family_order.h: serialReadsPerElement) and K stays within the longest
// reduced dim (the one lanes split). 1 for families with an interleaved
// cat's slot order (its unit is a warp of slots) and for reductions to a
// type other than float, double, half, bfloat16, int or int32 (a bool max:
// left alone rather than reasoned about).
int64_t threadsPerSlot(const Fusion& segment, const OutputFamilyPlan& family,
                       const std::vector<InterleavedCat>& interleavedCats,
                       const DeviceTraits& device);

// Sets threadsPerSlot of every family.
void planThreadsPerSlot(const Fusion& segment,
                        const std::vector<InterleavedCat>& interleavedCats,
                        const DeviceTraits& device,
                        std::vector<OutputFamilyPlan>* families);

}  // namespace nvfuser
