#include "runtime/segment_timer.h"

#include "runtime/cuda_driver.h"

namespace nvfuser {

SegmentTimer::SegmentTimer(at::Device device, void* stream)
    : cuda_(device.is_cuda()),
      device_(device.has_index() ? device.index() : 0),
      stream_(static_cast<CUstream>(stream)) {}

SegmentTimer::~SegmentTimer() {
  for (CUevent e : events_) {
    CudaDriver::get().destroyEvent(e);
  }
}

void SegmentTimer::begin() {
  if (cuda_) {
    events_.push_back(CudaDriver::get().recordEvent(device_, stream_));
  } else {
    marks_.push_back(std::chrono::steady_clock::now());
  }
}

void SegmentTimer::end() {
  begin();
}

std::vector<double> SegmentTimer::millis() {
  std::vector<double> out;
  if (cuda_) {
    for (size_t i = 0; i + 1 < events_.size(); i += 2) {
      out.push_back(CudaDriver::get().elapsedMs(events_[i], events_[i + 1]));
    }
    return out;
  }
  for (size_t i = 0; i + 1 < marks_.size(); i += 2) {
    out.push_back(
        std::chrono::duration<double, std::milli>(marks_[i + 1] - marks_[i])
            .count());
  }
  return out;
}

}  // namespace nvfuser
