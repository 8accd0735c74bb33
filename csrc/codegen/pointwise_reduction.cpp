// Reductions inside generated kernels: each thread owns output elements and
// loops over the reduced dims itself. Efficient when the reduced dims are
// not the innermost one (GQA head sums, gradients of broadcast tables,
// column sums with enough columns): consecutive lanes and threads then read
// consecutive elements in every iteration. var_mean is two-pass (mean, then
// the sum of squared deviations), in Float (Double for Double inputs).
#include "analysis/tensor_shape.h"
#include "codegen/op_emitter.h"
#include "codegen/pointwise_generator.h"
#include "codegen/rng_device_helpers.h"
#include "exceptions.h"
#include "scheduler/scheduler.h"

namespace nvfuser {
namespace pointwise_detail {

// The type a reduction accumulates in.
DataType accumulatorType(DataType out, DataType in) {
  if (isIntegralType(out)) {
    return out;
  }
  if (out == DataType::Double || in == DataType::Double) {
    return DataType::Double;
  }
  return DataType::Float;
}

std::string identity(ReductionOpType op, DataType t) {
  const bool isFloat = t == DataType::Float || t == DataType::Double;
  const std::string inf = t == DataType::Double
                              ? "__longlong_as_double(0x7ff0000000000000LL)"
                              : "__int_as_float(0x7f800000)";
  switch (op) {
    case ReductionOpType::Sum:
    case ReductionOpType::Mean:
      return "(" + cudaType(t) + ")0";
    case ReductionOpType::Prod:
      return "(" + cudaType(t) + ")1";
    case ReductionOpType::Max:
      if (isFloat) {
        return "(-" + inf + ")";
      }
      return t == DataType::Int ? "(-9223372036854775807LL - 1)"
                                : "(-2147483647 - 1)";
    case ReductionOpType::Min:
      if (isFloat) {
        return inf;
      }
      return t == DataType::Int ? "9223372036854775807LL" : "2147483647";
  }
  return "0";
}

std::string combine(ReductionOpType op, const std::string& acc,
                    const std::string& x) {
  switch (op) {
    case ReductionOpType::Sum:
    case ReductionOpType::Mean:
      return acc + " + " + x;
    case ReductionOpType::Prod:
      return acc + " * " + x;
    case ReductionOpType::Max:
      return "nvf_max(" + acc + ", " + x + ")";
    case ReductionOpType::Min:
      return "nvf_min(" + acc + ", " + x + ")";
  }
  return acc;
}

namespace {
int64_t reducedCount(const std::vector<int64_t>& shape,
                     const std::vector<int64_t>& axes) {
  int64_t n = 1;
  for (int64_t a : axes) {
    n *= shape[a];
  }
  return n;
}
}  // namespace

Index PointwiseKernelGenerator::openReductionLoops(
    const TensorView* in, const std::vector<int64_t>& axes, const Index& idx) {
  std::vector<int64_t> shape = concreteShape(in);
  std::vector<bool> reduced(shape.size(), false);
  for (int64_t a : axes) {
    reduced[a] = true;
  }
  Index inIdx;
  size_t next = 0;
  int opened = 0;  // loops of one iteration are not loops
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!reduced[d]) {
      inIdx.push_back(idx[next++]);
      continue;
    }
    if (shape[d] == 1) {
      inIdx.push_back(Ix{"0", false});
      continue;
    }
    ++opened;
    std::string r = "r" + std::to_string(counter_++);
    std::string begin = "0";
    std::string end = std::to_string(shape[d]);
    const bool chunked = split_ > 1 && int64_t(d) == splitAxis_;
    std::string step = "++" + r;
    if (chunked) {  // this thread's rows, one in every rowStride
      begin = "nvf_rb";
      step = r + " += " + std::to_string(SplitSumPlan::rowStride(split_));
    }
    line("#pragma unroll " + std::to_string(serialUnroll(shape[d], chunked)));
    line("for (" + indexType_ + " " + r + " = " + begin + "; " + r + " < " +
         end + "; " + step + ") {");
    indent_ += 2;
    inIdx.push_back(Ix{r, false});
  }
  // Nothing computed inside the loops is reused after them.
  scopes_.emplace_back();
  reductionLoops_ += opened;
  return inIdx;
}

void PointwiseKernelGenerator::closeReductionLoops(
    const TensorView* in, const std::vector<int64_t>& axes) {
  scopes_.pop_back();
  std::vector<int64_t> shape = concreteShape(in);
  for (int64_t a : axes) {
    if (shape[a] != 1) {
      indent_ -= 2;
      --reductionLoops_;
      line("}");
    }
  }
}

Value PointwiseKernelGenerator::reduce(const Expr* e, const Val* v,
                                       const Index& idx) {
  // A row kernel computes each reduction once per row (rowReduce); getting
  // here would loop over the row again for every element it is used by.
  NVF_CHECK_KIND(!rowStrategy_, Internal, "row kernel: ", exprRef(e),
                 " is not one of the row's passes");
  const TensorView* in = e->input(0)->asTensor();
  bool lane = false;
  for (const Ix& i : idx) {
    lane = lane || i.lane;
  }
  const auto* red = exprAs<ReductionOp>(e);
  const std::vector<int64_t>& axes =
      red ? red->axes() : exprAs<VarMeanOp>(e)->axes();
  const int64_t n = reducedCount(concreteShape(in), axes);
  const DataType acc = accumulatorType(e->output(0)->dtype(), in->dtype());
  const std::string count = "(" + cudaType(acc) + ")" + std::to_string(n);
  if (red != nullptr) {
    const ReductionOpType op = red->op();
    Value sum = emit(acc, lane, identity(op, acc));
    Index inIdx = openReductionLoops(in, axes, idx);
    Value x = valueAt(in, operandIndex(in, inIdx));
    assign(sum, combine(op, at(sum), cast(x, in->dtype(), acc)));
    closeReductionLoops(in, axes);
    std::string r =
        op == ReductionOpType::Mean ? at(sum) + " / " + count : at(sum);
    return emit(v->dtype(), lane, castExpr(acc, v->dtype(), r));
  }
  // var_mean, two passes.
  Value sum = emit(acc, lane, "(" + cudaType(acc) + ")0");
  Index inIdx = openReductionLoops(in, axes, idx);
  Value x = valueAt(in, operandIndex(in, inIdx));
  assign(sum, at(sum) + " + " + cast(x, in->dtype(), acc));
  closeReductionLoops(in, axes);
  Value mean = emit(acc, lane, at(sum) + " / " + count);
  Value m2 = emit(acc, lane, "(" + cudaType(acc) + ")0");
  inIdx = openReductionLoops(in, axes, idx);
  x = valueAt(in, operandIndex(in, inIdx));
  const std::string d =
      "(" + cast(x, in->dtype(), acc) + " - " + at(mean) + ")";
  assign(m2, at(m2) + " + " + d + " * " + d);
  closeReductionLoops(in, axes);
  const int64_t correction = exprAs<VarMeanOp>(e)->correction();
  const std::string dof = "(" + cudaType(acc) + ")" +
                          std::to_string(std::max<int64_t>(n - correction, 0));
  Value var = emit(e->output(0)->dtype(), lane,
                   castExpr(acc, e->output(0)->dtype(), at(m2) + " / " + dof));
  Value meanOut = emit(e->output(1)->dtype(), lane,
                       castExpr(acc, e->output(1)->dtype(), at(mean)));
  // Both outputs are now known at this index.
  const std::string key = keyOf(idx);
  scopes_.back()[e->output(0)->ref() + "@" + key] = var;
  scopes_.back()[e->output(1)->ref() + "@" + key] = meanOut;
  return v == e->output(0) ? var : meanOut;
}

KernelSource PointwiseKernelGenerator::generateSplit(KernelSource ks,
                                                     const std::string& params,
                                                     const std::string& body) {
  const OutputFamily& fam = ks.families.at(0);
  const DataType acc = splitSum_->dtype();
  const DataType outType = ks.outputs.at(0)->dtype();
  const std::string t = cudaType(acc);
  const std::string ix = indexType_;
  const int64_t v = fam.vectorWidth;
  const int64_t perBlock = SplitSumPlan::chunksPerBlock(split_);
  const int64_t width = SplitSumPlan::kBlock / perBlock;  // vectors per tile
  const int64_t tileElems = width * v;
  const int64_t colTiles = (fam.slots + width - 1) / width;
  const int64_t chunkTiles = SplitSumPlan::rowStride(split_) / perBlock;
  ks.slots = colTiles * chunkTiles;
  ks.block = SplitSumPlan::kBlock;
  ks.blockPerSlot = true;
  const std::string vs = std::to_string(v);
  const std::string ws = std::to_string(width);
  const std::string colTile = "tile % " + std::to_string(colTiles);
  const std::string col = "const " + ix + " col = (" + colTile + ") * " +
                          std::to_string(tileElems) + " + e;\n";
  const std::string inRange = "if (col < " + std::to_string(fam.numel) + ") ";
  std::ostringstream code;
  code << deviceHelpersFor(fusion_) << "\nextern \"C\" __global__ void "
       << ks.name << "(" << params;
  // Workspace (several tiles per column): one accumulator per output
  // element, then one arrival counter per column of tiles.
  const int64_t countersAt = (fam.numel * dataTypeSize(acc) + 7) / 8 * 8;
  if (chunkTiles > 1) {
    ks.workspaceBytes = countersAt + colTiles * 4;
    code << ", unsigned char* __restrict__ nvf_ws";
  }
  code << ") {\n"
       << "  // tiles of " << width << " vectors x " << perBlock
       << " threads per vector, " << chunkTiles << " tile(s) per column\n"
       << "  __shared__ " << t << " nvf_part[" << SplitSumPlan::kBlock * v
       << "];\n";
  if (chunkTiles > 1) {
    code << "  __shared__ bool nvf_last;\n"
         << "  " << t << "* nvf_acc = reinterpret_cast<" << t << "*>(nvf_ws);\n"
         << "  unsigned* nvf_count = reinterpret_cast<unsigned*>(nvf_ws + "
         << countersAt << ");\n";
  }
  // A thread sums rows nvf_rb, nvf_rb + rowStride, ...: the grid
  // walks the rows top to bottom together, so the bytes being read at any
  // time are one window, as in a copy (on an H200 the column sum reads at
  // 3.41 TB/s this way with loads that skip L1, 2.69 with loads through L1;
  // with each thread summing a chunk of consecutive rows, 3.21 and 3.00).
  code << "  for (" << ix << " tile = blockIdx.x; tile < " << ks.slots
       << "; tile += gridDim.x) {\n"
       << "    " << ix << " cv = (" << colTile << ") * " << ws
       << " + threadIdx.x % " << ws << ";\n"
       << "    const " << ix << " nvf_rb = (tile / " << colTiles << ") * "
       << perBlock << " + threadIdx.x / " << ws << ";\n"
       << "    nvf_array<" << t << ", " << vs << "> nvf_p;\n"
       << "    #pragma unroll\n"
       << "    for (int u = 0; u < " << vs << "; ++u) nvf_p[u] = (" << t
       << ")0;\n"
       << "    if (cv < " << fam.slots << ") {\n"
       << "      " << ix << " i = cv * " << vs << ";\n"
       << body << "    }\n"
       << "    #pragma unroll\n"
       << "    for (int u = 0; u < " << vs << "; ++u) nvf_part[threadIdx.x * "
       << vs << " + u] = nvf_p[u];\n"
       << "    __syncthreads();\n"
       << "    for (unsigned e = threadIdx.x; e < " << tileElems
       << "; e += blockDim.x) {\n"
       << "      " << t << " s = nvf_part[e];\n"
       << "      for (int w = 1; w < " << perBlock
       << "; ++w) s += nvf_part[w * " << tileElems << " + e];\n"
       << "      " << col << "      " << inRange
       << (chunkTiles > 1
               ? "atomicAdd(nvf_acc + col, s);\n"
               : "out0[col] = " + castExpr(acc, outType, "s") + ";\n")
       << "    }\n";
  if (chunkTiles > 1) {
    code << "    // Our adds are visible before we count ourselves in; the\n"
         << "    // last to arrive moves the column's sums out and clears the\n"
         << "    // workspace for the next launch.\n"
         << "    __threadfence();\n"
         << "    __syncthreads();\n"
         << "    if (threadIdx.x == 0) nvf_last = atomicAdd(nvf_count + ("
         << colTile << "), 1u) == " << chunkTiles - 1 << "u;\n"
         << "    __syncthreads();\n"
         << "    if (nvf_last) {\n"
         << "      __threadfence();\n"
         << "      for (unsigned e = threadIdx.x; e < " << tileElems
         << "; e += blockDim.x) {\n"
         << "        " << col << "        " << inRange << "{\n"
         << "          out0[col] = "
         << castExpr(acc, outType, "__ldcg(nvf_acc + col)") << ";\n"
         << "          nvf_acc[col] = (" << t << ")0;\n"
         << "        }\n"
         << "      }\n"
         << "      if (threadIdx.x == 0) nvf_count[" << colTile << "] = 0;\n"
         << "    }\n";
  }
  code << "    __syncthreads();  // shared memory is reused by the next tile\n"
       << "  }\n}\n";
  ks.code = code.str();
  return ks;
}

}  // namespace pointwise_detail
}  // namespace nvfuser
