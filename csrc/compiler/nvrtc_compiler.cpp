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
#include <tuple>
#include <vector>

#include "exceptions.h"

namespace nvfuser {

namespace {
void checkNvrtc(nvrtcResult r, const char* what) {
  NVF_CHECK_KIND(r == NVRTC_SUCCESS, Runtime, "NVRTC ", what,
                 " failed: ", nvrtcGetErrorString(r));
}

std::string cachePath(size_t hash, const std::string& arch, int maxRegisters) {
  const char* dir = std::getenv("NVFUSER_CACHE_DIR");
  if (dir == nullptr || *dir == '\0') {
    return "";
  }
  std::ostringstream os;
  os << dir << "/kernel_" << std::hex << hash << "_" << arch;
  if (maxRegisters > 0) {
    os << "_r" << std::dec << maxRegisters;
  }
  os << ".cubin";
  return os.str();
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
  nvrtcProgram prog;
  checkNvrtc(nvrtcCreateProgram(&prog, source.c_str(), (name + ".cu").c_str(),
                                0, nullptr, nullptr),
             "create program");
  std::string archOpt = "--gpu-architecture=" + arch;
  std::string capOpt = "--maxrregcount=" + std::to_string(maxRegisters);
  // ptxas always reports (registers and spills are kept); the report stays
  // in the log only when asked for.
  std::vector<const char*> opts = {archOpt.c_str(), "--std=c++17",
                                   "-default-device", "--ptxas-options=-v"};
  if (maxRegisters > 0) {
    opts.push_back(capOpt.c_str());
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

CompiledKernel compileWithNvrtc(const std::string& source,
                                const std::string& name,
                                const std::string& arch, bool ptxasVerbose,
                                int maxRegisters) {
  if (ptxasVerbose) {
    CompiledKernel k = compileUncached(source, name, arch, true, maxRegisters);
    std::cout << "// ptxas " << name << " (" << arch;
    if (maxRegisters > 0) {
      std::cout << ", at most " << maxRegisters << " registers";
    }
    std::cout << "):\n" << k.log << std::flush;
    return k;
  }
  static std::mutex mutex;
  static std::map<std::tuple<std::string, std::string, int>, CompiledKernel>
      cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto key = std::make_tuple(source, arch, maxRegisters);
  auto it = cache.find(key);
  if (it != cache.end()) {
    return it->second;
  }
  std::string path =
      cachePath(std::hash<std::string>{}(source), arch, maxRegisters);
  CompiledKernel k;
  std::ifstream cached(path, std::ios::binary);
  std::ifstream report(path + ".regs");
  if (!path.empty() && cached && report) {
    k.arch = arch;
    k.maxRegisters = maxRegisters;
    k.cubin.assign(std::istreambuf_iterator<char>(cached),
                   std::istreambuf_iterator<char>());
    report >> k.registers >> k.spillBytes;
  } else {
    k = compileUncached(source, name, arch, /*ptxasVerbose=*/false,
                        maxRegisters);
    if (!path.empty()) {
      std::ofstream(path, std::ios::binary)
          .write(k.cubin.data(), static_cast<std::streamsize>(k.cubin.size()));
      std::ofstream(path + ".regs") << k.registers << " " << k.spillBytes;
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
