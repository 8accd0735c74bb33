// A fusion's generated kernels run by the CPU emulator next to the ATen
// evaluation of the whole fusion, for the emulated-kernel tests.
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "../emu/kernel_emulator.h"
#include "exceptions.h"
#include "ops/concretize.h"
#include "runtime/aten_evaluator.h"
#include "segmenter/segment_candidate_finder.h"

namespace nvfuser {

// The outputs of a fusion's generated kernels (run by the emulator, every
// other group through ATen) next to the ATen evaluation of the whole fusion.
struct EmulatedRun {
  std::vector<at::Tensor> outs;
  std::vector<at::Tensor> ref;
  std::string atenError;  // what ATen raised instead of giving `ref`
  size_t kernels = 0;
};

inline EmulatedRun runEmulatedAndAten(Fusion& f,
                                      const std::vector<at::Tensor>& inputs,
                                      const ReplayOverride& rewrite = {},
                                      const Options& options = Options()) {
  std::vector<RuntimeArg> args;
  for (const at::Tensor& t : inputs) {
    args.push_back(RuntimeArg::fromTensor(t));
  }
  ConcreteFusion c = concretize(f, describeArgs(f, args), rewrite);
  SegmentedRuntime runtime(segmentFusion(*c.fusion, options), args, options);
  EmulatedRun run;
  run.outs = runEmulated(runtime, args);
  try {
    run.ref = AtenEvaluator::run(*c.fusion, args, at::kCPU);
  } catch (const Error& e) {
    run.atenError = e.what();
  }
  for (const auto& k : runtime.kernels()) {
    run.kernels += k != nullptr;
  }
  return run;
}

// Exact equality where NaNs count as equal (integer results, inf and NaN).
inline bool sameValues(const at::Tensor& a, const at::Tensor& b) {
  return a.sizes() == b.sizes() && a.scalar_type() == b.scalar_type() &&
         ((a == b) | (at::isnan(a) & at::isnan(b))).all().item<bool>();
}

}  // namespace nvfuser
