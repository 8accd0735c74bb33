// The in-memory cache of compiled kernels (compiler/kernel_memory_cache):
// bounded by count, least recently used dropped first, with a fake compile
// that counts calls (docs/security.md, "Resource bounds", names these).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "../scoped_env.h"
#include "compiler/kernel_memory_cache.h"
#include "exceptions.h"

namespace nvfuser {

namespace {
// Gets `source` through the cache; counts the compiles it took.
CompiledKernel get(KernelMemoryCache& cache, const std::string& source,
                   int* compiles) {
  return cache.getOrCompile({source, "sm_90", 0}, [&] {
    ++*compiles;
    CompiledKernel k;
    k.arch = "sm_90";
    k.cubin.assign(source.begin(), source.end());
    return k;
  });
}
}  // namespace

TEST(KernelMemoryCacheTest, HitCompilesNothing) {
  KernelMemoryCache cache(4);
  int compiles = 0;
  get(cache, "a", &compiles);
  const CompiledKernel again = get(cache, "a", &compiles);
  EXPECT_EQ(compiles, 1);
  EXPECT_EQ(std::string(again.cubin.begin(), again.cubin.end()), "a");
}

TEST(KernelMemoryCacheTest, KeyHasArchAndRegisterCap) {
  KernelMemoryCache cache(8);
  int compiles = 0;
  auto compile = [&] {
    ++compiles;
    return CompiledKernel();
  };
  cache.getOrCompile({"a", "sm_90", 0}, compile);
  cache.getOrCompile({"a", "sm_80", 0}, compile);
  cache.getOrCompile({"a", "sm_90", 64}, compile);
  cache.getOrCompile({"a", "sm_90", 0}, compile);
  EXPECT_EQ(compiles, 3);
}

TEST(KernelMemoryCacheTest, DropsTheLeastRecentlyUsedPastCapacity) {
  KernelMemoryCache cache(3);
  int compiles = 0;
  get(cache, "a", &compiles);
  get(cache, "b", &compiles);
  get(cache, "c", &compiles);
  get(cache, "a", &compiles);  // b is now the least recently used
  get(cache, "d", &compiles);  // drops b
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_EQ(compiles, 4);
  get(cache, "a", &compiles);
  get(cache, "c", &compiles);
  get(cache, "d", &compiles);
  EXPECT_EQ(compiles, 4);      // all three still there
  get(cache, "b", &compiles);  // compiled again; drops a
  EXPECT_EQ(compiles, 5);
  get(cache, "c", &compiles);
  EXPECT_EQ(compiles, 5);
  get(cache, "a", &compiles);
  EXPECT_EQ(compiles, 6);
  EXPECT_EQ(cache.size(), 3u);
}

TEST(KernelMemoryCacheTest, FailedCompileCachesNothing) {
  KernelMemoryCache cache(2);
  EXPECT_THROW(cache.getOrCompile(
                   {"bad", "sm_90", 0},
                   []() -> CompiledKernel { throw std::runtime_error("no"); }),
               std::runtime_error);
  EXPECT_EQ(cache.size(), 0u);
  int compiles = 0;
  get(cache, "bad", &compiles);
  EXPECT_EQ(compiles, 1);
}

// The parsing itself: EnvironmentTest (test_environment.cpp).
TEST(KernelMemoryCacheTest, CapacityComesFromTheEnvironment) {
  {
    ScopedEnv env("NVFUSER_MAX_CACHED_KERNELS", "12");
    EXPECT_EQ(KernelMemoryCache::capacityFromEnvironment(), 12u);
  }
  {
    ScopedEnv env("NVFUSER_MAX_CACHED_KERNELS", "restored afterwards");
    unsetenv("NVFUSER_MAX_CACHED_KERNELS");
    EXPECT_EQ(KernelMemoryCache::capacityFromEnvironment(),
              KernelMemoryCache::kDefaultCapacity);
  }
  for (const char* bad : {"0", "-5", "4k"}) {
    ScopedEnv env("NVFUSER_MAX_CACHED_KERNELS", bad);
    EXPECT_THROW(KernelMemoryCache::capacityFromEnvironment(), Error) << bad;
  }
}

}  // namespace nvfuser
