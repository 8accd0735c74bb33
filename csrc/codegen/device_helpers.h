// The small device-side runtime every generated kernel starts with, as a
// string: our own Half/BFloat16 storage types and conversions.
#pragma once

namespace nvfuser {

const char* deviceHelpersSource();

}  // namespace nvfuser
