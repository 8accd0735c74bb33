#include "runtime/host_times.h"

#include <cstdio>

namespace nvfuser {

namespace {
double microsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now() - t)
      .count();
}
}  // namespace

HostTimes::HostTimes(bool enabled)
    : enabled_(enabled), start_(std::chrono::steady_clock::now()) {}

HostTimes::Scope::Scope(HostTimes& times, SchedulerType type)
    : times_(times), type_(type) {
  if (times_.enabled_) {
    start_ = std::chrono::steady_clock::now();
  }
}

HostTimes::Scope::~Scope() {
  if (!times_.enabled_) {
    return;
  }
  const auto k = static_cast<size_t>(type_);
  if (k < kKinds) {
    times_.micros_[k] += microsSince(start_);
    times_.counts_[k] += 1;
  }
}

void HostTimes::print() const {
  if (!enabled_) {
    return;
  }
  std::printf("[host_time] %.1f us in segments:", microsSince(start_));
  for (size_t k = 0; k < kKinds; ++k) {
    if (counts_[k] > 0) {
      std::printf(" %s %d x %.1f us", toString(static_cast<SchedulerType>(k)),
                  counts_[k], micros_[k] / counts_[k]);
    }
  }
  std::printf("\n");
  std::fflush(stdout);
}

}  // namespace nvfuser
