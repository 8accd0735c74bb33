// The row strategy's layout of a segment: every row reduction reduces the
// same trailing dims (`inner`) of inputs whose other dims are `rows`, and
// every output is row- or full-row-shaped (or a reshape of one), or the
// cast or view of a column sum. The schedulers decide with it; the
// generator builds the row kernel from it.
//
// A column sum reduces a full-row value over the rows into one value per
// column (a norm backward's weight gradient next to its input gradient,
// both from one read of x and dy): each block adds the rows it takes into
// shared memory, adds those partials into a workspace, and the last block
// to finish writes the sums out.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "ir/fusion.h"
#include "scheduler/decision.h"

namespace nvfuser {

struct RowReductionPlan {
  bool active = false;
  std::vector<int64_t> rows;   // non-size-1 kept dims
  std::vector<int64_t> inner;  // non-size-1 reduced dims
  int64_t numRows = 1;
  int64_t rowLength = 1;
  // Floating-point sums over every row dim of a full-row value whose
  // result only reaches a fusion output (cast or viewed).
  std::vector<const Expr*> columnSums;
};

// Shared memory the column sums' partials may take per block (one
// accumulator per column per sum): within the 48 KiB a block has without
// opting in, next to the block reduction's buffers.
constexpr int64_t kColumnSumSharedBytes = 32 * 1024;

// Bytes of one accumulator per column of every column sum (a block's
// shared partials, the workspace's totals).
int64_t columnSumBytes(const RowReductionPlan& plan);

// Whether `e` is one of plan.columnSums.
bool isColumnSum(const Expr* e, const RowReductionPlan& plan);

// The column sum (of plan.columnSums) whose cast or view `out` is, or
// nullptr.
const Expr* columnSumOf(const TensorView* out, const RowReductionPlan& plan);

// Whether an expr is part of the segment being planned (walks back from an
// output stop at the segment's boundary).
using InSegment = std::function<bool(const Expr*)>;

const std::vector<int64_t>& reductionAxes(const Expr* e);

// The row-shaped or full-row-shaped value an output of a row kernel
// stores: the output itself, or the value it is a reshape (or copy) of
// inside the segment. A reshape keeps row-major order, so the output's
// elements sit at the same offsets as its source's (a norm's output viewed
// as [tokens, hidden] for the next matmul). nullptr when there is none.
const TensorView* rowSource(const TensorView* out, const RowReductionPlan& plan,
                            const InSegment& inside);

// Not active when no reduction reduces the innermost dim; fails when the
// reductions or outputs do not fit one row layout.
Decision planRowReduction(const std::vector<const Expr*>& exprs,
                          const std::vector<const TensorView*>& outputs,
                          const InSegment& inside, RowReductionPlan* plan);
// The same for a whole (extracted) fusion.
Decision planRowReduction(const Fusion& fusion, RowReductionPlan* plan);

}  // namespace nvfuser
