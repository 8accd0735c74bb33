// A read-only view of a candidate segment of a complete fusion: its exprs,
// the forwarded prologue it would receive, and the tensors crossing its
// boundary. Schedulers answer canSchedule on it without mutating anything.
#pragma once

#include <unordered_set>
#include <vector>

#include "ir/fusion.h"

namespace nvfuser {

class SegmentView {
 public:
  // body and prologue are sorted by Expr::position(). forwarded is the set of
  // every forwarded expr of the fusion (their uses are never boundaries).
  // horizontal: the view joins independent groups (horizontal fusion), so
  // its outputs may span several loop domains.
  SegmentView(const Fusion& fusion, std::vector<const Expr*> body,
              std::vector<const Expr*> prologue,
              const std::unordered_set<const Expr*>* forwarded,
              bool horizontal = false);

  const Fusion& fusion() const { return *fusion_; }
  const std::vector<const Expr*>& body() const { return body_; }
  const std::vector<const Expr*>& prologue() const { return prologue_; }
  // Prologue then body: a topological order (prologues read only seeds).
  const std::vector<const Expr*>& exprs() const { return all_; }

  // Tensors read but not produced here; isFusionInput tells which of them
  // are true fusion inputs (the rest come from other segments).
  const std::vector<const TensorView*>& inputs() const { return inputs_; }
  bool isFusionInput(const TensorView* tv) const;
  // Tensors produced by the body that are fusion outputs or read by a
  // non-forwarded expr outside this view.
  const std::vector<const TensorView*>& outputs() const { return outputs_; }
  // O(log size): a binary search by position.
  bool contains(const Expr* e) const;
  bool horizontal() const { return horizontal_; }

 private:
  void collectInputs();

  const Fusion* fusion_;
  std::vector<const Expr*> body_;
  std::vector<const Expr*> prologue_;
  std::vector<const Expr*> all_;
  std::vector<const TensorView*> inputs_;
  std::vector<const TensorView*> outputs_;
  bool horizontal_ = false;
};

// Outputs grouped by loop domain (shape without size-1 dims), families and
// their members in first-seen order.
std::vector<std::vector<const TensorView*>> outputFamilies(
    const std::vector<const TensorView*>& outputs);

// Whether some output of one family is computed, inside the view, from an
// output of another family (a kernel would then recompute one family's
// values at the other's indices instead of sharing them).
bool familiesDependOnEachOther(
    const SegmentView& view,
    const std::vector<std::vector<const TensorView*>>& families);

}  // namespace nvfuser
