// The horizontal merge of SegmentCandidateFinder: candidate sets, the
// greedy merge of each set within its bounds, and the reachability answers
// it needs for every candidate pair.
#include <algorithm>
#include <optional>
#include <unordered_set>

#include "segmenter/reachability_matrix.h"
#include "segmenter/segment_candidate_finder.h"

namespace nvfuser {

// Whether a path leads between two groups, in either direction. One matrix
// for the whole pass while the alive groups fit in it; above that, searches
// that give up (and answer "linked", so the pair is not merged) after
// kSearchBudget groups: levels would have to be recomputed after every
// merge, and an exact search per pair is quadratic on such a fusion.
class SegmentCandidateFinder::HorizontalLinks {
 public:
  HorizontalLinks(SegmentCandidateFinder& finder,
                  const std::vector<int64_t>& topoOrder)
      : finder_(finder) {
    if (static_cast<int64_t>(topoOrder.size()) >
        ReachabilityMatrix::kMaxGroups) {
      return;
    }
    consumers_.resize(finder.groups_.size());
    for (int64_t id : topoOrder) {
      const Group& g = finder.group(id);
      consumers_[size_t(id)].assign(g.consumers.begin(), g.consumers.end());
    }
    matrix_.emplace(topoOrder,
                    [this](int64_t id) -> const std::vector<int64_t>& {
                      return consumers_[size_t(id)];
                    });
  }

  bool linked(int64_t a, int64_t b) {
    if (matrix_) {
      return matrix_->reaches(a, b) || matrix_->reaches(b, a);
    }
    for (auto [from, to] : {std::make_pair(a, b), std::make_pair(b, a)}) {
      std::optional<bool> r = finder_.reachesWithin(
          from, to, SegmentCandidateFinder::kSearchBudget);
      if (!r || *r) {
        return true;
      }
    }
    return false;
  }

  // After finder.absorb: keep's producers are those of both parts, so its
  // ancestors are those of either.
  void merged(int64_t keep, int64_t gone) {
    if (!matrix_) {
      return;
    }
    std::vector<int64_t> ancestors;
    std::vector<int64_t> stack(finder_.group(keep).producers.begin(),
                               finder_.group(keep).producers.end());
    while (!stack.empty()) {
      const int64_t id = stack.back();
      stack.pop_back();
      if (!seen_.insert(id).second) {
        continue;
      }
      ancestors.push_back(id);
      const auto& producers = finder_.group(id).producers;
      stack.insert(stack.end(), producers.begin(), producers.end());
    }
    seen_.clear();
    matrix_->merge(keep, gone, ancestors);
  }

 private:
  SegmentCandidateFinder& finder_;
  std::vector<std::vector<int64_t>> consumers_;
  std::optional<ReachabilityMatrix> matrix_;
  std::unordered_set<int64_t> seen_;
};

std::optional<bool> SegmentCandidateFinder::reachesWithin(int64_t from,
                                                          int64_t to,
                                                          int64_t budget) {
  std::vector<int64_t> stack = {from};
  std::unordered_set<int64_t> seen;
  while (!stack.empty()) {
    int64_t id = stack.back();
    stack.pop_back();
    if (id == to) {
      return true;
    }
    if (!seen.insert(id).second) {
      continue;
    }
    stats_.searchVisits += 1;
    if (static_cast<int64_t>(seen.size()) > budget) {
      return std::nullopt;
    }
    for (int64_t c : group(id).consumers) {
      stack.push_back(c);
    }
  }
  return false;
}

std::vector<std::vector<int64_t>>
SegmentCandidateFinder::horizontalCandidateSets() const {
  // Candidate sets: the readers of each fusion input, the replicas of each
  // forwarded chain (they read its seed), the readers of each materialized
  // broadcast, and the terminal groups (nothing reads their outputs, so
  // merging them only saves launches).
  std::vector<std::vector<int64_t>> sets;
  std::vector<int64_t> seenIn(groups_.size(), -1);  // set index per group
  auto readersOf = [&](const Val* v) {
    std::vector<int64_t> readers;
    const int64_t index = static_cast<int64_t>(sets.size());
    for (const Expr* use : v->uses()) {
      const int64_t reader = groupIdOf(use);
      if (reader >= 0 && !forwarder_.isBackedOff(use) &&
          seenIn[size_t(reader)] != index) {
        seenIn[size_t(reader)] = index;
        readers.push_back(reader);
      }
    }
    return readers;
  };
  for (const ForwardedChain& chain : forwarder_.chains()) {
    sets.push_back(readersOf(chain.forwarded));
  }
  for (const Val* in : fusion_.inputs()) {
    if (in->isTensor()) {
      sets.push_back(readersOf(in));
    }
  }
  // A materialized broadcast value is read like a fusion input: its
  // readers (a RoPE's q and k) were one kernel before it was written out.
  for (const Expr* e : fusion_.exprs()) {  // in order: deterministic
    if (materializedBroadcasts_.count(e)) {
      sets.push_back(readersOf(e->output(0)));
    }
  }
  std::vector<int64_t> terminal;
  for (auto& g : groups_) {
    if (g->alive && g->consumers.empty()) {
      terminal.push_back(g->id);
    }
  }
  sets.push_back(terminal);
  return sets;
}

bool SegmentCandidateFinder::mergeHorizontally() {
  if (!horizontal_) {
    return false;
  }
  stats_.horizontalPasses += 1;
  std::vector<std::vector<int64_t>> sets = horizontalCandidateSets();
  if (!levelsValid_) {
    computeLevels();
  }
  std::vector<int64_t> order;
  for (auto& g : groups_) {
    if (g->alive) {
      order.push_back(g->id);
    }
  }
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return group(a).level < group(b).level;
  });
  HorizontalLinks links(*this, order);
  bool merged = false;
  for (const std::vector<int64_t>& set : sets) {
    merged = mergeSetHorizontally(set, links) || merged;
  }
  return merged;
}

std::optional<int64_t> SegmentCandidateFinder::mergeIntoAccumulator(
    int64_t acc, int64_t id, HorizontalLinks& links) {
  stats_.horizontalPairChecks += 1;
  if (group(acc).outputs.size() + group(id).outputs.size() >
      kMaxHorizontalOutputs) {
    if (log_.enabled()) {
      log_.add("horizontal merge: g" + std::to_string(acc) + " + g" +
               std::to_string(id) + " rejected: more than " +
               std::to_string(kMaxHorizontalOutputs) + " outputs");
    }
    return std::nullopt;
  }
  if (links.linked(acc, id) || !tryMerge(acc, id, false, "horizontal merge")) {
    return std::nullopt;
  }
  log_.add("horizontal merge: g" + std::to_string(acc) + " + g" +
           std::to_string(id));
  const int64_t keep = group(acc).alive ? acc : id;
  links.merged(keep, keep == acc ? id : acc);
  return keep;
}

bool SegmentCandidateFinder::mergeSetHorizontally(
    const std::vector<int64_t>& set, HorizontalLinks& links) {
  // Greedy: each group joins the first accumulated group that takes it,
  // among the kHorizontalWindow most recently started ones still open; a
  // group none takes starts a new one. An accumulated group closes when it
  // is full (kMaxHorizontalOutputs) or has turned down kMaxTurnDowns
  // candidates. So each candidate costs at most kHorizontalWindow questions,
  // and each accumulated group answers at most kMaxHorizontalOutputs +
  // kMaxTurnDowns of them about its own exprs.
  struct Accumulator {
    int64_t id;
    int64_t turnedDown;
  };
  std::vector<Accumulator> open;  // oldest first
  bool merged = false;
  for (int64_t id : set) {
    if (!group(id).alive) {
      continue;  // absorbed by an earlier merge of this pass
    }
    bool joined = false;
    size_t k =
        open.size() > kHorizontalWindow ? open.size() - kHorizontalWindow : 0;
    while (k < open.size() && !joined) {
      // A set lists each group once, so acc.id is never id.
      Accumulator& acc = open[k];
      std::optional<int64_t> keep = mergeIntoAccumulator(acc.id, id, links);
      if (keep) {
        acc.id = *keep;
        merged = joined = true;
      }
      const bool full = group(acc.id).outputs.size() >= kMaxHorizontalOutputs;
      if (full || (!keep && ++acc.turnedDown >= kMaxTurnDowns)) {
        open.erase(open.begin() + static_cast<std::ptrdiff_t>(k));
      } else {
        ++k;
      }
    }
    if (!joined && group(id).outputs.size() < kMaxHorizontalOutputs) {
      open.push_back({id, 0});
    }
  }
  return merged;
}

}  // namespace nvfuser
