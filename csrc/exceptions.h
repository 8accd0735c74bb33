// Errors raised by the compiler. User mistakes throw nvfuser::Error with a
// kind that the Python bindings map to the matching Python exception type;
// broken internal invariants throw with an "internal error" prefix.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace nvfuser {

enum class ErrorKind {
  Value,
  Type,
  Runtime,
  NotImplemented,
  ZeroDivision,  // integer division by zero on the CPU, as torch raises
  Index,         // an index out of range on the CPU (IndexError)
  Internal
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message)
      : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

namespace detail {
inline void appendAll(std::ostringstream&) {}
template <typename T, typename... Rest>
void appendAll(std::ostringstream& os, const T& first, const Rest&... rest) {
  os << first;
  appendAll(os, rest...);
}
template <typename... Args>
[[noreturn]] void throwError(ErrorKind kind, const Args&... args) {
  std::ostringstream os;
  if (kind == ErrorKind::Internal) {
    os << "internal error: ";
  }
  appendAll(os, args...);
  throw Error(kind, os.str());
}
}  // namespace detail

}  // namespace nvfuser

// User-facing checks: the message must name the op, the operands and what is
// wrong.
#define NVF_CHECK(cond, ...)                                                   \
  do {                                                                         \
    if (!(cond)) {                                                             \
      ::nvfuser::detail::throwError(::nvfuser::ErrorKind::Value, __VA_ARGS__); \
    }                                                                          \
  } while (false)

#define NVF_CHECK_KIND(cond, kind, ...)                                       \
  do {                                                                        \
    if (!(cond)) {                                                            \
      ::nvfuser::detail::throwError(::nvfuser::ErrorKind::kind, __VA_ARGS__); \
    }                                                                         \
  } while (false)

#define NVF_THROW(kind, ...) \
  ::nvfuser::detail::throwError(::nvfuser::ErrorKind::kind, __VA_ARGS__)

// Internal invariants: a failure here is a bug in the compiler.
#define NVF_ASSERT(cond, ...)                                              \
  do {                                                                     \
    if (!(cond)) {                                                         \
      ::nvfuser::detail::throwError(::nvfuser::ErrorKind::Internal, #cond, \
                                    " at ", __FILE__, ":", __LINE__, " ",  \
                                    ##__VA_ARGS__);                        \
    }                                                                      \
  } while (false)
