#include "scheduler/loop_outputs.h"

#include <algorithm>
#include <set>

#include "analysis/tensor_shape.h"
#include "ir/exprs.h"

namespace nvfuser {

namespace {

// Walks stop after this many values (the decision is a heuristic; a
// segment past it keeps its families).
constexpr size_t kMaxWalk = 512;

bool isView(const Expr* e) {
  switch (e->type()) {
    case ExprType::LoadStore:
    case ExprType::Permute:
    case ExprType::Reshape:
    case ExprType::Squeeze:
    case ExprType::Broadcast:
      return true;
    default:
      return false;
  }
}

// Tensors reached backwards from `from` through `through` ops whose
// operands have `shape` (size-1 dims aside); `visit` sees each, and the
// walk does not pass the ones it returns false for.
template <typename Through, typename Visit>
void walkSameShape(const std::vector<const Val*>& from,
                   const std::vector<int64_t>& shape, Through through,
                   Visit visit) {
  std::vector<const Val*> stack(from.begin(), from.end());
  std::set<const Val*> seen(from.begin(), from.end());
  while (!stack.empty() && seen.size() <= kMaxWalk) {
    const Val* v = stack.back();
    stack.pop_back();
    if (!visit(v)) {
      continue;
    }
    const Expr* e = v->definition();
    if (e == nullptr || !through(e)) {
      continue;
    }
    for (const Val* in : e->inputs()) {
      if (in->isTensor() && shapeWithoutOnes(in->asTensor()) == shape &&
          seen.insert(in).second) {
        stack.push_back(in);
      }
    }
  }
}

// Keeps the element's index (size-1 dims aside).
bool keepsIndex(const Expr* e) {
  return isElementwise(e) || e->type() == ExprType::Broadcast ||
         e->type() == ExprType::Squeeze;
}

// The values of v's shape that v is computed from through ops that keep
// the index and that are not computed so themselves (fusion inputs,
// reduced values, pads, cats...): what its loads, loops and branches
// read at v's index.
std::set<const Val*> sources(const TensorView* v) {
  std::set<const Val*> found;
  walkSameShape({v}, shapeWithoutOnes(v), keepsIndex, [&](const Val* x) {
    const Expr* d = x->definition();
    if (d == nullptr || !keepsIndex(d)) {
      found.insert(x);
      return false;
    }
    return true;
  });
  return found;
}

bool shareSources(const TensorView* a, const TensorView* b) {
  const std::set<const Val*> sa = sources(a);
  for (const Val* s : sources(b)) {
    if (sa.count(s) > 0) {
      return true;
    }
  }
  return false;
}

// The value of `shape` that `out` is a chain of views of (out itself when
// it has that shape), or nullptr.
const TensorView* viewSource(const TensorView* out,
                             const std::vector<int64_t>& shape) {
  const TensorView* t = out;
  for (size_t steps = 0; steps < kMaxWalk; ++steps) {
    if (concreteShape(t) == shape) {
      return t;
    }
    const Expr* e = t->definition();
    if (e == nullptr || !isView(e) || !e->input(0)->isTensor()) {
      return nullptr;
    }
    t = e->input(0)->asTensor();
  }
  return nullptr;
}

int64_t longestReducedDim(const ReductionOp* r) {
  const std::vector<int64_t> shape = concreteShape(r->input(0)->asTensor());
  int64_t longest = 1;
  for (int64_t a : r->axes()) {
    longest = std::max(longest, shape[size_t(a)]);
  }
  return longest;
}

// Whether the family's slots, each split over up to 32 lanes (no more
// than the loop's longest dim), fill at least half the device's resident
// threads (a memory-bound loop keeps its bandwidth there).
bool fillsDevice(const OutputFamilyPlan& family, const ReductionOp* r,
                 const DeviceTraits& device) {
  const int64_t slots = family.numel / std::max<int64_t>(family.vectorWidth, 1);
  const int64_t lanes = std::min<int64_t>(32, longestReducedDim(r));
  return 2 * slots * lanes >= device.residentThreads();
}

// Moves output o into `into` if one of its slot reductions can write it.
bool moveIntoLoop(const Fusion& segment, size_t o,
                  const std::vector<const ReductionOp*>& reductions,
                  const DeviceTraits& device, OutputFamilyPlan* into) {
  const TensorView* out = segment.outputs()[o]->asTensor();
  for (const ReductionOp* r : reductions) {
    const TensorView* in = r->input(0)->asTensor();
    const TensorView* source = viewSource(out, concreteShape(in));
    if (source == nullptr || !shareSources(source, in) ||
        !fillsDevice(*into, r, device)) {
      continue;
    }
    into->loopOutputs.push_back(LoopOutputPlan{o, r, source});
    // Reduction kernels store up to 32 bytes per lane group.
    const int64_t width = std::max<int64_t>(32 / dataTypeSize(out->dtype()), 1);
    into->vectorWidth = std::min(into->vectorWidth, width);
    return true;
  }
  return false;
}

}  // namespace

std::vector<const ReductionOp*> slotReductions(const Fusion& segment,
                                               const OutputFamilyPlan& family) {
  std::vector<const Val*> outs;
  for (size_t o : family.outputs) {
    outs.push_back(segment.outputs()[o]);
  }
  std::vector<const ReductionOp*> found;
  walkSameShape(outs, family.loop, keepsIndex, [&](const Val* v) {
    const Expr* d = v->definition();
    if (d != nullptr && d->type() == ExprType::Reduction) {
      const auto* r = exprAs<ReductionOp>(d);
      if (r->input(0)->isTensor() &&
          std::find(found.begin(), found.end(), r) == found.end()) {
        found.push_back(r);
      }
      return false;
    }
    return true;
  });
  return found;
}

void planLoopOutputs(const Fusion& segment, const DeviceTraits& device,
                     std::vector<OutputFamilyPlan>* families) {
  for (size_t f = 0; f < families->size(); ++f) {
    const std::vector<const ReductionOp*> reductions =
        slotReductions(segment, (*families)[f]);
    if (reductions.empty()) {
      continue;
    }
    for (size_t g = 0; g < families->size(); ++g) {
      if (g == f || !(*families)[g].loopOutputs.empty()) {
        continue;
      }
      std::vector<size_t>& outs = (*families)[g].outputs;
      outs.erase(std::remove_if(outs.begin(), outs.end(),
                                [&](size_t o) {
                                  return moveIntoLoop(segment, o, reductions,
                                                      device, &(*families)[f]);
                                }),
                 outs.end());
    }
  }
  families->erase(std::remove_if(families->begin(), families->end(),
                                 [](const OutputFamilyPlan& fam) {
                                   return fam.outputs.empty() &&
                                          fam.loopOutputs.empty();
                                 }),
                  families->end());
}

std::vector<const Expr*> loopOutputViews(const Fusion& segment,
                                         const LoopOutputPlan& planned) {
  std::vector<const Expr*> views;
  const Val* t = segment.outputs()[planned.output];
  while (t != planned.source) {
    const Expr* e = t->definition();
    views.push_back(e);
    t = e->input(0);
  }
  std::reverse(views.begin(), views.end());
  return views;
}

}  // namespace nvfuser
