// This process' compiled kernels by (source, arch, register cap), so that a
// kernel met again (another fusion, another executor cache entry, a
// cuda_code_for call) is not compiled again. Bounded: past the capacity the
// least recently used kernel is dropped; it costs a compile (or a disk cache
// read) when met again, nothing else.
#pragma once

#include <cstddef>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "compiler/nvrtc_compiler.h"

namespace nvfuser {

class KernelMemoryCache {
 public:
  // (source, arch, maxRegisters).
  using Key = std::tuple<std::string, std::string, int>;
  static constexpr size_t kDefaultCapacity = 4096;

  explicit KernelMemoryCache(size_t capacity);
  // NVFUSER_MAX_CACHED_KERNELS, else kDefaultCapacity; a ValueError for
  // anything but a positive integer.
  static size_t capacityFromEnvironment();
  // The process-wide cache compileWithNvrtc uses (capacity read once).
  static KernelMemoryCache& get();

  // The cached kernel for `key`, else what `compile` returns, cached. The
  // lock is held while compiling, so two threads never compile the same
  // kernel (compiles through this cache run one at a time). A compile
  // that throws caches nothing.
  CompiledKernel getOrCompile(const Key& key,
                              const std::function<CompiledKernel()>& compile);
  size_t size() const;

 private:
  struct Entry {
    CompiledKernel kernel;
    std::list<const Key*>::iterator lru;
  };

  const size_t capacity_;
  mutable std::mutex mutex_;
  std::map<Key, Entry> entries_;
  // Keys of entries_ (map nodes never move), front: most recently used.
  std::list<const Key*> lru_;
};

}  // namespace nvfuser
