#include "fuzz_case.h"

#include <ATen/ATen.h>

#include <utility>

#include "../emu/kernel_emulator.h"
#include "compiler/nvrtc_compiler.h"
#include "exceptions.h"
#include "ir/python_printer.h"
#include "ops/concretize.h"
#include "random_fusion.h"
#include "runtime/aten_evaluator.h"
#include "runtime/segmented_runtime.h"
#include "scheduler/reduction_split.h"
#include "segmenter/segment_candidate_finder.h"
#include "segmenter/segmentation_checker.h"
#include "symbolic_twin.h"

namespace nvfuser {

namespace {
// The plans a seed's fusion is made under. Every fourth seed plans for a
// GPU of one SM of 32 threads: the plans that need a large problem on a
// full GPU (loop outputs) with the fuzzer's small tensors. Every fourth
// from 2 tiles transposes of any size; from 1, takes pointwise slots in
// their input's order for runs of any length.
Options seedOptions(uint64_t seed) {
  switch (seed % 4) {
    case 3:
      return Options().withDevice(1, 32);
    case 2:
      return Options().withOverrides({"transpose_tiles_everywhere"}, {});
    case 1:
      return Options().withOverrides({"input_loop_order_everywhere"}, {});
    default:
      return Options();
  }
}

// Bitwise (NaN equals NaN) when tolerant is false; else within 1e-2 on at
// least 99% of the elements.
bool sameValues(const at::Tensor& a, const at::Tensor& b, bool tolerant) {
  if (a.sizes() != b.sizes() || a.scalar_type() != b.scalar_type()) {
    return false;
  }
  if (a.numel() == 0) {
    return true;
  }
  at::Tensor fa = a.to(at::kCPU).to(at::kDouble);
  at::Tensor fb = b.to(at::kCPU).to(at::kDouble);
  at::Tensor equal = at::logical_or(
      at::eq(fa, fb), at::logical_and(at::isnan(fa), at::isnan(fb)));
  if (!tolerant) {
    return equal.all().item<bool>();
  }
  at::Tensor close = at::logical_or(
      equal, at::le(at::abs(fa - fb), 1e-2 + 1e-2 * at::abs(fb)));
  return close.to(at::kDouble).mean().item<double>() >= 0.99;
}
}  // namespace

FuzzOutcome runFuzzCase(uint64_t seed, int maxOps, bool compileKernels,
                        bool cuda, bool emulate) {
  const at::Device device = cuda ? at::Device(at::kCUDA, 0) : at::kCPU;
  FuzzOutcome out;
  RandomFusion rf = makeRandomFusion(seed, maxOps);
  // Users define symbolic sizes: run through the symbolic twin where the
  // ops allow it, so concretization binds the sizes as it does for them.
  std::unique_ptr<Fusion> twin = symbolicTwin(*rf.fusion, seed);
  out.symbolic = twin != nullptr;
  const Fusion& defined = twin ? *twin : *rf.fusion;
  out.reproducer = fusionToPython(defined);
  std::vector<InputDescriptor> descs;
  std::vector<RuntimeArg> args;
  at::manual_seed(static_cast<uint64_t>(seed));
  for (size_t i = 0; i < rf.fusion->inputs().size(); ++i) {
    const Val* in = rf.fusion->inputs()[i];
    at::Tensor t = at::randn(rf.inputSizes.at(i), at::kDouble)
                       .to(toAtenType(in->dtype()))
                       .to(device);
    InputDescriptor d;
    d.dtype = in->dtype();
    d.sizes = t.sizes().vec();
    d.strides = t.strides().vec();
    descs.push_back(d);
    args.push_back(RuntimeArg::fromTensor(t));
  }
  ConcreteFusion concrete;
  try {
    // As the runtime concretizes: long reductions split in two.
    concrete = concretize(defined, descs, reductionSplitter());
  } catch (const Error& e) {
    out.problems.push_back(std::string("concretize failed: ") + e.what());
    return out;
  }
  out.exprs = static_cast<int64_t>(concrete.fusion->exprs().size());
  std::vector<at::Tensor> reference;
  try {
    reference = AtenEvaluator::run(*concrete.fusion, args, device);
  } catch (const Error& e) {
    out.skipped = true;
    out.skipReason = e.what();
    return out;
  }
  std::vector<const char*> policies = {"", "extended_input_forwarding",
                                       "input_forwarding"};
  if (cuda || emulate) {
    policies.resize(1);
  }
  for (const char* disable : policies) {
    Options options = seedOptions(seed);
    if (*disable != '\0') {
      options = options.withOverrides({}, {disable});
    }
    const std::string tag =
        std::string("[") + (*disable ? disable : "extended") + "] ";
    try {
      auto sf = segmentFusion(*concrete.fusion, options);
      for (const std::string& p : checkSegmentation(*sf)) {
        out.problems.push_back(tag + p);
      }
      if (*disable == '\0') {
        out.segments = static_cast<int64_t>(sf->groups().size());
      }
      SegmentedRuntime runtime(std::move(sf), args, options);
      // What the generated code says it does, counted under the default
      // policy.
      static const std::pair<const char*, int64_t FuzzOutcome::*> kMarkers[] = {
          {"on one cat position", &FuzzOutcome::interleavedCatKernels},
          {"// lane table", &FuzzOutcome::laneTableKernels},
          {"nvf_group", &FuzzOutcome::slotGroupKernels},
          {"reductions in one loop", &FuzzOutcome::sharedLoopKernels},
          {"// chained sum", &FuzzOutcome::chainedSumKernels},
          {"in this loop", &FuzzOutcome::loopOutputKernels},
          {"staged in shared memory", &FuzzOutcome::transposeKernels},
          {"(the input read most)", &FuzzOutcome::inputOrderKernels},
          {"lanes do not hold", &FuzzOutcome::narrowedKernels}};
      for (const auto& kernel : runtime.kernels()) {
        for (const auto& [marker, count] : kMarkers) {
          if (kernel && *disable == '\0' &&
              kernel->source().code.find(marker) != std::string::npos) {
            ++(out.*count);
          }
        }
      }
      std::vector<at::Tensor> outs =
          emulate ? runEmulated(runtime, args)
                  : runtime.run(args, device, nullptr, options);
      for (size_t k = 0; k < outs.size(); ++k) {
        if (!sameValues(outs[k], reference[k], cuda || emulate)) {
          out.problems.push_back(tag + "output " + std::to_string(k) +
                                 " differs from the unsegmented result");
        }
      }
      if (compileKernels && *disable == '\0') {
        for (const auto& kernel : runtime.kernels()) {
          if (kernel) {
            compileWithNvrtc(kernel->source().code, kernel->source().name,
                             "sm_90");
          }
        }
      }
    } catch (const std::exception& e) {
      out.problems.push_back(tag + "threw: " + e.what());
    }
  }
  return out;
}

}  // namespace nvfuser
