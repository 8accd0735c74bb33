#include "scheduler/segment_view.h"

#include <algorithm>

namespace nvfuser {

SegmentView::SegmentView(const Fusion& fusion, std::vector<const Expr*> body,
                         std::vector<const Expr*> prologue,
                         const std::unordered_set<const Expr*>* forwarded)
    : fusion_(&fusion), body_(std::move(body)), prologue_(std::move(prologue)) {
  all_ = prologue_;
  all_.insert(all_.end(), body_.begin(), body_.end());
  members_.insert(all_.begin(), all_.end());
  std::unordered_set<const Val*> producedSet;
  for (const Expr* e : all_) {
    for (const Val* o : e->outputs()) {
      producedSet.insert(o);
      if (o->isTensor()) {
        produced_.push_back(o->asTensor());
      }
    }
  }
  std::unordered_set<const Val*> seenInputs;
  for (const Expr* e : all_) {
    for (const Val* in : e->inputs()) {
      if (in->isTensor() && !producedSet.count(in) &&
          seenInputs.insert(in).second) {
        inputs_.push_back(in->asTensor());
      }
    }
  }
  for (const Expr* e : body_) {
    for (const Val* o : e->outputs()) {
      if (!o->isTensor()) {
        continue;
      }
      bool external = fusion.isOutput(o);
      for (const Expr* use : o->uses()) {
        if (external) {
          break;
        }
        bool isForwarded = forwarded != nullptr && forwarded->count(use) > 0;
        external = !members_.count(use) && !isForwarded;
      }
      if (external) {
        outputs_.push_back(o->asTensor());
      }
    }
  }
}

bool SegmentView::isFusionInput(const TensorView* tv) const {
  return fusion_->isInput(tv);
}

}  // namespace nvfuser
