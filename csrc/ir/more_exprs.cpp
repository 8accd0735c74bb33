#include "ir/more_exprs.h"

#include "ir/list_string.h"

namespace nvfuser {

std::string TriuOp::attributesToString() const {
  return "diagonal=" + std::to_string(diagonal_);
}
std::string WelfordOp::attributesToString() const {
  return "dims=" + listToString(axes_);
}
std::string ScanOp::attributesToString() const {
  return "dim=" + std::to_string(dim_);
}
std::string ScatterOp::attributesToString() const {
  return "dim=" + std::to_string(dim_);
}

}  // namespace nvfuser
