#include "runtime/aten_call_eval.h"

#include <ATen/core/dispatch/Dispatcher.h>

#include <mutex>
#include <string>
#include <unordered_map>

#include "analysis/tensor_shape.h"
#include "exceptions.h"
#include "runtime/runtime_args.h"
#include "runtime/torch_operators.h"

namespace nvfuser {

namespace {
c10::OperatorHandle findOperator(const AtenCallOp& e) {
  auto handle = c10::Dispatcher::singleton().findSchema(
      {e.operatorName(), e.overloadName()});
  NVF_CHECK(handle.has_value(), "aten_call: this PyTorch has no operator ",
            e.op());
  const c10::FunctionSchema& schema = handle->schema();
  // Fusion values are immutable and results are fresh tensors: an operator
  // that writes to an argument or returns a view of one cannot be called.
  bool aliases = false;
  for (const c10::Argument& a : schema.arguments()) {
    aliases = aliases || a.alias_info();
  }
  for (const c10::Argument& r : schema.returns()) {
    aliases = aliases || r.alias_info();
  }
  NVF_CHECK(!aliases, "aten_call: ", e.op(),
            " writes to an argument or returns a view of one");
  return *handle;
}

// ATen's own operators and ours (runtime/torch_operators.h) are found and
// checked once (a call is on every step); others each time: a library
// registered from Python may be gone.
c10::OperatorHandle lookup(const AtenCallOp& e) {
  if (e.op().rfind("aten::", 0) != 0 && !isOwnTorchOperator(e.op())) {
    return findOperator(e);
  }
  static std::mutex mutex;
  static std::unordered_map<std::string, c10::OperatorHandle> found;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = found.find(e.op());
  if (it == found.end()) {
    it = found.emplace(e.op(), findOperator(e)).first;
  }
  return it->second;
}

c10::IValue hostValue(const ScalarValue& v) {
  if (const auto* b = std::get_if<bool>(&v)) {
    return *b;
  }
  if (const auto* i = std::get_if<int64_t>(&v)) {
    return *i;
  }
  return std::get<double>(v);
}

c10::IValue inputValue(const AtenCallOp& e, int64_t k, const at::Tensor& t,
                       const std::optional<ScalarValue>& host,
                       const c10::Argument& schemaArg) {
  if (e.input(static_cast<size_t>(k))->isTensor() ||
      schemaArg.type()->kind() == c10::TypeKind::TensorType) {
    return t;
  }
  // A fusion scalar: its host value, else the 0-dim tensor's.
  return host.has_value() ? hostValue(*host) : c10::IValue(t.item());
}

// Tensor[] or Tensor?[] (the schema's element type says which list type
// the operator's kernel unpacks).
c10::IValue tensorListValue(const AtenCallArg& a,
                            const std::vector<at::Tensor>& in,
                            const c10::Argument& schemaArg) {
  const auto* list = schemaArg.type()->castRaw<c10::ListType>();
  NVF_CHECK(list != nullptr, "aten_call: argument '", schemaArg.name(),
            "' is not a list of tensors");
  auto tensor = [&](int64_t k) { return in.at(static_cast<size_t>(k)); };
  if (list->getElementType()->kind() == c10::TypeKind::OptionalType) {
    c10::List<c10::optional<at::Tensor>> out;
    for (int64_t k : a.inputs) {
      out.push_back(k < 0 ? c10::optional<at::Tensor>() : tensor(k));
    }
    return out;
  }
  c10::List<at::Tensor> out;
  for (int64_t k : a.inputs) {
    NVF_CHECK(k >= 0, "aten_call: argument '", schemaArg.name(),
              "' is Tensor[]: None is not a tensor");
    out.push_back(tensor(k));
  }
  return out;
}

c10::IValue constantValue(const AtenCallArg& a,
                          const c10::Argument& schemaArg) {
  switch (a.kind) {
    case AtenCallArg::Kind::None:
      // Eager PyTorch takes None for a Tensor argument as an undefined
      // tensor (traced graphs pass it so).
      if (schemaArg.type()->kind() == c10::TypeKind::TensorType) {
        return at::Tensor();
      }
      return c10::IValue();
    case AtenCallArg::Kind::Bool:
      return a.boolValue;
    case AtenCallArg::Kind::Int:
      return a.intValue;
    case AtenCallArg::Kind::Double:
      return a.doubleValue;
    case AtenCallArg::Kind::IntList:
      return c10::IValue(a.ints);
    case AtenCallArg::Kind::String:
      return c10::IValue(a.text);
    case AtenCallArg::Kind::Input:
    case AtenCallArg::Kind::TensorList:
      break;
  }
  NVF_THROW(Internal, "aten_call: unhandled argument kind");
}

std::vector<c10::IValue> argumentStack(
    const AtenCallOp& e, const c10::FunctionSchema& schema,
    const std::vector<at::Tensor>& in,
    const std::vector<std::optional<ScalarValue>>& scalars) {
  const auto& params = schema.arguments();
  NVF_CHECK(e.args().size() <= params.size(), "aten_call: ", e.op(), " takes ",
            params.size(), " arguments, got ", e.args().size());
  std::vector<c10::IValue> stack;
  for (size_t i = 0; i < params.size(); ++i) {
    if (i < e.args().size()) {
      const AtenCallArg& a = e.args()[i];
      if (a.kind == AtenCallArg::Kind::Input) {
        stack.push_back(
            inputValue(e, a.input, in.at(static_cast<size_t>(a.input)),
                       scalars.at(static_cast<size_t>(a.input)), params[i]));
      } else if (a.kind == AtenCallArg::Kind::TensorList) {
        stack.push_back(tensorListValue(a, in, params[i]));
      } else {
        stack.push_back(constantValue(a, params[i]));
      }
      continue;
    }
    NVF_CHECK(params[i].default_value().has_value(), "aten_call: ", e.op(),
              " needs argument '", params[i].name(), "'");
    stack.push_back(*params[i].default_value());
  }
  return stack;
}

at::Tensor keptResult(const AtenCallOp& e, size_t r,
                      const std::vector<c10::IValue>& returned) {
  const AtenCallResult& res = e.results()[r];
  const std::string what = "aten_call " + e.op() + ": return " +
                           std::to_string(res.returnIndex) + " (" +
                           e.output(r)->ref() + ")";
  NVF_CHECK_KIND(res.returnIndex < static_cast<int64_t>(returned.size()),
                 Runtime, what, " does not exist: the operator returned ",
                 returned.size(), " values");
  const c10::IValue& v = returned[static_cast<size_t>(res.returnIndex)];
  NVF_CHECK_KIND(v.isTensor() && v.toTensor().defined(), Runtime, what,
                 " is not a tensor");
  at::Tensor t = v.toTensor();
  NVF_CHECK_KIND(t.scalar_type() == toAtenType(res.dtype), Runtime, what,
                 " is ", c10::toString(t.scalar_type()), ", declared ",
                 toString(res.dtype));
  const std::vector<int64_t> want = concreteShape(e.output(r)->asTensor());
  NVF_CHECK_KIND(t.sizes().vec() == want, Runtime, what, " has sizes ",
                 t.sizes(), ", declared ", c10::IntArrayRef(want));
  return t;
}
}  // namespace

std::vector<at::Tensor> evalAtenCall(
    const AtenCallOp& e, const std::vector<at::Tensor>& in,
    const std::vector<std::optional<ScalarValue>>& scalars) {
  c10::OperatorHandle op = lookup(e);
  std::vector<c10::IValue> stack = argumentStack(e, op.schema(), in, scalars);
  op.callBoxed(&stack);
  std::vector<at::Tensor> kept;
  for (size_t r = 0; r < e.results().size(); ++r) {
    kept.push_back(keptResult(e, r, stack));
  }
  return kept;
}

}  // namespace nvfuser
