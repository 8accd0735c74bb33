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
  // From ptxas' report (-1 when it did not say).
  int registers = -1;    // per thread
  int spillBytes = -1;   // spill stores, per thread
  int maxRegisters = 0;  // the cap it was compiled with (0: none)
};

// Throws a RuntimeError with NVRTC's log when compilation fails. Results
// are cached in memory by (source, arch, cap), and on disk under
// $NVFUSER_CACHE_DIR when it is set.
// With ptxasVerbose ptxas' report (registers, spills, shared memory) is
// printed to stdout and kept in `log`; this bypasses the caches.
// maxRegisters > 0 caps the registers per thread (ptxas spills the rest).
CompiledKernel compileWithNvrtc(const std::string& source,
                                const std::string& name,
                                const std::string& arch,
                                bool ptxasVerbose = false,
                                int maxRegisters = 0);

// NVRTC's version, e.g. "13.0".
std::string nvrtcVersionString();

}  // namespace nvfuser
