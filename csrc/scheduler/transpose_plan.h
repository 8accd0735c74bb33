// Transposes through shared-memory tiles. A pointwise kernel takes its
// output in order, so an input whose contiguous dim is not the output's
// innermost (x.transpose(-1, -2).contiguous(), a permute that moves the
// last dim) is read one element per row: each warp load touches 32 rows
// and uses 2 or 4 bytes of each 32-byte sector. The Transpose strategy
// tiles the two dims instead: a block loads a 32 x 32 tile of each such
// input along its contiguous dim into shared memory, then computes the
// outputs along theirs, reading those inputs from the tile.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/fusion.h"

namespace nvfuser {

struct TransposePlan {
  int64_t rank = 0;       // of the outputs (they share one shape)
  int64_t outInner = 0;   // the outputs' innermost dim of extent > 1
  int64_t outAcross = 0;  // the output dim the staged inputs are contiguous in
  // Segment input indices read through a tile, and for each, the output
  // dim each of its dims indexes (-1: a dim of size 1).
  std::vector<size_t> staged;
  std::vector<std::vector<int64_t>> stagedDims;
  static constexpr int64_t kTile = 32;
  static constexpr int64_t kBlockRows = 8;  // a block of 32 x 8 threads
  // Tiles per block (33 x 32 elements each, 8.4 KB in double): more
  // inputs are read strided.
  static constexpr size_t kMaxStaged = 4;
};

// Dims smaller than this stay with the pointwise strategy (a tile mostly
// empty costs more than the strided reads it saves).
constexpr int64_t kMinTransposeExtent = 32;

// The tile plan of a pointwise segment, or nullopt: every output of one
// shape, computed from the inputs through elementwise ops, sets, permutes
// and size-1 broadcasts, squeezes and expands only (so each input dim
// indexes one output dim), and some input, by `inputStrides` (elements
// per segment input, empty: dense), contiguous in an output dim other than
// the innermost, both at least `minExtent` long.
std::optional<TransposePlan> planTranspose(
    const Fusion& segment,
    const std::vector<std::vector<int64_t>>& inputStrides,
    int64_t minExtent = kMinTransposeExtent);

}  // namespace nvfuser
