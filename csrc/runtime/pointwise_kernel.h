// A pointwise segment's generated kernels: one variant per layout of its
// tensor inputs (strides and 16-byte alignment), each generated and compiled
// with NVRTC on first use and launched through the driver on the caller's
// stream.
#pragma once

#include <ATen/ATen.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "codegen/kernel_codegen.h"
#include "compiler/nvrtc_compiler.h"
#include "options.h"
#include "runtime/cuda_driver.h"
#include "runtime/loaded_modules.h"
#include "runtime/runtime_args.h"

namespace nvfuser {

class PointwiseKernel {
 public:
  // Generates the variant for `predicted` layouts now, so that a fusion the
  // generator cannot handle is known before the first launch.
  // `plan`: the accepting scheduler's (planKernel), built for every layout.
  PointwiseKernel(const Fusion& fusion, KernelPlan plan, std::string name,
                  KernelCodegenOptions options,
                  const std::vector<TensorLayout>& predicted);

  // Thread-safe: runs on several threads at once share the variants.
  // The variant used by the last run, else the predicted one.
  KernelSource source() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return last_->source;
  }
  const KernelSource& predictedSource() const { return predicted_->source; }
  const KernelPlan& plan() const { return plan_; }
  // What it generates its variants with (the runtime's options).
  const KernelCodegenOptions& codegenOptions() const { return options_; }

  std::vector<at::Tensor> run(const std::vector<RuntimeArg>& args,
                              at::Device device, void* stream,
                              const Options& options);

  // The layout of a tensor argument as the generator sees it.
  static TensorLayout layoutOf(const at::Tensor& t);

  // Compiles a generated kernel for `arch` as every launch of it is
  // (ptxas_verbose dump; kernel caches unless kernel_cache is disabled).
  static CompiledKernel compile(const KernelSource& src,
                                const std::string& arch,
                                const Options& options);

 private:
  struct Variant {
    Variant();
    ~Variant();  // unloads its modules
    Variant(const Variant&) = delete;
    Variant& operator=(const Variant&) = delete;
    KernelSource source;
    // Its modules, one per device, in the process-wide LoadedModules.
    const uint64_t owner;
    bool loaded = false;
    // Per (device, stream): launches on one stream run in order, so they
    // can share a workspace that each leaves zeroed.
    std::map<std::pair<int, void*>, at::Tensor> workspaces;
  };
  Variant& variantFor(const std::vector<TensorLayout>& layouts);
  // Compiles the variant for the device and loads it (on a module miss).
  ModuleLoader loaderFor(const Variant& v, const Options& options) const;
  void launch(Variant& variant, int device, void* stream,
              std::vector<std::vector<char>>& params, const Options& options);
  const Fusion& fusion_;
  const KernelPlan plan_;
  std::string name_;
  KernelCodegenOptions options_;
  std::map<std::string, std::unique_ptr<Variant>> variants_;
  Variant* predicted_ = nullptr;
  Variant* last_ = nullptr;
  std::vector<TensorLayout> lastLayouts_;  // of last_, once run
  // Guards the variants, last_ and the workspaces.
  mutable std::mutex mutex_;
};

}  // namespace nvfuser
