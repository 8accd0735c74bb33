// What the reduction schedulers need to know about a segment's reductions.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/exprs.h"
#include "scheduler/decision.h"
#include "scheduler/segment_view.h"

namespace nvfuser {

struct ReductionInfo {
  std::vector<const Expr*> reductions;
  std::vector<int64_t> inputShape;  // of every reduction's input
  std::vector<int64_t> axes;        // reduced axes of that input
  // Some value computed from a reduced value is as large as the reduction
  // input again (the normalization pattern).
  bool broadcastsBack = false;
  // The reduced axes are the innermost non-size-1 dims.
  bool innermost = false;
  // Reductions of different inputs or axes (none of them a row reduction).
  bool mixedSignatures = false;
};

// Serial reductions one may read through (a chain of that many nested
// loops at most).
constexpr int kMaxChainedReductions = 3;

// Whether the innermost non-size-1 dim of `shape` is among `axes`.
bool innermostReduced(const std::vector<int64_t>& shape,
                      const std::vector<int64_t>& axes);

// A cast, a copy, or an op that only adds or removes size-1 dims (what a
// keepdim sum, a view to the weight's shape and a dtype cast wrap around
// a weight gradient): the value is the same at the same non-size-1 index.
bool isCastOrUnitView(const Expr* e);

// The value a fusion output is a chain of single-use isCastOrUnitView ops
// of (the output itself when there is none).
const Val* beforeCastsAndUnitViews(const Val* out);

// Whether `v` reaches a fusion output only through a chain of single-use
// isCastOrUnitView ops (or is one with no uses).
bool onlyCastOrViewedToAnOutput(const Val* v);

// Whether `e` is a Sum into Float or Double (what the generator's split
// sum, with its float atomics, can take).
bool isFloatingSum(const Expr* e);

// The sum the kernel generator splits over threads and blocks (atomic adds
// into a workspace): the segment's only reduction, a floating-point Sum,
// and its only output is that sum, cast or viewed. nullptr otherwise.
const ReductionOp* splittableSum(const std::vector<const Val*>& outputs,
                                 const std::vector<const Expr*>& exprs);

// Reduced rows (product of the reduced extents) and output values of a
// serial (not innermost) reduction at which one thread per output vector
// looping over every row leaves the GPU idle: the loop is latency-bound
// (a [4096, 2048] column sum took 4.7 ms on an H200, 0.5% of bandwidth).
constexpr int64_t kStarvedSerialRows = 256;
constexpr int64_t kStarvedSerialOutputs = int64_t(1) << 16;

// Fails when there is no reduction, a matmul, or reductions with different
// signatures (input sizes or axes). `columnSums` (a row plan's) are left
// out: the row kernel adds them up on the side.
Decision analyzeReductions(const SegmentView& view, ReductionInfo* info,
                           const std::vector<const Expr*>& columnSums = {});

}  // namespace nvfuser
