// The numbers of nvFuser's random ops on the CPU: Philox4x32-10 and its
// transforms into uniform and normal values, element by element.
// codegen/rng_device_helpers.cpp is the same algorithm as CUDA device code
// (tests/cpp/runtime/test_rng.cpp checks both give the same bits); the
// scheme is in docs/rng.md.
#pragma once

#include <array>
#include <cstdint>

#include "ir/dtype.h"

namespace nvfuser::philox {

// Random123's philox4x32-10 of a counter under a key.
std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> counter,
                                   std::array<uint32_t, 2> key);

// The four words of an op's element group: key = seed, counter = (offset,
// group | stream << 48) as two 64-bit halves, low words first.
std::array<uint32_t, 4> block(uint64_t seed, uint64_t offset, uint64_t stream,
                              uint64_t group);

// log(x) for x in (0, 1] and (sin, cos)(2 pi t) for t in [0, 1), from
// IEEE operations only (+ - * / sqrt fma), so host and device agree.
double logUnit(double x);
void sinCos2Pi(double t, double* s, double* c);

// Element i of uniform(lo, hi) / normal(mean, std) of `dtype`, as a double
// that is exactly representable in dtype.
double uniformAt(DataType dtype, uint64_t seed, uint64_t offset,
                 uint64_t stream, uint64_t i, double lo, double hi);
double normalAt(DataType dtype, uint64_t seed, uint64_t offset, uint64_t stream,
                uint64_t i, double mean, double std);

}  // namespace nvfuser::philox
