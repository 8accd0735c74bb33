#include "ops/concretize.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <sstream>
#include <unordered_map>

#include "exceptions.h"
#include "ir/list_string.h"
#include "ops/arith.h"
#include "ops/composite_ops.h"
#include "ops/op_utils.h"
#include "ops/replay.h"
#include "ops/rng_ops.h"

namespace nvfuser {

namespace {

std::string inputName(const Fusion& f, size_t i) {
  return "input " + std::to_string(i) + " (" + f.inputs()[i]->ref() + ")";
}

// Declared dims ordered from outermost to innermost by stride order.
std::vector<int64_t> allocationOrder(const TensorView* tv) {
  const int64_t rank = static_cast<int64_t>(tv->domain().size());
  std::vector<int64_t> order(rank);
  std::iota(order.begin(), order.end(), 0);
  const auto& so = tv->strideOrder();
  if (!so.empty()) {
    std::sort(order.begin(), order.end(),
              [&](int64_t a, int64_t b) { return so[a] > so[b]; });
  }
  return order;
}

void checkContiguity(const Fusion& f, size_t idx, const TensorView* tv,
                     const InputDescriptor& in) {
  int64_t numel = 1;
  for (int64_t s : in.sizes) {
    numel *= s;
  }
  if (numel == 0 || in.strides.size() != in.sizes.size()) {
    return;
  }
  std::vector<int64_t> order = allocationOrder(tv);
  int64_t expected = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    int64_t d = *it;
    if (tv->domain()[d].isBroadcast()) {
      continue;  // broadcast dims have no stride requirement
    }
    std::optional<bool> c = tv->contiguity()[d];
    if (c.value_or(false) && in.sizes[d] != 1) {
      NVF_CHECK(in.strides[d] == expected, inputName(f, idx),
                " is not contiguous as declared: dim ", d, " has stride ",
                in.strides[d], " but contiguity requires ", expected,
                " (sizes ", listToString(in.sizes), ", strides ",
                listToString(in.strides),
                "); pass a contiguous tensor or declare contiguity False");
    }
    expected = in.strides[d] * in.sizes[d];
  }
}

}  // namespace

void validateInputs(const Fusion& f,
                    const std::vector<InputDescriptor>& inputs) {
  const auto& decl = f.inputs();
  NVF_CHECK(inputs.size() == decl.size(), "execute: the fusion has ",
            decl.size(), " inputs but ", inputs.size(), " were given");
  // Root symbol -> (input index, dim, size) that bound it first.
  std::map<int64_t, std::tuple<size_t, size_t, int64_t>> bound;
  for (size_t i = 0; i < decl.size(); ++i) {
    const Val* v = decl[i];
    const InputDescriptor& in = inputs[i];
    if (!v->isTensor()) {
      NVF_CHECK_KIND(!in.isTensor, Type, inputName(f, i),
                     " is a scalar of type ", toString(v->dtype()),
                     " but a tensor was given");
      continue;
    }
    NVF_CHECK_KIND(in.isTensor, Type, inputName(f, i), " is a tensor but a ",
                   in.typeName.empty() ? "non-tensor" : in.typeName,
                   " was given");
    const TensorView* tv = v->asTensor();
    NVF_CHECK_KIND(in.dtype == tv->dtype(), Type, inputName(f, i),
                   " was defined with dtype ", toString(tv->dtype()),
                   " but the tensor has dtype ", toString(in.dtype));
    const auto& dom = tv->domain();
    NVF_CHECK(in.sizes.size() == dom.size(), inputName(f, i),
              " was defined with rank ", dom.size(),
              " but the tensor has rank ", in.sizes.size(), " (sizes ",
              listToString(in.sizes), ")");
    for (size_t d = 0; d < dom.size(); ++d) {
      int64_t s = in.sizes[d];
      if (dom[d].isBroadcast() && !dom[d].hasExpanded) {
        NVF_CHECK(s == 1, inputName(f, i), " dim ", d,
                  " was defined as a broadcast dim (size 1) but the tensor ",
                  "has size ", s);
        continue;
      }
      if (dom[d].hasExpanded && in.strides.size() == dom.size()) {
        NVF_CHECK(s == 1 || in.strides[d] == 0, inputName(f, i), " dim ", d,
                  " was defined as an expanded broadcast (contiguity None) "
                  "but the tensor has stride ",
                  in.strides[d], " there, not 0");
      }
      Extent e = f.canonical(dom[d].logicalExtent());
      if (e.isConst()) {
        NVF_CHECK(s == e.value, inputName(f, i), " dim ", d, " has size ", s,
                  " but the fusion requires ", e.value);
        continue;
      }
      auto [it, inserted] = bound.emplace(e.symbol, std::make_tuple(i, d, s));
      if (!inserted) {
        auto [pi, pd, ps] = it->second;
        NVF_CHECK(ps == s, inputName(f, i), " dim ", d, " has size ", s,
                  " but ", inputName(f, pi), " dim ", pd, " has size ", ps,
                  "; the fusion requires these sizes to be equal");
      }
    }
    if (tv->isCpuScalar()) {
      NVF_CHECK(in.isCpuScalarTensor, inputName(f, i),
                " was defined with is_cpu=True but the tensor is not a "
                "0-dim CPU tensor");
    }
    checkContiguity(f, i, tv, in);
  }
}

namespace {
// Input tensor tv with the sizes of `in`.
TensorView* concreteInput(Fusion& dst, const TensorView* tv,
                          const InputDescriptor& in) {
  std::vector<IterDomain> dom;
  for (size_t d = 0; d < tv->domain().size(); ++d) {
    const IterDomain& id = tv->domain()[d];
    Extent size = Extent::constant(in.sizes[d]);
    if (!id.isBroadcast()) {
      dom.push_back(IterDomain::iteration(size));
    } else if (id.hasExpanded && size.value != 1) {
      dom.push_back(IterDomain::expandedBroadcast(size));
    } else {
      dom.push_back(IterDomain::broadcast());
    }
  }
  TensorView* ctv = dst.newTensor(std::move(dom), tv->dtype());
  ctv->setInputLayout(tv->contiguity(), tv->strideOrder(), tv->isCpuScalar());
  dst.addInput(ctv);
  return ctv;
}

// e replayed on its concrete inputs: the override's rewrite, triu and
// welford expanded, random ops in their shape form and seeded (the drawn
// seed and offset inputs are made for the first one without a seed).
std::vector<Val*> concreteExpr(const Expr* e, const std::vector<Val*>& ins,
                               const ReplayOverride& override,
                               ConcreteFusion& result) {
  std::optional<std::vector<Val*>> replaced;
  if (override) {
    replaced = override(e, ins);
  }
  if (!replaced) {  // triu, welford: ordinary ops once sizes are known
    replaced = expandComposite(e, ins);
  }
  const auto* rng = exprAs<RngOp>(e);
  if (replaced || rng == nullptr) {
    return replaced ? *replaced : replayExpr(e, ins);
  }
  Fusion& dst = *result.fusion;
  if (!rng->hasSeed() && !result.drawsRngState) {
    defineScalar(dst, DataType::Int, std::nullopt);
    defineScalar(dst, DataType::Int, std::nullopt);
    result.drawsRngState = true;
  }
  Val* seed = nullptr;
  Val* offset = nullptr;
  if (result.drawsRngState) {  // the concrete fusion's last two inputs
    const std::vector<Val*>& in = dst.inputs();
    seed = in[in.size() - 2];
    offset = in.back();
  }
  return {concretizeRng(rng, ins, seed, offset)};
}
}  // namespace

ConcreteFusion concretize(const Fusion& f,
                          const std::vector<InputDescriptor>& inputs,
                          const ReplayOverride& override) {
  validateInputs(f, inputs);
  ConcreteFusion result;
  result.fusion = std::make_unique<Fusion>();
  Fusion& dst = *result.fusion;
  std::unordered_map<const Val*, Val*> map;
  for (size_t i = 0; i < f.inputs().size(); ++i) {
    const Val* v = f.inputs()[i];
    map[v] =
        v->isTensor()
            ? concreteInput(dst, v->asTensor(), inputs[i])
            : static_cast<Val*>(defineScalar(dst, v->dtype(), std::nullopt));
  }
  auto lookup = [&](const Val* v) -> Val* {
    auto it = map.find(v);
    if (it != map.end()) {
      return it->second;
    }
    NVF_ASSERT(!v->isTensor() && v->asScalar()->isConst(),
               "concretize: unmapped value ", v->ref());
    Val* c = dst.newScalar(v->dtype(), v->asScalar()->value());
    map[v] = c;
    return c;
  };
  for (const Expr* e : f.liveExprs()) {
    std::vector<Val*> ins;
    for (const Val* v : e->inputs()) {
      ins.push_back(lookup(v));
    }
    std::vector<Val*> outs = concreteExpr(e, ins, override, result);
    NVF_ASSERT(outs.size() == e->outputs().size());
    for (size_t k = 0; k < outs.size(); ++k) {
      NVF_ASSERT(outs[k]->dtype() == e->output(k)->dtype(),
                 "concretize changed the dtype of ", e->output(k)->ref());
      map[e->output(k)] = outs[k];
    }
  }
  for (const Val* o : f.outputs()) {
    Val* co = lookup(o);
    dst.addOutput(co);
    result.outputs.push_back(co);
  }
  return result;
}

}  // namespace nvfuser
