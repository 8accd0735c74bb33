// Each segment of a segmentation as a definition of its own, for
// FusionDefinition.segment: the script that defines it, the layouts of its
// inputs, and which values of the complete fusion it reads and writes.
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "bindings.h"
#include "ir/python_printer.h"
#include "segmenter/segment_extractor.h"

namespace py = pybind11;

namespace nvfuser::python {

namespace {

// What define_tensor needs to take this input again: static sizes (the
// segments of a concrete fusion have them) and, per dim, whether it is an
// iteration, broadcast or expanded broadcast dim.
py::dict inputLayout(const Val* v) {
  py::dict d;
  d["is_tensor"] = v->isTensor();
  if (!v->isTensor()) {
    return d;
  }
  const TensorView* tv = v->asTensor();
  std::vector<int64_t> shape;
  std::vector<std::string> kinds;
  for (const IterDomain& id : tv->noReductions()) {
    Extent e = tv->fusion()->canonical(id.logicalExtent());
    shape.push_back(e.isConst() ? e.value : -1);
    kinds.push_back(!id.isBroadcast() ? "iter"
                    : id.hasExpanded  ? "expanded"
                                      : "bcast");
  }
  d["shape"] = shape;
  d["kinds"] = kinds;
  d["is_cpu"] = tv->isCpuScalar();
  return d;
}

template <typename V>
py::list refs(const std::vector<V*>& vals) {
  py::list out;
  for (const Val* v : vals) {
    out.append(v->ref());
  }
  return out;
}

}  // namespace

py::dict segmentDefinitions(const SegmentedFusion& sf) {
  const Fusion& complete = sf.completeFusion();
  py::list segments;
  for (const SegmentedGroup& g : sf.groups()) {
    ExtractedSegment seg = extractSegment(g);
    py::list layouts;
    for (const Val* v : seg.fusion->inputs()) {
      layouts.append(inputLayout(v));
    }
    py::dict d;
    d["scheduler"] = toString(g.scheduler);
    d["script"] = fusionToPython(*seg.fusion);
    d["input_layouts"] = layouts;
    d["inputs"] = refs(seg.inputs);
    d["outputs"] = refs(seg.outputs);
    segments.append(d);
  }
  py::dict out;
  out["segments"] = segments;
  out["fusion_inputs"] = refs(complete.inputs());
  out["fusion_outputs"] = refs(complete.outputs());
  return out;
}

}  // namespace nvfuser::python
