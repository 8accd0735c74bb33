// What a scheduler that accepted a segment hands the kernel generator: the
// strategy, the row layout, output families with their vector widths and
// threads per slot, threads per block, launch shape, a lone sum's split and
// the slot order. planKernel is the scheduler layer's answer for the
// extracted segment (the same rules canSchedule applied to the segment's
// view). With a LaneProof in its options (the runtime's, generateKernel's)
// every width in it is one the generator's proof held for, and every rule
// that depends on a width (kernel_launch.h) was evaluated at it: the
// generator builds exactly this plan and decides nothing again.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "ir/exprs.h"
#include "ir/fusion.h"
#include "scheduler/decision.h"
#include "scheduler/input_loop_order.h"
#include "scheduler/interleaved_cat.h"
#include "scheduler/kernel_launch.h"
#include "scheduler/row_reduction_plan.h"
#include "scheduler/scheduler_type.h"
#include "scheduler/transpose_plan.h"

namespace nvfuser {

enum class KernelStrategy {
  // One thread per vector of output elements, grid-stride (pointwise).
  Pointwise,
  // Reductions of non-innermost dims looped inside each thread; a lone
  // floating-point sum may be split over threads and blocks.
  SerialReduction,
  // A block per row reducing the innermost dims (softmax, norms, row
  // sums), with column sums on the side (row_reduction_plan.h).
  Rows,
  // A pointwise segment that transposes an input: 32 x 32 tiles through
  // shared memory (transpose_plan.h).
  Transpose,
};
const char* toString(KernelStrategy s);

struct KernelPlan {
  KernelStrategy strategy = KernelStrategy::Pointwise;
  RowReductionPlan rows;    // Rows: the layout
  TransposePlan transpose;  // Transpose: the tiled dims and staged inputs
  // Rows: the vector every family takes (the families' own vectorWidth
  // is not used), and the block at that width.
  int64_t rowVectorWidth = 1;
  RowLaunch rowLaunch;
  // The output families; for Pointwise and SerialReduction with their
  // vectors.
  std::vector<OutputFamilyPlan> families;
  // Pointwise and SerialReduction (unsplit): threads per block.
  int64_t blockThreads = 128;
  // SerialReduction: the sum that is split over the GPU (the segment's only
  // reduction, a floating-point sum, cast or viewed to its only output) when
  // its output vectors are too few to fill it.
  SplitSumPlan split;
  // Pointwise and SerialReduction: a block per blockDim slots, so no
  // thread loops (true), or one resident wave whose threads loop over the
  // slots (false). A sum split over blocks keeps one wave
  // of tiles either way. On an H200 the full grid moved a 1 GiB bf16 x*2+1 at
  // 100.5% of copy bandwidth against 93.4%, and LitGPT RoPE backwards up
  // to 19% faster (phi-3.5's 5% slower; benchmarks/results/*session12*).
  bool fullGrid = false;
  // Pointwise and SerialReduction: the outputs whose slots are ordered by
  // a digit (slotOrderDigit: the positions of an interleaved cat, and,
  // with innermostBranchOrder, of branches on the innermost elements) in
  // runs of at least kMinInterleavedRunBytes; where a run is not a whole
  // number of the unit's slots (a warp's, or a block's), the generator
  // orders a family's slots by its first such output's digit so that every
  // warp, or block, stays on one position (catSlotOrder).
  std::vector<InterleavedCat> interleavedCats;
  // Compiled with a register cap where that holds one more block per SM
  // and spills nothing (compiler/occupancy_tuner.h): row kernels always.
  bool capRegisters = false;
};

// The plan as text (NVFUSER_DUMP=scheduler_params): the strategy and its
// launch, then a line per output family (kernel_plan_string.cpp).
std::string toString(const KernelPlan& plan);

// Runs shorter than a memory sector keep the order (kernel_plan.cpp).
constexpr int64_t kMinInterleavedRunBytes = 32;

// Whether the kernel generator can build family `family` of `plan` at the
// family's vectorWidth (Rows: at the plan's rowVectorWidth): whether every
// index its values take keeps that many lanes consecutive and aligned
// (pads, cats and slices whose boundaries split a vector, reshapes that
// split one unevenly do not). The generator is the one place that knows
// its index maps, so the codegen layer implements this (codegen/
// lane_proof.h) and planKernel asks it before deciding a width. `why`
// gets the reason of a "no".
class LaneProof {
 public:
  virtual ~LaneProof() = default;
  virtual bool holds(const Fusion& segment, const KernelPlan& plan,
                     size_t family, std::string* why) const = 0;
};

// What users switch off (NVFUSER_DISABLE=full_grid, interleaved_cat_order)
// to compare plans.
struct KernelPlanOptions {
  bool fullGrid = true;
  bool interleavedCatOrder = true;
  // Whole blocks on one cat position where they fit, not only warps
  // (NVFUSER_DISABLE=interleaved_cat_block_order: warps).
  bool interleavedCatBlockOrder = true;
  // The digit also keeps warps on one side of the pads on the innermost
  // elements (NVFUSER_DISABLE=innermost_branch_order: cats only).
  bool innermostBranchOrder = true;
  // ...and where blocks are on one cat position, a block holds all of its
  // pad sides, a warp on each (InterleavedCat::sidesPerCatPosition;
  // NVFUSER_DISABLE=pad_sides_in_one_block: blocks on one side).
  bool padSidesInOneBlock = true;
  bool vectorize = true;  // NVFUSER_DISABLE=vectorization: one lane
  // Serial-reduction families with the longest slot loops first
  // (scheduler/family_order.h; NVFUSER_DISABLE=heavy_families_first:
  // output order).
  bool heavyFamiliesFirst = true;
  // Groups of threads per slot of long serial loops (slot_threads.h;
  // NVFUSER_DISABLE=threads_per_slot: one thread per slot).
  bool threadsPerSlot = true;
  // Outputs stored inside a serial reduction's loop where they read what
  // it reads (loop_outputs.h; NVFUSER_DISABLE=loop_outputs: their own
  // family's slots).
  bool loopOutputs = true;
  // Pointwise segments that transpose an input go through shared-memory
  // tiles (transpose_plan.h; NVFUSER_DISABLE=transpose_tiles: strided
  // reads).
  bool transposeTiles = true;
  // ...for tiled dims of at least this extent (NVFUSER_ENABLE=
  // transpose_tiles_everywhere: 2, how the fuzzer reaches the strategy
  // with small tensors).
  int64_t transposeMinExtent = kMinTransposeExtent;
  // Pointwise and serial-reduction kernels compiled with a register cap
  // where that holds one more block per SM and spills nothing, as row
  // kernels always are (NVFUSER_ENABLE=register_caps_everywhere; an
  // experiment, not measured as a default).
  bool registerCapsEverywhere = false;
  // Pointwise families take their slots in the memory order of the input
  // they read most (input_loop_order.h; NVFUSER_DISABLE=input_loop_order:
  // the outputs' order).
  bool inputLoopOrder = true;
  // ...where the innermost runs of every output are whole multiples of
  // this many bytes (NVFUSER_ENABLE=input_loop_order_everywhere: 0, runs
  // of any length, how the fuzzer reaches the order with small tensors).
  int64_t inputOrderMinRunBytes = kMinInputOrderRunBytes;
  // Strides (elements) of the segment's inputs the kernel is specialized
  // to, per input; empty, or an empty entry: dense.
  std::vector<std::vector<int64_t>> inputStrides;
  DeviceTraits device;
  // Asked for every family's width (none: the widest widths the bytes
  // allow, unproven; a generator given such a plan fails on a width that
  // does not hold). The runtime and generateKernel(fusion, ...) set it.
  std::shared_ptr<const LaneProof> laneProof;
};

// The plan of scheduler `type` for its extracted segment `segment` (a
// generated-kernel scheduler: pointwise, reduction or inner_persistent);
// no, with the reason, when the generator cannot build the segment or the
// segment is not of that scheduler's kind (a pointwise segment with a
// reduction, an inner_persistent one without row reductions).
Decision planKernel(SchedulerType type, const Fusion& segment, KernelPlan* plan,
                    const KernelPlanOptions& options = {});

// The scheduler whose plan a whole fusion gets when no segmenter chose one
// (tests and tools that generate a kernel for a fusion directly):
// reduction if it reduces, else pointwise.
SchedulerType kernelSchedulerFor(const Fusion& fusion);

}  // namespace nvfuser
