#include "scheduler/family_order.h"

#include <algorithm>
#include <set>

#include "analysis/tensor_shape.h"
#include "ir/exprs.h"
#include "ir/producer_walk.h"

namespace nvfuser {

std::vector<const Expr*> reductionsOfFamily(const Fusion& segment,
                                            const OutputFamilyPlan& family) {
  std::vector<const Expr*> reductions;
  std::set<const Expr*> seen;  // a var_mean defines two values
  std::vector<const Val*> roots;
  for (size_t o : family.outputs) {
    roots.push_back(segment.outputs()[o]);
  }
  walkProducers(roots, [&](const Val* v) {
    const Expr* e = v->definition();
    if (e == nullptr || !seen.insert(e).second) {
      return WalkStep::Skip;
    }
    if ((e->type() == ExprType::Reduction || e->type() == ExprType::VarMean) &&
        e->input(0)->isTensor()) {
      reductions.push_back(e);
    }
    return WalkStep::Expand;
  });
  return reductions;
}

double serialReadsPerElement(const Fusion& segment,
                             const OutputFamilyPlan& family) {
  if (family.numel <= 0) {
    return 0.0;
  }
  double reads = 0.0;
  for (const Expr* e : reductionsOfFamily(segment, family)) {
    reads += static_cast<double>(numel(e->input(0)->asTensor())) /
             static_cast<double>(family.numel);
  }
  return reads;
}

void orderFamiliesByWork(const Fusion& segment,
                         std::vector<OutputFamilyPlan>* families) {
  std::vector<std::pair<double, OutputFamilyPlan>> keyed;
  for (OutputFamilyPlan& f : *families) {
    keyed.emplace_back(serialReadsPerElement(segment, f), std::move(f));
  }
  std::stable_sort(
      keyed.begin(), keyed.end(),
      [](const auto& a, const auto& b) { return a.first > b.first; });
  families->clear();
  for (auto& k : keyed) {
    families->push_back(std::move(k.second));
  }
}

}  // namespace nvfuser
