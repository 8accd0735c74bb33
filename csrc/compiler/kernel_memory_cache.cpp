#include "compiler/kernel_memory_cache.h"

#include "environment.h"
#include "exceptions.h"

namespace nvfuser {

KernelMemoryCache::KernelMemoryCache(size_t capacity) : capacity_(capacity) {
  NVF_ASSERT(capacity_ > 0, "a kernel cache needs room for one kernel");
}

size_t KernelMemoryCache::capacityFromEnvironment() {
  return positiveCountFromEnvironment("NVFUSER_MAX_CACHED_KERNELS",
                                      kDefaultCapacity);
}

KernelMemoryCache& KernelMemoryCache::get() {
  // Never destroyed: a compile may still run on another thread at exit.
  static KernelMemoryCache* cache =
      new KernelMemoryCache(capacityFromEnvironment());
  return *cache;
}

CompiledKernel KernelMemoryCache::getOrCompile(
    const Key& key, const std::function<CompiledKernel()>& compile) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(key);
  if (it != entries_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second.lru);
    return it->second.kernel;
  }
  Entry entry{compile(), {}};
  it = entries_.emplace(key, std::move(entry)).first;
  lru_.push_front(&it->first);
  it->second.lru = lru_.begin();
  if (entries_.size() > capacity_) {  // never the one just added
    const Key* victim = lru_.back();
    lru_.pop_back();
    entries_.erase(entries_.find(*victim));
  }
  return it->second.kernel;
}

size_t KernelMemoryCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

}  // namespace nvfuser
