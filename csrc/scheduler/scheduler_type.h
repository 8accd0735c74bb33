#pragma once

#include <array>

namespace nvfuser {

enum class SchedulerType {
  NoOp,
  ExprEval,
  PointWise,
  Reduction,
  InnerPersistent
};

// The registry's priority order.
constexpr std::array<SchedulerType, 5> kAllSchedulerTypes = {
    SchedulerType::NoOp, SchedulerType::ExprEval, SchedulerType::PointWise,
    SchedulerType::Reduction, SchedulerType::InnerPersistent};

// nvFuser's spelling: "no_op", "expr_eval", "pointwise", ...
const char* toString(SchedulerType t);

}  // namespace nvfuser
