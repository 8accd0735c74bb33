// The embedding's weight gradient (aten::embedding_dense_backward) computed
// on the touched rows only. ATen's CUDA kernel fills the whole bf16
// gradient, radix-sorts the ids and sums each run of equal ids (about
// 214 us for a 32000 x 2048 table and 4096 ids on an H200); here the rows
// are summed with fp32 atomics (index_add_) into a buffer of which only
// the touched rows are ever written or read: no sort, no full-size fp32
// fill and no full-size cast.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

namespace nvfuser {

// Raises ValueError (NVF_CHECK) unless grad is [..., D] holding one row
// per index (ATen's view of it as [indices.numel(), D]), indices are int32 or
// int64 on grad's device and numWeights >= 0, as ATen's callers always pass
// them.
void checkEmbeddingBackwardArgs(const at::Tensor& grad,
                                const at::Tensor& indices, int64_t numWeights);

// The [numWeights, D] gradient of grad's dtype: row w is the sum of the
// grad rows whose id is w (accumulated in Float for Half/BFloat16), 0 for
// untouched rows and for paddingIdx when it is in [0, numWeights). Any
// device; on CUDA the sums use atomics, so their order (and the rounding
// of Float sums) is not deterministic.
at::Tensor embeddingBackwardByTouchedRows(const at::Tensor& grad,
                                          const at::Tensor& indices,
                                          int64_t numWeights,
                                          int64_t paddingIdx);

// Whether the touched-rows sums of numIds rows of dim elements are expected
// to beat ATen's kernel: its Float passes over the rows cost in proportion
// to numIds * dim, ATen's sort does not (at most 2^23 elements).
bool touchedRowsPays(int64_t numIds, int64_t dim);

// aten::embedding_dense_backward's result: the touched-rows sums for CUDA
// tensors without scale_grad_by_freq while deterministic algorithms are
// off and touchedRowsPays, ATen's own kernel (as eager calls it)
// otherwise.
at::Tensor embeddingDenseBackward(const at::Tensor& grad,
                                  const at::Tensor& indices, int64_t numWeights,
                                  int64_t paddingIdx, bool scaleGradByFreq);

}  // namespace nvfuser
