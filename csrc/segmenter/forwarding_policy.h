// Which ops input forwarding may replicate. One table, each entry with the
// reason it is in or out (FORWARDING.md).
#pragma once

#include "options.h"
#include "scheduler/decision.h"

namespace nvfuser {

class Expr;

enum class ForwardingPolicy {
  Off,        // NVFUSER_DISABLE=input_forwarding
  UnaryOnly,  // NVFUSER_DISABLE=extended_input_forwarding (nvFuser's set)
  Extended,   // default
};

const char* toString(ForwardingPolicy p);
ForwardingPolicy forwardingPolicyFrom(const Options& options);

// Whether e may be replicated into the segments that consume its output.
Decision isForwardableOp(const Expr* e, ForwardingPolicy policy);
// Whether e is a factory whose output can seed a chain (full; iota too when
// extended).
bool isForwardableFactory(const Expr* e, ForwardingPolicy policy);

}  // namespace nvfuser
