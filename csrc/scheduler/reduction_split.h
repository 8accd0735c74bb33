// Splits a long reduction with few outputs into two: partial results over
// chunks of the reduced rows (many outputs, so many threads), a segment
// boundary, then the reduction of the partials. Applied while concretizing
// (sizes known), so segmentation sees two reductions: the gradient of a
// norm's weight (a sum over 16384 rows into 4096 values, then a cast) ran
// with one thread per output, 20x slower than the default backend.
#pragma once

#include "ops/concretize.h"

namespace nvfuser {

// A concretize() override implementing the split. Row (innermost)
// reductions are split only when there are fewer than 64 rows of at least
// 2^16 values (a full sum: one block per row would leave the GPU idle);
// serial ones unless short, with many outputs, or a lone sum over one dim
// straight into a fusion output (the kernel generator splits those itself,
// with atomic adds). var_mean and reductions whose reduced dims are not
// adjacent are left alone.
ReplayOverride reductionSplitter();

}  // namespace nvfuser
