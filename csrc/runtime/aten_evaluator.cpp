#include "runtime/aten_evaluator.h"

#include <c10/util/Exception.h>

#include "exceptions.h"
#include "ir/aten_call.h"
#include "ir/exprs.h"
#include "runtime/aten_call_eval.h"
#include "runtime/aten_ops.h"

namespace nvfuser {

void AtenEvaluator::bind(const Val* v, const RuntimeArg& arg) {
  if (arg.tensor) {
    bindTensor(v, *arg.tensor);
    return;
  }
  NVF_ASSERT(arg.scalar.has_value(), "scalar input without a value");
  at::Tensor t = scalarTensor(*arg.scalar, v->dtype(), device_);
  values_[v] = t;
  boundScalars_[v] = *arg.scalar;
}

std::vector<std::optional<ScalarValue>> AtenEvaluator::hostScalars(
    const Expr* e) const {
  std::vector<std::optional<ScalarValue>> out;
  for (const Val* v : e->inputs()) {
    auto it = boundScalars_.find(v);
    if (it != boundScalars_.end()) {
      out.emplace_back(it->second);
    } else if (!v->isTensor() && v->asScalar()->isConst()) {
      out.push_back(v->asScalar()->value());
    } else {
      out.emplace_back(std::nullopt);
    }
  }
  return out;
}

void AtenEvaluator::bindTensor(const Val* v, at::Tensor t) {
  values_[v] = std::move(t);
}

const at::Tensor& AtenEvaluator::value(const Val* v) {
  auto it = values_.find(v);
  if (it != values_.end()) {
    return it->second;
  }
  NVF_ASSERT(!v->isTensor() && v->asScalar()->isConst(), "evaluator: value ",
             v->ref(), " is not bound");
  at::Tensor t = scalarTensor(*v->asScalar()->value(), v->dtype(), device_);
  return values_.emplace(v, t).first->second;
}

void AtenEvaluator::evaluate(const Expr* e) {
  std::vector<at::Tensor> in;
  for (const Val* v : e->inputs()) {
    in.push_back(value(v));
  }
  try {
    if (const auto* vm = exprAs<VarMeanOp>(e)) {
      auto [var, mean] = evalVarMean(*vm, in[0]);
      values_[e->output(0)] = var;
      values_[e->output(1)] = mean;
      return;
    }
    if (const auto* call = exprAs<AtenCallOp>(e)) {
      std::vector<at::Tensor> outs = evalAtenCall(*call, in, hostScalars(e));
      for (size_t k = 0; k < outs.size(); ++k) {
        values_[e->output(k)] = std::move(outs[k]);
      }
      return;
    }
    at::Tensor out = evalExpr(*e, in, device_);
    const Val* o = e->output(0);
    NVF_ASSERT(out.scalar_type() == toAtenType(o->dtype()),
               "evaluator: ", e->opName(), " produced ",
               c10::toString(out.scalar_type()), " for ", o->toString());
    if (o->isTensor()) {
      NVF_ASSERT(out.sizes().vec() == concreteShape(o->asTensor()),
                 "evaluator: ", e->opName(), " produced sizes ", out.sizes(),
                 " for ", o->toString());
    }
    values_[o] = std::move(out);
  } catch (const c10::Error& err) {
    NVF_THROW(Runtime, e->opName(), " failed while evaluating ",
              e->output(0)->ref(), ": ", err.what_without_backtrace());
  }
}

std::vector<at::Tensor> AtenEvaluator::run(const Fusion& fusion,
                                           const std::vector<RuntimeArg>& args,
                                           at::Device device) {
  AtenEvaluator ev(device);
  NVF_ASSERT(args.size() == fusion.inputs().size());
  for (size_t i = 0; i < args.size(); ++i) {
    ev.bind(fusion.inputs()[i], args[i]);
  }
  for (const Expr* e : fusion.liveExprs()) {
    ev.evaluate(e);
  }
  std::vector<at::Tensor> outs;
  for (const Val* o : fusion.outputs()) {
    outs.push_back(ev.value(o));
  }
  return outs;
}

}  // namespace nvfuser
