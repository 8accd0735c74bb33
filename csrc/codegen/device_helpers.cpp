#include "codegen/device_helpers.h"

namespace nvfuser {

const char* deviceHelpersSource() {
  return R"(// nvfuser-lite device helpers
typedef long long int64_t;
typedef unsigned long long uint64_t;
struct __align__(2) nvf_half { unsigned short x; };
struct __align__(2) nvf_bf16 { unsigned short x; };

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
__device__ __forceinline__ float nvf_b2f(nvf_bf16 b) {
  return __uint_as_float(((unsigned)b.x) << 16);
}
// Round to nearest even, NaN stays NaN.
__device__ __forceinline__ nvf_bf16 nvf_f2b(float f) {
  unsigned u = __float_as_uint(f);
  nvf_bf16 b;
  if ((u & 0x7fffffffu) > 0x7f800000u) {
    b.x = 0x7fc0;
    return b;
  }
  u += 0x7fffu + ((u >> 16) & 1u);
  b.x = (unsigned short)(u >> 16);
  return b;
}
template <typename T>
__device__ __forceinline__ T nvf_max(T a, T b) { return (a != a || a > b) ? a : b; }
template <typename T>
__device__ __forceinline__ T nvf_min(T a, T b) { return (a != a || a < b) ? a : b; }
template <typename T>
__device__ __forceinline__ T nvf_remainder(T a, T b) {
  T r = a % b;
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
template <typename T>
__device__ __forceinline__ T nvf_ipow(T a, T b) {
  T r = 1;
  for (; b > 0; --b) r *= a;
  return b < 0 ? (a == 1 ? 1 : 0) : r;
}
)";
}

}  // namespace nvfuser
