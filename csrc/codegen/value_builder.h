// The shared index/value builder of the kernel generators: a fusion's
// values at index expressions, written as CUDA statements (loads, index
// maps, one case per expr type, serial reduction loops). Each strategy's
// generator derives from it (pointwise_kernel_generator.h,
// serial_reduction_kernel_generator.h, row_kernel_generator.h). Files:
// value_builder.cpp (values, loads, index maps), value_builder_exprs.cpp
// (one case per expr type), value_builder_operands.cpp (operands read
// first, early loads), value_builder_gather.cpp (gathers),
// serial_reduction_loops.cpp (reductions looped inside a thread),
// kernel_parameters.cpp (parameters, index type, planned families). Not a
// public header.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "codegen/index_expr.h"
#include "codegen/kernel_codegen.h"
#include "codegen/op_emitter.h"
#include "exceptions.h"
#include "ir/exprs.h"
#include "ir/rng_op.h"
#include "scheduler/row_reduction_plan.h"
#include "scheduler/scheduler.h"

namespace nvfuser {
namespace codegen_detail {

// One loop-index term. A lane term's value at lane u is e + u, and e is a
// multiple of the vector width; any other term is the same for every lane.
// A lane table is a lane term whose lanes are not consecutive (a reshape
// that splits a lane dim, [.., D] -> [.., D / 2, 2], gives u / 2 and u % 2):
// lane u's value is e + offsets[u], e a multiple of align, or align 0 and
// e the constant 0 (every lane's value known when the kernel is generated:
// value_builder_lane_tables.cpp).
struct Ix {
  Ix() = default;
  Ix(IndexExpr e_, bool lane_) : e(std::move(e_)), lane(lane_) {}
  Ix(IndexExpr e_, bool lane_, std::vector<int64_t> offsets_, int64_t align_)
      : e(std::move(e_)),
        lane(lane_),
        offsets(std::move(offsets_)),
        align(align_) {}

  IndexExpr e;
  bool lane = false;
  std::vector<int64_t> offsets;  // a lane table's; empty otherwise
  int64_t align = 0;
};
using Index = std::vector<Ix>;

inline bool isTable(const Ix& i) {
  return !i.offsets.empty();
}
// A lane table whose every lane's value is a constant (e is 0).
inline bool isLaneConstants(const Ix& i) {
  return isTable(i) && i.e.isZero();
}

// Whether some term of idx differs between lanes.
inline bool anyLane(const Index& idx) {
  for (const Ix& i : idx) {
    if (i.lane) {
      return true;
    }
  }
  return false;
}

// A lane table's offsets as an expression in u (constant once unrolled).
IndexExpr laneOffsetExpr(const std::vector<int64_t>& offsets);

// A generated variable: a scalar, or an nvf_array with one element per lane.
struct Value {
  std::string name;
  bool lane = false;
};

// Thrown when a family's index expressions cannot keep V lanes contiguous
// and aligned: the lane proof's "no" (provesLanes), after which the plan
// halves V; in generate() an internal error (plannedBody).
struct NotVectorizable {
  std::string why;
};

inline std::string keyOf(const Index& idx) {
  std::string s;
  for (const Ix& i : idx) {
    s += i.e.str() + (isTable(i) ? "+" + laneOffsetExpr(i.offsets).str() + ","
                                 : (i.lane ? "+u," : ","));
  }
  return s;
}

// Reduction helpers shared by the serial and the row strategies
// (serial_reduction_loops.cpp).
DataType accumulatorType(DataType out, DataType in);
std::string identity(ReductionOpType op, DataType t);
std::string combine(ReductionOpType op, const std::string& acc,
                    const std::string& x);

// A body at the plan's width (`generate`): the plan's widths are ones the
// lane proof held for (scheduler/kernel_plan.h: LaneProof), so a
// NotVectorizable here is a plan made without the proof, an internal error.
template <typename Generate>
std::string plannedBody(int64_t width, Generate generate) {
  try {
    return generate();
  } catch (const NotVectorizable& e) {
    NVF_THROW(Internal, "the plan's ", width, " lanes do not hold (", e.why,
              "): plan with a LaneProof (planKernel's options.laneProof)");
  }
}

// The lane proof's answer (provesLanes): whether `build` builds a body
// without a NotVectorizable, whose reason goes to `why`.
template <typename Build>
bool lanesHold(Build build, std::string* why) {
  try {
    build();
    return true;
  } catch (const NotVectorizable& e) {
    *why = e.why;
    return false;
  }
}

// A strategy's generator: the builder plus how its kernel covers the
// output (generate()).
class KernelValueBuilder {
 public:
  KernelValueBuilder(const Fusion& f, const KernelPlan& plan,
                     const std::vector<TensorLayout>& layouts,
                     KernelCodegenOptions options);
  virtual ~KernelValueBuilder() = default;
  KernelValueBuilder(const KernelValueBuilder&) = delete;
  KernelValueBuilder& operator=(const KernelValueBuilder&) = delete;

  virtual KernelSource generate(const std::string& name) = 0;
  // Whether family f's body builds at the plan's width (its vectorWidth;
  // Rows: rowVectorWidth): the lane proof (codegen/lane_proof.h). `why`
  // gets the reason of a no.
  virtual bool provesLanes(size_t f, std::string* why) = 0;

 protected:
  // The kernel source before its code: name, the plan's families (checked
  // to cover each output once), inputs and outputs; `params` gets the
  // parameter list and the index type is chosen.
  KernelSource beginKernel(const std::string& name, std::string* params);
  // Names the kernel's parameters (paramName_), fills ks's inputs, outputs
  // and index-error flag, and returns the parameter list.
  std::string declareParameters(KernelSource& ks);
  // 32-bit unsigned index math when every offset fits (indexType_).
  void chooseIndexType();
  // " (4 lanes do not hold: why)" where the lane proof narrowed family f,
  // else "": for the kernel's comments.
  std::string narrowedNote(size_t f) const;
  // Elements of the fusion's largest tensor (its iteration space).
  int64_t largestTensorNumel() const;
  // Starts a body of v lanes: no statements, one empty scope.
  void resetBody(int64_t v);

  // The key a value at idx is cached under (a row kernel keys reduced
  // values by row: row_kernel_generator.h).
  virtual std::string valueKey(const Val* v, const Index& idx) const {
    return v->ref() + "@" + keyOf(idx);
  }
  // A reduction (or var_mean) at an output index: a loop over the reduced
  // dims inside the thread (serial_reduction_loops.cpp).
  virtual Value reduce(const Expr* e, const Val* v, const Index& idx);
  // How the serial loop over reduced dim `dim` of a reduction input runs:
  // from `begin`, advancing by `step` (its variable is r); chunked loops
  // take part of the dim (a split sum: serial_reduction_kernel_generator.h).
  struct LoopRange {
    std::string begin = "0";
    std::string step;  // empty: ++r
    bool chunked = false;
  };
  virtual LoopRange reductionLoopRange(int64_t dim, const std::string& r) const;

  Value valueAt(const Val* v, const Index& idx);
  // compute() of v's definition, cached in the current scope.
  Value computeAndCache(const Val* v, const Index& idx);
  Value compute(const Expr* e, const Val* v, const Index& idx);
  // compute() of each kind of elementwise op, and of iota.
  Value unaryValue(const UnaryOp* u, DataType out, const Index& idx);
  Value binaryValue(const BinaryOp* b, DataType out, const Index& idx);
  Value ternaryValue(const TernaryOp* t3, DataType out, const Index& idx);
  Value iotaValue(const Expr* e, DataType out, const Index& idx);
  // A cast to a 16-bit float of negations and absolute values of a value
  // of that type (through widening casts): the sign bit changed in the
  // 16-bit value, no rounding (nvf_neg16); nullopt otherwise.
  std::optional<Value> narrowedWithoutRounding(const Val* in, DataType out,
                                               const Index& idx);
  // The value of type `out` such a cast starts from, its sign ops in
  // signOps (outermost first); nullptr when the cast rounds.
  const Val* unroundedNarrowSource(const Val* in, DataType out,
                                   std::vector<UnaryOpType>* signOps) const;
  // A pad's value at idx: the input inside a branch on its range (or
  // predicated), the pad value outside.
  Value padded(const PadOp* p, DataType out, const Index& idx);
  // Whether idx is inside p's input on every padded dim: the condition
  // (empty: no dim is padded) and the input's index, into cond and in;
  // false where a padded dim's lanes are constants (laneSelectedPad).
  bool padRange(const PadOp* p, const Index& idx, std::string* cond,
                Index* in) const;
  // An expression of some type, for one lane u where `lane`.
  struct Expression {
    std::string text;
    bool lane = false;
  };
  // inTv at `in` where `cond` holds, else outside(predicated) (already of
  // type out): a branch on cond (outside computed in the else branch), or,
  // where inTv is computedWithoutBranch, its loads predicated on cond and a
  // select (outside computed before it). A pad, and a sum of pads.
  Value inRangeElse(const std::string& cond, const TensorView* inTv,
                    const Index& in, DataType out, bool lane,
                    const std::function<Expression(bool predicated)>& outside);

  // Adds the generator folds (value_builder_folds.cpp, options_.foldAdds).
  // torch.compile's RoPE backwards add zeros (the slice_backward of an
  // empty slice) and sum pads that do not overlap (slice_backward of a
  // partial rotary's two parts); computed as written, each element paid a
  // conversion, an add and a rounding for nothing. Both folds are exact
  // but for the sign of a zero: x + 0 is +0 where x is -0, the fold keeps
  // -0 (the two compare equal).
  // Whether v is zero everywhere: a constant 0, a pad of an empty tensor
  // by 0, a full of 0, or one moved, cast or negated (never through
  // float8_e8m0fnu, which has no zero).
  bool isKnownZero(const Val* v) const;
  // The operand an add of a known zero (or a subtraction of one) keeps;
  // nullptr when b is not such an op.
  const Val* zeroAddOperand(const BinaryOp* b) const;
  // An add of two pads by 0 of floating inputs whose ranges do not overlap
  // on their one padded dim (each pad's input widened exactly to the
  // add's type); `narrowed`: read once, by a cast, so the cast may select
  // the pads' inputs at its own type. nullopt when b is not one.
  struct DisjointPads {
    const PadOp* first;
    const PadOp* second;
  };
  std::optional<DisjointPads> disjointPadSum(const BinaryOp* b,
                                             bool narrowed) const;
  // Its value at idx in type out: in the first pad's range its input,
  // else the second pad's value; nullopt where a lane table splits a pad
  // (the add is then computed as written).
  std::optional<Value> padSumValue(const DisjointPads& pads, DataType out,
                                   const Index& idx);
  // The sum of disjoint pads a cast reads as `in`, read by nothing else
  // (disjointPadSum's narrowed case); nullopt when in is not one.
  std::optional<DisjointPads> castPadSum(const Val* in) const;
  // That sum as a DisjointPads select at the cast's type out.
  std::optional<Value> narrowedPadSum(const Val* in, DataType out,
                                      const Index& idx);
  // A cat's value at idx: one branch per part, a sole non-empty part
  // moved, or predicated parts without branches.
  Value concatenated(const CatOp* c, DataType out, const Index& idx);
  // A value at an index that compute() will ask for.
  struct Request {
    const Val* v;
    Index idx;
  };
  // Ops that only move elements: their operand at remappedIndex() is their
  // value (value_builder_operands.cpp).
  static bool isRemap(const Expr* e);
  Index remappedIndex(const Expr* e, const Val* v, const Index& idx);
  Index slicedIndex(const SliceOp* s, const Index& idx) const;
  // Where a gather reads its index tensor for output index idx
  // (value_builder_gather.cpp).
  Index gatherIndexAt(const GatherOp* g, const Index& idx) const;
  // A gather's value at an output index: the lookup loaded at the index
  // value inside a bounds check, 0 outside.
  Value gathered(const GatherOp* g, const Index& idx);
  // The same when the index value differs between lanes: one load per
  // lane, each under its own check (inBounds is written for lane u).
  Value gatherLanes(const TensorView* lookup, const Index& from, size_t dim,
                    const Value& k, const std::string& inBounds,
                    const std::string& zero);
  // A random op's element at idx (value_builder_exprs.cpp).
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
  // The loads of loadEagerInputsFirst, wherever the builder is (a
  // persistent row kernel issues a row's loads before its first block
  // reduction: row_kernel_generator.cpp).
  void loadEagerInputs(const std::vector<Request>& roots);
  // Computes v's eager operands, theirs first, with an explicit stack, so
  // compute(v) finds them cached: the generator's recursion depth does not
  // grow with chains of elementwise ops.
  void computeOperandsFirst(const Val* v, const Index& idx);
  Value scalar(const Val* v);
  Value operand(const Val* v, const Index& idx);
  Index operandIndex(const TensorView* tv, const Index& idx) const;
  Value emit(DataType t, bool lane, const std::string& expr);
  Value declare(DataType t, bool lane);
  // An index worth a name: `indexType_ jN = expr;` once per scope (atoms
  // are their own names); emitNamedIndex names any text of index type.
  IndexExpr emitIndex(const IndexExpr& expr);
  IndexExpr emitNamedIndex(const std::string& text);
  // `indexType_ name = value;`, the name as an index.
  IndexExpr defineIndex(const std::string& name, const IndexExpr& value);
  Value load(const TensorView* tv, const Index& idx);
  // Where idx lies in a tensor of `strides` (elements): the offset of lane
  // 0's element (lane terms at their e), what consecutive lanes step by
  // (0: one element for all; -1: a lane table), and whether the other
  // terms keep a vector aligned. load and storeAt address alike.
  struct Address {
    IndexExpr offset;
    int64_t laneStride = 0;
    bool aligned = true;
  };
  Address addressOf(const Index& idx,
                    const std::vector<int64_t>& strides) const;
  // An input the strategy has staged elsewhere (a transpose's shared
  // memory tile): its value at idx, or nullopt to load it from memory.
  virtual std::optional<Value> stagedLoad(const TensorView* /*tv*/,
                                          const Index& /*idx*/) {
    return std::nullopt;
  }
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
  // A var_mean: two passes (the mean, then squared deviations).
  Value varMean(const VarMeanOp* e, const Val* v, const Index& idx);
  // Sums (and other reductions) of one loop: `group` share the loop of
  // the first's input and reduced dims, each its own accumulator; returns
  // v's value and caches the others' at idx (serial_reduction_loops.cpp).
  Value reduceTogether(const std::vector<const ReductionOp*>& group,
                       const Val* v, const Index& idx);
  // reduceTogether's accumulators: their types and values; into[k] is the
  // member whose accumulator member k adds to (itself, or its chain
  // partner's in the same loop); chained[k]: k's accumulator holds a
  // chain's whole sum (started from its partner's partial, or shared).
  struct GroupAccumulators {
    std::vector<DataType> types;
    std::vector<Value> sums;
    std::vector<size_t> into;
    std::vector<bool> chained;
  };
  GroupAccumulators startAccumulators(
      const std::vector<const ReductionOp*>& group, const Index& idx,
      bool split);
  // After the loop: each sum combined over a slot's lanes and its value
  // (v's returned, the others cached at idx); a chain's first sum left as
  // a partial for its partner.
  Value finishAccumulators(const std::vector<const ReductionOp*>& group,
                           const GroupAccumulators& a, const Val* v,
                           const Index& idx, bool split);
  // Loop outputs (scheduler/loop_outputs.h). The family's planned ones,
  // each written once: by the loop of its reduction computed at the slot's
  // own index (slotIndexOf_) at the top level of the slot's code.
  struct PendingLoopOutput {
    LoopOutputPlan planned;
    bool written = false;
  };
  void startLoopOutputs(const std::vector<LoopOutputPlan>& planned,
                        std::function<Index(const Val*)> slotIndexOf);
  // Whether a reduction of `group` has a loop output still to write and
  // its output v at idx is the slot's own, at the top level.
  bool atSlotTopLevel(const std::vector<const ReductionOp*>& group,
                      const Val* v, const Index& idx) const;
  // Inside the loop of `r` (its input at inIdx): r's loop outputs stored.
  // `everyLane`: every lane of a group runs all iterations (no split), so
  // the first lane stores.
  void writeLoopOutputs(const ReductionOp* r, const Index& inIdx,
                        bool everyLane);
  void requireLoopOutputsWritten() const;
  // The index of a view chain's result at its source's index idx.
  Index viewedIndex(const std::vector<const Expr*>& views, Index idx);
  // Stores x (lane or not) into output `o` (dense) at idx; `guard` is
  // written before the statement.
  void storeAt(size_t o, const Index& idx, Value x, const std::string& guard);
  // With several threads per slot: `acc` (of reduction op `op`) combined
  // over the slot's group of lanes, every lane holding the result.
  void combineAcrossSlotThreads(const Value& acc, ReductionOpType op);
  // Shared reduction loops (value_builder_shared_loops.cpp).
  // Records the reductions the family's outputs reach through elementwise
  // ops of their own shape (so at the outputs' index), with that index.
  void findSameIndexReductions(const std::vector<Request>& outputs);
  // red first, then the reductions at idx that can share its loop: not yet
  // computed, same input shape, reduced dims and output shape, neither
  // depending on another of the group, only at a slot's top level (not in
  // a branch, a loop or under a load predicate).
  std::vector<const ReductionOp*> sharedLoopGroup(const ReductionOp* red,
                                                  const Index& idx);
  // Chained sums (value_builder_chained_sums.cpp). An add of two sums at
  // the same index, each read by nothing else, in their accumulator type
  // (no rounding between), read by no reduction (so computed where no
  // loop is open): the second sum's accumulators start from the first's
  // partial sums (before a slot group combines them), so one
  // accumulator per lane lives through both loops and the add's value is
  // the second's result. Sums of one shared loop that are chained share
  // one accumulator. Qwen2.5's cos and sin gradients add sums over the
  // query heads and over the kv groups: keeping the first sums through
  // the second loop took 134 registers a thread, chained 96 (ptxas,
  // sm_90; 3 -> 5 blocks of 128 per SM). NVFUSER_DISABLE=chained_sums.
  // The add may read each sum through views whose index maps are the same
  // on both sides (broadcast, squeeze, set, reshape, permute: autograd's
  // graph adds keepdim sums), each view read once.
  struct SumChain {
    const Expr* add = nullptr;
    const ReductionOp* partner = nullptr;
    // From the add's operand down to this sum's output; empty when the
    // add reads the sum itself.
    std::vector<const Expr*> views;
  };
  void findChainedSums();
  const SumChain* chainOf(const ReductionOp* r) const;
  bool isChainedAdd(const Expr* e) const { return chainedAdds_.count(e) > 0; }
  // The chained add's value at idx: emits both sums' loops (each with the
  // reductions that share it) at the sums' index unless already emitted.
  Value chainedSum(const Expr* add, const Index& idx);
  // A chain's value (its add's) at its sums' index idx.
  std::string chainKey(const Expr* add, const Index& idx) const {
    return "chain:" + valueKey(add->output(0), idx);
  }
  // A sum whose chain partner is not emitted yet leaves its accumulator
  // under this key, uncombined.
  std::string partialKey(const ReductionOp* r, const Index& idx) const {
    return "partial:" + valueKey(r->output(0), idx);
  }
  // Whether r's value at idx is emitted or pending as a chain's partial.
  bool reductionEmitted(const ReductionOp* r, const Index& idx) const;
  // The accumulator of a sum chained to a partial (value p, split over a
  // slot's lanes or not), before a loop that is split or not.
  Value accumulatorFromPartial(const Value& p, bool pSplit, bool split,
                               DataType acc, bool lane);
  // Whether openReductionLoops splits a loop over `in`'s reduced `axes`
  // over a slot's threads here.
  bool splitsOverSlotThreads(const TensorView* in,
                             const std::vector<int64_t>& axes) const;
  // Reductions upstream of v's definition, walking at most
  // kMaxSharedLoopWalk values; nullopt past that.
  std::optional<std::set<const Expr*>> reductionsUpstream(const Val* v) const;
  static constexpr size_t kMaxSharedLoopWalk = 256;
  static constexpr size_t kMaxSharedLoop = 8;
  // Opens one loop per reduced dim of `in` and returns the input's index
  // inside them; closeReductionLoops closes them. With several threads per
  // slot, the outermost loops (none open around them) take every K-th
  // element of their longest reduced dim, from the lane's nvf_k; whether
  // they did goes to splitOverSlotThreads (false where no loop opened).
  Index openReductionLoops(const TensorView* in,
                           const std::vector<int64_t>& axes, const Index& idx,
                           bool* splitOverSlotThreads = nullptr);
  void closeReductionLoops(const TensorView* in,
                           const std::vector<int64_t>& axes);
  Index reshapeIndex(const std::vector<int64_t>& outShape,
                     const std::vector<int64_t>& inShape, const Index& idx);
  Ix linearize(const std::vector<int64_t>& shape, const Index& idx,
               size_t begin, size_t end);
  // Requires that a lane-dependent boundary at `at` keeps whole vectors on
  // one side (of term i, when given: a lane table's own alignment).
  void requireAligned(int64_t at, const char* what) const;
  void requireAligned(const Ix& i, int64_t at, const char* what) const;
  // Lane u's value of term i (u the unrolled lane loop's variable).
  static IndexExpr laneIndex(const Ix& i) {
    if (isTable(i)) {
      return i.e + laneOffsetExpr(i.offsets);
    }
    return i.lane ? i.e + IndexExpr::named("u") : i.e;
  }

  // Lane tables (value_builder_lane_tables.cpp).
  // The term of lane values e + offsets[u]: a uniform term when every
  // offset is the same, a plain lane term when they count up from an
  // aligned e, else a table.
  Ix laneTerm(const IndexExpr& e, std::vector<int64_t> offsets,
              int64_t align) const;
  // Each lane's offset from e (0..V-1 for a lane term, zeros for a uniform
  // one), and what e is a multiple of (0: e is the constant 0).
  std::vector<int64_t> laneOffsets(const Ix& i) const;
  int64_t termAlign(const Ix& i) const;
  // Input dim ((linear / stride) % n, no % n when outermost) of a reshape
  // whose output index `linear` (emitted as l) has lanes that the old
  // rule could not keep consecutive; throws NotVectorizable when neither
  // a uniform term nor a table describes it.
  Ix splitLaneTerm(const Ix& linear, const IndexExpr& l, int64_t stride,
                   int64_t n, bool outermost);
  // linearize() of dims holding a lane table.
  Ix linearizeLaneTables(const std::vector<int64_t>& shape, const Index& idx,
                         size_t begin, size_t end);
  static bool hasTable(const Index& idx);
  // Lane constants o mapped to o * scale + add (a slice's step and start,
  // a cat part's offset).
  Ix shiftedLaneConstants(const Ix& i, int64_t scale, int64_t add) const;
  // The sum of index terms, each times its stride: e, per-lane offsets and
  // what e is a multiple of. Constants below `foldBelow` join every lane's
  // offset, larger ones join e.
  struct LaneSum {
    IndexExpr e;
    std::vector<int64_t> offsets;
    int64_t align = 0;
  };
  void addTerm(LaneSum& sum, const Ix& t, int64_t stride,
               int64_t foldBelow) const;
  // A load at an index with a lane table: one aligned vector load that
  // covers every lane's element, each lane picking its own (the x[2k] and
  // x[2k+1] of an interleaved RoPE), else one load per lane.
  Value loadLaneTable(const TensorView* tv, const Index& idx);
  // A cat or pad whose boundary splits the vector at lanes known when the
  // kernel is generated (an interleaved RoPE's cat of [.., D / 2, 1]
  // parts): each side computed for every lane, at indices its own lanes
  // or (for the others) its first lane hold, then one select per lane.
  Value laneSelectedCat(const CatOp* c, DataType out, const Index& idx);
  Value laneSelectedPad(const PadOp* p, DataType out, const Index& idx,
                        size_t dim);
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
  KernelCodegenOptions options_;
  // "unsigned" when every tensor, every input's farthest element and all
  // families' slots together fit under 2^31 - 1024 (chooseIndexType).
  std::string indexType_ = "int64_t";
  std::ostringstream body_;
  int indent_ = 6;
  int counter_ = 0;
  int64_t lanes_ = 1;  // vector width of the family being generated
  std::vector<std::map<std::string, Value>> scopes_;
  std::map<const Val*, std::string> paramName_;
  std::map<const Val*, size_t> inputIndex_;
  // Loads emitted while this is non-empty happen only where it holds
  // (predicatedValue).
  std::string loadPredicate_;
  int reductionLoops_ = 0;  // serial reduction loops open around the code
  // Threads that share each slot of the family being generated (nvf_k is
  // the lane's place in the group, nvf_group the group's lane mask).
  int64_t slotThreads_ = 1;
  // findSameIndexReductions: in expr order, with the key of their index.
  std::vector<std::pair<const ReductionOp*, std::string>> sameIndexReductions_;
  // findChainedSums: each chained sum's add and partner; the adds.
  std::map<const ReductionOp*, SumChain> sumChains_;
  // Each chained add and its first operand's sum.
  std::map<const Expr*, const ReductionOp*> chainedAdds_;
  bool chainsFound_ = false;
  std::vector<PendingLoopOutput> loopOutputs_;
  std::function<Index(const Val*)> slotIndexOf_;
  // Inputs read once per element (a split sum's): their vector loads skip
  // L1.
  std::set<const TensorView*> streamed_;
};

// The generator of plan.strategy (kernel_codegen.cpp).
std::unique_ptr<KernelValueBuilder> makeKernelGenerator(
    const Fusion& fusion, const KernelPlan& plan,
    const std::vector<TensorLayout>& layouts, KernelCodegenOptions options);

}  // namespace codegen_detail
}  // namespace nvfuser
