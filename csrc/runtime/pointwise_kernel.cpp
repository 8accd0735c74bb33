#include "runtime/pointwise_kernel.h"

#include <algorithm>
#include <cstring>
#include <iostream>

#include "analysis/tensor_shape.h"
#include "compiler/nvrtc_compiler.h"
#include "exceptions.h"

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

// {data pointer, strides[max(rank, 1)]}, as TensorArg<T, R> lays it out.
ParamBytes tensorParam(const at::Tensor& t) {
  std::vector<int64_t> words;
  words.push_back(reinterpret_cast<int64_t>(t.data_ptr()));
  for (int64_t s : t.strides()) {
    words.push_back(s);
  }
  if (t.dim() == 0) {
    words.push_back(0);
  }
  ParamBytes b(words.size() * sizeof(int64_t));
  std::memcpy(b.data(), words.data(), b.size());
  return b;
}
}  // namespace

CUfunction PointwiseKernel::functionFor(int device, const Options& options) {
  auto it = functions_.find(device);
  if (it != functions_.end()) {
    return it->second;
  }
  CudaDriver& driver = CudaDriver::get();
  std::string arch = driver.archOf(device);
  if (options.dump("cuda_kernel")) {
    std::cout << "// kernel " << source_.name << " (" << arch << ")\n"
              << source_.code << std::flush;
  }
  CompiledKernel k = compileWithNvrtc(source_.code, source_.name, arch);
  CUfunction f = driver.loadFunction(k.cubin, source_.name);
  functions_[device] = f;
  return f;
}

std::vector<at::Tensor> PointwiseKernel::run(
    const std::vector<RuntimeArg>& args, at::Device device, void* stream,
    const Options& options) {
  NVF_ASSERT(args.size() == source_.inputs.size());
  const int index = device.has_index() ? device.index() : 0;
  CudaDriver& driver = CudaDriver::get();
  driver.ensureContext(index);
  CUfunction f = functionFor(index, options);

  std::vector<ParamBytes> params;
  std::vector<at::Tensor> keepAlive;
  for (size_t i = 0; i < args.size(); ++i) {
    const Val* v = source_.inputs[i];
    if (!v->isTensor()) {
      NVF_ASSERT(args[i].scalar.has_value(), "scalar argument missing");
      params.push_back(scalarParam(*args[i].scalar, v->dtype()));
      continue;
    }
    at::Tensor t = *args[i].tensor;
    if (t.device() != device) {
      t = t.to(device);  // a CPU scalar tensor
    }
    NVF_ASSERT(t.sizes().vec() == concreteShape(v->asTensor()), "kernel ",
               source_.name, " got sizes ", t.sizes(), " for ", v->toString());
    keepAlive.push_back(t);
    params.push_back(tensorParam(t));
  }
  std::vector<at::Tensor> outputs;
  for (const TensorView* o : source_.outputs) {
    outputs.push_back(at::empty(
        concreteShape(o),
        at::TensorOptions().dtype(toAtenType(o->dtype())).device(device)));
    params.push_back(bytesOf(outputs.back().data_ptr()));
  }
  if (source_.numel == 0) {
    return outputs;
  }
  const int64_t block = 256;
  const int64_t maxGrid = int64_t(driver.multiprocessorCount(index)) * 16;
  const int64_t grid = std::min((source_.numel + block - 1) / block,
                                std::max<int64_t>(maxGrid, 1));
  if (options.dump("launch_param")) {
    std::cout << "Launch " << source_.name << ": grid " << grid << ", block "
              << block << ", elements " << source_.numel << "\n"
              << std::flush;
  }
  std::vector<void*> argPtrs;
  for (ParamBytes& p : params) {
    argPtrs.push_back(p.data());
  }
  driver.launch(f, static_cast<unsigned>(grid), static_cast<unsigned>(block),
                reinterpret_cast<CUstream>(stream), argPtrs);
  return outputs;
}

}  // namespace nvfuser
