"""FusionDefinition: nvFuser's Python API for defining and running fusions."""

import re

import torch

from . import _C
from ._C import DataType
from ._validate import check_int_list
from . import dynamic, introspection, segmentation
from .dynamic_values import DeferredVector
from .fusion_cache import FusionCache
from .layouts import contiguity_to_allocation, contiguity_to_logical
from .ops import Ops
from .outputs import apply_specs, make_spec
from .repro import python_repro, with_layouts
from .values import Scalar, Tensor, Vector, _Value

_TORCH_TO_DTYPE = {
    torch.float64: DataType.Double,
    torch.float32: DataType.Float,
    torch.float16: DataType.Half,
    torch.bfloat16: DataType.BFloat16,
    torch.int64: DataType.Int,
    torch.int32: DataType.Int32,
    torch.bool: DataType.Bool,
    torch.complex64: DataType.ComplexFloat,
    torch.complex128: DataType.ComplexDouble,
}
# Float8 tensors: torch >= 2.1 has e4m3fn and e5m2, >= 2.7 e8m0fnu; the
# DataType members exist regardless. torch name -> (DataType, first torch).
_FLOAT8 = {"float8_e4m3fn": (DataType.Float8_e4m3fn, "2.1"),
           "float8_e5m2": (DataType.Float8_e5m2, "2.1"),
           "float8_e8m0fnu": (DataType.Float8_e8m0fnu, "2.7")}
for _torch_name, (_dtype, _) in _FLOAT8.items():
    if hasattr(torch, _torch_name):
        _TORCH_TO_DTYPE[getattr(torch, _torch_name)] = _dtype


def check_torch_has(dtype, what):
    """TypeError when this torch has no tensors of `dtype` (a Float8 type
    older than this torch): such a tensor could be neither passed nor
    returned."""
    for torch_name, (float8, since) in _FLOAT8.items():
        if dtype == float8 and not hasattr(torch, torch_name):
            raise TypeError(
                "%s: DataType.%s tensors need torch >= %s (torch.%s); this "
                "is torch %s" % (what, dtype.name, since, torch_name,
                                 torch.__version__))


def torch_dtype_to_nvfuser_dtype(dtype):
    """Maps a torch.dtype to DataType; raises TypeError when unsupported."""
    if dtype not in _TORCH_TO_DTYPE:
        raise TypeError("torch dtype %s is not supported by nvfuser" % dtype)
    return _TORCH_TO_DTYPE[dtype]


def compute_layout(sizes, strides):
    """Contiguity per logical dim (None for size-1 dims) and stride order
    of a strided tensor (stride_order[i] is dim i's rank by stride, 0 the
    innermost; [] for row-major). define_tensor takes the contiguity in
    allocation order (layouts.contiguity_to_allocation)."""
    rank = len(sizes)
    # Outermost first; ties keep the logical order (row-major).
    order = sorted(range(rank), key=lambda d: (-strides[d], d))
    stride_order = [0] * rank
    for pos, d in enumerate(order):
        stride_order[d] = rank - 1 - pos
    contiguity = [None] * rank
    expected = 1
    for d in reversed(order):
        if sizes[d] == 1 or strides[d] == 0:
            continue  # broadcast, or expanded broadcast (contiguity None)
        contiguity[d] = strides[d] == expected
        expected = strides[d] * sizes[d]
    if stride_order == list(range(rank - 1, -1, -1)):
        stride_order = []
    return contiguity, stride_order


# torch's raw-stream getter (what inductor's generated code calls) costs a
# fraction of torch.cuda.current_stream(), which builds a Stream object.
_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)


def _current_stream(inputs):
    """The current CUDA stream of the inputs' device (0 on the CPU)."""
    for t in inputs:
        if isinstance(t, torch.Tensor) and t.is_cuda:
            if _raw_stream is not None:
                return _raw_stream(t.get_device())
            return torch.cuda.current_stream(t.device).cuda_stream
    return 0


class FusionDefinition:
    """Defines a fusion inside a ``with`` block, then executes it.

    Either use ``with FusionDefinition() as fd: ...`` or subclass it and
    implement ``definition(self)``; the definition is then built on first
    execute.
    """

    def __init__(self, id=None, max_length=None):  # noqa: A002 (nvFuser API)
        del id, max_length  # accepted for nvFuser compatibility
        self._fusion = _C.Fusion()
        self._inside = False
        self._reset_record()
        self.ops = Ops(self)

    def _reset_record(self):
        # What define_tensor was given, per input, and the values in
        # definition order: the C++ printer knows neither the layout
        # (contiguity, stride_order, is_cpu) nor our Python wrappers.
        self._input_layouts = []
        # Every constant exactly (repr round-trips a float): the printed
        # texts round them (0.1 and 0.1000000000000001 print alike) and do
        # not tell 2 from 2.0.
        self._constants = []
        self._inputs = []
        self._outputs = []
        self._output_specs = []  # add_output's alias_input / stride_order
        self._layout_hints = {}  # Tensor -> fd.ops.stride_order's order
        self._id = None
        self._repro_inputs = None
        self._profile = None
        self._debug_output = None
        self.segments = []
        self.segment_index_space_maps = {}
        # Runtime shapes (dynamic.py): every top-level call, whether ops
        # wait for execute, and the concrete definitions per shaping value.
        self._trace = []
        self._extents = {}  # id(tensor input) -> its extents() scalars
        self._recording = False
        self._deferred = False
        self._concrete = {}
        self._last_concrete = None

    # ---- definition scope -------------------------------------------------
    def __enter__(self):
        if self._fusion.finalized:
            raise RuntimeError(
                "this FusionDefinition is already finalized; create a new "
                "one to define another fusion")
        if self._inside:
            raise RuntimeError("this FusionDefinition is already being "
                               "defined; `with` blocks cannot be nested")
        self._inside = True
        return self

    def __exit__(self, exc_type, exc, tb):
        self._inside = False
        if exc_type is None and dynamic.is_dynamic(self):
            # Concrete definitions go through the FusionCache instead.
            self._fusion.finalize()
        elif exc_type is None:
            # The same definition built again (a training loop, Thunder)
            # takes the fusion, and so the compiled kernels, made the
            # first time.
            self._id, self._fusion = FusionCache.get()._lookup_or_add(
                self._cache_key(), self._fusion)
        else:
            # A half-built definition is dropped, so a retry starts empty;
            # values made in it are refused by _unwrap from now on.
            self._fusion = _C.Fusion()
            self._reset_record()
        return False

    def _cache_key(self):
        """Canonical text of the definition: the IR (every op attribute)
        plus the printed script plus the input layouts, which neither text
        shows; two definitions with equal keys compute the same thing."""
        return "\n".join([self._fusion.fusion_ir(),
                          self._fusion.python_definition(),
                          repr(self._input_layouts),
                          repr(self._constants),
                          repr([s.key() for s in self._output_specs])])

    def _check_defining(self, what):
        if self._fusion.finalized:
            raise RuntimeError(
                "%s: this FusionDefinition is already finalized; ops can "
                "only be added inside its `with` block" % what)
        if not self._inside:
            raise RuntimeError(
                "%s: ops can only be added inside `with FusionDefinition() "
                "as fd:` or in definition()" % what)

    def _unwrap(self, value, what):
        """Returns the _C.Val of a value of this definition, making Python
        numbers into constants."""
        if isinstance(value, _Value):
            if value._fd is not self:
                raise ValueError(
                    "%s: %s belongs to another FusionDefinition" %
                    (what, value.name))
            if value._fusion is not self._fusion:
                raise ValueError(
                    "%s: %s belongs to a definition of this "
                    "FusionDefinition that was discarded after an exception"
                    % (what, value.name))
            return value._val
        if isinstance(value, (bool, int, float, complex)):
            return self.define_scalar(value)._val
        if value is None:
            raise TypeError("%s: an operand is None" % what)
        if isinstance(value, torch.Tensor):
            raise TypeError(
                "%s: got a torch.Tensor; define it with fd.define_tensor or "
                "fd.from_pytorch and pass the tensor to execute" % what)
        raise TypeError("%s: unsupported operand of type %s" %
                        (what, type(value).__name__))

    def _wrap(self, val):
        return Tensor(self, val) if val.is_tensor else Scalar(self, val)

    # ---- inputs -----------------------------------------------------------
    def define_tensor(self, shape=None, contiguity=None, dtype=DataType.Float,
                      is_cpu=False, stride_order=None, *, sizes=None,
                      strides=None, symbolic_sizes=None, static_sizes=False):
        """Defines an input tensor.

        shape: -1 for a symbolic size, 1 for a broadcast dim, other values
        static. contiguity: True/False per dim, None for broadcast dims,
        listed in allocation order (outermost first by stride_order) as
        nvFuser reads it. Alternatively give ``sizes`` and ``strides`` of
        an example tensor.
        """
        self._check_defining("define_tensor")
        if symbolic_sizes is not None:
            if shape is not None:
                raise ValueError("define_tensor: give shape or symbolic_sizes"
                                 ", not both")
            shape = symbolic_sizes
        if sizes is not None:
            # sizes and strides give the whole layout: nothing may
            # contradict it silently.
            given = [n for n, v in (("shape", shape), ("contiguity",
                                                       contiguity),
                                    ("stride_order", stride_order))
                     if v is not None]
            if given:
                raise ValueError("define_tensor: sizes and strides describe "
                                 "the tensor; %s must not be given with them"
                                 % " and ".join(given))
            sizes = check_int_list("sizes", sizes)
            if strides is None:
                raise ValueError("define_tensor: sizes requires strides")
            strides = check_int_list("strides", strides)
            if len(strides) != len(sizes):
                raise ValueError(
                    "define_tensor: sizes has %d entries but strides has %d" %
                    (len(sizes), len(strides)))
            for name, values in (("sizes", sizes), ("strides", strides)):
                for i, v in enumerate(values):
                    if v < 0:
                        raise ValueError("define_tensor: %s[%d] is %d; a "
                                         "tensor's %s are at least 0" %
                                         (name, i, v, name))
            contiguity, stride_order = compute_layout(sizes, strides)
            contiguity = contiguity_to_allocation(contiguity, stride_order)
            shape = [s if (static_sizes or s == 1) else -1 for s in sizes]
        elif strides is not None:
            raise ValueError("define_tensor: strides requires sizes")
        if shape is None:
            raise TypeError("define_tensor: shape is required")
        shape = check_int_list("shape", shape)
        stride_order = check_int_list("stride_order", stride_order or [])
        if contiguity is None:
            contiguity = []
        elif isinstance(contiguity, bool):
            # One value for every dim but the broadcasts, wherever the
            # stride order puts them.
            contiguity = contiguity_to_allocation(
                [None if s == 1 else contiguity for s in shape], stride_order)
        else:
            if not isinstance(contiguity, (list, tuple)):
                raise TypeError("define_tensor: contiguity must be a list")
            contiguity = list(contiguity)
            for i, c in enumerate(contiguity):
                if c is not None and not isinstance(c, bool):
                    raise TypeError(
                        "define_tensor: contiguity[%d] must be True, False or "
                        "None, got %r" % (i, c))
        if not isinstance(dtype, DataType):
            raise TypeError("define_tensor: dtype must be a DataType, got %r"
                            % (dtype,))
        check_torch_has(dtype, "define_tensor")
        val = self._fusion.define_tensor(
            shape, contiguity_to_logical(contiguity, stride_order), dtype,
            stride_order, bool(is_cpu))
        self._input_layouts.append(dict(
            shape=shape, contiguity=contiguity, dtype=dtype,
            is_cpu=bool(is_cpu), stride_order=stride_order))
        return self._record_input(Tensor(self, val))

    def _record_input(self, value):
        self._inputs.append(value)
        return value

    def from_pytorch(self, tensor, static_sizes=False):
        """Defines an input tensor shaped like an example torch.Tensor."""
        if not isinstance(tensor, torch.Tensor):
            raise TypeError("from_pytorch: expected a torch.Tensor, got %s" %
                            type(tensor).__name__)
        return self.define_tensor(
            sizes=list(tensor.size()), strides=list(tensor.stride()),
            dtype=torch_dtype_to_nvfuser_dtype(tensor.dtype),
            is_cpu=tensor.dim() == 0 and tensor.is_cpu,
            static_sizes=static_sizes)

    def define_scalar(self, value=None, dtype=None):
        """A constant when value is given, else a fusion-input scalar."""
        self._check_defining("define_scalar")
        if dtype is None:
            if value is None:
                dtype = DataType.Double
            elif isinstance(value, bool):
                dtype = DataType.Bool
            elif isinstance(value, int):
                dtype = DataType.Int
            elif isinstance(value, float):
                dtype = DataType.Double
            elif isinstance(value, complex):
                dtype = DataType.ComplexDouble
            else:
                raise TypeError("define_scalar: unsupported value of type %s"
                                % type(value).__name__)
        if not isinstance(dtype, DataType):
            raise TypeError("define_scalar: dtype must be a DataType, got %r"
                            % (dtype,))
        scalar = Scalar(self, self._fusion.define_scalar(value, dtype))
        # Only a scalar without a value is a fusion input; the others are
        # constants.
        if value is None:
            return self._record_input(scalar)
        self._constants.append((dtype.name, type(value).__name__,
                                repr(value)))
        return scalar

    # nvFuser's older names.
    define_constant = define_scalar

    def define_vector(self, values, dtype=DataType.Int):
        """A list of sizes for shape arguments (ints or Int scalars), or
        with an int n, an input of n runtime sizes (a list of ints at
        execute)."""
        self._check_defining("define_vector")
        if dtype != DataType.Int:
            raise TypeError("define_vector: only DataType.Int is supported")
        if isinstance(values, int) and not isinstance(values, bool):
            if values < 0:
                raise ValueError("define_vector: size must be >= 0, got %d"
                                 % values)
            return self._record_input(DeferredVector(self, values))
        if not isinstance(values, (list, tuple)):
            raise TypeError("define_vector: expected a list of sizes or a "
                            "size, got %s" % type(values).__name__)
        return Vector(self, values)

    def add_output(self, output, alias_input=None, stride_order=None):
        """Marks a tensor as a fusion output.

        alias_input: an input tensor the output is written into (in place,
        after every output is computed); such an output is not returned.
        stride_order: the output's layout (stride_order[i] is dim i's rank
        by stride, 0 the innermost). nvFuser's second positional argument
        is either."""
        self._check_defining("add_output")
        if isinstance(alias_input, (list, tuple)) and stride_order is None:
            alias_input, stride_order = None, alias_input
        if not isinstance(output, Tensor):
            if isinstance(output, Scalar):
                raise TypeError(
                    "add_output: %s is a scalar; only tensors can be fusion "
                    "outputs" % output.name)
            raise TypeError("add_output: expected a Tensor, got %s" %
                            type(output).__name__)
        val = self._unwrap(output, "add_output")
        if alias_input is None and stride_order is None:
            stride_order = self._layout_hints.get(output)
        spec = make_spec(self, output, alias_input, stride_order)
        self._fusion.add_output(val)
        self._outputs.append(output)
        self._output_specs.append(spec)

    # ---- running ----------------------------------------------------------
    def definition(self):
        """Override in a subclass to define the fusion."""
        raise NotImplementedError(
            "define the fusion in a `with FusionDefinition() as fd:` block or "
            "override definition()")

    def _ensure_defined(self):
        if self._fusion.finalized:
            return
        if self._inside:
            raise RuntimeError("execute: called inside the `with` block; "
                               "leave it first so the definition is final")
        if type(self).definition is FusionDefinition.definition:
            # nvFuser raises NotImplementedError here: the base class'
            # definition() is the missing piece.
            raise NotImplementedError(
                "execute: the FusionDefinition has no definition; define it "
                "in a `with` block or override definition()")
        with self:
            self.definition()

    def _concretized(self, inputs):
        """(concrete definition, its inputs) when this one has runtime
        shapes (dynamic.py), else None."""
        self._ensure_defined()
        if dynamic.is_dynamic(self):
            return dynamic.concretize(self, inputs)
        return None

    def _prepare_execute(self, inputs, device, enable, disable):
        self._ensure_defined()
        if dynamic.is_dynamic(self):
            raise NotImplementedError(
                "this FusionDefinition has runtime shapes: execute and "
                "execute_unsegmented run it; other entry points take "
                "definitions with constant shapes")
        if not isinstance(inputs, (list, tuple)):
            raise TypeError("execute: inputs must be a list, got %s" %
                            type(inputs).__name__)
        if device is not None:
            device = torch.device(device)
            for i, t in enumerate(inputs):
                if isinstance(t, torch.Tensor) and t.dim() > 0 and \
                        t.device != device:
                    raise ValueError(
                        "execute: input %d is on %s but device=%s was given" %
                        (i, t.device, device))
        enable = self._option_list(enable, "_enable_options")
        disable = self._option_list(disable, "_disable_options")
        if self._fusion.num_outputs() == 0:
            if not self._inputs:
                # An empty `with` block: nothing was defined at all.
                raise NotImplementedError(
                    "execute: the FusionDefinition is empty; define inputs, "
                    "ops and outputs in its `with` block")
            raise RuntimeError("execute: the fusion has no outputs; call "
                               "fd.add_output")
        return list(inputs), enable, disable

    def execute(self, inputs, *, device=None, override_user_schedule=False,
                capture_debug_output=False, print_repro=False, profile=False,
                save_repro_inputs=False, _enable_options=None,
                _disable_options=None):
        """Runs the fusion on a list of torch tensors and Python numbers and
        returns the outputs as a list of torch tensors.

        print_repro prints repro_script_for(inputs); save_repro_inputs keeps
        what last_repro_script() needs; profile keeps a FusionProfile for
        profile(); capture_debug_output keeps what the compiler printed for
        debug_output()."""
        del override_user_schedule
        concrete = self._concretized(inputs)
        if concrete is not None:
            self._last_concrete, concrete_inputs = concrete
            return self._last_concrete.execute(
                concrete_inputs, device=device,
                capture_debug_output=capture_debug_output,
                print_repro=print_repro, profile=profile,
                save_repro_inputs=save_repro_inputs,
                _enable_options=_enable_options,
                _disable_options=_disable_options)
        args = self._prepare_execute(inputs, device, _enable_options,
                                     _disable_options)
        if print_repro:
            print(self.repro_script_for(args[0]))
        if save_repro_inputs or print_repro:
            self._repro_inputs = introspection.reproducers(args[0])

        segment_ms = []

        def run():
            if self.segments:
                return segmentation.execute_segments(
                    self, args[0], device=device,
                    _enable_options=args[1], _disable_options=args[2])
            if profile:
                out, segment_ms[:] = self._fusion.execute_timed(
                    *args, _current_stream(args[0]))
                return out
            return self._fusion.execute(*args, _current_stream(args[0]))

        self._debug_output = None
        if profile:
            plain = run

            def run():
                return introspection.timed(plain, args[0])
        if capture_debug_output:
            results, self._debug_output = introspection.captured(run)
        else:
            results = run()
        if profile:
            results, host_ms, device_ms = results
            self._profile = introspection.FusionProfile(
                self._id, self._profiled_segments(), host_ms, device_ms,
                args[0], results, segment_ms)
        return apply_specs(self._output_specs, results, args[0])

    def _execute_plain(self, inputs):
        """execute(inputs) without its per-call Python checks, for callers
        that built the definition themselves (the FX backend's regions):
        no runtime shapes, no user segments, outputs without alias_input
        or stride_order; anything else takes the full path."""
        plain = getattr(self, "_plain_execute", None)
        if plain is None:
            plain = self._plain_execute = (
                not dynamic.is_dynamic(self) and not self.segments and
                self._fusion.num_outputs() > 0 and
                all(s.alias_index is None and s.stride_order is None
                    for s in self._output_specs))
        if not plain:
            return self.execute(inputs)
        return self._fusion.execute(inputs, [], [], _current_stream(inputs))

    def _profiled_segments(self):
        if self.segments:
            # Each segment's definition ran as a fusion of its own.
            groups = [g for seg in self.segments
                      for g in (seg.last_segmentation() or
                                {"groups": []})["groups"]]
            return {"groups": [dict(g, id=i) for i, g in enumerate(groups)]}
        return self.last_segmentation()

    def cuda_code_for(self, inputs, arch="sm_90", *, _enable_options=None,
                      _disable_options=None):
        """Segments the fusion for these inputs (CPU tensors of the right
        shapes and dtypes are fine), generates every kernel, compiles each
        with NVRTC for ``arch`` and returns their sources. Needs no GPU."""
        if not isinstance(arch, str) or re.fullmatch(r"sm_[0-9]+[af]?", arch) \
                is None:
            raise ValueError("cuda_code_for: arch must look like 'sm_90', "
                             "got %r" % (arch,))
        concrete = self._concretized(inputs)
        if concrete is not None:
            return concrete[0].cuda_code_for(
                concrete[1], arch, _enable_options=_enable_options,
                _disable_options=_disable_options)
        args = self._prepare_execute(inputs, None, _enable_options,
                                     _disable_options)
        return self._fusion.cuda_code_for(args[0], arch, args[1], args[2])

    def last_cuda_code(self):
        """Sources of the generated kernels of the last execute."""
        return self._runner()._fusion.last_cuda_code()

    def execute_unsegmented(self, inputs, *, _enable_options=None,
                            _disable_options=None):
        """Runs the whole fusion op by op through ATen, without segmentation:
        the oracle segmented execution is tested against."""
        concrete = self._concretized(inputs)
        if concrete is not None:
            self._last_concrete, concrete_inputs = concrete
            return self._last_concrete.execute_unsegmented(
                concrete_inputs, _enable_options=_enable_options,
                _disable_options=_disable_options)
        args = self._prepare_execute(inputs, None, _enable_options,
                                     _disable_options)
        return self._fusion.execute_unsegmented(*args)

    def _runner(self):
        """The definition the last execute ran: this one, or for runtime
        shapes its concrete definition."""
        return self._last_concrete or self

    @staticmethod
    def _option_list(options, what):
        if options is None:
            return []
        if isinstance(options, str) or not isinstance(options, (list, tuple)):
            raise TypeError("execute: %s must be a list of option names" %
                            what)
        for i, name in enumerate(options):
            if not isinstance(name, str):
                raise TypeError("execute: %s[%d] must be an option name (a "
                                "str), got %r" % (what, i, name))
        return list(options)

    # ---- inspection -------------------------------------------------------
    def fusion_ir(self):
        """The fusion's IR as text."""
        return self._fusion.fusion_ir()

    def python_definition(self):
        """The fusion as a FusionDefinition script (what the fuzzer prints
        as a reproducer), with the inputs' layouts as they were defined."""
        if dynamic.is_dynamic(self):
            return dynamic.python_script(self)
        return with_layouts(self._fusion.python_definition(),
                            self._input_layouts, self._output_specs)

    def id(self):  # noqa: A003 (nvFuser API)
        """The fusion's id in the FusionCache; None before it is defined."""
        return self._id

    def inputs(self):
        """The fusion inputs (Tensor and Scalar), in definition order."""
        return list(self._inputs)

    def extents(self):
        """The runtime sizes of the tensor inputs' dims, in input order, as
        Int scalars usable in this definition's shapes and size
        arithmetic (each is fd.ops.size(t, dim=d))."""
        return dynamic.extents(self)

    def outputs(self):
        """The fusion outputs, in add_output order."""
        return list(self._outputs)

    def last_concrete_ir(self):
        """The IR bound to the sizes of the last execute (None before)."""
        return self._runner()._fusion.last_concrete_ir()

    def last_segmentation(self):
        """The segments of the last execute, in run order (None before).

        A dict with ``groups`` (each: ``scheduler``, ``ops``, ``exprs``,
        ``prologue`` (forwarded ops replicated into it), ``inputs``,
        ``outputs``), ``forwarded_chains``, ``boundary_bytes`` (bytes of
        intermediates written and read across segments), ``policy``,
        ``log`` (with NVFUSER_DUMP=segmenter_logging), ``text`` (the
        segmented_fusion dump) and ``dot`` (the draw_segmented_fusion
        graph)."""
        return self._runner()._fusion.last_segmentation()

    def last_scheduled_fusion_ir(self, tensor_transforms=False, **kwargs):
        """The concrete IR of the last execute and its segments, each with
        its scheduler and ops."""
        del kwargs  # override_user_schedule: no user schedules here
        segments = self.last_segmentation()
        if segments is None:
            raise RuntimeError("last_scheduled_fusion_ir: execute the "
                               "fusion first")
        return introspection.scheduled_ir(self.last_concrete_ir(), segments,
                                          tensor_transforms)

    def scheduled_fusion_ir_for(self, inputs, tensor_transforms=False,
                                **kwargs):
        """As last_scheduled_fusion_ir, for these inputs, without running
        (CPU tensors of the right shapes and dtypes are fine)."""
        del kwargs
        concrete = self._concretized(inputs)
        if concrete is not None:
            return concrete[0].scheduled_fusion_ir_for(concrete[1],
                                                       tensor_transforms)
        args = self._prepare_execute(inputs, None, None, None)
        plan = self._fusion.segmentation_for(*args)
        return introspection.scheduled_ir(plan["concrete_ir"], plan,
                                          tensor_transforms)

    def repro_script_for(self, inputs=None):
        """A script that defines this fusion again and, with inputs, makes
        like inputs and executes it."""
        return introspection.repro_script(self, inputs)

    def last_repro_script(self):
        """repro_script_for the inputs of the last execute that had
        save_repro_inputs=True (or print_repro=True)."""
        if self._repro_inputs is None:
            raise RuntimeError(
                "last_repro_script: no inputs were saved; call "
                "execute(inputs, save_repro_inputs=True) first")
        return self.repro_script_for(self._repro_inputs)

    def profile(self):
        """The FusionProfile of the last execute(profile=True)."""
        if self._profile is None:
            raise ValueError("profile: execute() was not called with "
                             "profile=True")
        return self._profile

    def debug_output(self):
        """What the compiler printed during the last execute with
        capture_debug_output=True (None otherwise)."""
        return self._debug_output

    def segment(self, inputs, *, _enable_options=None,
                _disable_options=None):
        """This definition split into its segments' FusionDefinitions (in
        run order; [] when it is one segment), as nvFuser's segment():
        ``segment_index_space_maps[segment]`` maps each segment input and
        output to this definition's value, and execute() then runs the
        segments one after another."""
        args = self._prepare_execute(inputs, None, _enable_options,
                                     _disable_options)
        return segmentation.segment(self, *args)

    def __repr__(self):
        # nvFuser prints an executable function: a user's repro script.
        if dynamic.is_dynamic(self):
            return dynamic.python_repro(self)
        return python_repro(self._fusion.python_definition(),
                            self._input_layouts, self._id,
                            self._output_specs)

    __str__ = __repr__


# Every definition records its calls (dynamic.py replays them for runtime
# shapes); define_constant is define_scalar's other name.
for _name in ("define_tensor", "define_scalar", "define_vector",
              "add_output"):
    setattr(FusionDefinition, _name,
            dynamic.recorded("fd", _name, getattr(FusionDefinition, _name)))
FusionDefinition.define_constant = FusionDefinition.define_scalar
