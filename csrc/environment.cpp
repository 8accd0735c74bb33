#include "environment.h"

#include <cstdlib>
#include <limits>
#include <string>

#include "exceptions.h"

namespace nvfuser {

namespace {
// The digits as a number; false for anything but digits, or an overflow.
bool parseDigits(const std::string& text, size_t* value) {
  constexpr size_t kMax = std::numeric_limits<size_t>::max();
  size_t n = 0;
  for (char c : text) {
    if (c < '0' || c > '9') {
      return false;
    }
    const size_t digit = static_cast<size_t>(c - '0');
    if (n > (kMax - digit) / 10) {
      return false;
    }
    n = n * 10 + digit;
  }
  *value = n;
  return !text.empty();
}
}  // namespace

size_t positiveCountFromEnvironment(const char* name, size_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') {
    return fallback;
  }
  size_t n = 0;
  NVF_CHECK(parseDigits(text, &n) && n > 0, name,
            " must be a positive decimal integer, got '", text, "'");
  return n;
}

}  // namespace nvfuser
