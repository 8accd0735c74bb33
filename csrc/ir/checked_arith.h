// Overflow-checked int64 arithmetic for sizes that come from user input:
// the plain operators overflow (undefined behaviour, in practice a wrap) and
// let a wrong size pass a check, e.g. 8 * (2^61 + 3) == 24.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace nvfuser {

inline std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) {
    return std::nullopt;
  }
  return r;
}

inline std::optional<int64_t> checkedAdd(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) {
    return std::nullopt;
  }
  return r;
}

// The product of non-negative sizes, nullopt when it exceeds int64. A zero
// size makes it 0 whatever the others are (torch's numel agrees).
inline std::optional<int64_t> checkedProduct(const std::vector<int64_t>& s) {
  std::optional<int64_t> p = 1;
  for (int64_t v : s) {
    if (v == 0) {
      return 0;
    }
    p = p ? checkedMul(*p, v) : std::nullopt;
  }
  return p;
}

}  // namespace nvfuser
