#include "runtime/embedding_backward.h"

#include <algorithm>

#include "exceptions.h"

namespace nvfuser {

namespace {
// Half/BFloat16 gradients are summed in Float, as ATen's CUDA kernel does.
at::ScalarType accumulateType(at::ScalarType t) {
  return t == at::kHalf || t == at::kBFloat16 ? at::kFloat : t;
}
}  // namespace

void checkEmbeddingBackwardArgs(const at::Tensor& grad,
                                const at::Tensor& indices, int64_t numWeights) {
  const char* op = "embedding_dense_backward: ";
  NVF_CHECK(grad.defined() && indices.defined(), op,
            "grad_output and indices must be tensors");
  NVF_CHECK(
      indices.scalar_type() == at::kLong || indices.scalar_type() == at::kInt,
      op, "indices must be an int32 or int64 tensor, got ",
      c10::toString(indices.scalar_type()));
  // ATen's contract: grad viewed as [indices.numel(), D] (D = its last
  // dim). Symbolic sizes (a fake tensor's, in the meta kernel) compare too.
  NVF_CHECK(grad.dim() >= 1, op, "grad_output must have the embedding dim");
  const c10::SymInt dim = grad.sym_sizes().back();
  NVF_CHECK(grad.sym_numel() == indices.sym_numel() * dim, op, "grad_output ",
            grad.sym_sizes(), " must hold one row of its last dim per index (",
            indices.sym_numel(), " indices)");
  NVF_CHECK(grad.device() == indices.device(), op, "grad_output is on ",
            grad.device(), ", indices on ", indices.device());
  NVF_CHECK(numWeights >= 0, op, "num_weights must not be negative, got ",
            numWeights);
}

bool touchedRowsPays(int64_t numIds, int64_t dim) {
  // Measured on an H100 (embedding_backward_bench, session 26): 4096 x 2048
  // (8.4M) faster than ATen's, 8192 x 4096 (33.6M) slower; the Float
  // passes over the rows grow with this product, ATen's sort does not.
  constexpr int64_t kMaxRowElements = int64_t{1} << 23;
  return numIds <= kMaxRowElements / std::max<int64_t>(dim, 1);
}

at::Tensor embeddingBackwardByTouchedRows(const at::Tensor& grad,
                                          const at::Tensor& indices,
                                          int64_t numWeights,
                                          int64_t paddingIdx) {
  checkEmbeddingBackwardArgs(grad, indices, numWeights);
  const int64_t dim = grad.size(-1);
  // index_fill_ and index_copy_ take int64 ids only.
  const at::Tensor ids = indices.reshape({-1}).to(at::kLong);
  const at::Tensor rows = grad.reshape({ids.numel(), dim});  // dim may be 0
  const at::ScalarType acc = accumulateType(grad.scalar_type());
  at::Tensor out = at::zeros({numWeights, dim}, grad.options());
  if (acc == grad.scalar_type()) {
    // Nothing to round: the sums go straight into the zeroed gradient.
    out.index_add_(0, ids, rows);
  } else {
    // Each touched id gets a slot, the position of one of its occurrences
    // (whichever copy lands last), so the Float sums take one row per id
    // rather than a row per table entry, and only slotOfId's touched
    // entries are written or read.
    const int64_t count = ids.numel();
    at::Tensor slotOfId = at::empty({numWeights}, ids.options());
    slotOfId.index_copy_(0, ids, at::arange(count, ids.options()));
    const at::Tensor slots = slotOfId.index_select(0, ids);
    at::Tensor sums = at::zeros({count, dim}, grad.options().dtype(acc));
    sums.index_add_(0, slots, rows.to(acc));
    // A repeated id copies the same rounded sum again.
    out.index_copy_(0, ids, sums.index_select(0, slots).to(grad.scalar_type()));
  }
  if (paddingIdx >= 0 && paddingIdx < numWeights) {
    out.select(0, paddingIdx).zero_();  // ATen skips the padding row's ids
  }
  return out;
}

at::Tensor embeddingDenseBackward(const at::Tensor& grad,
                                  const at::Tensor& indices, int64_t numWeights,
                                  int64_t paddingIdx, bool scaleGradByFreq) {
  checkEmbeddingBackwardArgs(grad, indices, numWeights);
  // index_add_'s atomics sum in any order: deterministic mode keeps ATen's
  // sorted kernel, as does scaling by frequency (it needs the counts).
  const bool touchedRows = grad.is_cuda() && !scaleGradByFreq &&
                           !at::globalContext().deterministicAlgorithms() &&
                           touchedRowsPays(indices.numel(), grad.size(-1));
  if (touchedRows) {
    return embeddingBackwardByTouchedRows(grad, indices, numWeights,
                                          paddingIdx);
  }
  return at::embedding_dense_backward(grad, indices, numWeights, paddingIdx,
                                      scaleGradByFreq);
}

}  // namespace nvfuser
