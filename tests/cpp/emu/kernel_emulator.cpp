#include "kernel_emulator.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "analysis/tensor_shape.h"
#include "codegen/op_emitter.h"
#include "exceptions.h"
#include "runtime/aten_evaluator.h"
#include "runtime/pointwise_kernel.h"

#ifndef NVF_EMU_HEADER
#error "NVF_EMU_HEADER must name cuda_emulation.h"
#endif

namespace nvfuser {

namespace {
using Entry = void (*)(void**, unsigned, unsigned);

std::string wrapper(const KernelSource& ks) {
  std::string params;
  size_t k = 0;
  for (const Val* in : ks.inputs) {
    const std::string t = cudaType(in->dtype());
    params += (params.empty() ? "" : ", ") +
              (!passedByValue(in)
                   ? "(const " + t + "*)a[" + std::to_string(k) + "]"
                   : "*(const " + t + "*)a[" + std::to_string(k) + "]");
    ++k;
  }
  for (const TensorView* o : ks.outputs) {
    params += (params.empty() ? "" : ", ") + std::string("(") +
              cudaType(o->dtype()) + "*)a[" + std::to_string(k++) + "]";
  }
  if (ks.reportsIndexErrors) {
    params += ", (int*)a[" + std::to_string(k++) + "]";
  }
  if (ks.workspaceBytes > 0) {
    params += ", (unsigned char*)a[" + std::to_string(k++) + "]";
  }
  return "\nextern \"C\" void nvf_emu_entry(void** a, unsigned grid, "
         "unsigned block) {\n  nvf_emu::launch(grid, block, [&] { " +
         ks.name + "(" + params + "); });\n}\n";
}

// Compiles `source` with the host compiler into a shared object (once per
// source) and returns its function `symbol`.
void* loadSymbol(const std::string& source, const char* symbol) {
  static std::mutex mutex;
  static std::map<size_t, void*> handles;
  std::lock_guard<std::mutex> lock(mutex);
  const size_t key = std::hash<std::string>()(source);
  // Per process: ctest -j runs test binaries side by side, and two that
  // compiled the same kernel into one file raced (one dlopened the shared
  // object while the other was still writing it).
  const std::string base =
      "/tmp/nvf_emu_" + std::to_string(key) + "_" + std::to_string(::getpid());
  void*& handle = handles[key];
  if (handle == nullptr) {
    std::ofstream(base + ".cpp") << source;
    const std::string cmd =
        "c++ -std=c++17 -O1 -w -ffp-contract=off -shared -fPIC -pthread " +
        base + ".cpp -o " + base + ".so 2> " + base + ".log";
    NVF_CHECK_KIND(std::system(cmd.c_str()) == 0, Runtime,
                   "emulated kernel did not compile, see ", base, ".log");
    handle = dlopen((base + ".so").c_str(), RTLD_NOW | RTLD_LOCAL);
    NVF_CHECK_KIND(handle != nullptr, Runtime, "dlopen: ", dlerror());
    // Loaded: the files are not needed again (a failed compile keeps its
    // source and log for the message above). Left behind, every test run
    // added thousands of files to /tmp.
    for (const char* ext : {".cpp", ".so", ".log"}) {
      std::remove((base + ext).c_str());
    }
  }
  void* entry = dlsym(handle, symbol);
  NVF_CHECK_KIND(entry != nullptr, Runtime, "no ", symbol, " in ", base);
  return entry;
}

const char* const kEmulationPrelude =
    "#define NVF_EMULATION 1\n#include \"" NVF_EMU_HEADER "\"\n";

Entry load(const std::string& source) {
  return reinterpret_cast<Entry>(
      loadSymbol(kEmulationPrelude + source, "nvf_emu_entry"));
}

std::vector<char> scalarBytes(const ScalarValue& v, DataType t) {
  std::vector<char> b(8, 0);
  auto put = [&](auto x) { std::memcpy(b.data(), &x, sizeof(x)); };
  switch (t) {
    case DataType::Double:
      put(scalarToDouble(v));
      break;
    case DataType::Float:
      put(static_cast<float>(scalarToDouble(v)));
      break;
    case DataType::Int:
      put(static_cast<int64_t>(scalarToInt(v)));
      break;
    case DataType::Int32:
      put(static_cast<int32_t>(scalarToInt(v)));
      break;
    case DataType::Bool:
      put(scalarToInt(v) != 0);
      break;
    default:
      NVF_THROW(NotImplemented, "emulated scalar of type ", toString(t));
  }
  return b;
}
}  // namespace

void* compileEmulated(const std::string& source, const char* symbol) {
  return loadSymbol(kEmulationPrelude + source, symbol);
}

std::vector<at::Tensor> KernelEmulator::run(const KernelSource& kernel,
                                            const std::vector<RuntimeArg>& args,
                                            int* indexError) {
  Entry entry = load(kernel.code + wrapper(kernel));
  std::vector<std::vector<char>> scalars;
  scalars.reserve(args.size());  // pointers into it must stay valid
  std::vector<void*> ptrs;
  std::vector<at::Tensor> keep;
  for (size_t i = 0; i < args.size(); ++i) {
    const Val* v = kernel.inputs.at(i);
    if (v->isTensor()) {
      keep.push_back(args[i].tensor->cpu());
      ptrs.push_back(keep.back().data_ptr());
    } else {
      scalars.push_back(scalarBytes(*args[i].scalar, v->dtype()));
      ptrs.push_back(scalars.back().data());
    }
  }
  std::vector<at::Tensor> outputs;
  for (const TensorView* o : kernel.outputs) {
    auto opts = at::TensorOptions().dtype(toAtenType(o->dtype()));
    outputs.push_back(at::empty(concreteShape(o), opts));
    ptrs.push_back(outputs.back().data_ptr());
  }
  int errorWord = 0;
  if (kernel.reportsIndexErrors) {
    ptrs.push_back(&errorWord);
  }
  at::Tensor workspace = at::zeros({kernel.workspaceBytes}, at::kByte);
  if (kernel.workspaceBytes > 0) {
    ptrs.push_back(workspace.data_ptr());
  }
  if (kernel.slots > 0) {
    // Two "SMs" of two blocks, at most four blocks in all: grid-stride
    // loops run several iterations.
    LaunchParams lp = computeLaunchParams(kernel, 2, 2);
    lp.grid = std::min<int64_t>(lp.grid, 4);
    entry(ptrs.data(), static_cast<unsigned>(lp.grid),
          static_cast<unsigned>(lp.block));
  }
  if (indexError != nullptr) {
    *indexError = errorWord;
  }
  // The runtime reuses a workspace without clearing it.
  NVF_CHECK_KIND(kernel.workspaceBytes == 0 ||
                     workspace.count_nonzero().item<int64_t>() == 0,
                 Runtime, "kernel ", kernel.name, " left its workspace dirty");
  return outputs;
}

std::vector<at::Tensor> runEmulated(
    const SegmentedRuntime& runtime, const std::vector<RuntimeArg>& args,
    std::optional<KernelCodegenOptions> options) {
  const Fusion& complete = runtime.segmented().completeFusion();
  std::map<const Val*, RuntimeArg> values;
  for (size_t i = 0; i < args.size(); ++i) {
    values.emplace(complete.inputs()[i], args[i]);
  }
  const auto& segments = runtime.segments();
  for (size_t g = 0; g < segments.size(); ++g) {
    const ExtractedSegment& seg = segments[g];
    std::vector<RuntimeArg> segArgs;
    std::vector<TensorLayout> layouts;
    for (const Val* v : seg.inputs) {
      segArgs.push_back(values.at(v));
      layouts.push_back(segArgs.back().tensor
                            ? PointwiseKernel::layoutOf(*segArgs.back().tensor)
                            : TensorLayout{});
    }
    std::vector<at::Tensor> outs;
    if (runtime.kernels()[g]) {
      // The runtime's plan (the accepting scheduler's, under the
      // runtime's options).
      const PointwiseKernel& kernel = *runtime.kernels()[g];
      KernelSource ks = generateKernel(
          *seg.fusion, kernel.plan(), "emu_g" + std::to_string(g), layouts,
          options.value_or(kernel.codegenOptions()));
      outs = KernelEmulator::run(ks, segArgs);
    } else {
      outs = AtenEvaluator::run(*seg.fusion, segArgs, at::kCPU);
    }
    for (size_t k = 0; k < outs.size(); ++k) {
      values[seg.outputs[k]] = RuntimeArg::fromTensor(outs[k]);
    }
  }
  std::vector<at::Tensor> result;
  for (const Val* o : complete.outputs()) {
    result.push_back(*values.at(o).tensor);
  }
  return result;
}

}  // namespace nvfuser
