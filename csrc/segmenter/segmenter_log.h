// Collects segmentation decisions with their reasons
// (NVFUSER_DUMP=segmenter_logging prints them; tests read them).
#pragma once

#include <string>
#include <vector>

namespace nvfuser {

class SegmenterLog {
 public:
  explicit SegmenterLog(bool enabled) : enabled_(enabled) {}
  bool enabled() const { return enabled_; }
  void add(std::string line) {
    if (enabled_) {
      lines_.push_back(std::move(line));
    }
  }
  const std::vector<std::string>& lines() const { return lines_; }

 private:
  bool enabled_;
  std::vector<std::string> lines_;
};

}  // namespace nvfuser
