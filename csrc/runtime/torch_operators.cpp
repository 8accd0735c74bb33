#include "runtime/torch_operators.h"

#include <ATen/ATen.h>
#include <torch/library.h>

#include <vector>

#include "runtime/embedding_backward.h"

namespace nvfuser {

void linkTorchOperators() {}

bool isOwnTorchOperator(const std::string& qualifiedName) {
  const std::string name = qualifiedName.substr(0, qualifiedName.find('.'));
  return name == "nvfuser::embedding_dense_backward";
}

namespace {
// The result's shape and dtype alone, for tracing with fake tensors
// (symbolic sizes stay symbolic).
at::Tensor embeddingDenseBackwardMeta(const at::Tensor& grad,
                                      const at::Tensor& indices,
                                      int64_t numWeights,
                                      int64_t /*paddingIdx*/,
                                      bool /*scaleGradByFreq*/) {
  checkEmbeddingBackwardArgs(grad, indices, numWeights);
  const std::vector<c10::SymInt> sizes = {c10::SymInt(numWeights),
                                          grad.sym_size(-1)};
  return at::empty_symint(sizes, grad.options());
}
}  // namespace

}  // namespace nvfuser

TORCH_LIBRARY(nvfuser, m) {
  m.def(
      "embedding_dense_backward(Tensor grad_output, Tensor indices, "
      "int num_weights, int padding_idx, bool scale_grad_by_freq) -> Tensor");
}

// One kernel for every backend (it picks its algorithm by device); Meta's
// own kernel takes precedence for meta and fake tensors.
TORCH_LIBRARY_IMPL(nvfuser, CompositeExplicitAutograd, m) {
  m.impl("embedding_dense_backward", &nvfuser::embeddingDenseBackward);
}

TORCH_LIBRARY_IMPL(nvfuser, Meta, m) {
  m.impl("embedding_dense_backward", &nvfuser::embeddingDenseBackwardMeta);
}

// Autograd passes through, as it does for the CPU and CUDA keys in torch
// 1.13, which has no autograd fallback for meta tensors.
TORCH_LIBRARY_IMPL(nvfuser, AutogradMeta, m) {
  m.impl("embedding_dense_backward", torch::CppFunction::makeFallthrough());
}
