#include "runtime/segmented_runtime.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <iostream>
#include <unordered_map>

#include "analysis/tensor_shape.h"
#include "codegen/lane_proof.h"
#include "exceptions.h"
#include "ir/aten_call.h"
#include "runtime/aten_evaluator.h"
#include "runtime/cuda_driver.h"
#include "runtime/host_times.h"
#include "scheduler/kernel_plan.h"

namespace nvfuser {

namespace {
// nvfuser_<scheduler>_g<id>_<hash of the segment>: unique across regions
// and fusions, so a profiler's kernel names lead to NVFUSER_DUMP=cuda_kernel
// output, which prints each kernel's segment.
std::string kernelName(const SegmentedGroup& g, const Fusion& segment) {
  char hash[17];
  std::snprintf(
      hash, sizeof(hash), "%08llx",
      static_cast<unsigned long long>(
          std::hash<std::string>{}(segment.toString()) & 0xffffffffULL));
  return "nvfuser_" + std::string(toString(g.scheduler)) + "_g" +
         std::to_string(g.id) + "_" + hash;
}

// "linear, reshape": the ops a segment runs, for NVFUSER_DUMP=host_time.
std::string opNames(const Fusion& segment) {
  std::string names;
  for (const Expr* e : segment.liveExprs()) {
    const auto* call = exprAs<AtenCallOp>(e);
    names += (names.empty() ? "" : ", ") + (call ? call->op() : e->opName());
  }
  return names.empty() ? "(outputs are inputs)" : names;
}
}  // namespace

namespace {
// Layouts a segment's kernel will most likely see: the actual layout of
// fusion inputs, dense for intermediates (what generated kernels write).
std::vector<TensorLayout> predictedLayouts(
    const Fusion& complete, const ExtractedSegment& seg,
    const std::vector<RuntimeArg>& args) {
  std::vector<TensorLayout> layouts;
  for (size_t i = 0; i < seg.inputs.size(); ++i) {
    const Val* v = seg.inputs[i];
    TensorLayout l;
    if (!passedByValue(v)) {
      const auto& ins = complete.inputs();
      auto it = std::find(ins.begin(), ins.end(), v);
      const RuntimeArg* arg =
          it == ins.end() ? nullptr : &args.at(size_t(it - ins.begin()));
      l = arg != nullptr && arg->tensor
              ? PointwiseKernel::layoutOf(*arg->tensor)
              : TensorLayout{denseStrides(concreteShape(v->asTensor())), true};
    }
    layouts.push_back(l);
  }
  return layouts;
}

// The GPU the arguments are on (its SM count sizes split sums), else the
// plan's default; the options' SM count first.
DeviceTraits deviceTraits(const std::vector<RuntimeArg>& args,
                          const Options& options) {
  DeviceTraits traits;
  if (options.smCount() > 0) {
    traits.smCount = options.smCount();
    traits.residentThreadsPerSm = options.threadsPerSm();
    return traits;
  }
  for (const RuntimeArg& a : args) {
    if (a.tensor && a.tensor->is_cuda()) {
      traits.smCount =
          CudaDriver::get().multiprocessorCount(a.tensor->get_device());
      break;
    }
  }
  return traits;
}
}  // namespace

SegmentedRuntime::SegmentedRuntime(std::unique_ptr<SegmentedFusion> segmented,
                                   const std::vector<RuntimeArg>& args,
                                   const Options& options)
    : segmented_(std::move(segmented)) {
  KernelCodegenOptions codegen;
  codegen.forceInt64Index = options.enabled("int64_index");
  codegen.predicatedLoads = !options.disabled("predicated_loads");
  codegen.earlyLoads = !options.disabled("early_loads");
  codegen.earlyLoadsEverywhere = options.enabled("early_loads_everywhere");
  codegen.sharedReductionLoops = !options.disabled("shared_reduction_loops");
  codegen.chainedSums = !options.disabled("chained_sums");
  codegen.foldAdds = !options.disabled("add_folds");
  codegen.predicatedLoadsEverywhere =
      options.enabled("predicated_loads_everywhere");
  codegen.predicatedLoadsUnbounded =
      options.enabled("predicated_loads_unbounded");
  KernelPlanOptions planOptions;
  planOptions.fullGrid = !options.disabled("full_grid");
  planOptions.interleavedCatOrder = !options.disabled("interleaved_cat_order");
  planOptions.vectorize = !options.disabled("vectorization");
  planOptions.interleavedCatBlockOrder =
      !options.disabled("interleaved_cat_block_order");
  planOptions.innermostBranchOrder =
      !options.disabled("innermost_branch_order");
  planOptions.padSidesInOneBlock = !options.disabled("pad_sides_in_one_block");
  planOptions.heavyFamiliesFirst = !options.disabled("heavy_families_first");
  planOptions.threadsPerSlot = !options.disabled("threads_per_slot");
  planOptions.loopOutputs = !options.disabled("loop_outputs");
  planOptions.transposeTiles = !options.disabled("transpose_tiles");
  if (options.enabled("transpose_tiles_everywhere")) {
    planOptions.transposeMinExtent = 2;
  }
  planOptions.registerCapsEverywhere =
      options.enabled("register_caps_everywhere");
  planOptions.inputLoopOrder = !options.disabled("input_loop_order");
  if (options.enabled("input_loop_order_everywhere")) {
    planOptions.inputOrderMinRunBytes = 0;
  }
  planOptions.device = deviceTraits(args, options);
  planOptions.laneProof = generatorLaneProof(codegen);
  const Fusion& complete = segmented_->completeFusion();
  std::unordered_map<const Val*, size_t> lastUse;
  for (size_t i = 0; i < segmented_->groups().size(); ++i) {
    const SegmentedGroup& g = segmented_->groups()[i];
    segments_.push_back(extractSegment(g));
    std::unique_ptr<PointwiseKernel> kernel;
    if (g.scheduler == SchedulerType::PointWise ||
        g.scheduler == SchedulerType::Reduction ||
        g.scheduler == SchedulerType::InnerPersistent) {
      // The scheduler decided: its plan for the extracted segment is what
      // the generator builds. A "no" here is a bug in that scheduler's
      // canSchedule, never a segment to run some other way.
      const Fusion& fusion = *segments_.back().fusion;
      std::vector<TensorLayout> layouts =
          predictedLayouts(complete, segments_.back(), args);
      planOptions.inputStrides.clear();
      for (const TensorLayout& l : layouts) {
        planOptions.inputStrides.push_back(l.strides);
      }
      KernelPlan plan;
      Decision d = planKernel(g.scheduler, fusion, &plan, planOptions);
      NVF_CHECK_KIND(d.ok(), Internal, toString(g.scheduler),
                     " accepted a segment it cannot plan: ", d.reason());
      if (options.dump("scheduler_params")) {
        std::cout << "[scheduler_params] " << kernelName(g, fusion) << " ("
                  << toString(g.scheduler) << "): " << toString(plan) << "\n"
                  << std::flush;
      }
      kernel = std::make_unique<PointwiseKernel>(fusion, std::move(plan),
                                                 kernelName(g, fusion), codegen,
                                                 std::move(layouts));
    }
    kernels_.push_back(std::move(kernel));
    for (const Val* v : segments_.back().inputs) {
      lastUse[v] = i;
    }
  }
  releaseAfter_.resize(segments_.size());
  for (const auto& [v, i] : lastUse) {
    if (!complete.isInput(v) && !complete.isOutput(v)) {
      releaseAfter_[i].push_back(v);
    }
  }
}

std::vector<at::Tensor> SegmentedRuntime::run(
    const std::vector<RuntimeArg>& args, at::Device device, void* stream,
    const Options& options, SegmentTimer* timer) {
  const Fusion& complete = segmented_->completeFusion();
  std::unordered_map<const Val*, RuntimeArg> values;
  for (size_t i = 0; i < args.size(); ++i) {
    values.emplace(complete.inputs()[i], args[i]);
  }
  HostTimes hostTimes(options.dump("host_time"));
  for (size_t g = 0; g < segments_.size(); ++g) {
    const ExtractedSegment& seg = segments_[g];
    HostTimes::Scope scope(hostTimes, segmented_->groups()[g].scheduler, g);
    std::vector<RuntimeArg> segArgs;
    for (const Val* v : seg.inputs) {
      auto it = values.find(v);
      NVF_ASSERT(it != values.end(), "segment g", g, " input ", v->ref(),
                 " was not computed");
      segArgs.push_back(it->second);
    }
    if (timer != nullptr) {
      timer->begin();
    }
    std::vector<at::Tensor> outs =
        device.is_cuda() && kernels_[g]
            ? kernels_[g]->run(segArgs, device, stream, options)
            : AtenEvaluator::run(*seg.fusion, segArgs, device);
    if (timer != nullptr) {
      timer->end();
    }
    for (size_t k = 0; k < outs.size(); ++k) {
      values[seg.outputs[k]] = RuntimeArg::fromTensor(std::move(outs[k]));
    }
    for (const Val* v : releaseAfter_[g]) {
      values.erase(v);
    }
  }
  hostTimes.print([this](size_t g) { return opNames(*segments_[g].fusion); });
  std::vector<at::Tensor> result;
  for (const Val* o : complete.outputs()) {
    auto it = values.find(o);
    NVF_ASSERT(it != values.end() && it->second.tensor, "fusion output ",
               o->ref(), " was not computed");
    result.push_back(*it->second.tensor);
  }
  return result;
}

}  // namespace nvfuser
