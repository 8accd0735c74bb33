// The CUDA modules of generated kernels, process-wide and bounded. Every
// layout variant of every kernel loads one module per device, and a new
// input shape is a new variant, so a long-running process would otherwise
// load modules without end. The least recently launched are unloaded past
// the bound (NVFUSER_MAX_LOADED_MODULES, default 2048); a variant's modules
// are unloaded with it, and all of them at interpreter exit.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace nvfuser {

// How modules are loaded and unloaded: the CUDA driver, or a test's fake.
struct ModuleLoader {
  // Loads the module for (owner, device) and returns its function and how
  // many blocks of it fit on one multiprocessor.
  std::function<std::pair<CUfunction, int>(int device, CUmodule* module)> load;
  using Unload = std::function<void(int device, CUmodule module)>;
  Unload unload;
};

class LoadedModules {
 public:
  static constexpr size_t kDefaultCapacity = 2048;
  explicit LoadedModules(size_t capacity);
  // NVFUSER_MAX_LOADED_MODULES, else kDefaultCapacity; a ValueError for
  // anything but a positive integer.
  static size_t capacityFromEnvironment();
  // Through the CUDA driver.
  static ModuleLoader::Unload driverUnload();
  // The process-wide table (capacity from the environment).
  static LoadedModules& get();
  // The process-wide table if get() made it, else nullptr (nothing was
  // loaded; interpreter exit must not read the environment for it).
  static LoadedModules* existing();
  // A new owner id, one per kernel variant.
  static uint64_t newOwner();

  struct Function {
    CUfunction function = nullptr;
    int residentBlocks = 0;  // per multiprocessor
  };
  // Calls use() with the owner's function on `device`, loading it on a
  // miss, under the table's lock, so no other thread can unload the module
  // between lookup and launch; marks it most recently used and unloads the
  // least recently used past the bound.
  void use(uint64_t owner, int device, const ModuleLoader& loader,
           const std::function<void(const Function&)>& use);
  // Unloads every module of the owner (its kernel is gone).
  void release(uint64_t owner, const ModuleLoader& loader);
  // Unloads everything (interpreter exit).
  void unloadAll(const ModuleLoader& loader);
  size_t size() const;

 private:
  struct Entry {
    CUmodule module = nullptr;
    Function function;
    std::list<std::pair<uint64_t, int>>::iterator lru;
  };
  void evictPastCapacity(const ModuleLoader& loader);

  const size_t capacity_;
  mutable std::mutex mutex_;
  std::map<std::pair<uint64_t, int>, Entry> entries_;
  std::list<std::pair<uint64_t, int>> lru_;  // front: most recent
};

}  // namespace nvfuser
