#include "segmenter/segment_extractor.h"

#include <unordered_map>

#include "exceptions.h"
#include "ops/replay.h"

namespace nvfuser {

namespace {
// Values of the complete fusion and their copies in the segment's fusion.
class Extraction {
 public:
  Extraction(const SegmentedGroup& group, ExtractedSegment& seg)
      : group_(group), seg_(seg), dst_(*seg.fusion) {}

  void addTensorInput(const TensorView* in) {
    TensorView* tv = dst_.newTensor(in->noReductions(), in->dtype());
    tv->setInputLayout(in->contiguity(), in->strideOrder(), in->isCpuScalar());
    dst_.addInput(tv);
    map_[in] = tv;
    seg_.inputs.push_back(in);
  }

  // Copies e once every input has its copy (scalars on the way replicated).
  void replay(const Expr* e, bool checkDtypes) {
    std::vector<Val*> ins;
    for (const Val* i : e->inputs()) {
      ins.push_back(lookup(i));
    }
    std::vector<Val*> outs = replayExpr(e, ins);
    for (size_t k = 0; k < outs.size(); ++k) {
      NVF_ASSERT(!checkDtypes || outs[k]->dtype() == e->output(k)->dtype(),
                 "extract changed the dtype of ", e->output(k)->ref());
      map_[e->output(k)] = outs[k];
    }
  }

  void addOutput(const TensorView* o) {
    dst_.addOutput(map_.at(o));
    seg_.outputs.push_back(o);
  }

 private:
  // The copy of v. Scalars: constants are cloned, fusion-input scalars
  // become inputs, and scalar exprs are replicated, inputs first in the
  // order a depth-first walk meets them; an explicit stack, since scalar
  // chains may be as long as the fusion.
  Val* lookup(const Val* root) {
    std::vector<const Val*> stack = {root};
    while (!stack.empty()) {
      const Val* v = stack.back();
      if (map_.count(v)) {
        stack.pop_back();
        continue;
      }
      NVF_ASSERT(!v->isTensor(), "extract: tensor ", v->ref(),
                 " is neither an input nor produced in group g", group_.id);
      const Expr* def = v->definition();
      if (v->asScalar()->isConst() || def == nullptr) {
        map_[v] = leafScalar(v->asScalar());
        stack.pop_back();
        continue;
      }
      const size_t before = stack.size();
      for (auto it = def->inputs().rbegin(); it != def->inputs().rend(); ++it) {
        if (!map_.count(*it)) {
          stack.push_back(*it);
        }
      }
      if (stack.size() == before) {
        replay(def, /*checkDtypes=*/false);
        stack.pop_back();
      }
    }
    return map_.at(root);
  }

  Val* leafScalar(const Scalar* s) {
    if (s->isConst()) {
      return dst_.newScalar(s->dtype(), s->value());
    }
    Val* out = dst_.newScalar(s->dtype(), std::nullopt);
    dst_.addInput(out);
    seg_.inputs.push_back(s);
    return out;
  }

  const SegmentedGroup& group_;
  ExtractedSegment& seg_;
  Fusion& dst_;
  std::unordered_map<const Val*, Val*> map_;
};
}  // namespace

ExtractedSegment extractSegment(const SegmentedGroup& group) {
  ExtractedSegment seg;
  seg.fusion = std::make_unique<Fusion>();
  Extraction x(group, seg);
  for (const TensorView* in : group.inputs) {
    x.addTensorInput(in);
  }
  for (const Expr* e : group.prologue) {
    x.replay(e, /*checkDtypes=*/true);
  }
  for (const Expr* e : group.body) {
    x.replay(e, /*checkDtypes=*/true);
  }
  for (const TensorView* o : group.outputs) {
    x.addOutput(o);
  }
  return seg;
}

}  // namespace nvfuser
