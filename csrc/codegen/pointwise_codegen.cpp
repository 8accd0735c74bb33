#include "codegen/pointwise_codegen.h"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>

#include "analysis/tensor_shape.h"
#include "codegen/op_emitter.h"
#include "codegen/pointwise_generator.h"
#include "codegen/rng_device_helpers.h"
#include "exceptions.h"

namespace nvfuser {

std::vector<int64_t> denseStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 0);
  int64_t s = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = shape[d] == 1 ? 0 : s;
    s *= shape[d];
  }
  return strides;
}

namespace pointwise_detail {

namespace {
// The body of the widest lane count that `generate` can prove: v first
// halves until it divides the innermost `extent`, then once per
// NotVectorizable (one lane always works). Leaves the width used in v.
template <typename Generate>
std::string widestProvenBody(int64_t& v, int64_t extent, Generate generate) {
  while (v > 1 && extent % v != 0) {
    v /= 2;
  }
  for (;; v /= 2) {
    try {
      return generate(v);
    } catch (const NotVectorizable&) {
      NVF_ASSERT(v > 1, "a scalar kernel needs no proof");
    }
  }
}
}  // namespace

// The body of one family for slot-relative element index `i`, with v lanes;
// throws NotVectorizable when v lanes cannot be proven contiguous.
std::string PointwiseKernelGenerator::familyBody(const OutputFamily& family,
                                                 int64_t v) {
  lanes_ = v;
  body_.str("");
  scopes_.assign(1, {});
  reductionLoops_ = 0;  // an abandoned try may have left loops open
  const std::vector<int64_t>& loop = family.loop;
  Index loopIdx;
  for (size_t d = 0; d < loop.size(); ++d) {
    int64_t inner = 1;
    for (size_t e = d + 1; e < loop.size(); ++e) {
      inner *= loop[e];
    }
    std::string q = inner == 1 ? "i" : "(i / " + std::to_string(inner) + ")";
    std::string expr = d == 0 ? q : q + " % " + std::to_string(loop[d]);
    std::string name = "i" + std::to_string(d);
    line(indexType_ + " " + name + " = " + expr + ";");
    loopIdx.push_back(Ix{name, v > 1 && d + 1 == loop.size()});
  }
  // A tensor of the family's non-size-1 dims, at the loop indices.
  auto indexOf = [&](const Val* t) {
    Index idx;
    size_t next = 0;
    for (int64_t s : concreteShape(t->asTensor())) {
      idx.push_back(s == 1 ? Ix{"0", false} : loopIdx[next++]);
    }
    return idx;
  };
  for (size_t o : family.outputs) {
    const TensorView* tv = fusion_.outputs()[o]->asTensor();
    const std::string out = "out" + std::to_string(o);
    if (split_ > 1) {  // this chunk's partial sums, combined by the block
      // (the sum has the output's non-size-1 dims, in the same order)
      Value x = valueAt(splitSum_, indexOf(splitSum_));
      line(x.lane ? "#pragma unroll\n" + std::string(indent_, ' ') +
                        "for (int u = 0; u < " + std::to_string(v) +
                        "; ++u) nvf_p[u] = " + x.name + "[u];"
                  : "nvf_p[0] = " + x.name + ";");
      continue;
    }
    Value x = valueAt(tv, indexOf(tv));
    if (v == 1) {
      line(out + "[i] = " + x.name + ";");
      continue;
    }
    if (!x.lane) {
      x = emit(tv->dtype(), true, x.name);
    }
    line("nvf_vstore(" + out + " + i, " + x.name + ");");
  }
  return body_.str();
}

void PointwiseKernelGenerator::findStreamedInputs() {
  int64_t largest = 0;
  for (const Val* v : fusion_.vals()) {
    if (v->isTensor()) {
      largest = std::max(largest, numel(v->asTensor()));
    }
  }
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

KernelSource PointwiseKernelGenerator::generate(const std::string& name) {
  KernelSource ks;
  ks.name = name;
  std::ostringstream params;
  int k = 0;
  int64_t maxInBytes = 1;
  int64_t minInBytes = 8;
  const bool hasReduction = reduces(fusion_);
  for (const Val* in : fusion_.inputs()) {
    std::string p = (in->isTensor() ? "in" : "s") + std::to_string(k++);
    paramName_[in] = p;
    ks.inputs.push_back(in);
    params << (params.tellp() ? ", " : "");
    if (!passedByValue(in)) {
      params << "const " << cudaType(in->dtype()) << "* __restrict__ " << p;
      maxInBytes = std::max(maxInBytes, dataTypeSize(in->dtype()));
      minInBytes = std::min(minInBytes, dataTypeSize(in->dtype()));
    } else {
      params << cudaType(in->dtype()) << " " << p;
    }
  }
  int64_t maxNumel = 0;
  for (size_t o = 0; o < fusion_.outputs().size(); ++o) {
    const TensorView* tv = fusion_.outputs()[o]->asTensor();
    ks.outputs.push_back(tv);
    params << (params.tellp() ? ", " : "") << cudaType(tv->dtype())
           << "* __restrict__ out" << o;
    std::vector<int64_t> loop = shapeWithoutOnes(tv);
    auto fam =
        std::find_if(ks.families.begin(), ks.families.end(),
                     [&](const OutputFamily& f) { return f.loop == loop; });
    if (fam == ks.families.end()) {
      OutputFamily f;
      f.loop = loop;
      f.numel = numel(tv);
      ks.families.push_back(f);
      fam = ks.families.end() - 1;
    }
    fam->outputs.push_back(o);
  }
  for (const Expr* e : fusion_.exprs()) {
    ks.reportsIndexErrors =
        ks.reportsIndexErrors || e->type() == ExprType::Gather;
  }
  if (ks.reportsIndexErrors) {
    params << ", int* __restrict__ nvf_index_error";
  }
  for (const Val* val : fusion_.vals()) {
    if (val->isTensor()) {
      maxNumel = std::max(maxNumel, numel(val->asTensor()));
    }
  }
  // The farthest element an input is read at (its view may span more
  // memory than its elements, e.g. a slice of a wider row).
  for (size_t i = 0; i < fusion_.inputs().size(); ++i) {
    const Val* in = fusion_.inputs()[i];
    if (!in->isTensor()) {
      continue;
    }
    std::vector<int64_t> shape = concreteShape(in->asTensor());
    int64_t last = 1;
    for (size_t d = 0; d < shape.size(); ++d) {
      last += std::max<int64_t>(shape[d] - 1, 0) * layouts_[i].strides[d];
    }
    maxNumel = std::max(maxNumel, last);
  }
  // Unsigned 32-bit index math when everything fits: divisions by constant
  // extents are then one multiply-high. Every index the walk computes is
  // non-negative where it is used (pad and cat subtract only inside the
  // branch whose condition guarantees it).
  indexType_ = maxNumel < (int64_t(1) << 31) - 1024 && !options_.forceInt64Index
                   ? "unsigned"
                   : "int64_t";
  if (plan_.strategy == KernelStrategy::Rows) {
    return generateRows(std::move(ks), plan_.rows, params.str(), maxInBytes);
  }
  std::ostringstream loopBody;
  for (size_t f = 0; f < ks.families.size(); ++f) {
    OutputFamily& fam = ks.families[f];
    int64_t maxOutBytes = 1;
    for (size_t o : fam.outputs) {
      maxOutBytes = std::max(maxOutBytes, dataTypeSize(ks.outputs[o]->dtype()));
    }
    // 16 bytes per output store; an input load of wider elements takes up
    // to four 16-byte chunks (int64 position ids next to bf16 outputs). A
    // kernel that reduces reads far more than it writes: its lanes follow
    // 16-byte loads of the narrowest input instead (up to 32-byte stores).
    int64_t storeBytes = hasReduction ? 32 : 16;
    int64_t v = options_.vectorize ? std::min<int64_t>(storeBytes / maxOutBytes,
                                                       64 / maxInBytes)
                                   : 1;
    if (hasReduction && options_.vectorize) {
      v = std::min<int64_t>(v, 16 / minInBytes);
    }
    const int64_t inner = fam.loop.empty() ? 1 : fam.loop.back();
    auto generateFamily = [&](int64_t w) { return familyBody(fam, w); };
    std::string body = widestProvenBody(v, inner, generateFamily);
    fam.vectorWidth = v;
    fam.slots = fam.numel / v;
    split_ = splitFactor(fam);
    if (split_ > 1) {  // a lone sum: the only family
      findStreamedInputs();
      body = widestProvenBody(v, inner, generateFamily);  // chunked loops
      fam.vectorWidth = v;
      fam.slots = fam.numel / v;
      return generateSplit(std::move(ks), params.str(), body);
    }
    const std::string begin = std::to_string(ks.slots);
    ks.slots += fam.slots;
    ks.fullGrid = plan_.fullGrid;
    const std::string end = std::to_string(ks.slots);
    if (ks.families.size() > 1) {
      loopBody << "    " << (f == 0 ? "if" : "} else if") << " (slot < " << end
               << ") {  // family " << f << ": " << fam.outputs.size()
               << " output(s), " << v << " lane(s)\n";
    } else {
      loopBody << "    {\n";
    }
    loopBody << "      " << indexType_
             << " s = " << (f == 0 ? "slot" : "(slot - " + begin + ")") << ";\n"
             << interleavedCatOrder(fam) << "      " << indexType_
             << " i = s * " << v << ";\n"
             << body;
  }
  loopBody << "    }\n";
  std::ostringstream code;
  code << deviceHelpersFor(fusion_) << "\nextern \"C\" __global__ void " << name
       << "(" << params.str() << ") {\n"
       << "  for (" << indexType_ << " slot = blockIdx.x * (" << indexType_
       << ")blockDim.x + threadIdx.x; slot < " << ks.slots
       << "; slot += gridDim.x * (" << indexType_ << ")blockDim.x) {\n"
       << loopBody.str() << "  }\n}\n";
  ks.code = code.str();
  return ks;
}

// Runs of R slots share a cat position (R = elements per position / lanes).
// Groups of K x C x R slots (C positions; K the fewest runs that fill whole
// warps) are taken position-major: slot r of a group is run k = r / R % K
// of position c = r / (K R), i.e. memory slot (k C + c) R + r % R. Warps
// then stay on one cat part; each still writes runs of R whole vectors.
// Slots past the last whole group keep their order.
std::string PointwiseKernelGenerator::interleavedCatOrder(
    const OutputFamily& fam) const {
  constexpr int64_t kWarp = 32;
  if (!plan_.interleavedCat ||
      std::find(fam.outputs.begin(), fam.outputs.end(),
                plan_.interleavedCat->output) == fam.outputs.end()) {
    return "";
  }
  const int64_t v = fam.vectorWidth;
  const int64_t elements = plan_.interleavedCat->innerElements;
  if (elements % v != 0 || (elements / v) % kWarp == 0) {
    return "";
  }
  const int64_t r = elements / v;
  const int64_t k = kWarp / std::gcd(r, kWarp);
  const int64_t c = plan_.interleavedCat->extent;
  const int64_t group = k * c * r;
  const int64_t whole = fam.slots / group * group;
  if (whole == 0) {
    return "";
  }
  auto n = [](int64_t x) { return std::to_string(x); };
  const std::string open =
      whole == fam.slots ? "{" : "if (s < " + n(whole) + ") {";
  return "      " + open + "  // warps on one cat position\n        " +
         indexType_ + " r = s % " + n(group) + ";\n        s = s - r + ((r / " +
         n(r) + " % " + n(k) + ") * " + n(c) + " + r / " + n(k * r) + ") * " +
         n(r) + " + r % " + n(r) + ";\n      }\n";
}

// A kernel whose only output is one floating-point sum (or a cast of it),
// with too few output vectors to fill the GPU, splits its longest reduced
// dim into chunks: one thread per (chunk, vector); a block combines its
// chunks, and with several blocks per column their sums are added
// atomically in a workspace (the summation order then varies from run to
// run) that the last block of the column writes out.
int64_t PointwiseKernelGenerator::splitFactor(const OutputFamily& fam) {
  const ReductionOp* red = plan_.splittableSum;
  if (red == nullptr) {
    return 1;
  }
  const Val* sum = red->output(0);
  // Chunks of the longest reduced dim; a thread loops over the others
  // whole, and over at least 32 values in all.
  std::vector<int64_t> shape = concreteShape(red->input(0)->asTensor());
  int64_t rows = 1;
  int64_t total = 1;
  for (int64_t a : red->axes()) {
    total *= shape[a];
    if (shape[a] > rows) {
      rows = shape[a];
      splitAxis_ = a;
    }
  }
  splitSum_ = sum;
  const int64_t wanted = kSplitThreads / std::max<int64_t>(fam.slots, 1);
  const int64_t factor = std::min({wanted, rows / 8, total / 32});
  if (factor < 2) {
    return 1;
  }
  // Chunks of a multiple of 8 rows: each thread's share of the rows is
  // then a multiple of 8 (no remainder in the unrolled loop) when they
  // divide evenly.
  const int64_t chunk = ((rows + factor - 1) / factor + 7) / 8 * 8;
  return (rows + chunk - 1) / chunk;
}

KernelSource PointwiseKernelGenerator::generateRows(
    KernelSource ks, const RowReductionPlan& plan, const std::string& params,
    int64_t maxInBytes) {
  // Lanes from the full-row outputs' stores; with row-shaped outputs only,
  // from the inputs' 16-byte loads.
  int64_t maxOutBytes = 0;
  for (const TensorView* o : ks.outputs) {
    if (columnSumOf(o, plan) == nullptr &&
        shapeWithoutOnes(rowSource(o, plan)) != plan.rows) {
      maxOutBytes = std::max(maxOutBytes, dataTypeSize(o->dtype()));
    }
  }
  int64_t v = !options_.vectorize ? 1
              : maxOutBytes > 0
                  ? std::min<int64_t>(16 / maxOutBytes, 64 / maxInBytes)
                  : std::max<int64_t>(16 / maxInBytes, 1);
  std::string body = widestProvenBody(v, plan.inner.back(), [&](int64_t w) {
    // Rows of up to 8 x 128 vectors are held in registers.
    const int64_t vectors = plan.rowLength / w;
    persistent_ = plan.rowLength % w == 0 && vectors >= 1 &&
                  vectors <= kMaxPersistentVectors * kPersistentThreads;
    // With column sums a block takes many rows in turn (one wave): more
    // threads per block keep more loads in flight.
    const int64_t threads =
        plan.columnSums.empty() ? kPersistentThreads : kColumnSumThreads;
    persistentVectors_ =
        std::max<int64_t>((vectors + threads - 1) / threads, 1);
    ks.block = std::max<int64_t>(
        ((vectors + persistentVectors_ - 1) / persistentVectors_ + 31) / 32 *
            32,
        32);
    persistentStride_ = ks.block * w;
    return rowBody(plan, w);
  });
  for (OutputFamily& fam : ks.families) {
    fam.vectorWidth = v;
    fam.slots = plan.numRows;
  }
  ks.rowReduction = true;
  ks.blockPerSlot = true;
  ks.slots = plan.numRows;
  if (!persistent_) {  // enough threads for one vector each, 32 to 512
    ks.block = 32;
    while (ks.block < 512 && ks.block * v < plan.rowLength) {
      ks.block *= 2;
    }
  }
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
       << plan.rowLength << " elements, " << v << " lane(s) per thread\n"
       << "  for (" << indexType_ << " row = blockIdx.x; row < " << plan.numRows
       << "; row += gridDim.x) {\n"
       << body << "  }\n"
       << (ks.columnSums ? columnSumEpilogue(plan, columnSumOutputs, countersAt)
                         : "")
       << "}\n";
  ks.code = code.str();
  return ks;
}

}  // namespace pointwise_detail

bool passedByValue(const Val* input) {
  return !input->isTensor() || input->asTensor()->isCpuScalar();
}

KernelSource generatePointwiseKernel(const Fusion& fusion,
                                     const KernelPlan& plan,
                                     const std::string& name,
                                     const std::vector<TensorLayout>& layouts,
                                     PointwiseCodegenOptions options) {
  return pointwise_detail::PointwiseKernelGenerator(fusion, plan, layouts,
                                                    options)
      .generate(name);
}

KernelSource generatePointwiseKernel(const Fusion& fusion,
                                     const std::string& name,
                                     const std::vector<TensorLayout>& layouts,
                                     PointwiseCodegenOptions options) {
  KernelPlan plan;
  const SchedulerType type = kernelSchedulerFor(fusion);
  Decision d = planKernel(type, fusion, &plan);
  NVF_CHECK_KIND(d.ok(), Internal, "no ", toString(type),
                 " kernel plan for this fusion: ", d.reason());
  return generatePointwiseKernel(fusion, plan, name, layouts, options);
}

LaunchParams computeLaunchParams(const KernelSource& kernel, int smCount,
                                 int blocksPerSm) {
  LaunchParams p;
  p.block = kernel.block;
  const int64_t wave =
      std::max<int64_t>(int64_t(smCount) * std::max(blocksPerSm, 1), 1);
  const int64_t perBlock = kernel.blockPerSlot ? 1 : p.block;
  const int64_t blocks = (kernel.slots + perBlock - 1) / perBlock;
  p.grid = kernel.fullGrid
               ? std::min<int64_t>(blocks, std::numeric_limits<int>::max())
               : std::min(blocks, wave);
  if (kernel.rowReduction && !kernel.columnSums) {
    // A block per row instead: while one block reduces its row, the one
    // that replaced a finished block is already loading (an H200 ran
    // softmax at 76.5% of copy bandwidth so, at 72.3% with one wave).
    p.grid = std::min<int64_t>(kernel.slots, std::numeric_limits<int>::max());
  } else if (kernel.columnSums) {
    // Every block adds a partial per column atomically at its end: a few
    // blocks per SM (one wave) taking many rows each.
    p.grid = std::min<int64_t>(
        kernel.slots, int64_t(smCount) * std::min(std::max(blocksPerSm, 1),
                                                  kColumnSumBlocksPerSm));
  }
  return p;
}

}  // namespace nvfuser
