// Device code of nvFuser's random ops, added to kernels that compute one
// (docs/rng.md). runtime/philox.cpp is the same algorithm on the CPU.
#pragma once

#include <string>

#include "ir/fusion.h"

namespace nvfuser {

const char* rngDeviceHelpersSource();
// deviceHelpersSource(), plus the random-number helpers when `f` has a
// random op.
std::string deviceHelpersFor(const Fusion& f);

}  // namespace nvfuser
