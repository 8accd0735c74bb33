// Walks from values to the values they are computed from. One loop with an
// explicit stack for every such walk: recursion would be as deep as the
// fusion's longest chain (100k ops), and each pass wrote the same loop.
#pragma once

#include <unordered_set>
#include <vector>

#include "ir/expr.h"
#include "ir/val.h"

namespace nvfuser {

// What a walk does after visiting a value.
enum class WalkStep {
  Expand,  // walk on into the inputs of its definition
  Skip,    // not into its producers (they may still be reached otherwise)
  Stop,    // end the walk
};

// Visits each of `roots` and every value they are computed from once,
// depth-first (a value's last input first). visit(v) returns a WalkStep;
// values without a definition are visited and not expanded. Returns false
// when a visit stopped the walk.
template <typename Visit>
bool walkProducers(const std::vector<const Val*>& roots, Visit visit) {
  std::unordered_set<const Val*> seen;
  std::vector<const Val*> stack;
  for (const Val* r : roots) {
    if (seen.insert(r).second) {
      stack.push_back(r);
    }
  }
  while (!stack.empty()) {
    const Val* v = stack.back();
    stack.pop_back();
    const WalkStep step = visit(v);
    if (step == WalkStep::Stop) {
      return false;
    }
    const Expr* e = v->definition();
    if (step == WalkStep::Skip || e == nullptr) {
      continue;
    }
    for (const Val* in : e->inputs()) {
      if (seen.insert(in).second) {
        stack.push_back(in);
      }
    }
  }
  return true;
}

}  // namespace nvfuser
