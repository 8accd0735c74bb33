#include "runtime/aten_rng.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>

#include <cmath>
#include <cstring>
#include <mutex>

#include "analysis/tensor_shape.h"
#include "exceptions.h"
#include "runtime/philox.h"

namespace nvfuser {

namespace {
void checkParams(const RngOp& e, double a, double b) {
  const bool uniform = e.op() == RngOpType::Uniform;
  const std::string op = e.opName();
  NVF_CHECK(std::isfinite(a) && std::isfinite(b), op, ": ",
            uniform ? "minval and maxval" : "mean and std",
            " must be finite, got ", a, " and ", b);
  if (uniform) {
    NVF_CHECK(a <= b, op, ": minval ", a, " must be <= maxval ", b);
    NVF_CHECK(std::isfinite(b - a), op, ": maxval - minval (", b, " - ", a,
              ") overflows a Double");
  } else {
    NVF_CHECK(b >= 0, op, ": std must be >= 0, got ", b);
  }
}

template <typename T, typename Fn>
void fill(at::Tensor& out, const Fn& valueAt) {
  T* data = out.data_ptr<T>();
  at::parallel_for(0, out.numel(), 4096, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      data[i] = static_cast<T>(valueAt(static_cast<uint64_t>(i)));
    }
  });
}
}  // namespace

at::Tensor evalRng(const RngOp& e, const std::vector<at::Tensor>& in,
                   at::Device device) {
  NVF_ASSERT(!e.isLike() && e.hasSeed(), "evaluator: ", e.opName(),
             " was not concretized");
  const double a = in.at(0).item<double>();
  const double b = in.at(1).item<double>();
  checkParams(e, a, b);
  const auto seed = static_cast<uint64_t>(in.at(2).item<int64_t>());
  const auto offset = static_cast<uint64_t>(in.at(3).item<int64_t>());
  const auto stream = static_cast<uint64_t>(e.index());
  const DataType dtype = e.output(0)->dtype();
  at::Tensor out = at::empty(concreteShape(e.output(0)->asTensor()),
                             at::TensorOptions().dtype(toAtenType(dtype)));
  auto valueAt = [&](uint64_t i) {
    return e.op() == RngOpType::Uniform
               ? philox::uniformAt(dtype, seed, offset, stream, i, a, b)
               : philox::normalAt(dtype, seed, offset, stream, i, a, b);
  };
  switch (dtype) {
    case DataType::Float:
      fill<float>(out, valueAt);
      break;
    case DataType::Double:
      fill<double>(out, valueAt);
      break;
    case DataType::Half:
      fill<c10::Half>(out, valueAt);
      break;
    case DataType::BFloat16:
      fill<c10::BFloat16>(out, valueAt);
      break;
    default:
      NVF_THROW(Internal, e.opName(), " of dtype ", toString(dtype));
  }
  return device.is_cpu() ? out : out.to(device);
}

std::pair<int64_t, int64_t> drawRngState(at::Device device) {
  at::Generator gen = at::globalContext().defaultGenerator(
      device.is_cuda() ? device : at::Device(at::kCPU));
  std::lock_guard<std::mutex> lock(gen.mutex());
  if (!device.is_cuda()) {
    return {static_cast<int64_t>(gen.get<at::CPUGeneratorImpl>()->random64()),
            0};
  }
  // The CUDA generator's state ends with its seed and its Philox offset
  // (in 32-bit numbers per thread; torch keeps it a multiple of 4).
  at::Tensor state = gen.get_state();
  NVF_CHECK_KIND(state.numel() >= 16 && state.scalar_type() == at::kByte,
                 Runtime, "the CUDA generator's state has an unknown layout");
  uint8_t* tail = state.data_ptr<uint8_t>() + state.numel() - 16;
  uint64_t seed = 0;
  int64_t offset = 0;
  std::memcpy(&seed, tail, 8);
  std::memcpy(&offset, tail + 8, 8);
  const int64_t blocks = (offset + 3) / 4;
  const int64_t next = (blocks + 1) * 4;
  std::memcpy(tail + 8, &next, 8);
  gen.set_state(state);
  return {static_cast<int64_t>(seed), blocks};
}

std::vector<RuntimeArg> withRngState(const ConcreteFusion& c,
                                     std::vector<RuntimeArg> args,
                                     at::Device device) {
  if (c.drawsRngState) {
    auto [seed, offset] = drawRngState(device);
    args.push_back(RuntimeArg::fromScalar(seed, "int"));
    args.push_back(RuntimeArg::fromScalar(offset, "int"));
  }
  return args;
}

}  // namespace nvfuser
