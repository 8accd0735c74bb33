#include "codegen/serial_reduction_kernel_generator.h"

#include <algorithm>
#include <sstream>

#include "analysis/tensor_shape.h"
#include "codegen/op_emitter.h"
#include "codegen/rng_device_helpers.h"
#include "exceptions.h"

namespace nvfuser {
namespace codegen_detail {

KernelSource SerialReductionKernelGenerator::generate(const std::string& name) {
  std::string params;
  KernelSource ks = beginKernel(name, &params);
  takePlan(ks);
  if (split_ > 1) {
    std::string body = plannedFamilyBody(ks.families[0]);  // chunked loops
    return generateSplit(std::move(ks), params, body);
  }
  // The bodies before ks moves: argument order is unspecified.
  std::vector<std::string> bodies = plannedFamilyBodies(ks);
  return slotKernel(std::move(ks), params, bodies);
}

void SerialReductionKernelGenerator::takePlan(const KernelSource& ks) {
  // The plan splits only a lone sum (splittableSum): the only output, so
  // the only family.
  NVF_ASSERT(plan_.split.sum == nullptr || ks.families.size() == 1,
             "a split sum next to other output families");
  split_ = plan_.split.sum == nullptr ? 1 : plan_.split.factor;
  NVF_ASSERT(plan_.split.sum == nullptr ||
                 split_ == plan_.split.factorFor(ks.families[0].slots),
             "the plan's split factor ", split_, " is not the one for ",
             ks.families[0].slots, " slots");
  if (split_ > 1) {
    splitAxis_ = plan_.split.axis;
    splitSum_ = plan_.split.sum->output(0);
    findStreamedInputs();
  }
}

void SerialReductionKernelGenerator::writeOutput(
    size_t o, int64_t v, const std::function<Index(const Val*)>& indexOf) {
  if (split_ <= 1) {
    PointwiseKernelGenerator::writeOutput(o, v, indexOf);
    return;
  }
  // This chunk's partial sums, combined by the block (the sum has the
  // output's non-size-1 dims, in the same order).
  Value x = valueAt(splitSum_, indexOf(splitSum_));
  line(x.lane ? "#pragma unroll\n" + std::string(indent_, ' ') +
                    "for (int u = 0; u < " + std::to_string(v) +
                    "; ++u) nvf_p[u] = " + x.name + "[u];"
              : "nvf_p[0] = " + x.name + ";");
}

KernelValueBuilder::LoopRange
SerialReductionKernelGenerator::reductionLoopRange(int64_t dim,
                                                   const std::string& r) const {
  if (split_ <= 1 || dim != splitAxis_) {
    return LoopRange{};
  }
  return LoopRange{"nvf_rb",
                   r + " += " + std::to_string(SplitSumPlan::rowStride(split_)),
                   true};
}

void SerialReductionKernelGenerator::findStreamedInputs() {
  const int64_t largest = largestTensorNumel();
  for (size_t i = 0; i < fusion_.inputs().size(); ++i) {
    const Val* in = fusion_.inputs()[i];
    if (!in->isTensor()) {
      continue;
    }
    std::vector<int64_t> shape = concreteShape(in->asTensor());
    int64_t distinct = 1;
    for (size_t d = 0; d < shape.size(); ++d) {
      distinct *= layouts_[i].strides[d] == 0 ? 1 : shape[d];
    }
    if (distinct == largest) {
      streamed_.insert(in->asTensor());
    }
  }
}

namespace {
// After a tile added its sums to the workspace: the column's last tile to
// arrive moves the sums out (cast) and clears the workspace and counter
// for the next launch.
std::string lastTileMovesSumsOut(const std::string& colTile, int64_t chunkTiles,
                                 int64_t tileElems, const std::string& col,
                                 const std::string& inRange, DataType acc,
                                 DataType outType) {
  std::ostringstream code;
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
       << "          nvf_acc[col] = (" << cudaType(acc) << ")0;\n"
       << "        }\n"
       << "      }\n"
       << "      if (threadIdx.x == 0) nvf_count[" << colTile << "] = 0;\n"
       << "    }\n";
  return code.str();
}

// A tile's partial sums in shared memory, one row of them per group of
// threads, summed per column: into the output, or into the workspace when
// several tiles share the column.
std::string tileSumsOut(int64_t perBlock, int64_t tileElems,
                        const std::string& col, const std::string& inRange,
                        bool toWorkspace, DataType acc, DataType outType) {
  std::ostringstream code;
  code << "    __syncthreads();\n"
       << "    for (unsigned e = threadIdx.x; e < " << tileElems
       << "; e += blockDim.x) {\n"
       << "      " << cudaType(acc) << " s = nvf_part[e];\n"
       << "      for (int w = 1; w < " << perBlock
       << "; ++w) s += nvf_part[w * " << tileElems << " + e];\n"
       << "      " << col << "      " << inRange
       << (toWorkspace ? "atomicAdd(nvf_acc + col, s);\n"
                       : "out0[col] = " + castExpr(acc, outType, "s") + ";\n")
       << "    }\n";
  return code.str();
}
}  // namespace

KernelSource SerialReductionKernelGenerator::generateSplit(
    KernelSource ks, const std::string& params, const std::string& body) {
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
       << tileSumsOut(perBlock, tileElems, col, inRange, chunkTiles > 1, acc,
                      outType);
  if (chunkTiles > 1) {
    code << lastTileMovesSumsOut(colTile, chunkTiles, tileElems, col, inRange,
                                 acc, outType);
  }
  code << "    __syncthreads();  // shared memory is reused by the next tile\n"
       << "  }\n}\n";
  ks.code = code.str();
  return ks;
}

}  // namespace codegen_detail
}  // namespace nvfuser
