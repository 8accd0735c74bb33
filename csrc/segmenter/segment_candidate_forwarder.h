// Input forwarding: finds chains of trivial single-input ops that start at
// fusion inputs or factories, sets them aside while segments form, and hands
// each group the prologue it must replicate. Consumers that cannot take a
// prologue are backed off to read a materialized copy.
#pragma once

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/fusion.h"
#include "segmenter/forwarding_policy.h"
#include "segmenter/segmenter_log.h"

namespace nvfuser {

struct ForwardedChain {
  const Val* seed = nullptr;       // fusion input or factory output
  std::vector<const Expr*> exprs;  // in order; a factory expr comes first
  const TensorView* forwarded = nullptr;  // the last tensor of the chain
  std::vector<const Expr*> backedOffConsumers;
};

class SegmentCandidateForwarder {
 public:
  SegmentCandidateForwarder(const Fusion& fusion, ForwardingPolicy policy,
                            SegmenterLog* log);

  const std::vector<ForwardedChain>& chains() const { return chains_; }
  const std::unordered_set<const Expr*>& forwardedExprs() const {
    return forwarded_;
  }
  bool isForwarded(const Expr* e) const { return forwarded_.count(e) > 0; }

  // The forwarded exprs the given body reads through, sorted by position.
  // Backed-off consumers and forwarded exprs themselves pull no prologue.
  std::vector<const Expr*> prologueFor(
      const std::vector<const Expr*>& body) const;

  // Makes consumer read a materialized copy of its chain instead.
  void backOff(const Expr* consumer, const std::string& reason);
  bool isBackedOff(const Expr* consumer) const {
    return backedOff_.count(consumer) > 0;
  }

 private:
  void findChainFrom(const Val* seed, const Expr* factory);

  const Fusion& fusion_;
  ForwardingPolicy policy_;
  SegmenterLog* log_;
  std::vector<ForwardedChain> chains_;
  std::unordered_set<const Expr*> forwarded_;
  // Every tensor a chain produces -> its chain index.
  std::unordered_map<const Val*, size_t> chainOf_;
  std::unordered_set<const Expr*> backedOff_;
};

}  // namespace nvfuser
