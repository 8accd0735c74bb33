// Writes a Fusion as a Python script using the FusionDefinition API: the
// fuzzer's reproducers, and a readable dump of any fusion.
#pragma once

#include <string>

#include "ir/fusion.h"

namespace nvfuser {

// A complete script: imports, the `with FusionDefinition() as fd:` block,
// and the inputs' shapes as comments.
std::string fusionToPython(const Fusion& fusion);

}  // namespace nvfuser
