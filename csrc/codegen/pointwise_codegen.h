// Generates one CUDA kernel for a pointwise segment (its extracted Fusion):
// a grid-stride loop over the reference output's elements; every value is
// an expression of the loop indices, built by walking back from the outputs
// through each op's dimension map (broadcast, expand, permute, squeeze,
// reshape, slice, pad, cat). Values needed at the same index are computed
// once; at different indices (rotate-half), once per index.
#pragma once

#include <string>
#include <vector>

#include "ir/fusion.h"
#include "scheduler/decision.h"

namespace nvfuser {

struct KernelSource {
  std::string name;
  std::string code;         // complete translation unit for NVRTC
  int64_t numel = 0;        // elements of the loop domain
  int64_t vectorWidth = 1;  // consecutive elements per thread
  // Kernel parameters, in order: one per fusion input (tensors as
  // {data, strides[max(rank,1)]}, scalars by value), then one pointer per
  // fusion output (dense, row-major).
  std::vector<const Val*> inputs;
  std::vector<const TensorView*> outputs;
};

struct PointwiseCodegenOptions {
  // 32-bit index math when every extent fits (NVFUSER_ENABLE=int32_index).
  // Off by default: on an H200 the 32-bit grid-stride loop ran a bf16
  // elementwise kernel at 46% of copy bandwidth, the 64-bit one at 74%.
  bool allowInt32Index = false;
};

Decision canGeneratePointwise(const Fusion& fusion);
KernelSource generatePointwiseKernel(const Fusion& fusion,
                                     const std::string& name,
                                     PointwiseCodegenOptions options = {});

}  // namespace nvfuser
