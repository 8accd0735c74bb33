#include "segmenter/forwarding_policy.h"

#include "analysis/reshape_analysis.h"
#include "analysis/tensor_shape.h"
#include "ir/exprs.h"
#include "ir/fusion.h"
#include "scheduler/generated_kernel_rules.h"
#include "scheduler/scheduler.h"

namespace nvfuser {

const char* toString(ForwardingPolicy p) {
  switch (p) {
    case ForwardingPolicy::Off:
      return "off";
    case ForwardingPolicy::UnaryOnly:
      return "unary-only";
    case ForwardingPolicy::Extended:
      return "extended";
  }
  return "?";
}

ForwardingPolicy forwardingPolicyFrom(const Options& options) {
  if (options.disabled("input_forwarding")) {
    return ForwardingPolicy::Off;
  }
  if (options.disabled("extended_input_forwarding")) {
    return ForwardingPolicy::UnaryOnly;
  }
  return ForwardingPolicy::Extended;
}

namespace {
Decision extendedOnly(const Expr* e, ForwardingPolicy policy) {
  if (policy == ForwardingPolicy::Extended) {
    return Decision::yes();
  }
  return Decision::no(exprRef(e) +
                      " is forwarded only by the extended "
                      "policy");
}

Decision squeezeOfSizeOneDims(const SqueezeOp* op) {
  const TensorView* in = op->input(0)->asTensor();
  std::vector<int64_t> shape = concreteShape(in);
  for (size_t i = 0; i < shape.size(); ++i) {
    if (op->isSqueezed()[i] && shape[i] != 1) {
      return Decision::no(exprRef(op) + " squeezes an expanded dim");
    }
  }
  return Decision::yes();
}
}  // namespace

Decision isForwardableOp(const Expr* e, ForwardingPolicy policy) {
  if (policy == ForwardingPolicy::Off) {
    return Decision::no("input forwarding is disabled");
  }
  if (const Val* v = valueWithoutKernelType(e)) {
    // Such an op is an expr_eval segment of its own (ATen), which takes no
    // prologue: replicating it would only move it into a kernel that
    // cannot compute it.
    return Decision::no(exprRef(e) + " has " + toString(v->dtype()) +
                        " values (an ATen op, never forwarded)");
  }
  switch (e->type()) {
    case ExprType::Unary:
      // Every unary op, casts included, is cheap to recompute per element.
      return Decision::yes();
    case ExprType::Broadcast:
    case ExprType::Expand:
      // Inserting or expanding broadcast dims reads nothing new.
      return extendedOnly(e, policy);
    case ExprType::Squeeze: {
      Decision d = extendedOnly(e, policy);
      return d ? squeezeOfSizeOneDims(exprAs<SqueezeOp>(e)) : d;
    }
    case ExprType::LoadStore:
      if (exprAs<LoadStoreOp>(e)->op() == LoadStoreOpType::SegmenterSet) {
        return Decision::no(exprRef(e) + " is a segment boundary");
      }
      return extendedOnly(e, policy);
    case ExprType::Reshape: {
      Decision d = extendedOnly(e, policy);
      if (!d) {
        return d;
      }
      ReshapeClassification c = classifyReshape(exprAs<ReshapeOp>(e));
      if (c.kind != ReshapeKind::MergeOnly) {
        // Split output dims lose the link to the input dims a scheduler
        // needs to index the input.
        return Decision::no(exprRef(e) + " is a split reshape");
      }
      if (c.concretizesExpandedDim) {
        return Decision::no(exprRef(e) +
                            " turns an expanded broadcast into a real dim");
      }
      return Decision::yes();
    }
    case ExprType::Permute:
      return Decision::no(exprRef(e) +
                          " changes the access pattern "
                          "(permute is not forwarded)");
    case ExprType::Slice:
    case ExprType::Pad:
    case ExprType::Cat:
      return Decision::no(exprRef(e) + " is a resize op (never forwarded)");
    case ExprType::Gather:
      // Two tensor inputs, and each output element is a load at an index
      // read at run time: replicating it into every consumer would repeat
      // the random reads.
      return Decision::no(exprRef(e) + " is an indexed load (never forwarded)");
    case ExprType::Rng:
      // Not a single-input op either; said explicitly: replicated into
      // several segments it would draw its numbers once per segment (the
      // same numbers, at the cost of the generator each time).
      return Decision::no(exprRef(e) +
                          " draws random numbers (never forwarded)");
    default:
      return Decision::no(exprRef(e) + " is not a trivial single-input op");
  }
}

bool isForwardableFactory(const Expr* e, ForwardingPolicy policy) {
  if (policy == ForwardingPolicy::Off || valueWithoutKernelType(e) != nullptr) {
    return false;
  }
  if (e->type() == ExprType::Full) {
    return true;
  }
  return e->type() == ExprType::Iota && policy == ForwardingPolicy::Extended;
}

}  // namespace nvfuser
