// One scheduler per SchedulerType. canSchedule says whether one kernel (or
// one ATen call, or a view) of this kind can run the whole segment,
// prologue included, and why not.
#pragma once

#include "scheduler/decision.h"
#include "scheduler/scheduler_type.h"
#include "scheduler/segment_view.h"

namespace nvfuser {

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual SchedulerType type() const = 0;
  virtual Decision canSchedule(const SegmentView& view) const = 0;
};

// Shared checks used by several schedulers.
bool isMatmulLike(const Expr* e);
// Ops only ATen computes here, one per expr_eval segment: matmul,
// linear, cumsum (a scan), scatter (writes at run-time indices) and
// aten_call (a library operator called by name).
bool isAtenOnly(const Expr* e);
bool isReductionLike(const Expr* e);
// Ops whose output can be a view of their input: broadcast, expand,
// permute, squeeze, slice, reshape (isViewOp decides for a reshape).
bool isViewExpr(const Expr* e);
// "op T3" for reasons.
std::string exprRef(const Expr* e);
// Pads with non-zero widths and cats nest one branch per op in a generated
// kernel (and one level of the generator's walk): deeper than this, a
// segment is several kernels. Deep nesting defeats the compiler anyway.
constexpr int64_t kMaxBranchDepth = 32;
// The most pads and cats on one path through exprs (topologically
// ordered).
int64_t maxBranchDepth(const std::vector<const Expr*>& exprs);
// No when some output is computed through more than kMaxBranchDepth
// nested pads and cats.
Decision branchDepthFits(const SegmentView& view);

}  // namespace nvfuser
