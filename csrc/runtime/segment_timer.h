// Times each segment of one execute (execute(profile=True)): CUDA events
// around each segment's work on the stream on a GPU, host wall time on the
// CPU. Only a profiled execute pays for it (the events wait at the end).
#pragma once

#include <ATen/ATen.h>
#include <cuda.h>

#include <chrono>
#include <vector>

namespace nvfuser {

class SegmentTimer {
 public:
  SegmentTimer(at::Device device, void* stream);
  ~SegmentTimer();
  SegmentTimer(const SegmentTimer&) = delete;
  SegmentTimer& operator=(const SegmentTimer&) = delete;

  void begin();
  void end();
  // Milliseconds of each begin/end pair, in order (waits for the GPU).
  std::vector<double> millis();

 private:
  bool cuda_;
  int device_;
  CUstream stream_;
  std::vector<CUevent> events_;
  std::vector<std::chrono::steady_clock::time_point> marks_;
};

}  // namespace nvfuser
