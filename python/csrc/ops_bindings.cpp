// Binds the builder functions. The Python package turns nvFuser's keyword
// API into these calls; names map to op types through one table each.
#include <pybind11/stl.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bindings.h"
#include "exceptions.h"
#include "ops/arith.h"
#include "ops/composite_ops.h"
#include "ops/indexing_ops.h"
#include "ops/op_utils.h"
#include "ops/reduction_ops.h"
#include "ops/rng_ops.h"
#include "ops/shape_ops.h"

namespace py = pybind11;

namespace nvfuser::python {

namespace {

template <typename T>
T lookupOp(const std::map<std::string, T>& table, const std::string& name,
           const char* kind) {
  auto it = table.find(name);
  NVF_CHECK(it != table.end(), "unknown ", kind, " op '", name, "'");
  return it->second;
}

const std::map<std::string, UnaryOpType>& unaryTable() {
  static const std::map<std::string, UnaryOpType> t = {
      {"neg", UnaryOpType::Neg},
      {"abs", UnaryOpType::Abs},
      {"exp", UnaryOpType::Exp},
      {"log", UnaryOpType::Log},
      {"sqrt", UnaryOpType::Sqrt},
      {"rsqrt", UnaryOpType::Rsqrt},
      {"reciprocal", UnaryOpType::Reciprocal},
      {"sin", UnaryOpType::Sin},
      {"cos", UnaryOpType::Cos},
      {"tanh", UnaryOpType::Tanh},
      {"sigmoid", UnaryOpType::Sigmoid},
      {"relu", UnaryOpType::Relu},
      {"silu", UnaryOpType::Silu},
      {"gelu", UnaryOpType::Gelu},
      {"erf", UnaryOpType::Erf},
      {"floor", UnaryOpType::Floor},
      {"ceil", UnaryOpType::Ceil},
      {"round", UnaryOpType::Round},
      {"isnan", UnaryOpType::IsNan},
      {"logical_not", UnaryOpType::LogicalNot},
      {"bitwise_not", UnaryOpType::BitwiseNot},
      {"acos", UnaryOpType::Acos},
      {"asin", UnaryOpType::Asin},
      {"atan", UnaryOpType::Atan},
      {"cosh", UnaryOpType::Cosh},
      {"sinh", UnaryOpType::Sinh},
      {"tan", UnaryOpType::Tan},
      {"exp2", UnaryOpType::Exp2},
      {"expm1", UnaryOpType::Expm1},
      {"log10", UnaryOpType::Log10},
      {"log1p", UnaryOpType::Log1p},
      {"log2", UnaryOpType::Log2},
      {"erfc", UnaryOpType::Erfc},
      {"erfinv", UnaryOpType::Erfinv},
      {"lgamma", UnaryOpType::Lgamma},
      {"acosh", UnaryOpType::Acosh},
      {"asinh", UnaryOpType::Asinh},
      {"atanh", UnaryOpType::Atanh},
      {"erfcinv", UnaryOpType::Erfcinv},
      {"sign", UnaryOpType::Sign},
      {"trunc", UnaryOpType::Trunc},
      {"frac", UnaryOpType::Frac},
      {"isinf", UnaryOpType::IsInf},
      {"isfinite", UnaryOpType::IsFinite},
      {"isneginf", UnaryOpType::IsNegInf},
      {"isposinf", UnaryOpType::IsPosInf},
      {"signbit", UnaryOpType::Signbit},
      {"real", UnaryOpType::Real},
      {"imag", UnaryOpType::Imag},
      {"isreal", UnaryOpType::IsReal},
  };
  return t;
}

const std::map<std::string, BinaryOpType>& binaryTable() {
  static const std::map<std::string, BinaryOpType> t = {
      {"add", BinaryOpType::Add},
      {"sub", BinaryOpType::Sub},
      {"mul", BinaryOpType::Mul},
      {"div", BinaryOpType::Div},
      {"pow", BinaryOpType::Pow},
      {"fmod", BinaryOpType::Fmod},
      {"remainder", BinaryOpType::Remainder},
      {"maximum", BinaryOpType::Maximum},
      {"minimum", BinaryOpType::Minimum},
      {"eq", BinaryOpType::Eq},
      {"ne", BinaryOpType::Ne},
      {"lt", BinaryOpType::Lt},
      {"le", BinaryOpType::Le},
      {"gt", BinaryOpType::Gt},
      {"ge", BinaryOpType::Ge},
      {"logical_and", BinaryOpType::LogicalAnd},
      {"logical_or", BinaryOpType::LogicalOr},
      {"bitwise_and", BinaryOpType::BitwiseAnd},
      {"bitwise_or", BinaryOpType::BitwiseOr},
      {"bitwise_xor", BinaryOpType::BitwiseXor},
      {"atan2", BinaryOpType::Atan2},
      {"nextafter", BinaryOpType::Nextafter},
      {"gcd", BinaryOpType::Gcd},
      {"bitwise_left_shift", BinaryOpType::BitwiseLeftShift},
      {"bitwise_right_shift", BinaryOpType::BitwiseRightShift},
      {"logical_right_shift", BinaryOpType::LogicalRightShift},
  };
  return t;
}

const std::map<std::string, ReductionOpType>& reductionTable() {
  static const std::map<std::string, ReductionOpType> t = {
      {"sum", ReductionOpType::Sum},   {"max", ReductionOpType::Max},
      {"min", ReductionOpType::Min},   {"prod", ReductionOpType::Prod},
      {"mean", ReductionOpType::Mean},
  };
  return t;
}

const std::map<std::string, GatherOpType>& gatherTable() {
  static const std::map<std::string, GatherOpType> t = {
      {"index_select", GatherOpType::IndexSelect},
      {"gather", GatherOpType::Gather},
      {"take_along_axis", GatherOpType::TakeAlongAxis},
  };
  return t;
}

RngOpType rngType(const std::string& name) {
  return name == "uniform" || name == "rand_like" ? RngOpType::Uniform
                                                  : RngOpType::Normal;
}

template <typename Table>
std::vector<std::string> keys(const Table& table) {
  std::vector<std::string> out;
  for (const auto& [k, v] : table) {
    out.push_back(k);
  }
  return out;
}

TensorView* tensorArg(Val* v, const char* op) {
  return checkTensor(v, op, "input");
}

}  // namespace

namespace {
void bindElementwiseOps(py::module_& m) {
  const auto ref = py::return_value_policy::reference;
  m.def("unary_names", [] { return keys(unaryTable()); });
  m.def("binary_names", [] { return keys(binaryTable()); });
  m.def("reduction_names", [] { return keys(reductionTable()); });
  m.def(
      "unary",
      [](const std::string& name, Val* x) {
        return unaryOp(lookupOp(unaryTable(), name, "unary"), x);
      },
      ref);
  m.def(
      "binary",
      [](const std::string& name, Val* a, Val* b) {
        return binaryOp(lookupOp(binaryTable(), name, "binary"), a, b);
      },
      ref);
  m.def("where", &where, ref);
  m.def("lerp", &lerp, ref);
  m.def("fma", &fma, ref);
  m.def("clamp", &clamp, ref);
  m.def("addcmul", &addcmul, ref);
  m.def("cast", &castOp, ref);
}

void bindShapeOps(py::module_& m) {
  const auto ref = py::return_value_policy::reference;
  m.def(
      "broadcast",
      [](Val* x, const std::vector<bool>& mask) {
        return broadcast(tensorArg(x, "broadcast"), mask);
      },
      ref);
  m.def(
      "broadcast_in_dim",
      [](Val* x, const std::vector<int64_t>& shape,
         const std::vector<int64_t>& dims) {
        return broadcastInDim(tensorArg(x, "broadcast_in_dim"), shape, dims);
      },
      ref);
  m.def(
      "expand",
      [](Val* x, const std::vector<int64_t>& shape) {
        return expand(tensorArg(x, "expand"), shape);
      },
      ref);
  m.def(
      "reshape",
      [](Val* x, const std::vector<int64_t>& shape) {
        return reshape(tensorArg(x, "reshape"), shape);
      },
      ref);
  m.def(
      "permute",
      [](Val* x, const std::vector<int64_t>& dims) {
        return permute(tensorArg(x, "permute"), dims);
      },
      ref);
  m.def(
      "squeeze",
      [](Val* x, const std::vector<int64_t>& dims) {
        return squeeze(tensorArg(x, "squeeze"), dims);
      },
      ref);
  m.def(
      "slice",
      [](Val* x, const std::vector<int64_t>& starts,
         const std::vector<int64_t>& stops, const std::vector<int64_t>& steps) {
        return slice(tensorArg(x, "slice"), starts, stops, steps);
      },
      ref);
  m.def(
      "pad",
      [](Val* x, const std::vector<int64_t>& widths, Val* value) {
        return pad(tensorArg(x, "pad"), widths, value);
      },
      ref, py::arg("x"), py::arg("widths"), py::arg("value") = nullptr);
  m.def(
      "cat",
      [](const std::vector<Val*>& xs, int64_t dim) {
        std::vector<TensorView*> ts;
        for (Val* v : xs) {
          ts.push_back(tensorArg(v, "cat"));
        }
        return cat(ts, dim);
      },
      ref);
}

void bindReductionAndMatmulOps(py::module_& m) {
  const auto ref = py::return_value_policy::reference;
  m.def(
      "reduction",
      [](const std::string& name, Val* x, const std::vector<int64_t>& dims,
         bool keepdim, DataType dtype) {
        return reduction(lookupOp(reductionTable(), name, "reduction"),
                         tensorArg(x, name.c_str()), dims, keepdim, dtype);
      },
      ref);
  m.def(
      "var_mean",
      [](Val* x, const std::vector<int64_t>& dims, int64_t correction,
         bool keepdim) {
        auto [v, mu] =
            varMean(tensorArg(x, "var_mean"), dims, correction, keepdim);
        return std::make_pair(static_cast<Val*>(v), static_cast<Val*>(mu));
      },
      ref);
  m.def(
      "matmul",
      [](Val* a, Val* b) {
        return matmul(checkTensor(a, "matmul", "first operand"),
                      checkTensor(b, "matmul", "second operand"));
      },
      ref);
  m.def(
      "linear",
      [](Val* a, Val* w, Val* bias) {
        return linear(checkTensor(a, "linear", "input"),
                      checkTensor(w, "linear", "weight"), bias);
      },
      ref, py::arg("a"), py::arg("w"), py::arg("bias") = nullptr);
  m.def(
      "welford",
      [](Val* x, const std::vector<int64_t>& dims) {
        auto [avg, varSum, n] = welford(tensorArg(x, "welford"), dims);
        return std::vector<Val*>{avg, varSum, n};
      },
      ref);
  m.def(
      "cumsum",
      [](Val* x, int64_t dim) { return cumsum(tensorArg(x, "cumsum"), dim); },
      ref);
}

// Factories, indexing, random ops and segment boundaries.
void bindOtherOps(py::module_& m) {
  const auto ref = py::return_value_policy::reference;
  m.def(
      "full",
      [](Val* anchor, const std::vector<int64_t>& shape, Val* fill,
         DataType dtype) {
        return full(*anchor->fusion(), shape, fill, dtype);
      },
      ref);
  m.def(
      "iota",
      [](int64_t length, Val* start, Val* step, DataType dtype) {
        return iota(*start->fusion(), length, start, step, dtype);
      },
      ref);
  m.def(
      "gather_op",
      [](const std::string& name, Val* x, Val* index, int64_t dim) {
        const char* op = name.c_str();
        return gatherOp(lookupOp(gatherTable(), name, "indexing"),
                        checkTensor(x, op, "input"),
                        checkTensor(index, op, "index"), dim);
      },
      ref);
  m.def(
      "triu",
      [](Val* x, int64_t diagonal) {
        return triu(tensorArg(x, "triu"), diagonal);
      },
      ref);
  m.def(
      "scatter",
      [](Val* arg, Val* index, Val* src, int64_t dim) {
        return scatter(checkTensor(arg, "scatter", "input"),
                       checkTensor(index, "scatter", "index"), src, dim);
      },
      ref);
  m.def(
      "random",
      [](const std::string& name, Val* a, Val* b,
         const std::vector<int64_t>& shape, Val* seed, Val* offset,
         DataType dtype, std::optional<int64_t> index) {
        Fusion* f = commonFusion({a, b}, name);
        return rngOp(*f, rngType(name), a, b, shape, dtype, seed, offset,
                     index);
      },
      ref);
  m.def(
      "random_like",
      [](const std::string& name, Val* like, DataType dtype, Val* seed,
         Val* offset, std::optional<int64_t> index) {
        return rngLike(rngType(name), checkTensor(like, name, "arg"), dtype,
                       seed, offset, index);
      },
      ref);
  m.def("set", &set, ref);
  m.def("segment_set", &segmentSet, ref);
}
}  // namespace

void bindOps(py::module_& m) {
  bindElementwiseOps(m);
  bindShapeOps(m);
  bindReductionAndMatmulOps(m);
  bindOtherOps(m);
}

}  // namespace nvfuser::python
