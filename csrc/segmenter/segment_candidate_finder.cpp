#include "segmenter/segment_candidate_finder.h"

#include <algorithm>
#include <functional>
#include <queue>

#include "analysis/tensor_shape.h"
#include "exceptions.h"
#include "ir/exprs.h"
#include "scheduler/pointwise_scheduler.h"
#include "scheduler/scheduler.h"
#include "segmenter/broadcast_materialization.h"

namespace nvfuser {

namespace {
bool byPosition(const Expr* a, const Expr* b) {
  return a->position() < b->position();
}

bool hasTensorOutput(const Expr* e) {
  for (const Val* o : e->outputs()) {
    if (o->isTensor()) {
      return true;
    }
  }
  return false;
}

bool horizontalPass(const char* pass) {
  return std::string(pass) == "horizontal merge";
}

}  // namespace

bool SegmentCandidateFinder::isSegmentBoundary(const Expr* e) const {
  const auto* ls = exprAs<LoadStoreOp>(e);
  return (ls != nullptr && ls->op() == LoadStoreOpType::SegmenterSet) ||
         materializedBroadcasts_.count(e) > 0;
}

std::unique_ptr<SegmentedFusion> segmentFusion(const Fusion& fusion,
                                               const Options& options) {
  return SegmentCandidateFinder::segment(fusion, options);
}

SegmentCandidateFinder::SegmentCandidateFinder(const Fusion& fusion,
                                               const Options& options)
    : fusion_(fusion),
      log_(options.dump("segmenter_logging")),
      policy_(forwardingPolicyFrom(options)),
      forwarder_(fusion, policy_, &log_),
      groupOf_(fusion.exprs().size(), -1),
      horizontal_(!options.disabled("horizontal_fusion")) {
  if (!options.disabled("broadcast_materialization")) {
    materializedBroadcasts_ = broadcastsToMaterialize(fusion);
  }
  for (const Expr* e : fusion.exprs()) {  // in order: a stable log
    if (materializedBroadcasts_.count(e)) {
      log_.add("broadcast materialization: " + e->input(0)->ref() +
               " (costly math, no reduction) is written once, not "
               "recomputed per element of " +
               exprRef(e) + "'s consumers");
    }
  }
}

std::unique_ptr<SegmentedFusion> SegmentCandidateFinder::segment(
    const Fusion& fusion, const Options& options) {
  SegmentCandidateFinder finder(fusion, options);
  finder.buildInitialGroups();
  finder.backOffUnschedulablePrologues();
  finder.buildEdges();
  finder.mergeCatWithPads();
  finder.mergeUpCasts();
  while (finder.mergeSingleConsumerProducers()) {
  }
  while (finder.mergeLevelRound()) {
  }
  do {
    while (finder.mergeAnyPair()) {
    }
  } while (finder.mergeHorizontally());
  return finder.finalize();
}

SegmentView SegmentCandidateFinder::makeView(std::vector<const Expr*> body,
                                             bool horizontal) const {
  std::vector<const Expr*> prologue = forwarder_.prologueFor(body);
  return SegmentView(fusion_, std::move(body), std::move(prologue),
                     &forwarder_.forwardedExprs(), horizontal);
}

const std::vector<const Expr*>& SegmentCandidateFinder::sortedBody(Group& g) {
  if (!g.sorted) {
    std::sort(g.body.begin(), g.body.end(), byPosition);
    g.sorted = true;
  }
  return g.body;
}

const SegmentView& SegmentCandidateFinder::viewOf(Group& g) {
  if (g.viewVersion != g.version) {
    g.view =
        std::make_unique<SegmentView>(makeView(sortedBody(g), g.horizontal));
    g.viewVersion = g.version;
  }
  return *g.view;
}

void SegmentCandidateFinder::buildInitialGroups() {
  for (const Expr* e : fusion_.exprs()) {
    if (forwarder_.isForwarded(e) || !hasTensorOutput(e)) {
      continue;  // forwarded ops form no group; scalar ops are replicated
    }
    auto g = std::make_unique<Group>();
    g->id = static_cast<int64_t>(groups_.size());
    g->body = {e};
    g->minPos = e->position();
    g->branchDepth = maxBranchDepth(g->body);
    g->gathers = e->type() == ExprType::Gather ? 1 : 0;
    if (isSegmentBoundary(e)) {
      g->boundaries.push_back(e);
    }
    groupOf_[size_t(e->position())] = g->id;
    groups_.push_back(std::move(g));
  }
}

void SegmentCandidateFinder::backOffUnschedulablePrologues() {
  for (const ForwardedChain& chain : forwarder_.chains()) {
    for (const Expr* consumer : chain.forwarded->uses()) {
      if (forwarder_.isBackedOff(consumer)) {
        continue;
      }
      SegmentView view = makeView({consumer});
      if (registry_.proposeScheduler(view)) {
        continue;
      }
      forwarder_.backOff(consumer, registry_.rejectionReasons(view));
    }
  }
  // One materialized copy of each backed-off chain, as ordinary ops.
  for (const ForwardedChain& chain : forwarder_.chains()) {
    if (chain.backedOffConsumers.empty()) {
      continue;
    }
    auto g = std::make_unique<Group>();
    g->id = static_cast<int64_t>(groups_.size());
    g->body = chain.exprs;
    g->minPos = chain.exprs.front()->position();
    g->branchDepth = maxBranchDepth(g->body);
    for (const Expr* e : chain.exprs) {
      groupOf_[size_t(e->position())] = g->id;
      if (isSegmentBoundary(e)) {
        g->boundaries.push_back(e);
      }
    }
    log_.add("forwarding: materialized copy of " + chain.forwarded->ref() +
             " is group g" + std::to_string(g->id));
    groups_.push_back(std::move(g));
  }
}

void SegmentCandidateFinder::buildEdges() {
  stats_.initialGroups = static_cast<int64_t>(groups_.size());
  for (auto& gp : groups_) {
    Group& g = *gp;
    const SegmentView& view = viewOf(g);
    std::optional<SchedulerType> type = registry_.proposeScheduler(view);
    NVF_ASSERT(type.has_value(), "no scheduler takes ", exprRef(g.body.front()),
               ": ", registry_.rejectionReasons(view));
    g.scheduler = *type;
    g.outputs = view.outputs();
    g.families = familiesOf(g.outputs);
    for (const TensorView* in : view.inputs()) {
      if (in->definition() == nullptr) {
        continue;
      }
      const int64_t producer = groupIdOf(in->definition());
      if (producer < 0 || producer == g.id) {
        continue;
      }
      g.producers.insert(producer);
      group(producer).consumers.insert(g.id);
    }
  }
}

void SegmentCandidateFinder::computeLevels() {
  // Group ids are no topological order after merges: Kahn's algorithm.
  std::vector<int64_t> indegree(groups_.size(), 0);
  std::queue<int64_t> ready;
  for (auto& g : groups_) {
    if (!g->alive) {
      continue;
    }
    indegree[g->id] = static_cast<int64_t>(g->producers.size());
    g->level = 0;
    if (indegree[g->id] == 0) {
      ready.push(g->id);
    }
  }
  while (!ready.empty()) {
    Group& g = group(ready.front());
    ready.pop();
    for (int64_t c : g.consumers) {
      Group& cg = group(c);
      cg.level = std::max(cg.level, g.level + 1);
      if (--indegree[c] == 0) {
        ready.push(c);
      }
    }
  }
  levelsValid_ = true;
}

bool SegmentCandidateFinder::hasOtherPath(int64_t from, int64_t to) {
  if (group(from).consumers.size() == 1) {
    return false;  // the direct edge is the only way out of `from`
  }
  for (int64_t c : group(from).consumers) {
    if (c != to && reaches(c, to)) {
      return true;
    }
  }
  return false;
}

int64_t SegmentCandidateFinder::edgeBytes(int64_t producer, int64_t consumer) {
  int64_t bytes = 0;
  for (const TensorView* o : group(producer).outputs) {
    for (const Expr* use : o->uses()) {
      if (groupIdOf(use) == consumer) {
        bytes += denseBytes(o);
        break;
      }
    }
  }
  return bytes;
}

std::vector<const TensorView*> SegmentCandidateFinder::mergedOutputs(
    const Group& p, const Group& c) const {
  std::vector<const TensorView*> out;
  auto external = [&](const TensorView* o) {
    if (fusion_.isOutput(o)) {
      return true;
    }
    for (const Expr* use : o->uses()) {
      if (forwarder_.isForwarded(use)) {
        continue;
      }
      const int64_t reader = groupIdOf(use);
      if (reader < 0 || (reader != p.id && reader != c.id)) {
        return true;
      }
    }
    return false;
  };
  for (const Group* g : {&p, &c}) {
    for (const TensorView* o : g->outputs) {
      if (external(o)) {
        out.push_back(o);
      }
    }
  }
  return out;
}

std::vector<SegmentCandidateFinder::LoopFamily>
SegmentCandidateFinder::familiesOf(
    const std::vector<const TensorView*>& outputs) {
  std::vector<LoopFamily> out;
  for (const auto& family : outputFamilies(outputs)) {
    out.push_back({shapeWithoutOnes(family.front()), family.front()});
  }
  return out;
}

SegmentCandidateFinder::Union SegmentCandidateFinder::unionOf(
    const Group& p, const Group& c, bool independent) const {
  Union u;
  if (!independent) {
    u.outputs = mergedOutputs(p, c);
    u.families = familiesOf(u.outputs);
    return u;
  }
  // What outputFamilies gives for p's outputs followed by c's: p's families,
  // then c's new loop domains, in the order c first has them.
  u.outputs = p.outputs;
  u.outputs.insert(u.outputs.end(), c.outputs.begin(), c.outputs.end());
  u.families = p.families;
  for (const LoopFamily& f : c.families) {
    auto same = [&](const LoopFamily& x) { return x.loop == f.loop; };
    if (std::none_of(u.families.begin(), u.families.end(), same)) {
      u.families.push_back(f);
    }
  }
  return u;
}

std::optional<SchedulerType> SegmentCandidateFinder::mergedScheduler(
    Group& p, Group& c, const Union& u, const char* pass) {
  // Reasons are only spelled out when someone reads the log.
  auto reject = [&](const std::function<std::string()>& reason)
      -> std::optional<SchedulerType> {
    if (log_.enabled()) {
      log_.add(std::string(pass) + ": g" + std::to_string(p.id) + " + g" +
               std::to_string(c.id) + " rejected: " + reason());
    }
    return std::nullopt;
  };
  if (p.scheduler == SchedulerType::PointWise &&
      c.scheduler == SchedulerType::PointWise &&
      p.branchDepth + c.branchDepth <= kMaxBranchDepth &&
      p.gathers + c.gathers == 0) {
    // Two pointwise groups without gathers stay pointwise exactly when
    // their outputs still share one loop domain (no reduction or matmul
    // appears, and a union of non-view groups is no view), or, in a
    // horizontal merge of groups without a path between them, span a few
    // independent loop domains.
    if (u.outputs.empty()) {
      return reject([] { return "the merged group would have no outputs"; });
    }
    if (u.families.size() == 1) {
      return SchedulerType::PointWise;
    }
    auto both = [&] {
      return u.families[0].first->ref() + " and " + u.families[1].first->ref() +
             " differ";
    };
    if (!horizontalPass(pass)) {
      return reject(
          [&] { return "pointwise outputs need one loop domain: " + both(); });
    }
    if (u.families.size() > PointWiseScheduler::kMaxLoopDomains) {
      return reject(
          [&] { return "too many loop domains for one kernel: " + both(); });
    }
    return SchedulerType::PointWise;
  }
  std::vector<const Expr*> body;
  body.reserve(p.body.size() + c.body.size());
  const auto& pb = sortedBody(p);
  const auto& cb = sortedBody(c);
  std::merge(pb.begin(), pb.end(), cb.begin(), cb.end(),
             std::back_inserter(body), byPosition);
  SegmentView view = makeView(
      std::move(body), horizontalPass(pass) || p.horizontal || c.horizontal);
  stats_.mergedViews += 1;
  stats_.mergedViewExprs += static_cast<int64_t>(view.exprs().size());
  std::optional<SchedulerType> type = registry_.proposeScheduler(view);
  if (!type) {
    return reject([&] { return registry_.rejectionReasons(view); });
  }
  return type;
}

bool SegmentCandidateFinder::crossesSegmentBoundary(
    const Group& producer, const Group& consumer) const {
  for (const Expr* e : consumer.boundaries) {
    const Expr* def = e->input(0)->definition();
    if (def != nullptr && groupIdOf(def) == producer.id) {
      return true;
    }
  }
  return false;
}

bool SegmentCandidateFinder::tryMerge(int64_t pid, int64_t cid, bool checkCycle,
                                      const char* pass) {
  Group& p = group(pid);
  Group& c = group(cid);
  auto key = std::make_tuple(pid, p.version, cid, c.version);
  if (rejected_.count(key)) {
    return false;
  }
  stats_.mergeAttempts += 1;
  // The producer of a segment_set never joins its group.
  if (crossesSegmentBoundary(p, c)) {
    rejected_.insert(key);
    log_.add(std::string(pass) + ": g" + std::to_string(pid) + " + g" +
             std::to_string(cid) + " rejected: segment_set boundary");
    return false;
  }
  if (checkCycle && hasOtherPath(pid, cid)) {
    return false;
  }
  // The horizontal pass merges only groups without a path between them.
  const bool horizontal = horizontalPass(pass);
  Union u = unionOf(p, c, horizontal);
  std::optional<SchedulerType> type = mergedScheduler(p, c, u, pass);
  if (!type) {
    rejected_.insert(key);
    return false;
  }
  absorb(p, c, *type, std::move(u), horizontal);
  return true;
}

void SegmentCandidateFinder::absorb(Group& p, Group& c, SchedulerType type,
                                    Union u, bool horizontal) {
  // Union by size: the larger group keeps its id and absorbs the other.
  Group& keep = p.body.size() >= c.body.size() ? p : c;
  Group& gone = &keep == &p ? c : p;
  for (const Expr* e : gone.body) {
    groupOf_[size_t(e->position())] = keep.id;
  }
  keep.body.insert(keep.body.end(), gone.body.begin(), gone.body.end());
  keep.boundaries.insert(keep.boundaries.end(), gone.boundaries.begin(),
                         gone.boundaries.end());
  keep.sorted = false;
  keep.minPos = std::min(keep.minPos, gone.minPos);
  keep.scheduler = type;
  keep.horizontal = keep.horizontal || gone.horizontal || horizontal;
  keep.outputs = std::move(u.outputs);
  keep.families = std::move(u.families);
  keep.version += 1;
  gone.alive = false;
  // Nesting adds up at most along a path through both; counted exactly
  // when that bound would send every later merge to a full check.
  keep.branchDepth += gone.branchDepth;
  keep.gathers += gone.gathers;
  if (keep.branchDepth > kMaxBranchDepth) {
    keep.branchDepth = maxBranchDepth(sortedBody(keep));
  }
  for (int64_t x : gone.producers) {
    group(x).consumers.erase(gone.id);
    if (x != keep.id) {
      group(x).consumers.insert(keep.id);
      keep.producers.insert(x);
    }
  }
  for (int64_t x : gone.consumers) {
    group(x).producers.erase(gone.id);
    if (x != keep.id) {
      group(x).producers.insert(keep.id);
      keep.consumers.insert(x);
    }
  }
  keep.producers.erase(gone.id);
  keep.consumers.erase(gone.id);
  gone.producers.clear();
  gone.consumers.clear();
  gone.body.clear();
  gone.boundaries.clear();
  gone.outputs.clear();
  gone.families.clear();
  gone.view.reset();
  levelsValid_ = false;
}

void SegmentCandidateFinder::mergeCatWithPads() {
  for (size_t i = 0; i < groups_.size(); ++i) {
    if (!groups_[i]->alive || groups_[i]->body.size() != 1 ||
        groups_[i]->body[0]->type() != ExprType::Cat) {
      continue;
    }
    const Expr* catExpr = groups_[i]->body[0];
    for (const Val* in : catExpr->inputs()) {
      const Expr* def = in->definition();
      if (def == nullptr || def->type() != ExprType::Pad ||
          groupIdOf(def) < 0) {
        continue;
      }
      int64_t pid = groupIdOf(def);
      int64_t cid = groupIdOf(catExpr);
      if (pid != cid) {
        tryMerge(pid, cid, true, "cat-pad merge");
      }
    }
  }
}

void SegmentCandidateFinder::mergeUpCasts() {
  for (size_t i = 0; i < groups_.size(); ++i) {
    Group& g = *groups_[i];
    if (!g.alive || g.body.size() != 1 || g.consumers.size() != 1) {
      continue;
    }
    const auto* cast = exprAs<UnaryOp>(g.body[0]);
    if (cast == nullptr || cast->op() != UnaryOpType::Cast ||
        !isReducedFloat(cast->input(0)->dtype())) {
      continue;
    }
    tryMerge(g.id, *g.consumers.begin(), false, "up-cast merge");
  }
}

bool SegmentCandidateFinder::mergeSingleConsumerProducers() {
  // A producer with one consumer group can join it without closing a cycle:
  // there is no other path out of it.
  std::vector<int64_t> order;
  for (auto& g : groups_) {
    if (g->alive) {
      order.push_back(g->id);
    }
  }
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return minPosition(group(a)) < minPosition(group(b));
  });
  bool merged = false;
  for (int64_t id : order) {
    Group& g = group(id);
    if (g.alive && g.consumers.size() == 1 &&
        tryMerge(id, *g.consumers.begin(), false, "single-consumer merge")) {
      merged = true;
    }
  }
  return merged;
}

bool SegmentCandidateFinder::mergeLevelRound() {
  computeLevels();
  std::vector<int64_t> consumers;
  for (auto& g : groups_) {
    if (g->alive && !g->producers.empty()) {
      consumers.push_back(g->id);
    }
  }
  std::sort(consumers.begin(), consumers.end(), [&](int64_t a, int64_t b) {
    return std::make_pair(group(a).level, minPosition(group(a))) <
           std::make_pair(group(b).level, minPosition(group(b)));
  });
  // Each consumer absorbs its producers one level below, most bytes saved
  // first. A merged set and its neighbours are then done for the round:
  // two merged sets with no edge between them, each spanning two adjacent
  // levels, cannot close a cycle.
  std::vector<bool> touched(groups_.size(), false);
  bool merged = false;
  for (int64_t cid : consumers) {
    if (touched[cid] || !group(cid).alive) {
      continue;
    }
    const int64_t level = group(cid).level;
    struct Candidate {
      int64_t bytes, pos, id;
    };
    std::vector<Candidate> producers;
    for (int64_t p : group(cid).producers) {
      if (!touched[p] && group(p).level == level - 1) {
        producers.push_back({edgeBytes(p, cid), minPosition(group(p)), p});
      }
    }
    std::sort(producers.begin(), producers.end(),
              [](const Candidate& a, const Candidate& b) {
                return std::tie(b.bytes, a.pos) < std::tie(a.bytes, b.pos);
              });
    int64_t current = cid;
    bool any = false;
    for (const Candidate& k : producers) {
      if (!tryMerge(k.id, current, false, "level merge")) {
        continue;
      }
      current = group(k.id).alive ? k.id : current;
      touched[k.id] = touched[cid] = true;
      any = true;
    }
    if (!any) {
      continue;
    }
    merged = true;
    for (int64_t n : group(current).producers) {
      touched[n] = true;
    }
    for (int64_t n : group(current).consumers) {
      touched[n] = true;
    }
  }
  return merged;
}

bool SegmentCandidateFinder::mergeAnyPair() {
  stats_.finalPasses += 1;
  std::vector<std::pair<int64_t, int64_t>> edges;
  for (auto& g : groups_) {
    if (g->alive) {
      for (int64_t c : g->consumers) {
        edges.emplace_back(g->id, c);
      }
    }
  }
  std::sort(edges.begin(), edges.end(), [&](const auto& a, const auto& b) {
    return std::make_pair(minPosition(group(a.first)),
                          minPosition(group(a.second))) <
           std::make_pair(minPosition(group(b.first)),
                          minPosition(group(b.second)));
  });
  for (const auto& [p, c] : edges) {
    if (tryMerge(p, c, true, "final merge")) {
      return true;  // the edge list is stale now; start over
    }
  }
  return false;
}

bool SegmentCandidateFinder::reaches(int64_t from, int64_t to) {
  if (from == to) {
    return true;
  }
  if (group(from).consumers.empty()) {
    return false;  // no levels needed (they may be stale after a merge)
  }
  if (!levelsValid_) {
    computeLevels();
  }
  // Levels grow along edges: a group at or above `to`'s level cannot reach
  // it.
  const int64_t limit = group(to).level;
  std::vector<int64_t> stack = {from};
  std::set<int64_t> seen;
  while (!stack.empty()) {
    int64_t id = stack.back();
    stack.pop_back();
    if (id == to) {
      return true;
    }
    if (!seen.insert(id).second || group(id).level >= limit) {
      continue;
    }
    stats_.searchVisits += 1;
    for (int64_t c : group(id).consumers) {
      stack.push_back(c);
    }
  }
  return false;
}

std::unique_ptr<SegmentedFusion> SegmentCandidateFinder::finalize() {
  // Run order: Kahn's algorithm, ready groups taken by first expr position.
  std::vector<int64_t> indegree(groups_.size(), 0);
  using Item = std::pair<int64_t, int64_t>;  // (position, id)
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> ready;
  size_t alive = 0;
  for (auto& g : groups_) {
    if (!g->alive) {
      continue;
    }
    ++alive;
    indegree[g->id] = static_cast<int64_t>(g->producers.size());
    if (indegree[g->id] == 0) {
      ready.push({minPosition(*g), g->id});
    }
  }
  std::vector<SegmentedGroup> out;
  while (!ready.empty()) {
    Group& g = group(ready.top().second);
    ready.pop();
    const SegmentView& view = viewOf(g);
    std::optional<SchedulerType> type = registry_.proposeScheduler(view);
    NVF_ASSERT(type.has_value(), "group g", g.id,
               " lost its scheduler after merging: ",
               registry_.rejectionReasons(view));
    SegmentedGroup sg;
    sg.id = static_cast<int64_t>(out.size());
    sg.scheduler = *type;
    sg.body = view.body();
    sg.prologue = view.prologue();
    sg.inputs = view.inputs();
    sg.outputs = view.outputs();
    sg.horizontal = g.horizontal;
    out.push_back(std::move(sg));
    for (int64_t c : g.consumers) {
      if (--indegree[c] == 0) {
        ready.push({minPosition(group(c)), c});
      }
    }
  }
  NVF_ASSERT(out.size() == alive, "the group graph has a cycle");
  log_.add("segmentation: " + std::to_string(out.size()) + " group(s), " +
           "input forwarding " + toString(policy_));
  log_.add("segmenter work: " + stats_.toString());
  return std::make_unique<SegmentedFusion>(fusion_, policy_, std::move(out),
                                           forwarder_.chains(), log_.lines(),
                                           stats_);
}

}  // namespace nvfuser
