// Classifies reshapes for forwarding and view decisions.
#pragma once

#include <string>

#include "ir/exprs.h"

namespace nvfuser {

enum class ReshapeKind {
  MergeOnly,  // every output dim is a product of consecutive input dims
  Split,      // some input dim is split across output dims
};

struct ReshapeClassification {
  ReshapeKind kind = ReshapeKind::MergeOnly;
  // An expanded broadcast dim of size > 1 is turned into a real dimension
  // (the reshape output has no expanded dims).
  bool concretizesExpandedDim = false;
  // Every input dim is a product of a run of output dims (size-1 dims
  // aside): a view whatever the input's strides (a slice of qkv split into
  // heads).
  bool splitsOnly = false;
  std::string describe() const;
};

// Size-1 dims on either side are ignored. Needs a concrete fusion.
ReshapeClassification classifyReshape(const ReshapeOp* op);

}  // namespace nvfuser
