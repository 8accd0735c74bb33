// Compiles generated CUDA C++ with NVRTC. Needs no GPU, so every kernel can
// be compiled on any machine (CI compiles them all for sm_90).
#pragma once

#include <string>
#include <vector>

namespace nvfuser {

struct CompiledKernel {
  std::string arch;         // "sm_90"
  std::vector<char> cubin;  // machine code for arch
  std::string log;          // NVRTC's log (warnings)
};

// Throws a RuntimeError with NVRTC's log when compilation fails. Results
// are cached in memory by (source, arch), and on disk under
// $NVFUSER_CACHE_DIR when it is set.
// With ptxasVerbose the kernel is compiled again with `-v` for ptxas (its
// registers, spills and shared memory) is printed to stdout and kept in
// `log`; this bypasses the caches.
CompiledKernel compileWithNvrtc(const std::string& source,
                                const std::string& name,
                                const std::string& arch,
                                bool ptxasVerbose = false);

// NVRTC's version, e.g. "13.0".
std::string nvrtcVersionString();

}  // namespace nvfuser
