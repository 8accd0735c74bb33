#include "codegen/rng_device_helpers.h"

#include "codegen/device_helpers.h"

namespace nvfuser {

// Every multiply that feeds an add is an explicit fma or __dmul_rn, which
// the compiler never contracts: the CPU path (runtime/philox.cpp, built
// with -ffp-contract=off) rounds each operation the same way.
const char* rngDeviceHelpersSource() {
  return R"(// nvfuser-lite random numbers: Philox4x32-10 (docs/rng.md)
#ifdef NVF_EMULATION
#define nvf_rng_mul(a, b) ((a) * (b))
#else
#define nvf_rng_mul(a, b) __dmul_rn(a, b)
#endif
struct nvf_philox4 { unsigned int w[4]; };
// Key = seed; counter = (offset, group | stream << 48), low words first.
__device__ __forceinline__ nvf_philox4 nvf_philox(unsigned long long seed,
    unsigned long long offset, unsigned int stream, unsigned long long group) {
  unsigned int k0 = (unsigned int)seed, k1 = (unsigned int)(seed >> 32);
  unsigned int c0 = (unsigned int)offset, c1 = (unsigned int)(offset >> 32);
  unsigned int c2 = (unsigned int)group;
  unsigned int c3 = ((unsigned int)(group >> 32) & 0xffffu) | (stream << 16);
#pragma unroll
  for (int r = 0; r < 10; ++r) {
    if (r > 0) { k0 += 0x9E3779B9u; k1 += 0xBB67AE85u; }
    const unsigned long long p0 = 0xD2511F53ull * c0;
    const unsigned long long p1 = 0xCD9E8D57ull * c2;
    const unsigned int n0 = (unsigned int)(p1 >> 32) ^ c1 ^ k0;
    const unsigned int n2 = (unsigned int)(p0 >> 32) ^ c3 ^ k1;
    c1 = (unsigned int)p1;
    c3 = (unsigned int)p0;
    c0 = n0;
    c2 = n2;
  }
  nvf_philox4 out = {{c0, c1, c2, c3}};
  return out;
}
__device__ __forceinline__ unsigned long long nvf_rng_bits53(unsigned int a,
                                                             unsigned int b) {
  return ((unsigned long long)(a >> 5) << 26) | (b >> 6);
}
// log(x), x in (0, 1]: x = 2^e m, m in (sqrt(1/2), sqrt(2)], log(m) =
// 2 atanh((m - 1) / (m + 1)) as a series.
__device__ __forceinline__ double nvf_rng_log(double x) {
  unsigned long long bits = (unsigned long long)__double_as_longlong(x);
  int e = (int)((bits >> 52) & 0x7ff) - 1023;
  double m = __longlong_as_double(
      (long long)((bits & 0xfffffffffffffULL) | 0x3ff0000000000000ULL));
  if (m > 0x1.6a09e667f3bcdp+0) {
    m = nvf_rng_mul(m, 0.5);
    e += 1;
  }
  const double s = (m - 1.0) / (m + 1.0);
  const double s2 = nvf_rng_mul(s, s);
  double p = 0x1.642c8590b2164p-5;
  p = fma(p, s2, 0x1.8618618618618p-5);
  p = fma(p, s2, 0x1.af286bca1af28p-5);
  p = fma(p, s2, 0x1.e1e1e1e1e1e1ep-5);
  p = fma(p, s2, 0x1.1111111111111p-4);
  p = fma(p, s2, 0x1.3b13b13b13b14p-4);
  p = fma(p, s2, 0x1.745d1745d1746p-4);
  p = fma(p, s2, 0x1.c71c71c71c71cp-4);
  p = fma(p, s2, 0x1.2492492492492p-3);
  p = fma(p, s2, 0x1.999999999999ap-3);
  p = fma(p, s2, 0x1.5555555555555p-2);
  const double t = s + s;
  const double lm = fma(t, nvf_rng_mul(s2, p), t);
  const double de = (double)e;
  return fma(de, 0x1.62e42fefa39efp-1, fma(de, 0x1.abc9e3b39803fp-56, lm));
}
// (sin, cos)(2 pi t), t in [0, 1): 2 pi t = q pi/2 + a, |a| <= pi/4.
__device__ __forceinline__ void nvf_rng_sincos2pi(double t, double* s,
                                                  double* c) {
  const double t4 = nvf_rng_mul(t, 4.0);
  const double q = floor(t4 + 0.5);
  const double a = nvf_rng_mul(t4 - q, 0x1.921fb54442d18p+0);
  const double a2 = nvf_rng_mul(a, a);
  double ps = 0x1.952c77030ad4ap-49;
  ps = fma(ps, a2, -0x1.ae7f3e733b81fp-41);
  ps = fma(ps, a2, 0x1.6124613a86d09p-33);
  ps = fma(ps, a2, -0x1.ae64567f544e4p-26);
  ps = fma(ps, a2, 0x1.71de3a556c734p-19);
  ps = fma(ps, a2, -0x1.a01a01a01a01ap-13);
  ps = fma(ps, a2, 0x1.1111111111111p-7);
  ps = fma(ps, a2, -0x1.5555555555555p-3);
  double pc = -0x1.6827863b97d97p-53;
  pc = fma(pc, a2, 0x1.ae7f3e733b81fp-45);
  pc = fma(pc, a2, -0x1.93974a8c07c9dp-37);
  pc = fma(pc, a2, 0x1.1eed8eff8d898p-29);
  pc = fma(pc, a2, -0x1.27e4fb7789f5cp-22);
  pc = fma(pc, a2, 0x1.a01a01a01a01ap-16);
  pc = fma(pc, a2, -0x1.6c16c16c16c17p-10);
  pc = fma(pc, a2, 0x1.5555555555555p-5);
  pc = fma(pc, a2, -0x1.0000000000000p-1);
  const double sa = fma(nvf_rng_mul(a, a2), ps, a);
  const double ca = fma(a2, pc, 1.0);
  switch ((int)q & 3) {
    case 0: *s = sa; *c = ca; break;
    case 1: *s = ca; *c = -sa; break;
    case 2: *s = -sa; *c = -ca; break;
    default: *s = -ca; *c = sa; break;
  }
}
// r rounded to the output type (kind 0 Float, 1 Half, 2 BFloat16, 3
// Double), as a double.
__device__ __forceinline__ double nvf_rng_round(double r, int kind) {
  const float f = (float)r;
  if (kind == 1) return (double)nvf_h2f(nvf_f2h(f));
  if (kind == 2) return (double)nvf_b2f(nvf_f2b(f));
  return kind == 3 ? r : (double)f;
}
// Element i of uniform(lo, hi) in [lo, hi): a value rounded to hi is lo.
__device__ __forceinline__ double nvf_rng_uniform(unsigned long long seed,
    unsigned long long offset, unsigned int stream, unsigned long long i,
    double lo, double hi, int kind) {
  double u;
  if (kind == 3) {
    const nvf_philox4 b = nvf_philox(seed, offset, stream, i >> 1);
    const int j = (int)(i & 1) * 2;
    u = nvf_rng_mul((double)nvf_rng_bits53(b.w[j], b.w[j + 1]), 0x1p-53);
  } else {
    const nvf_philox4 b = nvf_philox(seed, offset, stream, i >> 2);
    u = nvf_rng_mul((double)(b.w[i & 3] >> 8), 0x1p-24);
  }
  const double r = nvf_rng_round(fma(u, hi - lo, lo), kind);
  return r >= nvf_rng_round(hi, kind) ? nvf_rng_round(lo, kind) : r;
}
// Element i of normal(mean, std): Box-Muller, the cosine for even i, the
// sine for odd i of each pair.
__device__ __forceinline__ double nvf_rng_normal(unsigned long long seed,
    unsigned long long offset, unsigned int stream, unsigned long long i,
    double mean, double std, int kind) {
  double u1, t;
  if (kind == 3) {
    const nvf_philox4 b = nvf_philox(seed, offset, stream, i >> 1);
    u1 = nvf_rng_mul((double)nvf_rng_bits53(b.w[0], b.w[1]) + 1.0, 0x1p-53);
    t = nvf_rng_mul((double)nvf_rng_bits53(b.w[2], b.w[3]), 0x1p-53);
  } else {
    const nvf_philox4 b = nvf_philox(seed, offset, stream, i >> 2);
    const int j = (int)((i >> 1) & 1) * 2;
    u1 = nvf_rng_mul((double)b.w[j] + 1.0, 0x1p-32);
    t = nvf_rng_mul((double)b.w[j + 1], 0x1p-32);
  }
  const double radius = sqrt(nvf_rng_mul(-2.0, nvf_rng_log(u1)));
  double s, c;
  nvf_rng_sincos2pi(t, &s, &c);
  const double z = nvf_rng_mul(radius, (i & 1) ? s : c);
  return nvf_rng_round(fma(z, std, mean), kind);
}
)";
}

std::string deviceHelpersFor(const Fusion& f) {
  std::string s = deviceHelpersSource();
  for (const Expr* e : f.exprs()) {
    if (e->type() == ExprType::Rng) {
      return s + rngDeviceHelpersSource();
    }
  }
  return s;
}

}  // namespace nvfuser
