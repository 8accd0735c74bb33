// How a planned kernel covers its work on the GPU: its output families and
// their vectors, the split of a lone sum over threads and blocks,
// persistent or looping rows. planKernel (kernel_plan.h) evaluates these
// rules at the widths the generator's lane proof holds for, and the plan
// carries the results; the generator takes them as they are. The unroll
// depth of a serial loop (serialUnroll) depends on the loop's extent only,
// and the generator asks it per loop.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/exprs.h"
#include "ir/fusion.h"
#include "scheduler/row_reduction_plan.h"

namespace nvfuser {

// What a plan needs to know of the GPU; without one (CPU builds, tests,
// tools) an H200's.
struct DeviceTraits {
  int64_t smCount = 132;
  int64_t residentThreadsPerSm = 2048;
  // Threads resident at once (the width a plan aims to fill).
  int64_t residentThreads() const { return smCount * residentThreadsPerSm; }
};

// Whether some expr of the fusion reduces (isReductionLike).
bool reduces(const Fusion& fusion);
// Whether some reduction of the fusion loops: reduces more than one element
// into each of its outputs (a sum over a size-1 dim costs one load).
bool loopsToReduce(const Fusion& fusion);

// Whether a kernel takes this fusion input by value: scalars, and 0-dim CPU
// tensors (torch.compile's constants), whose value is copied into the
// launch's parameters instead of the device reading host memory.
bool passedByValue(const Val* input);

// An output a serial-reduction family stores inside the loop of one of its
// reductions (scheduler/loop_outputs.h): at each iteration, `source` (of
// the reduction input's shape) at the loop's index, viewed to the output.
struct LoopOutputPlan {
  size_t output = 0;  // index into the fusion's outputs
  const ReductionOp* reduction = nullptr;
  const TensorView* source = nullptr;
};

// Outputs sharing one loop domain (their shape without size-1 dims): one
// grid-stride range of slots of vectorWidth consecutive innermost elements
// each.

struct OutputFamilyPlan {
  std::vector<int64_t> loop;
  std::vector<size_t> outputs;  // indices into the fusion's outputs
  int64_t numel = 0;
  // The widest the family's bytes allow (16-byte stores, loads of at most
  // 64 bytes), capped where the lane proof did not hold for a wider one.
  int64_t vectorWidth = 1;
  // Why a wider vector did not hold ("4 lanes do not hold: a pad boundary
  // at 2"), for the kernel's comments; empty when the bytes decided.
  std::string narrowedBecause;
  // Adjacent threads that share each slot, splitting its outermost serial
  // reduction loops (slot_threads.h); 1 for pointwise kernels.
  int64_t threadsPerSlot = 1;
  // Outputs of the reductions' input shape written inside their loops.
  std::vector<LoopOutputPlan> loopOutputs;
  // Pointwise: the loop dims in the order the slots take them, outermost
  // first, the innermost last (scheduler/input_loop_order.h); empty:
  // row-major, the outputs' order.
  std::vector<int64_t> slotDims;
};

// The families of a pointwise or serial-reduction kernel, in output order.
// Lanes: 16 bytes per output store; an input load of wider elements takes
// up to four 16-byte chunks (int64 position ids next to bf16 outputs). A
// kernel that reduces reads far more than it writes: its lanes follow
// 16-byte loads of the narrowest input instead (up to 32-byte stores).
// widthCaps: per output, the widest vector its family may take (the lane
// proof's answers so far; absent: no cap).
using WidthCaps = std::map<size_t, int64_t>;
std::vector<OutputFamilyPlan> planOutputFamilies(const Fusion& segment,
                                                 bool vectorize,
                                                 const WidthCaps& widthCaps);
// The rule above for each family without loop outputs, from the outputs
// it has now.
void setFamilyVectorWidths(const Fusion& segment, bool vectorize,
                           const WidthCaps& widthCaps,
                           std::vector<OutputFamilyPlan>* families);

// The widest vector of a row kernel: from the full-row outputs' 16-byte
// stores; with row-shaped outputs only, from the inputs' 16-byte loads.
int64_t rowVectorWidth(const Fusion& segment, const RowReductionPlan& rows,
                       bool vectorize, const WidthCaps& widthCaps);

// A lone floating-point sum whose few output vectors would not fill the
// GPU: its longest reduced dim is split into chunks, one thread per (chunk,
// vector); a block combines its chunks in shared memory, and with several
// blocks per column their sums are added atomically in a workspace that
// the last block of the column writes out.
struct SplitSumPlan {
  const ReductionOp* sum = nullptr;  // none: no split
  int64_t axis = -1;                 // the sum input's longest reduced dim
  int64_t rows = 1;                  // its extent
  int64_t total = 1;                 // elements summed per output element
  int64_t targetThreads = 0;         // about 8 per core of the device
  // Chunks of `axis` at the plan's vector width (factorFor its slots);
  // 1: not split after all.
  int64_t factor = 1;
  static constexpr int64_t kBlock = 256;
  static constexpr int64_t kTileVectors = 32;

  // Chunks of `axis` for a kernel of `slots` output vectors (1: none).
  int64_t factorFor(int64_t slots) const;
  // Chunks a block takes: up to kBlock / kTileVectors, but no more than
  // there are (a block of 8 warps for 2 chunks would idle 6); the block's
  // other threads take more vectors.
  static int64_t chunksPerBlock(int64_t factor);
  // Threads that sum each vector: each takes one row in this many (chunks
  // rounded up to whole blocks).
  static int64_t rowStride(int64_t factor);
};
SplitSumPlan planSplitSum(const ReductionOp* sum, const DeviceTraits& device);

// A row kernel's block at a vector width: rows of up to 8 x 128 vectors
// are held in registers (persistent), 128 threads per block where the row
// is long enough, 512 when the kernel also sums columns (a block then takes
// many rows in turn: more threads keep more loads in flight); longer rows
// loop with enough threads for one vector each, 32 to 512.
struct RowLaunch {
  bool persistent = false;
  int64_t vectorsPerThread = 1;  // persistent: a thread's vectors per row
  int64_t threads = 32;
  int64_t stride = 0;  // persistent: elements between a thread's vectors
  bool operator==(const RowLaunch& o) const {
    return persistent == o.persistent &&
           vectorsPerThread == o.vectorsPerThread && threads == o.threads &&
           stride == o.stride;
  }
};
RowLaunch rowLaunch(const RowReductionPlan& rows, int64_t width);

// Unroll depth of a serial reduction loop of `extent` iterations: loads of
// several iterations in flight together, 8 deep for long loops and a split
// sum's chunks (those have few threads per byte), else 4.
int64_t serialUnroll(int64_t extent, bool chunked);

}  // namespace nvfuser
