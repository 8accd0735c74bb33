// Helpers for segmentation tests: policies and compact group descriptions.
#pragma once

#include <string>
#include <vector>

#include "ir/exprs.h"
#include "options.h"
#include "segmenter/segment_candidate_finder.h"

namespace nvfuser {

// Occurrences of `what` in `s` (generated code checks).
inline size_t countOf(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos;
       p = s.find(what, p + 1)) {
    ++n;
  }
  return n;
}

// Vector loads in generated code, streamed (read-once) or not.
inline size_t vectorLoads(const std::string& code) {
  return countOf(code, "nvf_vload(v") + countOf(code, "nvf_vload_stream(v") +
         countOf(code, "nvf_vload_if(v");
}

// Options for a forwarding policy; horizontal fusion stays on unless
// `horizontal` is false (to look at forwarding alone).
inline Options policyOptions(ForwardingPolicy p, bool horizontal = true) {
  std::vector<std::string> disable;
  if (p == ForwardingPolicy::Off) {
    disable.push_back("input_forwarding");
  } else if (p == ForwardingPolicy::UnaryOnly) {
    disable.push_back("extended_input_forwarding");
  }
  if (!horizontal) {
    disable.push_back("horizontal_fusion");
  }
  return Options().withOverrides({}, disable);
}

// "pointwise: add [prologue: cast exp cast sin]"
inline std::string describe(const SegmentedGroup& g) {
  std::string s = std::string(toString(g.scheduler)) + ":";
  for (const Expr* e : g.body) {
    s += " " + e->opName();
  }
  if (!g.prologue.empty()) {
    s += " [prologue:";
    for (const Expr* e : g.prologue) {
      s += " " + e->opName();
    }
    s += "]";
  }
  return s;
}

inline std::vector<std::string> describe(const SegmentedFusion& sf) {
  std::vector<std::string> out;
  for (const SegmentedGroup& g : sf.groups()) {
    out.push_back(describe(g));
  }
  return out;
}

// A view of every expr of f, no prologue.
inline SegmentView wholeView(const Fusion& f) {
  std::vector<const Expr*> body(f.exprs().begin(), f.exprs().end());
  return SegmentView(f, body, {}, nullptr);
}

// True when some group reads a tensor another group produced.
inline bool readsIntermediate(const SegmentedFusion& sf, const TensorView* tv) {
  for (const SegmentedGroup& g : sf.groups()) {
    for (const TensorView* in : g.inputs) {
      if (in == tv) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace nvfuser
