// An ATen operator called by name (fd.ops.aten_call): library kernels the
// compiler does not generate (attention, embedding backward, any
// functional op the FX backend cannot translate) inside a fusion, so they
// do not cut it in two. The runtime calls the operator through PyTorch's
// dispatcher (runtime/aten_call_eval.h); the core only knows its name,
// its arguments in schema order and the shapes of the results it keeps.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "ir/expr.h"

namespace nvfuser {

// One argument in schema order: an input of the expr (a tensor or a
// scalar Val), a list of tensor inputs (Tensor[], Tensor?[]) or a constant.
struct AtenCallArg {
  enum class Kind {
    Input,
    None,
    Bool,
    Int,
    Double,
    IntList,
    String,
    TensorList
  };
  Kind kind = Kind::None;
  int64_t input = -1;  // Kind::Input: index into the expr's inputs
  // Kind::TensorList: indices into the expr's inputs, -1 for None.
  std::vector<int64_t> inputs;
  bool boolValue = false;
  int64_t intValue = 0;
  double doubleValue = 0.0;
  std::vector<int64_t> ints;
  std::string text;
};

// One dim of a result: a constant, or the extent of a dim of a tensor
// input (so a symbolic definition keeps its symbols).
struct AtenCallExtent {
  int64_t input = -1;  // index into the expr's inputs, -1: constant
  int64_t dim = 0;
  int64_t size = 0;
};

// A result the fusion keeps: the operator's return `returnIndex`.
struct AtenCallResult {
  int64_t returnIndex = 0;
  DataType dtype = DataType::Float;
  std::vector<AtenCallExtent> shape;
};

class AtenCallOp : public Expr {
 public:
  static constexpr ExprType kType = ExprType::AtenCall;
  // `op` is "namespace::name" or "namespace::name.overload".
  AtenCallOp(std::vector<Val*> outs, std::vector<Val*> ins, std::string op,
             std::vector<AtenCallArg> args, std::vector<AtenCallResult> results)
      : Expr(kType, std::move(ins), std::move(outs)),
        op_(std::move(op)),
        args_(std::move(args)),
        results_(std::move(results)) {}
  const std::string& op() const { return op_; }
  // "namespace::name" and the overload ("" for the default one).
  std::string operatorName() const;
  std::string overloadName() const;
  const std::vector<AtenCallArg>& args() const { return args_; }
  const std::vector<AtenCallResult>& results() const { return results_; }
  std::string opName() const override { return "aten_call"; }
  std::string attributesToString() const override;

 private:
  std::string op_;
  std::vector<AtenCallArg> args_;
  std::vector<AtenCallResult> results_;
};

// "fd.ops.aten_call(...)" as the Python API spells it, operands named by
// `name`.
std::string atenCallToPython(
    const AtenCallOp& e, const std::function<std::string(const Val*)>& name);

}  // namespace nvfuser
