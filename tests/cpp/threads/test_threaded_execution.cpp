// One FusionExecutorCache executed from many threads at once with varying
// input shapes, as the Python bindings allow (execute releases the GIL):
// every result right, every signature cached exactly once, readers of the
// last run safe meanwhile. Also NVRTC compiles from many threads. The
// executor cache once had no lock: entries were lost and a run crashed.
// scripts/test.sh runs these under ThreadSanitizer as well.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "compiler/kernel_memory_cache.h"
#include "compiler/nvrtc_compiler.h"
#include "ops/arith.h"
#include "ops/reduction_ops.h"
#include "runtime/fusion_executor_cache.h"

namespace nvfuser {

namespace {
constexpr int kThreads = 8;
constexpr int kCallsPerThread = 10;
constexpr int kChainLength = 20;

// x [-1, -1] Float -> chain(x) - sum(exp(x), 1): a long chain, so creating
// an entry takes a while (a wide window for a race), and a reduction, so
// there is more than one segment.
std::unique_ptr<Fusion> chainMinusRowSum() {
  auto f = std::make_unique<Fusion>();
  TensorView* x = defineTensor(*f, {-1, -1}, DataType::Float);
  Val* v = x;
  for (int i = 0; i < kChainLength; ++i) {
    v = binaryOp(BinaryOpType::Add, binaryOp(BinaryOpType::Mul, v, x), x);
  }
  TensorView* e = unaryOp(UnaryOpType::Exp, x)->asTensor();
  TensorView* s = reduction(ReductionOpType::Sum, e, {1}, /*keepdim=*/true);
  f->addOutput(binaryOp(BinaryOpType::Sub, v, s));
  return f;
}

at::Tensor reference(const at::Tensor& x) {
  at::Tensor v = x;
  for (int i = 0; i < kChainLength; ++i) {
    v = v * x + x;
  }
  return v - x.exp().sum(1, /*keepdim=*/true);
}

// Threads share shapes in a different order, so most signatures are met
// first by two threads at about the same time.
std::vector<int64_t> shapeOf(int thread, int call) {
  return {1 + (thread * 5 + call) % 6, 1 + (call * 7 + thread * 3) % 8};
}

size_t distinctShapes() {
  std::set<std::vector<int64_t>> shapes;
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kCallsPerThread; ++i) {
      shapes.insert(shapeOf(t, i));
    }
  }
  return shapes.size();
}

// Collects failures from worker threads, reported on the test's thread.
class Failures {
 public:
  void add(std::string what) {
    std::lock_guard<std::mutex> lock(mutex_);
    list_.push_back(std::move(what));
  }
  std::vector<std::string> list() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return list_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> list_;
};

// Runs one thread's calls after all threads are ready.
void executeCalls(FusionExecutorCache& cache, int thread,
                  std::atomic<int>& ready, Failures& failures) {
  at::Generator generator =
      at::detail::createCPUGenerator(static_cast<uint64_t>(thread));
  ++ready;
  while (ready.load() < kThreads) {
    std::this_thread::yield();
  }
  for (int i = 0; i < kCallsPerThread; ++i) {
    const std::string where =
        "thread " + std::to_string(thread) + " call " + std::to_string(i);
    try {
      at::Tensor x = at::rand(shapeOf(thread, i), generator) * 0.5;
      std::vector<at::Tensor> out =
          cache.run({RuntimeArg::fromTensor(x)}, Options());
      if (out.size() != 1 || !at::allclose(out[0], reference(x), 1e-4, 1e-4)) {
        failures.add(where + ": wrong values");
      }
    } catch (const std::exception& e) {
      failures.add(where + ": " + e.what());
    }
  }
}

// Runs kThreads threads of calls on `cache`, plus `whileRunning` on one
// more thread until they are done.
std::vector<std::string> executeFromThreads(
    FusionExecutorCache& cache,
    const std::function<void(const std::atomic<bool>&)>& whileRunning) {
  // ATen's own OpenMP threads would only blur what TSan reports (libgomp
  // is not instrumented), and are not what is tested here.
  at::set_num_threads(1);
  Failures failures;
  std::atomic<int> ready{0};
  std::atomic<bool> done{false};
  std::thread side([&] { whileRunning(done); });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] { executeCalls(cache, t, ready, failures); });
  }
  for (std::thread& th : threads) {
    th.join();
  }
  done = true;
  side.join();
  return failures.list();
}
}  // namespace

TEST(ThreadedExecutionTest, OneCacheManyThreadsVaryingShapes) {
  FusionExecutorCache cache(chainMinusRowSum());
  EXPECT_EQ(executeFromThreads(cache, [](const std::atomic<bool>&) {}),
            std::vector<std::string>());
  EXPECT_EQ(cache.numCachedSignatures(), distinctShapes());
}

// lastConcreteFusion, lastSegmentedFusion, lastCudaCode and
// numCachedSignatures read while other threads execute.
TEST(ThreadedExecutionTest, ReadersWhileThreadsExecute) {
  FusionExecutorCache cache(chainMinusRowSum());
  std::atomic<int> reads{0};
  std::atomic<int> badReads{0};
  auto reader = [&](const std::atomic<bool>& done) {
    size_t seen = 0;
    while (!done.load()) {
      const Fusion* concrete = cache.lastConcreteFusion();
      const SegmentedFusion* segmented = cache.lastSegmentedFusion();
      std::vector<std::string> code = cache.lastCudaCode();
      const size_t n = cache.numCachedSignatures();
      // Entries are never removed: the count only grows, and once there
      // is one there is a last run to describe.
      badReads += n < seen ? 1 : 0;
      seen = n;
      if (concrete != nullptr) {
        badReads += concrete->outputs().size() == 1 ? 0 : 1;
        badReads +=
            segmented != nullptr && !segmented->groups().empty() ? 0 : 1;
        for (const std::string& c : code) {
          badReads += c.find("__global__") != std::string::npos ? 0 : 1;
        }
      }
      ++reads;
    }
  };
  EXPECT_EQ(executeFromThreads(cache, reader), std::vector<std::string>());
  EXPECT_GT(reads.load(), 0);
  EXPECT_EQ(badReads.load(), 0);
  EXPECT_EQ(cache.numCachedSignatures(), distinctShapes());
  EXPECT_NE(cache.lastConcreteFusion(), nullptr);
}

namespace {
std::string kernelSource(const std::string& name) {
  return "extern \"C\" __global__ void " + name +
         "(float* p) { p[threadIdx.x] *= 2.f; }";
}

bool containsName(const CompiledKernel& k, const std::string& name) {
  return std::search(k.cubin.begin(), k.cubin.end(), name.begin(),
                     name.end()) != k.cubin.end();
}

// Each thread compiles a kernel all threads share and one of its own; the
// names are unique to this test (and `tag`), so they miss every cache.
std::vector<std::string> compileFromThreads(const KernelCaches& caches,
                                            const std::string& tag) {
  Failures failures;
  std::vector<std::vector<char>> shared(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        const std::string sharedName = "threaded_shared_" + tag;
        const std::string ownName =
            "threaded_own_" + tag + "_" + std::to_string(t);
        shared[t] = compileWithNvrtc(kernelSource(sharedName), sharedName,
                                     "sm_90", false, 0, caches)
                        .cubin;
        CompiledKernel own = compileWithNvrtc(kernelSource(ownName), ownName,
                                              "sm_90", false, 0, caches);
        if (!containsName(own, ownName)) {
          failures.add("thread " + std::to_string(t) + ": wrong cubin");
        }
      } catch (const std::exception& e) {
        failures.add("thread " + std::to_string(t) + ": " + e.what());
      }
    });
  }
  for (std::thread& th : threads) {
    th.join();
  }
  for (int t = 1; t < kThreads; ++t) {
    if (shared[t] != shared[0] || shared[t].empty()) {
      failures.add("thread " + std::to_string(t) + ": another shared cubin");
    }
  }
  return failures.list();
}
}  // namespace

// Through the in-memory cache: the shared kernel is compiled once.
TEST(ThreadedCompileTest, SameAndDifferentSourcesFromManyThreads) {
  KernelCaches caches;  // memory only: no NVFUSER_CACHE_DIR here
  const size_t before = KernelMemoryCache::get().size();
  EXPECT_EQ(compileFromThreads(caches, "memory"), std::vector<std::string>());
  EXPECT_EQ(KernelMemoryCache::get().size(), before + 1 + kThreads);
}

// Without caches NVRTC itself runs on several threads at once.
TEST(ThreadedCompileTest, UncachedCompilesFromManyThreads) {
  KernelCaches none;
  none.memory = false;
  EXPECT_EQ(compileFromThreads(none, "uncached"), std::vector<std::string>());
}

}  // namespace nvfuser
