// Segmentation time on synthetic fusions of growing size (no ATen, no
// codegen): long chains, wide fans, stacked RoPE blocks and transformer-like
// layers with many segments. Prints a table
// with the fitted growth exponent per shape and writes JSON.
//
//   segmenter_benchmark [--max-exprs N] [--json PATH]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "ops/arith.h"
#include "ops/reduction_ops.h"
#include "ops/shape_ops.h"
#include "options.h"
#include "segmenter/segment_candidate_finder.h"

using namespace nvfuser;

namespace {

void longChain(Fusion& f, int64_t n) {
  TensorView* a = defineTensor(f, {64, 128}, DataType::Float);
  TensorView* b = defineTensor(f, {64, 128}, DataType::Float);
  Val* v = binaryOp(BinaryOpType::Add, a, b);
  for (int64_t i = 1; i < n; ++i) {
    v = i % 3 == 0
            ? unaryOp(UnaryOpType::Tanh, v)
            : binaryOp(i % 3 == 1 ? BinaryOpType::Mul : BinaryOpType::Sub, v,
                       a);
  }
  f.addOutput(v);
}

// One input fanned out to n/2 unary branches, summed back up in a chain.
void wideFan(Fusion& f, int64_t n) {
  TensorView* a = defineTensor(f, {64, 128}, DataType::Float);
  std::vector<Val*> branches;
  for (int64_t i = 0; i < n / 2; ++i) {
    branches.push_back(unaryOp(i % 2 ? UnaryOpType::Exp : UnaryOpType::Sin, a));
  }
  Val* acc = branches[0];
  for (size_t i = 1; i < branches.size(); ++i) {
    acc = binaryOp(BinaryOpType::Add, acc, branches[i]);
  }
  f.addOutput(acc);
}

// HF-style rotary blocks (about 26 exprs each) applied one after another.
void stackedRope(Fusion& f, int64_t n) {
  const int64_t B = 1, H = 8, Hk = 2, T = 64, D = 32;
  TensorView* q = defineTensor(f, {B, H, T, D}, DataType::BFloat16);
  TensorView* k = defineTensor(f, {B, Hk, T, D}, DataType::BFloat16);
  TensorView* cos = defineTensor(f, {B, T, D}, DataType::BFloat16);
  TensorView* sin = defineTensor(f, {B, T, D}, DataType::BFloat16);
  TensorView* cu = broadcastInDim(cos, {B, 1, T, D}, {0, 2, 3});
  TensorView* su = broadcastInDim(sin, {B, 1, T, D}, {0, 2, 3});
  auto rope = [&](TensorView* x, int64_t heads) {
    std::vector<int64_t> shape = {B, heads, T, D};
    TensorView* x1 = slice(x, {0, 0, 0, 0}, {B, heads, T, D / 2}, {});
    TensorView* x2 = slice(x, {0, 0, 0, D / 2}, shape, {});
    TensorView* rot = cat(
        {castOp(unaryOp(UnaryOpType::Neg, x2), DataType::BFloat16)->asTensor(),
         x1},
        3);
    Val* out = binaryOp(BinaryOpType::Add, binaryOp(BinaryOpType::Mul, x, cu),
                        binaryOp(BinaryOpType::Mul, rot, su));
    return castOp(out, DataType::BFloat16)->asTensor();
  };
  int64_t blocks = std::max<int64_t>(1, n / 26);
  for (int64_t i = 0; i < blocks; ++i) {
    q = rope(q, H);
    k = rope(k, Hk);
  }
  f.addOutput(q);
  f.addOutput(k);
}

// Transformer-like layers (about 30 exprs each): RMS norm (a row
// reduction), a matmul (its own segment), heads reshape + rotary, residual,
// and every layer's rotated heads as an output: many segments, many
// horizontal-fusion candidates.
void transformerLayers(Fusion& f, int64_t n) {
  const int64_t T = 64, H = 4, D = 32, C = H * D;
  TensorView* x = defineTensor(f, {T, C}, DataType::Float);
  TensorView* cos = defineTensor(f, {T, D}, DataType::Float);
  TensorView* sin = defineTensor(f, {T, D}, DataType::Float);
  TensorView* cb = broadcastInDim(cos, {H, T, D}, {1, 2});
  TensorView* sb = broadcastInDim(sin, {H, T, D}, {1, 2});
  int64_t layers = std::max<int64_t>(1, n / 30);
  for (int64_t i = 0; i < layers; ++i) {
    TensorView* sq = binaryOp(BinaryOpType::Mul, x, x)->asTensor();
    TensorView* ms = reduction(ReductionOpType::Mean, sq, {1}, true);
    TensorView* inv = unaryOp(UnaryOpType::Rsqrt, ms)->asTensor();
    TensorView* xn =
        binaryOp(BinaryOpType::Mul, x, expand(inv, {T, C}))->asTensor();
    TensorView* w = defineTensor(f, {C, C}, DataType::Float);
    TensorView* y = matmul(xn, w);
    TensorView* h = permute(reshape(y, {T, H, D}), {1, 0, 2});
    TensorView* h1 = slice(h, {0, 0, 0}, {H, T, D / 2}, {});
    TensorView* h2 = slice(h, {0, 0, D / 2}, {H, T, D}, {});
    TensorView* rot = cat({unaryOp(UnaryOpType::Neg, h2)->asTensor(), h1}, 2);
    TensorView* r =
        binaryOp(BinaryOpType::Add, binaryOp(BinaryOpType::Mul, h, cb),
                 binaryOp(BinaryOpType::Mul, rot, sb))
            ->asTensor();
    f.addOutput(r);
    x = binaryOp(BinaryOpType::Add, x, reshape(permute(r, {1, 0, 2}), {T, C}))
            ->asTensor();
  }
  f.addOutput(x);
}

// Issue 18's shape: n/10 independent 10-op chains, each reading two of a
// few shared inputs and each ending in its own fusion output (10k outputs
// at 100k exprs). The chains span 12 loop domains, more than one
// horizontal kernel covers (8). With `reductions`, every fourth chain ends
// in a row sum and every fourth other one in a softmax-like normalization,
// so reduction and inner-persistent groups exist next to pointwise ones.
void outputChains(Fusion& f, int64_t n, bool reductions) {
  constexpr int64_t kShapes = 12;
  std::vector<TensorView*> a, b;
  for (int64_t s = 0; s < kShapes; ++s) {
    a.push_back(defineTensor(f, {16 + s, 128}, DataType::Float));
    b.push_back(defineTensor(f, {16 + s, 128}, DataType::Float));
  }
  for (int64_t i = 0; i < std::max<int64_t>(1, n / 10); ++i) {
    const size_t s = size_t(i % kShapes);
    Val* v = binaryOp(BinaryOpType::Add, a[s], b[s]);
    for (int k = 1; k < 8; ++k) {
      v = k % 3 == 0
              ? unaryOp(UnaryOpType::Tanh, v)
              : binaryOp(k % 3 == 1 ? BinaryOpType::Mul : BinaryOpType::Sub, v,
                         k % 2 ? a[s] : b[s]);
    }
    if (reductions && i % 4 == 0) {
      v = reduction(ReductionOpType::Sum,
                    unaryOp(UnaryOpType::Exp, v)->asTensor(), {1}, false);
    } else if (reductions && i % 4 == 1) {
      TensorView* sum = reduction(ReductionOpType::Sum, v->asTensor(), {1},
                                  /*keepdim=*/true);
      v = binaryOp(BinaryOpType::Div, v, sum);
    } else {
      v = unaryOp(UnaryOpType::Exp, unaryOp(UnaryOpType::Neg, v));
    }
    f.addOutput(v);
  }
}

void manyOutputs(Fusion& f, int64_t n) {
  outputChains(f, n, false);
}
void manyOutputsReductions(Fusion& f, int64_t n) {
  outputChains(f, n, true);
}

struct Row {
  std::string shape;
  int64_t exprs;
  int64_t groups;
  double ms;
  // Many-output rows only.
  int64_t outputs = 0;
  bool horizontal = true;
  double describeMs = 0;
  // Process CPU time: on a shared machine wall time also counts waiting.
  double cpuMs = 0;
  SegmenterStats stats{};
};

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - t0)
      .count();
}

// What describing a segmentation costs outside the segmenter (Python's
// last_segmentation): the dumps, boundary bytes, every expr printed.
double describeMs(const SegmentedFusion& sf) {
  auto t0 = std::chrono::steady_clock::now();
  size_t chars = sf.toString().size() + sf.toDot().size();
  chars += size_t(sf.boundaryBytes() > 0);
  for (const SegmentedGroup& g : sf.groups()) {
    for (const Expr* e : g.prologue) {
      chars += e->toString().size();
    }
    for (const Expr* e : g.body) {
      chars += e->toString().size();
    }
  }
  return chars > 0 ? msSince(t0) : 0;
}

// Segments each many-output shape once with horizontal fusion on and once
// off, at 1k, 10k and 100k exprs.
std::vector<Row> manyOutputRows(int64_t maxExprs, const std::string& only) {
  const std::vector<
      std::pair<std::string, std::function<void(Fusion&, int64_t)>>>
      shapes = {{"many_outputs", manyOutputs},
                {"many_outputs_reductions", manyOutputsReductions}};
  std::vector<Row> rows;
  for (const auto& [name, build] : shapes) {
    if (!only.empty() && only != name) {
      continue;
    }
    for (int64_t n = 1000; n <= maxExprs; n *= 10) {
      Fusion f;
      build(f, n);
      for (bool horizontal : {true, false}) {
        Options options =
            horizontal ? Options()
                       : Options().withOverrides({}, {"horizontal_fusion"});
        auto t0 = std::chrono::steady_clock::now();
        std::clock_t c0 = std::clock();
        auto sf = segmentFusion(f, options);
        Row r{name, static_cast<int64_t>(f.exprs().size()),
              static_cast<int64_t>(sf->groups().size()), msSince(t0)};
        r.cpuMs = 1000.0 * double(std::clock() - c0) / CLOCKS_PER_SEC;
        r.outputs = static_cast<int64_t>(f.outputs().size());
        r.horizontal = horizontal;
        r.describeMs = describeMs(*sf);
        r.stats = sf->stats();
        rows.push_back(r);
        std::cerr << "  " << name << " " << r.exprs << " exprs, horizontal "
                  << (horizontal ? "on" : "off") << ": " << r.ms << " ms\n";
      }
    }
  }
  return rows;
}

void printManyOutputRows(const std::vector<Row>& rows) {
  std::cout << "\n| shape | exprs | outputs | horizontal | groups | "
               "segment ms | cpu ms | describe ms | merged view exprs | "
               "horizontal pair checks |\n"
               "|---|---|---|---|---|---|---|---|---|---|\n";
  for (const Row& r : rows) {
    std::cout << "| " << r.shape << " | " << r.exprs << " | " << r.outputs
              << " | " << (r.horizontal ? "on" : "off") << " | " << r.groups
              << " | " << r.ms << " | " << r.cpuMs << " | " << r.describeMs
              << " | " << r.stats.mergedViewExprs << " | "
              << r.stats.horizontalPairChecks << " |\n";
  }
}

void writeRow(std::ostream& json, const Row& r) {
  json << "    {\"shape\": \"" << r.shape << "\", \"exprs\": " << r.exprs
       << ", \"groups\": " << r.groups << ", \"ms\": " << r.ms;
  if (r.outputs > 0) {
    json << ", \"outputs\": " << r.outputs
         << ", \"horizontal\": " << (r.horizontal ? "true" : "false")
         << ", \"cpu_ms\": " << r.cpuMs << ", \"describe_ms\": " << r.describeMs
         << ", \"merged_view_exprs\": " << r.stats.mergedViewExprs
         << ", \"horizontal_pair_checks\": " << r.stats.horizontalPairChecks;
  }
  json << "}";
}

using Shapes =
    std::vector<std::pair<std::string, std::function<void(Fusion&, int64_t)>>>;

// Segmentation time of each shape at 100, 1k, 10k and 100k exprs (best of
// a few runs below 100k).
std::vector<Row> scalingRows(const Shapes& shapes, int64_t maxExprs,
                             const std::string& only) {
  Options options =
      std::getenv("NVFUSER_BENCH_DISABLE")
          ? Options().withOverrides({}, {std::getenv("NVFUSER_BENCH_DISABLE")})
          : Options();
  std::vector<Row> rows;
  for (const auto& [name, build] : shapes) {
    if (!only.empty() && only != name) {
      continue;
    }
    for (int64_t n = 100; n <= maxExprs; n *= 10) {
      Fusion f;
      build(f, n);
      double best = 1e30;
      int64_t groups = 0;
      int reps = n >= 100000 ? 1 : (n >= 10000 ? 3 : 10);
      for (int r = 0; r < reps; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        auto sf = segmentFusion(f, options);
        best = std::min(best, msSince(t0));
        groups = static_cast<int64_t>(sf->groups().size());
      }
      rows.push_back(
          {name, static_cast<int64_t>(f.exprs().size()), groups, best});
      std::cerr << "  " << name << " " << f.exprs().size() << " exprs: " << best
                << " ms\n";
    }
  }
  return rows;
}

// Least-squares slope of log time against log exprs, per shape.
std::vector<std::pair<std::string, double>> growthExponents(
    const Shapes& shapes, const std::vector<Row>& rows) {
  std::vector<std::pair<std::string, double>> out;
  for (const auto& shape : shapes) {
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    int cnt = 0;
    for (const Row& r : rows) {
      if (r.shape != shape.first || r.ms <= 0) {
        continue;
      }
      double x = std::log(static_cast<double>(r.exprs));
      double y = std::log(r.ms);
      sx += x, sy += y, sxx += x * x, sxy += x * y, ++cnt;
    }
    if (cnt > 1) {
      out.emplace_back(shape.first,
                       (cnt * sxy - sx * sy) / (cnt * sxx - sx * sx));
    }
  }
  return out;
}

void writeJson(const std::string& path, const std::vector<Row>& rows,
               const std::vector<Row>& manyRows,
               const std::vector<std::pair<std::string, double>>& growth) {
  std::ofstream json(path);
  json << "{\n  \"rows\": [\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    writeRow(json, rows[i]);
    json << (i + 1 < rows.size() ? "," : "") << "\n";
  }
  json << "  ],\n  \"many_outputs\": [\n";
  for (size_t i = 0; i < manyRows.size(); ++i) {
    writeRow(json, manyRows[i]);
    json << (i + 1 < manyRows.size() ? "," : "") << "\n";
  }
  json << "  ],\n  \"growth_exponent\": {";
  for (size_t i = 0; i < growth.size(); ++i) {
    json << (i ? ", " : "") << "\"" << growth[i].first
         << "\": " << growth[i].second;
  }
  json << "}\n}\n";
}

}  // namespace

// --shape NAME runs one shape only (of either table).
int main(int argc, char** argv) {
  int64_t maxExprs = 100000;
  std::string jsonPath = "segmenter_benchmark.json";
  std::string only;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--max-exprs")) {
      maxExprs = std::atoll(argv[i + 1]);
    } else if (!std::strcmp(argv[i], "--json")) {
      jsonPath = argv[i + 1];
    } else if (!std::strcmp(argv[i], "--shape")) {
      only = argv[i + 1];
    }
  }
  const Shapes shapes = {{"long_chain", longChain},
                         {"wide_fan", wideFan},
                         {"stacked_rope", stackedRope},
                         {"transformer_layers", transformerLayers}};
  std::vector<Row> rows = scalingRows(shapes, maxExprs, only);
  std::vector<Row> manyRows = manyOutputRows(maxExprs, only);
  std::cout << "\n| shape | exprs | groups | segment ms |\n|---|---|---|---|\n";
  for (const Row& r : rows) {
    std::cout << "| " << r.shape << " | " << r.exprs << " | " << r.groups
              << " | " << r.ms << " |\n";
  }
  auto growth = growthExponents(shapes, rows);
  std::cout << "\ngrowth exponent (least-squares slope of log time vs log "
               "exprs):\n";
  for (const auto& [name, slope] : growth) {
    std::cout << "  " << name << ": " << slope << "\n";
  }
  printManyOutputRows(manyRows);
  writeJson(jsonPath, rows, manyRows, growth);
  std::cout << "wrote " << jsonPath << "\n";
  return 0;
}
