#include "segmenter/segment_extractor.h"

#include <functional>
#include <unordered_map>

#include "exceptions.h"
#include "ops/replay.h"

namespace nvfuser {

ExtractedSegment extractSegment(const SegmentedGroup& group) {
  ExtractedSegment seg;
  seg.fusion = std::make_unique<Fusion>();
  Fusion& dst = *seg.fusion;
  std::unordered_map<const Val*, Val*> map;
  for (const TensorView* in : group.inputs) {
    TensorView* tv = dst.newTensor(in->noReductions(), in->dtype());
    tv->setInputLayout(in->contiguity(), in->strideOrder(), in->isCpuScalar());
    dst.addInput(tv);
    map[in] = tv;
    seg.inputs.push_back(in);
  }
  // Scalars: constants are cloned, fusion-input scalars become inputs, and
  // scalar exprs are replicated.
  std::function<Val*(const Val*)> lookup = [&](const Val* v) -> Val* {
    auto it = map.find(v);
    if (it != map.end()) {
      return it->second;
    }
    NVF_ASSERT(!v->isTensor(), "extract: tensor ", v->ref(),
               " is neither an input nor produced in group g", group.id);
    const Scalar* s = v->asScalar();
    Val* out = nullptr;
    if (s->isConst()) {
      out = dst.newScalar(s->dtype(), s->value());
    } else if (s->definition() == nullptr) {
      out = dst.newScalar(s->dtype(), std::nullopt);
      dst.addInput(out);
      seg.inputs.push_back(v);
    } else {
      const Expr* def = s->definition();
      std::vector<Val*> ins;
      for (const Val* i : def->inputs()) {
        ins.push_back(lookup(i));
      }
      std::vector<Val*> outs = replayExpr(def, ins);
      for (size_t k = 0; k < outs.size(); ++k) {
        map[def->output(k)] = outs[k];
      }
      out = map.at(v);
    }
    map[v] = out;
    return out;
  };
  auto replay = [&](const Expr* e) {
    std::vector<Val*> ins;
    for (const Val* i : e->inputs()) {
      ins.push_back(lookup(i));
    }
    std::vector<Val*> outs = replayExpr(e, ins);
    for (size_t k = 0; k < outs.size(); ++k) {
      NVF_ASSERT(outs[k]->dtype() == e->output(k)->dtype(),
                 "extract changed the dtype of ", e->output(k)->ref());
      map[e->output(k)] = outs[k];
    }
  };
  for (const Expr* e : group.prologue) {
    replay(e);
  }
  for (const Expr* e : group.body) {
    replay(e);
  }
  for (const TensorView* o : group.outputs) {
    dst.addOutput(map.at(o));
    seg.outputs.push_back(o);
  }
  return seg;
}

}  // namespace nvfuser
