#include "ir/python_printer.h"

#include <map>
#include <sstream>

#include "exceptions.h"
#include "ir/aten_call.h"
#include "ir/exprs.h"
#include "ir/list_string.h"
#include "ir/more_exprs.h"
#include "ir/rng_op.h"

namespace nvfuser {

namespace {

class PythonPrinter {
 public:
  explicit PythonPrinter(const Fusion& f) : f_(f) {}

  std::string print() {
    os_ << "import torch\nfrom nvfuser import FusionDefinition, DataType\n\n"
        << "with FusionDefinition() as fd:\n";
    for (const Val* in : f_.inputs()) {
      if (in->isTensor()) {
        const TensorView* tv = in->asTensor();
        std::vector<std::string> shape;
        std::vector<std::string> contiguity;
        for (const IterDomain& id : tv->domain()) {
          Extent e = f_.canonical(id.logicalExtent());
          bool bcast = id.isBroadcast();
          shape.push_back(bcast && !id.hasExpanded
                              ? "1"
                              : (e.isConst() ? std::to_string(e.value) : "-1"));
          contiguity.push_back(bcast ? "None" : "True");
        }
        line(name(in) + " = fd.define_tensor(shape=" + listToString(shape) +
             ", contiguity=" + listToString(contiguity) + ", dtype=DataType." +
             toString(in->dtype()) + ")");
      } else {
        line(name(in) + " = fd.define_scalar(None, dtype=DataType." +
             toString(in->dtype()) + ")");
      }
    }
    for (const Expr* e : f_.liveExprs()) {
      printExpr(e);
    }
    for (const Val* o : f_.outputs()) {
      line("fd.add_output(" + name(o) + ")");
    }
    return os_.str();
  }

 private:
  void line(const std::string& s) { os_ << "    " << s << "\n"; }

  std::string name(const Val* v) {
    if (!v->isTensor() && v->asScalar()->isConst()) {
      const ScalarValue& value = *v->asScalar()->value();
      std::string literal = scalarToPythonLiteral(value);
      // A bare literal would take the literal's dtype (3 is Int).
      if (v->dtype() == pythonLiteralDtype(value)) {
        return literal;
      }
      return "fd.define_scalar(" + literal + ", dtype=DataType." +
             toString(v->dtype()) + ")";
    }
    return (v->isTensor() ? "t" : "s") + std::to_string(v->name());
  }

  // A 0-dim tensor broadcast for an op promoted as 0-dim (Float[n] *
  // Double[] computes in Float); the printed broadcast has dims and would
  // promote as such, so the script casts it to the compute type first
  // (the op converts it so anyway).
  std::string operandName(const Expr* e, size_t i) {
    const Val* v = e->input(i);
    const bool condition = e->type() == ExprType::Ternary &&
                           exprAs<TernaryOp>(e)->op() == TernaryOpType::Where &&
                           i == 0;
    const DataType compute = e->type() == ExprType::Binary
                                 ? exprAs<BinaryOp>(e)->computeType()
                                 : exprAs<TernaryOp>(e)->computeType();
    const Expr* def = v->definition();
    if (condition || v->dtype() == compute || def == nullptr ||
        def->type() != ExprType::Broadcast ||
        !def->input(0)->asTensor()->noReductions().empty()) {
      return name(v);
    }
    return "fd.ops.cast(" + name(v) + ", dtype=DataType." + toString(compute) +
           ")";
  }

  static std::vector<int64_t> dimsOf(const std::vector<bool>& mask) {
    std::vector<int64_t> out;
    for (size_t i = 0; i < mask.size(); ++i) {
      if (mask[i]) {
        out.push_back(static_cast<int64_t>(i));
      }
    }
    return out;
  }

  void printExpr(const Expr* e) {
    std::string x = e->inputs().empty() ? "" : name(e->input(0));
    std::string out = name(e->output(0));
    std::string call;
    switch (e->type()) {
      case ExprType::Unary:
        call = e->opName() == "cast"
                   ? "fd.ops.cast(" + x + ", dtype=DataType." +
                         toString(e->output(0)->dtype()) + ")"
                   : "fd.ops." + e->opName() + "(" + x + ")";
        break;
      case ExprType::Binary:
      case ExprType::Ternary: {
        std::vector<std::string> args;
        for (size_t i = 0; i < e->inputs().size(); ++i) {
          args.push_back(operandName(e, i));
        }
        std::string joined = listToString(args);
        call = "fd.ops." + e->opName() + "(" +
               joined.substr(1, joined.size() - 2) + ")";
        break;
      }
      case ExprType::Broadcast: {
        std::vector<std::string> mask;
        for (bool b : exprAs<BroadcastOp>(e)->isBroadcastDim()) {
          mask.push_back(b ? "True" : "False");
        }
        call = "fd.ops.broadcast(" + x + ", " + listToString(mask) + ")";
        break;
      }
      case ExprType::Expand:
        call = "fd.ops.expand(" + x +
               ", shape=" + listToString(exprAs<ExpandOp>(e)->shape()) + ")";
        break;
      case ExprType::Reshape:
        call = "fd.ops.reshape(" + x +
               ", new_shape=" + listToString(exprAs<ReshapeOp>(e)->newShape()) +
               ")";
        break;
      case ExprType::Permute:
        call = "fd.ops.permute(" + x +
               ", dims=" + listToString(exprAs<PermuteOp>(e)->perm()) + ")";
        break;
      case ExprType::Squeeze:
        call = "fd.ops.squeeze(" + x + ", dims=" +
               listToString(dimsOf(exprAs<SqueezeOp>(e)->isSqueezed())) + ")";
        break;
      case ExprType::Slice: {
        const auto* op = exprAs<SliceOp>(e);
        call = "fd.ops.slice(" + x + ", " + listToString(op->starts()) + ", " +
               listToString(op->stops()) + ", " + listToString(op->steps()) +
               ")";
        break;
      }
      case ExprType::Pad:
        call = "fd.ops.pad(" + x + ", " +
               listToString(exprAs<PadOp>(e)->flatWidths()) + ", " +
               name(e->input(1)) + ")";
        break;
      case ExprType::Cat: {
        std::vector<std::string> parts;
        for (const Val* v : e->inputs()) {
          parts.push_back(name(v));
        }
        call = "fd.ops.cat(" + listToString(parts) +
               ", dim=" + std::to_string(exprAs<CatOp>(e)->dim()) + ")";
        break;
      }
      case ExprType::Reduction:
        call = "fd.ops." + e->opName() + "(" + x +
               ", dims=" + listToString(exprAs<ReductionOp>(e)->axes()) +
               ", keepdim=False, dtype=DataType." +
               toString(e->output(0)->dtype()) + ")";
        break;
      case ExprType::VarMean: {
        const auto* vm = exprAs<VarMeanOp>(e);
        line(out + ", " + name(e->output(1)) + " = fd.ops.var_mean(" + x +
             ", dims=" + listToString(vm->axes()) +
             ", correction=" + std::to_string(vm->correction()) + ")");
        return;
      }
      case ExprType::Matmul:
        call = "fd.ops.matmul(" + x + ", " + name(e->input(1)) + ")";
        break;
      case ExprType::Linear:
        call = "fd.ops.linear(" + x + ", " + name(e->input(1)) +
               (e->inputs().size() > 2 ? ", " + name(e->input(2)) : "") + ")";
        break;
      case ExprType::Full:
        call = "fd.ops.full(shape=" + listToString(exprAs<FullOp>(e)->shape()) +
               ", fill_value=" + x + ", dtype=DataType." +
               toString(e->output(0)->dtype()) + ")";
        break;
      case ExprType::Iota:
        call = "fd.ops.iota(" + std::to_string(exprAs<IotaOp>(e)->length()) +
               ", " + x + ", " + name(e->input(1)) + ", dtype=DataType." +
               toString(e->output(0)->dtype()) + ")";
        break;
      case ExprType::LoadStore:
        call = "fd.ops." + e->opName() + "(" + x + ")";
        break;
      case ExprType::Gather:
        call = "fd.ops." + e->opName() + "(" + x + ", " + name(e->input(1)) +
               ", dim=" + std::to_string(exprAs<GatherOp>(e)->dim()) + ")";
        break;
      case ExprType::Triu:
        call = "fd.ops.triu(" + x +
               ", diagonal=" + std::to_string(exprAs<TriuOp>(e)->diagonal()) +
               ")";
        break;
      case ExprType::Welford:
        line(out + ", " + name(e->output(1)) + ", " + name(e->output(2)) +
             " = fd.ops.welford(" + x +
             ", dims=" + listToString(exprAs<WelfordOp>(e)->axes()) + ")");
        return;
      case ExprType::Scan:
        call = "fd.ops.cumsum(" + x +
               ", dim=" + std::to_string(exprAs<ScanOp>(e)->dim()) + ")";
        break;
      case ExprType::AtenCall: {
        std::vector<std::string> outs;
        for (const Val* o : e->outputs()) {
          outs.push_back(name(o));
        }
        std::string lhs = listToString(outs);
        line(lhs.substr(1, lhs.size() - 2) + ", = " +
             atenCallToPython(*exprAs<AtenCallOp>(e),
                              [this](const Val* v) { return name(v); }));
        return;
      }
      case ExprType::Rng:
        call = rngCall(exprAs<RngOp>(e));
        break;
      case ExprType::Scatter:
        call = "fd.ops.scatter(" + x + ", " + name(e->input(1)) + ", " +
               name(e->input(2)) +
               ", dim=" + std::to_string(exprAs<ScatterOp>(e)->dim()) + ")";
        break;
    }
    line(out + " = " + call);
  }

  // fd.ops.uniform(a, b, shape=[...], rng_seed=s, rng_offset=o, dtype=...)
  // or fd.ops.rand_like(t, ...). rng_index only where the script would
  // give the op another stream: after unused random ops were dropped, in
  // a segment.
  std::string rngCall(const RngOp* r) {
    std::string call = "fd.ops." + r->opName() + "(";
    const DataType dtype = r->output(0)->dtype();
    if (r->isLike()) {
      call += name(r->input(0));
    } else {
      call += name(r->param(0)) + ", " + name(r->param(1)) +
              ", shape=" + listToString(r->shape());
    }
    if (r->hasSeed()) {
      call +=
          ", rng_seed=" + name(r->seed()) + ", rng_offset=" + name(r->offset());
    }
    if (!r->isLike() || dtype != r->input(0)->dtype()) {
      call += ", dtype=DataType." + std::string(toString(dtype));
    }
    if (r->index() != rngPrinted_++) {
      call += ", rng_index=" + std::to_string(r->index());
    }
    return call + ")";
  }

  const Fusion& f_;
  std::ostringstream os_;
  int64_t rngPrinted_ = 0;  // random ops printed so far
};

}  // namespace

std::string fusionToPython(const Fusion& fusion) {
  return PythonPrinter(fusion).print();
}

}  // namespace nvfuser
