#include "scheduler/reduction_split.h"

#include <algorithm>

#include "analysis/tensor_shape.h"
#include "ir/exprs.h"
#include "ops/arith.h"
#include "ops/reduction_ops.h"
#include "ops/shape_ops.h"
#include "scheduler/reduction_analysis.h"

namespace nvfuser {

namespace {
// Partial results wanted in total (enough threads for a large GPU: an
// H200 ran the 2^18 partials of an RMSNorm weight gradient, 32768 threads
// of 8 lanes, at 69% of copy bandwidth), and the least rows a chunk and
// the least chunks worth a second kernel.
constexpr int64_t kPartialElements = int64_t(1) << 19;
constexpr int64_t kMinChunkRows = 32;
constexpr int64_t kMinChunks = 8;
// Row reductions (one block per row) with fewer rows than this leave most
// SMs idle; rows at least kLongRow long are split into chunks of at least
// kMinChunkLength (a full sum of 2M values ran in one block).
constexpr int64_t kFewRows = 64;
constexpr int64_t kLongRow = int64_t(1) << 16;
constexpr int64_t kMinChunkLength = 4096;
constexpr int64_t kWantedRowBlocks = 512;

// The largest divisor of n that is at most limit.
int64_t divisorAtMost(int64_t n, int64_t limit) {
  for (int64_t d = std::min(n, limit); d > 1; --d) {
    if (n % d == 0) {
      return d;
    }
  }
  return 1;
}
// Chunks for a serial reduction of `rows` rows into `outputs` values: 1
// (no split) for short ones, ones with many outputs, and a lone sum (a
// floating-point sum that is a fusion output as it is, cast or viewed:
// the kernel generator splits it itself, in one kernel).
int64_t serialChunks(const Expr* e, int64_t rows, int64_t outputs) {
  const bool loneSum =
      isFloatingSum(e) && onlyCastOrViewedToAnOutput(e->output(0));
  if (loneSum || rows < kMinChunkRows * kMinChunks ||
      outputs * kMinChunks > kPartialElements) {
    return 1;
  }
  return divisorAtMost(
      rows, std::min(kPartialElements / outputs, rows / kMinChunkRows));
}

// Chunks for a row reduction of `outputs` rows of length `rows`: 1 unless
// there are too few rows to give every SM a block and the rows are long.
int64_t rowChunks(int64_t rows, int64_t outputs) {
  if (outputs >= kFewRows || rows < kLongRow) {
    return 1;
  }
  const int64_t wanted = (kWantedRowBlocks + outputs - 1) / outputs;
  return divisorAtMost(rows, std::min(wanted, rows / kMinChunkLength));
}

}  // namespace

ReplayOverride reductionSplitter() {
  return [](const Expr* e,
            const std::vector<Val*>& ins) -> std::optional<std::vector<Val*>> {
    const auto* red = exprAs<ReductionOp>(e);
    if (red == nullptr || !ins[0]->isTensor()) {
      return std::nullopt;
    }
    TensorView* in = ins[0]->asTensor();
    std::vector<int64_t> shape = concreteShape(in);
    std::vector<int64_t> axes = red->axes();
    std::sort(axes.begin(), axes.end());
    if (axes.empty() ||
        axes.back() - axes.front() + 1 != static_cast<int64_t>(axes.size())) {
      return std::nullopt;
    }
    int64_t rows = 1;
    for (int64_t a : axes) {
      rows *= shape[size_t(a)];
    }
    const int64_t outputs =
        std::max<int64_t>(numel(in) / std::max(rows, int64_t(1)), 1);
    const int64_t chunks = innermostReduced(shape, axes)
                               ? rowChunks(rows, outputs)
                               : serialChunks(e, rows, outputs);
    if (chunks < kMinChunks) {
      return std::nullopt;
    }
    // [P..., R..., Q...] -> [P..., chunks, rows / chunks, Q...]
    std::vector<int64_t> split;
    for (int64_t d = 0; d < axes.front(); ++d) {
      split.push_back(shape[size_t(d)]);
    }
    split.push_back(chunks);
    split.push_back(rows / chunks);
    for (size_t d = size_t(axes.back()) + 1; d < shape.size(); ++d) {
      split.push_back(shape[d]);
    }
    const DataType dtype = e->output(0)->dtype();
    TensorView* partial = reduction(red->op(), reshape(in, split),
                                    {axes.front() + 1}, false, dtype);
    TensorView* total =
        reduction(red->op(), segmentSet(partial), {axes.front()}, false, dtype);
    return std::vector<Val*>{total};
  };
}

}  // namespace nvfuser
