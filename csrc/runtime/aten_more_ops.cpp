#include "runtime/aten_more_ops.h"

#include "exceptions.h"
#include "ir/val.h"
#include "runtime/device_index_errors.h"
#include "runtime/runtime_args.h"

namespace nvfuser {

at::Tensor evalTriu(const TriuOp& e, const at::Tensor& in) {
  return at::triu(in, e.diagonal());
}

at::Tensor evalCumsum(const ScanOp& e, const at::Tensor& in) {
  const at::ScalarType t = toAtenType(e.output(0)->dtype());
  if (in.dim() == 0) {  // cumsum of a 0-dim tensor along 0 is the value
    return in.to(t);
  }
  // Half/BFloat16 sums accumulate in Float, each prefix rounded once (as
  // torch's CUDA kernel; its CPU kernel has no Half).
  const bool reduced = isReducedFloat(e.output(0)->dtype());
  at::Tensor r = at::cumsum(in, e.dim(), reduced ? at::kFloat : t);
  return reduced ? r.to(t) : r;
}

void checkIndexRange(const at::Tensor& index, const at::Tensor& valid,
                     const std::string& op, int64_t dim,
                     const std::string& tensor, int64_t size,
                     const std::string& computing) {
  if (valid.all().item<bool>()) {
    return;
  }
  const int64_t bad =
      index.masked_select(valid.logical_not())[0].item<int64_t>();
  NVF_THROW(Index, op, ": index ", bad, " is out of range for dim ", dim,
            " of ", tensor, ", of size ", size, " (computing ", computing, ")");
}

at::Tensor evalScatter(const ScatterOp& e, const std::vector<at::Tensor>& in) {
  const int64_t dim = e.dim();
  const at::Tensor& arg = in[0];
  at::Tensor index = in[1].to(arg.options().dtype(at::kLong));
  const int64_t size = arg.size(dim);
  at::Tensor valid = (index >= 0) & (index < size);
  if (arg.is_cpu()) {
    checkIndexRange(index, valid, "scatter", e.dim(), e.input(0)->ref(), size,
                    e.output(0)->ref());
  }
  at::Tensor target = arg;
  if (!arg.is_cpu()) {
    // Out-of-range writes go to one extra slot along dim, cut off below,
    // and set the index error word the next execute raises from.
    device_index_errors::wordOn(arg.device())
        .bitwise_or_(valid.logical_not().any().to(at::kInt));
    std::vector<int64_t> slot = arg.sizes().vec();
    slot[size_t(dim)] = 1;
    target = at::cat({arg, at::zeros(slot, arg.options())}, dim);
    index = at::where(valid, index, at::full_like(index, size));
  }
  at::Tensor r;
  if (e.input(2)->isTensor()) {
    r = at::scatter(target, dim, index, in[2].to(arg.device()));
  } else {
    r = at::scatter(target, dim, index, in[2].item());
  }
  return arg.is_cpu() ? r : r.narrow(dim, 0, size).contiguous();
}

}  // namespace nvfuser
