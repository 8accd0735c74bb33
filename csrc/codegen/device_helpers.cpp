#include "codegen/device_helpers.h"

namespace nvfuser {

const char* deviceHelpersSource() {
  return R"(// nvfuser-lite device helpers
#ifndef NVF_EMULATION  // the CPU emulator used by tests has <cstdint>
typedef long long int64_t;
typedef unsigned long long uint64_t;
#endif
struct __align__(2) nvf_half { unsigned short x; };
struct __align__(2) nvf_bf16 { unsigned short x; };

#ifndef NVF_EMULATION
__device__ __forceinline__ float nvf_h2f(nvf_half h) {
  float f;
  asm("{ cvt.f32.f16 %0, %1; }" : "=f"(f) : "h"(h.x));
  return f;
}
__device__ __forceinline__ nvf_half nvf_f2h(float f) {
  nvf_half h;
  asm("{ cvt.rn.f16.f32 %0, %1; }" : "=h"(h.x) : "f"(f));
  return h;
}
#else  // the CPU emulator: the same conversions in software
inline float nvf_h2f(nvf_half h) {
  const unsigned sign = (h.x & 0x8000u) << 16, e = (h.x >> 10) & 0x1f,
                 m = h.x & 0x3ff;
  if (e == 0x1f) return __uint_as_float(sign | 0x7f800000u | (m << 13));
  if (e != 0) return __uint_as_float(sign | ((e + 112) << 23) | (m << 13));
  float f = (float)m * 5.9604644775390625e-8f;  // subnormal: m * 2^-24
  return sign ? -f : f;
}
inline nvf_half nvf_f2h(float f) {
  nvf_half h;
  const unsigned u = __float_as_uint(f), sign = (u >> 16) & 0x8000u;
  const unsigned a = u & 0x7fffffffu;
  if (a > 0x7f800000u) { h.x = (unsigned short)(sign | 0x7e00u); return h; }
  if (a >= 0x477ff000u) { h.x = (unsigned short)(sign | 0x7c00u); return h; }
  if (a < 0x38800000u) {  // subnormal or zero: round to a multiple of 2^-24
    float r = std::nearbyint(__uint_as_float(a) * 16777216.f);
    h.x = (unsigned short)(sign | (unsigned)r);
    return h;
  }
  unsigned m = a + 0xfffu + ((a >> 13) & 1u) - (112u << 23);
  h.x = (unsigned short)(sign | (m >> 13));
  return h;
}
#endif
__device__ __forceinline__ float nvf_b2f(nvf_bf16 b) {
  return __uint_as_float(((unsigned)b.x) << 16);
}
// Round to nearest even, NaN stays NaN: one instruction from sm_80 on.
__device__ __forceinline__ nvf_bf16 nvf_f2b(float f) {
  nvf_bf16 b;
#if __CUDA_ARCH__ >= 800
  asm("{ cvt.rn.bf16.f32 %0, %1; }" : "=h"(b.x) : "f"(f));
#else
  unsigned u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) {
    b.x = 0x7fc0;
    return b;
  }
  u += 0x7fffu + ((u >> 16) & 1u);
  b.x = (unsigned short)(u >> 16);
#endif
  return b;
}
// -x and |x| of a 16-bit float without converting it (both are exact in
// its own type): the sign bit flipped or cleared. A rotate-half written
// cast(neg(x), bf16) needs no round trip through float.
template <typename T>
__device__ __forceinline__ T nvf_neg16(T v) {
  v.x = (unsigned short)(v.x ^ 0x8000u);
  return v;
}
template <typename T>
__device__ __forceinline__ T nvf_abs16(T v) {
  v.x = (unsigned short)(v.x & 0x7fffu);
  return v;
}
// 8-bit floats, converted as torch's Float8 types convert: round to
// nearest even; e4m3fn has no infinity, so a magnitude rounding past 448
// (inf and NaN too) is NaN (0x7f), e5m2 rounds past 57344 to inf (0x7c)
// and keeps NaN (0x7f); the sign is kept. In software on every
// architecture: cvt.satfinite would saturate instead. mbits: mantissa
// bits, bias: exponent bias, emax: exponent of the largest finite value.
struct __align__(1) nvf_e4m3 { unsigned char x; };
struct __align__(1) nvf_e5m2 { unsigned char x; };
__device__ __forceinline__ float nvf_fp8_to_f(unsigned b, int mbits, int bias,
                                              bool fn) {
  const unsigned mag = b & 0x7fu, e = mag >> mbits;
  const unsigned m = mag & ((1u << mbits) - 1u);
  float r;
  if (fn ? mag == 0x7fu : e == (0x7fu >> mbits)) {
    r = __uint_as_float((fn || m != 0u) ? 0x7fc00000u : 0x7f800000u);
  } else if (e == 0u) {  // subnormal: m steps of 2^(1 - bias - mbits)
    r = ldexpf((float)m, 1 - bias - mbits);
  } else {
    r = ldexpf((float)(m | (1u << mbits)), (int)e - bias - mbits);
  }
  return __uint_as_float(__float_as_uint(r) | ((b & 0x80u) << 24));
}
__device__ __forceinline__ unsigned char nvf_f_to_fp8(float f, int mbits,
                                                      int bias, int emax,
                                                      bool fn) {
  const unsigned u = __float_as_uint(f), sign = (u >> 24) & 0x80u;
  const float a = __uint_as_float(u & 0x7fffffffu);
  const unsigned top = fn ? 0x7eu : 0x7bu;  // the largest finite code
  if (a != a) return (unsigned char)(sign | 0x7fu);
  const int e = (int)((u >> 23) & 0xffu) - 127;
  unsigned code = top + 1u;  // beyond the largest exponent: overflow
  if (e < 1 - bias) {  // below the normals: multiples of the subnormal step
    code = (unsigned)rintf(ldexpf(a, bias - 1 + mbits));
  } else if (e <= emax) {  // rounds to [2^mbits, 2^(mbits + 1)]
    code = ((unsigned)(e + bias) << mbits) +
           (unsigned)rintf(ldexpf(a, mbits - e)) - (1u << mbits);
  }
  if (code > top) code = fn ? 0x7fu : 0x7cu;
  return (unsigned char)(sign | code);
}
__device__ __forceinline__ float nvf_e4m3_to_f(nvf_e4m3 v) {
  return nvf_fp8_to_f(v.x, 3, 7, true);
}
__device__ __forceinline__ nvf_e4m3 nvf_f_to_e4m3(float f) {
  nvf_e4m3 r;
  r.x = nvf_f_to_fp8(f, 3, 7, 8, true);
  return r;
}
__device__ __forceinline__ float nvf_e5m2_to_f(nvf_e5m2 v) {
  return nvf_fp8_to_f(v.x, 2, 15, false);
}
__device__ __forceinline__ nvf_e5m2 nvf_f_to_e5m2(float f) {
  nvf_e5m2 r;
  r.x = nvf_f_to_fp8(f, 2, 15, 15, false);
  return r;
}
// e8m0fnu (powers of two, no sign, no zero) converts as torch's does:
// code 0 reads as 2^-127, 255 as NaN; a float keeps its exponent field,
// one up when its leading mantissa bit is set and either a lower bit or
// the implicit bit is (1.5 * 2^e rounds up, a subnormal only past
// 2^-127); the sign is dropped, inf and NaN give NaN.
struct __align__(1) nvf_e8m0 { unsigned char x; };
__device__ __forceinline__ float nvf_e8m0_to_f(nvf_e8m0 v) {
  if (v.x == 0u) return __uint_as_float(0x00400000u);
  if (v.x == 0xffu) return __uint_as_float(0x7f800001u);
  return __uint_as_float((unsigned)v.x << 23);
}
__device__ __forceinline__ nvf_e8m0 nvf_f_to_e8m0(float f) {
  const unsigned u = __float_as_uint(f), e = (u >> 23) & 0xffu;
  const bool up = e != 0xffu && (u & 0x400000u) != 0u &&
                  ((u & 0x3fffffu) != 0u || e != 0u);
  nvf_e8m0 r;
  r.x = (unsigned char)(e + (up ? 1u : 0u));
  return r;
}
template <typename T>
__device__ __forceinline__ T nvf_max(T a, T b) { return (a != a || a > b) ? a : b; }
template <typename T>
__device__ __forceinline__ T nvf_min(T a, T b) { return (a != a || a < b) ? a : b; }
#if __CUDA_ARCH__ >= 800
// NaN-propagating max/min in one instruction instead of compare + select.
__device__ __forceinline__ float nvf_max(float a, float b) {
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
__device__ __forceinline__ float nvf_min(float a, float b) {
  float r;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
#endif
// Division of many values by one shared divisor b. nvf_rcp(b) is 1 / b
// when |b| is in [2^-50, 2^50], NaN otherwise; nvf_div_rcp then corrects
// the product a * r with one fma, which gives the correctly rounded
// quotient (Markstein) while the quotient also lies in [2^-50, 2^50] (no
// intermediate under- or overflows). Everything else is divided.
__device__ __forceinline__ float nvf_rcp(float b) {
  const float m = fabsf(b);
  return (m >= 0x1p-50f && m <= 0x1p50f) ? 1.0f / b : __int_as_float(0x7fc00000);
}
__device__ __forceinline__ float nvf_div_rcp(float a, float b, float r) {
  const float q = a * r;
  const float m = fabsf(q);
  if (m >= 0x1p-50f && m <= 0x1p50f) return fmaf(fmaf(-q, b, a), r, q);
  return a / b;
}
// Integer division never traps (the CPU emulator would die of SIGFPE):
// MIN / -1 wraps to MIN and leaves remainder 0, as on the GPU. A zero
// divisor gives quotient -1 and remainder a (a == q * b + r still holds);
// the CPU path raises ZeroDivisionError there instead, a kernel cannot.
template <typename T>
__device__ __forceinline__ T nvf_idiv(T a, T b) {
  if (b == 0) return (T)-1;
  if (b == -1) return (T)(0ull - (unsigned long long)a);
  return a / b;
}
template <typename T>
__device__ __forceinline__ T nvf_imod(T a, T b) {
  return b == 0 ? a : (b == -1 ? (T)0 : a % b);
}
template <typename T>
__device__ __forceinline__ T nvf_remainder(T a, T b) {
  T r = nvf_imod(a, b);
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
__device__ __forceinline__ float nvf_remainder(float a, float b) {
  float r = fmodf(a, b);
  return (r != 0.f && ((r < 0.f) != (b < 0.f))) ? r + b : r;
}
__device__ __forceinline__ double nvf_remainder(double a, double b) {
  double r = fmod(a, b);
  return (r != 0.0 && ((r < 0.0) != (b < 0.0))) ? r + b : r;
}
// torch's gcd (calc_gcd): Euclid on the absolute values. |MIN| wraps to
// MIN there as here, which gives torch's results with MIN operands (gcd(MIN,
// 6) == -2). MIN is only ever a first operand's value, so `%` never sees
// MIN % -1, and the loop never divides by 0.
template <typename T>
__device__ __forceinline__ T nvf_gcd(T a, T b) {
  a = a < 0 ? (T)(0ull - (unsigned long long)a) : a;
  b = b < 0 ? (T)(0ull - (unsigned long long)b) : b;
  while (a != 0) {
    const T c = a;
    a = b % a;
    b = c;
  }
  return b;
}
// Shifts by counts outside [0, bits) are defined as in torch's kernels:
// left and logical right shifts give 0, arithmetic right shifts the sign
// (C++ leaves them undefined; x86 would take the count modulo the width).
__device__ __forceinline__ int nvf_shl(int a, int b) {
  return (b < 0 || b >= 32) ? 0 : (int)((unsigned)a << b);
}
__device__ __forceinline__ int64_t nvf_shl(int64_t a, int64_t b) {
  return (b < 0 || b >= 64) ? 0 : (int64_t)((uint64_t)a << b);
}
__device__ __forceinline__ int nvf_shr(int a, int b) {
  return a >> ((b < 0 || b >= 32) ? 31 : b);
}
__device__ __forceinline__ int64_t nvf_shr(int64_t a, int64_t b) {
  return a >> ((b < 0 || b >= 64) ? 63 : b);
}
__device__ __forceinline__ int nvf_lshr(int a, int b) {
  return (b < 0 || b >= 32) ? 0 : (int)((unsigned)a >> b);
}
__device__ __forceinline__ int64_t nvf_lshr(int64_t a, int64_t b) {
  return (b < 0 || b >= 64) ? 0 : (int64_t)((uint64_t)a >> b);
}
// nextafter of two Half (BFloat16) values given as floats: one step of the
// 16-bit pattern toward b (c10's nextafter for those types).
__device__ __forceinline__ unsigned short nvf_next16(unsigned short bits,
                                                     float a, float b) {
  if (a == 0.f) return (unsigned short)(b < 0.f ? 0x8001u : 0x0001u);
  return (unsigned short)(((a < b) == (a > 0.f)) ? bits + 1u : bits - 1u);
}
__device__ __forceinline__ float nvf_nextafter_h(float a, float b) {
  if (a != a || b != b) return a + b;
  if (a == b) return b;
  nvf_half h = nvf_f2h(a);
  h.x = nvf_next16(h.x, a, b);
  return nvf_h2f(h);
}
__device__ __forceinline__ float nvf_nextafter_b(float a, float b) {
  if (a != a || b != b) return a + b;
  if (a == b) return b;
  nvf_bf16 h = nvf_f2b(a);
  h.x = nvf_next16(h.x, a, b);
  return nvf_b2f(h);
}
// One value per vector lane; 16-byte aligned so whole chunks move at once.
template <typename T, int N>
struct __align__(16) nvf_array {
  T v[N];
  __device__ __forceinline__ T& operator[](int i) { return v[i]; }
  __device__ __forceinline__ const T& operator[](int i) const { return v[i]; }
};
// Float lanes to bf16/half lanes two at a time: one convert per pair
// instead of a convert and a byte permute per element.
template <int N>
__device__ __forceinline__ void nvf_f2b_lanes(nvf_array<nvf_bf16, N>& d,
                                              const nvf_array<float, N>& s) {
#pragma unroll
  for (int k = 0; k + 1 < N; k += 2) {
#if __CUDA_ARCH__ >= 800
    unsigned r;
    asm("{ cvt.rn.bf16x2.f32 %0, %1, %2; }" : "=r"(r) : "f"(s[k + 1]), "f"(s[k]));
    d[k].x = (unsigned short)(r & 0xffffu);
    d[k + 1].x = (unsigned short)(r >> 16);
#else
    d[k] = nvf_f2b(s[k]);
    d[k + 1] = nvf_f2b(s[k + 1]);
#endif
  }
}
template <int N>
__device__ __forceinline__ void nvf_f2h_lanes(nvf_array<nvf_half, N>& d,
                                              const nvf_array<float, N>& s) {
#pragma unroll
  for (int k = 0; k + 1 < N; k += 2) {
#if __CUDA_ARCH__ >= 800
    unsigned r;
    asm("{ cvt.rn.f16x2.f32 %0, %1, %2; }" : "=r"(r) : "f"(s[k + 1]), "f"(s[k]));
    d[k].x = (unsigned short)(r & 0xffffu);
    d[k + 1].x = (unsigned short)(r >> 16);
#else
    d[k] = nvf_f2h(s[k]);
    d[k + 1] = nvf_f2h(s[k + 1]);
#endif
  }
}
template <int B> struct nvf_chunk;
template <> struct nvf_chunk<1> { typedef unsigned char type; };
template <> struct nvf_chunk<2> { typedef unsigned short type; };
template <> struct nvf_chunk<4> { typedef unsigned int type; };
template <> struct nvf_chunk<8> { typedef unsigned long long type; };
struct __align__(16) nvf_u128 { unsigned long long lo, hi; };
template <> struct nvf_chunk<16> { typedef nvf_u128 type; };
// Moves N consecutive elements in chunks of up to 16 bytes; the generator
// proves `p` aligned to min(16, N * sizeof(T)) bytes.
template <typename T, int N>
__device__ __forceinline__ void nvf_vload(nvf_array<T, N>& dst, const T* p) {
  constexpr int kBytes = (int)sizeof(T) * N;
  constexpr int kChunk = kBytes < 16 ? kBytes : 16;
  typedef typename nvf_chunk<kChunk>::type C;
#pragma unroll
  for (int k = 0; k < kBytes / kChunk; ++k)
    reinterpret_cast<C*>(dst.v)[k] = reinterpret_cast<const C*>(p)[k];
}
// Loads of an operand a pad or cat selects, computed without a branch so
// that its loads issue together with the others: only where `pred` holds,
// zeros elsewhere (the select discards them).
template <typename T, int N>
__device__ __forceinline__ void nvf_vload_if(nvf_array<T, N>& dst, const T* p,
                                             bool pred) {
  if (pred) {
    nvf_vload(dst, p);
  } else {
#pragma unroll
    for (int k = 0; k < N; ++k) dst.v[k] = T{};
  }
}
template <typename T>
__device__ __forceinline__ T nvf_load_if(const T* p, bool pred) {
  return pred ? *p : T{};
}
// nvf_vload for data the kernel reads once: 16-byte chunks skip L1, so
// the stream does not evict what is read again (on an H200, a 128 MiB read
// went from 3.15 to 3.45 TB/s, L2 flushed before each run).
template <typename T, int N>
__device__ __forceinline__ void nvf_vload_stream(nvf_array<T, N>& dst,
                                                 const T* p) {
#ifndef NVF_EMULATION
  constexpr int kBytes = (int)sizeof(T) * N;
  if (kBytes % 16 == 0) {
    unsigned* d = reinterpret_cast<unsigned*>(dst.v);
    const char* a = reinterpret_cast<const char*>(p);
#pragma unroll
    for (int k = 0; k < kBytes / 16; ++k)
      asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
          : "=r"(d[4 * k]), "=r"(d[4 * k + 1]), "=r"(d[4 * k + 2]),
            "=r"(d[4 * k + 3])
          : "l"(a + 16 * k));
    return;
  }
#endif
  nvf_vload(dst, p);
}
template <typename T, int N>
__device__ __forceinline__ void nvf_vstore(T* p, const nvf_array<T, N>& src) {
  constexpr int kBytes = (int)sizeof(T) * N;
  constexpr int kChunk = kBytes < 16 ? kBytes : 16;
  typedef typename nvf_chunk<kChunk>::type C;
#pragma unroll
  for (int k = 0; k < kBytes / kChunk; ++k)
    reinterpret_cast<C*>(p)[k] = reinterpret_cast<const C*>(src.v)[k];
}
struct nvf_op_sum {
  template <typename T> __device__ T operator()(T a, T b) const { return a + b; }
};
struct nvf_op_prod {
  template <typename T> __device__ T operator()(T a, T b) const { return a * b; }
};
struct nvf_op_max {
  template <typename T> __device__ T operator()(T a, T b) const { return nvf_max(a, b); }
};
struct nvf_op_min {
  template <typename T> __device__ T operator()(T a, T b) const { return nvf_min(a, b); }
};
// Reduces v over the block (blockDim.x a multiple of 32, at most 1024):
// shuffles within each warp, then every thread folds the per-warp values
// from shared memory, so all threads get the result.
// Wait: the buffer's previous readers may still be reading (the first
// reduction of a row); later ones alternate between two buffers, so the
// previous reduction's barrier already ordered them.
template <bool Wait, typename T, typename Op>
__device__ __forceinline__ T nvf_block_reduce(T v, Op op, T* smem) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  const int warps = (int)(blockDim.x >> 5);
  if (Wait) __syncthreads();
  if ((threadIdx.x & 31) == 0) smem[threadIdx.x >> 5] = v;
  __syncthreads();
  T r = smem[0];
  for (int w = 1; w < warps; ++w) r = op(r, smem[w]);
  return r;
}
// torch's integer pow. Squaring takes one step per bit of the exponent
// (one step per unit would spin 2^62 times); products wrap in unsigned
// arithmetic, as torch's do. A negative exponent gives 1 / a rounded
// toward 0: 1 for a == 1, -1 or 1 by parity for a == -1, else 0.
template <typename T>
__device__ __forceinline__ T nvf_ipow(T a, T b) {
  if (b < 0) return a == 1 ? (T)1 : (a == -1 ? (T)((b & 1) ? -1 : 1) : (T)0);
  unsigned long long r = 1, x = (unsigned long long)a;
  for (; b > 0; b >>= 1) {
    if (b & 1) r *= x;
    x *= x;
  }
  return (T)r;
}
)";
}

}  // namespace nvfuser
