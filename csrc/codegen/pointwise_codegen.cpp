#include "codegen/pointwise_codegen.h"

#include <map>
#include <sstream>

#include "analysis/tensor_shape.h"
#include "codegen/device_helpers.h"
#include "codegen/op_emitter.h"
#include "exceptions.h"
#include "ir/exprs.h"
#include "scheduler/scheduler.h"

namespace nvfuser {

namespace {

using Index = std::vector<std::string>;

// Wraps a composite index expression so it can be a factor.
std::string paren(const std::string& e) {
  return e.find(' ') == std::string::npos ? e : "(" + e + ")";
}

std::string join(const Index& idx) {
  std::string s;
  for (const std::string& i : idx) {
    s += i + ",";
  }
  return s;
}

class PointwiseKernelGenerator {
 public:
  PointwiseKernelGenerator(const Fusion& f, PointwiseCodegenOptions options)
      : fusion_(f), options_(options) {
    scopes_.emplace_back();
  }

  KernelSource generate(const std::string& name);

 private:
  std::string valueAt(const Val* v, const Index& idx);
  std::string compute(const Expr* e, const Val* v, const Index& idx);
  std::string scalar(const Val* v);
  std::string operand(const Val* v, const Index& idx, DataType to);
  Index operandIndex(const TensorView* tv, const Index& idx) const;
  std::string emit(DataType t, const std::string& expr);
  std::string emitIndex(const std::string& expr);
  std::string load(const TensorView* tv, const Index& idx);
  std::string branchValue(const Val* v, const Index& idx);
  Index reshapeIndex(const std::vector<int64_t>& outShape,
                     const std::vector<int64_t>& inShape, const Index& idx);
  std::string linearize(const std::vector<int64_t>& shape, const Index& idx,
                        size_t begin, size_t end);
  void line(const std::string& s) {
    body_ << std::string(indent_, ' ') << s << "\n";
  }
  const std::string* cached(const std::string& key) const;

  const Fusion& fusion_;
  PointwiseCodegenOptions options_;
  // "int" when every tensor of the kernel has fewer than 2^31 elements.
  std::string indexType_ = "int64_t";
  std::ostringstream body_;
  int indent_ = 6;
  int counter_ = 0;
  std::vector<std::map<std::string, std::string>> scopes_;
  std::map<const Val*, std::string> paramName_;
};

const std::string* PointwiseKernelGenerator::cached(
    const std::string& key) const {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
    auto f = it->find(key);
    if (f != it->end()) {
      return &f->second;
    }
  }
  return nullptr;
}

std::string PointwiseKernelGenerator::emit(DataType t,
                                           const std::string& expr) {
  std::string name = "v" + std::to_string(counter_++);
  line(cudaType(t) + " " + name + " = " + expr + ";");
  return name;
}

std::string PointwiseKernelGenerator::emitIndex(const std::string& expr) {
  const std::string key = "#" + expr;
  if (const std::string* hit = cached(key)) {
    return *hit;
  }
  std::string name = "j" + std::to_string(counter_++);
  line(indexType_ + " " + name + " = " + expr + ";");
  scopes_.back()[key] = name;
  return name;
}

Index PointwiseKernelGenerator::operandIndex(const TensorView* tv,
                                             const Index& idx) const {
  std::vector<int64_t> shape = concreteShape(tv);
  NVF_ASSERT(shape.size() == idx.size(), "rank mismatch for ", tv->ref());
  Index out = idx;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) {
      out[d] = "0";
    }
  }
  return out;
}

std::string PointwiseKernelGenerator::load(const TensorView* tv,
                                           const Index& idx) {
  std::vector<int64_t> shape = concreteShape(tv);
  std::string offset;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1 || idx[d] == "0") {
      continue;
    }
    offset += (offset.empty() ? "" : " + ") + paren(idx[d]) + " * " +
              paramName_.at(tv) + ".stride[" + std::to_string(d) + "]";
  }
  return paramName_.at(tv) + ".data[" + (offset.empty() ? "0" : offset) + "]";
}

std::string PointwiseKernelGenerator::scalar(const Val* v) {
  const Scalar* s = v->asScalar();
  if (s->isConst()) {
    return literal(*s->value(), s->dtype());
  }
  auto p = paramName_.find(v);
  if (p != paramName_.end()) {
    return p->second;
  }
  return valueAt(v, {});
}

std::string PointwiseKernelGenerator::operand(const Val* v, const Index& idx,
                                              DataType to) {
  std::string x =
      v->isTensor() ? valueAt(v, operandIndex(v->asTensor(), idx)) : scalar(v);
  return castExpr(v->dtype(), to, x);
}

std::string PointwiseKernelGenerator::valueAt(const Val* v, const Index& idx) {
  if (!v->isTensor()) {
    if (v->asScalar()->isConst() || paramName_.count(v)) {
      return scalar(v);
    }
  }
  const std::string key = v->ref() + "@" + join(idx);
  if (const std::string* hit = cached(key)) {
    return *hit;
  }
  std::string var;
  if (v->isTensor() && paramName_.count(v)) {
    var =
        emit(v->dtype(), load(v->asTensor(), operandIndex(v->asTensor(), idx)));
  } else {
    NVF_ASSERT(v->definition() != nullptr, "no definition for ", v->ref());
    var = compute(v->definition(), v, idx);
  }
  scopes_.back()[key] = var;
  return var;
}

// A value computed inside a branch: its own cache scope, so nothing computed
// under the branch's condition is reused outside it.
std::string PointwiseKernelGenerator::branchValue(const Val* v,
                                                  const Index& idx) {
  scopes_.emplace_back();
  std::string x = valueAt(v, idx);
  scopes_.pop_back();
  return x;
}

// Row-major linear index of dims [begin, end) of shape at idx.
std::string PointwiseKernelGenerator::linearize(
    const std::vector<int64_t>& shape, const Index& idx, size_t begin,
    size_t end) {
  std::string linear;
  int64_t stride = 1;
  for (size_t d = end; d-- > begin;) {
    if (shape[d] != 1 && idx[d] != "0") {
      std::string term =
          stride == 1 ? idx[d] : paren(idx[d]) + " * " + std::to_string(stride);
      linear = linear.empty() ? term : term + " + " + linear;
    }
    stride *= shape[d];
  }
  return linear.empty() ? "0" : linear;
}

// Output and input dims are matched in groups of equal products: a split
// (one input dim) needs no division, a merge (one output dim) one division
// per input dim, and only many-to-many groups linearize and delinearize.
Index PointwiseKernelGenerator::reshapeIndex(
    const std::vector<int64_t>& outShape, const std::vector<int64_t>& inShape,
    const Index& idx) {
  Index in(inShape.size(), "0");
  size_t o = 0;
  size_t i = 0;
  bool hasZero = false;
  for (int64_t s : outShape) {
    hasZero = hasZero || s == 0;
  }
  if (hasZero) {
    return in;  // the kernel never runs
  }
  while (o < outShape.size() || i < inShape.size()) {
    size_t o0 = o;
    size_t i0 = i;
    int64_t po = 1;
    int64_t pi = 1;
    // Grow the group until both sides cover the same number of elements.
    do {
      if (o < outShape.size() && (po <= pi || i == inShape.size())) {
        po *= outShape[o++];
      } else {
        pi *= inShape[i++];
      }
    } while ((po != pi || o == o0 || i == i0) &&
             (o < outShape.size() || i < inShape.size()));
    while (o < outShape.size() && outShape[o] == 1 && i == inShape.size()) {
      ++o;
    }
    while (i < inShape.size() && inShape[i] == 1 && o == outShape.size()) {
      ++i;
    }
    std::string linear = linearize(outShape, idx, o0, o);
    if (i - i0 == 1) {
      in[i0] = inShape[i0] == 1 ? "0" : linear;
      continue;
    }
    std::string l = linear == "0" || linear.find(' ') == std::string::npos
                        ? linear
                        : emitIndex(linear);
    int64_t stride = 1;
    for (size_t d = i; d-- > i0;) {
      if (inShape[d] != 1) {
        std::string q =
            stride == 1 ? l : "(" + l + " / " + std::to_string(stride) + ")";
        bool outermost = d == i0;
        in[d] =
            emitIndex(outermost ? q : q + " % " + std::to_string(inShape[d]));
      }
      stride *= inShape[d];
    }
  }
  return in;
}

std::string PointwiseKernelGenerator::compute(const Expr* e, const Val* v,
                                              const Index& idx) {
  const DataType out = v->dtype();
  switch (e->type()) {
    case ExprType::Unary: {
      auto* u = exprAs<UnaryOp>(e);
      const Val* in = e->input(0);
      if (u->op() == UnaryOpType::Cast) {
        return emit(out, operand(in, idx, out));
      }
      DataType t = out;
      if (u->op() == UnaryOpType::IsNan) {
        t = isReducedFloat(in->dtype()) ? DataType::Float : in->dtype();
      } else if (u->op() == UnaryOpType::LogicalNot) {
        t = DataType::Bool;
      } else if (u->op() == UnaryOpType::BitwiseNot) {
        t = in->dtype();
      }
      return emit(out, castExpr(t == DataType::Bool ? DataType::Bool : t, out,
                                unaryExpr(u->op(), t, operand(in, idx, t))));
    }
    case ExprType::Binary: {
      auto* b = exprAs<BinaryOp>(e);
      // Comparisons keep Half/BFloat16 as their compute type; the storage
      // types have no operators, and Float compares them exactly.
      DataType t =
          isReducedFloat(b->computeType()) ? DataType::Float : b->computeType();
      std::string r = binaryExpr(b->op(), t, operand(e->input(0), idx, t),
                                 operand(e->input(1), idx, t));
      DataType rt = isComparison(b->op()) ? DataType::Bool : t;
      return emit(out, castExpr(rt, out, r));
    }
    case ExprType::Ternary: {
      auto* t3 = exprAs<TernaryOp>(e);
      DataType t = t3->computeType();
      if (t3->op() == TernaryOpType::Where) {
        std::string c = operand(e->input(0), idx, DataType::Bool);
        return emit(out, "(" + c + " ? " + operand(e->input(1), idx, t) +
                             " : " + operand(e->input(2), idx, t) + ")");
      }
      std::string a = operand(e->input(0), idx, t);
      std::string b = operand(e->input(1), idx, t);
      std::string c = operand(e->input(2), idx, t);
      if (t3->op() == TernaryOpType::Clamp) {
        return emit(out, "nvf_min(nvf_max(" + a + ", " + b + "), " + c + ")");
      }
      // ATen's lerp: exact at both ends.
      return emit(out, "(" + c + " < (" + cudaType(t) + ")0.5 ? " + a + " + " +
                           c + " * (" + b + " - " + a + ") : " + b + " - (" +
                           b + " - " + a + ") * ((" + cudaType(t) + ")1 - " +
                           c + "))");
    }
    case ExprType::Broadcast: {
      const auto& mask = exprAs<BroadcastOp>(e)->isBroadcastDim();
      Index in;
      for (size_t d = 0; d < mask.size(); ++d) {
        if (!mask[d]) {
          in.push_back(idx[d]);
        }
      }
      return valueAt(e->input(0), in);
    }
    case ExprType::Expand:
    case ExprType::LoadStore:
      return valueAt(e->input(0), operandIndex(e->input(0)->asTensor(), idx));
    case ExprType::Permute: {
      const auto& perm = exprAs<PermuteOp>(e)->perm();
      Index in(perm.size());
      for (size_t i = 0; i < perm.size(); ++i) {
        in[perm[i]] = idx[i];
      }
      return valueAt(e->input(0), in);
    }
    case ExprType::Squeeze: {
      const auto& mask = exprAs<SqueezeOp>(e)->isSqueezed();
      Index in;
      size_t next = 0;
      for (bool squeezed : mask) {
        in.push_back(squeezed ? "0" : idx[next++]);
      }
      return valueAt(e->input(0), in);
    }
    case ExprType::Reshape: {
      const TensorView* inTv = e->input(0)->asTensor();
      return valueAt(inTv, reshapeIndex(concreteShape(v->asTensor()),
                                        concreteShape(inTv), idx));
    }
    case ExprType::Slice: {
      const auto& ranges = exprAs<SliceOp>(e)->ranges();
      Index in;
      for (size_t d = 0; d < ranges.size(); ++d) {
        std::string i = idx[d];
        if (ranges[d].step != 1) {
          i = "(" + paren(i) + " * " + std::to_string(ranges[d].step) + ")";
        }
        if (ranges[d].start != 0) {
          i = "(" + i + " + " + std::to_string(ranges[d].start) + ")";
        }
        in.push_back(i);
      }
      return valueAt(e->input(0), operandIndex(e->input(0)->asTensor(), in));
    }
    case ExprType::Pad: {
      const auto& widths = exprAs<PadOp>(e)->widths();
      const TensorView* inTv = e->input(0)->asTensor();
      std::vector<int64_t> inShape = concreteShape(inTv);
      std::string cond;
      Index in;
      for (size_t d = 0; d < widths.size(); ++d) {
        int64_t before = widths[d].first;
        if (widths[d].first == 0 && widths[d].second == 0) {
          in.push_back(idx[d]);
          continue;
        }
        std::string i =
            before ? "(" + idx[d] + " - " + std::to_string(before) + ")"
                   : idx[d];
        cond += (cond.empty() ? "" : " && ") + std::string("(") + idx[d] +
                " >= " + std::to_string(before) + " && " + idx[d] + " < " +
                std::to_string(before + inShape[d]) + ")";
        in.push_back(i);
      }
      if (cond.empty()) {  // zero widths everywhere: a plain copy
        return emit(out, castExpr(inTv->dtype(), out,
                                  valueAt(inTv, operandIndex(inTv, in))));
      }
      std::string var = "v" + std::to_string(counter_++);
      line(cudaType(out) + " " + var + ";");
      line("if (" + cond + ") {");
      indent_ += 2;
      line(var + " = " +
           castExpr(inTv->dtype(), out,
                    branchValue(inTv, operandIndex(inTv, in))) +
           ";");
      indent_ -= 2;
      line("} else {");
      line("  " + var + " = " + operand(e->input(1), idx, out) + ";");
      line("}");
      return var;
    }
    case ExprType::Cat: {
      const int64_t dim = exprAs<CatOp>(e)->dim();
      std::string var = "v" + std::to_string(counter_++);
      line(cudaType(out) + " " + var + ";");
      int64_t offset = 0;
      const size_t n = e->inputs().size();
      for (size_t k = 0; k < n; ++k) {
        const TensorView* part = e->input(k)->asTensor();
        int64_t extent = concreteShape(part)[dim];
        Index in = idx;
        if (offset != 0) {
          in[dim] = "(" + idx[dim] + " - " + std::to_string(offset) + ")";
        }
        std::string head = k == 0 ? "if" : "} else if";
        if (k + 1 == n) {
          line(k == 0 ? "{" : "} else {");
        } else {
          line(head + " (" + idx[dim] + " < " +
               std::to_string(offset + extent) + ") {");
        }
        indent_ += 2;
        line(var + " = " +
             castExpr(part->dtype(), out,
                      branchValue(part, operandIndex(part, in))) +
             ";");
        indent_ -= 2;
        offset += extent;
      }
      line("}");
      return var;
    }
    case ExprType::Full:
      return emit(out, operand(e->input(0), idx, out));
    case ExprType::Iota: {
      DataType t = isIntegralType(out) ? DataType::Int : DataType::Double;
      std::string r = "(" + operand(e->input(0), idx, t) + " + (" +
                      castExpr(DataType::Int, t, idx[0]) + ") * " +
                      operand(e->input(1), idx, t) + ")";
      return emit(out, castExpr(t, out, r));
    }
    default:
      NVF_THROW(NotImplemented, "pointwise codegen cannot generate ",
                exprRef(e));
  }
}

KernelSource PointwiseKernelGenerator::generate(const std::string& name) {
  KernelSource ks;
  ks.name = name;
  std::ostringstream params;
  int k = 0;
  for (const Val* in : fusion_.inputs()) {
    std::string p = (in->isTensor() ? "in" : "s") + std::to_string(k++);
    paramName_[in] = p;
    ks.inputs.push_back(in);
    if (in->isTensor()) {
      int64_t rank = in->asTensor()->nDims();
      params << (params.tellp() ? ", " : "") << "TensorArg<"
             << cudaType(in->dtype()) << ", " << std::max<int64_t>(rank, 1)
             << "> " << p;
    } else {
      params << (params.tellp() ? ", " : "") << cudaType(in->dtype()) << " "
             << p;
    }
  }
  const TensorView* ref = fusion_.outputs().at(0)->asTensor();
  std::vector<int64_t> loop = shapeWithoutOnes(ref);
  ks.numel = 1;
  for (int64_t e : loop) {
    ks.numel *= e;
  }
  for (size_t o = 0; o < fusion_.outputs().size(); ++o) {
    const TensorView* tv = fusion_.outputs()[o]->asTensor();
    NVF_ASSERT(shapeWithoutOnes(tv) == loop,
               "outputs of a pointwise kernel "
               "must share the loop domain");
    ks.outputs.push_back(tv);
    params << (params.tellp() ? ", " : "") << cudaType(tv->dtype())
           << "* __restrict__ out" << o;
  }
  int64_t maxNumel = ks.numel;
  for (const Val* val : fusion_.vals()) {
    if (val->isTensor()) {
      maxNumel = std::max(maxNumel, numel(val->asTensor()));
    }
  }
  indexType_ = maxNumel < (int64_t(1) << 31) - 1024 && options_.allowInt32Index
                   ? "int"
                   : "int64_t";
  // One element per thread: consecutive threads touch consecutive
  // elements, so every warp access is coalesced. (Several consecutive
  // elements per thread with scalar accesses measured 2.3x slower on an
  // H200: each warp load then spans 16-byte strides.)
  int64_t vec = 1;
  ks.vectorWidth = vec;
  // Loop indices i0..: the reference's non-size-1 dims, row-major; the
  // innermost one is advanced by u inside the unrolled loop.
  std::ostringstream head;
  Index loopIdx;
  for (size_t d = 0; d < loop.size(); ++d) {
    int64_t inner = 1;
    for (size_t e = d + 1; e < loop.size(); ++e) {
      inner *= loop[e];
    }
    std::string q = inner == 1 ? "i" : "(i / " + std::to_string(inner) + ")";
    std::string expr = d == 0 ? q : q + " % " + std::to_string(loop[d]);
    bool last = d + 1 == loop.size();
    std::string name = "i" + std::to_string(d) + (last ? "_base" : "");
    head << "    " << indexType_ << " " << name << " = " << expr << ";\n";
    loopIdx.push_back("i" + std::to_string(d));
  }
  if (!loop.empty()) {
    line(indexType_ + " i" + std::to_string(loop.size() - 1) + " = i" +
         std::to_string(loop.size() - 1) + "_base + u;");
  }
  for (size_t o = 0; o < ks.outputs.size(); ++o) {
    const TensorView* tv = ks.outputs[o];
    Index idx;
    size_t next = 0;
    for (int64_t s : concreteShape(tv)) {
      idx.push_back(s == 1 ? "0" : loopIdx[next++]);
    }
    line("out" + std::to_string(o) + "[i + u] = " + valueAt(tv, idx) + ";");
  }
  const int64_t slots = ks.numel / vec;
  std::ostringstream code;
  code << deviceHelpersSource()
       << "template <typename T, int R> struct TensorArg { T* data; "
          "int64_t stride[R]; };\n\n"
       << "extern \"C\" __global__ void " << name << "(" << params.str()
       << ") {\n"
       << "  for (" << indexType_ << " slot = blockIdx.x * blockDim.x + "
       << "threadIdx.x; slot < " << slots << "; slot += gridDim.x * "
       << "blockDim.x) {\n"
       << "    " << indexType_ << " i = slot * " << vec << ";\n"
       << head.str() << "#pragma unroll\n"
       << "    for (int u = 0; u < " << vec << "; ++u) {\n"
       << body_.str() << "    }\n  }\n}\n";
  ks.code = code.str();
  return ks;
}

}  // namespace

Decision canGeneratePointwise(const Fusion& fusion) {
  if (fusion.outputs().empty()) {
    return Decision::no("no outputs");
  }
  for (const Val* v : fusion.vals()) {
    if (isComplexType(v->dtype())) {
      return Decision::no("complex values");
    }
  }
  for (const Expr* e : fusion.exprs()) {
    if (isReductionLike(e) || isMatmulLike(e)) {
      return Decision::no(exprRef(e) + " is not pointwise");
    }
  }
  return Decision::yes();
}

KernelSource generatePointwiseKernel(const Fusion& fusion,
                                     const std::string& name,
                                     PointwiseCodegenOptions options) {
  Decision d = canGeneratePointwise(fusion);
  NVF_CHECK_KIND(d.ok(), NotImplemented, "pointwise codegen: ", d.reason());
  return PointwiseKernelGenerator(fusion, options).generate(name);
}

}  // namespace nvfuser
