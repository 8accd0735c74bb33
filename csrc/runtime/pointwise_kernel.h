// A generated pointwise kernel: compiled with NVRTC for the device on first
// use, launched through the driver on the caller's stream.
#pragma once

#include <ATen/ATen.h>

#include <map>
#include <vector>

#include "codegen/pointwise_codegen.h"
#include "options.h"
#include "runtime/cuda_driver.h"
#include "runtime/runtime_args.h"

namespace nvfuser {

class PointwiseKernel {
 public:
  explicit PointwiseKernel(KernelSource source) : source_(std::move(source)) {}
  const KernelSource& source() const { return source_; }

  std::vector<at::Tensor> run(const std::vector<RuntimeArg>& args,
                              at::Device device, void* stream,
                              const Options& options);

 private:
  CUfunction functionFor(int device, const Options& options);

  KernelSource source_;
  std::map<int, CUfunction> functions_;
};

}  // namespace nvfuser
