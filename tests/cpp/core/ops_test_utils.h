// Helpers for builder tests: the message an op throws, input
// descriptors, static shapes.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "exceptions.h"
#include "ir/fusion.h"
#include "ops/concretize.h"

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

// Expects `stmt` to throw an nvfuser::Error whose message contains `text`.
#define EXPECT_ERROR_CONTAINS(stmt, text)                                      \
  do {                                                                         \
    std::string msg_ = errorOf([&] { stmt; });                                 \
    EXPECT_NE(msg_.find(text), std::string::npos)                              \
        << "expected error containing '" << text << "', got '" << msg_ << "'"; \
  } while (false)

// A tensor input of these sizes and dtype (strides left to concretization:
// dense).
inline InputDescriptor inputDescriptor(std::vector<int64_t> sizes, DataType t) {
  InputDescriptor d;
  d.dtype = t;
  d.sizes = std::move(sizes);
  return d;
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
