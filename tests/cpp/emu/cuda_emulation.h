// Just enough of CUDA to run a generated kernel on the CPU, for tests on
// machines without a GPU: one std::thread per CUDA thread of a block (so
// __syncthreads and warp shuffles behave), blocks one after another.
// Shuffles synchronize only their warp, as on the GPU. With NVF_EMU_SKEW
// set, every warp but the first pauses after each block barrier, so warp 0
// runs ahead to its next barrier: a shared-memory write that needs a
// barrier it does not have then clobbers values other warps still read.
// Included before a kernel's source, with NVF_EMULATION defined.
#pragma once

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace nvf_emu {

struct Dim3 {
  unsigned x = 0, y = 0, z = 0;
};
inline thread_local Dim3 threadIdx_;
inline thread_local Dim3 blockIdx_;
inline Dim3 blockDim_;
inline Dim3 gridDim_;

// A reusable barrier for the threads of one block.
struct Barrier {
  std::mutex m;
  std::condition_variable cv;
  unsigned count = 0;
  unsigned waiting = 0;
  unsigned generation = 0;
  void wait() {
    std::unique_lock<std::mutex> lock(m);
    const unsigned gen = generation;
    if (++waiting == count) {
      waiting = 0;
      ++generation;
      cv.notify_all();
      return;
    }
    cv.wait(lock, [&] { return gen != generation; });
  }
};
inline Barrier barrier_;
inline std::vector<Barrier> warpBarriers_;  // one per warp, for shuffles
inline std::vector<uint64_t> shuffleSlots_;
inline std::mutex atomicMutex_;
inline bool skew_ = false;

inline void syncthreads() {
  barrier_.wait();
  if (skew_ && threadIdx_.x >= 32) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

// Barriers of aligned lane groups of 2, 4, 8 and 16 (a slot's threads:
// scheduler/slot_threads.h), indexed by log2 of the size, then group.
inline std::vector<Barrier> groupBarriers_[5];

// The barrier of the lanes in `mask`: the warp's, or an aligned group's.
inline Barrier& shuffleBarrier(unsigned t, unsigned mask) {
  if (mask == 0xffffffffu) {
    return warpBarriers_[t / 32];
  }
  const int size = __builtin_popcount(mask);
  const int log2 = size == 0 ? 0 : __builtin_ctz(unsigned(size));
  if (size == 0 || (size & (size - 1)) != 0 || log2 > 4 ||
      mask != ((1u << size) - 1) << (t % 32 / size * size)) {
    std::fprintf(stderr, "nvf_emu: shuffle mask %x is not thread %u's group\n",
                 mask, t);
    std::abort();
  }
  return groupBarriers_[log2][t / size];
}

// Every thread of the mask's lanes calls it at the same point (true of the
// generated block reductions and slot groups): publish, wait, read the
// partner, wait.
template <typename T>
T shflXor(T v, int laneMask, unsigned mask = 0xffffffffu) {
  static_assert(sizeof(T) <= 8, "shuffle of a wide type");
  const unsigned t = threadIdx_.x;
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  Barrier& warp = shuffleBarrier(t, mask);
  shuffleSlots_[t] = bits;
  warp.wait();
  const unsigned partner = (t & ~31u) | ((t & 31u) ^ unsigned(laneMask));
  if ((mask >> (partner % 32) & 1u) == 0) {
    std::fprintf(stderr, "nvf_emu: shuffle partner %u of %u is outside %x\n",
                 partner, t, mask);
    std::abort();
  }
  uint64_t other = shuffleSlots_[partner < blockDim_.x ? partner : t];
  warp.wait();
  T r;
  std::memcpy(&r, &other, sizeof(T));
  return r;
}

inline void launch(unsigned grid, unsigned block,
                   const std::function<void()>& kernel) {
  gridDim_ = Dim3{grid, 1, 1};
  blockDim_ = Dim3{block, 1, 1};
  shuffleSlots_.assign(block, 0);
  warpBarriers_ = std::vector<Barrier>((block + 31) / 32);
  for (unsigned w = 0; w < warpBarriers_.size(); ++w) {
    warpBarriers_[w].count = block - 32 * w < 32 ? block - 32 * w : 32;
  }
  for (unsigned log2 = 1; log2 <= 4; ++log2) {
    const unsigned size = 1u << log2;
    groupBarriers_[log2] = std::vector<Barrier>((block + size - 1) / size);
    for (unsigned g = 0; g < groupBarriers_[log2].size(); ++g) {
      groupBarriers_[log2][g].count =
          block - size * g < size ? block - size * g : size;
    }
  }
  skew_ = std::getenv("NVF_EMU_SKEW") != nullptr;
  for (unsigned b = 0; b < grid; ++b) {
    barrier_.count = block;
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < block; ++t) {
      threads.emplace_back([&, b, t] {
        blockIdx_ = Dim3{b, 0, 0};
        threadIdx_ = Dim3{t, 0, 0};
        kernel();
      });
    }
    for (std::thread& th : threads) {
      th.join();
    }
  }
}

}  // namespace nvf_emu

#define threadIdx nvf_emu::threadIdx_
#define blockIdx nvf_emu::blockIdx_
#define blockDim nvf_emu::blockDim_
#define gridDim nvf_emu::gridDim_
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
#define __align__(n) alignas(n)
#define __restrict__ __restrict
#define __syncthreads() nvf_emu::syncthreads()
#define __shfl_xor_sync(mask, v, o) nvf_emu::shflXor((v), (o), (mask))

inline float __int_as_float(int i) {
  float f;
  std::memcpy(&f, &i, 4);
  return f;
}
inline float __uint_as_float(unsigned u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline unsigned __float_as_uint(float f) {
  unsigned u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline double __longlong_as_double(long long i) {
  double d;
  std::memcpy(&d, &i, 8);
  return d;
}
inline long long __double_as_longlong(double d) {
  long long i;
  std::memcpy(&i, &d, 8);
  return i;
}
// CUDA's erfinv has no host counterpart: Winitzki's estimate refined by
// Newton steps in double (the residual through erfc near +-1, where erf
// has no digits left), so the float version is correctly rounded.
inline double erfinv(double y) {
  if (!(y >= -1.0 && y <= 1.0)) return std::nan("");
  if (y == 1.0 || y == -1.0) return y * HUGE_VAL;
  const double a = 0.147, pi = 3.14159265358979323846;
  const double m = std::fabs(y);
  const double ln = std::log1p(-m * m), t = 2.0 / (pi * a) + ln / 2.0;
  double x = std::sqrt(std::sqrt(t * t - ln / a) - t);
  for (int k = 0; k < 4 && x > 0.0; ++k) {
    const double r = m > 0.5 ? (1.0 - m) - std::erfc(x) : std::erf(x) - m;
    x -= r / (2.0 / std::sqrt(pi) * std::exp(-x * x));
  }
  return std::copysign(x, y);  // erfinv(-0.0) is -0.0
}
inline float erfinvf(float y) {
  return (float)erfinv((double)y);
}
// erfcinv has no host counterpart either: Newton steps on log(erfc(x)) =
// log(y) from sqrt(-log(y)), in double; erfcinv(2 - y) = -erfcinv(y).
inline double erfcinv(double y) {
  if (!(y >= 0.0 && y <= 2.0)) return std::nan("");
  if (y == 0.0) return HUGE_VAL;
  if (y == 2.0) return -HUGE_VAL;
  if (y > 1.0) return -erfcinv(2.0 - y);
  if (y > 0.0625) return erfinv(1.0 - y);  // 1 - y rounds off < 1e-15
  const double pi = 3.14159265358979323846;
  double x = std::sqrt(-std::log(y));
  for (int k = 0; k < 12; ++k) {
    const double c = std::erfc(x);
    const double g = std::log(c) - std::log(y);
    x += g / (2.0 / std::sqrt(pi) * std::exp(-x * x) / c);
  }
  return x;
}
inline float erfcinvf(float y) {
  return (float)erfcinv((double)y);
}
inline float rsqrtf(float x) {
  return 1.f / std::sqrt(x);
}
inline double rsqrt(double x) {
  return 1.0 / std::sqrt(x);
}
inline void __threadfence() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
}
template <typename T>
inline T __ldcg(const T* p) {
  std::lock_guard<std::mutex> lock(nvf_emu::atomicMutex_);
  return *p;
}
template <typename T>
inline T atomicAdd(T* p, T v) {
  std::lock_guard<std::mutex> lock(nvf_emu::atomicMutex_);
  T old = *p;
  *p = old + v;
  return old;
}
