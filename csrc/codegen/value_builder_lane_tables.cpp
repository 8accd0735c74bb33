// Lane tables: vector lanes whose indices are not consecutive. A reshape
// that splits the innermost dim into pairs ([.., D] -> [.., D / 2, 2], an
// interleaved RoPE's view of x) gives lane u the indices (e + u / 2, u % 2);
// the lanes merge back into consecutive ones when the pairs are flattened
// again. Between the two, every load reads within one aligned vector (a
// load of it, each lane picking its element), and a cat or pad along the
// pair dim splits the lanes at places known when the kernel is generated
// (both sides computed, one select per lane, no branch). Without tables
// such kernels ran one element per thread (42% of copy bandwidth, issue
// 16).
#include <algorithm>
#include <limits>
#include <numeric>

#include "analysis/tensor_shape.h"
#include "codegen/value_builder.h"
#include "exceptions.h"

namespace nvfuser {
namespace codegen_detail {

namespace {

bool countsUp(const std::vector<int64_t>& offsets) {
  for (size_t u = 0; u < offsets.size(); ++u) {
    if (offsets[u] != static_cast<int64_t>(u)) {
      return false;
    }
  }
  return true;
}

// offsets[u] == (u / k) * m + (u % k) * r + c for every lane, or false.
bool affineInPairs(const std::vector<int64_t>& offsets, int64_t k, int64_t* m,
                   int64_t* r, int64_t* c) {
  const int64_t n = static_cast<int64_t>(offsets.size());
  if (n % k != 0) {
    return false;
  }
  *c = offsets[0];
  *r = k > 1 ? offsets[1] - offsets[0] : 0;
  *m = k < n ? offsets[k] - offsets[0] : 0;
  for (int64_t u = 0; u < n; ++u) {
    if (offsets[u] != (u / k) * *m + (u % k) * *r + *c) {
      return false;
    }
  }
  return true;
}

}  // namespace

IndexExpr laneOffsetExpr(const std::vector<int64_t>& offsets) {
  const IndexExpr u = IndexExpr::named("u");
  for (int64_t k = 1; k <= static_cast<int64_t>(offsets.size()); k *= 2) {
    int64_t m = 0;
    int64_t r = 0;
    int64_t c = 0;
    if (affineInPairs(offsets, k, &m, &r, &c)) {
      return (u / k) * m + (u % k) * (k > 1 ? r : 0) + c;
    }
  }
  // No pattern: a select per lane, read as one value.
  std::string e = std::to_string(offsets.back());
  for (size_t k = offsets.size() - 1; k-- > 0;) {
    e = "(u == " + std::to_string(k) + " ? " + std::to_string(offsets[k]) +
        " : " + e + ")";
  }
  return IndexExpr::named(e);
}

bool KernelValueBuilder::hasTable(const Index& idx) {
  return std::any_of(idx.begin(), idx.end(), isTable);
}

Ix KernelValueBuilder::shiftedLaneConstants(const Ix& i, int64_t scale,
                                            int64_t add) const {
  std::vector<int64_t> offsets = i.offsets;
  for (int64_t& o : offsets) {
    o = o * scale + add;
  }
  return laneTerm(IndexExpr(), std::move(offsets), 0);
}

void KernelValueBuilder::addTerm(LaneSum& sum, const Ix& t, int64_t stride,
                                 int64_t foldBelow) const {
  if (sum.offsets.empty()) {
    sum.offsets.assign(lanes_, 0);
  }
  const std::optional<int64_t> literal =
      t.lane ? std::nullopt : t.e.constantValue();
  const bool constant = literal.has_value();
  const int64_t c = literal.value_or(0);
  if (constant && c * stride < foldBelow) {  // part of every lane's offset
    for (int64_t& o : sum.offsets) {
      o += c * stride;
    }
    return;
  }
  int64_t align = 0;
  if (constant) {  // past the vector: part of e, its own multiple
    align = c * stride;
  } else {
    const std::vector<int64_t> own = laneOffsets(t);
    for (size_t u = 0; u < sum.offsets.size(); ++u) {
      sum.offsets[u] += own[u] * stride;
    }
    if (t.e.isZero()) {
      return;
    }
    align = termAlign(t) * stride;
  }
  sum.e = t.e * stride + sum.e;
  sum.align = std::gcd(sum.align, align);
}

Ix KernelValueBuilder::laneTerm(const IndexExpr& e,
                                std::vector<int64_t> offsets,
                                int64_t align) const {
  const bool uniform =
      std::all_of(offsets.begin(), offsets.end(),
                  [&](int64_t o) { return o == offsets.front(); });
  if (uniform) {
    return Ix{e + offsets.front(), false};
  }
  if (countsUp(offsets) && (e.isZero() || align % lanes_ == 0)) {
    return Ix{e, true};
  }
  return Ix{e, true, std::move(offsets), e.isZero() ? 0 : align};
}

std::vector<int64_t> KernelValueBuilder::laneOffsets(const Ix& i) const {
  if (isTable(i)) {
    return i.offsets;
  }
  std::vector<int64_t> offsets(lanes_, 0);
  if (i.lane) {
    std::iota(offsets.begin(), offsets.end(), 0);
  }
  return offsets;
}

int64_t KernelValueBuilder::termAlign(const Ix& i) const {
  if (i.e.isZero()) {
    return 0;
  }
  if (isTable(i)) {
    return i.align;
  }
  return i.lane ? lanes_ : 1;
}

void KernelValueBuilder::requireAligned(const Ix& i, int64_t at,
                                        const char* what) const {
  if (!isTable(i)) {
    requireAligned(at, what);
    return;
  }
  const int64_t top = *std::max_element(i.offsets.begin(), i.offsets.end());
  if (i.align == 0 || at % i.align != 0 || top >= i.align) {
    throw NotVectorizable{std::string(what) + " at " + std::to_string(at) +
                          " splits a lane table"};
  }
}

Ix KernelValueBuilder::splitLaneTerm(const Ix& linear, const IndexExpr& l,
                                     int64_t stride, int64_t n,
                                     bool outermost) {
  const std::vector<int64_t> offsets = laneOffsets(linear);
  const int64_t align = termAlign(linear);
  std::vector<int64_t> q(offsets.size());
  for (size_t u = 0; u < q.size(); ++u) {
    q[u] = offsets[u] / stride;
  }
  const int64_t top = *std::max_element(q.begin(), q.end());
  auto modN = [&](std::vector<int64_t> x) {
    for (int64_t& v : x) {
      v = outermost ? v : v % n;
    }
    return x;
  };
  if (align == 0) {  // l is 0: every lane's value is a constant
    return laneTerm(IndexExpr(), modN(q), 0);
  }
  const IndexExpr div = l / stride;
  if (align % stride == 0) {  // l / stride + offsets / stride, exactly
    const int64_t a = align / stride;
    if (outermost) {
      return laneTerm(emitIndex(div), q, a);
    }
    if (n % a == 0 && top < a) {  // the lanes stay inside one run of n
      return laneTerm(emitIndex(div % n), q, a);
    }
    if (a % n == 0) {  // (l / stride) % n is 0
      return laneTerm(IndexExpr(), modN(q), 0);
    }
  } else if (stride % align == 0 &&
             *std::max_element(offsets.begin(), offsets.end()) < align) {
    // Every lane in the same multiple of stride: a uniform term.
    return Ix{emitIndex(outermost ? div : div % n), false};
  }
  throw NotVectorizable{"a reshape splits a vector unevenly"};
}

Ix KernelValueBuilder::linearizeLaneTables(const std::vector<int64_t>& shape,
                                           const Index& idx, size_t begin,
                                           size_t end) {
  LaneSum sum;
  sum.offsets.assign(lanes_, 0);
  int64_t stride = 1;
  for (size_t d = end; d-- > begin;) {
    if (shape[d] != 1) {
      addTerm(sum, idx[d], stride, lanes_);
    }
    stride *= shape[d];
  }
  return laneTerm(sum.e, std::move(sum.offsets), sum.align);
}

Value KernelValueBuilder::loadLaneTable(const TensorView* tv,
                                        const Index& idx) {
  const std::string& p = paramName_.at(tv);
  const TensorLayout& layout = layouts_.at(inputIndex_.at(tv));
  // Every constant joins the offsets: the window below shifts past them.
  // Terms are added innermost first, as linearize adds them.
  LaneSum sum;
  sum.offsets.assign(lanes_, 0);
  for (size_t d = idx.size(); d-- > 0;) {
    if (layout.strides[d] != 0) {
      addTerm(sum, idx[d], layout.strides[d],
              std::numeric_limits<int64_t>::max());
    }
  }
  IndexExpr base = sum.e;
  std::vector<int64_t>& offsets = sum.offsets;
  const int64_t align = sum.align;
  const std::string& pred = loadPredicate_;
  const int64_t lo = *std::min_element(offsets.begin(), offsets.end());
  const int64_t hi = *std::max_element(offsets.begin(), offsets.end());
  if (lo == hi) {  // one element for every lane
    const IndexExpr at = base + lo;
    return emit(tv->dtype(), false,
                pred.empty() ? p + "[" + at.str() + "]"
                             : "nvf_load_if(" + p + " + " + at.factor() + ", " +
                                   pred + ")");
  }
  // The smallest aligned window of up to 16 bytes that holds every lane's
  // element, `shift` elements past base (a constant index on an outer dim,
  // the k part of a packed qkv, moves every lane by the same amount).
  int64_t window = 0;
  int64_t shift = 0;
  const int64_t size = dataTypeSize(tv->dtype());
  for (int64_t w = 2; lo >= 0 && layout.aligned && w * size <= 16; w *= 2) {
    if (hi - (lo / w) * w < w && (align == 0 || align % w == 0)) {
      window = w;
      shift = (lo / w) * w;
      break;
    }
  }
  const IndexExpr u = laneOffsetExpr(offsets);
  line("// lane table: lanes " + u.str() + " of " + p);
  Value v = declare(tv->dtype(), true);
  if (window == 0) {
    line("#pragma unroll");
    line("for (int u = 0; u < " + std::to_string(lanes_) + "; ++u) " + v.name +
         "[u] = " +
         (pred.empty() ? p + "[" + (base + u).str() + "]"
                       : "nvf_load_if(" + p + " + " + (base + u).factor() +
                             ", " + pred + ")") +
         ";");
    return v;
  }
  // Two values picking from the same vector (x[2k] and x[2k + 1]) share
  // its load.
  if (shift != 0) {
    base = base + shift;
    for (int64_t& o : offsets) {
      o -= shift;
    }
  }
  const std::string picked = laneOffsetExpr(offsets).str();
  const std::string key = "window#" + p + "@" + base.str() + "/" +
                          std::to_string(window) + "?" + pred;
  const Value* w = cached(key);
  if (w == nullptr) {
    Value loaded{"v" + std::to_string(counter_++), true};
    line("nvf_array<" + cudaType(tv->dtype()) + ", " + std::to_string(window) +
         "> " + loaded.name + ";");
    line((pred.empty() ? "nvf_vload(" : "nvf_vload_if(") + loaded.name + ", " +
         p + " + " + base.factor() + (pred.empty() ? "" : ", " + pred) + ");");
    scopes_.back()[key] = loaded;
    w = &scopes_.back()[key];
  }
  line("#pragma unroll");
  line("for (int u = 0; u < " + std::to_string(lanes_) + "; ++u) " + v.name +
       "[u] = " + w->name + "[" + picked + "];");
  return v;
}

namespace {

// For the lanes that are not in `mine`, the offset of the first lane that
// is: every lane then indexes an element of its own side.
std::vector<int64_t> offsetsOnOneSide(const std::vector<int64_t>& offsets,
                                      const std::vector<bool>& mine,
                                      int64_t shift) {
  const size_t first = std::find(mine.begin(), mine.end(), true) - mine.begin();
  std::vector<int64_t> out(offsets.size());
  for (size_t u = 0; u < offsets.size(); ++u) {
    out[u] = (mine[u] ? offsets[u] : offsets[first]) - shift;
  }
  return out;
}

}  // namespace

Value KernelValueBuilder::laneSelectedCat(const CatOp* c, DataType out,
                                          const Index& idx) {
  const int64_t dim = c->dim();
  const std::vector<int64_t>& offsets = idx[dim].offsets;
  std::vector<int64_t> side(offsets.size(), -1);
  std::vector<std::string> parts;
  int64_t start = 0;
  for (const Val* part : c->inputs()) {
    const int64_t end = start + concreteShape(part->asTensor())[dim];
    std::vector<bool> mine(offsets.size());
    for (size_t u = 0; u < offsets.size(); ++u) {
      mine[u] = offsets[u] >= start && offsets[u] < end;
      if (mine[u]) {
        side[u] = static_cast<int64_t>(parts.size());
      }
    }
    if (std::find(mine.begin(), mine.end(), true) != mine.end()) {
      Index in = idx;
      in[dim] =
          laneTerm(IndexExpr(), offsetsOnOneSide(offsets, mine, start), 0);
      Value x = valueAt(part, operandIndex(part->asTensor(), in));
      parts.push_back(cast(x, part->dtype(), out));
    }
    start = end;
  }
  NVF_ASSERT(std::find(side.begin(), side.end(), -1) == side.end(),
             "a lane outside every part of ", exprRef(c));
  const std::string which = laneOffsetExpr(side).str();
  line("// lane table: cat part " + which);
  std::string select = parts.back();
  for (size_t k = parts.size() - 1; k-- > 0;) {
    select = "(" + which + " == " + std::to_string(k) + ") ? " + parts[k] +
             " : (" + select + ")";
  }
  return emit(out, true, select);
}

Value KernelValueBuilder::laneSelectedPad(const PadOp* p, DataType out,
                                          const Index& idx, size_t dim) {
  const TensorView* inTv = p->input(0)->asTensor();
  const int64_t before = p->widths()[dim].first;
  const int64_t end = before + concreteShape(inTv)[dim];
  const std::vector<int64_t>& offsets = idx[dim].offsets;
  std::vector<bool> inside(offsets.size());
  std::vector<int64_t> side(offsets.size());
  for (size_t u = 0; u < offsets.size(); ++u) {
    inside[u] = offsets[u] >= before && offsets[u] < end;
    side[u] = inside[u] ? 0 : 1;
  }
  Value padValue = operand(p->input(1), idx);
  const std::string padded = cast(padValue, p->input(1)->dtype(), out);
  if (std::find(inside.begin(), inside.end(), true) == inside.end()) {
    return emit(out, padValue.lane, padded);
  }
  Index in = idx;
  in[dim] = laneTerm(IndexExpr(), offsetsOnOneSide(offsets, inside, before), 0);
  Value x = valueAt(inTv, operandIndex(inTv, in));
  const std::string which = laneOffsetExpr(side).str();
  line("// lane table: inside the pad where " + which + " == 0");
  return emit(
      out, true,
      "(" + which + " == 0) ? " + cast(x, inTv->dtype(), out) + " : " + padded);
}

}  // namespace codegen_detail
}  // namespace nvfuser
