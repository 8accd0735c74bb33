#include "scheduler/segment_view.h"

#include <algorithm>
#include <unordered_map>

#include "analysis/tensor_shape.h"

namespace nvfuser {

SegmentView::SegmentView(const Fusion& fusion, std::vector<const Expr*> body,
                         std::vector<const Expr*> prologue,
                         const std::unordered_set<const Expr*>* forwarded,
                         bool horizontal)
    : fusion_(&fusion),
      body_(std::move(body)),
      prologue_(std::move(prologue)),
      horizontal_(horizontal) {
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

std::vector<std::vector<const TensorView*>> outputFamilies(
    const std::vector<const TensorView*>& outputs) {
  std::vector<std::vector<int64_t>> loops;
  std::vector<std::vector<const TensorView*>> families;
  for (const TensorView* o : outputs) {
    std::vector<int64_t> loop = shapeWithoutOnes(o);
    auto it = std::find(loops.begin(), loops.end(), loop);
    if (it == loops.end()) {
      loops.push_back(loop);
      families.emplace_back();
      it = loops.end() - 1;
    }
    families[size_t(it - loops.begin())].push_back(o);
  }
  return families;
}

bool familiesDependOnEachOther(
    const SegmentView& view,
    const std::vector<std::vector<const TensorView*>>& families) {
  std::unordered_map<const Val*, size_t> familyOf;
  for (size_t f = 0; f < families.size(); ++f) {
    for (const TensorView* o : families[f]) {
      familyOf[o] = f;
    }
  }
  for (size_t f = 0; f < families.size(); ++f) {
    std::vector<const Val*> stack(families[f].begin(), families[f].end());
    std::unordered_set<const Val*> seen(stack.begin(), stack.end());
    while (!stack.empty()) {
      const Val* v = stack.back();
      stack.pop_back();
      auto fam = familyOf.find(v);
      if (fam != familyOf.end() && fam->second != f) {
        return true;
      }
      const Expr* def = v->definition();
      if (def == nullptr || !view.contains(def)) {
        continue;
      }
      for (const Val* in : def->inputs()) {
        if (seen.insert(in).second) {
          stack.push_back(in);
        }
      }
    }
  }
  return false;
}

}  // namespace nvfuser
