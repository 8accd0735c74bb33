// The result of segmentation: groups in run order, each with its body, the
// forwarded prologue it replicates, its boundary tensors and its scheduler.
#pragma once

#include <string>
#include <vector>

#include "ir/fusion.h"
#include "scheduler/scheduler_type.h"
#include "segmenter/forwarding_policy.h"
#include "segmenter/segment_candidate_forwarder.h"
#include "segmenter/segmenter_stats.h"

namespace nvfuser {

struct SegmentedGroup {
  int64_t id = 0;
  SchedulerType scheduler = SchedulerType::PointWise;
  std::vector<const Expr*> body;      // sorted by position
  std::vector<const Expr*> prologue;  // forwarded, sorted by position
  std::vector<const TensorView*> inputs;
  std::vector<const TensorView*> outputs;
  bool horizontal = false;  // joined by horizontal fusion
};

class SegmentedFusion {
 public:
  SegmentedFusion(const Fusion& fusion, ForwardingPolicy policy,
                  std::vector<SegmentedGroup> groups,
                  std::vector<ForwardedChain> chains,
                  std::vector<std::string> log, SegmenterStats stats = {})
      : fusion_(&fusion),
        policy_(policy),
        groups_(std::move(groups)),
        chains_(std::move(chains)),
        log_(std::move(log)),
        stats_(stats) {}

  const Fusion& completeFusion() const { return *fusion_; }
  ForwardingPolicy policy() const { return policy_; }
  // Groups in a valid run (topological) order.
  const std::vector<SegmentedGroup>& groups() const { return groups_; }
  const std::vector<ForwardedChain>& chains() const { return chains_; }
  const std::vector<std::string>& log() const { return log_; }
  const SegmenterStats& stats() const { return stats_; }

  // Bytes of intermediates that cross segment boundaries: written once by
  // the producing kernel (unless it is a fusion output) and read by every
  // consuming segment. Views made by no_op groups, and an expr_eval
  // group's views of its inputs, move nothing.
  int64_t boundaryBytes() const;

  // NVFUSER_DUMP=segmented_fusion
  std::string toString() const;
  // NVFUSER_DUMP=draw_segmented_fusion: one cluster per group, forwarded
  // ops dashed inside each group that replicates them.
  std::string toDot() const;

 private:
  const Fusion* fusion_;
  ForwardingPolicy policy_;
  std::vector<SegmentedGroup> groups_;
  std::vector<ForwardedChain> chains_;
  std::vector<std::string> log_;
  SegmenterStats stats_;
};

}  // namespace nvfuser
