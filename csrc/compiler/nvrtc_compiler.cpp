#include "compiler/nvrtc_compiler.h"

#include <nvrtc.h>

#include <atomic>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "compiler/kernel_cache_entry.h"
#include "compiler/kernel_disk_cache.h"
#include "compiler/kernel_memory_cache.h"
#include "exceptions.h"
#include "options.h"

namespace nvfuser {

namespace {
std::atomic<uint64_t> nvrtcCompiles{0};
std::atomic<uint64_t> memoryHits{0};
std::atomic<uint64_t> diskHits{0};
}  // namespace

namespace {
void checkNvrtc(nvrtcResult r, const char* what) {
  NVF_CHECK_KIND(r == NVRTC_SUCCESS, Runtime, "NVRTC ", what,
                 " failed: ", nvrtcGetErrorString(r));
}

// Every option NVRTC gets; also part of the disk cache key. ptxas always
// reports (registers and spills are kept); the report stays in the log
// only when asked for.
std::vector<std::string> nvrtcOptions(const std::string& arch,
                                      int maxRegisters) {
  std::vector<std::string> opts = {"--gpu-architecture=" + arch, "--std=c++17",
                                   "-default-device", "--ptxas-options=-v"};
  if (maxRegisters > 0) {
    opts.push_back("--maxrregcount=" + std::to_string(maxRegisters));
  }
  return opts;
}

// Length first, so no two field lists hash the same bytes.
void addKeyField(Sha256& hasher, const std::string& field) {
  uint8_t length[8];
  for (int i = 0; i < 8; ++i) {
    length[i] = static_cast<uint8_t>(uint64_t{field.size()} >> (8 * i));
  }
  hasher.update(length, sizeof(length));
  hasher.update(field);
}

// The number just before `unit` in ptxas' report, from `from` on.
int ptxasNumber(const std::string& log, const std::string& from,
                const std::string& unit) {
  const size_t at = log.find(from);
  const size_t u = at == std::string::npos ? at : log.find(unit, at);
  if (u == std::string::npos || u < 2) {
    return -1;
  }
  size_t b = log.rfind(' ', u - 2);
  b = b == std::string::npos ? 0 : b + 1;
  return std::atoi(log.substr(b, u - b).c_str());
}

// The log without ptxas' report lines.
std::string withoutPtxasReport(const std::string& log) {
  std::istringstream in(log);
  std::string out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("ptxas", 0) != 0) {
      out += line + "\n";
    }
  }
  return out;
}

CompiledKernel compileUncached(const std::string& source,
                               const std::string& name, const std::string& arch,
                               bool ptxasVerbose, int maxRegisters) {
  ++nvrtcCompiles;
  nvrtcProgram prog;
  checkNvrtc(nvrtcCreateProgram(&prog, source.c_str(), (name + ".cu").c_str(),
                                0, nullptr, nullptr),
             "create program");
  const std::vector<std::string> optStrings = nvrtcOptions(arch, maxRegisters);
  std::vector<const char*> opts;
  for (const std::string& o : optStrings) {
    opts.push_back(o.c_str());
  }
  nvrtcResult r =
      nvrtcCompileProgram(prog, static_cast<int>(opts.size()), opts.data());
  size_t logSize = 0;
  nvrtcGetProgramLogSize(prog, &logSize);
  std::string log(logSize, '\0');
  if (logSize > 0) {
    nvrtcGetProgramLog(prog, log.data());
    const size_t end = log.find('\0');  // the size counts the terminator
    if (end != std::string::npos) {
      log.resize(end);
    }
  }
  if (r != NVRTC_SUCCESS) {
    nvrtcDestroyProgram(&prog);
    NVF_THROW(Runtime, "NVRTC could not compile kernel ", name, " for ", arch,
              ": ", nvrtcGetErrorString(r), "\n", log);
  }
  CompiledKernel k;
  k.arch = arch;
  k.registers = ptxasNumber(log, "Used ", " registers");
  k.spillBytes = ptxasNumber(log, "Function properties", " bytes spill stores");
  k.maxRegisters = maxRegisters;
  k.log = ptxasVerbose ? log : withoutPtxasReport(log);
  size_t size = 0;
  checkNvrtc(nvrtcGetCUBINSize(prog, &size), "get cubin size");
  k.cubin.resize(size);
  checkNvrtc(nvrtcGetCUBIN(prog, k.cubin.data()), "get cubin");
  nvrtcDestroyProgram(&prog);
  return k;
}
}  // namespace

KernelCompileStats kernelCompileStats() {
  KernelCompileStats s;
  s.nvrtcCompiles = nvrtcCompiles.load();
  s.memoryHits = memoryHits.load();
  s.diskHits = diskHits.load();
  return s;
}

KernelCaches KernelCaches::standard() {
  KernelCaches caches;
  caches.disk = KernelDiskCache::fromEnvironment();
  return caches;
}

KernelCaches KernelCaches::forOptions(const Options& options) {
  if (options.disabled("kernel_cache")) {
    KernelCaches none;
    none.memory = false;
    return none;
  }
  return standard();
}

Sha256Digest kernelCacheKey(const std::string& source, const std::string& name,
                            const std::string& arch, int maxRegisters) {
  Sha256 hasher;
  addKeyField(hasher, "nvfuser-lite kernel");
  addKeyField(hasher, std::to_string(kKernelCacheFormatVersion));
  addKeyField(hasher, source);
  addKeyField(hasher, name);
  addKeyField(hasher, arch);
  addKeyField(hasher, nvrtcVersionString());
  for (const std::string& o : nvrtcOptions(arch, maxRegisters)) {
    addKeyField(hasher, o);
  }
  return hasher.finish();
}

namespace {
CompiledKernel compileWithDiskCache(const std::string& source,
                                    const std::string& name,
                                    const std::string& arch, int maxRegisters,
                                    KernelDiskCache* disk) {
  if (disk == nullptr) {
    return compileUncached(source, name, arch, /*ptxasVerbose=*/false,
                           maxRegisters);
  }
  const Sha256Digest key = kernelCacheKey(source, name, arch, maxRegisters);
  if (std::optional<KernelCacheEntry> entry = disk->load(key)) {
    ++diskHits;
    CompiledKernel k;
    k.arch = arch;
    k.cubin = std::move(entry->payload);
    k.registers = entry->registers;
    k.spillBytes = entry->spillBytes;
    k.maxRegisters = maxRegisters;
    return k;
  }
  CompiledKernel k = compileUncached(source, name, arch,
                                     /*ptxasVerbose=*/false, maxRegisters);
  KernelCacheEntry entry;
  entry.payload = k.cubin;
  entry.registers = k.registers;
  entry.spillBytes = k.spillBytes;
  disk->store(key, entry);
  return k;
}
}  // namespace

CompiledKernel compileWithNvrtc(const std::string& source,
                                const std::string& name,
                                const std::string& arch, bool ptxasVerbose,
                                int maxRegisters, const KernelCaches& caches) {
  if (ptxasVerbose) {
    CompiledKernel k = compileUncached(source, name, arch,
                                       /*ptxasVerbose=*/true, maxRegisters);
    std::cout << "// ptxas " << name << " (" << arch;
    if (maxRegisters > 0) {
      std::cout << ", at most " << maxRegisters << " registers";
    }
    std::cout << "):\n" << k.log << std::flush;
    return k;
  }
  if (!caches.memory) {
    // The disk cache is safe to use from many threads on its own.
    return compileWithDiskCache(source, name, arch, maxRegisters, caches.disk);
  }
  bool missed = false;
  CompiledKernel k =
      KernelMemoryCache::get().getOrCompile({source, arch, maxRegisters}, [&] {
        missed = true;
        return compileWithDiskCache(source, name, arch, maxRegisters,
                                    caches.disk);
      });
  if (!missed) {
    ++memoryHits;
  }
  return k;
}

std::string nvrtcVersionString() {
  int major = 0;
  int minor = 0;
  nvrtcVersion(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

}  // namespace nvfuser
