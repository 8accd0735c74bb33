#include "symbolic_twin.h"

#include <random>
#include <unordered_map>

#include "exceptions.h"
#include "ops/arith.h"
#include "ops/replay.h"

namespace nvfuser {

namespace {
// The input's declared shape: -1 for most sized dims and some size-1 ones.
std::vector<int64_t> symbolicShape(const TensorView* tv, std::mt19937_64& rng) {
  std::vector<int64_t> shape;
  for (const IterDomain& id : tv->domain()) {
    const bool symbolic =
        id.isBroadcast() ? rng() % 100 < 30 : rng() % 100 < 80;
    shape.push_back(symbolic ? -1 : (id.isBroadcast() ? 1 : id.extent.value));
  }
  return shape;
}
}  // namespace

std::unique_ptr<Fusion> symbolicTwin(const Fusion& concrete, uint64_t seed) {
  std::mt19937_64 rng(seed ^ 0x5eedULL);
  auto twin = std::make_unique<Fusion>();
  std::unordered_map<const Val*, Val*> map;
  for (const Val* in : concrete.inputs()) {
    if (!in->isTensor()) {
      map[in] = defineScalar(*twin, in->dtype(), std::nullopt);
      continue;
    }
    map[in] =
        defineTensor(*twin, symbolicShape(in->asTensor(), rng), in->dtype());
  }
  auto lookup = [&](const Val* v) -> Val* {
    auto it = map.find(v);
    if (it != map.end()) {
      return it->second;
    }
    // Constants are the only values with neither a definition nor an entry.
    Val* c = twin->newScalar(v->dtype(), v->asScalar()->value());
    map[v] = c;
    return c;
  };
  try {
    for (const Expr* e : concrete.liveExprs()) {
      std::vector<Val*> ins;
      for (const Val* v : e->inputs()) {
        ins.push_back(lookup(v));
      }
      std::vector<Val*> outs = replayExpr(e, ins);
      for (size_t k = 0; k < outs.size(); ++k) {
        map[e->output(k)] = outs[k];
      }
    }
  } catch (const Error&) {
    return nullptr;
  }
  for (const Val* o : concrete.outputs()) {
    twin->addOutput(lookup(o));
  }
  return twin;
}

}  // namespace nvfuser
