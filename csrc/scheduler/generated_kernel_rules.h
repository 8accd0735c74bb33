// What the kernel generator can build, asked by every scheduler whose
// segments become generated kernels (pointwise, reduction,
// inner_persistent). A scheduler that says yes has checked these, so the
// generator never meets a segment it cannot build and nothing falls back to
// ATen behind the segmenter's back.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/fusion.h"
#include "scheduler/decision.h"
#include "scheduler/row_reduction_plan.h"
#include "scheduler/segment_view.h"

namespace nvfuser {

// A broadcast-back of a reduced value recomputes the reduction for every
// element it reaches; allowed only for reductions this small.
constexpr int64_t kMaxRecomputedReduction = 32;

// Whether generated kernels have a type for values of this dtype (complex
// values do not).
bool hasKernelType(DataType t);
// The first input or output of `e` whose dtype has no kernel type (nullptr
// when none): such an op runs through ATen, the one op of an expr_eval
// segment.
const Val* valueWithoutKernelType(const Expr* e);

// Every value has a kernel type; every gather's lookup is an input of the
// kernel (gathersReadMemory); row reductions fit one row layout with
// row-shaped outputs; other reductions do not reduce the innermost dim and
// are not broadcast back over more than kMaxRecomputedReduction values.
// A gather (index_select, gather, take_along_axis) is a load at an index the
// kernel reads at run time, so its lookup tensor must be in memory: an input
// of the segment (a fusion input or another segment's output), never a
// value computed or forwarded into it.
Decision gathersReadMemory(const std::vector<const Expr*>& exprs,
                           const InSegment& inside);

Decision generatedKernelFits(const std::vector<const Expr*>& exprs,
                             const std::vector<const TensorView*>& outputs,
                             const InSegment& inside);
// Also no when an output is a view that needs no kernel: a transpose of a
// computed value, or views of a segment input (viewOutputsStayViews).
Decision generatedKernelFits(const SegmentView& view);
Decision viewOutputsStayViews(const SegmentView& view);
Decision generatedKernelFits(const Fusion& fusion);

}  // namespace nvfuser
