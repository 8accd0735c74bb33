// Builder of fd.ops.aten_call: an ATen operator called by name inside a
// fusion (ir/aten_call.h). The Python layer checks the name and arguments
// against the operator's schema (the core never sees torch); this checks
// what the IR itself needs.
#pragma once

#include <string>
#include <vector>

#include "ir/aten_call.h"
#include "ir/fusion.h"

namespace nvfuser {

// `inputs` are the Vals that args of Kind::Input refer to (by index), at
// least one of them a tensor; one tensor per result, in order.
std::vector<TensorView*> atenCall(const std::string& op,
                                  const std::vector<Val*>& inputs,
                                  std::vector<AtenCallArg> args,
                                  std::vector<AtenCallResult> results);

}  // namespace nvfuser
