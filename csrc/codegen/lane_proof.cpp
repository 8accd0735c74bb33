#include "codegen/lane_proof.h"

#include "codegen/value_builder.h"

namespace nvfuser {

namespace {
class GeneratorLaneProof final : public LaneProof {
 public:
  explicit GeneratorLaneProof(KernelCodegenOptions options)
      : options_(options) {}

  bool holds(const Fusion& segment, const KernelPlan& plan, size_t family,
             std::string* why) const override {
    // Dense layouts: the proof does not depend on strides (lane_proof.h).
    return codegen_detail::makeKernelGenerator(segment, plan, {}, options_)
        ->provesLanes(family, why);
  }

 private:
  KernelCodegenOptions options_;
};
}  // namespace

std::shared_ptr<const LaneProof> generatorLaneProof(
    KernelCodegenOptions options) {
  return std::make_shared<GeneratorLaneProof>(options);
}

}  // namespace nvfuser
