// Compiled with -ffp-contract=off (CMakeLists.txt): a multiply and an add
// fused here but not in the kernel would round differently. The device
// code fuses nothing either (rng_device_helpers.cpp).
#include "runtime/philox.h"

#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <cmath>
#include <cstring>

namespace nvfuser::philox {

namespace {
// 1 / (2k + 3): the series of atanh(s) / s - 1 in s^2.
constexpr double kLog[11] = {
    0x1.5555555555555p-2, 0x1.999999999999ap-3, 0x1.2492492492492p-3,
    0x1.c71c71c71c71cp-4, 0x1.745d1745d1746p-4, 0x1.3b13b13b13b14p-4,
    0x1.1111111111111p-4, 0x1.e1e1e1e1e1e1ep-5, 0x1.af286bca1af28p-5,
    0x1.8618618618618p-5, 0x1.642c8590b2164p-5};
// (-1)^(k+1) / (2k + 3)!: sin(a) = a + a^3 * sum kSin[k] a^(2k).
constexpr double kSin[8] = {-0x1.5555555555555p-3,  0x1.1111111111111p-7,
                            -0x1.a01a01a01a01ap-13, 0x1.71de3a556c734p-19,
                            -0x1.ae64567f544e4p-26, 0x1.6124613a86d09p-33,
                            -0x1.ae7f3e733b81fp-41, 0x1.952c77030ad4ap-49};
// (-1)^(k+1) / (2k + 2)!: cos(a) = 1 + a^2 * sum kCos[k] a^(2k).
constexpr double kCos[9] = {
    -0x1.0000000000000p-1,  0x1.5555555555555p-5,   -0x1.6c16c16c16c17p-10,
    0x1.a01a01a01a01ap-16,  -0x1.27e4fb7789f5cp-22, 0x1.1eed8eff8d898p-29,
    -0x1.93974a8c07c9dp-37, 0x1.ae7f3e733b81fp-45,  -0x1.6827863b97d97p-53};
constexpr double kSqrt2 = 0x1.6a09e667f3bcdp+0;
constexpr double kLn2Hi = 0x1.62e42fefa39efp-1;
constexpr double kLn2Lo = 0x1.abc9e3b39803fp-56;
constexpr double kPiOver2 = 0x1.921fb54442d18p+0;

// [0, 1) in steps of 2^-24 (Float, Half, BFloat16) or 2^-53 (Double).
double unit24(uint32_t w) {
  return static_cast<double>(w >> 8) * 0x1p-24;
}
uint64_t bits53(uint32_t a, uint32_t b) {
  return (static_cast<uint64_t>(a >> 5) << 26) | (b >> 6);
}
double unit53(uint32_t a, uint32_t b) {
  return static_cast<double>(bits53(a, b)) * 0x1p-53;
}

// r rounded to dtype (Half and BFloat16 through Float, as the kernels).
double roundTo(DataType dtype, double r) {
  const float f = static_cast<float>(r);
  switch (dtype) {
    case DataType::Half:
      return static_cast<float>(c10::Half(f));
    case DataType::BFloat16:
      return static_cast<float>(c10::BFloat16(f));
    case DataType::Double:
      return r;
    default:
      return f;
  }
}

double boxMuller(double u1, double t, bool odd) {
  const double radius = std::sqrt(-2.0 * logUnit(u1));
  double s = 0;
  double c = 0;
  sinCos2Pi(t, &s, &c);
  return radius * (odd ? s : c);
}
}  // namespace

std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> c,
                                   std::array<uint32_t, 2> k) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k[0] += 0x9E3779B9u;
      k[1] += 0xBB67AE85u;
    }
    const uint64_t p0 = uint64_t{0xD2511F53u} * c[0];
    const uint64_t p1 = uint64_t{0xCD9E8D57u} * c[2];
    c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k[0],
         static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k[1],
         static_cast<uint32_t>(p0)};
  }
  return c;
}

std::array<uint32_t, 4> block(uint64_t seed, uint64_t offset, uint64_t stream,
                              uint64_t group) {
  const uint32_t hi = (static_cast<uint32_t>(group >> 32) & 0xffffu) |
                      (static_cast<uint32_t>(stream) << 16);
  return philox4x32(
      {static_cast<uint32_t>(offset), static_cast<uint32_t>(offset >> 32),
       static_cast<uint32_t>(group), hi},
      {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)});
}

double logUnit(double x) {
  // x = 2^e * m with m in (sqrt(1/2), sqrt(2)]; log(m) = 2 atanh(s).
  uint64_t bits = 0;
  std::memcpy(&bits, &x, sizeof(bits));
  int e = static_cast<int>((bits >> 52) & 0x7ff) - 1023;
  bits = (bits & 0xfffffffffffffULL) | 0x3ff0000000000000ULL;
  double m = 0;
  std::memcpy(&m, &bits, sizeof(m));
  if (m > kSqrt2) {
    m *= 0.5;
    e += 1;
  }
  const double s = (m - 1.0) / (m + 1.0);
  const double s2 = s * s;
  double p = kLog[10];
  for (int k = 9; k >= 0; --k) {
    p = std::fma(p, s2, kLog[k]);
  }
  const double t = s + s;
  const double lm = std::fma(t, s2 * p, t);
  const double de = static_cast<double>(e);
  return std::fma(de, kLn2Hi, std::fma(de, kLn2Lo, lm));
}

void sinCos2Pi(double t, double* s, double* c) {
  // 2 pi t = q pi/2 + a with q the nearest quarter turn, |a| <= pi/4.
  const double t4 = t * 4.0;
  const double q = std::floor(t4 + 0.5);
  const double a = (t4 - q) * kPiOver2;
  const double a2 = a * a;
  double ps = kSin[7];
  for (int k = 6; k >= 0; --k) {
    ps = std::fma(ps, a2, kSin[k]);
  }
  double pc = kCos[8];
  for (int k = 7; k >= 0; --k) {
    pc = std::fma(pc, a2, kCos[k]);
  }
  const double sa = std::fma(a * a2, ps, a);
  const double ca = std::fma(a2, pc, 1.0);
  switch (static_cast<int>(q) & 3) {
    case 0:
      *s = sa, *c = ca;
      break;
    case 1:
      *s = ca, *c = -sa;
      break;
    case 2:
      *s = -sa, *c = -ca;
      break;
    default:
      *s = -ca, *c = sa;
      break;
  }
}

double uniformAt(DataType dtype, uint64_t seed, uint64_t offset,
                 uint64_t stream, uint64_t i, double lo, double hi) {
  double u = 0;
  if (dtype == DataType::Double) {  // two elements per block
    const auto w = block(seed, offset, stream, i >> 1);
    const uint64_t j = (i & 1) * 2;
    u = unit53(w[j], w[j + 1]);
  } else {  // four
    u = unit24(block(seed, offset, stream, i >> 2)[i & 3]);
  }
  // Never maxval once rounded to dtype: such values become minval.
  const double r = roundTo(dtype, std::fma(u, hi - lo, lo));
  return r >= roundTo(dtype, hi) ? roundTo(dtype, lo) : r;
}

double normalAt(DataType dtype, uint64_t seed, uint64_t offset, uint64_t stream,
                uint64_t i, double mean, double std) {
  double u1 = 0;                    // (0, 1]
  double t = 0;                     // [0, 1)
  if (dtype == DataType::Double) {  // one pair per block
    const auto w = block(seed, offset, stream, i >> 1);
    u1 = (static_cast<double>(bits53(w[0], w[1])) + 1.0) * 0x1p-53;
    t = unit53(w[2], w[3]);
  } else {  // two pairs per block
    const auto w = block(seed, offset, stream, i >> 2);
    const uint64_t j = ((i >> 1) & 1) * 2;
    u1 = (static_cast<double>(w[j]) + 1.0) * 0x1p-32;
    t = static_cast<double>(w[j + 1]) * 0x1p-32;
  }
  return roundTo(dtype, std::fma(boxMuller(u1, t, (i & 1) != 0), std, mean));
}

}  // namespace nvfuser::philox
