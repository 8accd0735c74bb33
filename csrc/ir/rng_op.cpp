#include "ir/rng_op.h"

#include "ir/list_string.h"
#include "ir/val.h"

namespace nvfuser {

const char* toString(RngOpType t) {
  return t == RngOpType::Uniform ? "uniform" : "normal";
}

std::string RngOp::opName() const {
  if (like_) {
    return op_ == RngOpType::Uniform ? "rand_like" : "randn_like";
  }
  return nvfuser::toString(op_);
}

std::string RngOp::attributesToString() const {
  std::string s = like_ ? "" : "shape=" + listToString(shape_) + ", ";
  return s + "dtype=" + nvfuser::toString(output(0)->dtype()) +
         ", index=" + std::to_string(index_) +
         (seeded_ ? "" : ", seed drawn at execute");
}

}  // namespace nvfuser
