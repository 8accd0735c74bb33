// The pointwise kernel generator's internals, shared by its two source
// files: pointwise_generator.cpp (values, loads, index maps) and
// pointwise_exprs.cpp (one case per expr type). Not a public header.
#pragma once

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/op_emitter.h"
#include "codegen/pointwise_codegen.h"
#include "ir/exprs.h"
#include "ir/rng_op.h"
#include "scheduler/row_reduction_plan.h"
#include "scheduler/scheduler.h"

namespace nvfuser {
namespace pointwise_detail {

// One loop-index term. A lane term's value at lane u is e + u, and e is a
// multiple of the vector width; any other term is the same for every lane.
struct Ix {
  std::string e;
  bool lane = false;
};
using Index = std::vector<Ix>;

// A generated variable: a scalar, or an nvf_array with one element per lane.
struct Value {
  std::string name;
  bool lane = false;
};

// Thrown when a family's index expressions cannot keep V lanes contiguous
// and aligned; the family is generated again with fewer lanes.
struct NotVectorizable {
  std::string why;
};

// Wraps a composite index expression so it can be a factor.
inline std::string paren(const std::string& e) {
  return e.find(' ') == std::string::npos ? e : "(" + e + ")";
}

inline std::string keyOf(const Index& idx) {
  std::string s;
  for (const Ix& i : idx) {
    s += i.e + (i.lane ? "+u," : ",");
  }
  return s;
}

// Reduction helpers shared by the serial and the row strategies
// (pointwise_reduction.cpp).
DataType accumulatorType(DataType out, DataType in);
std::string identity(ReductionOpType op, DataType t);
std::string combine(ReductionOpType op, const std::string& acc,
                    const std::string& x);

// One vector of a row a thread works on: the inner indices, the element
// offset variable, and (persistent rows) the flag saying it is in the row.
struct RowChunk {
  Index inner;
  std::string k;
  std::string active;  // empty: always in the row (a loop)
};

// The whole extracted fusion is the segment: row sources may be anywhere.
inline const TensorView* rowSource(const TensorView* out,
                                   const RowReductionPlan& plan) {
  return nvfuser::rowSource(out, plan, [](const Expr*) { return true; });
}

class PointwiseKernelGenerator {
 public:
  PointwiseKernelGenerator(const Fusion& f, const KernelPlan& plan,
                           const std::vector<TensorLayout>& layouts,
                           PointwiseCodegenOptions options);

  KernelSource generate(const std::string& name);

 private:
  // Names the kernel's parameters (paramName_), fills ks's inputs, outputs
  // and index-error flag, and returns the parameter list.
  std::string declareParameters(KernelSource& ks);
  // 32-bit unsigned index math when every offset fits (indexType_).
  void chooseIndexType();
  // Fills streamed_ (split sums): inputs with as many distinct elements as
  // the fusion's largest tensor (its iteration space).
  void findStreamedInputs();
  KernelSource generateRows(KernelSource ks, const RowReductionPlan& plan,
                            const std::string& params);
  // The statement reordering slot `s` of `fam` when the plan names an
  // interleaved cat among its outputs (kernel_plan.h), else "".
  std::string interleavedCatOrder(const OutputFamily& fam) const;
  // The kernel of a split sum around `body` (the partial sums `nvf_p` at
  // element `i` of the rows nvf_rb, nvf_rb + the plan's rowStride, ...): a
  // block takes a tile of vectors x the plan's chunks per block and combines
  // their sums in shared memory; where a column has several tiles, each adds
  // one value per element to the workspace and the last writes the column
  // out (pointwise_reduction.cpp).
  KernelSource generateSplit(KernelSource ks, const std::string& params,
                             const std::string& body);

  std::string familyBody(const OutputFamily& family, int64_t v);
  // The per-row loop body of a row-reduction kernel with v lanes
  // (pointwise_row_reduction.cpp).
  std::string rowBody(const RowReductionPlan& plan, int64_t v);
  // Column sums of the row kernel (row_reduction_plan.h): the adds of one
  // chunk of a row into shared memory, the shared accumulators before the
  // row loop, and the combination of the blocks' partials after it
  // (workspace at nvf_ws, arrival counter at countersAt).
  std::vector<std::string> columnSumAdds(const RowReductionPlan& plan,
                                         const RowChunk& chunk);
  std::string columnSumPrologue(const RowReductionPlan& plan) const;
  std::string columnSumEpilogue(const RowReductionPlan& plan,
                                const std::vector<size_t>& outputs,
                                int64_t countersAt) const;
  // Block-cooperative reduction of `e` over the current row; caches its
  // output(s) at the row index.
  void rowReduce(const Expr* e, const RowReductionPlan& plan);
  // Opens the loop over this thread's vectors of the row (persistent rows:
  // no loop) and returns the vectors of one iteration.
  std::vector<RowChunk> openRowLoop(const RowReductionPlan& plan);
  void closeRowLoop();
  // Index variables of the inner dims at element `k` of the row.
  Index innerIndex(const RowReductionPlan& plan, const std::string& k);
  // The index of a tensor whose non-size-1 dims are rows (+ inner).
  Index rowIndex(const TensorView* tv, const Index& inner) const;
  Value valueAt(const Val* v, const Index& idx);
  // compute() of v's definition, cached in the current scope.
  Value computeAndCache(const Val* v, const Index& idx);
  Value compute(const Expr* e, const Val* v, const Index& idx);
  // A pad's value at idx: the input inside a branch on its range (or
  // predicated), the pad value outside.
  Value padded(const PadOp* p, DataType out, const Index& idx);
  // A cat's value at idx: one branch per part, a sole non-empty part
  // moved, or predicated parts without branches.
  Value concatenated(const CatOp* c, DataType out, const Index& idx);
  // In a row kernel a reduced value has one key per row: the row plan
  // admits only uses that stay in the row (keepsRows), so however a
  // reshape spelled its index, it is this row's value (looked up under
  // another key it would be recomputed per element: a full pass over the
  // row for every element).
  std::string valueKey(const Val* v, const Index& idx) const {
    if (rowStrategy_ && v->definition() != nullptr &&
        isReductionLike(v->definition())) {
      return v->ref() + "@row";
    }
    return v->ref() + "@" + keyOf(idx);
  }
  // A value at an index that compute() will ask for.
  struct Request {
    const Val* v;
    Index idx;
  };
  // Ops that only move elements: their operand at remappedIndex() is their
  // value (pointwise_operands.cpp).
  static bool isRemap(const Expr* e);
  Index remappedIndex(const Expr* e, const Val* v, const Index& idx);
  Index slicedIndex(const SliceOp* s, const Index& idx) const;
  // Where a gather reads its index tensor for output index idx
  // (pointwise_gather.cpp).
  Index gatherIndexAt(const GatherOp* g, const Index& idx) const;
  // A gather's value at an output index: the lookup loaded at the index
  // value inside a bounds check, 0 outside.
  Value gathered(const GatherOp* g, const Index& idx);
  // The same when the index value differs between lanes: one load per
  // lane, each under its own check (inBounds is written for lane u).
  Value gatherLanes(const TensorView* lookup, const Index& from, size_t dim,
                    const Value& k, const std::string& inBounds,
                    const std::string& zero);
  // A random op's element at idx (pointwise_exprs.cpp).
  Value rngValue(const RngOp* r, const Val* v, const Index& idx);
  // What compute(e, v, idx) reads before emitting e's own code, in order;
  // nothing for exprs that read inside branches or loops (pad, cat,
  // reductions).
  std::vector<Request> eagerOperands(const Expr* e, const Val* v,
                                     const Index& idx);
  // Cached, a parameter, a constant, or an input: nothing to compute.
  bool isReady(const Val* v, const Index& idx) const;
  // Loads the inputs that computing `roots` reads unconditionally (their
  // eager operands' closure), at most kMaxEarlyLoads, before anything is
  // computed: a load after a branch otherwise waits for the branch's own
  // loads (a RoPE backward whose rotate-half pads came first ran 1.2x
  // slower than the same kernel with its plain loads first).
  void loadEagerInputsFirst(const std::vector<Request>& roots);
  static constexpr int64_t kMaxEarlyLoads = 8;
  // Computes v's eager operands, theirs first, with an explicit stack, so
  // compute(v) finds them cached: the generator's recursion depth does not
  // grow with chains of elementwise ops.
  void computeOperandsFirst(const Val* v, const Index& idx);
  Value scalar(const Val* v);
  Value operand(const Val* v, const Index& idx);
  Index operandIndex(const TensorView* tv, const Index& idx) const;
  Value emit(DataType t, bool lane, const std::string& expr);
  Value declare(DataType t, bool lane);
  std::string emitIndex(const std::string& expr);
  Value load(const TensorView* tv, const Index& idx);
  Value branchValue(const Val* v, const Index& idx);
  // branchValue without the branch: v computed for every element, its
  // loads only where `cond` holds (nvf_vload_if), so they issue together
  // with the kernel's other loads instead of after a divergent branch
  // waits for its own (a rotate-half's two halves in a RoPE backward).
  Value predicatedValue(const Val* v, const Index& idx,
                        const std::string& cond);
  // The index of a cat's part that starts at `offset` along `dim` (the
  // boundary must keep whole vectors on one side).
  Index catPartIndex(const Index& idx, int64_t dim, int64_t offset) const;
  // A cat whose other parts are empty along its dim (torch.compile's
  // cat([x, x[..., 128:]]) of a 128-wide x) is that part, moved: its
  // request at idx, else none (v == nullptr).
  Request soleCatPart(const CatOp* c, const Index& idx) const;
  // A cat of parts that are computedWithoutBranch, with predicatedValue.
  Value catWithoutBranches(const CatOp* c, DataType out, const Index& idx,
                           bool lane);
  // Whether a pad's or cat's operand is computed everywhere with
  // predicated loads: inside a serial reduction's loop (the sum over the
  // query heads of a GQA group, each iteration a rotate-half), and only
  // cheap ops (op_cost.h), at most kMaxPredicatedOps of them besides
  // element moves. Measured on an H200 (RoPE backwards): in a loop,
  // branches waiting for their own loads every iteration made Llama-3's
  // 1.2x slower; outside loops, predication made the LitGPT Llama-2 one
  // 1.16x slower, and computing a cat's large parts (q, k and v gradients
  // of a dozen ops each) everywhere 1.26x slower.
  bool computedWithoutBranch(const Val* v) const;
  static constexpr int64_t kMaxPredicatedOps = 4;
  static constexpr size_t kMaxPredicatedWalk = 64;
  // var (or, per lane, var[u]) = rhs, where rhs is written for lane u.
  void assign(const Value& var, const std::string& rhs);
  // A reduction (or var_mean) at an output index: a loop over the reduced
  // dims inside the thread (pointwise_reduction.cpp).
  Value reduce(const Expr* e, const Val* v, const Index& idx);
  // Opens one loop per reduced dim of `in` and returns the input's index
  // inside them; closeReductionLoops closes them.
  Index openReductionLoops(const TensorView* in,
                           const std::vector<int64_t>& axes, const Index& idx);
  void closeReductionLoops(const TensorView* in,
                           const std::vector<int64_t>& axes);
  Index reshapeIndex(const std::vector<int64_t>& outShape,
                     const std::vector<int64_t>& inShape, const Index& idx);
  Ix linearize(const std::vector<int64_t>& shape, const Index& idx,
               size_t begin, size_t end);
  // Requires that a lane-dependent boundary at `at` keeps whole vectors on
  // one side.
  void requireAligned(int64_t at, const char* what) const;
  std::string ixAt(const Ix& i) const {
    return i.lane ? "(" + i.e + " + u)" : i.e;
  }
  static std::string at(const Value& v) {
    return v.lane ? v.name + "[u]" : v.name;
  }
  std::string cast(const Value& v, DataType from, DataType to) const {
    return castExpr(from, to, at(v));
  }
  void line(const std::string& s) {
    body_ << std::string(indent_, ' ') << s << "\n";
  }
  const Value* cached(const std::string& key) const;

  const Fusion& fusion_;
  const KernelPlan plan_;              // the scheduler's: the strategy built
  std::vector<TensorLayout> layouts_;  // per fusion input
  PointwiseCodegenOptions options_;
  // "int" when every tensor of the kernel has fewer than 2^31 elements.
  std::string indexType_ = "int64_t";
  std::ostringstream body_;
  int indent_ = 6;
  int counter_ = 0;
  int64_t lanes_ = 1;  // vector width of the family being generated
  std::vector<std::map<std::string, Value>> scopes_;
  std::map<const Val*, std::string> paramName_;
  std::map<const Val*, size_t> inputIndex_;
  Index rowIdx_;  // the current row's indices (row strategy)
  // Row strategy with one vector per thread per row: no loop over the row,
  // every pass reuses the values in registers.
  bool persistent_ = false;
  int64_t persistentVectors_ = 1;  // per thread
  int64_t persistentStride_ = 0;   // elements between a thread's vectors
  int64_t rowReductions_ = 0;
  bool rowStrategy_ = false;  // generating a row kernel      // block
                              // reductions emitted in this row
  std::vector<RowChunk> persistentChunks_;
  int64_t split_ = 1;              // chunks of the split reduced dim
  int64_t splitAxis_ = -1;         // that dim, of the sum's input
  const Val* splitSum_ = nullptr;  // the sum (the output, or cast to it)
  // Loads emitted while this is non-empty happen only where it holds
  // (predicatedValue).
  std::string loadPredicate_;
  int reductionLoops_ = 0;  // serial reduction loops open around the code
  // Inputs a split sum reads once per element: its vector loads of them
  // skip L1.
  std::set<const TensorView*> streamed_;
};

}  // namespace pointwise_detail
}  // namespace nvfuser
