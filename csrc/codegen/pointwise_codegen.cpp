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
// The body of the widest lane count that `generate` can prove: v (the
// plan's, which divides the innermost extent) halves once per
// NotVectorizable (one lane always works). Leaves the width used in v.
template <typename Generate>
std::string widestProvenBody(int64_t& v, Generate generate) {
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
  if (split_ <= 1 && options_.earlyLoadsEverywhere) {
    // every output's plain loads before any output
    std::vector<Request> roots;
    for (size_t o : family.outputs) {
      const TensorView* tv = fusion_.outputs()[o]->asTensor();
      roots.push_back({tv, indexOf(tv)});
    }
    loadEagerInputsFirst(roots);
  }
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

std::string PointwiseKernelGenerator::declareParameters(KernelSource& ks) {
  std::ostringstream params;
  int k = 0;
  for (const Val* in : fusion_.inputs()) {
    std::string p = (in->isTensor() ? "in" : "s") + std::to_string(k++);
    paramName_[in] = p;
    ks.inputs.push_back(in);
    params << (params.tellp() ? ", " : "");
    if (!passedByValue(in)) {
      params << "const " << cudaType(in->dtype()) << "* __restrict__ " << p;
    } else {
      params << cudaType(in->dtype()) << " " << p;
    }
  }
  for (size_t o = 0; o < fusion_.outputs().size(); ++o) {
    const TensorView* tv = fusion_.outputs()[o]->asTensor();
    ks.outputs.push_back(tv);
    params << (params.tellp() ? ", " : "") << cudaType(tv->dtype())
           << "* __restrict__ out" << o;
  }
  for (const Expr* e : fusion_.exprs()) {
    ks.reportsIndexErrors =
        ks.reportsIndexErrors || e->type() == ExprType::Gather;
  }
  if (ks.reportsIndexErrors) {
    params << ", int* __restrict__ nvf_index_error";
  }
  return params.str();
}

void PointwiseKernelGenerator::chooseIndexType() {
  int64_t maxNumel = 0;
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
}

KernelSource PointwiseKernelGenerator::generate(const std::string& name) {
  KernelSource ks;
  ks.name = name;
  const std::string params = declareParameters(ks);
  std::vector<int> covered(fusion_.outputs().size(), 0);
  for (const OutputFamilyPlan& planned : plan_.families) {
    const int64_t inner = planned.loop.empty() ? 1 : planned.loop.back();
    NVF_ASSERT(inner % planned.maxVectorWidth == 0, "the plan's ",
               planned.maxVectorWidth, " lanes do not divide ", inner);
    for (size_t o : planned.outputs) {
      ++covered.at(o);
    }
    OutputFamily f;
    f.loop = planned.loop;
    f.outputs = planned.outputs;
    f.numel = planned.numel;
    ks.families.push_back(f);
  }
  NVF_ASSERT(
      std::all_of(covered.begin(), covered.end(), [](int n) { return n == 1; }),
      "the plan's families do not cover each output once");
  chooseIndexType();
  ks.capRegisters = plan_.capRegisters;
  if (plan_.strategy == KernelStrategy::Rows) {
    return generateRows(std::move(ks), plan_.rows, params);
  }
  std::ostringstream loopBody;
  for (size_t f = 0; f < ks.families.size(); ++f) {
    OutputFamily& fam = ks.families[f];
    int64_t v = plan_.families[f].maxVectorWidth;
    auto generateFamily = [&](int64_t w) { return familyBody(fam, w); };
    std::string body = widestProvenBody(v, generateFamily);
    fam.vectorWidth = v;
    fam.slots = fam.numel / v;
    split_ = plan_.split.factorFor(fam.slots);
    if (split_ > 1) {  // a lone sum: the only family
      splitAxis_ = plan_.split.axis;
      splitSum_ = plan_.split.sum->output(0);
      findStreamedInputs();
      body = widestProvenBody(v, generateFamily);  // chunked loops
      fam.vectorWidth = v;
      fam.slots = fam.numel / v;
      return generateSplit(std::move(ks), params, body);
    }
    const std::string begin = std::to_string(ks.slots);
    ks.block = plan_.blockThreads;
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
       << "(" << params << ") {\n"
       << "  for (" << indexType_ << " slot = blockIdx.x * (" << indexType_
       << ")blockDim.x + threadIdx.x; slot < " << ks.slots
       << "; slot += gridDim.x * (" << indexType_ << ")blockDim.x) {\n"
       << loopBody.str() << "  }\n}\n";
  ks.code = code.str();
  return ks;
}

// The plan's slot order (scheduler/interleaved_cat.h: catSlotOrder) at the
// family's proven width, as a remap of s.
std::string PointwiseKernelGenerator::interleavedCatOrder(
    const OutputFamily& fam) const {
  if (!plan_.interleavedCat ||
      std::find(fam.outputs.begin(), fam.outputs.end(),
                plan_.interleavedCat->output) == fam.outputs.end()) {
    return "";
  }
  std::optional<CatSlotOrder> o = catSlotOrder(
      *plan_.interleavedCat, fam.slots, fam.vectorWidth, plan_.blockThreads);
  if (!o) {
    return "";
  }
  auto n = [](int64_t x) { return std::to_string(x); };
  const int64_t r = o->runSlots, k = o->runsPerGroup;
  const std::string open = o->orderedSlots == fam.slots
                               ? "{"
                               : "if (s < " + n(o->orderedSlots) + ") {";
  const char* unit = o->unitThreads == 32 ? "warps" : "blocks";
  return "      " + open + "  // " + unit + " on one cat position\n        " +
         indexType_ + " r = s % " + n(o->groupSlots()) +
         ";\n        s = s - r + ((r / " + n(r) + " % " + n(k) + ") * " +
         n(o->positions) + " + r / " + n(k * r) + ") * " + n(r) + " + r % " +
         n(r) + ";\n      }\n";
}

KernelSource PointwiseKernelGenerator::generateRows(
    KernelSource ks, const RowReductionPlan& plan, const std::string& params) {
  int64_t v = plan_.rowVectorWidth;
  RowLaunch launch;
  std::string body = widestProvenBody(v, [&](int64_t w) {
    launch = rowLaunch(plan, w);
    persistent_ = launch.persistent;
    persistentVectors_ = launch.vectorsPerThread;
    persistentStride_ = launch.stride;
    return rowBody(plan, w);
  });
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
                                     PointwiseCodegenOptions options,
                                     const KernelPlanOptions& planOptions) {
  KernelPlan plan;
  const SchedulerType type = kernelSchedulerFor(fusion);
  Decision d = planKernel(type, fusion, &plan, planOptions);
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
