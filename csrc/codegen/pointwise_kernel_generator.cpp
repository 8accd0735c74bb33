#include "codegen/pointwise_kernel_generator.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <numeric>
#include <optional>
#include <sstream>

#include "analysis/tensor_shape.h"
#include "codegen/rng_device_helpers.h"
#include "exceptions.h"
#include "scheduler/interleaved_cat.h"

namespace nvfuser {
namespace codegen_detail {

KernelSource PointwiseKernelGenerator::generate(const std::string& name) {
  std::string params;
  KernelSource ks = beginKernel(name, &params);
  std::vector<std::string> bodies = plannedFamilyBodies(ks);
  return slotKernel(std::move(ks), params, bodies);
}

bool PointwiseKernelGenerator::provesLanes(size_t f, std::string* why) {
  std::string params;
  KernelSource ks = beginKernel("lane_proof", &params);
  takePlan(ks);
  const OutputFamily& fam = ks.families.at(f);
  return lanesHold([&] { familyBody(fam, fam.vectorWidth); }, why);
}

std::vector<std::string> PointwiseKernelGenerator::plannedFamilyBodies(
    const KernelSource& ks) {
  std::vector<std::string> bodies;
  for (const OutputFamily& fam : ks.families) {
    bodies.push_back(plannedFamilyBody(fam));
  }
  return bodies;
}

std::string PointwiseKernelGenerator::plannedFamilyBody(
    const OutputFamily& fam) {
  return plannedBody(fam.vectorWidth,
                     [&] { return familyBody(fam, fam.vectorWidth); });
}

KernelSource PointwiseKernelGenerator::slotKernel(
    KernelSource ks, const std::string& params,
    const std::vector<std::string>& bodies) {
  std::ostringstream loopBody;
  ks.block = plan_.blockThreads;
  ks.fullGrid = plan_.fullGrid;
  for (size_t f = 0; f < ks.families.size(); ++f) {
    const OutputFamily& fam = ks.families[f];
    const int64_t k = fam.threadsPerSlot;
    if (ks.slots % k != 0) {  // a group's lanes start at a multiple of k
      ks.slots += k - ks.slots % k;
      loopBody << "    } else if (slot < " << ks.slots
               << ") {  // no family: family " << f
               << "'s groups start at a multiple of " << k << "\n";
    }
    const std::string begin = std::to_string(ks.slots);
    ks.slots += fam.slots * k;
    const std::string end = std::to_string(ks.slots);
    if (ks.families.size() > 1) {
      loopBody << "    " << (f == 0 ? "if" : "} else if") << " (slot < " << end
               << ") {  // family " << f << ": " << fam.outputs.size()
               << " output(s), " << fam.vectorWidth << " lane(s)"
               << narrowedNote(f) << "\n";
    } else {
      loopBody << "    {" << (narrowedNote(f).empty() ? "" : " //")
               << narrowedNote(f) << "\n";
    }
    const std::string rel = begin == "0" ? "slot" : "(slot - " + begin + ")";
    loopBody << "      " << indexType_ << " s = " << rel
             << (k > 1 ? " / " + std::to_string(k) : "") << ";\n"
             << slotThreadGroup(k, rel) << interleavedCatOrder(fam)
             << slotDimOrder(f, fam) << "      " << indexType_ << " i = s * "
             << fam.vectorWidth << ";\n"
             << bodies.at(f);
  }
  loopBody << "    }\n";
  std::ostringstream code;
  code << deviceHelpersFor(fusion_) << "\nextern \"C\" __global__ void "
       << ks.name << "(" << params << ") {\n"
       << "  for (" << indexType_ << " slot = blockIdx.x * (" << indexType_
       << ")blockDim.x + threadIdx.x; slot < " << ks.slots
       << "; slot += gridDim.x * (" << indexType_ << ")blockDim.x) {\n"
       << loopBody.str() << "  }\n}\n";
  ks.code = code.str();
  return ks;
}

// The body of one family for slot-relative element index `i`, with v lanes;
// throws NotVectorizable when v lanes cannot be proven contiguous.
std::string PointwiseKernelGenerator::familyBody(const OutputFamily& family,
                                                 int64_t v) {
  resetBody(v);
  slotThreads_ = family.threadsPerSlot;
  const std::vector<int64_t>& loop = family.loop;
  Index loopIdx;
  const std::vector<IndexExpr> coords =
      delinearize(IndexExpr::named("i"), loop);
  for (size_t d = 0; d < loop.size(); ++d) {
    loopIdx.push_back(Ix{defineIndex("i" + std::to_string(d), coords[d]),
                         v > 1 && d + 1 == loop.size()});
  }
  // A tensor of the family's non-size-1 dims, at the loop indices.
  std::function<Index(const Val*)> indexOf = [&](const Val* t) {
    Index idx;
    size_t next = 0;
    for (int64_t s : concreteShape(t->asTensor())) {
      NVF_ASSERT(s == 1 || next < loopIdx.size(), t->ref(),
                 " has more dims than its family's loop");
      idx.push_back(s == 1 ? Ix{IndexExpr(), false} : loopIdx[next++]);
    }
    return idx;
  };
  startLoopOutputs(family.loopOutputs, indexOf);
  std::vector<Request> roots;
  for (size_t o : family.outputs) {
    const TensorView* tv = fusion_.outputs()[o]->asTensor();
    roots.push_back({tv, indexOf(tv)});
  }
  findSameIndexReductions(roots);
  findChainedSums();
  if (loadsAcrossOutputsFirst()) {
    loadEagerInputsFirst(roots);  // every output's plain loads before any
  }
  for (size_t o : family.outputs) {
    writeOutput(o, v, indexOf);
  }
  requireLoopOutputsWritten();
  return body_.str();
}

std::string PointwiseKernelGenerator::slotThreadGroup(
    int64_t k, const std::string& rel) const {
  if (k == 1) {
    return "";
  }
  // Slots and lanes agree mod 32 (blocks and the grid stride are whole
  // warps), so the group is the k lanes from threadIdx.x & (32 - k).
  char mask[24];
  std::snprintf(mask, sizeof(mask), "0x%llxu", (1ull << k) - 1);
  return "      const unsigned nvf_k = " + rel + " % " + std::to_string(k) +
         ";  // this lane's share of the slot's loops\n" +
         "      const unsigned nvf_group = " + mask + " << (threadIdx.x & " +
         std::to_string(32 - k) + "u);\n";
}

void PointwiseKernelGenerator::writeOutput(
    size_t o, int64_t v, const std::function<Index(const Val*)>& indexOf) {
  const TensorView* tv = fusion_.outputs()[o]->asTensor();
  const std::string out = "out" + std::to_string(o);
  Value x = valueAt(tv, indexOf(tv));
  // Every lane of a slot's group holds the value; the first stores it.
  const std::string storer = slotThreads_ > 1 ? "if (nvf_k == 0) " : "";
  if (v == 1) {
    line(storer + out + "[i] = " + x.name + ";");
    return;
  }
  if (!x.lane) {
    x = emit(tv->dtype(), true, x.name);
  }
  line(storer + "nvf_vstore(" + out + " + i, " + x.name + ");");
}

// The plan's slot order (scheduler/interleaved_cat.h: catSlotOrder) at the
// family's width, as a remap of s.
std::string PointwiseKernelGenerator::interleavedCatOrder(
    const OutputFamily& fam) const {
  const InterleavedCat* digit = nullptr;
  for (const InterleavedCat& c : plan_.interleavedCats) {
    if (digit == nullptr && std::find(fam.outputs.begin(), fam.outputs.end(),
                                      c.output) != fam.outputs.end()) {
      digit = &c;
    }
  }
  if (digit == nullptr) {
    return "";
  }
  std::optional<CatSlotOrder> o =
      catSlotOrder(*digit, fam.slots, fam.vectorWidth, plan_.blockThreads);
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

// Slot s counts vectors in the order of the plan's slotDims; the body
// takes s in the outputs' row-major order, so s becomes that slot's
// row-major number (a bijection on the family's slots).
std::string PointwiseKernelGenerator::slotDimOrder(
    size_t f, const OutputFamily& fam) const {
  const std::vector<int64_t>& order = plan_.families.at(f).slotDims;
  if (order.empty()) {
    return "";
  }
  std::vector<int64_t> loopDims(fam.loop.size());
  std::iota(loopDims.begin(), loopDims.end(), 0);
  NVF_ASSERT(std::is_permutation(order.begin(), order.end(), loopDims.begin(),
                                 loopDims.end()) &&
                 order.back() == loopDims.back(),
             "the plan's slot order is not a permutation of the loop dims "
             "with the innermost last");
  std::vector<int64_t> vectors = fam.loop;  // the innermost in vectors
  vectors.back() /= fam.vectorWidth;
  std::vector<int64_t> permuted;
  std::string dims;
  for (int64_t d : order) {
    permuted.push_back(vectors.at(size_t(d)));
    dims += " " + std::to_string(d);
  }
  const std::vector<IndexExpr> digits =
      delinearize(IndexExpr::named("s"), permuted);
  std::vector<IndexExpr> at(vectors.size());
  for (size_t k = 0; k < order.size(); ++k) {
    at[size_t(order[k])] = digits[k];
  }
  IndexExpr rowMajor;
  for (size_t d = 0; d < vectors.size(); ++d) {
    rowMajor = rowMajor * vectors[d] + at[d];
  }
  return "      s = " + rowMajor.str() + ";  // loop dims in the order" + dims +
         " (the input read most)\n";
}

}  // namespace codegen_detail
}  // namespace nvfuser
