#include "scheduler/segment_view.h"

#include <algorithm>
#include <functional>
#include <map>
#include <unordered_map>

#include "analysis/tensor_shape.h"
#include "exceptions.h"
#include "ir/producer_walk.h"

namespace nvfuser {

namespace {
bool byPosition(const Expr* a, const Expr* b) {
  return a->position() < b->position();
}

bool inSorted(const std::vector<const Expr*>& exprs, const Expr* e) {
  auto it = std::lower_bound(exprs.begin(), exprs.end(), e, byPosition);
  return it != exprs.end() && *it == e;
}
}  // namespace

// The segmenter builds a view for every merge question it cannot answer
// from summaries, so this stays free of per-expr allocation: membership is
// a binary search by position, and a value is produced here exactly when
// its definition is a member.
SegmentView::SegmentView(const Fusion& fusion, std::vector<const Expr*> body,
                         std::vector<const Expr*> prologue,
                         const std::unordered_set<const Expr*>* forwarded,
                         bool horizontal)
    : fusion_(&fusion),
      body_(std::move(body)),
      prologue_(std::move(prologue)),
      horizontal_(horizontal) {
  NVF_ASSERT(std::is_sorted(body_.begin(), body_.end(), byPosition) &&
                 std::is_sorted(prologue_.begin(), prologue_.end(), byPosition),
             "a segment view's exprs must be sorted by position");
  all_ = prologue_;
  all_.insert(all_.end(), body_.begin(), body_.end());
  collectInputs();
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
        external = !contains(use) && !isForwarded;
      }
      if (external) {
        outputs_.push_back(o->asTensor());
      }
    }
  }
}

void SegmentView::collectInputs() {
  // Every read of a tensor produced elsewhere, then the first read of each
  // tensor, in reading order.
  std::vector<std::pair<const Val*, size_t>> reads;
  for (const Expr* e : all_) {
    for (const Val* in : e->inputs()) {
      const Expr* def = in->definition();
      if (in->isTensor() && (def == nullptr || !contains(def))) {
        reads.emplace_back(in, reads.size());
      }
    }
  }
  std::sort(reads.begin(), reads.end(), [](const auto& a, const auto& b) {
    return std::less<const Val*>()(a.first, b.first) ||
           (a.first == b.first && a.second < b.second);
  });
  auto sameValue = [](const auto& a, const auto& b) {
    return a.first == b.first;
  };
  reads.erase(std::unique(reads.begin(), reads.end(), sameValue), reads.end());
  std::sort(reads.begin(), reads.end(),
            [](const auto& a, const auto& b) { return a.second < b.second; });
  for (const auto& r : reads) {
    inputs_.push_back(r.first->asTensor());
  }
}

bool SegmentView::contains(const Expr* e) const {
  return inSorted(body_, e) || inSorted(prologue_, e);
}

bool SegmentView::isFusionInput(const TensorView* tv) const {
  return fusion_->isInput(tv);
}

std::vector<std::vector<const TensorView*>> outputFamilies(
    const std::vector<const TensorView*>& outputs) {
  // Indexed by loop domain: a view may have thousands of outputs in as many
  // loop domains.
  std::map<std::vector<int64_t>, size_t> familyOf;
  std::vector<std::vector<const TensorView*>> families;
  for (const TensorView* o : outputs) {
    auto [it, fresh] = familyOf.emplace(shapeWithoutOnes(o), families.size());
    if (fresh) {
      families.emplace_back();
    }
    families[it->second].push_back(o);
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
    const bool independent = walkProducers(
        {families[f].begin(), families[f].end()}, [&](const Val* v) {
          auto fam = familyOf.find(v);
          if (fam != familyOf.end() && fam->second != f) {
            return WalkStep::Stop;
          }
          const Expr* def = v->definition();
          return def == nullptr || !view.contains(def) ? WalkStep::Skip
                                                       : WalkStep::Expand;
        });
    if (!independent) {
      return true;
    }
  }
  return false;
}

}  // namespace nvfuser
