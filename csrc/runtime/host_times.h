// NVFUSER_DUMP=host_time: the host's time of one execute by segment kind
// (argument binding, allocation, launch or ATen call), printed as one
// line. What keeps a GPU waiting when kernels are short is host time per
// segment; this says which kind of segment spends it.
#pragma once

#include <array>
#include <chrono>

#include "scheduler/scheduler_type.h"

namespace nvfuser {

class HostTimes {
 public:
  explicit HostTimes(bool enabled);

  // Times one segment of kind `type` from construction to destruction.
  class Scope {
   public:
    Scope(HostTimes& times, SchedulerType type);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    HostTimes& times_;
    SchedulerType type_;
    std::chrono::steady_clock::time_point start_;
  };

  // "[host_time] 1234.5 us: pointwise 12 x 8.1 us, expr_eval ..." (when
  // enabled).
  void print() const;

 private:
  static constexpr size_t kKinds = 5;
  bool enabled_;
  std::chrono::steady_clock::time_point start_;
  std::array<double, kKinds> micros_{};
  std::array<int, kKinds> counts_{};
};

}  // namespace nvfuser
