// Shared declarations of the nvfuser._C bindings.
#pragma once

#include <pybind11/pybind11.h>

namespace nvfuser {
class SegmentedFusion;
}  // namespace nvfuser

namespace nvfuser::python {

void bindFusion(pybind11::module_& m);
void bindOps(pybind11::module_& m);
// fd.ops.aten_call's builder (the Python layer reads the schema).
void bindAtenCall(pybind11::module_& m);

// One dict per segment: its definition script, input layouts, and the
// complete fusion's values it reads and writes.
pybind11::dict segmentDefinitions(const SegmentedFusion& sf);

}  // namespace nvfuser::python
