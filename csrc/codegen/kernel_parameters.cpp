// Kernel assembly shared by every strategy: the planned families, the
// parameter list and the index type.
#include <algorithm>

#include "analysis/tensor_shape.h"
#include "codegen/value_builder.h"
#include "exceptions.h"

namespace nvfuser {
namespace codegen_detail {

KernelSource KernelValueBuilder::beginKernel(const std::string& name,
                                             std::string* params) {
  KernelSource ks;
  ks.name = name;
  *params = declareParameters(ks);
  std::vector<int> covered(fusion_.outputs().size(), 0);
  for (const OutputFamilyPlan& planned : plan_.families) {
    const int64_t inner = planned.loop.empty() ? 1 : planned.loop.back();
    NVF_ASSERT(inner % planned.vectorWidth == 0, "the plan's ",
               planned.vectorWidth, " lanes do not divide ", inner);
    for (size_t o : planned.outputs) {
      ++covered.at(o);
    }
    for (const LoopOutputPlan& l : planned.loopOutputs) {
      ++covered.at(l.output);
    }
    OutputFamily f;
    f.loop = planned.loop;
    f.outputs = planned.outputs;
    f.numel = planned.numel;
    f.vectorWidth = planned.vectorWidth;
    f.slots = planned.numel / planned.vectorWidth;
    f.threadsPerSlot = planned.threadsPerSlot;
    f.loopOutputs = planned.loopOutputs;
    NVF_ASSERT(f.threadsPerSlot == 1 ||
                   (32 % f.threadsPerSlot == 0 && plan_.blockThreads % 32 == 0),
               "groups of ", f.threadsPerSlot,
               " threads per slot must tile the warps");
    ks.families.push_back(f);
  }
  NVF_ASSERT(
      std::all_of(covered.begin(), covered.end(), [](int n) { return n == 1; }),
      "the plan's families do not cover each output once");
  chooseIndexType();
  ks.capRegisters = plan_.capRegisters;
  return ks;
}

std::string KernelValueBuilder::narrowedNote(size_t f) const {
  const std::string& why = plan_.families.at(f).narrowedBecause;
  return why.empty() ? "" : " (" + why + ")";
}

void KernelValueBuilder::resetBody(int64_t v) {
  lanes_ = v;
  body_.str("");
  scopes_.assign(1, {});
  reductionLoops_ = 0;  // an abandoned try may have left loops open
}

std::string KernelValueBuilder::declareParameters(KernelSource& ks) {
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

int64_t KernelValueBuilder::largestTensorNumel() const {
  int64_t largest = 0;
  for (const Val* val : fusion_.vals()) {
    if (val->isTensor()) {
      largest = std::max(largest, numel(val->asTensor()));
    }
  }
  return largest;
}

void KernelValueBuilder::chooseIndexType() {
  int64_t maxNumel = largestTensorNumel();
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
  // The slot loop counts every family's slots together (a slot is at
  // least one element): families of 2^31 elements together would wrap it.
  int64_t families = 0;
  for (const OutputFamilyPlan& f : plan_.families) {
    families += f.numel * f.threadsPerSlot + f.threadsPerSlot;  // aligned
  }
  maxNumel = std::max(maxNumel, families);
  // Unsigned 32-bit index math when everything fits: divisions by constant
  // extents are then one multiply-high. Every index the walk computes is
  // non-negative where it is used (pad and cat subtract only inside the
  // branch whose condition guarantees it).
  indexType_ = maxNumel < (int64_t(1) << 31) - 1024 && !options_.forceInt64Index
                   ? "unsigned"
                   : "int64_t";
}

}  // namespace codegen_detail
}  // namespace nvfuser
