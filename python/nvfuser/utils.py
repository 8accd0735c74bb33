"""nvFuser's module-level helpers: clone, version and tensor descriptors."""

from .fusion_definition import FusionDefinition, compute_layout
from .layouts import contiguity_to_allocation


def version():
    """The package version, as nvfuser.version() returns it."""
    from . import __version__
    return __version__


def compute_contiguity(sizes, strides):
    """Contiguity per dim of a strided tensor, as define_tensor takes it
    (None for size-1 and broadcast dims)."""
    return compute_layout(list(sizes), list(strides))[0]


def compute_tensor_descriptor(sizes, strides, dims=None):
    """(contiguity, stride_order) of a strided tensor. `dims` (nvFuser's
    argument for a subset of dims) must be all dims here."""
    sizes, strides = list(sizes), list(strides)
    if dims is not None and list(dims) != list(range(len(sizes))):
        raise NotImplementedError(
            "compute_tensor_descriptor: dims other than all dims are not "
            "supported")
    contiguity, stride_order = compute_layout(sizes, strides)
    # In allocation order, as nvFuser returns it and define_tensor reads it.
    contiguity = contiguity_to_allocation(contiguity, stride_order)
    # define_tensor reads [] as row-major; nvFuser returns the order spelled
    # out, outermost dim highest.
    if not stride_order:
        stride_order = list(range(len(sizes) - 1, -1, -1))
    return contiguity, stride_order


def clone(fd, other):
    """Copies fd's definition into `other`, a FusionDefinition not yet
    defined; both then run the same cached fusion, as in nvFuser."""
    if not isinstance(fd, FusionDefinition) or \
            not isinstance(other, FusionDefinition):
        raise TypeError("clone: expected two FusionDefinitions")
    if not fd._fusion.finalized:
        raise RuntimeError("clone: the source FusionDefinition is not "
                           "defined yet; leave its `with` block first")
    if other._inside or other._fusion.finalized:
        raise RuntimeError("clone: the target FusionDefinition already has "
                           "a definition")
    other._fusion = fd._fusion
    other._id = fd._id
    other._input_layouts = list(fd._input_layouts)
    other._inputs = fd.inputs()
    other._outputs = fd.outputs()
    other._output_specs = list(fd._output_specs)
    # Runtime shapes: the record and its concrete definitions are shared.
    other._trace, other._deferred = fd._trace, fd._deferred
    other._concrete = fd._concrete
