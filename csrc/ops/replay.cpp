#include "ops/replay.h"

#include "exceptions.h"
#include "ir/aten_call.h"
#include "ir/exprs.h"
#include "ops/arith.h"
#include "ops/aten_call_ops.h"
#include "ops/composite_ops.h"
#include "ops/indexing_ops.h"
#include "ops/reduction_ops.h"
#include "ops/rng_ops.h"
#include "ops/shape_ops.h"

namespace nvfuser {

namespace {
TensorView* tensorIn(const std::vector<Val*>& ins, size_t i) {
  return ins.at(i)->asTensor();
}
// The ops that move, select or join elements.
TensorView* replayShapeOp(const Expr* e, const std::vector<Val*>& ins) {
  switch (e->type()) {
    case ExprType::Broadcast:
      return broadcast(tensorIn(ins, 0),
                       exprAs<BroadcastOp>(e)->isBroadcastDim());
    case ExprType::Expand:
      return expand(tensorIn(ins, 0), exprAs<ExpandOp>(e)->shape());
    case ExprType::Reshape:
      return reshape(tensorIn(ins, 0), exprAs<ReshapeOp>(e)->newShape());
    case ExprType::Permute:
      return permute(tensorIn(ins, 0), exprAs<PermuteOp>(e)->perm());
    case ExprType::Squeeze: {
      std::vector<int64_t> dims;
      const auto& mask = exprAs<SqueezeOp>(e)->isSqueezed();
      for (size_t i = 0; i < mask.size(); ++i) {
        if (mask[i]) {
          dims.push_back(static_cast<int64_t>(i));
        }
      }
      return squeeze(tensorIn(ins, 0), dims);
    }
    case ExprType::Slice: {
      const auto* op = exprAs<SliceOp>(e);
      return slice(tensorIn(ins, 0), op->starts(), op->stops(), op->steps());
    }
    case ExprType::Pad:
      return pad(tensorIn(ins, 0), exprAs<PadOp>(e)->flatWidths(), ins[1]);
    case ExprType::Cat: {
      std::vector<TensorView*> ts;
      for (Val* v : ins) {
        ts.push_back(v->asTensor());
      }
      return cat(ts, exprAs<CatOp>(e)->dim());
    }
    default:
      NVF_THROW(Internal, "replayShapeOp: not a shape op: ", e->opName());
  }
}
// Unary (casts included), binary and ternary ops.
Val* replayElementwise(const Expr* e, const std::vector<Val*>& ins) {
  switch (e->type()) {
    case ExprType::Unary: {
      auto* u = exprAs<UnaryOp>(e);
      if (u->op() == UnaryOpType::Cast) {
        return castOp(ins[0], e->output(0)->dtype());
      }
      return unaryOp(u->op(), ins[0]);
    }
    case ExprType::Binary: {
      auto* b = exprAs<BinaryOp>(e);
      return binaryOpWithTypes(b->op(), ins[0], ins[1], b->computeType(),
                               e->output(0)->dtype());
    }
    case ExprType::Ternary: {
      auto* t = exprAs<TernaryOp>(e);
      return ternaryOpWithTypes(t->op(), ins[0], ins[1], ins[2],
                                t->computeType(), e->output(0)->dtype());
    }
    default:
      break;
  }
  NVF_THROW(Internal, "replayElementwise: not elementwise: ", e->opName());
}
}  // namespace

std::vector<Val*> replayExpr(const Expr* e, const std::vector<Val*>& ins) {
  NVF_ASSERT(!ins.empty(), "every op has at least one input");
  Fusion& f = *ins[0]->fusion();
  switch (e->type()) {
    case ExprType::Unary:
    case ExprType::Binary:
    case ExprType::Ternary:
      return {replayElementwise(e, ins)};
    case ExprType::Broadcast:
    case ExprType::Expand:
    case ExprType::Reshape:
    case ExprType::Permute:
    case ExprType::Squeeze:
    case ExprType::Slice:
    case ExprType::Pad:
    case ExprType::Cat:
      return {replayShapeOp(e, ins)};
    case ExprType::Reduction: {
      auto* r = exprAs<ReductionOp>(e);
      return {reduction(r->op(), tensorIn(ins, 0), r->axes(), false,
                        e->output(0)->dtype())};
    }
    case ExprType::VarMean: {
      auto* v = exprAs<VarMeanOp>(e);
      auto [var, mean] =
          varMean(tensorIn(ins, 0), v->axes(), v->correction(), false);
      return {var, mean};
    }
    case ExprType::Matmul:
      return {matmul(tensorIn(ins, 0), tensorIn(ins, 1))};
    case ExprType::Linear:
      return {linear(tensorIn(ins, 0), tensorIn(ins, 1),
                     ins.size() > 2 ? ins[2] : nullptr)};
    case ExprType::Full:
      return {
          full(f, exprAs<FullOp>(e)->shape(), ins[0], e->output(0)->dtype())};
    case ExprType::Iota:
      return {iota(f, exprAs<IotaOp>(e)->length(), ins[0], ins[1],
                   e->output(0)->dtype())};
    case ExprType::LoadStore:
      return {exprAs<LoadStoreOp>(e)->op() == LoadStoreOpType::Set
                  ? set(ins[0])
                  : segmentSet(ins[0])};
    case ExprType::Gather: {
      const auto* g = exprAs<GatherOp>(e);
      return {gatherOp(g->op(), tensorIn(ins, 0), tensorIn(ins, 1), g->dim())};
    }
    case ExprType::Triu:
      return {triu(tensorIn(ins, 0), exprAs<TriuOp>(e)->diagonal())};
    case ExprType::Welford: {
      auto [avg, varSum, n] =
          welford(tensorIn(ins, 0), exprAs<WelfordOp>(e)->axes());
      return {avg, varSum, n};
    }
    case ExprType::Scan:
      return {cumsum(tensorIn(ins, 0), exprAs<ScanOp>(e)->dim())};
    case ExprType::Scatter:
      return {scatter(tensorIn(ins, 0), tensorIn(ins, 1), ins[2],
                      exprAs<ScatterOp>(e)->dim())};
    case ExprType::AtenCall: {
      const auto* c = exprAs<AtenCallOp>(e);
      std::vector<TensorView*> outs =
          atenCall(c->op(), ins, c->args(), c->results());
      return std::vector<Val*>(outs.begin(), outs.end());
    }
    case ExprType::Rng:
      return {replayRng(exprAs<RngOp>(e), ins)};
  }
  NVF_THROW(Internal, "replayExpr: unhandled op ", e->opName());
}

}  // namespace nvfuser
