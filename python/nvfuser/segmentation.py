"""FusionDefinition.segment: a definition split into the definitions of its
segments, as nvFuser's segment() does.

Each segment's definition is built by running the script the compiler
prints for the segment's own fusion (with the layouts of its inputs
written in). ``fd.segment_index_space_maps[segment]`` maps each input and
output of a segment to the value of ``fd`` it stands for: an input or
output of ``fd``, or a SegmentValue for an intermediate that crosses
segments. Once segmented, ``fd.execute`` runs the segments in order.
"""

from ._C import DataType
from .layouts import contiguity_to_allocation, contiguity_to_logical
from .repro import with_layouts


class SegmentValue:
    """An intermediate of the segmented definition that one segment writes
    and later ones read; ``name`` is its name in the concrete fusion."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "SegmentValue(%s)" % self.name


def _layout(info, original):
    """define_tensor arguments for a segment input: the original input's
    layout where the input is one, else no contiguity promise (an
    intermediate may be a strided view)."""
    shape = list(info["shape"])
    if original is not None:
        # The segment has these inputs' sizes: a dim of size 1 is a
        # broadcast there and takes no contiguity.
        order = original["stride_order"]
        logical = contiguity_to_logical(original["contiguity"], order) or \
            [None if s == 1 else True for s in shape]
        logical = [None if s == 1 else c for s, c in zip(shape, logical)]
        return dict(original, shape=shape,
                    contiguity=contiguity_to_allocation(logical, order))
    contiguity = [None if kind != "iter" else False
                  for kind in info["kinds"]]
    return dict(shape=shape, contiguity=contiguity, dtype=None,
                is_cpu=info["is_cpu"], stride_order=[])


def _build(fd_class, script, layouts):
    namespace = {"FusionDefinition": fd_class, "DataType": DataType}
    exec(compile(with_layouts(script, layouts), "<segment>", "exec"),
         namespace)
    return namespace["fd"]


def _fill_dtypes(script, layouts):
    """Intermediates take their dtype from the printed define_tensor."""
    import re
    dtypes = re.findall(r"fd\.define_tensor\(.*dtype=DataType\.(\w+)", script)
    for layout, name in zip(layouts, dtypes):
        if layout["dtype"] is None:
            layout["dtype"] = getattr(DataType, name)


def segment(fd, inputs, enable, disable):
    """The segments' FusionDefinitions in run order ([] when the whole
    definition is one segment, as nvFuser returns)."""
    plan = fd._fusion.segment_definitions(inputs, enable, disable)
    if len(plan["segments"]) <= 1:
        fd.segments = []
        fd.segment_index_space_maps = {}
        return []
    if len(plan["fusion_inputs"]) > len(fd.inputs()):
        # The seed and offset drawn at every execute are inputs of the
        # concrete fusion only; no definition of fd's would supply them.
        raise NotImplementedError(
            "segment: random ops without rng_seed and rng_offset draw their "
            "seed at every execute; give rng_seed and rng_offset to segment "
            "this definition")
    originals = {}
    tensor_layouts = iter(fd._input_layouts)
    for name, value in zip(plan["fusion_inputs"], fd.inputs()):
        originals[name] = (value, next(tensor_layouts)
                           if hasattr(value, "ndim") else None)
    for name, value in zip(plan["fusion_outputs"], fd.outputs()):
        originals.setdefault(name, (value, None))
    intermediates = {}

    def original(name):
        if name in originals:
            return originals[name][0]
        return intermediates.setdefault(name, SegmentValue(name))

    segments, maps = [], {}
    for seg in plan["segments"]:
        layouts = []
        for name, info in zip(seg["inputs"], seg["input_layouts"]):
            if info["is_tensor"]:
                layouts.append(_layout(info, originals.get(name,
                                                           (None, None))[1]))
        _fill_dtypes(seg["script"], layouts)
        seg_fd = _build(_base_class(), seg["script"], layouts)
        mapping = {}
        for value, name in zip(seg_fd.inputs(), seg["inputs"]):
            mapping[value] = original(name)
        for value, name in zip(seg_fd.outputs(), seg["outputs"]):
            mapping[value] = original(name)
        segments.append(seg_fd)
        maps[seg_fd] = mapping
    fd.segments = segments
    fd.segment_index_space_maps = maps
    return segments


def _base_class():
    """FusionDefinition itself: a subclass' definition() must not run for
    a segment."""
    from .fusion_definition import FusionDefinition
    return FusionDefinition


def execute_segments(fd, inputs, **kwargs):
    """fd's outputs computed segment by segment; values no later segment
    reads are dropped as soon as possible."""
    values = dict(zip(map(id, fd.inputs()), inputs))
    keep = {id(v) for v in fd.outputs()}
    last_use = {}
    for index, seg_fd in enumerate(fd.segments):
        for value in seg_fd.inputs():
            last_use[id(fd.segment_index_space_maps[seg_fd][value])] = index
    for index, seg_fd in enumerate(fd.segments):
        mapping = fd.segment_index_space_maps[seg_fd]
        args = [values[id(mapping[v])] for v in seg_fd.inputs()]
        outs = seg_fd.execute(args, **kwargs)
        for value, out in zip(seg_fd.outputs(), outs):
            values[id(mapping[value])] = out
        for value in seg_fd.inputs():
            key = id(mapping[value])
            if key not in keep and last_use.get(key) == index:
                values.pop(key, None)
    return [values[id(v)] for v in fd.outputs()]
