#include "compiler/nvrtc_compiler.h"

#include <nvrtc.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <map>
#include <mutex>
#include <sstream>

#include "exceptions.h"

namespace nvfuser {

namespace {
void checkNvrtc(nvrtcResult r, const char* what) {
  NVF_CHECK_KIND(r == NVRTC_SUCCESS, Runtime, "NVRTC ", what,
                 " failed: ", nvrtcGetErrorString(r));
}

std::string cachePath(size_t hash, const std::string& arch) {
  const char* dir = std::getenv("NVFUSER_CACHE_DIR");
  if (dir == nullptr || *dir == '\0') {
    return "";
  }
  std::ostringstream os;
  os << dir << "/kernel_" << std::hex << hash << "_" << arch << ".cubin";
  return os.str();
}

CompiledKernel compileUncached(const std::string& source,
                               const std::string& name, const std::string& arch,
                               bool ptxasVerbose) {
  nvrtcProgram prog;
  checkNvrtc(nvrtcCreateProgram(&prog, source.c_str(), (name + ".cu").c_str(),
                                0, nullptr, nullptr),
             "create program");
  std::string archOpt = "--gpu-architecture=" + arch;
  const char* opts[] = {archOpt.c_str(), "--std=c++17", "-default-device",
                        "--ptxas-options=-v"};
  nvrtcResult r = nvrtcCompileProgram(prog, ptxasVerbose ? 4 : 3, opts);
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
  k.log = log;
  size_t size = 0;
  checkNvrtc(nvrtcGetCUBINSize(prog, &size), "get cubin size");
  k.cubin.resize(size);
  checkNvrtc(nvrtcGetCUBIN(prog, k.cubin.data()), "get cubin");
  nvrtcDestroyProgram(&prog);
  return k;
}
}  // namespace

CompiledKernel compileWithNvrtc(const std::string& source,
                                const std::string& name,
                                const std::string& arch, bool ptxasVerbose) {
  if (ptxasVerbose) {
    CompiledKernel k = compileUncached(source, name, arch, true);
    std::cout << "// ptxas " << name << " (" << arch << "):\n"
              << k.log << std::flush;
    return k;
  }
  static std::mutex mutex;
  static std::map<std::pair<std::string, std::string>, CompiledKernel> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto key = std::make_pair(source, arch);
  auto it = cache.find(key);
  if (it != cache.end()) {
    return it->second;
  }
  std::string path = cachePath(std::hash<std::string>{}(source), arch);
  CompiledKernel k;
  std::ifstream cached(path, std::ios::binary);
  if (!path.empty() && cached) {
    k.arch = arch;
    k.cubin.assign(std::istreambuf_iterator<char>(cached),
                   std::istreambuf_iterator<char>());
  } else {
    k = compileUncached(source, name, arch, /*ptxasVerbose=*/false);
    if (!path.empty()) {
      std::ofstream(path, std::ios::binary)
          .write(k.cubin.data(), static_cast<std::streamsize>(k.cubin.size()));
    }
  }
  return cache.emplace(key, std::move(k)).first->second;
}

std::string nvrtcVersionString() {
  int major = 0;
  int minor = 0;
  nvrtcVersion(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

}  // namespace nvfuser
