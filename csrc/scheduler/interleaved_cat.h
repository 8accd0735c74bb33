// A cat whose parts interleave in an output's memory: the output is the cat
// through permutes, reshapes, copies and unary ops only, so along the
// output's row-major element order the position on the cat dim is the digit
// (i / innerElements) % extent. When a run of innerElements is not a whole
// number of warps' slots, warps straddle parts and run each part's branch
// in turn; the generator then hands slots to threads in an order that keeps
// each warp, or block, on one position (catSlotOrder; kernel_plan.h:
// KernelPlan::interleavedCats). The same digit can also separate the sides
// of pads on the innermost elements (slotOrderDigit).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "ir/fusion.h"

namespace nvfuser {

struct InterleavedCat {
  size_t output = 0;          // index into the fusion's outputs
  int64_t innerElements = 1;  // output elements per position on the cat dim
  int64_t extent = 1;         // the cat dim's extent (every part's together)
  // Keep whole blocks, not only warps, on one position where a group of
  // them fits (catSlotOrder).
  bool blockUniform = true;
  // The digit also separates the sides of pads on the innermost elements
  // (slotOrderDigit), not only the positions of a cat.
  bool splitsPads = false;
  // Consecutive digits that share one position of the cat (the sides of
  // pads within it; 1 without pads or cat). A block-uniform order keeps
  // these together in a block, a warp on each side, so a rotate-half's
  // halves, whose loads read each other's elements, share one SM's L1.
  int64_t sidesPerCatPosition = 1;
};

// The slot order of an interleaved cat's output family. Runs of R slots
// share a position (R = innerElements / lanes); groups of K x C x R slots
// (C positions, K the fewest runs that fill whole units of threads) are
// taken position-major: slot r of a group is run k = r / R % K of position
// c = r / (K R), i.e. memory slot (k C + c) R + r % R. Slots past the last
// whole group keep their order. The unit is a block where blockUniform and
// a group of blocks fits the family, else a warp: a warp on one position
// runs one part's branch (no divergence); a block on one position does not
// hold its warp slots until a costlier part's warp ends (a GQA backward's
// k and v sum over their group's query heads, a q reads one head: the
// LitGPT Llama-3 backward 95.1 -> 86.0 us on an H200, Llama-2's 107.1 ->
// 100.7). Where a cat position's pad sides fill a block evenly
// (sidesPerCatPosition S), K fills 1/S of it, so a block holds the S sides
// of one cat position and each warp one side.
struct CatSlotOrder {
  int64_t runSlots = 0;      // R
  int64_t runsPerGroup = 0;  // K
  int64_t positions = 0;     // C
  int64_t unitThreads = 32;  // a warp, or the block
  int64_t groupSlots() const { return runsPerGroup * positions * runSlots; }
  // Slots in whole groups (the rest keep their order).
  int64_t orderedSlots = 0;
};

// None when a run is already whole units, the lanes split a run, or no
// whole group fits the family's `slots`.
std::optional<CatSlotOrder> catSlotOrder(const InterleavedCat& cat,
                                         int64_t slots, int64_t lanes,
                                         int64_t blockThreads);

// The digit that orders output o's slots: its interleaved cat's (o is a
// cat through permutes, reshapes, copies and unary ops),
// combined with the periods of the branches on its innermost elements
// when `innermostBranches` (innermost_branches.h): the finest unit U of
// them all and the least common span P give the digit (i / U) % (P / U),
// on which every one of those branches is uniform. Pads whose runs are
// shorter than `minRunBytes` are left out; if the pads' digit is still too
// fine, the cat's alone. None when o has neither.
std::optional<InterleavedCat> slotOrderDigit(const Fusion& fusion, size_t o,
                                             bool innermostBranches,
                                             int64_t minRunBytes);

}  // namespace nvfuser
