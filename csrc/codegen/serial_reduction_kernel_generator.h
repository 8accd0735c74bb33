// The serial-reduction strategy: the pointwise slots, with reductions of
// non-innermost dims looped inside each thread (serial_reduction_loops.cpp);
// a lone floating-point sum with too few output vectors to fill the GPU is
// split over threads and blocks (the plan's SplitSumPlan): tiles of vectors
// x threads per vector, combined in shared memory and, across tiles,
// through a workspace. Not a public header.
#pragma once

#include <functional>
#include <string>

#include "codegen/pointwise_kernel_generator.h"

namespace nvfuser {
namespace codegen_detail {

class SerialReductionKernelGenerator : public PointwiseKernelGenerator {
 public:
  using PointwiseKernelGenerator::PointwiseKernelGenerator;

  KernelSource generate(const std::string& name) override;

 protected:
  // A split sum writes its chunk's partial sums (nvf_p), not the output.
  void writeOutput(size_t o, int64_t v,
                   const std::function<Index(const Val*)>& indexOf) override;
  bool loadsAcrossOutputsFirst() const override {
    return split_ <= 1 && PointwiseKernelGenerator::loadsAcrossOutputsFirst();
  }
  // The split dim's loop takes this thread's rows, one in every rowStride.
  LoopRange reductionLoopRange(int64_t dim,
                               const std::string& r) const override;

 protected:
  // The plan's split (its factor at the family's width) into split_ and
  // the members after it.
  void takePlan(const KernelSource& ks) override;

 private:
  // Fills streamed_: inputs with as many distinct elements as the fusion's
  // largest tensor (its iteration space).
  void findStreamedInputs();
  // The kernel of a split sum around `body` (the partial sums `nvf_p` at
  // element `i` of the rows nvf_rb, nvf_rb + the plan's rowStride, ...): a
  // block takes a tile of vectors x the plan's chunks per block and
  // combines their sums in shared memory; where a column has several
  // tiles, each adds one value per element to the workspace and the last
  // writes the column out.
  KernelSource generateSplit(KernelSource ks, const std::string& params,
                             const std::string& body);

  int64_t split_ = 1;              // chunks of the split reduced dim
  int64_t splitAxis_ = -1;         // that dim, of the sum's input
  const Val* splitSum_ = nullptr;  // the sum (the output, or cast to it)
};

}  // namespace codegen_detail
}  // namespace nvfuser
