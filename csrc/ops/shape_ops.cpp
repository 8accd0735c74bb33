#include "ops/shape_ops.h"

#include <algorithm>
#include <numeric>

#include "exceptions.h"
#include "ir/checked_arith.h"
#include "ir/list_string.h"
#include "ops/arith.h"
#include "ops/dtype_rules.h"
#include "ops/op_utils.h"

namespace nvfuser {

namespace {
IterDomain domainForSize(int64_t s) {
  return s == 1 ? IterDomain::broadcast()
                : IterDomain::iteration(Extent::constant(s));
}
}  // namespace

TensorView* broadcast(TensorView* in, const std::vector<bool>& isBroadcastDim) {
  Fusion* f = commonFusion({in}, "broadcast");
  std::vector<IterDomain> inDom = in->noReductions();
  int64_t kept =
      std::count(isBroadcastDim.begin(), isBroadcastDim.end(), false);
  NVF_CHECK(kept == static_cast<int64_t>(inDom.size()),
            "broadcast: ", valDescription(in), " has ", inDom.size(),
            " dims but is_broadcast_dim keeps ", kept);
  std::vector<IterDomain> out;
  size_t next = 0;
  for (bool b : isBroadcastDim) {
    out.push_back(b ? IterDomain::broadcast() : inDom[next++]);
  }
  TensorView* tv = f->newTensor(std::move(out), in->dtype());
  f->addExpr<BroadcastOp>(tv, in, isBroadcastDim);
  return tv;
}

TensorView* broadcastInDim(TensorView* in,
                           const std::vector<int64_t>& outputShape,
                           const std::vector<int64_t>& broadcastDims) {
  commonFusion({in}, "broadcast_in_dim");
  const int64_t inRank = in->nDims();
  const int64_t outRank = static_cast<int64_t>(outputShape.size());
  NVF_CHECK(static_cast<int64_t>(broadcastDims.size()) == inRank,
            "broadcast_in_dim: broadcast_dims has ", broadcastDims.size(),
            " entries but the input ", valDescription(in), " has ", inRank,
            " dims");
  NVF_CHECK(outRank >= inRank, "broadcast_in_dim: output shape rank ", outRank,
            " is smaller than the input rank ", inRank);
  std::vector<bool> mask(outRank, true);
  for (int64_t i = 0; i < inRank; ++i) {
    int64_t d = broadcastDims[i];
    NVF_CHECK(d >= 0 && d < outRank, "broadcast_in_dim: broadcast_dims[", i,
              "] = ", d, " is out of range for output rank ", outRank);
    NVF_CHECK(i == 0 || d > broadcastDims[i - 1],
              "broadcast_in_dim: broadcast_dims must be strictly increasing");
    mask[d] = false;
  }
  TensorView* b = inRank == outRank ? in : broadcast(in, mask);
  std::vector<int64_t> expandShape(outRank, -1);
  bool needExpand = false;
  for (int64_t d = 0; d < outRank; ++d) {
    const IterDomain& id = b->axis(d);
    int64_t target = outputShape[d];
    NVF_CHECK(target >= -1, "broadcast_in_dim: shape[", d, "] = ", target,
              " is invalid");
    if (id.isBroadcast() && target != -1 && target != 1) {
      expandShape[d] = target;
      needExpand = true;
    } else if (!id.isBroadcast() && target != -1) {
      Extent e = b->fusion()->canonical(id.extent);
      NVF_CHECK(!e.isConst() || e.value == target, "broadcast_in_dim: input ",
                valDescription(in), " has a dim of size ", e.toString(),
                " at output dim ", d, ", which cannot be broadcast to ", target,
                " (only size-1 dims can be expanded)");
      expandShape[d] = target;
      needExpand = needExpand || !e.isConst();
    }
  }
  return needExpand ? expand(b, expandShape) : (b == in ? set(in) : b);
}

TensorView* expand(TensorView* in, const std::vector<int64_t>& shape) {
  Fusion* f = commonFusion({in}, "expand");
  std::vector<IterDomain> dom = in->noReductions();
  NVF_CHECK(shape.size() == dom.size(), "expand: shape has ", shape.size(),
            " entries but ", valDescription(in), " has ", dom.size(), " dims");
  std::vector<IterDomain> out;
  for (size_t i = 0; i < dom.size(); ++i) {
    const IterDomain& id = dom[i];
    int64_t s = shape[i];
    NVF_CHECK(s >= -1, "expand: shape[", i, "] = ", s, " is invalid");
    if (s == -1) {
      out.push_back(id);
    } else if (id.isBroadcast()) {
      Extent prev = f->canonical(id.expanded);
      NVF_CHECK(!id.hasExpanded || !prev.isConst() || prev.value == s,
                "expand: dim ", i, " of ", valDescription(in),
                " is already expanded to a different size than ", s);
      out.push_back(s == 1
                        ? IterDomain::broadcast()
                        : IterDomain::expandedBroadcast(Extent::constant(s)));
    } else {
      Extent e = f->canonical(id.extent);
      NVF_CHECK(!e.isConst() || e.value == s, "expand: dim ", i, " of ",
                valDescription(in), " has size ", e.toString(),
                " and cannot be expanded to ", s,
                " (only broadcast dims can be expanded)");
      out.push_back(IterDomain::iteration(f->unify(e, Extent::constant(s))));
    }
  }
  TensorView* tv = f->newTensor(std::move(out), in->dtype());
  f->addExpr<ExpandOp>(tv, in, shape);
  return tv;
}

TensorView* reshape(TensorView* in, const std::vector<int64_t>& newShape) {
  Fusion* f = commonFusion({in}, "reshape");
  std::vector<IterDomain> dom = in->noReductions();
  bool allConst = true;
  std::vector<int64_t> inSizes;
  for (const IterDomain& id : dom) {
    Extent e = f->canonical(id.logicalExtent());
    allConst = allConst && e.isConst();
    inSizes.push_back(e.isConst() ? e.value : 1);
  }
  // Sizes unified with other tensors' static sizes may not fit together.
  const std::optional<int64_t> inNumel = checkedProduct(inSizes);
  NVF_CHECK(inNumel.has_value(), "reshape: ", valDescription(in),
            " has more than 2^63 - 1 elements");
  const int64_t numel = *inNumel;
  int64_t inferDim = -1;
  std::vector<int64_t> knownSizes;
  for (size_t i = 0; i < newShape.size(); ++i) {
    if (newShape[i] == -1) {
      NVF_CHECK(inferDim < 0, "reshape: new_shape ",
                "has more than one -1 entry");
      inferDim = static_cast<int64_t>(i);
      continue;
    }
    NVF_CHECK(newShape[i] >= 0, "reshape: new_shape[", i, "] = ", newShape[i],
              " is invalid");
    knownSizes.push_back(newShape[i]);
  }
  // Unchecked, 8 * (2^61 + 3) wraps to 24 and passes for 24 elements.
  std::optional<int64_t> knownProduct = checkedProduct(knownSizes);
  NVF_CHECK(knownProduct.has_value(), "reshape: new_shape ",
            listToString(newShape), " has more than 2^63 - 1 elements");
  const int64_t known = *knownProduct;
  std::vector<IterDomain> out;
  for (size_t i = 0; i < newShape.size(); ++i) {
    if (static_cast<int64_t>(i) != inferDim) {
      out.push_back(domainForSize(newShape[i]));
    } else if (allConst) {
      NVF_CHECK(known != 0 && numel % known == 0, "reshape: cannot infer the ",
                "-1 entry of new_shape: ", valDescription(in), " has ", numel,
                " elements");
      out.push_back(domainForSize(numel / known));
    } else {
      out.push_back(IterDomain::iteration(f->newSymbolicExtent()));
    }
  }
  if (allConst && inferDim < 0) {
    NVF_CHECK(known == numel, "reshape: cannot reshape ", valDescription(in),
              " with ", numel, " elements to new_shape with ", known,
              " elements");
  }
  TensorView* tv = f->newTensor(std::move(out), in->dtype());
  f->addExpr<ReshapeOp>(tv, in, newShape);
  return tv;
}

TensorView* permute(TensorView* in, const std::vector<int64_t>& dims) {
  Fusion* f = commonFusion({in}, "permute");
  std::vector<IterDomain> dom = in->noReductions();
  NVF_CHECK(dims.size() == dom.size(), "permute: dims has ", dims.size(),
            " entries but ", valDescription(in), " has ", dom.size(), " dims");
  std::vector<int64_t> perm =
      normalizeDims(dims, static_cast<int64_t>(dom.size()), "permute");
  std::vector<IterDomain> out;
  for (int64_t p : perm) {
    out.push_back(dom[p]);
  }
  TensorView* tv = f->newTensor(std::move(out), in->dtype());
  f->addExpr<PermuteOp>(tv, in, perm);
  return tv;
}

TensorView* squeeze(TensorView* in, const std::vector<int64_t>& dims) {
  Fusion* f = commonFusion({in}, "squeeze");
  std::vector<IterDomain> dom = in->noReductions();
  const int64_t rank = static_cast<int64_t>(dom.size());
  std::vector<bool> mask(rank, false);
  for (int64_t d : normalizeDims(dims, rank, "squeeze")) {
    const IterDomain& id = dom[d];
    Extent e = f->canonical(id.logicalExtent());
    bool sizeOne =
        (id.isBroadcast() && !id.hasExpanded) || (e.isConst() && e.value == 1);
    NVF_CHECK(sizeOne, "squeeze: dim ", d, " of ", valDescription(in),
              " has size ", e.toString(), "; only size-1 dims can be squeezed");
    mask[d] = true;
  }
  std::vector<IterDomain> out;
  for (int64_t i = 0; i < rank; ++i) {
    if (!mask[i]) {
      out.push_back(dom[i]);
    }
  }
  TensorView* tv = f->newTensor(std::move(out), in->dtype());
  f->addExpr<SqueezeOp>(tv, in, mask);
  return tv;
}

TensorView* slice(TensorView* in, const std::vector<int64_t>& starts,
                  const std::vector<int64_t>& stops,
                  const std::vector<int64_t>& steps) {
  Fusion* f = commonFusion({in}, "slice");
  std::vector<IterDomain> dom = in->noReductions();
  const size_t rank = dom.size();
  NVF_CHECK(starts.size() == rank && stops.size() == rank &&
                (steps.empty() || steps.size() == rank),
            "slice: start_indices, end_indices and strides must each have ",
            rank, " entries for ", valDescription(in), ", got ", starts.size(),
            ", ", stops.size(), " and ", steps.size());
  std::vector<SliceRange> ranges;
  std::vector<IterDomain> out;
  for (size_t i = 0; i < rank; ++i) {
    SliceRange r{starts[i], stops[i], steps.empty() ? 1 : steps[i]};
    Extent e = f->canonical(dom[i].logicalExtent());
    NVF_CHECK(r.step >= 1, "slice: stride ", r.step, " at dim ", i,
              " must be >= 1");
    NVF_CHECK(r.start >= 0 && r.start <= r.stop, "slice: range [", r.start,
              ", ", r.stop, ") at dim ", i, " of ", valDescription(in),
              " is invalid (need 0 <= start <= end)");
    NVF_CHECK(!e.isConst() || r.stop <= e.value, "slice: end ", r.stop,
              " at dim ", i, " is out of range for ", valDescription(in),
              " (size ", e.value, ")");
    ranges.push_back(r);
    bool whole =
        e.isConst() && r.start == 0 && r.stop == e.value && r.step == 1;
    if (whole) {
      out.push_back(dom[i]);
    } else {
      // ceil((stop - start) / step) without overflowing for a huge step.
      const int64_t len = r.stop - r.start;
      out.push_back(domainForSize(len == 0 ? 0 : (len - 1) / r.step + 1));
    }
  }
  TensorView* tv = f->newTensor(std::move(out), in->dtype());
  f->addExpr<SliceOp>(tv, in, ranges);
  return tv;
}

TensorView* pad(TensorView* in, const std::vector<int64_t>& padWidths,
                Val* value) {
  Fusion* f = commonFusion({in}, "pad");
  refuseFloat8("pad", {in});
  std::vector<IterDomain> dom = in->noReductions();
  const int64_t rank = static_cast<int64_t>(dom.size());
  NVF_CHECK(padWidths.size() % 2 == 0, "pad: pad_widths must have an even ",
            "number of entries, got ", padWidths.size());
  NVF_CHECK(static_cast<int64_t>(padWidths.size()) <= 2 * rank,
            "pad: pad_widths has ", padWidths.size(), " entries, more than 2 ",
            "per dim of ", valDescription(in));
  if (value == nullptr) {
    value = f->newScalar(in->dtype(), ScalarValue(int64_t(0)));
  }
  NVF_CHECK(!value->isTensor(), "pad: value must be a scalar");
  NVF_CHECK_KIND(!isComplexType(value->dtype()) || isComplexType(in->dtype()),
                 Type, "pad: a complex value ", valDescription(value),
                 " cannot pad ", valDescription(in));
  NVF_CHECK(value->fusion() == f, "pad: value belongs to another fusion");
  std::vector<std::pair<int64_t, int64_t>> widths(rank, {0, 0});
  for (size_t p = 0; p < padWidths.size() / 2; ++p) {
    int64_t d = rank - 1 - static_cast<int64_t>(p);
    widths[d] = {padWidths[2 * p], padWidths[2 * p + 1]};
    NVF_CHECK(widths[d].first >= 0 && widths[d].second >= 0,
              "pad: negative pad widths are not supported (dim ", d, ": ",
              widths[d].first, ", ", widths[d].second, ")");
  }
  std::vector<IterDomain> out;
  for (int64_t d = 0; d < rank; ++d) {
    std::optional<int64_t> extra =
        checkedAdd(widths[d].first, widths[d].second);
    Extent e = f->canonical(dom[d].logicalExtent());
    std::optional<int64_t> size =
        extra && e.isConst() ? checkedAdd(e.value, *extra) : extra;
    NVF_CHECK(size.has_value(), "pad: dim ", d, " of ", valDescription(in),
              " padded by ", widths[d].first, " and ", widths[d].second,
              " has more than 2^63 - 1 elements");
    if (*extra == 0) {
      out.push_back(dom[d]);
    } else if (e.isConst()) {
      out.push_back(domainForSize(*size));
    } else {
      out.push_back(IterDomain::iteration(f->newSymbolicExtent()));
    }
  }
  TensorView* tv = f->newTensor(std::move(out), in->dtype());
  f->addExpr<PadOp>(tv, in, value, widths);
  return tv;
}

TensorView* cat(const std::vector<TensorView*>& ins, int64_t dim) {
  NVF_CHECK(!ins.empty(), "cat: needs at least one tensor");
  std::vector<Val*> vals(ins.begin(), ins.end());
  Fusion* f = commonFusion(vals, "cat");
  refuseFloat8("cat", {vals.begin(), vals.end()});
  const int64_t rank = ins[0]->nDims();
  int64_t d = normalizeDim(dim, rank, "cat");
  std::vector<IterDomain> out = ins[0]->noReductions();
  int64_t total = 0;
  bool allConst = true;
  for (size_t k = 0; k < ins.size(); ++k) {
    TensorView* t = ins[k];
    NVF_CHECK(t->nDims() == rank, "cat: tensor ", k, " ", valDescription(t),
              " has rank ", t->nDims(), " but tensor 0 has rank ", rank);
    NVF_CHECK_KIND(t->dtype() == ins[0]->dtype(), Type, "cat: tensor ", k,
                   " has dtype ", toString(t->dtype()), " but tensor 0 has ",
                   toString(ins[0]->dtype()));
    std::vector<IterDomain> dom = t->noReductions();
    for (int64_t i = 0; i < rank; ++i) {
      if (i == d) {
        Extent e = f->canonical(dom[i].logicalExtent());
        allConst = allConst && e.isConst();
        std::optional<int64_t> sum =
            checkedAdd(total, e.isConst() ? e.value : 0);
        NVF_CHECK(sum.has_value(), "cat: the sizes along dim ", d,
                  " add up to more than 2^63 - 1");
        total = *sum;
        continue;
      }
      Extent a = f->canonical(out[i].logicalExtent());
      Extent b = f->canonical(dom[i].logicalExtent());
      NVF_CHECK(!(a.isConst() && b.isConst() && a.value != b.value),
                "cat: tensor ", k, " ", valDescription(t),
                " does not match tensor 0 ", valDescription(ins[0]), " at dim ",
                i, " (", b.value, " vs ", a.value, "); only dim ", d,
                " may differ");
      out[i] = IterDomain::iteration(f->unify(a, b));
      if (out[i].extent.isConst() && out[i].extent.value == 1) {
        out[i] = IterDomain::broadcast();
      }
    }
  }
  out[d] = allConst ? domainForSize(total)
                    : IterDomain::iteration(f->newSymbolicExtent());
  TensorView* tv = f->newTensor(std::move(out), ins[0]->dtype());
  f->addExpr<CatOp>(tv, vals, d);
  return tv;
}

}  // namespace nvfuser
