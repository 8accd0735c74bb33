// Column sums of a row kernel (row_reduction_plan.h: a norm backward's
// weight and bias gradients next to dx): each thread adds its lanes into a
// per-block shared array in every row; after the row loop the blocks
// combine their partials through the workspace.
#include <sstream>

#include "analysis/tensor_shape.h"
#include "codegen/op_emitter.h"
#include "codegen/row_kernel_generator.h"
#include "exceptions.h"

namespace nvfuser {
namespace codegen_detail {

std::vector<std::string> RowKernelGenerator::columnSumAdds(
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

std::string RowKernelGenerator::columnSumPrologue(
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
std::string RowKernelGenerator::columnSumEpilogue(
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

}  // namespace codegen_detail
}  // namespace nvfuser
