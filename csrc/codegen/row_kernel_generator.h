// The row strategy for reductions of the innermost dims (row sums,
// softmax, RMS norm, layer norm): one block per row. Each reduction is one
// pass over the row and a block reduction (warp shuffles, then one value
// per warp in shared memory); later passes and the outputs read the
// reduced values from registers. Short rows are persistent (each thread
// owns up to 8 vectors of the row, loaded once); longer rows loop and
// re-read (L1/L2-resident). Column sums of a norm backward ride along
// (row_reduction_plan.h). Not a public header.
#pragma once

#include <string>
#include <vector>

#include "codegen/value_builder.h"

namespace nvfuser {
namespace codegen_detail {

// One vector of a row a thread works on: the inner indices, the element
// offset variable, and (persistent rows) the flag saying it is in the row.
struct RowChunk {
  Index inner;
  std::string k;
  std::string active;  // empty: always in the row (a loop)
};

// The whole extracted fusion is the segment: row sources may be anywhere.
inline const TensorView* rowSource(const TensorView* out,
                                   const RowReductionPlan& plan) {
  return nvfuser::rowSource(out, plan, [](const Expr*) { return true; });
}

class RowKernelGenerator : public KernelValueBuilder {
 public:
  using KernelValueBuilder::KernelValueBuilder;

  KernelSource generate(const std::string& name) override;
  bool provesLanes(size_t f, std::string* why) override;

 protected:
  // A reduced value has one key per row: the row plan admits only uses
  // that stay in the row (keepsRows), so however a reshape spelled its
  // index, it is this row's value (looked up under another key it would be
  // recomputed per element: a full pass over the row for every element).
  std::string valueKey(const Val* v, const Index& idx) const override;
  // Every reduction is one of the row's passes (rowReduce); a serial loop
  // here would go over the row again for every element it is used by.
  Value reduce(const Expr* e, const Val* v, const Index& idx) override;

 private:
  // The plan's row launch into the members below.
  void takeLaunch();
  // The per-row loop body with v lanes.
  std::string rowBody(const RowReductionPlan& plan, int64_t v);
  // Persistent rows whose later passes read inputs the first does not:
  // the loads of every pass before the first block reduction
  // (NVFUSER_DISABLE=early_loads: where used).
  bool laterPassesReadMore(const RowReductionPlan& plan) const;
  void loadEveryPassFirst();
  // Column sums (row_reduction_plan.h; row_column_sums.cpp): the adds of
  // one chunk of a row into shared memory, the shared accumulators before
  // the row loop, and the combination of the blocks' partials after it
  // (workspace at nvf_ws, arrival counter at countersAt).
  std::vector<std::string> columnSumAdds(const RowReductionPlan& plan,
                                         const RowChunk& chunk);
  std::string columnSumPrologue(const RowReductionPlan& plan) const;
  std::string columnSumEpilogue(const RowReductionPlan& plan,
                                const std::vector<size_t>& outputs,
                                int64_t countersAt) const;
  // Block-cooperative reduction of `e` over the current row; caches its
  // output(s) at the row index.
  void rowReduce(const Expr* e, const RowReductionPlan& plan);
  // Opens the loop over this thread's vectors of the row (persistent rows:
  // no loop) and returns the vectors of one iteration.
  std::vector<RowChunk> openRowLoop(const RowReductionPlan& plan);
  void closeRowLoop();
  // Index variables of the inner dims at element `k` of the row.
  Index innerIndex(const RowReductionPlan& plan, const std::string& k);
  // The index of a tensor whose non-size-1 dims are rows (+ inner).
  Index rowIndex(const TensorView* tv, const Index& inner) const;
  // Row-shaped outputs, written by one thread, and the full-row outputs
  // and column sums of each of this thread's vectors (rowBody).
  void writeRowOutputs(const RowReductionPlan& plan, int64_t v);

  Index rowIdx_;  // the current row's indices
  // One vector per thread per row: no loop over the row, every pass reuses
  // the values in registers.
  bool persistent_ = false;
  int64_t persistentVectors_ = 1;  // per thread
  int64_t persistentStride_ = 0;   // elements between a thread's vectors
  int64_t rowReductions_ = 0;      // block reductions emitted in this row
  std::vector<RowChunk> persistentChunks_;
};

}  // namespace codegen_detail
}  // namespace nvfuser
