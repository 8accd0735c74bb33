// The pointwise strategy: one thread per vector of output elements, a
// grid-stride loop over the slots of every output family (horizontal
// fusion: `if (slot < end0) {family 0} else if ...`), slots of an
// interleaved cat's output in the plan's order. Not a public header.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "codegen/value_builder.h"

namespace nvfuser {
namespace codegen_detail {

class PointwiseKernelGenerator : public KernelValueBuilder {
 public:
  using KernelValueBuilder::KernelValueBuilder;

  KernelSource generate(const std::string& name) override;
  bool provesLanes(size_t f, std::string* why) override;

 protected:
  // Each family's body at the plan's width, in order.
  std::vector<std::string> plannedFamilyBodies(const KernelSource& ks);
  std::string plannedFamilyBody(const OutputFamily& fam);
  // What a strategy takes from the plan before it builds bodies, for
  // generate and the lane proof alike (a serial reduction: the split).
  virtual void takePlan(const KernelSource& /*ks*/) {}
  // The body of one family for slot-relative element index `i`, with v
  // lanes; throws NotVectorizable when v lanes cannot be proven contiguous.
  std::string familyBody(const OutputFamily& family, int64_t v);
  // Writes output o of the body at the family's loop index (indexOf maps a
  // tensor to its index there).
  virtual void writeOutput(size_t o, int64_t v,
                           const std::function<Index(const Val*)>& indexOf);
  // Whether every output's plain loads come before any output's code.
  virtual bool loadsAcrossOutputsFirst() const {
    return options_.earlyLoadsEverywhere;
  }
  // The statement reordering slot `s` of `fam` when the plan names an
  // interleaved cat among its outputs (kernel_plan.h), else "".
  std::string interleavedCatOrder(const OutputFamily& fam) const;
  // The statement reordering slot `s` of family f when the plan orders its
  // loop dims (OutputFamilyPlan::slotDims), else "".
  std::string slotDimOrder(size_t f, const OutputFamily& fam) const;
  // With k threads per slot (rel: the slot's place in its family's
  // range): nvf_k, the lane's place in the group, and nvf_group, the
  // group's lane mask; "" for k = 1.
  std::string slotThreadGroup(int64_t k, const std::string& rel) const;
  // The grid-stride kernel over the families' slots, one body each.
  KernelSource slotKernel(KernelSource ks, const std::string& params,
                          const std::vector<std::string>& bodies);
};

}  // namespace codegen_detail
}  // namespace nvfuser
