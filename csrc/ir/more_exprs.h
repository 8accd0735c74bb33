// Exprs of nvFuser's triu, welford, cumsum and scatter. Triu and Welford
// exist only in definitions: concretization expands them into elementwise
// ops and reductions (ops/composite_ops.h). Scan and Scatter run through
// ATen, one such op per expr_eval segment.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/expr.h"

namespace nvfuser {

// out[..., i, j] = in[..., i, j] where j - i >= diagonal, else 0.
class TriuOp : public Expr {
 public:
  static constexpr ExprType kType = ExprType::Triu;
  TriuOp(Val* out, Val* in, int64_t diagonal)
      : Expr(kType, {in}, {out}), diagonal_(diagonal) {}
  int64_t diagonal() const { return diagonal_; }
  std::string opName() const override { return "triu"; }
  std::string attributesToString() const override;

 private:
  int64_t diagonal_;
};

// Outputs: the mean, the sum of squared deviations from it, and the count
// (Int) over the reduced axes.
class WelfordOp : public Expr {
 public:
  static constexpr ExprType kType = ExprType::Welford;
  WelfordOp(Val* avg, Val* varSum, Val* n, Val* in, std::vector<int64_t> axes)
      : Expr(kType, {in}, {avg, varSum, n}), axes_(std::move(axes)) {}
  const std::vector<int64_t>& axes() const { return axes_; }
  std::string opName() const override { return "welford"; }
  std::string attributesToString() const override;

 private:
  std::vector<int64_t> axes_;
};

// Inclusive prefix sum along `dim` (cumsum).
class ScanOp : public Expr {
 public:
  static constexpr ExprType kType = ExprType::Scan;
  ScanOp(Val* out, Val* in, int64_t dim)
      : Expr(kType, {in}, {out}), dim_(dim) {}
  int64_t dim() const { return dim_; }
  std::string opName() const override { return "cumsum"; }
  std::string attributesToString() const override;

 private:
  int64_t dim_;
};

// Out-of-place torch.scatter: a copy of `arg` with src[i] written at i
// with its `dim` coordinate replaced by index[i]. Inputs: arg, index (Int
// or Int32, arg's rank), src (a tensor of arg's dtype, or a scalar).
class ScatterOp : public Expr {
 public:
  static constexpr ExprType kType = ExprType::Scatter;
  ScatterOp(Val* out, Val* arg, Val* index, Val* src, int64_t dim)
      : Expr(kType, {arg, index, src}, {out}), dim_(dim) {}
  int64_t dim() const { return dim_; }
  std::string opName() const override { return "scatter"; }
  std::string attributesToString() const override;

 private:
  int64_t dim_;
};

}  // namespace nvfuser
