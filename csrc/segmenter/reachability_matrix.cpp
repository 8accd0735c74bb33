#include "segmenter/reachability_matrix.h"

#include <algorithm>

namespace nvfuser {

ReachabilityMatrix::ReachabilityMatrix(
    const std::vector<int64_t>& topoOrder,
    const std::function<const std::vector<int64_t>&(int64_t)>& consumersOf)
    : n_(static_cast<int64_t>(topoOrder.size())),
      words_((n_ + 63) / 64),
      bits_(size_t(n_ * words_), 0) {
  int64_t maxId = -1;
  for (int64_t id : topoOrder) {
    maxId = std::max(maxId, id);
  }
  index_.assign(size_t(maxId + 1), -1);
  for (size_t i = 0; i < topoOrder.size(); ++i) {
    index_[size_t(topoOrder[i])] = static_cast<int64_t>(i);
  }
  // Consumers before producers: a row is its consumers' rows plus them.
  for (auto it = topoOrder.rbegin(); it != topoOrder.rend(); ++it) {
    const int64_t g = index_[size_t(*it)];
    for (int64_t cid : consumersOf(*it)) {
      const int64_t c = index_[size_t(cid)];
      set(g, c);
      for (int64_t w = 0; w < words_; ++w) {
        bits_[size_t(g * words_ + w)] |= bits_[size_t(c * words_ + w)];
      }
    }
  }
}

void ReachabilityMatrix::set(int64_t row, int64_t col) {
  bits_[size_t(row * words_ + col / 64)] |= uint64_t(1) << (col % 64);
}

bool ReachabilityMatrix::test(int64_t row, int64_t col) const {
  return (bits_[size_t(row * words_ + col / 64)] >> (col % 64)) & 1u;
}

bool ReachabilityMatrix::reaches(int64_t from, int64_t to) const {
  return test(index_.at(size_t(from)), index_.at(size_t(to)));
}

void ReachabilityMatrix::merge(int64_t keepId, int64_t goneId) {
  const int64_t keep = index_.at(size_t(keepId));
  const int64_t gone = index_.at(size_t(goneId));
  std::vector<int64_t> ancestors;
  for (size_t id = 0; id < index_.size(); ++id) {
    const int64_t x = index_[id];
    if (x >= 0 && x != keep && x != gone && (test(x, keep) || test(x, gone))) {
      ancestors.push_back(static_cast<int64_t>(id));
    }
  }
  merge(keepId, goneId, ancestors);
}

void ReachabilityMatrix::merge(int64_t keepId, int64_t goneId,
                               const std::vector<int64_t>& ancestors) {
  const int64_t keep = index_.at(size_t(keepId));
  const int64_t gone = index_.at(size_t(goneId));
  // The merged group's descendants: both rows.
  for (int64_t w = 0; w < words_; ++w) {
    bits_[size_t(keep * words_ + w)] |= bits_[size_t(gone * words_ + w)];
  }
  // Every ancestor of either part now reaches the merged group and all of
  // its descendants.
  for (int64_t id : ancestors) {
    const int64_t x = index_.at(size_t(id));
    if (x == keep || x == gone) {
      continue;
    }
    set(x, keep);
    for (int64_t w = 0; w < words_; ++w) {
      bits_[size_t(x * words_ + w)] |= bits_[size_t(keep * words_ + w)];
    }
  }
}

}  // namespace nvfuser
