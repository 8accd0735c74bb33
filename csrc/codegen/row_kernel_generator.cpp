#include "codegen/row_kernel_generator.h"

#include <algorithm>
#include <set>

#include "analysis/tensor_shape.h"
#include "codegen/op_emitter.h"
#include "codegen/rng_device_helpers.h"
#include "exceptions.h"
#include "ir/list_string.h"
#include "ir/producer_walk.h"
#include "scheduler/reduction_analysis.h"
#include "scheduler/scheduler.h"

namespace nvfuser {
namespace codegen_detail {

void RowKernelGenerator::takeLaunch() {
  NVF_ASSERT(plan_.rowLaunch == rowLaunch(plan_.rows, plan_.rowVectorWidth),
             "the plan's row launch is not the one for its ",
             plan_.rowVectorWidth, " lanes");
  persistent_ = plan_.rowLaunch.persistent;
  persistentVectors_ = plan_.rowLaunch.vectorsPerThread;
  persistentStride_ = plan_.rowLaunch.stride;
}

bool RowKernelGenerator::provesLanes(size_t, std::string* why) {
  std::string params;
  beginKernel("lane_proof", &params);
  takeLaunch();
  return lanesHold([&] { rowBody(plan_.rows, plan_.rowVectorWidth); }, why);
}

KernelSource RowKernelGenerator::generate(const std::string& name) {
  std::string params;
  KernelSource ks = beginKernel(name, &params);
  const RowReductionPlan& plan = plan_.rows;
  const int64_t v = plan_.rowVectorWidth;
  const RowLaunch& launch = plan_.rowLaunch;
  takeLaunch();
  std::string body = plannedBody(v, [&] { return rowBody(plan, v); });
  for (OutputFamily& fam : ks.families) {
    fam.vectorWidth = v;
    fam.slots = plan.numRows;
  }
  ks.rowReduction = true;
  ks.blockPerSlot = true;
  ks.slots = plan.numRows;
  ks.block = launch.threads;
  // Column sums: accumulators after the outputs' (and the index error
  // word's) parameters, then one arrival counter.
  std::vector<size_t> columnSumOutputs;
  for (size_t o = 0; o < ks.outputs.size(); ++o) {
    if (columnSumOf(ks.outputs[o], plan) != nullptr) {
      columnSumOutputs.push_back(o);
    }
  }
  const int64_t countersAt = (columnSumBytes(plan) + 7) / 8 * 8;
  ks.columnSums = !plan.columnSums.empty();
  if (ks.columnSums) {
    ks.workspaceBytes = countersAt + 4;
  }
  std::ostringstream code;
  code << deviceHelpersFor(fusion_) << "\nextern \"C\" __global__ void "
       << ks.name << "(" << params
       << (ks.columnSums ? ", unsigned char* __restrict__ nvf_ws" : "")
       << ") {\n"
       << "  __shared__ double nvf_smem[64];  // two buffers of 32 warps\n"
       << columnSumPrologue(plan) << "  // one block per row of "
       << plan.rowLength << " elements, " << v << " lane(s) per thread"
       << narrowedNote(0) << "\n"
       << "  for (" << indexType_ << " row = blockIdx.x; row < " << plan.numRows
       << "; row += gridDim.x) {\n"
       << body << "  }\n"
       << (ks.columnSums ? columnSumEpilogue(plan, columnSumOutputs, countersAt)
                         : "")
       << "}\n";
  ks.code = code.str();
  return ks;
}

std::string RowKernelGenerator::valueKey(const Val* v, const Index& idx) const {
  if (v->definition() != nullptr && isReductionLike(v->definition())) {
    return v->ref() + "@row";
  }
  return KernelValueBuilder::valueKey(v, idx);
}

Value RowKernelGenerator::reduce(const Expr* e, const Val* /*v*/,
                                 const Index& /*idx*/) {
  NVF_THROW(Internal, "row kernel: ", exprRef(e),
            " is not one of the row's passes");
}

void RowKernelGenerator::writeRowOutputs(const RowReductionPlan& plan,
                                         int64_t v) {
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
}

Index RowKernelGenerator::rowIndex(const TensorView* tv,
                                   const Index& inner) const {
  Index idx;
  size_t next = 0;
  const size_t nRows = rowIdx_.size();
  for (int64_t s : concreteShape(tv)) {
    if (s == 1) {
      idx.push_back(Ix{IndexExpr(), false});
    } else {
      idx.push_back(next < nRows ? rowIdx_[next] : inner.at(next - nRows));
      ++next;
    }
  }
  return idx;
}

std::vector<RowChunk> RowKernelGenerator::openRowLoop(
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

Index RowKernelGenerator::innerIndex(const RowReductionPlan& plan,
                                     const std::string& k) {
  Index inner;
  const std::vector<IndexExpr> coords =
      delinearize(IndexExpr::named(k), plan.inner);
  for (size_t d = 0; d < plan.inner.size(); ++d) {
    inner.push_back(
        Ix{emitIndex(coords[d]), lanes_ > 1 && d + 1 == plan.inner.size()});
  }
  return inner;
}

void RowKernelGenerator::closeRowLoop() {
  if (persistent_) {
    return;
  }
  scopes_.pop_back();
  indent_ -= 2;
  line("}");
}

void RowKernelGenerator::rowReduce(const Expr* e,
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

namespace {
// The fusion inputs computing v reads, not through reductions (their
// values come from the row's passes).
std::set<const Val*> inputsRead(const Val* v) {
  std::set<const Val*> inputs;
  walkProducers({v}, [&](const Val* x) {
    const Expr* e = x->definition();
    if (e == nullptr) {
      inputs.insert(x);
    }
    return x != v && e != nullptr && isReductionLike(e) ? WalkStep::Skip
                                                        : WalkStep::Expand;
  });
  return inputs;
}
}  // namespace

// Whether a pass after the row's first (a row reduction or a column sum)
// reads an input the first does not: a load that would wait behind the
// first pass's block reduction.
bool RowKernelGenerator::laterPassesReadMore(
    const RowReductionPlan& plan) const {
  const std::vector<Expr*>& exprs = fusion_.exprs();
  auto first = std::find_if(exprs.begin(), exprs.end(), [&](const Expr* e) {
    return isReductionLike(e) && !isColumnSum(e, plan);
  });
  if (first == exprs.end()) {
    return false;
  }
  const std::set<const Val*> firstReads = inputsRead((*first)->input(0));
  for (const Expr* e : exprs) {
    if (e == *first || !isReductionLike(e)) {
      continue;
    }
    for (const Val* in : inputsRead(e->input(0))) {
      if (firstReads.count(in) == 0) {
        return true;
      }
    }
  }
  return false;
}

// A persistent row's values stay in registers for every pass, so the
// loads of every pass can come first. Loaded where first used, a load
// after a block reduction waits for the reduction's barrier and then for
// memory (a layer norm backward read dy, reduced, and only then read x:
// 180 -> 160 us on an H100). Kernels whose later passes read nothing new
// (softmax, norm forwards) keep their code; loads only the outputs read
// stay where they are (early, a layer norm forward's weight and bias took
// it from 56 to 123 registers and 94% to 90% of copy bandwidth).
void RowKernelGenerator::loadEveryPassFirst() {
  for (const RowChunk& chunk : persistentChunks_) {
    std::vector<Request> roots;
    for (const Expr* e : fusion_.exprs()) {
      if (isReductionLike(e)) {
        const TensorView* in = e->input(0)->asTensor();
        roots.push_back({in, operandIndex(in, rowIndex(in, chunk.inner))});
      }
    }
    loadEagerInputs(roots);
  }
}

std::string RowKernelGenerator::rowBody(const RowReductionPlan& plan,
                                        int64_t v) {
  resetBody(v);
  rowIdx_.clear();
  const std::vector<IndexExpr> coords =
      delinearize(IndexExpr::named("row"), plan.rows);
  for (size_t d = 0; d < plan.rows.size(); ++d) {
    rowIdx_.push_back(
        Ix{defineIndex("o" + std::to_string(d), coords[d]), false});
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
  if (persistent_ && options_.earlyLoads && laterPassesReadMore(plan)) {
    loadEveryPassFirst();
  }
  for (const Expr* e : fusion_.exprs()) {
    if (isReductionLike(e) && !isColumnSum(e, plan)) {
      rowReduce(e, plan);
    }
  }
  writeRowOutputs(plan, v);
  return body_.str();
}

}  // namespace codegen_detail
}  // namespace nvfuser
