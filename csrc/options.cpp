#include "options.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <sstream>

#include "exceptions.h"

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

void checkName(OptionGroup g, const std::string& name) {
  const auto& valid = Options::validNames(g);
  NVF_CHECK(std::find(valid.begin(), valid.end(), name) != valid.end(),
            envName(g), ": unknown option '", name,
            "'; valid options are: ", joined(valid));
}
}  // namespace

const std::vector<std::string>& Options::validNames(OptionGroup g) {
  static const std::vector<std::string> kDump = {
      "fusion_ir",           // the definition as given
      "fusion_ir_concrete",  // after binding input sizes
      "segmented_fusion",    // groups, schedulers, prologues
      "segmenter_logging",   // every segmentation decision with its reason
      "draw_segmented_fusion",
      "cuda_kernel",
      "launch_param",
      "ptxas_verbose",  // registers / spills of every compiled kernel
      "fx_partition",   // torch.compile / FX regions (Python side)
  };
  static const std::vector<std::string> kEnable = {
      "kernel_profile",
      "int64_index",  // 64-bit index math even where 32 bits suffice
  };
  static const std::vector<std::string> kDisable = {
      "input_forwarding", "extended_input_forwarding", "horizontal_fusion",
      "kernel_cache",     // no cubin cache, on disk or in memory
      "vectorization",    // vector loads/stores in generated kernels
      "reduction_split",  // long reductions with few outputs in two steps
  };
  switch (g) {
    case OptionGroup::Dump:
      return kDump;
    case OptionGroup::Enable:
      return kEnable;
    case OptionGroup::Disable:
      return kDisable;
  }
  return kDump;
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
    out.push_back(item);
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
  for (const std::string& s : enable) {
    checkName(OptionGroup::Enable, s);
    o.enable_.insert(s);
  }
  for (const std::string& s : disable) {
    checkName(OptionGroup::Disable, s);
    o.disable_.insert(s);
  }
  return o;
}

bool Options::dumpEnabled(const std::string& name) {
  checkName(OptionGroup::Dump, name);
  return fromEnvironment().dump(name);
}

std::string Options::compileKey() const {
  std::string key;
  for (const auto& s : enable_) {
    key += "+" + s;
  }
  for (const auto& s : disable_) {
    key += "-" + s;
  }
  return key;
}

}  // namespace nvfuser
