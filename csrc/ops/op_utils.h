// Small helpers shared by the builder functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/fusion.h"

namespace nvfuser {

// "[i0, 1, 8 ex 16]": a tensor's shape as consumers see it, for messages.
std::string shapeString(const TensorView* tv);
std::string valDescription(const Val* v);  // "T3 [i0, 8] Float"

// Wraps a possibly negative dim into [0, rank) or throws naming the op.
int64_t normalizeDim(int64_t dim, int64_t rank, const std::string& op);
std::vector<int64_t> normalizeDims(const std::vector<int64_t>& dims,
                                   int64_t rank, const std::string& op);

// Every operand must come from one fusion; returns it.
Fusion* commonFusion(const std::vector<Val*>& vals, const std::string& op);

TensorView* checkTensor(Val* v, const std::string& op, const char* what);
// Whether a dim of tv is known to have no elements (an empty index).
bool hasKnownZero(const TensorView* tv);

// Combines two same-position dims of elementwise operands (broadcasting),
// unifying extents that must match; throws naming the op and operands.
IterDomain combineDims(Fusion* f, const IterDomain& a, const IterDomain& b,
                       const std::string& op, const Val* va, const Val* vb,
                       int64_t dim);

}  // namespace nvfuser
