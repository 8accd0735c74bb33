#include "options.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <sstream>

#include "exceptions.h"
#include "python_text.h"

namespace nvfuser {

namespace {
const char* envName(OptionGroup g) {
  switch (g) {
    case OptionGroup::Dump:
      return "NVFUSER_DUMP";
    case OptionGroup::Enable:
      return "NVFUSER_ENABLE";
    case OptionGroup::Disable:
      return "NVFUSER_DISABLE";
  }
  return "?";
}

std::string joined(const std::vector<std::string>& names) {
  std::ostringstream os;
  for (size_t i = 0; i < names.size(); ++i) {
    os << (i ? ", " : "") << names[i];
  }
  return os.str();
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Whether `name` is one of ours (it changes what we do) as opposed to an
// accepted nvFuser name, which is a no-op here.
bool isOwnName(OptionGroup g, const std::string& name) {
  return contains(Options::validNames(g), name);
}

// The one of three per-group tables that belongs to g.
const std::vector<std::string>& byGroup(
    OptionGroup g, const std::vector<std::string>& dump,
    const std::vector<std::string>& enable,
    const std::vector<std::string>& disable) {
  switch (g) {
    case OptionGroup::Enable:
      return enable;
    case OptionGroup::Disable:
      return disable;
    case OptionGroup::Dump:
      break;
  }
  return dump;
}

void checkName(OptionGroup g, const std::string& name) {
  // Scripts written for nvFuser set its names; refusing them would make every
  // execute fail, so only a name that neither compiler defines is an error
  // (a typo must still not pass silently).
  NVF_CHECK(isOwnName(g, name) || contains(Options::nvfuserNames(g), name),
            envName(g), ": unknown option ", pythonQuoted(name),
            "; valid options are: ", joined(Options::validNames(g)),
            " (and nvFuser's names, accepted as no-ops)");
}
}  // namespace

// nvFuser's own option names (its csrc/options.cpp), accepted as no-ops here:
// they select nvFuser passes and schedulers this compiler does not have, so
// setting them changes nothing. Names we implement are in validNames.
const std::vector<std::string>& Options::nvfuserNames(OptionGroup g) {
  static const std::vector<std::string> kDump = {"bank_conflict",
                                                 "buffer_reuse_verbose",
                                                 "ca_map",
                                                 "communication",
                                                 "compile_params",
                                                 "cubin",
                                                 "cuda_full",
                                                 "cuda_to_file",
                                                 "debug_info",
                                                 "dynamic_shared_memory",
                                                 "expr_simplify",
                                                 "expr_sort",
                                                 "expr_sort_verbose",
                                                 "ftrace",
                                                 "fusion_args",
                                                 "fusion_ir_concretized",
                                                 "fusion_ir_graph",
                                                 "fusion_ir_math",
                                                 "fusion_ir_preseg",
                                                 "fusion_ir_presched",
                                                 "global_zeroed_memory",
                                                 "host_ir",
                                                 "index_type",
                                                 "indexing_verbose",
                                                 "kernel_args",
                                                 "kernel_ir",
                                                 "loop_rotation",
                                                 "lower_verbose",
                                                 "occupancy",
                                                 "parallel_dimensions",
                                                 "perf_debug_verbose",
                                                 "pre_segmenter_logging",
                                                 "predicate_elimination",
                                                 "ptx",
                                                 "python_definition",
                                                 "python_definition_segments",
                                                 "python_frontend_debug",
                                                 "sass",
                                                 "sass_to_file",
                                                 "scheduler_verbose",
                                                 "sync_map",
                                                 "transform_propagator"};
  static const std::vector<std::string> kEnable = {"cutlass_scheduler",
                                                   "fast_math",
                                                   "fuse_matmul",
                                                   "fuse_multiple_matmuls",
                                                   "host_ir_lowering",
                                                   "id_model",
                                                   "id_model_extra_validation",
                                                   "infer_contiguity",
                                                   "insert_resharding_after",
                                                   "io_to_lower_precision",
                                                   "kernel_db",
                                                   "kernel_debug",
                                                   "kernel_lineinfo",
                                                   "memory_promotion",
                                                   "multicast_protocol",
                                                   "p2p_protocol",
                                                   "reuse_zeroed_memory",
                                                   "static_fusion_count",
                                                   "tma_inner_persistent",
                                                   "tma_pointwise",
                                                   "tma_reduction",
                                                   "wait_debugger",
                                                   "warn_register_spill",
                                                   "ws_normalization"};
  static const std::vector<std::string> kDisable = {
      "compile_to_sass",
      "contig_indexing",
      "expr_simplify",
      "fallback",
      "fma",
      "grouped_grid_welford_outer_opt",
      "id_model",
      "index_hoist",
      "kernel_reuse",
      "magic_zero",
      "matmul_expr_eval",
      "multidevice",
      "nvrtc_caching",
      "nvtx",
      "parallel_compile",
      "parallel_serde",
      "predicate_elimination",
      "python_inline_definitions",
      "resize_scheduler",
      "reuse_mismatched_type_registers",
      "var_name_remapping",
      "welford_vectorization"};
  return byGroup(g, kDump, kEnable, kDisable);
}

const std::vector<std::string>& Options::validNames(OptionGroup g) {
  static const std::vector<std::string> kDump = {
      "fusion_ir",           // the definition as given
      "fusion_ir_concrete",  // after binding input sizes
      "segmented_fusion",    // groups, schedulers, prologues
      "segmenter_logging",   // every segmentation decision with its reason
      "draw_segmented_fusion",
      "cuda_kernel",
      "launch_param",
      "ptxas_verbose",     // registers / spills of every compiled kernel
      "fx_partition",      // torch.compile / FX regions (Python side)
      "host_time",         // host time of each execute, by segment kind
      "scheduler_params",  // each generated kernel's plan
  };
  static const std::vector<std::string> kEnable = {
      "kernel_profile",
      "int64_index",        // 64-bit index math even where 32 bits suffice
      "sync_index_checks",  // out-of-range gathers raise at their launch
      // Experiments (measured, not defaults): predicated pads and cats
      // outside reduction loops too, of any number of cheap ops; early
      // loads at a slot's top level too.
      "predicated_loads_everywhere",
      "predicated_loads_unbounded",
      "early_loads_everywhere",
      // Transposes tiled from dims of 2 elements on (the fuzzer's).
      "transpose_tiles_everywhere",
      // Register caps for one more block per SM (no spill) in pointwise
      // and serial-reduction kernels too, not only row kernels.
      "register_caps_everywhere",
      // Pointwise slots in their input's order for innermost runs of any
      // length (the fuzzer's).
      "input_loop_order_everywhere",
  };
  static const std::vector<std::string> kDisable = {
      "input_forwarding", "extended_input_forwarding", "horizontal_fusion",
      "kernel_cache",     // no cubin cache, on disk or in memory
      "vectorization",    // vector loads/stores in generated kernels
      "reduction_split",  // long reductions with few outputs in two steps
      "broadcast_materialization",  // costly broadcast values stay fused
      "predicated_loads",  // pads and cats in reduction loops keep branches
      "full_grid",         // pointwise grids: one resident wave, threads loop
      "interleaved_cat_block_order",  // warps, not blocks, on one cat part
      "innermost_branch_order",  // slot order ignores innermost pads' sides
      "pad_sides_in_one_block",  // blocks on one pad side, not cat position
      "interleaved_cat_order",   // slots in order though warps straddle parts
      "early_loads",           // loads where first used, after branches and row
                               // reductions
      "heavy_families_first",  // serial-reduction families in output order
      "threads_per_slot",      // one thread per slot of long serial loops
      "loop_outputs",          // no outputs stored in a reduction's loop
      "transpose_tiles",       // transposes read strided, no smem tiles
      "shared_reduction_loops",  // one loop per reduction, not per group
      "chained_sums",            // added sums each keep their own accumulator
      "recompute_cat",     // torch.compile's partition saves cats and pads
      "add_folds",         // adds of zeros and of disjoint pads as written
      "input_loop_order",  // pointwise slots in the outputs' order
  };
  return byGroup(g, kDump, kEnable, kDisable);
}

std::vector<std::string> Options::parseList(OptionGroup g,
                                            const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    // "a, b" and a list continued on a new line name the same options.
    item.erase(0, item.find_first_not_of(" \t\r\n"));
    item.erase(item.find_last_not_of(" \t\r\n") + 1);
    if (item.empty()) {
      continue;
    }
    checkName(g, item);
    if (isOwnName(g, item)) {  // nvFuser-only names stop here: no-ops
      out.push_back(item);
    }
  }
  return out;
}

Options Options::fromEnvironment() {
  // Read on every execute: parsed again only when a variable changed.
  static std::mutex mutex;
  static std::string lastRaw = "\x01";  // matches no environment
  static Options last;
  std::string raw;
  for (OptionGroup g :
       {OptionGroup::Dump, OptionGroup::Enable, OptionGroup::Disable}) {
    const char* v = std::getenv(envName(g));
    raw += v == nullptr ? std::string("\x02") : std::string(v);
    raw += '\x03';
  }
  std::lock_guard<std::mutex> lock(mutex);
  if (raw == lastRaw) {
    return last;
  }
  last = parseEnvironment();
  lastRaw = raw;
  return last;
}

Options Options::parseEnvironment() {
  Options o;
  auto read = [](OptionGroup g, std::set<std::string>& dst) {
    const char* v = std::getenv(envName(g));
    if (v != nullptr) {
      for (const std::string& s : parseList(g, v)) {
        dst.insert(s);
      }
    }
  };
  read(OptionGroup::Dump, o.dump_);
  read(OptionGroup::Enable, o.enable_);
  read(OptionGroup::Disable, o.disable_);
  return o;
}

Options Options::withOverrides(const std::vector<std::string>& enable,
                               const std::vector<std::string>& disable) const {
  Options o = *this;
  auto add = [](OptionGroup g, const std::string& s,
                std::set<std::string>& dst) {
    checkName(g, s);
    if (isOwnName(g, s)) {  // a no-op name must not change the compile key
      dst.insert(s);
    }
  };
  for (const std::string& s : enable) {
    add(OptionGroup::Enable, s, o.enable_);
  }
  for (const std::string& s : disable) {
    add(OptionGroup::Disable, s, o.disable_);
  }
  return o;
}

bool Options::dumpEnabled(const std::string& name) {
  checkName(OptionGroup::Dump, name);
  return fromEnvironment().dump(name);
}

bool Options::disabledByEnvironment(const std::string& name) {
  checkName(OptionGroup::Disable, name);
  return fromEnvironment().disabled(name);
}

Options Options::withDevice(int64_t smCount, int64_t threadsPerSm) const {
  NVF_CHECK(smCount > 0 && threadsPerSm > 0, "a device of ", smCount,
            " SMs of ", threadsPerSm, " threads");
  Options o = *this;
  o.smCount_ = smCount;
  o.threadsPerSm_ = threadsPerSm;
  return o;
}

std::string Options::compileKey() const {
  std::string key = smCount_ > 0 ? "@" + std::to_string(smCount_) + "x" +
                                       std::to_string(threadsPerSm_)
                                 : "";
  for (const auto& s : enable_) {
    key += "+" + s;
  }
  for (const auto& s : disable_) {
    key += "-" + s;
  }
  return key;
}

}  // namespace nvfuser
