// Compiles generated CUDA C++ with NVRTC. Needs no GPU, so every kernel can
// be compiled on any machine (CI compiles them all for sm_90).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/sha256.h"

namespace nvfuser {

class KernelDiskCache;
class Options;

struct CompiledKernel {
  std::string arch;         // "sm_90"
  std::vector<char> cubin;  // machine code for arch
  std::string log;          // NVRTC's log (warnings)
  // From ptxas' report (-1 when it did not say).
  int registers = -1;    // per thread
  int spillBytes = -1;   // spill stores, per thread
  int maxRegisters = 0;  // the cap it was compiled with (0: none)
};

// The caches compileWithNvrtc reads and fills.
struct KernelCaches {
  // This process' compiled kernels by (source, arch, register cap), the
  // least recently used dropped past NVFUSER_MAX_CACHED_KERNELS
  // (kernel_memory_cache.h).
  bool memory = true;
  // Verified entries on disk (kernel_disk_cache.h); nullptr: none.
  KernelDiskCache* disk = nullptr;

  // Both, the disk one where $NVFUSER_CACHE_DIR names it.
  static KernelCaches standard();
  // standard(), or neither under NVFUSER_DISABLE=kernel_cache.
  static KernelCaches forOptions(const Options& options);
};

// Throws a RuntimeError with NVRTC's log when compilation fails. Looks in
// `caches` before compiling (memory first, then disk) and fills them after;
// a disk entry yields no NVRTC log.
// With ptxasVerbose ptxas' report (registers, spills, shared memory) is
// printed to stdout and kept in `log`; this bypasses the caches.
// maxRegisters > 0 caps the registers per thread (ptxas spills the rest).
CompiledKernel compileWithNvrtc(
    const std::string& source, const std::string& name, const std::string& arch,
    bool ptxasVerbose = false, int maxRegisters = 0,
    const KernelCaches& caches = KernelCaches::standard());

// The disk cache key of a compile: a SHA-256 of everything that decides its
// cubin (source, name, arch, NVRTC version and options, entry format).
Sha256Digest kernelCacheKey(const std::string& source, const std::string& name,
                            const std::string& arch, int maxRegisters);

// What this process' compiles did, counted since it started: NVRTC runs,
// and kernels found in the memory or the disk cache instead. A warm
// restart (the disk cache of an earlier process) compiles with no NVRTC
// run.
struct KernelCompileStats {
  uint64_t nvrtcCompiles = 0;
  uint64_t memoryHits = 0;
  uint64_t diskHits = 0;
};
KernelCompileStats kernelCompileStats();

// NVRTC's version, e.g. "13.0".
std::string nvrtcVersionString();

}  // namespace nvfuser
