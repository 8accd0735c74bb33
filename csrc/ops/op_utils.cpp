#include "ops/op_utils.h"

#include <algorithm>
#include <sstream>

#include "exceptions.h"

namespace nvfuser {

std::string shapeString(const TensorView* tv) {
  std::ostringstream os;
  os << "[";
  bool first = true;
  for (const IterDomain& id : tv->noReductions()) {
    os << (first ? "" : ", ");
    first = false;
    Extent e = tv->fusion()->canonical(id.extent);
    if (id.isBroadcast() && !id.hasExpanded) {
      os << "1";
    } else if (id.hasExpanded) {
      os << "1 ex " << tv->fusion()->canonical(id.expanded).toString();
    } else {
      os << e.toString();
    }
  }
  os << "]";
  return os.str();
}

std::string valDescription(const Val* v) {
  if (!v->isTensor()) {
    return v->ref() + " (scalar " + toString(v->dtype()) + ")";
  }
  return v->ref() + " " + shapeString(v->asTensor()) + " " +
         toString(v->dtype());
}

int64_t normalizeDim(int64_t dim, int64_t rank, const std::string& op) {
  NVF_CHECK(rank > 0, op, ": dim ", dim, " given for a rank-0 tensor");
  int64_t d = dim < 0 ? dim + rank : dim;
  NVF_CHECK(d >= 0 && d < rank, op, ": dim ", dim,
            " is out of range for a tensor of rank ", rank);
  return d;
}

std::vector<int64_t> normalizeDims(const std::vector<int64_t>& dims,
                                   int64_t rank, const std::string& op) {
  std::vector<int64_t> out;
  for (int64_t d : dims) {
    int64_t n = normalizeDim(d, rank, op);
    NVF_CHECK(std::find(out.begin(), out.end(), n) == out.end(), op, ": dim ",
              d, " appears more than once in dims");
    out.push_back(n);
  }
  return out;
}

Fusion* commonFusion(const std::vector<Val*>& vals, const std::string& op) {
  Fusion* f = nullptr;
  for (Val* v : vals) {
    NVF_CHECK(v != nullptr, op, ": an operand is undefined (None)");
    if (f == nullptr) {
      f = v->fusion();
    }
    NVF_CHECK(v->fusion() == f, op, ": operand ", v->ref(),
              " belongs to another FusionDefinition");
  }
  NVF_ASSERT(f != nullptr, op, " called with no operands");
  return f;
}

TensorView* checkTensor(Val* v, const std::string& op, const char* what) {
  NVF_CHECK_KIND(v != nullptr && v->isTensor(), Type, op, ": ", what,
                 " must be a tensor, got ",
                 v == nullptr ? std::string("None") : valDescription(v));
  return v->asTensor();
}

namespace {
std::string mismatch(const std::string& op, const Val* va, const Val* vb,
                     int64_t dim) {
  return op + ": operands " + valDescription(va) + " and " +
         valDescription(vb) + " have incompatible sizes at dim " +
         std::to_string(dim);
}

Extent unifyOrThrow(Fusion* f, Extent a, Extent b, const std::string& msg) {
  a = f->canonical(a);
  b = f->canonical(b);
  NVF_CHECK(!(a.isConst() && b.isConst() && a.value != b.value), msg, " (",
            a.value, " vs ", b.value, ")");
  return f->unify(a, b);
}
}  // namespace

IterDomain combineDims(Fusion* f, const IterDomain& a, const IterDomain& b,
                       const std::string& op, const Val* va, const Val* vb,
                       int64_t dim) {
  std::string msg = mismatch(op, va, vb, dim);
  if (a.isBroadcast() && b.isBroadcast()) {
    if (a.hasExpanded && b.hasExpanded) {
      return IterDomain::expandedBroadcast(
          unifyOrThrow(f, a.expanded, b.expanded, msg));
    }
    return a.hasExpanded ? a : b;
  }
  if (a.isBroadcast() || b.isBroadcast()) {
    const IterDomain& bcast = a.isBroadcast() ? a : b;
    const IterDomain& iter = a.isBroadcast() ? b : a;
    IterDomain out = IterDomain::iteration(iter.extent);
    if (bcast.hasExpanded) {
      out.extent = unifyOrThrow(f, bcast.expanded, iter.extent, msg);
    }
    return out;
  }
  return IterDomain::iteration(unifyOrThrow(f, a.extent, b.extent, msg));
}

bool hasKnownZero(const TensorView* tv) {
  for (const IterDomain& id : tv->noReductions()) {
    Extent e = tv->fusion()->canonical(id.logicalExtent());
    if (e.isConst() && e.value == 0) {
      return true;
    }
  }
  return false;
}

}  // namespace nvfuser
