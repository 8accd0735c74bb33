// index_select, gather and take_along_axis in generated kernels: one more
// index map. The output at i reads the index tensor at i (index_select: at
// i[dim]), and the lookup at i with its `dim` coordinate replaced by that
// value, inside a bounds check; an index outside [0, size) gives 0 and
// sets the kernel's index error word, which the runtime turns into an
// IndexError (runtime/device_index_errors.h). The lookup is always a
// kernel input (gathersReadMemory).
#include "analysis/tensor_shape.h"
#include "codegen/op_emitter.h"
#include "codegen/value_builder.h"
#include "exceptions.h"

namespace nvfuser {
namespace codegen_detail {

Index KernelValueBuilder::gatherIndexAt(const GatherOp* g,
                                        const Index& idx) const {
  const TensorView* index = g->index();
  if (g->op() != GatherOpType::IndexSelect) {
    return operandIndex(index, idx);
  }
  if (index->nDims() == 0) {
    return {};
  }
  return operandIndex(index, Index{idx[size_t(g->dim())]});
}

Value KernelValueBuilder::gathered(const GatherOp* g, const Index& idx) {
  const TensorView* lookup = g->lookup();
  NVF_ASSERT(paramName_.count(lookup) > 0, "the lookup ", lookup->ref(), " of ",
             g->opName(), " is not a kernel input");
  const size_t dim = size_t(g->dim());
  const int64_t size = concreteShape(lookup)[dim];
  const DataType out = g->output(0)->dtype();
  const std::string zero = literal(ScalarValue(int64_t(0)), out);
  const Value k = valueAt(g->index(), gatherIndexAt(g, idx));
  auto inBounds = [&](const std::string& j) {
    return size == 0
               ? std::string("(false)")
               : "(" + j + " >= 0 && " + j + " < " + std::to_string(size) + ")";
  };
  // The lookup's other dims follow the output's (size-1 dims broadcast).
  Index from = idx;
  from[dim] = Ix{IndexExpr(), false};
  from = operandIndex(lookup, from);
  if (k.lane) {  // a different index per lane: one load per lane
    return gatherLanes(lookup, from, dim, k, inBounds(at(k)), zero);
  }
  const bool lane = anyLane(from);
  // One index for the whole vector: the vector takes one branch, and the
  // row of the lookup it reads may be one vector load (an embedding).
  Value var = declare(out, lane);
  line("if " + inBounds(k.name) + " {");
  indent_ += 2;
  scopes_.emplace_back();
  from[dim] = Ix{emitNamedIndex("(" + indexType_ + ")" + k.name), false};
  Value x = load(lookup, from);
  scopes_.pop_back();
  assign(var, at(x));
  indent_ -= 2;
  line("} else {");
  indent_ += 2;
  assign(var, zero);
  line("*nvf_index_error = 1;");
  indent_ -= 2;
  line("}");
  return var;
}

Value KernelValueBuilder::gatherLanes(const TensorView* lookup,
                                      const Index& from, size_t dim,
                                      const Value& k,
                                      const std::string& inBounds,
                                      const std::string& zero) {
  const TensorLayout& layout = layouts_.at(inputIndex_.at(lookup));
  IndexExpr offset;
  for (size_t d = 0; d < from.size(); ++d) {
    const int64_t s = layout.strides[d];
    if (s == 0 || (d != dim && from[d].e.isZero() && !from[d].lane)) {
      continue;
    }
    const IndexExpr i =
        d == dim ? IndexExpr::named("((" + indexType_ + ")" + at(k) + ")")
                 : laneIndex(from[d]);
    offset = offset + i * s;
  }
  Value var = declare(lookup->dtype(), true);
  line("#pragma unroll");
  line("for (int u = 0; u < " + std::to_string(lanes_) + "; ++u) {");
  line("  const bool ok = " + inBounds + ";");
  line("  " + var.name + "[u] = ok ? " + paramName_.at(lookup) + "[" +
       offset.str() + "] : " + zero + ";");
  line("  if (!ok) *nvf_index_error = 1;");
  line("}");
  return var;
}

}  // namespace codegen_detail
}  // namespace nvfuser
