// A fusion's generated kernels run by the CPU emulator next to the ATen
// evaluation of the whole fusion, for the emulated-kernel tests.
#pragma once

#include <ATen/ATen.h>
#include <gtest/gtest.h>

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

// The generated code of a fusion's kernels (from `extern "C"` on, without
// the device helpers), planned under `options` for `inputs`.
inline std::string generatedKernels(Fusion& f,
                                    const std::vector<at::Tensor>& inputs,
                                    const Options& options = Options()) {
  std::vector<RuntimeArg> args;
  for (const at::Tensor& t : inputs) {
    args.push_back(RuntimeArg::fromTensor(t));
  }
  ConcreteFusion c = concretize(f, describeArgs(f, args));
  SegmentedRuntime runtime(segmentFusion(*c.fusion, options), args, options);
  std::string code;
  for (const auto& k : runtime.kernels()) {
    if (k != nullptr) {
      const std::string& all = k->source().code;
      code += all.substr(all.find("extern \"C\""));
    }
  }
  return code;
}

// Occurrences of `what` in `code`.
inline size_t occurrences(const std::string& code, const std::string& what) {
  size_t n = 0;
  for (size_t at = code.find(what); at != std::string::npos;
       at = code.find(what, at + 1)) {
    ++n;
  }
  return n;
}

// Every output of `run` has ATen's sizes, is dense and is within `tol`
// (relative and absolute) of ATen's values.
inline void expectCloseToAten(const EmulatedRun& run, double tol) {
  ASSERT_EQ(run.atenError, "");
  ASSERT_EQ(run.outs.size(), run.ref.size());
  for (size_t k = 0; k < run.outs.size(); ++k) {
    EXPECT_EQ(run.outs[k].sizes(), run.ref[k].sizes()) << k;
    EXPECT_TRUE(run.outs[k].is_contiguous()) << k;
    EXPECT_TRUE(at::allclose(run.outs[k].to(at::kDouble),
                             run.ref[k].to(at::kDouble), tol, tol))
        << "output " << k;
  }
}

// Exact equality where NaNs count as equal (integer results, inf and NaN).
inline bool sameValues(const at::Tensor& a, const at::Tensor& b) {
  return a.sizes() == b.sizes() && a.scalar_type() == b.scalar_type() &&
         ((a == b) | (at::isnan(a) & at::isnan(b))).all().item<bool>();
}

}  // namespace nvfuser
