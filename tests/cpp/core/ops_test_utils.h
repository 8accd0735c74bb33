// Helpers for builder tests: the message an op throws, static shapes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "exceptions.h"
#include "ir/fusion.h"

namespace nvfuser {

// Runs fn and returns the nvfuser::Error message it throws ("" if none).
template <typename Fn>
std::string errorOf(Fn fn, ErrorKind* kind = nullptr) {
  try {
    fn();
  } catch (const Error& e) {
    if (kind != nullptr) {
      *kind = e.kind();
    }
    return e.what();
  }
  return "";
}

// The tensor's sizes, -1 for symbolic ones.
inline std::vector<int64_t> staticShape(const TensorView* tv) {
  std::vector<int64_t> out;
  for (const IterDomain& id : tv->noReductions()) {
    Extent e = tv->fusion()->canonical(id.logicalExtent());
    out.push_back(e.isConst() ? e.value : -1);
  }
  return out;
}

}  // namespace nvfuser
