// The process-wide table of loaded CUDA modules (runtime/loaded_modules),
// through a fake loader that hands out numbered fake modules and records
// every load and unload: LRU eviction, release, unloadAll, the bound from
// NVFUSER_MAX_LOADED_MODULES, and many threads at once (also under TSan).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "../scoped_env.h"
#include "exceptions.h"
#include "runtime/loaded_modules.h"

namespace nvfuser {

namespace {
// Loads and unloads fake modules, remembering whose each one is and which
// are loaded; thread-safe.
class FakeDriver {
 public:
  // loadTime: how long a load takes; long enough, and two threads that miss
  // the same module at once both load it.
  explicit FakeDriver(std::chrono::microseconds loadTime = {})
      : loadTime_(loadTime) {}

  ModuleLoader loaderFor(uint64_t owner) {
    ModuleLoader loader;
    loader.load = [this, owner](int device, CUmodule* module) {
      std::this_thread::sleep_for(loadTime_);
      std::lock_guard<std::mutex> lock(mutex_);
      *module = reinterpret_cast<CUmodule>(++loads_);
      owners_[*module] = {owner, device};
      live_.insert(*module);
      // The fake function is the module's own number.
      return std::make_pair(reinterpret_cast<CUfunction>(*module), 1);
    };
    loader.unload = [this](int, CUmodule module) {
      std::lock_guard<std::mutex> lock(mutex_);
      ++unloads_;
      if (live_.erase(module) != 1) {
        ++badUnloads_;  // unknown, or unloaded twice
      }
      unloadedOwners_.push_back(owners_.at(module));
    };
    return loader;
  }
  bool isLive(CUfunction f) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return live_.count(reinterpret_cast<CUmodule>(f)) == 1;
  }
  uintptr_t loads() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return loads_;
  }
  uintptr_t unloads() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return unloads_;
  }
  int badUnloads() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return badUnloads_;
  }
  size_t live() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return live_.size();
  }
  // (owner, device) of every unload, in order.
  std::vector<std::pair<uint64_t, int>> unloadedOwners() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return unloadedOwners_;
  }

 private:
  const std::chrono::microseconds loadTime_;
  mutable std::mutex mutex_;
  uintptr_t loads_ = 0;
  uintptr_t unloads_ = 0;
  int badUnloads_ = 0;
  std::map<CUmodule, std::pair<uint64_t, int>> owners_;
  std::set<CUmodule> live_;
  std::vector<std::pair<uint64_t, int>> unloadedOwners_;
};

// Uses (owner, device) and returns the function it was handed.
CUfunction use(LoadedModules& table, FakeDriver& driver, uint64_t owner,
               int device = 0) {
  CUfunction used = nullptr;
  table.use(owner, device, driver.loaderFor(owner),
            [&](const LoadedModules::Function& f) { used = f.function; });
  return used;
}

using Owners = std::vector<std::pair<uint64_t, int>>;
}  // namespace

TEST(LoadedModulesTest, EvictsTheLeastRecentlyUsedAndUnloadsIt) {
  FakeDriver driver;
  LoadedModules table(3);
  use(table, driver, 1);
  use(table, driver, 2);
  use(table, driver, 3);
  use(table, driver, 1);  // 2 is now the least recently used
  EXPECT_EQ(driver.loads(), 3u);
  EXPECT_TRUE(driver.unloadedOwners().empty());
  use(table, driver, 4);
  EXPECT_EQ(driver.unloadedOwners(), (Owners{{2, 0}}));
  use(table, driver, 5);
  EXPECT_EQ(driver.unloadedOwners(), (Owners{{2, 0}, {3, 0}}));
  EXPECT_EQ(table.size(), 3u);
  EXPECT_EQ(driver.live(), 3u);
}

TEST(LoadedModulesTest, HitNeitherLoadsNorUnloads) {
  FakeDriver driver;
  LoadedModules table(2);
  const CUfunction first = use(table, driver, 1);
  EXPECT_EQ(use(table, driver, 1), first);
  EXPECT_EQ(driver.loads(), 1u);
  EXPECT_EQ(driver.unloads(), 0u);
}

TEST(LoadedModulesTest, ReuseAfterEvictionReloads) {
  FakeDriver driver;
  LoadedModules table(1);
  const CUfunction first = use(table, driver, 1);
  use(table, driver, 2);  // evicts 1
  EXPECT_FALSE(driver.isLive(first));
  const CUfunction again = use(table, driver, 1);  // evicts 2
  EXPECT_NE(again, first);
  EXPECT_TRUE(driver.isLive(again));
  EXPECT_EQ(driver.loads(), 3u);
  EXPECT_EQ(driver.unloadedOwners(), (Owners{{1, 0}, {2, 0}}));
}

TEST(LoadedModulesTest, ReleaseUnloadsOnlyThatOwnersModules) {
  FakeDriver driver;
  LoadedModules table(8);
  use(table, driver, 6, 0);
  use(table, driver, 7, 0);
  use(table, driver, 7, 1);
  use(table, driver, 8, 1);
  table.release(7, driver.loaderFor(7));
  EXPECT_EQ(driver.unloadedOwners(), (Owners{{7, 0}, {7, 1}}));
  EXPECT_EQ(table.size(), 2u);
  // The others are still loaded: using them loads nothing.
  use(table, driver, 6, 0);
  use(table, driver, 8, 1);
  EXPECT_EQ(driver.loads(), 4u);
  table.release(7, driver.loaderFor(7));  // nothing left of it
  EXPECT_EQ(driver.unloads(), 2u);
}

TEST(LoadedModulesTest, UnloadAllEmptiesTheTable) {
  FakeDriver driver;
  LoadedModules table(8);
  for (uint64_t owner = 1; owner <= 5; ++owner) {
    use(table, driver, owner, static_cast<int>(owner % 2));
  }
  table.unloadAll(driver.loaderFor(0));
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(driver.unloads(), 5u);
  EXPECT_EQ(driver.live(), 0u);
  EXPECT_EQ(driver.badUnloads(), 0);
  use(table, driver, 1, 1);  // usable again
  EXPECT_EQ(driver.loads(), 6u);
}

// The parsing itself: EnvironmentTest (tests/cpp/core/test_environment.cpp).
TEST(LoadedModulesTest, CapacityComesFromTheEnvironment) {
  {
    ScopedEnv env("NVFUSER_MAX_LOADED_MODULES", "16");
    EXPECT_EQ(LoadedModules::capacityFromEnvironment(), 16u);
  }
  {
    ScopedEnv env("NVFUSER_MAX_LOADED_MODULES", "restored afterwards");
    unsetenv("NVFUSER_MAX_LOADED_MODULES");
    EXPECT_EQ(LoadedModules::capacityFromEnvironment(),
              LoadedModules::kDefaultCapacity);
  }
  for (const char* bad : {"0", "-1", "many"}) {
    ScopedEnv env("NVFUSER_MAX_LOADED_MODULES", bad);
    EXPECT_THROW(LoadedModules::capacityFromEnvironment(), Error) << bad;
  }
}

// Threads use overlapping (owner, device) pairs through a table too small
// for them, so loads race with loads of the same pair and with evictions.
// Every function handed to use() must still be loaded while it is used;
// every load is unloaded exactly once in the end.
TEST(LoadedModulesTest, ConcurrentUseKeepsOneModulePerOwnerAndBalances) {
  constexpr int kThreads = 8;
  constexpr int kCalls = 400;
  constexpr uint64_t kOwners = 12;
  FakeDriver driver(std::chrono::microseconds(200));
  LoadedModules table(5);
  std::atomic<int> usedUnloaded{0};
  std::atomic<size_t> maxSize{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCalls; ++i) {
        const uint64_t owner = 1 + static_cast<uint64_t>(t * 7 + i) % kOwners;
        const int device = (t + i) % 2;
        table.use(owner, device, driver.loaderFor(owner),
                  [&](const LoadedModules::Function& f) {
                    std::this_thread::yield();  // as a launch would take
                    usedUnloaded += driver.isLive(f.function) ? 0 : 1;
                  });
        size_t now = table.size();
        size_t seen = maxSize.load();
        while (now > seen && !maxSize.compare_exchange_weak(seen, now)) {
        }
        if (i % 50 == 0) {
          table.release(owner + 1, driver.loaderFor(owner + 1));
        }
      }
    });
  }
  for (std::thread& th : threads) {
    th.join();
  }
  EXPECT_EQ(usedUnloaded.load(), 0);
  EXPECT_LE(maxSize.load(), 5u);
  EXPECT_EQ(driver.live(), table.size());  // no extra load kept
  table.unloadAll(driver.loaderFor(0));
  EXPECT_EQ(driver.badUnloads(), 0);
  EXPECT_EQ(driver.live(), 0u);
  EXPECT_EQ(driver.loads(), driver.unloads());
}

}  // namespace nvfuser
