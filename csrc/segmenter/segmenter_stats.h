// Work counters of one segmentation (SegmentedFusion::stats()): tests bound
// them by the fusion's size, which catches a pass turning quadratic without
// timing anything, and the benchmark prints them.
#pragma once

#include <cstdint>
#include <string>

namespace nvfuser {

struct SegmenterStats {
  int64_t initialGroups = 0;  // groups before any merge
  int64_t mergeAttempts = 0;  // merge questions (pairs not already rejected)
  // SegmentViews built to ask the registry about a merged pair, and their
  // exprs summed: the registry walks every expr of each.
  int64_t mergedViews = 0;
  int64_t mergedViewExprs = 0;
  int64_t finalPasses = 0;  // sweeps of the final pass over every edge
  int64_t horizontalPasses = 0;
  // (accumulated group, candidate) pairs the horizontal merge looked at.
  int64_t horizontalPairChecks = 0;
  // Groups visited by reachability searches (when the matrix is not used).
  int64_t searchVisits = 0;

  std::string toString() const {
    return "initial groups " + std::to_string(initialGroups) +
           ", merge attempts " + std::to_string(mergeAttempts) +
           ", merged views " + std::to_string(mergedViews) + " (" +
           std::to_string(mergedViewExprs) + " exprs), final passes " +
           std::to_string(finalPasses) + ", horizontal passes " +
           std::to_string(horizontalPasses) + " (" +
           std::to_string(horizontalPairChecks) + " pair checks), " +
           "search visits " + std::to_string(searchVisits);
  }
};

}  // namespace nvfuser
