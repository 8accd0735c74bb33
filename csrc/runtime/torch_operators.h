// Operators this library registers with PyTorch's dispatcher (namespace
// nvfuser::), for fusions to call through aten_call:
//   nvfuser::embedding_dense_backward(Tensor grad_output, Tensor indices,
//       int num_weights, int padding_idx, bool scale_grad_by_freq) -> Tensor
//   (runtime/embedding_backward.h), with a meta kernel for fake tensors.
#pragma once

#include <string>

namespace nvfuser {

// Whether "ns::name[.overload]" names an operator above: those are
// registered for the life of the process (a Python library fragment's
// nvfuser:: operator may be dropped again).
bool isOwnTorchOperator(const std::string& qualifiedName);

// Does nothing: the registration runs when the object file is loaded, and
// a static library's object file is linked in only when something calls
// into it. The Python module and the runtime tests call this.
void linkTorchOperators();

}  // namespace nvfuser
