// One dimension of a tensor's logical domain.
#pragma once

#include <cstdint>
#include <string>

namespace nvfuser {

// An extent is either a known constant or a symbol that is bound when the
// fusion is concretized for real inputs. Symbols are unified through the
// owning Fusion when ops require two extents to be equal.
struct Extent {
  int64_t value = 0;
  int64_t symbol = -1;

  static Extent constant(int64_t v) { return Extent{v, -1}; }
  static Extent symbolic(int64_t id) { return Extent{0, id}; }
  bool isConst() const { return symbol < 0; }
  bool operator==(const Extent& o) const {
    return isConst() == o.isConst() &&
           (isConst() ? value == o.value : symbol == o.symbol);
  }
  bool operator!=(const Extent& o) const { return !(*this == o); }
  std::string toString() const;
};

enum class IterType { Iteration, Broadcast, Reduction };

struct IterDomain {
  Extent extent;
  IterType type = IterType::Iteration;
  // A broadcast dimension that has been expanded keeps extent 1 in memory but
  // stands for `expanded` elements to consumers.
  bool hasExpanded = false;
  Extent expanded;

  static IterDomain iteration(Extent e) {
    return {e, IterType::Iteration, false, Extent{}};
  }
  static IterDomain reduction(Extent e) {
    return {e, IterType::Reduction, false, Extent{}};
  }
  static IterDomain broadcast() {
    return {Extent::constant(1), IterType::Broadcast, false, Extent{}};
  }
  static IterDomain expandedBroadcast(Extent to) {
    return {Extent::constant(1), IterType::Broadcast, true, to};
  }

  bool isBroadcast() const { return type == IterType::Broadcast; }
  bool isReduction() const { return type == IterType::Reduction; }
  bool isIteration() const { return type == IterType::Iteration; }
  // The number of elements this dimension stands for (expanded extent for an
  // expanded broadcast).
  Extent logicalExtent() const { return hasExpanded ? expanded : extent; }
  std::string toString() const;
};

}  // namespace nvfuser
