#include "segmenter/segmented_fusion.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "analysis/tensor_shape.h"
#include "ir/exprs.h"
#include "scheduler/scheduler.h"

namespace nvfuser {

namespace {

// Whether g only views tv from one of its inputs: a no_op group's
// outputs, and the views an expr_eval group makes of its inputs (a
// weight's transpose). A loop back through the group's view ops.
bool isViewOfAnInput(const TensorView* tv, const SegmentedGroup& g) {
  if (g.scheduler == SchedulerType::NoOp) {
    return true;
  }
  if (g.scheduler != SchedulerType::ExprEval) {
    return false;
  }
  const Val* v = tv;
  while (std::find(g.inputs.begin(), g.inputs.end(), v) == g.inputs.end()) {
    const Expr* def = v->definition();
    if (def == nullptr || !isViewExpr(def) ||
        std::find(g.body.begin(), g.body.end(), def) == g.body.end()) {
      return false;
    }
    v = def->input(0);
  }
  return true;
}
}  // namespace

int64_t SegmentedFusion::boundaryBytes() const {
  std::map<const TensorView*, const SegmentedGroup*> producer;
  for (const SegmentedGroup& g : groups_) {
    for (const TensorView* o : g.outputs) {
      producer[o] = &g;
    }
  }
  int64_t bytes = 0;
  std::map<const TensorView*, int64_t> readers;
  for (const SegmentedGroup& g : groups_) {
    for (const TensorView* in : g.inputs) {
      auto it = producer.find(in);
      if (it != producer.end() && !isViewOfAnInput(in, *it->second)) {
        readers[in] += 1;
      }
    }
  }
  for (const auto& [tv, n] : readers) {
    int64_t b = denseBytes(tv);
    bytes += b * n + (fusion_->isOutput(tv) ? 0 : b);
  }
  return bytes;
}

namespace {
std::string refs(const std::vector<const TensorView*>& tvs) {
  std::string s;
  for (const TensorView* tv : tvs) {
    s += (s.empty() ? "" : ", ") + tv->ref();
  }
  return s;
}
}  // namespace

std::string SegmentedFusion::toString() const {
  std::ostringstream os;
  os << "Segmented_Fusion{ groups: " << groups_.size()
     << ", input forwarding: " << nvfuser::toString(policy_)
     << ", boundary bytes: " << boundaryBytes() << "\n";
  for (const SegmentedGroup& g : groups_) {
    os << "g{(" << nvfuser::toString(g.scheduler)
       << (g.horizontal ? ", horizontal" : "") << ")\n";
    os << "group id: " << g.id << "\n";
    os << "inputs: " << refs(g.inputs) << "\n";
    os << "outputs: " << refs(g.outputs) << "\n";
    if (!g.prologue.empty()) {
      os << "forwarded prologue:\n";
      for (const Expr* e : g.prologue) {
        os << "  [forwarded] " << e->toString() << "\n";
      }
    }
    for (const Expr* e : g.body) {
      os << e->toString() << "\n";
    }
    os << "}\n";
  }
  os << "} //Segmented_Fusion\n";
  return os.str();
}

std::string SegmentedFusion::toDot() const {
  std::ostringstream os;
  os << "digraph SegmentedFusion {\n  compound=true;\n  node [shape=box];\n";
  auto node = [](const Expr* e, const SegmentedGroup& g) {
    return "e" + std::to_string(e->position()) + "_g" + std::to_string(g.id);
  };
  // The body expr (of any group) that produces each value, so each edge
  // costs a lookup, not a scan of every group (quadratic at 100k ops).
  std::map<const Val*, std::string> producedBy;
  for (const SegmentedGroup& g : groups_) {
    os << "  subgraph cluster_" << g.id << " {\n    label=\"g" << g.id << " ("
       << nvfuser::toString(g.scheduler) << ")\";\n";
    for (const Expr* e : g.prologue) {
      os << "    " << node(e, g) << " [label=\"" << e->opName() << " -> "
         << e->output(0)->ref() << "\", style=dashed];\n";
    }
    for (const Expr* e : g.body) {
      os << "    " << node(e, g) << " [label=\"" << e->opName() << " -> "
         << e->output(0)->ref() << "\"];\n";
      producedBy[e->output(0)] = node(e, g);
    }
    os << "  }\n";
  }
  // Edges: inside a group from its own producer, else from the producing
  // group's node (or the fusion input).
  for (const SegmentedGroup& g : groups_) {
    std::map<const Val*, std::string> local;
    for (const Expr* e : g.prologue) {
      local[e->output(0)] = node(e, g);
    }
    for (const Expr* e : g.body) {
      for (const Val* o : e->outputs()) {
        local[o] = node(e, g);
      }
    }
    auto emit = [&](const Expr* e) {
      for (const Val* in : e->inputs()) {
        if (!in->isTensor()) {
          continue;
        }
        std::string from;
        auto it = local.find(in);
        auto producer = producedBy.find(in);
        if (it != local.end()) {
          from = it->second;
        } else if (producer != producedBy.end()) {
          from = producer->second;
        } else {
          from = "in_" + in->ref();
        }
        os << "  " << from << " -> " << node(e, g) << " [label=\"" << in->ref()
           << "\"];\n";
      }
    };
    for (const Expr* e : g.prologue) {
      emit(e);
    }
    for (const Expr* e : g.body) {
      emit(e);
    }
  }
  os << "}\n";
  return os.str();
}

}  // namespace nvfuser
