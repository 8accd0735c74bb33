// Arguments of one execute call, as the runtime sees them.
#pragma once

#include <ATen/ATen.h>

#include <optional>
#include <string>
#include <vector>

#include "analysis/tensor_shape.h"
#include "ir/fusion.h"
#include "ops/concretize.h"

namespace nvfuser {

// One actual input: a tensor or a Python number.
struct RuntimeArg {
  std::optional<at::Tensor> tensor;
  std::optional<ScalarValue> scalar;
  std::string typeName;  // Python type name, for messages

  static RuntimeArg fromTensor(at::Tensor t) {
    return RuntimeArg{std::move(t), std::nullopt, "Tensor"};
  }
  static RuntimeArg fromScalar(ScalarValue v, std::string typeName) {
    return RuntimeArg{std::nullopt, v, std::move(typeName)};
  }
};

DataType fromAtenType(at::ScalarType t);
at::ScalarType toAtenType(DataType t);

// Checks made on every call (describeArgs runs once per input signature):
// each tensor must be dense strided memory (sparse, MKL-DNN, nested,
// quantized, named and meta tensors are refused naming the input), each
// scalar must fit the dtype of the scalar input it binds.
void checkArgs(const Fusion& fusion, const std::vector<RuntimeArg>& args);

// Describes the args for concretization; checks undefined tensors, devices
// and that scalars were given for scalar inputs.
std::vector<InputDescriptor> describeArgs(const Fusion& fusion,
                                          const std::vector<RuntimeArg>& args);

// The device all non-CPU-scalar tensor args share (CPU when none is given).
at::Device commonDevice(const Fusion& fusion,
                        const std::vector<RuntimeArg>& args);

// Cache key of an input signature: dtypes, sizes, strides-derived layout and
// device of every tensor, dtypes of scalars.
std::string signatureKey(const std::vector<RuntimeArg>& args);

}  // namespace nvfuser
