#include "ir/aten_call.h"

#include <sstream>

#include "ir/list_string.h"
#include "ir/val.h"
#include "python_text.h"

namespace nvfuser {

std::string AtenCallOp::operatorName() const {
  return op_.substr(0, op_.find('.'));
}

std::string AtenCallOp::overloadName() const {
  const size_t dot = op_.find('.');
  if (dot == std::string::npos) {
    return "";
  }
  std::string overload = op_.substr(dot + 1);
  return overload == "default" ? "" : overload;
}

std::string AtenCallOp::attributesToString() const {
  std::ostringstream os;
  os << "op=" << op_ << ", returns=[";
  for (size_t i = 0; i < results_.size(); ++i) {
    os << (i ? ", " : "") << results_[i].returnIndex;
  }
  os << "]";
  return os.str();
}

namespace {

std::string argToPython(const AtenCallArg& a, const AtenCallOp& e,
                        const std::function<std::string(const Val*)>& name) {
  switch (a.kind) {
    case AtenCallArg::Kind::Input:
      return name(e.input(static_cast<size_t>(a.input)));
    case AtenCallArg::Kind::None:
      return "None";
    case AtenCallArg::Kind::Bool:
      return a.boolValue ? "True" : "False";
    case AtenCallArg::Kind::Int:
      return std::to_string(a.intValue);
    case AtenCallArg::Kind::Double:
      return scalarToPythonLiteral(a.doubleValue);
    case AtenCallArg::Kind::IntList:
      return listToString(a.ints);
    case AtenCallArg::Kind::String:
      return pythonQuoted(a.text);
    case AtenCallArg::Kind::TensorList: {
      std::vector<std::string> items;
      for (int64_t k : a.inputs) {
        items.push_back(k < 0 ? "None" : name(e.input(static_cast<size_t>(k))));
      }
      return listToString(items);
    }
  }
  return "None";
}
}  // namespace

std::string atenCallToPython(
    const AtenCallOp& e, const std::function<std::string(const Val*)>& name) {
  std::vector<std::string> args;
  for (const AtenCallArg& a : e.args()) {
    args.push_back(argToPython(a, e, name));
  }
  std::vector<std::string> results;
  for (const AtenCallResult& r : e.results()) {
    std::vector<std::string> shape;
    for (const AtenCallExtent& x : r.shape) {
      shape.push_back(x.input < 0
                          ? std::to_string(x.size)
                          : "(" + name(e.input(static_cast<size_t>(x.input))) +
                                ", " + std::to_string(x.dim) + ")");
    }
    results.push_back("(" + std::to_string(r.returnIndex) + ", DataType." +
                      toString(r.dtype) + ", " + listToString(shape) + ")");
  }
  return "fd.ops.aten_call(" + pythonQuoted(e.op()) + ", " +
         listToString(args) + ", results=" + listToString(results) + ")";
}

}  // namespace nvfuser
