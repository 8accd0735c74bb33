// Broadcasts a consumer segment would recompute for every element of a
// much larger iteration space. A RoPE with cos and sin computed from
// position ids ([B, T, D]) and broadcast over the heads ([B, H, T, D])
// evaluates sinf and cosf H times per value when fused (three times more
// per element in a backward, at the rotated indices too). A segment
// boundary before such a broadcast instead has a small kernel write the
// value once, and the consumer loads it (NVFUSER_DISABLE=
// broadcast_materialization keeps them fused).
#pragma once

#include <cstdint>
#include <set>

#include "ir/fusion.h"

namespace nvfuser {

// How many times over a broadcast value must be consumed (the largest
// tensor downstream of the broadcast against the value) to be written
// once instead.
constexpr int64_t kMaterializedBroadcastFactor = 8;

// Broadcasts whose input is computed through costly elementwise math
// (op_cost.h) and no reduction (a row kernel computes a reduced value
// once per row anyway), and has a kernel type.
std::set<const Expr*> broadcastsToMaterialize(const Fusion& fusion);

}  // namespace nvfuser
