// Builders of nvFuser's indexing ops: index_select, gather and
// take_along_axis, all one GatherOp (ir/exprs.h says what each reads).
#pragma once

#include <cstdint>

#include "ir/exprs.h"
#include "ir/fusion.h"

namespace nvfuser {

// torch.index_select: index is 1-D (or 0-dim, giving size 1 along dim);
// the output is the lookup's shape with `dim` the index's length.
TensorView* indexSelect(TensorView* lookup, TensorView* index, int64_t dim);
// torch.gather: index has the lookup's rank and is at most as large in
// every dim but `dim`; the output has the index's shape.
TensorView* gather(TensorView* lookup, TensorView* index, int64_t dim);
// numpy.take_along_axis (nvFuser's argument order): like gather, but the
// dims other than `dim` broadcast against each other as elementwise
// operands do (size-1 dims of either side expand).
TensorView* takeAlongAxis(TensorView* lookup, TensorView* index, int64_t dim);
// One of the three by type (replay).
TensorView* gatherOp(GatherOpType op, TensorView* lookup, TensorView* index,
                     int64_t dim);

}  // namespace nvfuser
