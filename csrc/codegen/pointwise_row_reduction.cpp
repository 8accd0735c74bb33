// Row strategy for reductions of the innermost dims (row sums, softmax,
// RMS norm, layer norm): one block per row. Each reduction is one pass over
// the row (threads stride by blockDim * V elements, V lanes each) and a
// block reduction (warp shuffles, then one value per warp in shared
// memory); later passes and the outputs read the reduced values from
// registers. The row is re-read from memory in each pass rather than held
// in registers: an L1/L2-resident row of a few KB makes the re-reads cheap,
// and any row length works.
#include "analysis/tensor_shape.h"
#include "codegen/op_emitter.h"
#include "codegen/pointwise_generator.h"
#include "exceptions.h"
#include "ir/list_string.h"
#include "scheduler/reduction_analysis.h"
#include "scheduler/scheduler.h"

namespace nvfuser {
namespace pointwise_detail {

Index PointwiseKernelGenerator::rowIndex(const TensorView* tv,
                                         const Index& inner) const {
  Index idx;
  size_t next = 0;
  const size_t nRows = rowIdx_.size();
  for (int64_t s : concreteShape(tv)) {
    if (s == 1) {
      idx.push_back(Ix{"0", false});
    } else {
      idx.push_back(next < nRows ? rowIdx_[next] : inner.at(next - nRows));
      ++next;
    }
  }
  return idx;
}

std::vector<RowChunk> PointwiseKernelGenerator::openRowLoop(
    const RowReductionPlan& plan) {
  if (persistent_) {
    return persistentChunks_;
  }
  const std::string v = std::to_string(lanes_);
  line("for (" + indexType_ + " k = threadIdx.x * " + v + "; k < " +
       std::to_string(plan.rowLength) + "; k += blockDim.x * " + v + ") {");
  indent_ += 2;
  scopes_.emplace_back();
  return {RowChunk{innerIndex(plan, "k"), "k", ""}};
}

Index PointwiseKernelGenerator::innerIndex(const RowReductionPlan& plan,
                                           const std::string& k) {
  Index inner;
  for (size_t d = 0; d < plan.inner.size(); ++d) {
    int64_t after = 1;
    for (size_t e = d + 1; e < plan.inner.size(); ++e) {
      after *= plan.inner[e];
    }
    std::string q =
        after == 1 ? k : "(" + k + " / " + std::to_string(after) + ")";
    std::string expr = d == 0 ? q : q + " % " + std::to_string(plan.inner[d]);
    std::string name = emitIndex(expr);
    inner.push_back(Ix{name, lanes_ > 1 && d + 1 == plan.inner.size()});
  }
  return inner;
}

void PointwiseKernelGenerator::closeRowLoop() {
  if (persistent_) {
    return;
  }
  scopes_.pop_back();
  indent_ -= 2;
  line("}");
}

void PointwiseKernelGenerator::rowReduce(const Expr* e,
                                         const RowReductionPlan& plan) {
  const TensorView* in = e->input(0)->asTensor();
  const DataType acc = accumulatorType(e->output(0)->dtype(), in->dtype());
  const std::string t = cudaType(acc);
  const std::string count = "(" + t + ")" + std::to_string(plan.rowLength);
  const auto* red = exprAs<ReductionOp>(e);
  // One pass: accumulate per lane, fold the lanes, reduce over the block.
  auto pass = [&](ReductionOpType op, const std::string& centre) {
    Value a = emit(acc, lanes_ > 1, identity(op, acc));
    for (const RowChunk& chunk : openRowLoop(plan)) {
      Value x = valueAt(in, operandIndex(in, rowIndex(in, chunk.inner)));
      std::string xs = cast(x, in->dtype(), acc);
      if (!centre.empty()) {
        const std::string d = "(" + xs + " - " + centre + ")";
        xs = d + " * " + d;
      }
      // Persistent threads past the row's end hold a copy of its last
      // vector; they must not count it.
      assign(a, chunk.active.empty()
                    ? combine(op, at(a), xs)
                    : "(" + chunk.active + " ? " + combine(op, at(a), xs) +
                          " : " + at(a) + ")");
    }
    closeRowLoop();
    std::string folded = a.lane ? a.name + "[0]" : a.name;
    for (int64_t u = 1; a.lane && u < lanes_; ++u) {
      folded = combine(op, folded, a.name + "[" + std::to_string(u) + "]");
    }
    const char* fn = op == ReductionOpType::Max    ? "nvf_op_max"
                     : op == ReductionOpType::Min  ? "nvf_op_min"
                     : op == ReductionOpType::Prod ? "nvf_op_prod"
                                                   : "nvf_op_sum";
    // The k-th reduction of the row uses buffer k % 2 of nvf_smem.
    const int64_t k = rowReductions_++;
    return emit(acc, false,
                std::string("nvf_block_reduce<") + (k == 0 ? "true" : "false") +
                    ">(" + folded + ", " + fn + "(), reinterpret_cast<" + t +
                    "*>(nvf_smem + " + std::to_string(k % 2 * 32) + "))");
  };
  Index outIdx = rowIndex(e->output(0)->asTensor(), {});
  if (red != nullptr) {
    Value r = pass(red->op(), "");
    std::string v =
        red->op() == ReductionOpType::Mean ? r.name + " / " + count : r.name;
    scopes_.back()[valueKey(e->output(0), outIdx)] = emit(
        e->output(0)->dtype(), false, castExpr(acc, e->output(0)->dtype(), v));
    return;
  }
  Value sum = pass(ReductionOpType::Sum, "");
  Value mean = emit(acc, false, sum.name + " / " + count);
  Value m2 = pass(ReductionOpType::Sum, mean.name);
  const int64_t dof =
      std::max<int64_t>(plan.rowLength - exprAs<VarMeanOp>(e)->correction(), 0);
  scopes_.back()[valueKey(e->output(0), outIdx)] =
      emit(e->output(0)->dtype(), false,
           castExpr(acc, e->output(0)->dtype(),
                    m2.name + " / (" + t + ")" + std::to_string(dof)));
  scopes_.back()[valueKey(e->output(1), outIdx)] =
      emit(e->output(1)->dtype(), false,
           castExpr(acc, e->output(1)->dtype(), mean.name));
}

std::vector<std::string> PointwiseKernelGenerator::columnSumAdds(
    const RowReductionPlan& plan, const RowChunk& chunk) {
  std::vector<std::string> adds;
  for (size_t c = 0; c < plan.columnSums.size(); ++c) {
    const TensorView* in = plan.columnSums[c]->input(0)->asTensor();
    const DataType acc = plan.columnSums[c]->output(0)->dtype();
    Value x = valueAt(in, rowIndex(in, chunk.inner));
    // This thread's columns are the same in every row: nobody else adds
    // to them, so plain adds to shared memory. Lane u of column k sits at
    // u * (rowLength / lanes) + k / lanes: a warp's adds of one lane touch
    // consecutive words (no bank conflicts).
    const int64_t stride = plan.rowLength / lanes_;
    for (int64_t u = 0; u < lanes_; ++u) {
      const std::string lane =
          x.lane ? x.name + "[" + std::to_string(u) + "]" : x.name;
      adds.push_back("nvf_csum" + std::to_string(c) + "[" +
                     std::to_string(u * stride) + " + " + chunk.k + " / " +
                     std::to_string(lanes_) +
                     "] += " + castExpr(in->dtype(), acc, lane) + ";");
    }
  }
  return adds;
}

std::string PointwiseKernelGenerator::columnSumPrologue(
    const RowReductionPlan& plan) const {
  std::ostringstream code;
  for (size_t c = 0; c < plan.columnSums.size(); ++c) {
    const std::string t = cudaType(plan.columnSums[c]->output(0)->dtype());
    code << "  __shared__ " << t << " nvf_csum" << c << "[" << plan.rowLength
         << "];  // this block's rows, summed per column\n"
         << "  for (unsigned c = threadIdx.x; c < " << plan.rowLength
         << "; c += blockDim.x) nvf_csum" << c << "[c] = (" << t << ")0;\n";
  }
  if (!plan.columnSums.empty()) {
    code << "  __syncthreads();\n";
  }
  return code.str();
}

// Each block adds its partial sums into the workspace (sum c at c *
// rowLength, in shared memory's order, then one arrival counter); the
// last block to arrive writes the totals out and leaves the workspace
// zero for the next launch.
std::string PointwiseKernelGenerator::columnSumEpilogue(
    const RowReductionPlan& plan, const std::vector<size_t>& outputs,
    int64_t countersAt) const {
  std::ostringstream code;
  const std::string n = std::to_string(plan.rowLength);
  code << "  __shared__ bool nvf_last;\n  __syncthreads();\n";
  std::vector<std::string> types;
  int64_t offset = 0;
  for (size_t c = 0; c < plan.columnSums.size(); ++c) {
    const DataType acc = plan.columnSums[c]->output(0)->dtype();
    types.push_back(cudaType(acc));
    const std::string a = "nvf_acc" + std::to_string(c);
    const std::string sm = "nvf_csum" + std::to_string(c);
    code << "  " << types[c] << "* " << a << " = reinterpret_cast<" << types[c]
         << "*>(nvf_ws + " << offset << ");\n";
    const bool vec4 =
        acc == DataType::Float && plan.rowLength % 4 == 0 && offset % 16 == 0;
    if (vec4) {
      // sm_90 adds four floats in one atomic: a quarter of the L2 atomics.
      code << "#if __CUDA_ARCH__ >= 900\n"
           << "  for (unsigned c = threadIdx.x * 4; c < " << n
           << "; c += blockDim.x * 4) atomicAdd(reinterpret_cast<float4*>(" << a
           << " + c), make_float4(" << sm << "[c], " << sm << "[c + 1], " << sm
           << "[c + 2], " << sm << "[c + 3]));\n"
           << "#else\n";
    }
    code << "  for (unsigned c = threadIdx.x; c < " << n
         << "; c += blockDim.x) atomicAdd(" << a << " + c, " << sm << "[c]);\n";
    if (vec4) {
      code << "#endif\n";
    }
    offset += plan.rowLength * dataTypeSize(acc);
  }
  code << "  __threadfence();\n  __syncthreads();\n"
       << "  unsigned* nvf_count = reinterpret_cast<unsigned*>(nvf_ws + "
       << countersAt << ");\n"
       << "  if (threadIdx.x == 0) nvf_last = atomicAdd(nvf_count, 1u) == "
          "gridDim.x - 1;\n"
       << "  __syncthreads();\n"
       << "  if (!nvf_last) return;\n  __threadfence();\n";
  for (size_t o : outputs) {
    const TensorView* out = fusion_.outputs()[o]->asTensor();
    const Expr* sum = columnSumOf(out, plan);
    const size_t c = static_cast<size_t>(
        std::find(plan.columnSums.begin(), plan.columnSums.end(), sum) -
        plan.columnSums.begin());
    // The workspace keeps shared memory's lane-major order.
    const std::string at = "(c % " + std::to_string(lanes_) + ") * " +
                           std::to_string(plan.rowLength / lanes_) + " + c / " +
                           std::to_string(lanes_);
    code << "  for (unsigned c = threadIdx.x; c < " << n
         << "; c += blockDim.x) out" << o << "[c] = "
         << castExpr(sum->output(0)->dtype(), out->dtype(),
                     "__ldcg(nvf_acc" + std::to_string(c) + " + " + at + ")")
         << ";\n";
  }
  code << "  __syncthreads();  // every output read the totals\n";
  for (size_t c = 0; c < plan.columnSums.size(); ++c) {
    code << "  for (unsigned c = threadIdx.x; c < " << n
         << "; c += blockDim.x) nvf_acc" << c << "[c] = (" << types[c]
         << ")0;\n";
  }
  code << "  if (threadIdx.x == 0) *nvf_count = 0u;\n";
  return code.str();
}

std::string PointwiseKernelGenerator::rowBody(const RowReductionPlan& plan,
                                              int64_t v) {
  lanes_ = v;
  rowStrategy_ = true;
  body_.str("");
  scopes_.assign(1, {});
  reductionLoops_ = 0;
  rowIdx_.clear();
  for (size_t d = 0; d < plan.rows.size(); ++d) {
    int64_t after = 1;
    for (size_t e = d + 1; e < plan.rows.size(); ++e) {
      after *= plan.rows[e];
    }
    std::string q =
        after == 1 ? "row" : "(row / " + std::to_string(after) + ")";
    std::string expr = d == 0 ? q : q + " % " + std::to_string(plan.rows[d]);
    std::string name = "o" + std::to_string(d);
    line(indexType_ + " " + name + " = " + expr + ";");
    rowIdx_.push_back(Ix{name, false});
  }
  persistentChunks_.clear();
  rowReductions_ = 0;
  for (int64_t p = 0; persistent_ && p < persistentVectors_; ++p) {
    // Each thread owns persistentVectors_ vectors of the row (all loads in
    // flight together); values loaded or computed once stay in registers
    // for the later passes and the outputs.
    const std::string k = "k" + std::to_string(p);
    const std::string active = "active" + std::to_string(p);
    line(indexType_ + " " + k + " = threadIdx.x * " + std::to_string(v) +
         (p ? " + " + std::to_string(p * persistentStride_) : "") + ";");
    if ((p + 1) * persistentStride_ <= plan.rowLength) {
      // Every thread's vector lies inside the row (block is exact).
      persistentChunks_.push_back(RowChunk{innerIndex(plan, k), k, ""});
      continue;
    }
    line("const bool " + active + " = " + k + " < " +
         std::to_string(plan.rowLength) + ";");
    line("if (!" + active + ") " + k + " = " +
         std::to_string(plan.rowLength - v) + ";");
    persistentChunks_.push_back(RowChunk{innerIndex(plan, k), k, active});
  }
  for (const Expr* e : fusion_.exprs()) {
    if (isReductionLike(e) &&
        std::find(plan.columnSums.begin(), plan.columnSums.end(), e) ==
            plan.columnSums.end()) {
      rowReduce(e, plan);
    }
  }
  // Row-shaped outputs: computed by every thread (cheap scalars, and later
  // values may reuse them), written by one.
  std::vector<size_t> fullOutputs;
  std::vector<std::string> rowStores;
  for (size_t o = 0; o < fusion_.outputs().size(); ++o) {
    if (columnSumOf(fusion_.outputs()[o]->asTensor(), plan) != nullptr) {
      continue;  // written after the row loop (columnSumEpilogue)
    }
    const TensorView* tv = rowSource(fusion_.outputs()[o]->asTensor(), plan);
    if (shapeWithoutOnes(tv) != plan.rows) {
      fullOutputs.push_back(o);
      continue;
    }
    rowStores.push_back("out" + std::to_string(o) +
                        "[row] = " + valueAt(tv, rowIndex(tv, {})).name + ";");
  }
  if (!rowStores.empty()) {
    line("if (threadIdx.x == 0) {");
    for (const std::string& st : rowStores) {
      line("  " + st);
    }
    line("}");
  }
  if (!fullOutputs.empty() || !plan.columnSums.empty()) {
    for (const RowChunk& chunk : openRowLoop(plan)) {
      std::vector<std::string> stores = columnSumAdds(plan, chunk);
      for (size_t o : fullOutputs) {
        const TensorView* tv =
            rowSource(fusion_.outputs()[o]->asTensor(), plan);
        Value x = valueAt(tv, rowIndex(tv, chunk.inner));
        const std::string out = "out" + std::to_string(o) + " + row * " +
                                std::to_string(plan.rowLength) + " + " +
                                chunk.k;
        if (v == 1) {
          stores.push_back("*(" + out + ") = " + x.name + ";");
          continue;
        }
        if (!x.lane) {
          x = emit(tv->dtype(), true, x.name);
        }
        stores.push_back("nvf_vstore(" + out + ", " + x.name + ");");
      }
      const bool masked = !chunk.active.empty();
      if (masked) {
        line("if (" + chunk.active + ") {");
      }
      for (const std::string& st : stores) {
        line((masked ? "  " : "") + st);
      }
      if (masked) {
        line("}");
      }
    }
    closeRowLoop();
  }
  return body_.str();
}

}  // namespace pointwise_detail
}  // namespace nvfuser
