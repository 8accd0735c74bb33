// Builders of nvFuser's random ops (ir/rng_op.h).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/fusion.h"
#include "ir/rng_op.h"

namespace nvfuser {

// The counter of an element keeps the op's stream index in 16 bits and the
// element's group (4 or 2 elements per Philox call) in 48 (docs/rng.md).
constexpr int64_t kMaxRngOps = int64_t(1) << 16;
constexpr int64_t kMaxRngElements = int64_t(1) << 48;

// Float, Double, Half or BFloat16 (a TypeError naming `op` otherwise).
void checkRngDataType(DataType dtype, const char* op);

// uniform(a = minval, b = maxval, shape) in [minval, maxval), or
// normal(a = mean, b = std, shape). A size-1 dim is a broadcast dim.
// seed and offset: both (Int or Int32 scalars) or neither (drawn at every
// execute). index: the op's stream; nullopt takes the next one (the number
// of random ops already in the fusion).
TensorView* rngOp(Fusion& f, RngOpType op, Val* a, Val* b,
                  const std::vector<int64_t>& shape, DataType dtype, Val* seed,
                  Val* offset, std::optional<int64_t> index = std::nullopt);

// rand_like (uniform in [0, 1)) or randn_like (standard normal) shaped as
// `like`: the same values as uniform(0, 1) / normal(0, 1) of like's sizes.
// dtype Null keeps like's dtype.
TensorView* rngLike(RngOpType op, TensorView* like, DataType dtype, Val* seed,
                    Val* offset, std::optional<int64_t> index = std::nullopt);

// The op rebuilt on new inputs (same op, form, dtype and index).
TensorView* replayRng(const RngOp* e, const std::vector<Val*>& ins);

// The op once sizes are known: the shape form (a rand_like takes its
// tensor's sizes), seeded by `seed` and `offset` (the concrete fusion's
// drawn inputs) when the op has no seed of its own.
TensorView* concretizeRng(const RngOp* e, const std::vector<Val*>& ins,
                          Val* seed, Val* offset);

}  // namespace nvfuser
