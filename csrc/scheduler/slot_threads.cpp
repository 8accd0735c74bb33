#include "scheduler/slot_threads.h"

#include <algorithm>
#include <set>

#include "ir/exprs.h"
#include "scheduler/family_order.h"

namespace nvfuser {

namespace {
bool shuffles(DataType t) {
  return t == DataType::Float || t == DataType::Double || t == DataType::Half ||
         t == DataType::BFloat16 || isIntegralType(t);
}

// Whether every reduction the family's outputs depend on accumulates in a
// type a warp shuffle moves.
bool reductionsShuffle(const Fusion& segment, const OutputFamilyPlan& family) {
  std::set<const Expr*> seen;
  std::vector<const Val*> stack;
  for (size_t o : family.outputs) {
    stack.push_back(segment.outputs()[o]);
  }
  while (!stack.empty()) {
    const Expr* e = stack.back()->definition();
    stack.pop_back();
    if (e == nullptr || !seen.insert(e).second) {
      continue;
    }
    if (e->type() == ExprType::Reduction || e->type() == ExprType::VarMean) {
      for (const Val* v : e->outputs()) {
        if (!shuffles(v->dtype())) {
          return false;
        }
      }
    }
    for (const Val* in : e->inputs()) {
      stack.push_back(in);
    }
  }
  return true;
}
}  // namespace

int64_t threadsPerSlot(const Fusion& segment, const OutputFamilyPlan& family,
                       const std::vector<InterleavedCat>& interleavedCats,
                       const DeviceTraits& device) {
  for (const InterleavedCat& c : interleavedCats) {
    if (std::find(family.outputs.begin(), family.outputs.end(), c.output) !=
        family.outputs.end()) {
      return 1;
    }
  }
  const double reads = serialReadsPerElement(segment, family);
  const int64_t slots =
      family.numel / std::max<int64_t>(family.maxVectorWidth, 1);
  const int64_t resident = device.smCount * kResidentThreadsPerSm;
  int64_t k = 1;
  while (k < 32 && slots * 2 * k <= resident &&
         reads / double(2 * k) >= double(kMinLoopStepsPerLane)) {
    k *= 2;
  }
  if (k > 1 && !reductionsShuffle(segment, family)) {
    return 1;
  }
  return k;
}

void planThreadsPerSlot(const Fusion& segment,
                        const std::vector<InterleavedCat>& interleavedCats,
                        const DeviceTraits& device,
                        std::vector<OutputFamilyPlan>* families) {
  for (OutputFamilyPlan& f : *families) {
    f.threadsPerSlot = threadsPerSlot(segment, f, interleavedCats, device);
  }
}

}  // namespace nvfuser
