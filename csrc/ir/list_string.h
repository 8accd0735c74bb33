// "[a, b, c]" for messages and printers.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace nvfuser {

template <typename T>
std::string listToString(const std::vector<T>& v) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < v.size(); ++i) {
    os << (i ? ", " : "") << v[i];
  }
  os << "]";
  return os.str();
}

}  // namespace nvfuser
