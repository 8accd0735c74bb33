// NVFUSER_DUMP / NVFUSER_ENABLE / NVFUSER_DISABLE, parsed in one place. The
// environment is read once into an Options value that callers pass along.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace nvfuser {

enum class OptionGroup { Dump, Enable, Disable };

class Options {
 public:
  // Reads the three environment variables; throws a ValueError naming any
  // unknown option and listing the valid ones.
  static Options fromEnvironment();
  // Parses a comma-separated list as if it came from the environment.
  static std::vector<std::string> parseList(OptionGroup group,
                                            const std::string& text);
  // The valid names of a group.
  static const std::vector<std::string>& validNames(OptionGroup group);
  // nvFuser's names of a group that we accept as documented no-ops.
  static const std::vector<std::string>& nvfuserNames(OptionGroup group);
  // Whether NVFUSER_DUMP names `name`, which must be a valid dump option:
  // what code outside the compiler (the Python FX backend) asks instead of
  // parsing the variable again.
  static bool dumpEnabled(const std::string& name);
  // The same for NVFUSER_DISABLE (the FX backend's partition).
  static bool disabledByEnvironment(const std::string& name);

  // Adds per-call options (fd.execute's _enable_options/_disable_options).
  Options withOverrides(const std::vector<std::string>& enable,
                        const std::vector<std::string>& disable) const;

  bool dump(const std::string& name) const { return dump_.count(name) > 0; }
  bool enabled(const std::string& name) const {
    return enable_.count(name) > 0;
  }
  bool disabled(const std::string& name) const {
    return disable_.count(name) > 0;
  }
  // Plans kernels for a device of `smCount` SMs of `threadsPerSm` resident
  // threads each instead of the one the arguments are on (or the default
  // without a GPU): the tests and the fuzzer reach, with small tensors, the
  // plans a large problem gets on a full-size GPU (threads per slot, loop
  // outputs). Not an environment option.
  Options withDevice(int64_t smCount, int64_t threadsPerSm) const;
  int64_t smCount() const { return smCount_; }  // 0: the device's
  int64_t threadsPerSm() const { return threadsPerSm_; }

  // A stable key of the options that change compilation results.
  std::string compileKey() const;

 private:
  static Options parseEnvironment();

  std::set<std::string> dump_;
  std::set<std::string> enable_;
  std::set<std::string> disable_;
  int64_t smCount_ = 0;
  int64_t threadsPerSm_ = 0;
};

}  // namespace nvfuser
