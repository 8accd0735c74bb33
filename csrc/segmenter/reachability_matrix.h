// Transitive reachability between segment groups as one bitset per group,
// for passes that ask "does a path lead from a to b" for many pairs (the
// horizontal merge asks it for every candidate pair; a search per pair made
// a 6k-expr, 700-group fusion take half a second). Kept exact across merges
// of groups with no path between them.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace nvfuser {

class ReachabilityMatrix {
 public:
  // topoOrder: the alive group ids, producers before consumers (ids may be
  // sparse: rows are indexed densely); consumersOf(id): the consumer ids of
  // a group. Memory: n^2 / 8 bytes for n alive groups.
  ReachabilityMatrix(
      const std::vector<int64_t>& topoOrder,
      const std::function<const std::vector<int64_t>&(int64_t)>& consumersOf);
  // Above this many groups the matrix would take more than about 50 MB;
  // callers search instead.
  static constexpr int64_t kMaxGroups = 20000;

  // Whether a path of one or more edges leads from `from` to `to`.
  bool reaches(int64_t from, int64_t to) const;
  // `gone` was merged into `keep` (no path between them): the merged group
  // reaches what either reached, and is reached by whatever reached either.
  void merge(int64_t keep, int64_t gone);
  // The same, given every group that reaches either (the caller knows them
  // from the edges): a merge then costs a row per ancestor, not a look at
  // every row, which made a pass of n merges quadratic.
  void merge(int64_t keep, int64_t gone, const std::vector<int64_t>& ancestors);

 private:
  void set(int64_t row, int64_t col);
  bool test(int64_t row, int64_t col) const;

  std::vector<int64_t> index_;  // group id -> row, -1 when not alive
  int64_t n_;
  int64_t words_;
  std::vector<uint64_t> bits_;  // row-major: row = from, column = to
};

}  // namespace nvfuser
