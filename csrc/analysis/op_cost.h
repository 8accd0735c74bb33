// How costly an op is to compute again per element: what decides whether
// the kernel generator computes a value where a select may discard it, and
// whether the segmenter lets a consumer recompute a broadcast value.
#pragma once

#include "ir/expr.h"

namespace nvfuser {

// Broadcast, expand, reshape, permute, squeeze, slice and set: ops whose
// value is their operand's at another index (no arithmetic, no load of
// their own).
bool movesElementsOnly(const Expr* e);

// A few instructions with no side effects: casts, negation, comparisons,
// adds and multiplies, selects, and ops that only move elements (index
// maps, pads, cats, constants, iota). Transcendentals, divisions,
// reductions, gathers and random ops are not.
bool isCheapToRecompute(const Expr* e);

// Elementwise math of at least a transcendental's cost (sin, exp, pow,
// erf...): what a broadcast multiplies when each copy recomputes it.
bool isCostlyElementwise(const Expr* e);

}  // namespace nvfuser
