// Rebuilds an expr through its builder on new inputs. Concretization uses it
// to re-run shape inference and validation with concrete input sizes.
#pragma once

#include <vector>

#include "ir/expr.h"
#include "ir/fusion.h"

namespace nvfuser {

// newInputs correspond to e->inputs() and live in the destination fusion;
// returns the new outputs in the order of e->outputs().
std::vector<Val*> replayExpr(const Expr* e, const std::vector<Val*>& newInputs);

}  // namespace nvfuser
