// Numeric settings read from the environment: the bounds of caches and
// tables that a long-running process may want to change.
#pragma once

#include <cstddef>

namespace nvfuser {

// $name as a positive decimal count; `fallback` when unset or empty.
// Anything else (a sign, a space, another character, zero, a number that
// does not fit) throws a ValueError naming the variable: a typo must not
// silently become another bound (strtoull would read "-1" as 2^64-1).
size_t positiveCountFromEnvironment(const char* name, size_t fallback);

}  // namespace nvfuser
