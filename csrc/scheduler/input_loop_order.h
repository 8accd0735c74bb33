// The order a pointwise family's slots take its loop dims in. Slots go in
// the outputs' row-major order unless the input the family reads most lies
// in memory in another order of the dims outside the innermost one: then
// they follow the input. A LitGPT RoPE forward written as a
// FusionDefinition reads qkv as [B, T, heads, D] and writes q and k as
// [B, heads, T, D]: in the outputs' order, neighbouring slots read rows
// of qkv a whole T-row apart and the cos/sin row of a t once per head; in
// qkv's order they read qkv in sequence and the heads of one t share the
// cos/sin row, while each store still writes whole runs of D elements.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/fusion.h"
#include "scheduler/interleaved_cat.h"
#include "scheduler/kernel_launch.h"

namespace nvfuser {

// Runs of the innermost dim that are not whole 128-byte lines keep the
// outputs' order: in the input's order a run's last line is finished much
// later, by the run of the next head (on an H100 the partial-rotary
// forward, runs of 160 bytes, went from 29.0 to 29.7 us).
constexpr int64_t kMinInputOrderRunBytes = 128;
// Inputs and outputs tried per family: a bounded number of walks, each
// linear in the segment, keeps planning linear in it.
constexpr size_t kMaxOrderCandidates = 4;

// Sets slotDims of each family that takes its input's order: a family
// with one thread per slot and no loop outputs, whose outputs no
// interleaved cat orders, with at least two dims outside the innermost,
// whose innermost dim is the input's contiguous one and spans a whole
// multiple of minRunBytes (kMinInputOrderRunBytes unless told; 0: any
// length) of every output. The order is that of the largest tensor input
// (bytes; of the kMaxOrderCandidates largest) that one of the family's
// outputs (of its first kMaxOrderCandidates) reads through index maps only
// (analysis/element_map.h) with every loop dim moving it: a GQA family's
// q, not its k and v repeated over their group's heads. The strides are
// `inputStrides` (per input, empty: dense), those the plan is made for: a
// kernel specialized to other strides later keeps the order, as it keeps
// a transpose plan.
void planInputLoopOrder(const Fusion& segment,
                        const std::vector<std::vector<int64_t>>& inputStrides,
                        const std::vector<InterleavedCat>& interleavedCats,
                        int64_t minRunBytes,
                        std::vector<OutputFamilyPlan>* families);

}  // namespace nvfuser
