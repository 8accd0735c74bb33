#include "runtime/loaded_modules.h"

#include <atomic>

#include "environment.h"
#include "exceptions.h"
#include "runtime/cuda_driver.h"

namespace nvfuser {

LoadedModules::LoadedModules(size_t capacity) : capacity_(capacity) {
  NVF_ASSERT(capacity_ > 0, "a module table needs room for one module");
}

size_t LoadedModules::capacityFromEnvironment() {
  return positiveCountFromEnvironment("NVFUSER_MAX_LOADED_MODULES",
                                      kDefaultCapacity);
}

ModuleLoader::Unload LoadedModules::driverUnload() {
  return [](int device, CUmodule module) {
    CudaDriver::get().unloadModule(device, module);
  };
}

namespace {
std::atomic<LoadedModules*>& createdTable() {
  static std::atomic<LoadedModules*> table{nullptr};
  return table;
}
}  // namespace

LoadedModules& LoadedModules::get() {
  // Never destroyed: at static destruction the driver may be gone already;
  // the Python package unloads at interpreter exit instead. A bad
  // environment value throws here and is read again on the next call.
  static LoadedModules* table = [] {
    auto* t = new LoadedModules(capacityFromEnvironment());
    createdTable().store(t);
    return t;
  }();
  return *table;
}

LoadedModules* LoadedModules::existing() {
  return createdTable().load();
}

uint64_t LoadedModules::newOwner() {
  static std::atomic<uint64_t> next{1};
  return next++;
}

void LoadedModules::use(uint64_t owner, int device, const ModuleLoader& loader,
                        const std::function<void(const Function&)>& use) {
  const std::pair<uint64_t, int> key{owner, device};
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(key);
    if (it != entries_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second.lru);
      use(it->second.function);
      return;
    }
  }
  // Loaded outside the lock: other kernels keep launching meanwhile.
  Entry e;
  auto [f, resident] = loader.load(device, &e.module);
  e.function = Function{f, resident};
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(key);
  if (it != entries_.end()) {  // another thread loaded it first
    loader.unload(device, e.module);
  } else {
    lru_.push_front(key);
    e.lru = lru_.begin();
    it = entries_.emplace(key, e).first;
  }
  lru_.splice(lru_.begin(), lru_, it->second.lru);
  const Function chosen = it->second.function;
  evictPastCapacity(loader);  // never the front: the one about to be used
  use(chosen);
}

void LoadedModules::evictPastCapacity(const ModuleLoader& loader) {
  while (entries_.size() > capacity_) {
    const std::pair<uint64_t, int> victim = lru_.back();
    lru_.pop_back();
    auto it = entries_.find(victim);
    const CUmodule module = it->second.module;
    entries_.erase(it);  // first: a throwing unload leaves no stale entry
    loader.unload(victim.second, module);
  }
}

void LoadedModules::release(uint64_t owner, const ModuleLoader& loader) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.lower_bound({owner, INT32_MIN});
  while (it != entries_.end() && it->first.first == owner) {
    loader.unload(it->first.second, it->second.module);
    lru_.erase(it->second.lru);
    it = entries_.erase(it);
  }
}

void LoadedModules::unloadAll(const ModuleLoader& loader) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [key, e] : entries_) {
    loader.unload(key.second, e.module);
  }
  entries_.clear();
  lru_.clear();
}

size_t LoadedModules::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

}  // namespace nvfuser
