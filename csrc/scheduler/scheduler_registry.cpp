#include "scheduler/scheduler_registry.h"

#include "exceptions.h"
#include "scheduler/expr_eval_scheduler.h"
#include "scheduler/inner_persistent_scheduler.h"
#include "scheduler/no_op_scheduler.h"
#include "scheduler/pointwise_scheduler.h"
#include "scheduler/reduction_scheduler.h"

namespace nvfuser {

SchedulerRegistry::SchedulerRegistry() {
  schedulers_.push_back(std::make_unique<NoOpScheduler>());
  schedulers_.push_back(std::make_unique<ExprEvalScheduler>());
  schedulers_.push_back(std::make_unique<PointWiseScheduler>());
  schedulers_.push_back(std::make_unique<ReductionScheduler>());
  schedulers_.push_back(std::make_unique<InnerPersistentScheduler>());
}

std::optional<SchedulerType> SchedulerRegistry::proposeScheduler(
    const SegmentView& view) const {
  for (const auto& s : schedulers_) {
    if (s->canSchedule(view)) {
      return s->type();
    }
  }
  return std::nullopt;
}

std::string SchedulerRegistry::rejectionReasons(const SegmentView& view) const {
  std::string out;
  for (const auto& s : schedulers_) {
    Decision d = s->canSchedule(view);
    if (!d) {
      out += (out.empty() ? "" : "; ") + std::string(toString(s->type())) +
             ": " + d.reason();
    }
  }
  return out;
}

Decision SchedulerRegistry::canSchedule(SchedulerType type,
                                        const SegmentView& view) const {
  for (const auto& s : schedulers_) {
    if (s->type() == type) {
      return s->canSchedule(view);
    }
  }
  NVF_THROW(Internal, "no scheduler of type ", toString(type));
}

}  // namespace nvfuser
