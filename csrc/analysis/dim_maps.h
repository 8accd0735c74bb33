// Per-dim values (indices, labels) carried through the ops that only move
// dims: a broadcast, a squeeze, a permute. The generator maps an output's
// index to its operands' and a viewed value's index to its view's; the
// transpose plan maps dim labels the same way.
#pragma once

#include <vector>

#include "exceptions.h"
#include "ir/exprs.h"

namespace nvfuser {

// True for the ops the two maps below take.
inline bool movesDimsOnly(const Expr* e) {
  return e->type() == ExprType::Broadcast || e->type() == ExprType::Squeeze ||
         e->type() == ExprType::Permute;
}

// The operand's dims from the consumer's (`out`, one per output dim): a
// broadcast drops its added dims, a permute puts each back, a squeeze has
// `filler` at each dim it removed.
template <typename T>
std::vector<T> operandDims(const Expr* e, const std::vector<T>& out,
                           const T& filler) {
  std::vector<T> in;
  if (const auto* b = exprAs<BroadcastOp>(e)) {
    const auto& added = b->isBroadcastDim();
    for (size_t d = 0; d < added.size(); ++d) {
      if (!added[d]) {
        in.push_back(out[d]);
      }
    }
  } else if (const auto* s = exprAs<SqueezeOp>(e)) {
    size_t next = 0;
    for (bool squeezed : s->isSqueezed()) {
      in.push_back(squeezed ? filler : out[next++]);
    }
  } else if (const auto* p = exprAs<PermuteOp>(e)) {
    const auto& perm = p->perm();
    in.assign(perm.size(), filler);
    for (size_t i = 0; i < perm.size(); ++i) {
      in[perm[i]] = out[i];
    }
  } else {
    NVF_ASSERT(false, "not an op that only moves dims: ", e->opName());
  }
  return in;
}

// The consumer's dims from its operand's (`in`): the inverse of
// operandDims, with `filler` at each dim a broadcast adds.
template <typename T>
std::vector<T> consumerDims(const Expr* e, const std::vector<T>& in,
                            const T& filler) {
  std::vector<T> out;
  if (const auto* b = exprAs<BroadcastOp>(e)) {
    size_t next = 0;
    for (bool added : b->isBroadcastDim()) {
      out.push_back(added ? filler : in[next++]);
    }
  } else if (const auto* s = exprAs<SqueezeOp>(e)) {
    const auto& squeezed = s->isSqueezed();
    for (size_t d = 0; d < squeezed.size(); ++d) {
      if (!squeezed[d]) {
        out.push_back(in[d]);
      }
    }
  } else if (const auto* p = exprAs<PermuteOp>(e)) {
    for (int64_t d : p->perm()) {
      out.push_back(in[d]);
    }
  } else {
    NVF_ASSERT(false, "not an op that only moves dims: ", e->opName());
  }
  return out;
}

}  // namespace nvfuser
