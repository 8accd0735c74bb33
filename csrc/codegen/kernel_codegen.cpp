#include "codegen/kernel_codegen.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <numeric>

#include "analysis/tensor_shape.h"
#include "codegen/lane_proof.h"
#include "codegen/op_emitter.h"
#include "codegen/pointwise_kernel_generator.h"
#include "codegen/rng_device_helpers.h"
#include "codegen/row_kernel_generator.h"
#include "codegen/serial_reduction_kernel_generator.h"
#include "codegen/transpose_kernel_generator.h"
#include "exceptions.h"

namespace nvfuser {

namespace codegen_detail {
std::unique_ptr<KernelValueBuilder> makeKernelGenerator(
    const Fusion& fusion, const KernelPlan& plan,
    const std::vector<TensorLayout>& layouts, KernelCodegenOptions options) {
  std::unique_ptr<KernelValueBuilder> generator;
  switch (plan.strategy) {
    case KernelStrategy::Pointwise:
      generator = std::make_unique<PointwiseKernelGenerator>(fusion, plan,
                                                             layouts, options);
      break;
    case KernelStrategy::SerialReduction:
      generator = std::make_unique<SerialReductionKernelGenerator>(
          fusion, plan, layouts, options);
      break;
    case KernelStrategy::Rows:
      generator =
          std::make_unique<RowKernelGenerator>(fusion, plan, layouts, options);
      break;
    case KernelStrategy::Transpose:
      generator = std::make_unique<TransposeKernelGenerator>(fusion, plan,
                                                             layouts, options);
      break;
  }
  NVF_ASSERT(generator != nullptr, "no generator for ",
             toString(plan.strategy));
  return generator;
}

}  // namespace codegen_detail

KernelSource generateKernel(const Fusion& fusion, const KernelPlan& plan,
                            const std::string& name,
                            const std::vector<TensorLayout>& layouts,
                            KernelCodegenOptions options) {
  return codegen_detail::makeKernelGenerator(fusion, plan, layouts, options)
      ->generate(name);
}

KernelSource generateKernel(const Fusion& fusion, const std::string& name,
                            const std::vector<TensorLayout>& layouts,
                            KernelCodegenOptions options,
                            const KernelPlanOptions& planOptions) {
  KernelPlan plan;
  const SchedulerType type = kernelSchedulerFor(fusion);
  KernelPlanOptions withStrides = planOptions;
  if (withStrides.inputStrides.empty()) {
    for (const TensorLayout& l : layouts) {
      withStrides.inputStrides.push_back(l.strides);
    }
  }
  if (withStrides.laneProof == nullptr) {
    withStrides.laneProof = generatorLaneProof(options);
  }
  Decision d = planKernel(type, fusion, &plan, withStrides);
  NVF_CHECK_KIND(d.ok(), Internal, "no ", toString(type),
                 " kernel plan for this fusion: ", d.reason());
  return generateKernel(fusion, plan, name, layouts, options);
}

LaunchParams computeLaunchParams(const KernelSource& kernel, int smCount,
                                 int blocksPerSm) {
  LaunchParams p;
  p.block = kernel.block;
  const int64_t wave =
      std::max<int64_t>(int64_t(smCount) * std::max(blocksPerSm, 1), 1);
  const int64_t perBlock = kernel.blockPerSlot ? 1 : p.block;
  const int64_t blocks = (kernel.slots + perBlock - 1) / perBlock;
  p.grid = kernel.fullGrid
               ? std::min<int64_t>(blocks, std::numeric_limits<int>::max())
               : std::min(blocks, wave);
  if (kernel.rowReduction && !kernel.columnSums) {
    // A block per row instead: while one block reduces its row, the one
    // that replaced a finished block is already loading (an H200 ran
    // softmax at 76.5% of copy bandwidth so, at 72.3% with one wave).
    p.grid = std::min<int64_t>(kernel.slots, std::numeric_limits<int>::max());
  } else if (kernel.columnSums) {
    // Every block adds a partial per column atomically at its end: a few
    // blocks per SM (one wave) taking many rows each.
    p.grid = std::min<int64_t>(
        kernel.slots, int64_t(smCount) * std::min(std::max(blocksPerSm, 1),
                                                  kColumnSumBlocksPerSm));
  }
  return p;
}

}  // namespace nvfuser
