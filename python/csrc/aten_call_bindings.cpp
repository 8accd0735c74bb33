// _C.ops.aten_call(op, inputs, args, results): the Python layer has
// already read the operator's schema and flattened the call into
//   args:    (kind, value) per schema argument, kind one of "input" (value:
//            index into inputs), "none", "bool", "int", "double", "ints",
//            "str", "tensors" (value: indices into inputs, None for None);
//   results: (return index, DataType, [(input index or -1, dim, size)]).
#include <pybind11/stl.h>

#include <string>
#include <tuple>
#include <vector>

#include "bindings.h"
#include "exceptions.h"
#include "ops/aten_call_ops.h"

namespace py = pybind11;

namespace nvfuser::python {

namespace {
AtenCallArg toArg(const std::pair<std::string, py::object>& a) {
  const std::string& kind = a.first;
  const py::object& v = a.second;
  AtenCallArg out;
  if (kind == "input") {
    out.kind = AtenCallArg::Kind::Input;
    out.input = v.cast<int64_t>();
  } else if (kind == "none") {
    out.kind = AtenCallArg::Kind::None;
  } else if (kind == "bool") {
    out.kind = AtenCallArg::Kind::Bool;
    out.boolValue = v.cast<bool>();
  } else if (kind == "int") {
    out.kind = AtenCallArg::Kind::Int;
    out.intValue = v.cast<int64_t>();
  } else if (kind == "double") {
    out.kind = AtenCallArg::Kind::Double;
    out.doubleValue = v.cast<double>();
  } else if (kind == "ints") {
    out.kind = AtenCallArg::Kind::IntList;
    out.ints = v.cast<std::vector<int64_t>>();
  } else if (kind == "str") {
    out.kind = AtenCallArg::Kind::String;
    out.text = v.cast<std::string>();
  } else if (kind == "tensors") {
    out.kind = AtenCallArg::Kind::TensorList;
    for (const py::handle& k : v) {
      out.inputs.push_back(k.is_none() ? -1 : k.cast<int64_t>());
    }
  } else {
    NVF_THROW(Value, "aten_call: unknown argument kind '", kind, "'");
  }
  return out;
}

using ResultSpec =
    std::tuple<int64_t, DataType,
               std::vector<std::tuple<int64_t, int64_t, int64_t>>>;

AtenCallResult toResult(const ResultSpec& r) {
  AtenCallResult out;
  out.returnIndex = std::get<0>(r);
  out.dtype = std::get<1>(r);
  for (const auto& [input, dim, size] : std::get<2>(r)) {
    out.shape.push_back(AtenCallExtent{input, dim, size});
  }
  return out;
}
}  // namespace

void bindAtenCall(py::module_& m) {
  m.def(
      "aten_call",
      [](const std::string& op, const std::vector<Val*>& inputs,
         const std::vector<std::pair<std::string, py::object>>& args,
         const std::vector<ResultSpec>& results) {
        std::vector<AtenCallArg> callArgs;
        for (const auto& a : args) {
          callArgs.push_back(toArg(a));
        }
        std::vector<AtenCallResult> kept;
        for (const auto& r : results) {
          kept.push_back(toResult(r));
        }
        return atenCall(op, inputs, std::move(callArgs), std::move(kept));
      },
      py::return_value_policy::reference);
}

}  // namespace nvfuser::python
