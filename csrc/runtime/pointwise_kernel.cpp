#include "runtime/pointwise_kernel.h"

#include <algorithm>
#include <cstring>
#include <iostream>

#include "analysis/tensor_shape.h"
#include "compiler/nvrtc_compiler.h"
#include "compiler/occupancy_tuner.h"
#include "exceptions.h"
#include "runtime/device_index_errors.h"

namespace nvfuser {

namespace {
// Bytes of one by-value kernel parameter.
using ParamBytes = std::vector<char>;

template <typename T>
ParamBytes bytesOf(T v) {
  ParamBytes b(sizeof(T));
  std::memcpy(b.data(), &v, sizeof(T));
  return b;
}

ParamBytes scalarParam(const ScalarValue& v, DataType t) {
  switch (t) {
    case DataType::Double:
      return bytesOf(scalarToDouble(v));
    case DataType::Float:
      return bytesOf(static_cast<float>(scalarToDouble(v)));
    case DataType::Int:
      return bytesOf(scalarToInt(v));
    case DataType::Int32:
      return bytesOf(static_cast<int32_t>(scalarToInt(v)));
    case DataType::Bool:
      return bytesOf(scalarToInt(v) != 0);
    default:
      NVF_THROW(NotImplemented, "scalar kernel parameters of type ",
                toString(t), " are not supported");
  }
}

std::string layoutKey(const std::vector<TensorLayout>& layouts) {
  std::string key;
  for (const TensorLayout& l : layouts) {
    for (int64_t s : l.strides) {
      key += std::to_string(s) + ",";
    }
    key += l.aligned ? "a;" : "u;";
  }
  return key;
}
void dumpLaunch(const KernelSource& src, const LaunchParams& lp) {
  std::cout << "Launch " << src.name << ": grid " << lp.grid << ", block "
            << lp.block << ", slots " << src.slots
            << (src.rowReduction   ? " (a block per row)"
                : src.blockPerSlot ? " (a block per tile of chunks)"
                                   : "")
            << (src.workspaceBytes > 0
                    ? ", a self-clearing workspace of " +
                          std::to_string(src.workspaceBytes) + " bytes"
                    : std::string());
  for (const OutputFamily& fam : src.families) {
    std::cout << "; family of " << fam.outputs.size()
              << " output(s): " << fam.numel << " elements, " << fam.vectorWidth
              << " lane(s)";
  }
  std::cout << "\n" << std::flush;
}
}  // namespace

PointwiseKernel::PointwiseKernel(const Fusion& fusion, KernelPlan plan,
                                 std::string name, KernelCodegenOptions options,
                                 const std::vector<TensorLayout>& predicted)
    : fusion_(fusion),
      plan_(std::move(plan)),
      name_(std::move(name)),
      options_(options) {
  predicted_ = &variantFor(predicted);
  last_ = predicted_;
}

TensorLayout PointwiseKernel::layoutOf(const at::Tensor& t) {
  TensorLayout l;
  for (int64_t d = 0; d < t.dim(); ++d) {
    l.strides.push_back(t.size(d) == 1 ? 0 : t.stride(d));
  }
  l.aligned = reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0;
  return l;
}

PointwiseKernel::Variant& PointwiseKernel::variantFor(
    const std::vector<TensorLayout>& layouts) {
  std::string key = layoutKey(layouts);
  auto it = variants_.find(key);
  if (it != variants_.end()) {
    return *it->second;
  }
  auto v = std::make_unique<Variant>();
  v->source = generateKernel(
      fusion_, plan_,
      name_ +
          (variants_.empty() ? "" : "_v" + std::to_string(variants_.size())),
      layouts, options_);
  return *variants_.emplace(key, std::move(v)).first->second;
}

CompiledKernel PointwiseKernel::compile(const KernelSource& src,
                                        const std::string& arch,
                                        const Options& options) {
  const bool ptxasVerbose = options.dump("ptxas_verbose");
  const KernelCaches caches = KernelCaches::forOptions(options);
  // The plan's choice (row kernels: their blocks overlap one row's
  // reductions with other rows' loads): more resident blocks where a
  // register cap costs no spill.
  if (src.capRegisters) {
    return compileForOccupancy(src.code, src.name, arch,
                               static_cast<int>(src.block), ptxasVerbose,
                               caches);
  }
  return compileWithNvrtc(src.code, src.name, arch, ptxasVerbose, 0, caches);
}

PointwiseKernel::Variant::Variant() : owner(LoadedModules::newOwner()) {}

PointwiseKernel::Variant::~Variant() {
  if (loaded) {
    LoadedModules::get().release(owner,
                                 {nullptr, LoadedModules::driverUnload()});
  }
}

ModuleLoader PointwiseKernel::loaderFor(const Variant& v,
                                        const Options& options) const {
  ModuleLoader loader;
  loader.load = [this, &v, &options](int device, CUmodule* module) {
    const KernelSource& src = v.source;
    CudaDriver& driver = CudaDriver::get();
    std::string arch = driver.archOf(device);
    if (options.dump("cuda_kernel")) {
      std::cout << "// kernel " << src.name << " (" << arch
                << "), generated for this segment:\n/*\n"
                << fusion_.toString() << "*/\n"
                << src.code << std::flush;
    }
    CompiledKernel k = compile(src, arch, options);
    CUfunction f = driver.loadFunction(k.cubin, src.name, module);
    return std::make_pair(
        f, driver.residentBlocks(f, static_cast<int>(src.block)));
  };
  loader.unload = LoadedModules::driverUnload();
  return loader;
}

std::vector<at::Tensor> PointwiseKernel::run(
    const std::vector<RuntimeArg>& args, at::Device device, void* stream,
    const Options& options) {
  const std::vector<const Val*>& inputs = predicted_->source.inputs;
  NVF_ASSERT(args.size() == inputs.size());
  const int index = device.has_index() ? device.index() : 0;
  CudaDriver& driver = CudaDriver::get();
  driver.ensureContext(index);

  std::vector<ParamBytes> params;
  std::vector<at::Tensor> keepAlive;
  std::vector<TensorLayout> layouts;
  for (size_t i = 0; i < args.size(); ++i) {
    const Val* v = inputs[i];
    if (!v->isTensor()) {
      NVF_ASSERT(args[i].scalar.has_value(), "scalar argument missing");
      params.push_back(scalarParam(*args[i].scalar, v->dtype()));
      layouts.emplace_back();
      continue;
    }
    at::Tensor t = *args[i].tensor;
    if (passedByValue(v)) {  // a 0-dim CPU tensor: its bytes by value
      NVF_ASSERT(t.is_cpu() && t.dim() == 0, "kernel ", name_,
                 " takes a CPU scalar for ", v->toString());
      ParamBytes b(t.element_size());
      std::memcpy(b.data(), t.data_ptr(), b.size());
      params.push_back(std::move(b));
      layouts.emplace_back();
      continue;
    }
    if (t.device() != device) {
      t = t.to(device);
    }
    NVF_ASSERT(t.sizes().vec() == concreteShape(v->asTensor()), "kernel ",
               name_, " got sizes ", t.sizes(), " for ", v->toString());
    keepAlive.push_back(t);
    layouts.push_back(layoutOf(t));
    params.push_back(bytesOf(t.data_ptr()));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  // Steady state: the same layout as last call, no key to build.
  if (layouts != lastLayouts_) {
    last_ = &variantFor(layouts);
    lastLayouts_ = layouts;
  }
  Variant& variant = *last_;
  const KernelSource& src = variant.source;
  std::vector<at::Tensor> outputs;
  for (const TensorView* o : src.outputs) {
    auto opts =
        at::TensorOptions().dtype(toAtenType(o->dtype())).device(device);
    outputs.push_back(at::empty(concreteShape(o), opts));
    params.push_back(bytesOf(outputs.back().data_ptr()));
  }
  if (src.reportsIndexErrors) {
    params.push_back(bytesOf(device_index_errors::word()));
  }
  if (src.workspaceBytes > 0) {
    at::Tensor& ws = variant.workspaces[{index, stream}];
    if (!ws.defined()) {  // zeroed once; every launch leaves it zeroed
      ws = at::zeros({src.workspaceBytes},
                     at::TensorOptions().dtype(at::kByte).device(device));
    }
    params.push_back(bytesOf(ws.data_ptr()));
  }
  if (src.slots > 0) {
    launch(variant, index, stream, params, options);
  }
  return outputs;
}

void PointwiseKernel::launch(Variant& variant, int device, void* stream,
                             std::vector<ParamBytes>& params,
                             const Options& options) {
  const KernelSource& src = variant.source;
  variant.loaded = true;
  CudaDriver& driver = CudaDriver::get();
  const int sms = driver.multiprocessorCount(device);
  LoadedModules::get().use(
      variant.owner, device, loaderFor(variant, options),
      [&](const LoadedModules::Function& f) {
        LaunchParams lp = computeLaunchParams(src, sms, f.residentBlocks);
        if (options.dump("launch_param")) {
          dumpLaunch(src, lp);
        }
        std::vector<void*> argPtrs;
        for (ParamBytes& p : params) {
          argPtrs.push_back(p.data());
        }
        driver.launch(f.function, static_cast<unsigned>(lp.grid),
                      static_cast<unsigned>(lp.block),
                      reinterpret_cast<CUstream>(stream), argPtrs);
      });
}

}  // namespace nvfuser
