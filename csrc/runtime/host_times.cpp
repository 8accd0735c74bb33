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

HostTimes::Scope::Scope(HostTimes& times, SchedulerType type, size_t segment)
    : times_(times), type_(type), segment_(segment) {
  if (times_.enabled_) {
    start_ = std::chrono::steady_clock::now();
  }
}

HostTimes::Scope::~Scope() {
  if (!times_.enabled_) {
    return;
  }
  const double us = microsSince(start_);
  const auto k = static_cast<size_t>(type_);
  if (k < kKinds) {
    times_.micros_[k] += us;
    times_.counts_[k] += 1;
  }
  if (times_.segments_.size() <= segment_) {
    times_.segments_.resize(segment_ + 1, {type_, -1.0});
  }
  times_.segments_[segment_] = {type_, us};
}

void HostTimes::print(const std::function<std::string(size_t)>& label) const {
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
  for (size_t g = 0; g < segments_.size(); ++g) {
    if (segments_[g].second >= 0) {
      std::printf("[host_time] g%zu %s %.1f us: %s\n", g,
                  toString(segments_[g].first), segments_[g].second,
                  label(g).c_str());
    }
  }
  std::fflush(stdout);
}

}  // namespace nvfuser
