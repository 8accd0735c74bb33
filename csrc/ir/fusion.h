// A Fusion owns a DAG of Vals and Exprs. Exprs are kept in creation order,
// which is topological because a builder only consumes existing Vals.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/expr.h"
#include "ir/val.h"

namespace nvfuser {

class Fusion {
 public:
  Fusion() = default;
  Fusion(const Fusion&) = delete;
  Fusion& operator=(const Fusion&) = delete;

  TensorView* newTensor(std::vector<IterDomain> domain, DataType dtype);
  Scalar* newScalar(DataType dtype, std::optional<ScalarValue> value);

  // Registers an expr built by a builder: sets definitions and uses.
  template <typename T, typename... Args>
  T* addExpr(Args&&... args) {
    auto owned = std::make_unique<T>(std::forward<Args>(args)...);
    T* e = owned.get();
    registerExpr(std::move(owned));
    return e;
  }

  void addInput(Val* v);
  void addOutput(Val* v);
  const std::vector<Val*>& inputs() const { return inputs_; }
  const std::vector<Val*>& outputs() const { return outputs_; }
  // Constant time (a flag the val carries): printing every tensor asks
  // this, so does the segmenter for every output it considers, and fusions
  // have thousands of outputs.
  bool isInput(const Val* v) const {
    return v->fusion() == this && v->isFusionInput_;
  }
  bool isOutput(const Val* v) const {
    return v->fusion() == this && v->isFusionOutput_;
  }

  // Every expr, in creation (topological) order.
  const std::vector<Expr*>& exprs() const { return exprs_; }
  // Exprs that some output depends on, in topological order.
  std::vector<Expr*> liveExprs() const;
  const std::vector<Val*>& vals() const { return valList_; }
  int64_t numTensors() const { return numTensors_; }

  // Symbolic extents. unify() records that two extents must be equal and
  // returns the one to use; a constant wins over a symbol.
  Extent newSymbolicExtent();
  Extent unify(Extent a, Extent b);
  // Representative of a symbol's class (after unification).
  int64_t findSymbol(int64_t symbol) const;
  // A constant a symbol's class was unified with, if any.
  std::optional<int64_t> symbolConstant(int64_t symbol) const;
  int64_t numSymbols() const { return static_cast<int64_t>(parent_.size()); }
  // Resolves a symbolic extent to its class representative or constant.
  Extent canonical(Extent e) const;

  std::string toString() const;

 private:
  void registerExpr(std::unique_ptr<Expr> e);

  std::vector<std::unique_ptr<Val>> ownedVals_;
  std::vector<Val*> valList_;
  std::vector<std::unique_ptr<Expr>> ownedExprs_;
  std::vector<Expr*> exprs_;
  std::vector<Val*> inputs_;
  std::vector<Val*> outputs_;
  int64_t numTensors_ = 0;
  int64_t numScalars_ = 0;
  mutable std::vector<int64_t> parent_;      // union-find over symbols
  std::map<int64_t, int64_t> rootConstant_;  // root symbol -> constant
};

}  // namespace nvfuser
