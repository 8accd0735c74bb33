#include "runtime/runtime_args.h"

#include <torch/version.h>

#include <sstream>
#include <string>

#include "exceptions.h"
#include "ops/arith.h"

// torch has float8_e4m3fn and float8_e5m2 tensors from 2.1 on.
#if TORCH_VERSION_MAJOR > 2 || \
    (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
#define NVF_TORCH_HAS_FLOAT8 1
#endif
// ... and float8_e8m0fnu (the MX scale type) from 2.7 on.
#if TORCH_VERSION_MAJOR > 2 || \
    (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 7)
#define NVF_TORCH_HAS_FLOAT8_E8M0 1
#endif

namespace nvfuser {

DataType fromAtenType(at::ScalarType t) {
  switch (t) {
    case at::kDouble:
      return DataType::Double;
    case at::kFloat:
      return DataType::Float;
    case at::kHalf:
      return DataType::Half;
    case at::kBFloat16:
      return DataType::BFloat16;
    case at::kLong:
      return DataType::Int;
    case at::kInt:
      return DataType::Int32;
    case at::kBool:
      return DataType::Bool;
    case at::kComplexFloat:
      return DataType::ComplexFloat;
    case at::kComplexDouble:
      return DataType::ComplexDouble;
#ifdef NVF_TORCH_HAS_FLOAT8
    case at::kFloat8_e4m3fn:
      return DataType::Float8_e4m3fn;
    case at::kFloat8_e5m2:
      return DataType::Float8_e5m2;
#endif
#ifdef NVF_TORCH_HAS_FLOAT8_E8M0
    case at::kFloat8_e8m0fnu:
      return DataType::Float8_e8m0fnu;
#endif
    default:
      NVF_THROW(Type, "tensors of dtype ", c10::toString(t),
                " are not supported");
  }
}

at::ScalarType toAtenType(DataType t) {
  switch (t) {
    case DataType::Double:
      return at::kDouble;
    case DataType::Float:
      return at::kFloat;
    case DataType::Half:
      return at::kHalf;
    case DataType::BFloat16:
      return at::kBFloat16;
    case DataType::Int:
      return at::kLong;
    case DataType::Int32:
      return at::kInt;
    case DataType::Bool:
      return at::kBool;
    case DataType::ComplexFloat:
      return at::kComplexFloat;
    case DataType::ComplexDouble:
      return at::kComplexDouble;
    case DataType::Float8_e4m3fn:
    case DataType::Float8_e5m2:
#ifdef NVF_TORCH_HAS_FLOAT8
      return t == DataType::Float8_e4m3fn ? at::kFloat8_e4m3fn
                                          : at::kFloat8_e5m2;
#else
      NVF_THROW(Type, "DataType.", toString(t),
                " tensors need torch >= 2.1; this is torch " TORCH_VERSION);
#endif
    case DataType::Float8_e8m0fnu:
#ifdef NVF_TORCH_HAS_FLOAT8_E8M0
      return at::kFloat8_e8m0fnu;
#else
      NVF_THROW(Type, "DataType.", toString(t),
                " tensors need torch >= 2.7; this is torch " TORCH_VERSION);
#endif
    case DataType::Null:
      break;
  }
  NVF_THROW(Type, "DataType.Null has no tensor type");
}

namespace {
std::string argName(const Fusion& f, size_t i) {
  return "input " + std::to_string(i) + " (" + f.inputs()[i]->ref() + ")";
}

// The kind of tensor `t` is, as torch names it, when the runtime cannot read
// it as dense strided memory; "" when it can.
std::string unsupportedKind(const at::Tensor& t) {
  switch (t.layout()) {
    case at::kStrided:
      break;
    case at::kSparse:
      return "a sparse (torch.sparse_coo)";
    case at::kSparseCsr:
      return "a sparse (torch.sparse_csr)";
    case at::kSparseCsc:
      return "a sparse (torch.sparse_csc)";
    case at::kSparseBsr:
      return "a sparse (torch.sparse_bsr)";
    case at::kSparseBsc:
      return "a sparse (torch.sparse_bsc)";
    case at::kMkldnn:
      return "an MKL-DNN (torch._mkldnn)";
    default: {
      std::ostringstream os;
      os << "a non-strided (layout " << t.layout() << ")";
      return os.str();
    }
  }
  if (t.is_nested()) {
    return "a nested";
  }
  if (t.is_quantized()) {
    return std::string("a quantized (") + c10::toString(t.scalar_type()) + ")";
  }
  if (t.is_meta()) {
    return "a meta (no data)";
  }
  if (t.has_names()) {
    return "a named (drop the names with .rename(None))";
  }
  return "";
}
}  // namespace

void checkArgs(const Fusion& f, const std::vector<RuntimeArg>& args) {
  const size_t declared = f.inputs().size();
  for (size_t i = 0; i < args.size(); ++i) {
    const RuntimeArg& a = args[i];
    if (a.tensor && a.tensor->defined()) {
      std::string kind = unsupportedKind(*a.tensor);
      NVF_CHECK_KIND(kind.empty(), Type, "execute: input ", i, " is ", kind,
                     " tensor; only dense strided tensors are supported");
    }
    // A scalar given for a tensor input is reported by validateInputs.
    if (a.scalar && i < declared && !f.inputs()[i]->isTensor()) {
      checkScalarValue(f.inputs()[i]->dtype(), *a.scalar,
                       "execute: " + argName(f, i));
    }
  }
}

at::Device commonDevice(const Fusion& f, const std::vector<RuntimeArg>& args) {
  std::optional<at::Device> device;
  size_t first = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].tensor || !args[i].tensor->defined()) {
      continue;
    }
    const at::Tensor& t = *args[i].tensor;
    bool cpuScalar = t.dim() == 0 && t.is_cpu();
    if (cpuScalar && i < f.inputs().size() && f.inputs()[i]->isTensor() &&
        f.inputs()[i]->asTensor()->isCpuScalar()) {
      continue;
    }
    if (!device) {
      device = t.device();
      first = i;
      continue;
    }
    NVF_CHECK(t.device() == *device, argName(f, i), " is on ", t.device().str(),
              " but ", argName(f, first), " is on ", device->str(),
              "; all tensor inputs must be on one device");
  }
  return device.value_or(at::Device(at::kCPU));
}

std::vector<InputDescriptor> describeArgs(const Fusion& f,
                                          const std::vector<RuntimeArg>& args) {
  std::vector<InputDescriptor> out;
  for (size_t i = 0; i < args.size(); ++i) {
    const RuntimeArg& a = args[i];
    InputDescriptor d;
    d.typeName = a.typeName;
    if (!a.tensor) {
      d.isTensor = false;
      out.push_back(d);
      continue;
    }
    const at::Tensor& t = *a.tensor;
    NVF_CHECK(t.defined(), argName(f, i), " is an undefined tensor");
    d.dtype = fromAtenType(t.scalar_type());
    d.sizes = t.sizes().vec();
    d.strides = t.strides().vec();
    d.isCpuScalarTensor = t.dim() == 0 && t.is_cpu();
    out.push_back(d);
  }
  return out;
}

std::string signatureKey(const std::vector<RuntimeArg>& args) {
  // Built on every execute: plain appends, no stream or device string.
  std::string key;
  key.reserve(32 * args.size());
  for (const RuntimeArg& a : args) {
    if (!a.tensor) {
      key += 's';
      key +=
          std::to_string(a.scalar ? static_cast<int>(a.scalar->index()) : -1);
      key += ';';
      continue;
    }
    const at::Tensor& t = *a.tensor;
    if (!t.defined()) {
      key += "undef;";
      continue;
    }
    key += 't';
    key += std::to_string(static_cast<int>(t.scalar_type()));
    key += '@';
    key += std::to_string(static_cast<int>(t.device().type()));
    key += '.';
    key += std::to_string(static_cast<int>(t.device().index()));
    key += '[';
    for (int64_t d = 0; d < t.dim(); ++d) {
      key += std::to_string(t.size(d));
      key += ':';
      key += std::to_string(t.stride(d));
      key += ',';
    }
    key += "];";
  }
  return key;
}

}  // namespace nvfuser
