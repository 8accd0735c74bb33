#include "compiler/occupancy_tuner.h"

#include <algorithm>

namespace nvfuser {

namespace {
constexpr int kRegistersPerSm = 65536;
constexpr int kThreadsPerSm = 2048;
constexpr int kBlocksPerSm = 32;
constexpr int kRegisterUnit = 8;  // per thread: 256 per warp
// A cap that takes more registers than this from the kernel trades too
// much: ptxas spills or reorders loads (layer norm lost 30% at 63 -> 48).
constexpr int kMaxRegistersCut = 8;
}  // namespace

int residentBlocksByRegisters(int registers, int blockThreads) {
  const int warps = (blockThreads + 31) / 32;
  const int perThread = (std::max(registers, 1) + kRegisterUnit - 1) /
                        kRegisterUnit * kRegisterUnit;
  const int byRegisters = kRegistersPerSm / (perThread * 32 * warps);
  const int byThreads = kThreadsPerSm / (32 * warps);
  return std::min({byRegisters, byThreads, kBlocksPerSm});
}

CompiledKernel compileForOccupancy(const std::string& source,
                                   const std::string& name,
                                   const std::string& arch, int blockThreads,
                                   bool ptxasVerbose,
                                   const KernelCaches& caches) {
  CompiledKernel k =
      compileWithNvrtc(source, name, arch, ptxasVerbose, 0, caches);
  if (k.registers <= 0 || blockThreads <= 0) {
    return k;
  }
  const int warps = (blockThreads + 31) / 32;
  const int blocks = residentBlocksByRegisters(k.registers, blockThreads);
  if (blocks >= std::min(kThreadsPerSm / (32 * warps), kBlocksPerSm)) {
    return k;  // threads, not registers, limit it
  }
  const int cap = kRegistersPerSm / ((blocks + 1) * 32 * warps) /
                  kRegisterUnit * kRegisterUnit;
  if (cap < k.registers - kMaxRegistersCut || cap < 32) {
    return k;
  }
  CompiledKernel capped =
      compileWithNvrtc(source, name, arch, ptxasVerbose, cap, caches);
  return capped.spillBytes == 0 ? capped : k;
}

}  // namespace nvfuser
