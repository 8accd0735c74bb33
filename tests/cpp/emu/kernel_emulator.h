// Runs generated kernels on the CPU for tests on machines without a GPU:
// the kernel source plus cuda_emulation.h is compiled with the host
// compiler into a shared object (cached by source), loaded and launched
// with a small grid so grid-stride loops, block reductions, split sums and
// several output families are all exercised.
#pragma once

#include <ATen/ATen.h>

#include <optional>
#include <string>
#include <vector>

#include "codegen/kernel_codegen.h"
#include "runtime/runtime_args.h"
#include "runtime/segmented_runtime.h"

namespace nvfuser {

class KernelEmulator {
 public:
  // `kernel` must have been generated for the layouts of `args` (CPU
  // tensors and scalars, one per kernel input). `indexError` receives the
  // kernel's index error word (0: every gathered index was in range).
  static std::vector<at::Tensor> run(const KernelSource& kernel,
                                     const std::vector<RuntimeArg>& args,
                                     int* indexError = nullptr);
};

// Compiles `source` (device code, such as the device helpers, and extern
// "C" functions calling it) for the CPU with cuda_emulation.h and returns
// the function `symbol`.
void* compileEmulated(const std::string& source, const char* symbol);

// A segmented runtime's groups in order on the CPU: generated kernels
// through the emulator (regenerated for the actual layouts, with `options`,
// by default each kernel's own: the runtime's), every other group through
// ATen.
std::vector<at::Tensor> runEmulated(
    const SegmentedRuntime& runtime, const std::vector<RuntimeArg>& args,
    std::optional<KernelCodegenOptions> options = std::nullopt);

}  // namespace nvfuser
