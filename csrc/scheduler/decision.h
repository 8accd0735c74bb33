// The answer to a segmentation question: yes, or no with the reason why.
#pragma once

#include <string>
#include <utility>

namespace nvfuser {

class Decision {
 public:
  static Decision yes() { return Decision(true, ""); }
  static Decision no(std::string reason) {
    return Decision(false, std::move(reason));
  }
  explicit operator bool() const { return ok_; }
  bool ok() const { return ok_; }
  const std::string& reason() const { return reason_; }

 private:
  Decision(bool ok, std::string reason) : ok_(ok), reason_(std::move(reason)) {}
  bool ok_;
  std::string reason_;
};

}  // namespace nvfuser
