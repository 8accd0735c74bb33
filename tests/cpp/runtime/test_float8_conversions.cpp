// The generated kernels' Float8 conversions (the device helpers compiled
// for the CPU) against a reference written from the formats' definitions:
// every code decoded, and floats (every Float8 value, the midpoints between
// neighbours and one float step either side of them, the overflow
// thresholds, specials, a spread of random magnitudes) rounded to the
// nearest code, ties to the even code, with torch's overflow rules:
// e4m3fn has no infinity (past 448 is NaN), e5m2 rounds past 57344 to inf.
// e8m0fnu (powers of two) against torch's rule, written out separately:
// |x| rounds to the power of two 2^e below it unless x >= 1.5 * 2^e.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "../emu/kernel_emulator.h"
#include "codegen/device_helpers.h"

namespace nvfuser {

namespace {
struct Format {
  const char* name;
  int mbits;
  int bias;
  bool fn;  // no infinity: e4m3fn
};
const Format kE4m3{"e4m3", 3, 7, true};
const Format kE5m2{"e5m2", 2, 15, false};

bool isNanCode(const Format& f, unsigned c) {
  const unsigned mag = c & 0x7fu;
  if (f.fn) {
    return mag == 0x7fu;
  }
  return (mag >> f.mbits) == 31u && (mag & 3u) != 0u;
}

// The value of a code, from the format's definition.
double decodeRef(const Format& f, unsigned c) {
  const double sign = (c & 0x80u) ? -1.0 : 1.0;
  const unsigned mag = c & 0x7fu;
  const int e = static_cast<int>(mag >> f.mbits);
  const int m = static_cast<int>(mag & ((1u << f.mbits) - 1u));
  if (isNanCode(f, c)) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  if (!f.fn && e == 31) {
    return sign * std::numeric_limits<double>::infinity();
  }
  if (e == 0) {
    return sign * std::ldexp(m, 1 - f.bias - f.mbits);
  }
  return sign * std::ldexp((1 << f.mbits) + m, e - f.bias - f.mbits);
}

// The code nearest to x (ties to the even code). The candidates are the
// finite codes and the first code past the largest finite value, which
// stands for overflow: NaN for e4m3fn, inf for e5m2.
unsigned encodeRef(const Format& f, float x) {
  const unsigned sign = std::signbit(x) ? 0x80u : 0u;
  if (std::isnan(x)) {
    return sign | 0x7fu;
  }
  const unsigned top = f.fn ? 0x7eu : 0x7bu;
  const double past = 2 * decodeRef(f, top) - decodeRef(f, top - 1);
  const double a = std::fabs(static_cast<double>(x));
  if (a >= past) {  // (distances to huge values would round alike)
    return sign | (f.fn ? 0x7fu : 0x7cu);
  }
  unsigned best = 0;
  double bestDist = std::numeric_limits<double>::infinity();
  for (unsigned c = 0; c <= top + 1; ++c) {
    const double v = c <= top ? decodeRef(f, c) : past;
    const double d = std::fabs(a - v);
    if (d < bestDist || (d == bestDist && (c & 1u) == 0u)) {
      best = c;
      bestDist = d;
    }
  }
  if (best > top) {
    best = f.fn ? 0x7fu : 0x7cu;
  }
  return sign | best;
}

// e8m0fnu, from torch's definition: codes 1..254 are 2^(c - 127), 0 is
// 2^-127, 255 NaN. A float's magnitude a in [2^e, 2^(e+1)) encodes as 2^e,
// or 2^(e+1) from 1.5 * 2^e on (past 2^127 that is NaN); below the
// normals, a > 2^-127 is 2^-126 and anything smaller 2^-127; inf and NaN
// are NaN. The sign is ignored.
double decodeE8m0Ref(unsigned c) {
  if (c == 255u) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  return std::ldexp(1.0, c == 0u ? -127 : static_cast<int>(c) - 127);
}
unsigned encodeE8m0Ref(float x) {
  const double a = std::fabs(static_cast<double>(x));
  if (!std::isfinite(a)) {
    return 255u;
  }
  if (a < std::ldexp(1.0, -126)) {
    return a > std::ldexp(1.0, -127) ? 1u : 0u;
  }
  int e = 0;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1): a in [2^(e-1), 2^e)
  const unsigned code = static_cast<unsigned>(e - 1 + 127);
  return a >= 1.5 * std::ldexp(1.0, e - 1) ? code + 1u : code;
}

using Encode = void (*)(const float*, int, unsigned char*, unsigned char*,
                        unsigned char*);
using Decode = void (*)(float*, float*, float*);

std::string helpersWithEntries() {
  return std::string(deviceHelpersSource()) + R"(
extern "C" void nvf_test_encode(const float* in, int n, unsigned char* e4,
                                unsigned char* e5, unsigned char* e8) {
  for (int i = 0; i < n; ++i) {
    e4[i] = nvf_f_to_e4m3(in[i]).x;
    e5[i] = nvf_f_to_e5m2(in[i]).x;
    e8[i] = nvf_f_to_e8m0(in[i]).x;
  }
}
extern "C" void nvf_test_decode(float* e4, float* e5, float* e8) {
  for (unsigned c = 0; c < 256; ++c) {
    nvf_e4m3 a; a.x = (unsigned char)c; e4[c] = nvf_e4m3_to_f(a);
    nvf_e5m2 b; b.x = (unsigned char)c; e5[c] = nvf_e5m2_to_f(b);
    nvf_e8m0 d; d.x = (unsigned char)c; e8[c] = nvf_e8m0_to_f(d);
  }
}
)";
}

uint32_t bitsOf(float x) {
  uint32_t u = 0;
  std::memcpy(&u, &x, sizeof(u));
  return u;
}

std::vector<float> encodeInputs() {
  std::vector<float> in = {0.0f,
                           -0.0f,
                           INFINITY,
                           -INFINITY,
                           NAN,
                           -NAN,
                           448.0f,
                           464.0f,
                           470.0f,
                           480.0f,
                           57344.0f,
                           61440.0f,
                           61441.0f,
                           65536.0f,
                           1e30f,
                           std::numeric_limits<float>::max(),
                           std::numeric_limits<float>::denorm_min(),
                           std::numeric_limits<float>::min()};
  for (const Format& f : {kE4m3, kE5m2}) {
    const unsigned top = f.fn ? 0x7eu : 0x7bu;
    for (unsigned c = 0; c <= top; ++c) {
      const float v = static_cast<float>(decodeRef(f, c));
      const float next = static_cast<float>(decodeRef(f, c + 1));
      const float mid = c < top ? static_cast<float>((double(v) + next) / 2)
                                : static_cast<float>(v * 1.0625f);
      for (float x :
           {v, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY)}) {
        in.push_back(x);
        in.push_back(-x);
      }
    }
  }
  // e8m0: every power of two, the 1.5x ties and a float step either side.
  for (int e = -149; e <= 127; ++e) {
    const float p = std::ldexp(1.0f, e);
    const float tie = e >= -126 ? 1.5f * p : std::ldexp(1.0f, -127);
    for (float x :
         {p, tie, std::nextafter(tie, 0.0f), std::nextafter(tie, INFINITY)}) {
      in.push_back(x);
      in.push_back(-x);
    }
  }
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> exponent(-30.0f, 20.0f);
  for (int i = 0; i < 20000; ++i) {
    const float x = std::exp2(exponent(gen));
    in.push_back(i % 2 ? -x : x);
  }
  return in;
}
}  // namespace

TEST(Float8ConversionTest, DecodesEveryCode) {
  auto decode = reinterpret_cast<Decode>(
      compileEmulated(helpersWithEntries(), "nvf_test_decode"));
  std::vector<float> e4(256), e5(256), e8(256);
  decode(e4.data(), e5.data(), e8.data());
  for (unsigned c = 0; c < 256; ++c) {
    for (auto [f, got] :
         {std::make_pair(kE4m3, e4[c]), std::make_pair(kE5m2, e5[c])}) {
      const float want = static_cast<float>(decodeRef(f, c));
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << f.name << " code " << c;
      } else {
        EXPECT_EQ(bitsOf(got), bitsOf(want)) << f.name << " code " << c;
      }
    }
    if (c == 255u) {
      EXPECT_EQ(bitsOf(e8[c]), 0x7f800001u);  // torch's NaN bits
    } else {
      EXPECT_EQ(bitsOf(e8[c]), bitsOf(static_cast<float>(decodeE8m0Ref(c))))
          << "e8m0 code " << c;
    }
  }
}

TEST(Float8ConversionTest, RoundsToNearestEvenWithTorchsOverflow) {
  auto encode = reinterpret_cast<Encode>(
      compileEmulated(helpersWithEntries(), "nvf_test_encode"));
  const std::vector<float> in = encodeInputs();
  std::vector<unsigned char> e4(in.size()), e5(in.size()), e8(in.size());
  encode(in.data(), static_cast<int>(in.size()), e4.data(), e5.data(),
         e8.data());
  int failures = 0;
  for (size_t i = 0; i < in.size() && failures < 10; ++i) {
    const unsigned want4 = encodeRef(kE4m3, in[i]);
    const unsigned want5 = encodeRef(kE5m2, in[i]);
    const unsigned want8 = encodeE8m0Ref(in[i]);
    failures += (e4[i] != want4) + (e5[i] != want5) + (e8[i] != want8);
    EXPECT_EQ(e4[i], want4) << "e4m3 of " << in[i];
    EXPECT_EQ(e5[i], want5) << "e5m2 of " << in[i];
    EXPECT_EQ(e8[i], want8) << "e8m0 of " << in[i];
  }
  // The overflow rules, spelled out.
  EXPECT_EQ(encodeRef(kE4m3, 464.0f), 0x7eu);  // a tie: to 448 (even)
  EXPECT_EQ(encodeRef(kE4m3, 470.0f), 0x7fu);  // past 448: NaN
  EXPECT_EQ(encodeRef(kE4m3, -INFINITY), 0xffu);
  EXPECT_EQ(encodeRef(kE5m2, 61440.0f), 0x7cu);  // a tie: to inf (even)
  EXPECT_EQ(encodeRef(kE5m2, 61439.0f), 0x7bu);
  EXPECT_EQ(encodeE8m0Ref(1.5f), 128u);    // the tie rounds up: 2
  EXPECT_EQ(encodeE8m0Ref(-1.49f), 127u);  // the sign is dropped: 1
  EXPECT_EQ(encodeE8m0Ref(0.0f), 0u);      // no zero: 2^-127
  EXPECT_EQ(encodeE8m0Ref(std::ldexp(1.5f, 127)), 255u);  // past: NaN
}

}  // namespace nvfuser
