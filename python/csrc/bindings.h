// Shared declarations of the nvfuser._C bindings.
#pragma once

#include <pybind11/pybind11.h>

namespace nvfuser::python {

void bindFusion(pybind11::module_& m);
void bindOps(pybind11::module_& m);

}  // namespace nvfuser::python
