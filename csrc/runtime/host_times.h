// NVFUSER_DUMP=host_time: the host's time of one execute by segment kind
// (argument binding, allocation, launch or ATen call), printed as one
// line, then a line per segment with its ops. What keeps a GPU waiting when
// kernels are short is host time per segment; this says which segments
// spend it.
#pragma once

#include <array>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "scheduler/scheduler_type.h"

namespace nvfuser {

class HostTimes {
 public:
  explicit HostTimes(bool enabled);

  // Times segment `segment`, of kind `type`, from construction to
  // destruction.
  class Scope {
   public:
    Scope(HostTimes& times, SchedulerType type, size_t segment);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    HostTimes& times_;
    SchedulerType type_;
    size_t segment_;
    std::chrono::steady_clock::time_point start_;
  };

  // "[host_time] 1234.5 us in segments: pointwise 12 x 8.1 us, ..." and
  // "[host_time] g3 expr_eval 31.2 us: linear" per segment, `label` naming
  // a segment's ops (when enabled).
  void print(const std::function<std::string(size_t)>& label) const;

 private:
  static constexpr size_t kKinds = 5;
  bool enabled_;
  std::chrono::steady_clock::time_point start_;
  std::array<double, kKinds> micros_{};
  std::array<int, kKinds> counts_{};
  // Per segment that ran: its kind and host microseconds.
  std::vector<std::pair<SchedulerType, double>> segments_;
};

}  // namespace nvfuser
