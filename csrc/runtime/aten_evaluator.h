// Evaluates a concrete Fusion op by op with ATen on the inputs' device. It is
// the CPU path, the fallback for groups without a kernel, and the oracle that
// segmented execution is tested against.
#pragma once

#include <ATen/ATen.h>

#include <optional>
#include <unordered_map>
#include <vector>

#include "ir/fusion.h"
#include "runtime/runtime_args.h"

namespace nvfuser {

class AtenEvaluator {
 public:
  explicit AtenEvaluator(at::Device device) : device_(device) {}

  // Binds a fusion input (or any value computed elsewhere).
  void bind(const Val* v, const RuntimeArg& arg);
  void bindTensor(const Val* v, at::Tensor t);
  // Evaluates one expr whose inputs are bound (constants bind themselves).
  void evaluate(const Expr* e);
  const at::Tensor& value(const Val* v);
  bool isBound(const Val* v) const { return values_.count(v) > 0; }
  void release(const Val* v) { values_.erase(v); }

  // Binds every input, evaluates the live exprs, returns the outputs.
  static std::vector<at::Tensor> run(const Fusion& fusion,
                                     const std::vector<RuntimeArg>& args,
                                     at::Device device);

 private:
  at::Tensor compute(const Expr* e, const std::vector<at::Tensor>& in);

  // Host values of scalar inputs and constants (nullopt when unknown):
  // aten_call passes them as numbers without reading the device.
  std::vector<std::optional<ScalarValue>> hostScalars(const Expr* e) const;

  at::Device device_;
  // Scalars are held as 0-dim tensors on the evaluation device.
  std::unordered_map<const Val*, at::Tensor> values_;
  std::unordered_map<const Val*, ScalarValue> boundScalars_;
};

}  // namespace nvfuser
