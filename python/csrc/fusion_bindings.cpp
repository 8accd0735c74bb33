// Binds the Fusion being defined and its executor cache.
#include <pybind11/complex.h>
#include <pybind11/stl.h>
#include <torch/extension.h>

#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "bindings.h"
#include "exceptions.h"
#include "ir/fusion.h"
#include "ir/python_printer.h"
#include "ops/arith.h"
#include "ops/op_utils.h"
#include "runtime/fusion_executor_cache.h"
#include "runtime/loaded_modules.h"
#include "runtime/runtime_args.h"
#include "segmenter/segmented_fusion.h"

namespace py = pybind11;

namespace nvfuser::python {

namespace {

// The fusion under definition; after finalize() the executor cache owns it.
class PyFusion {
 public:
  PyFusion() : fusion_(std::make_unique<Fusion>()) {}

  Fusion& definingFusion() {
    NVF_CHECK_KIND(fusion_ != nullptr, Runtime,
                   "this FusionDefinition is already finalized; ops can only "
                   "be added inside its `with` block");
    return *fusion_;
  }
  const Fusion& fusion() const { return fusion_ ? *fusion_ : cache_->fusion(); }
  void finalize() {
    if (fusion_) {
      cache_ = std::make_unique<FusionExecutorCache>(std::move(fusion_));
    }
  }
  bool finalized() const { return cache_ != nullptr; }
  FusionExecutorCache& cache() {
    NVF_CHECK_KIND(cache_ != nullptr, Runtime,
                   "execute: the FusionDefinition is not finalized; leave its "
                   "`with` block before calling execute");
    return *cache_;
  }

 private:
  std::unique_ptr<Fusion> fusion_;
  std::unique_ptr<FusionExecutorCache> cache_;
};

// A Python int beyond int64 (pybind's cast fails with "Unable to cast
// Python instance"): a float for floating dtypes, as torch would take it,
// otherwise a ValueError naming the value.
ScalarValue bigIntValue(const py::handle& h, const std::string& what,
                        DataType dtype) {
  const std::string text = py::str(h);
  NVF_CHECK(isFloatingType(dtype), what, ": ", text,
            " is out of the int64 range");
  const double d = PyLong_AsDouble(h.ptr());
  if (d == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    NVF_THROW(Value, what, ": ", text, " is out of the range of ",
              toString(dtype));
  }
  return d;
}

// `dtype`: the dtype the value is for (Null when unknown); the kind of
// value is checked against it by checkScalarValue.
ScalarValue toScalarValue(const py::handle& h, const std::string& what,
                          DataType dtype) {
  if (py::isinstance<py::bool_>(h)) {
    return h.cast<bool>();
  }
  if (py::isinstance<py::int_>(h)) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
    if (overflow != 0) {
      return bigIntValue(h, what, dtype);
    }
    return static_cast<int64_t>(v);
  }
  if (py::isinstance<py::float_>(h)) {
    return h.cast<double>();
  }
  if (PyComplex_Check(h.ptr())) {
    return std::complex<double>(PyComplex_RealAsDouble(h.ptr()),
                                PyComplex_ImagAsDouble(h.ptr()));
  }
  NVF_THROW(Type, what, ": expected a Python bool, int, float or complex, got ",
            std::string(py::str(py::type::handle_of(h).attr("__name__"))));
}

// The dtype of fusion input i when it is a scalar, else Null.
DataType scalarInputType(const Fusion& f, size_t i) {
  return i < f.inputs().size() && !f.inputs()[i]->isTensor()
             ? f.inputs()[i]->dtype()
             : DataType::Null;
}

std::vector<RuntimeArg> toRuntimeArgs(const Fusion& f, const py::list& in) {
  std::vector<RuntimeArg> args;
  size_t i = 0;
  for (const py::handle& h : in) {
    auto typeName = [&h]() -> std::string {
      return py::str(py::type::handle_of(h).attr("__name__"));
    };
    if (THPVariable_Check(h.ptr())) {
      // Kernels read raw memory: a negative bit (x.conj().imag) is applied
      // first, so they see the values ATen would.
      args.push_back(
          RuntimeArg::fromTensor(THPVariable_Unpack(h.ptr()).resolve_neg()));
    } else if (h.is_none()) {
      NVF_THROW(Type, "execute: input ", i, " is None; expected ",
                i < f.inputs().size() && f.inputs()[i]->isTensor()
                    ? "a tensor"
                    : "a scalar");
    } else if (py::isinstance<py::bool_>(h) || py::isinstance<py::int_>(h) ||
               py::isinstance<py::float_>(h) || PyComplex_Check(h.ptr())) {
      const std::string what = "execute: input " + std::to_string(i);
      args.push_back(RuntimeArg::fromScalar(
          toScalarValue(h, what, scalarInputType(f, i)), typeName()));
    } else {
      NVF_THROW(Type, "execute: input ", i, " has unsupported type ",
                typeName(), "; expected a torch.Tensor or a Python number");
    }
    ++i;
  }
  return args;
}

// What every run-like call needs: the options for this call and the args.
struct CallSetup {
  Options options;
  std::vector<RuntimeArg> args;
};

CallSetup prepareCall(FusionExecutorCache& cache, const py::list& inputs,
                      const std::vector<std::string>& enable,
                      const std::vector<std::string>& disable) {
  CallSetup call{Options::fromEnvironment().withOverrides(enable, disable),
                 toRuntimeArgs(cache.fusion(), inputs)};
  checkArgs(cache.fusion(), call.args);
  return call;
}

py::list valRefs(const std::vector<const TensorView*>& tvs) {
  py::list out;
  for (const TensorView* tv : tvs) {
    out.append(tv->ref());
  }
  return out;
}

py::list exprNames(const std::vector<const Expr*>& exprs) {
  py::list out;
  for (const Expr* e : exprs) {
    out.append(e->opName());
  }
  return out;
}

py::list exprTexts(const std::vector<const Expr*>& exprs) {
  py::list out;
  for (const Expr* e : exprs) {
    out.append(e->toString());
  }
  return out;
}

// One dict per segment of the last execute, in run order.
py::dict describeSegmentation(const SegmentedFusion& sf) {
  py::list groups;
  for (const SegmentedGroup& g : sf.groups()) {
    py::dict d;
    d["id"] = g.id;
    d["scheduler"] = toString(g.scheduler);
    d["horizontal"] = g.horizontal;
    d["ops"] = exprNames(g.body);
    d["exprs"] = exprTexts(g.body);
    d["prologue"] = exprNames(g.prologue);
    d["prologue_exprs"] = exprTexts(g.prologue);
    d["inputs"] = valRefs(g.inputs);
    d["outputs"] = valRefs(g.outputs);
    groups.append(d);
  }
  py::list chains;
  for (const ForwardedChain& c : sf.chains()) {
    py::dict d;
    d["seed"] = c.seed->ref();
    d["forwarded"] = c.forwarded->ref();
    d["ops"] = exprNames(c.exprs);
    d["backed_off"] = exprNames(c.backedOffConsumers);
    chains.append(d);
  }
  py::dict out;
  out["groups"] = groups;
  out["forwarded_chains"] = chains;
  out["boundary_bytes"] = sf.boundaryBytes();
  out["policy"] = toString(sf.policy());
  out["log"] = sf.log();
  out["text"] = sf.toString();
  out["dot"] = sf.toDot();
  return out;
}

}  // namespace

namespace {
void bindVals(py::module_& m) {
  py::class_<Val, std::unique_ptr<Val, py::nodelete>>(m, "Val")
      .def_property_readonly("is_tensor", &Val::isTensor)
      .def_property_readonly("dtype", &Val::dtype)
      .def_property_readonly("name", &Val::ref)
      .def_property_readonly("ndim",
                             [](const Val& v) -> int64_t {
                               return v.isTensor() ? v.asTensor()->nDims() : 0;
                             })
      .def_property_readonly(
          "is_const",
          [](const Val& v) { return !v.isTensor() && v.asScalar()->isConst(); })
      // A constant's value as a Python bool, int, float or complex; None
      // otherwise.
      .def_property_readonly(
          "value",
          [](const Val& v) -> py::object {
            if (v.isTensor() || !v.asScalar()->isConst()) {
              return py::none();
            }
            return std::visit([](auto x) -> py::object { return py::cast(x); },
                              *v.asScalar()->value());
          })
      .def("fusion_id",
           [](const Val& v) { return reinterpret_cast<uintptr_t>(v.fusion()); })
      // Static sizes where known, None where symbolic (broadcast dims: 1).
      .def("shape",
           [](const Val& v) {
             std::vector<std::optional<int64_t>> out;
             if (!v.isTensor()) {
               return out;
             }
             const TensorView* tv = v.asTensor();
             for (const IterDomain& id : tv->noReductions()) {
               Extent e = tv->fusion()->canonical(id.logicalExtent());
               out.push_back(e.isConst() ? std::optional<int64_t>(e.value)
                                         : std::nullopt);
             }
             return out;
           })
      .def("__repr__", [](const Val& v) { return v.toString(); })
      .def("description", [](const Val& v) { return valDescription(&v); });

  py::class_<TensorView, Val, std::unique_ptr<TensorView, py::nodelete>>(
      m, "TensorView");
  py::class_<Scalar, Val, std::unique_ptr<Scalar, py::nodelete>>(m,
                                                                 "ScalarVal");
}

// Building a definition: its inputs, outputs and IR.
void bindDefinitionMethods(py::class_<PyFusion>& cls) {
  cls.def(py::init<>())
      .def(
          "define_tensor",
          [](PyFusion& self, const std::vector<int64_t>& shape,
             std::vector<std::optional<bool>> contiguity, DataType dtype,
             std::vector<int64_t> strideOrder, bool isCpu) -> Val* {
            return defineTensor(self.definingFusion(), shape, dtype,
                                std::move(contiguity), std::move(strideOrder),
                                isCpu);
          },
          py::return_value_policy::reference)
      .def(
          "define_scalar",
          [](PyFusion& self, const py::object& value, DataType dtype) -> Val* {
            std::optional<ScalarValue> v;
            if (!value.is_none()) {
              v = toScalarValue(value, "define_scalar", dtype);
            }
            return defineScalar(self.definingFusion(), dtype, v);
          },
          py::return_value_policy::reference)
      .def("add_output",
           [](PyFusion& self, Val* v) {
             NVF_CHECK(v != nullptr, "add_output: the output is None");
             self.definingFusion().addOutput(v);
           })
      .def("fusion_id",
           [](PyFusion& self) {
             return reinterpret_cast<uintptr_t>(&self.fusion());
           })
      .def("finalize", &PyFusion::finalize)
      .def_property_readonly("finalized", &PyFusion::finalized)
      .def("num_outputs",
           [](PyFusion& self) { return self.fusion().outputs().size(); })
      .def("fusion_ir", [](PyFusion& self) { return self.fusion().toString(); })
      .def("python_definition",
           [](PyFusion& self) { return fusionToPython(self.fusion()); });
}

// Segmenting, running and inspecting a definition for inputs.
void bindExecutionMethods(py::class_<PyFusion>& cls) {
  cls.def("last_concrete_ir",
          [](PyFusion& self) -> std::optional<std::string> {
            const Fusion* f = self.cache().lastConcreteFusion();
            if (f == nullptr) {
              return std::nullopt;
            }
            return f->toString();
          })
      .def("last_segmentation",
           [](PyFusion& self) -> py::object {
             const SegmentedFusion* sf = self.cache().lastSegmentedFusion();
             if (sf == nullptr) {
               return py::none();
             }
             return describeSegmentation(*sf);
           })
      .def("execute_unsegmented",
           [](PyFusion& self, const py::list& inputs,
              const std::vector<std::string>& enable,
              const std::vector<std::string>& disable) {
             FusionExecutorCache& cache = self.cache();
             CallSetup call = prepareCall(cache, inputs, enable, disable);
             py::gil_scoped_release release;
             return cache.runUnsegmented(call.args, call.options);
           })
      .def("num_cached_signatures",
           [](PyFusion& self) { return self.cache().numCachedSignatures(); })
      .def("execute",
           [](PyFusion& self, const py::list& inputs,
              const std::vector<std::string>& enable,
              const std::vector<std::string>& disable, uint64_t stream) {
             FusionExecutorCache& cache = self.cache();
             CallSetup call = prepareCall(cache, inputs, enable, disable);
             py::gil_scoped_release release;
             return cache.run(call.args, call.options,
                              reinterpret_cast<void*>(stream));
           })
      // execute with each segment's time in ms (execute(profile=True)).
      .def("execute_timed",
           [](PyFusion& self, const py::list& inputs,
              const std::vector<std::string>& enable,
              const std::vector<std::string>& disable, uint64_t stream) {
             FusionExecutorCache& cache = self.cache();
             CallSetup call = prepareCall(cache, inputs, enable, disable);
             py::gil_scoped_release release;
             std::vector<double> ms;
             std::vector<at::Tensor> out = cache.run(
                 call.args, call.options, reinterpret_cast<void*>(stream), &ms);
             return std::make_pair(out, ms);
           })
      .def("cuda_code_for",
           [](PyFusion& self, const py::list& inputs, const std::string& arch,
              const std::vector<std::string>& enable,
              const std::vector<std::string>& disable) {
             FusionExecutorCache& cache = self.cache();
             CallSetup call = prepareCall(cache, inputs, enable, disable);
             py::gil_scoped_release release;
             return cache.cudaCodeFor(call.args, call.options, arch);
           })
      // Segments for these inputs without running: the concrete IR and the
      // segmentation, as last_segmentation describes it.
      .def("segmentation_for",
           [](PyFusion& self, const py::list& inputs,
              const std::vector<std::string>& enable,
              const std::vector<std::string>& disable) {
             FusionExecutorCache& cache = self.cache();
             CallSetup call = prepareCall(cache, inputs, enable, disable);
             const SegmentedFusion& sf =
                 cache.segmentationFor(call.args, call.options);
             py::dict d = describeSegmentation(sf);
             d["concrete_ir"] = sf.completeFusion().toString();
             return d;
           })
      .def("segment_definitions",
           [](PyFusion& self, const py::list& inputs,
              const std::vector<std::string>& enable,
              const std::vector<std::string>& disable) {
             FusionExecutorCache& cache = self.cache();
             CallSetup call = prepareCall(cache, inputs, enable, disable);
             return segmentDefinitions(
                 cache.segmentationFor(call.args, call.options));
           })
      .def("last_cuda_code",
           [](PyFusion& self) { return self.cache().lastCudaCode(); });
}
}  // namespace

void bindFusion(py::module_& m) {
  m.def("_loaded_kernel_modules", [] { return LoadedModules::get().size(); });
  m.def(
      "_unload_kernels",
      [] {
        if (LoadedModules* table = LoadedModules::existing()) {
          table->unloadAll({nullptr, LoadedModules::driverUnload()});
        }
      },
      py::call_guard<py::gil_scoped_release>());
  bindVals(m);
  py::class_<PyFusion> cls(m, "Fusion");
  bindDefinitionMethods(cls);
  bindExecutionMethods(cls);
}

}  // namespace nvfuser::python
