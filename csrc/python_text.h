// Text as Python reads it back, for printed definitions and messages.
#pragma once

#include <string>

namespace nvfuser {

// A Python string literal of s: quotes and backslashes escaped, other
// non-printable bytes as \xNN, so it stays one visible line.
std::string pythonQuoted(const std::string& s);

}  // namespace nvfuser
