// The transpose strategy (scheduler/transpose_plan.h): a block per 32 x 32
// tile of the outputs' two tiled dims (and one index of the others). Its
// 32 x 8 threads first copy each staged input's tile into shared memory
// along the input's contiguous dim, then compute the outputs along their
// innermost dim, reading the staged inputs from the tile (transposed:
// conflict-free, one padding column) and the others from memory. Not a
// public header.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "codegen/value_builder.h"

namespace nvfuser {
namespace codegen_detail {

class TransposeKernelGenerator : public KernelValueBuilder {
 public:
  using KernelValueBuilder::KernelValueBuilder;

  KernelSource generate(const std::string& name) override;
  // One element per thread: nothing to prove.
  bool provesLanes(size_t, std::string*) override { return true; }

 protected:
  std::optional<Value> stagedLoad(const TensorView* tv,
                                  const Index& idx) override;

 private:
  // The outputs' index at tile coordinates: `across` and `inner` for the
  // tiled dims, the other dims from the tile's outer index.
  Index outputIndex(const IndexExpr& across, const IndexExpr& inner) const;
  // The untiled dims' indices (others_) from the tile's outer index o, and
  // their statements; `outer` gets how many such indices there are.
  std::string untiledIndices(const std::vector<int64_t>& shape, int64_t* outer);
  // Staged input k's index at an output index.
  Index stagedIndex(size_t k, const Index& out) const;
  // Statements copying staged input k's tile into nvf_tile<k>.
  std::string stageTile(size_t k);
  // The outputs computed and stored at the element (row r, column tx).
  std::string outputsBody();

  Index others_;  // the outputs' untiled dims' indices (0 for size 1)
  Index phase2_;  // the outputs' index while computing them
};

}  // namespace codegen_detail
}  // namespace nvfuser
