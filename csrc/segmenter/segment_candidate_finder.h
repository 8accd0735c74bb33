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
#include <unordered_map>
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

 private:
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
    std::vector<const Expr*> body;
    SchedulerType scheduler = SchedulerType::PointWise;
    std::vector<const TensorView*> outputs;
    std::set<int64_t> producers;
    std::set<int64_t> consumers;
    std::unique_ptr<SegmentView> view;
    int64_t viewVersion = -1;
  };

  SegmentCandidateFinder(const Fusion& fusion, const Options& options);
  void buildInitialGroups();
  void backOffUnschedulablePrologues();
  void buildEdges();
  void mergeCatWithPads();
  void mergeUpCasts();
  bool mergeSingleConsumerProducers();
  bool mergeLevelRound();
  bool mergeAnyPair();
  // Horizontal fusion: merges groups without a path between them
  // that read a common fusion input or replicate the same forwarded chain
  // (one read of the shared tensor instead of several), and terminal groups
  // (one launch instead of several); the merged kernel has one loop domain
  // per output family (NVFUSER_DISABLE=horizontal_fusion: off).
  bool mergeHorizontally();
  // Whether a path leads from one group to another (levels must be valid or
  // are recomputed).
  bool reaches(int64_t from, int64_t to);
  std::unique_ptr<SegmentedFusion> finalize();

  Group& group(int64_t id) { return *groups_[id]; }
  const SegmentView& viewOf(Group& g);
  SegmentView makeView(std::vector<const Expr*> body,
                       bool horizontal = false) const;
  const std::vector<const Expr*>& sortedBody(Group& g);
  // Outputs of p and c together, from their summaries.
  std::vector<const TensorView*> mergedOutputs(const Group& p,
                                               const Group& c) const;
  // The scheduler of p and c together, or none (with the reason logged).
  std::optional<SchedulerType> mergedScheduler(Group& p, Group& c,
                                               const char* pass);
  void computeLevels();
  bool hasOtherPath(int64_t from, int64_t to);
  int64_t edgeBytes(int64_t producer, int64_t consumer);
  // Merges consumer into producer when the registry accepts the union.
  bool tryMerge(int64_t producer, int64_t consumer, bool checkCycle,
                const char* pass);
  int64_t minPosition(const Group& g) const { return g.minPos; }

  const Fusion& fusion_;
  SegmenterLog log_;
  ForwardingPolicy policy_;
  SegmentCandidateForwarder forwarder_;
  SchedulerRegistry registry_;
  std::vector<std::unique_ptr<Group>> groups_;
  std::unordered_map<const Expr*, int64_t> groupOf_;
  std::set<std::tuple<int64_t, int64_t, int64_t, int64_t>> rejected_;
  bool levelsValid_ = false;
  bool horizontal_ = true;
};

// Convenience entry point.
std::unique_ptr<SegmentedFusion> segmentFusion(const Fusion& fusion,
                                               const Options& options);

}  // namespace nvfuser
