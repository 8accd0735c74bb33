// fuzz_fusions: differential fuzzing of the segmenter and codegen.
//
//   fuzz_fusions [--count N] [--seed S] [--ops K] [--compile-every M]
//                [--device cpu|cuda|emu] [--features list]
//
// Runs N random fusions from seed S on, under every forwarding policy,
// against the unsegmented ATen evaluation. For each failure it prints the
// seed, the smallest op count that still fails, and a Python reproducer.
// --features list prints, per seed, the kinds of kernels it built (the
// counts of the summary line): how tests pick seeds that exercise one.
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <utility>

#include "fuzz_case.h"

using namespace nvfuser;

namespace {
const char* kUsage =
    "usage: fuzz_fusions [--count N] [--seed S] [--ops K] "
    "[--compile-every M]\n"
    "                    [--device cpu|cuda|emu] [--features list]\n";

struct FuzzArgs {
  uint64_t count = 1000;
  uint64_t first = 0;
  int ops = 14;
  uint64_t compileEvery = 0;
  bool cuda = false;
  bool emulate = false;
  bool listFeatures = false;
};

bool readCount(const char* text, uint64_t* out) {
  char* end = nullptr;
  errno = 0;
  *out = std::strtoull(text, &end, 10);
  return *text >= '0' && *text <= '9' && *end == '\0' && errno == 0;
}

bool knownFlag(const std::string& flag) {
  for (const char* f : {"--count", "--seed", "--ops", "--compile-every",
                        "--device", "--features"}) {
    if (flag == f) {
      return true;
    }
  }
  return false;
}

// Every flag takes one value; anything else (a typo, --help) is an error,
// so a mistyped flag never runs the default campaign unnoticed.
bool parseArgs(int argc, char** argv, FuzzArgs* a, std::string* why) {
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--help")) {
      *why = "";
      return false;
    }
  }
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (!knownFlag(flag)) {
      *why = "unknown flag " + flag;
      return false;
    }
    if (i + 1 >= argc) {
      *why = flag + " needs a value";
      return false;
    }
    const char* value = argv[i + 1];
    uint64_t n = 0;
    bool ok = true;
    if (flag == "--count" || flag == "--seed" || flag == "--ops" ||
        flag == "--compile-every") {
      ok = readCount(value, &n);
      if (flag == "--count") {
        a->count = n;
      } else if (flag == "--seed") {
        a->first = n;
      } else if (flag == "--ops") {
        ok = ok && n <= 100000;
        a->ops = static_cast<int>(n);
      } else {
        a->compileEvery = n;
      }
    } else if (flag == "--device") {
      ok = !std::strcmp(value, "cpu") || !std::strcmp(value, "cuda") ||
           !std::strcmp(value, "emu");
      a->cuda = !std::strcmp(value, "cuda");
      a->emulate = !std::strcmp(value, "emu");
    } else if (flag == "--features") {
      ok = !std::strcmp(value, "list");
      a->listFeatures = ok;
    }
    if (!ok) {
      *why = "bad value '" + std::string(value) + "' for " + flag;
      return false;
    }
  }
  return true;
}
}  // namespace

int main(int argc, char** argv) {
  FuzzArgs args;
  std::string why;
  if (!parseArgs(argc, argv, &args, &why)) {
    if (why.empty()) {  // --help
      std::cout << kUsage;
      return 0;
    }
    std::cerr << "fuzz_fusions: " << why << "\n" << kUsage;
    return 2;
  }
  const uint64_t count = args.count;
  const uint64_t first = args.first;
  const int ops = args.ops;
  const uint64_t compileEvery = args.compileEvery;
  const bool cuda = args.cuda;
  const bool emulate = args.emulate;
  const bool listFeatures = args.listFeatures;
  auto start = std::chrono::steady_clock::now();
  // What the generated code says it does (FuzzOutcome), as --features
  // list names it and as the summary counts it.
  struct Feature {
    int64_t FuzzOutcome::*count;
    const char* listed;
    const char* summarized;
  };
  static const Feature kFeatures[] = {
      {&FuzzOutcome::interleavedCatKernels, "interleaved-cat order",
       " kernels in interleaved-cat order"},
      {&FuzzOutcome::laneTableKernels, "lane tables", " with lane tables"},
      {&FuzzOutcome::slotGroupKernels, "threads per slot",
       " with threads per slot"},
      {&FuzzOutcome::sharedLoopKernels, "shared reduction loops",
       " with shared reduction loops"},
      {&FuzzOutcome::chainedSumKernels, "chained sums", " with chained sums"},
      {&FuzzOutcome::loopOutputKernels, "loop outputs", " with loop outputs"},
      {&FuzzOutcome::transposeKernels, "transpose tiles",
       " with transpose tiles"},
      {&FuzzOutcome::inputOrderKernels, "input order",
       " with slots in an input's order"},
      {&FuzzOutcome::narrowedKernels, "narrowed vectors",
       " with narrowed vectors"}};
  constexpr size_t kNumFeatures = sizeof(kFeatures) / sizeof(kFeatures[0]);
  uint64_t failures = 0, skipped = 0, exprs = 0, segments = 0;
  uint64_t featureTotals[kNumFeatures] = {};
  for (uint64_t s = first; s < first + count; ++s) {
    bool compile = compileEvery > 0 && s % compileEvery == 0;
    FuzzOutcome o = runFuzzCase(s, ops, compile, cuda, emulate);
    if (o.skipped && skipped < 3) {
      std::cout << "skipped seed " << s << ": " << o.skipReason << "\n";
    }
    skipped += o.skipped;
    exprs += o.exprs;
    segments += o.segments;
    std::string line;
    for (size_t k = 0; k < kNumFeatures; ++k) {
      const int64_t n = o.*(kFeatures[k].count);
      featureTotals[k] += static_cast<uint64_t>(n);
      if (n > 0) {
        line += (line.empty() ? "" : ", ") + std::to_string(n) + " " +
                kFeatures[k].listed;
      }
    }
    if (listFeatures && !line.empty()) {
      std::cout << "seed " << s << ": " << line << "\n";
    }
    if (o.problems.empty()) {
      continue;
    }
    ++failures;
    // The generator is a prefix of itself with fewer ops: find the
    // smallest prefix that still fails.
    int minimal = ops;
    FuzzOutcome smallest = o;
    for (int k = 1; k < ops; ++k) {
      FuzzOutcome t = runFuzzCase(s, k, compile, cuda, emulate);
      if (!t.problems.empty()) {
        minimal = k;
        smallest = t;
        break;
      }
    }
    std::cout << "FAIL seed " << s << " (still fails with --ops " << minimal
              << "):\n";
    for (const std::string& p : smallest.problems) {
      std::cout << "  " << p << "\n";
    }
    std::cout << smallest.reproducer << "\n";
  }
  double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::cout << "fuzzed " << count << " fusions on "
            << (cuda      ? "cuda"
                : emulate ? "cpu (kernels emulated)"
                          : "cpu")
            << " (seeds " << first << ".." << first + count - 1
            << "): " << failures << " failed, " << skipped
            << " skipped (rejected by ATen), " << exprs << " exprs, "
            << segments << " segments (";
  for (size_t k = 0; k < kNumFeatures; ++k) {
    std::cout << (k ? ", " : "") << featureTotals[k] << kFeatures[k].summarized;
  }
  std::cout << "), " << secs << " s\n";
  return failures == 0 ? 0 : 1;
}
