#include "segmenter/segment_candidate_forwarder.h"

#include <algorithm>

#include "ir/exprs.h"
#include "scheduler/scheduler.h"

namespace nvfuser {

namespace {
bool feedsSegmentBoundary(const Val* v) {
  for (const Expr* u : v->uses()) {
    const auto* ls = exprAs<LoadStoreOp>(u);
    if (ls != nullptr && ls->op() == LoadStoreOpType::SegmenterSet) {
      return true;
    }
  }
  return false;
}
}  // namespace

SegmentCandidateForwarder::SegmentCandidateForwarder(const Fusion& fusion,
                                                     ForwardingPolicy policy,
                                                     SegmenterLog* log)
    : fusion_(fusion), policy_(policy), log_(log) {
  if (policy_ == ForwardingPolicy::Off) {
    log_->add("forwarding: disabled");
    return;
  }
  for (const Val* in : fusion_.inputs()) {
    if (in->isTensor()) {
      findChainFrom(in, nullptr);
    }
  }
  for (const Expr* e : fusion_.exprs()) {
    if (isForwardableFactory(e, policy_) && !fusion_.isOutput(e->output(0)) &&
        !feedsSegmentBoundary(e->output(0))) {
      findChainFrom(e->output(0), e);
    }
  }
}

void SegmentCandidateForwarder::findChainFrom(const Val* seed,
                                              const Expr* factory) {
  ForwardedChain chain;
  chain.seed = seed;
  if (factory != nullptr) {
    chain.exprs.push_back(factory);
  }
  const Val* v = seed;
  while (v->uses().size() == 1) {
    const Expr* u = v->uses()[0];
    Decision d = isForwardableOp(u, policy_);
    if (!d) {
      log_->add("forwarding: chain from " + seed->ref() + " stops at " +
                v->ref() + ": " + d.reason());
      break;
    }
    const Val* out = u->output(0);
    if (fusion_.isOutput(out)) {
      log_->add("forwarding: chain from " + seed->ref() + " stops before " +
                exprRef(u) + ": its output is a fusion output");
      break;
    }
    if (feedsSegmentBoundary(out)) {
      log_->add("forwarding: chain from " + seed->ref() + " stops before " +
                exprRef(u) + ": its output feeds a segment_set");
      break;
    }
    chain.exprs.push_back(u);
    v = out;
  }
  if (chain.exprs.empty() || !v->isTensor()) {
    return;
  }
  chain.forwarded = v->asTensor();
  std::string ops;
  for (const Expr* e : chain.exprs) {
    forwarded_.insert(e);
    chainOf_[e->output(0)] = chains_.size();
    ops += (ops.empty() ? "" : ", ") + exprRef(e);
  }
  log_->add("forwarding: " + chain.forwarded->ref() + " is forwarded from " +
            seed->ref() + " through [" + ops + "] into its " +
            std::to_string(v->uses().size()) + " consumer(s)");
  chains_.push_back(std::move(chain));
}

std::vector<const Expr*> SegmentCandidateForwarder::prologueFor(
    const std::vector<const Expr*>& body) const {
  std::vector<const Expr*> prologue;
  std::vector<bool> taken(chains_.size(), false);
  for (const Expr* e : body) {
    if (isForwarded(e) || isBackedOff(e)) {
      continue;
    }
    for (const Val* in : e->inputs()) {
      auto it = chainOf_.find(in);
      if (it == chainOf_.end() || taken[it->second]) {
        continue;
      }
      taken[it->second] = true;
      const auto& exprs = chains_[it->second].exprs;
      prologue.insert(prologue.end(), exprs.begin(), exprs.end());
    }
  }
  std::sort(prologue.begin(), prologue.end(), [](const Expr* a, const Expr* b) {
    return a->position() < b->position();
  });
  return prologue;
}

void SegmentCandidateForwarder::backOff(const Expr* consumer,
                                        const std::string& reason) {
  backedOff_.insert(consumer);
  for (const Val* in : consumer->inputs()) {
    auto it = chainOf_.find(in);
    if (it != chainOf_.end()) {
      chains_[it->second].backedOffConsumers.push_back(consumer);
      log_->add("forwarding: back-off: " + exprRef(consumer) +
                " reads a materialized " + in->ref() + " (" + reason + ")");
    }
  }
}

}  // namespace nvfuser
