// Splits a concrete fusion into groups that one scheduler each can run.
//
// One group per non-scalar expr; forwarded chains set aside (and backed off
// per consumer where a scheduler cannot take them as prologue); targeted
// pre-merge passes; level-by-level merging of producer/consumer pairs at
// adjacent levels; then a final pass over any pair that keeps the group
// graph acyclic. Every question goes to the registry on a SegmentView that
// includes the prologue the group would receive.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include "options.h"
#include "scheduler/scheduler_registry.h"
#include "scheduler/segment_view.h"
#include "segmenter/segment_candidate_forwarder.h"
#include "segmenter/segmented_fusion.h"

namespace nvfuser {

class SegmentCandidateFinder {
 public:
  // The fusion must be concrete (every extent constant).
  static std::unique_ptr<SegmentedFusion> segment(const Fusion& fusion,
                                                  const Options& options);

  // Bounds of the horizontal merge (docs/segmenter.md, "Horizontal merge
  // bounds"). A horizontal group gets at most this many outputs: its kernel
  // takes a pointer per output, and 128 of them fill a quarter of CUDA's
  // 4 KB parameter space; it also caps each accumulated group, so a merge
  // question about it costs a bounded amount.
  static constexpr size_t kMaxHorizontalOutputs = 64;
  // Each candidate is tried against at most this many accumulated groups of
  // its set, the most recently started ones still open.
  static constexpr size_t kHorizontalWindow = 16;
  // An accumulated group closes after turning down this many candidates.
  static constexpr int64_t kMaxTurnDowns = 16;
  // Above ReachabilityMatrix::kMaxGroups alive groups, a pair counts as
  // linked when a search visits this many groups without deciding.
  static constexpr int64_t kSearchBudget = 4096;

 private:
  // A loop domain of a group's outputs (shape without size-1 dims) and the
  // first output in it.
  struct LoopFamily {
    std::vector<int64_t> loop;
    const TensorView* first = nullptr;
  };
  // A group and its summary: most merge questions are answered from the
  // summaries of two groups, without walking either.
  struct Group {
    int64_t id = 0;
    int64_t version = 0;
    bool alive = true;
    int64_t level = 0;
    int64_t minPos = 0;
    bool sorted = true;
    bool horizontal = false;  // joined by horizontal fusion
    // At least the nesting of pads and cats in its body (scheduler.h's
    // kMaxBranchDepth), so merges of shallow groups need no full check.
    int64_t branchDepth = 0;
    // Gathers in its body: a merge of groups with gathers is checked in
    // full (a gather's lookup must stay outside its segment).
    int64_t gathers = 0;
    std::vector<const Expr*> body;
    SchedulerType scheduler = SchedulerType::PointWise;
    std::vector<const TensorView*> outputs;
    std::vector<LoopFamily> families;  // of outputs, first seen first
    // Its exprs whose input's producer it never joins (isSegmentBoundary).
    std::vector<const Expr*> boundaries;
    std::set<int64_t> producers;
    std::set<int64_t> consumers;
    std::unique_ptr<SegmentView> view;
    int64_t viewVersion = -1;
  };
  // The outputs and output families two groups would have together.
  struct Union {
    std::vector<const TensorView*> outputs;
    std::vector<LoopFamily> families;
  };
  class HorizontalLinks;

  SegmentCandidateFinder(const Fusion& fusion, const Options& options);
  bool isSegmentBoundary(const Expr* e) const;
  void buildInitialGroups();
  void backOffUnschedulablePrologues();
  void buildEdges();
  void mergeCatWithPads();
  void mergeUpCasts();
  bool mergeSingleConsumerProducers();
  bool mergeLevelRound();
  bool mergeAnyPair();
  // Horizontal fusion (horizontal_merge.cpp): merges groups without a path
  // between them that read a common fusion input or replicate the same
  // forwarded chain (one read of the shared tensor instead of several), and
  // terminal groups (one launch instead of several); the merged kernel has
  // one loop domain per output family (NVFUSER_DISABLE=horizontal_fusion:
  // off).
  bool mergeHorizontally();
  std::vector<std::vector<int64_t>> horizontalCandidateSets() const;
  bool mergeSetHorizontally(const std::vector<int64_t>& set,
                            HorizontalLinks& links);
  // Merges candidate `id` into accumulated group `acc` when allowed: the
  // surviving group's id, or none.
  std::optional<int64_t> mergeIntoAccumulator(int64_t acc, int64_t id,
                                              HorizontalLinks& links);
  // Whether a path leads from one group to another (levels must be valid or
  // are recomputed).
  bool reaches(int64_t from, int64_t to);
  // The same without levels, giving up (nullopt) after `budget` groups.
  std::optional<bool> reachesWithin(int64_t from, int64_t to, int64_t budget);
  std::unique_ptr<SegmentedFusion> finalize();

  Group& group(int64_t id) { return *groups_[id]; }
  int64_t groupIdOf(const Expr* e) const {
    return groupOf_[size_t(e->position())];
  }
  const SegmentView& viewOf(Group& g);
  SegmentView makeView(std::vector<const Expr*> body,
                       bool horizontal = false) const;
  const std::vector<const Expr*>& sortedBody(Group& g);
  // Outputs of p and c together, from their summaries.
  std::vector<const TensorView*> mergedOutputs(const Group& p,
                                               const Group& c) const;
  static std::vector<LoopFamily> familiesOf(
      const std::vector<const TensorView*>& outputs);
  // p and c together; `independent`: no path between them, so no output of
  // either is read by the other and the union is their concatenation.
  Union unionOf(const Group& p, const Group& c, bool independent) const;
  // The scheduler of p and c together, or none (with the reason logged).
  std::optional<SchedulerType> mergedScheduler(Group& p, Group& c,
                                               const Union& u,
                                               const char* pass);
  void computeLevels();
  bool hasOtherPath(int64_t from, int64_t to);
  int64_t edgeBytes(int64_t producer, int64_t consumer);
  bool crossesSegmentBoundary(const Group& producer,
                              const Group& consumer) const;
  // Merges consumer into producer when the registry accepts the union.
  bool tryMerge(int64_t producer, int64_t consumer, bool checkCycle,
                const char* pass);
  // Commits a merge: the larger group absorbs the other.
  void absorb(Group& p, Group& c, SchedulerType type, Union u, bool horizontal);
  int64_t minPosition(const Group& g) const { return g.minPos; }

  const Fusion& fusion_;
  SegmenterLog log_;
  ForwardingPolicy policy_;
  SegmentCandidateForwarder forwarder_;
  SchedulerRegistry registry_;
  std::vector<std::unique_ptr<Group>> groups_;
  // Expr position -> its group, -1 for none (forwarded and scalar exprs).
  std::vector<int64_t> groupOf_;
  // Segment boundaries: the segment_sets, and the broadcasts whose costly
  // input is written once instead of recomputed per consumer element
  // (broadcast_materialization.h).
  std::set<const Expr*> materializedBroadcasts_;
  std::set<std::tuple<int64_t, int64_t, int64_t, int64_t>> rejected_;
  bool levelsValid_ = false;
  bool horizontal_ = true;
  SegmenterStats stats_;
};

// Convenience entry point.
std::unique_ptr<SegmentedFusion> segmentFusion(const Fusion& fusion,
                                               const Options& options);

}  // namespace nvfuser
