// nvfuser._C: the extension module. Errors thrown by the compiler become the
// Python exception that matches their kind.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "compiler/nvrtc_compiler.h"
#include "exceptions.h"
#include "ir/dtype.h"
#include "options.h"
#include "runtime/torch_operators.h"

namespace py = pybind11;

namespace {
// nvfuser::Error kinds as the matching Python exceptions.
void registerErrorTranslator() {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) {
        std::rethrow_exception(p);
      }
    } catch (const nvfuser::Error& e) {
      switch (e.kind()) {
        case nvfuser::ErrorKind::Value:
          PyErr_SetString(PyExc_ValueError, e.what());
          return;
        case nvfuser::ErrorKind::Type:
          PyErr_SetString(PyExc_TypeError, e.what());
          return;
        case nvfuser::ErrorKind::NotImplemented:
          PyErr_SetString(PyExc_NotImplementedError, e.what());
          return;
        case nvfuser::ErrorKind::ZeroDivision:
          PyErr_SetString(PyExc_ZeroDivisionError, e.what());
          return;
        case nvfuser::ErrorKind::Index:
          PyErr_SetString(PyExc_IndexError, e.what());
          return;
        case nvfuser::ErrorKind::Runtime:
        case nvfuser::ErrorKind::Internal:
          PyErr_SetString(PyExc_RuntimeError, e.what());
          return;
      }
    }
  });
}

void bindDataTypes(py::module_& m) {
  using nvfuser::DataType;
  py::enum_<DataType>(m, "DataType")
      .value("Double", DataType::Double)
      .value("Float", DataType::Float)
      .value("Half", DataType::Half)
      .value("BFloat16", DataType::BFloat16)
      .value("Int", DataType::Int)
      .value("Int32", DataType::Int32)
      .value("Bool", DataType::Bool)
      .value("ComplexFloat", DataType::ComplexFloat)
      .value("ComplexDouble", DataType::ComplexDouble)
      .value("Float8_e4m3fn", DataType::Float8_e4m3fn)
      .value("Float8_e5m2", DataType::Float8_e5m2)
      .value("Float8_e8m0fnu", DataType::Float8_e8m0fnu)
      .value("Null", DataType::Null);
}

// Option parsing and compile statistics, as the compiler sees them.
void bindOptionsAndStats(py::module_& m) {
  m.def("dump_enabled", &nvfuser::Options::dumpEnabled,
        "Whether NVFUSER_DUMP names this option, parsed as the compiler "
        "parses it; a ValueError for unknown names in either");
  m.def("disabled", &nvfuser::Options::disabledByEnvironment,
        "Whether NVFUSER_DISABLE names this option, parsed as the compiler "
        "parses it; a ValueError for unknown names in either");

  // For docs/api.md and its test: which names do something, which are
  // nvFuser's accepted as no-ops.
  m.def(
      "option_names",
      [](const std::string& group, bool nvfuser_noops) {
        using nvfuser::OptionGroup;
        OptionGroup g = group == "dump"     ? OptionGroup::Dump
                        : group == "enable" ? OptionGroup::Enable
                                            : OptionGroup::Disable;
        NVF_CHECK(group == "dump" || group == "enable" || group == "disable",
                  "option group must be dump, enable or disable, not '", group,
                  "'");
        return nvfuser_noops ? nvfuser::Options::nvfuserNames(g)
                             : nvfuser::Options::validNames(g);
      },
      py::arg("group"), py::arg("nvfuser_noops") = false);

  m.def(
      "kernel_compile_stats",
      [] {
        nvfuser::KernelCompileStats s = nvfuser::kernelCompileStats();
        py::dict d;
        d["nvrtc_compiles"] = s.nvrtcCompiles;
        d["memory_hits"] = s.memoryHits;
        d["disk_hits"] = s.diskHits;
        return d;
      },
      "This process' kernel compiles: NVRTC runs and cache hits");
}
}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "nvfuser-lite compiler core";
  registerErrorTranslator();
  // torch.ops.nvfuser.* exist once nvfuser is imported (repro scripts and
  // printed definitions call them by name).
  nvfuser::linkTorchOperators();
  bindDataTypes(m);
  bindOptionsAndStats(m);
  nvfuser::python::bindFusion(m);
  py::module_ ops = m.def_submodule("ops", "op builders");
  nvfuser::python::bindOps(ops);
  nvfuser::python::bindAtenCall(ops);
}
