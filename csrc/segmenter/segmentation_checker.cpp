#include "segmenter/segmentation_checker.h"

#include <map>
#include <set>
#include <unordered_set>

#include "scheduler/scheduler_registry.h"

namespace nvfuser {

std::vector<std::string> checkSegmentation(const SegmentedFusion& sf) {
  std::vector<std::string> problems;
  const Fusion& f = sf.completeFusion();
  std::unordered_set<const Expr*> forwarded;
  std::set<const TensorView*> backedOffTensors;
  std::set<const Expr*> backedOffConsumers;
  for (const ForwardedChain& c : sf.chains()) {
    forwarded.insert(c.exprs.begin(), c.exprs.end());
    if (!c.backedOffConsumers.empty()) {
      backedOffTensors.insert(c.forwarded);
      backedOffConsumers.insert(c.backedOffConsumers.begin(),
                                c.backedOffConsumers.end());
    }
  }
  std::map<const Expr*, int> bodyCount;
  std::map<const Val*, size_t> producerGroup;
  for (size_t g = 0; g < sf.groups().size(); ++g) {
    for (const Expr* e : sf.groups()[g].body) {
      bodyCount[e] += 1;
      for (const Val* o : e->outputs()) {
        producerGroup[o] = g;
      }
    }
  }
  for (const Expr* e : f.liveExprs()) {
    bool tensorOut = false;
    for (const Val* o : e->outputs()) {
      tensorOut = tensorOut || o->isTensor();
    }
    if (!tensorOut) {
      continue;
    }
    int n = bodyCount.count(e) ? bodyCount[e] : 0;
    if (forwarded.count(e)) {
      if (n > 1) {
        problems.push_back("forwarded " + e->opName() + " " +
                           e->output(0)->ref() + " is in " + std::to_string(n) +
                           " group bodies");
      }
    } else if (n != 1) {
      problems.push_back(e->opName() + " " + e->output(0)->ref() + " is in " +
                         std::to_string(n) + " groups");
    }
  }
  SchedulerRegistry registry;
  for (size_t g = 0; g < sf.groups().size(); ++g) {
    const SegmentedGroup& group = sf.groups()[g];
    for (const TensorView* in : group.inputs) {
      auto it = producerGroup.find(in);
      if (it != producerGroup.end() && it->second >= g) {
        problems.push_back("group g" + std::to_string(g) + " reads " +
                           in->ref() + " from g" + std::to_string(it->second) +
                           ", which runs later (not topological)");
      }
      bool isForwardedTensor =
          in->definition() != nullptr && forwarded.count(in->definition());
      if (isForwardedTensor && !backedOffTensors.count(in)) {
        problems.push_back("forwarded tensor " + in->ref() + " crosses into g" +
                           std::to_string(g));
      }
    }
    SegmentView view(f, group.body, group.prologue, &forwarded,
                     group.horizontal);
    Decision d = registry.canSchedule(group.scheduler, view);
    if (!d) {
      problems.push_back("group g" + std::to_string(g) + " rejected by " +
                         toString(group.scheduler) + ": " + d.reason());
    }
  }
  return problems;
}

}  // namespace nvfuser
