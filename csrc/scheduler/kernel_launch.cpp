#include "scheduler/kernel_launch.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "analysis/tensor_shape.h"
#include "scheduler/scheduler.h"

namespace nvfuser {

namespace {
// Halves v until it divides the innermost extent (a vector never crosses a
// row of the loop domain).
int64_t dividing(int64_t v, int64_t extent) {
  while (v > 1 && extent % v != 0) {
    v /= 2;
  }
  return v;
}

struct InputBytes {
  int64_t widest = 1;
  int64_t narrowest = 8;
};

InputBytes inputBytes(const Fusion& segment) {
  InputBytes b;
  for (const Val* in : segment.inputs()) {
    if (!passedByValue(in)) {
      b.widest = std::max(b.widest, dataTypeSize(in->dtype()));
      b.narrowest = std::min(b.narrowest, dataTypeSize(in->dtype()));
    }
  }
  return b;
}
}  // namespace

bool reduces(const Fusion& fusion) {
  for (const Expr* e : fusion.exprs()) {
    if (isReductionLike(e)) {
      return true;
    }
  }
  return false;
}

bool loopsToReduce(const Fusion& fusion) {
  for (const Expr* e : fusion.exprs()) {
    if (isReductionLike(e) &&
        numel(e->input(0)->asTensor()) > numel(e->output(0)->asTensor())) {
      return true;
    }
  }
  return false;
}

bool passedByValue(const Val* input) {
  return !input->isTensor() || input->asTensor()->isCpuScalar();
}

namespace {
// The widest vector any of `outputs` may take.
int64_t capOf(const std::vector<size_t>& outputs, const WidthCaps& caps) {
  int64_t cap = std::numeric_limits<int64_t>::max();
  for (size_t o : outputs) {
    if (auto c = caps.find(o); c != caps.end()) {
      cap = std::min(cap, c->second);
    }
  }
  return cap;
}
}  // namespace

void setFamilyVectorWidths(const Fusion& segment, bool vectorize,
                           const WidthCaps& widthCaps,
                           std::vector<OutputFamilyPlan>* families) {
  // Walks of the segment, once for all families.
  const InputBytes in = inputBytes(segment);
  const bool reduction = reduces(segment);
  const int64_t storeBytes = reduction ? 32 : 16;
  for (OutputFamilyPlan& fam : *families) {
    if (!fam.loopOutputs.empty()) {
      continue;  // narrowed by what its loops store (loop_outputs.h)
    }
    if (!vectorize) {
      fam.vectorWidth = 1;
      continue;
    }
    int64_t outBytes = 1;
    for (size_t o : fam.outputs) {
      outBytes =
          std::max(outBytes, dataTypeSize(segment.outputs()[o]->dtype()));
    }
    int64_t v = std::min<int64_t>(storeBytes / outBytes, 64 / in.widest);
    if (reduction) {
      v = std::min<int64_t>(v, 16 / in.narrowest);
    }
    v = std::min(v, capOf(fam.outputs, widthCaps));
    fam.vectorWidth = dividing(v, fam.loop.empty() ? 1 : fam.loop.back());
  }
}

std::vector<OutputFamilyPlan> planOutputFamilies(const Fusion& segment,
                                                 bool vectorize,
                                                 const WidthCaps& widthCaps) {
  std::vector<OutputFamilyPlan> families;
  for (size_t o = 0; o < segment.outputs().size(); ++o) {
    const TensorView* tv = segment.outputs()[o]->asTensor();
    std::vector<int64_t> loop = shapeWithoutOnes(tv);
    auto fam =
        std::find_if(families.begin(), families.end(),
                     [&](const OutputFamilyPlan& f) { return f.loop == loop; });
    if (fam == families.end()) {
      families.push_back(
          OutputFamilyPlan{loop, {}, numel(tv), 1, {}, 1, {}, {}});
      fam = families.end() - 1;
    }
    fam->outputs.push_back(o);
  }
  setFamilyVectorWidths(segment, vectorize, widthCaps, &families);
  return families;
}

int64_t rowVectorWidth(const Fusion& segment, const RowReductionPlan& rows,
                       bool vectorize, const WidthCaps& widthCaps) {
  if (!vectorize) {
    return 1;
  }
  int64_t outBytes = 0;
  for (const Val* o : segment.outputs()) {
    const TensorView* tv = o->asTensor();
    const TensorView* source =
        rowSource(tv, rows, [](const Expr*) { return true; });
    if (columnSumOf(tv, rows) == nullptr &&
        shapeWithoutOnes(source) != rows.rows) {
      outBytes = std::max(outBytes, dataTypeSize(tv->dtype()));
    }
  }
  const InputBytes in = inputBytes(segment);
  const int64_t v = outBytes > 0
                        ? std::min<int64_t>(16 / outBytes, 64 / in.widest)
                        : std::max<int64_t>(16 / in.widest, 1);
  std::vector<size_t> all(segment.outputs().size());
  std::iota(all.begin(), all.end(), 0);
  return dividing(std::min(v, capOf(all, widthCaps)), rows.inner.back());
}

SplitSumPlan planSplitSum(const ReductionOp* sum, const DeviceTraits& device) {
  SplitSumPlan p;
  if (sum == nullptr) {
    return p;
  }
  p.sum = sum;
  const std::vector<int64_t> shape = concreteShape(sum->input(0)->asTensor());
  for (int64_t a : sum->axes()) {
    p.total *= shape[a];
    if (shape[a] > p.rows) {
      p.rows = shape[a];
      p.axis = a;
    }
  }
  p.targetThreads = device.smCount * 1024;
  return p;
}

int64_t SplitSumPlan::factorFor(int64_t slots) const {
  if (sum == nullptr) {
    return 1;
  }
  // A thread loops over the other reduced dims whole, and over at least
  // 32 values in all.
  const int64_t wanted = targetThreads / std::max<int64_t>(slots, 1);
  const int64_t factor = std::min({wanted, rows / 8, total / 32});
  if (factor < 2) {
    return 1;
  }
  // Chunks of a multiple of 8 rows: each thread's share of the rows is
  // then a multiple of 8 (no remainder in the unrolled loop) when they
  // divide evenly.
  const int64_t chunk = ((rows + factor - 1) / factor + 7) / 8 * 8;
  return (rows + chunk - 1) / chunk;
}

int64_t SplitSumPlan::chunksPerBlock(int64_t factor) {
  int64_t perBlock = 1;
  while (perBlock < kBlock / kTileVectors && perBlock < factor) {
    perBlock *= 2;
  }
  return perBlock;
}

int64_t SplitSumPlan::rowStride(int64_t factor) {
  const int64_t perBlock = chunksPerBlock(factor);
  return (factor + perBlock - 1) / perBlock * perBlock;
}

RowLaunch rowLaunch(const RowReductionPlan& rows, int64_t width) {
  constexpr int64_t kMaxPersistentVectors = 8;
  constexpr int64_t kPersistentThreads = 128;
  constexpr int64_t kColumnSumThreads = 512;
  constexpr int64_t kMaxLoopingThreads = 512;
  RowLaunch l;
  const int64_t vectors = rows.rowLength / width;
  l.persistent = rows.rowLength % width == 0 && vectors >= 1 &&
                 vectors <= kMaxPersistentVectors * kPersistentThreads;
  if (l.persistent) {
    const int64_t threads =
        rows.columnSums.empty() ? kPersistentThreads : kColumnSumThreads;
    l.vectorsPerThread =
        std::max<int64_t>((vectors + threads - 1) / threads, 1);
    l.threads = std::max<int64_t>(
        ((vectors + l.vectorsPerThread - 1) / l.vectorsPerThread + 31) / 32 *
            32,
        32);
    l.stride = l.threads * width;
    return l;
  }
  while (l.threads < kMaxLoopingThreads && l.threads * width < rows.rowLength) {
    l.threads *= 2;
  }
  return l;
}

int64_t serialUnroll(int64_t extent, bool chunked) {
  constexpr int64_t kDeepUnrollRows = 64;
  return extent >= kDeepUnrollRows || chunked ? 8 : 4;
}

}  // namespace nvfuser
