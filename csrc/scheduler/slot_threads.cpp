#include "scheduler/slot_threads.h"

#include <algorithm>

#include "analysis/tensor_shape.h"
#include "ir/exprs.h"
#include "scheduler/family_order.h"
#include "scheduler/row_reduction_plan.h"

namespace nvfuser {

namespace {
bool shuffles(DataType t) {
  return t == DataType::Float || t == DataType::Double || t == DataType::Half ||
         t == DataType::BFloat16 || isIntegralType(t);
}

// What the reductions the family's outputs depend on allow: whether each
// has an output type a warp shuffle moves, and the longest dim any of them
// reduces (the generator splits a reduction's longest dim).
struct FamilyReductions {
  bool shuffle = true;
  int64_t longestDim = 1;
};

FamilyReductions familyReductions(const Fusion& segment,
                                  const OutputFamilyPlan& family) {
  FamilyReductions r;
  for (const Expr* e : reductionsOfFamily(segment, family)) {
    for (const Val* v : e->outputs()) {
      r.shuffle = r.shuffle && shuffles(v->dtype());
    }
    const std::vector<int64_t> shape = concreteShape(e->input(0)->asTensor());
    for (int64_t a : reductionAxes(e)) {
      r.longestDim = std::max(r.longestDim, shape[size_t(a)]);
    }
  }
  return r;
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
  const int64_t slots = family.numel / std::max<int64_t>(family.vectorWidth, 1);
  const int64_t resident = device.residentThreads();
  const FamilyReductions reductions = familyReductions(segment, family);
  if (!reductions.shuffle) {
    return 1;
  }
  int64_t k = 1;
  while (k < 32 && slots * 2 * k <= resident &&
         reads / double(2 * k) >= double(kMinLoopStepsPerLane) &&
         2 * k <= reductions.longestDim) {
    k *= 2;
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
