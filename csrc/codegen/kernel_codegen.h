// Generates one CUDA kernel for a segment (its extracted Fusion) from the
// accepting scheduler's plan: pointwise, serial reduction or rows, each
// strategy a generator of its own (value_builder.h). Outputs are grouped
// into families by loop domain (their shape without size-1 dims); one
// launch covers every family, each a grid-stride range of "slots" of V
// consecutive innermost elements (rows: a block per row). Every value is an
// expression of the loop indices, built by walking back from the outputs
// through each op's dimension map (broadcast, expand, permute, squeeze,
// reshape, slice, pad, cat). Values needed at the same index are computed once;
// at different indices (rotate-half), once per index. Loads and stores are
// vectorized (up to 16 bytes) where the index expression and the input's
// strides and alignment prove the V elements contiguous and aligned.
#pragma once

#include <string>
#include <vector>

#include "ir/fusion.h"
#include "scheduler/decision.h"
#include "scheduler/kernel_plan.h"

namespace nvfuser {

// How one tensor input is laid out in memory; kernels are specialized to it.
struct TensorLayout {
  std::vector<int64_t> strides;  // in elements; 0 for size-1 dims
  bool aligned = true;           // the data pointer is 16-byte aligned
  bool operator==(const TensorLayout& o) const {
    return strides == o.strides && aligned == o.aligned;
  }
};

// Outputs sharing one loop domain, covered by `slots` slots of
// `vectorWidth` elements each.
struct OutputFamily {
  std::vector<int64_t> loop;
  std::vector<size_t> outputs;  // indices into KernelSource::outputs
  int64_t numel = 0;
  int64_t vectorWidth = 1;
  int64_t slots = 0;
  int64_t threadsPerSlot = 1;  // the plan's (scheduler/slot_threads.h)
  // Outputs stored inside the loops of the family's reductions (the
  // plan's: scheduler/loop_outputs.h).
  std::vector<LoopOutputPlan> loopOutputs;
};

struct KernelSource {
  std::string name;
  std::string code;  // complete translation unit for NVRTC
  std::vector<OutputFamily> families;
  int64_t slots = 0;    // over all families (rows, for a row reduction)
  int64_t block = 128;  // threads per block
  // One block per row, reducing cooperatively (reductions of the innermost
  // dims: row sums, softmax, norms).
  bool rowReduction = false;
  // The plan's: compile with a register cap where that holds one more
  // block per SM without spilling (compiler/occupancy_tuner.h).
  bool capRegisters = false;
  // Each slot is the work of a whole block (a row, or a tile of a split
  // sum), not of one thread.
  bool blockPerSlot = false;
  // A block per blockDim slots (the plan's fullGrid); otherwise one
  // resident wave whose threads loop.
  bool fullGrid = false;
  // Bytes of a scratch buffer the kernel takes after its outputs (a split
  // sum's accumulators and per-tile arrival counters). It must be zero at
  // the first launch and every launch leaves it zero again, so the runtime
  // keeps one per stream and never clears it (no fill kernel per call).
  int64_t workspaceBytes = 0;
  // A row kernel that also sums columns over the rows: its blocks take
  // many rows each and combine their partials through the workspace, so
  // it runs one wave of at most kColumnSumBlocksPerSm blocks per SM.
  bool columnSums = false;
  // The kernel gathers: it takes the word an index out of range sets
  // (runtime/device_index_errors.h) after its outputs.
  bool reportsIndexErrors = false;
  // Kernel parameters, in order: one per fusion input (tensors as a data
  // pointer, scalars by value), then one pointer per fusion output (dense,
  // row-major, 16-byte aligned), then the index error word if it reports
  // index errors, then the workspace if it has one.
  std::vector<const Val*> inputs;
  std::vector<const TensorView*> outputs;
};

struct KernelCodegenOptions {
  // 64-bit index math even where 32 bits suffice (NVFUSER_ENABLE=
  // int64_index); by default 32-bit is used whenever every offset fits.
  bool forceInt64Index = false;
  // Pads and cats inside reduction loops without branches, their loads
  // predicated (NVFUSER_DISABLE=predicated_loads keeps the branches).
  bool predicatedLoads = true;
  // ...and outside them (NVFUSER_ENABLE=predicated_loads_everywhere, an
  // experiment).
  bool predicatedLoadsEverywhere = false;
  // ...with operands of any number of cheap ops, not at most 4
  // (NVFUSER_ENABLE=predicated_loads_unbounded, an experiment).
  bool predicatedLoadsUnbounded = false;
  // Inside a branch or loop, the loads a value reads unconditionally are
  // issued before it computes anything, and a persistent row's later
  // passes' loads before its first block reduction (NVFUSER_DISABLE=
  // early_loads: each where it is first used).
  bool earlyLoads = true;
  // ...at a slot's top level too, for all of a family's outputs before the
  // first (NVFUSER_ENABLE=early_loads_everywhere, an experiment).
  bool earlyLoadsEverywhere = false;
  // Reductions at a slot's top level with the same input shape and reduced
  // dims share one loop, and the loads their inputs have in common
  // (NVFUSER_DISABLE=shared_reduction_loops: a loop each).
  bool sharedReductionLoops = true;
  // An add of two same-index sums, read by nothing else, keeps one
  // accumulator: the second sum starts from the first's partial sums
  // (NVFUSER_DISABLE=chained_sums: each its own, added after both).
  bool chainedSums = true;
  // Adds of known zeros are their other operand, adds of pads that do not
  // overlap are a select, and a cast back to the type a value was widened
  // from is that value (NVFUSER_DISABLE=add_folds: each computed as
  // written).
  bool foldAdds = true;
};

// Blocks per SM of a row kernel with column sums (each adds one partial
// per column atomically at its end: more blocks keep more loads in flight
// but add more partials).
constexpr int kColumnSumBlocksPerSm = 4;

struct LaunchParams {
  int64_t grid = 0;
  int64_t block = 0;
};

// The kernel of `plan` (the accepting scheduler's, kernel_plan.h) for an
// extracted segment. layouts: one per fusion input (ignored for scalars);
// empty means every tensor input is dense and aligned.
KernelSource generateKernel(const Fusion& fusion, const KernelPlan& plan,
                            const std::string& name,
                            const std::vector<TensorLayout>& layouts,
                            KernelCodegenOptions options = {});
// The same with the plan of kernelSchedulerFor(fusion), for tests and
// tools that hold a fusion and no segmentation.
KernelSource generateKernel(const Fusion& fusion, const std::string& name,
                            const std::vector<TensorLayout>& layouts,
                            KernelCodegenOptions options = {},
                            const KernelPlanOptions& planOptions = {});
// Grid and block for a kernel on a device with `smCount` multiprocessors,
// each holding `blocksPerSm` of its blocks at once: one full wave (the
// grid-stride loop covers the rest), so no partial last wave idles SMs.
// Row kernels get a block per row.
LaunchParams computeLaunchParams(const KernelSource& kernel, int smCount,
                                 int blocksPerSm);

}  // namespace nvfuser
