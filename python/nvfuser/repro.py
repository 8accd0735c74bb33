"""Formats the C++ printer's script (csrc/ir/python_printer.cpp) the way
nvFuser prints a FusionDefinition: a function a user can paste and run."""

import re

from ._C import DataType  # noqa: F401 (named in the printed text)

_NAME = re.compile(r"\b([ts])(\d+)\b")
_DEFINE_TENSOR = re.compile(r"^(\w+) = fd\.define_tensor\(")
_ADD_OUTPUT = re.compile(r"^fd\.add_output\((\w+)\)$")
_INDENT = "    "


def _upper_name(match):
    # nvFuser names tensors T0, T1... and scalars S0, S1...
    return match.group(1).upper() + match.group(2)


def _define_tensor_line(name, layout):
    """The input as it was defined: the C++ printer knows neither the
    contiguity given, nor stride_order, nor is_cpu."""
    args = ["shape=%r" % (layout["shape"],)]
    if layout["contiguity"]:
        args.append("contiguity=%r" % (layout["contiguity"],))
    args.append("dtype=DataType.%s" % layout["dtype"].name)
    args.append("is_cpu=%r" % layout["is_cpu"])
    if layout["stride_order"]:
        args.append("stride_order=%r" % (layout["stride_order"],))
    return "%s = fd.define_tensor(%s)" % (name, ", ".join(args))


def _body_lines(script):
    """The statements inside the printer's `with` block, unindented."""
    lines = script.splitlines()
    start = lines.index("with FusionDefinition() as fd:") + 1
    return [line[4:] for line in lines[start:] if line.strip()]


def _add_output_line(match, specs):
    """add_output as it was called: the printer knows neither alias_input
    nor stride_order."""
    spec = next(specs, None)
    extra = spec.printed_args() if spec is not None else ""
    return "fd.add_output(%s%s)" % (match.group(1), extra)


def with_layouts(script, input_layouts, output_specs=()):
    """The printer's script with every define_tensor and add_output written
    as it was called (the script stays a `with` block)."""
    layouts = iter(input_layouts)
    specs = iter(output_specs)
    lines = []
    for line in script.splitlines():
        body = line[len(_INDENT):]
        match = _DEFINE_TENSOR.match(body)
        if line.startswith(_INDENT) and match:
            line = _INDENT + _define_tensor_line(match.group(1),
                                                 next(layouts))
        match = _ADD_OUTPUT.match(body)
        if line.startswith(_INDENT) and match:
            line = _INDENT + _add_output_line(match, specs)
        lines.append(line)
    return "\n".join(lines) + "\n"


def python_repro(script, input_layouts, fusion_id, output_specs=()):
    """nvFuser's printed form of a definition from the C++ printer's
    `script`, what define_tensor was given (`input_layouts`) and what
    add_output was given (`output_specs`)."""
    layouts = iter(input_layouts)
    specs = iter(output_specs)
    body = []
    for line in _body_lines(script):
        match = _ADD_OUTPUT.match(line)
        if match:
            line = _add_output_line(match, specs)
        line = _NAME.sub(_upper_name, line)
        match = _DEFINE_TENSOR.match(line)
        if match:
            line = _define_tensor_line(match.group(1), next(layouts))
        body.append("    " + line)
    header = "def nvfuser_fusion_id%s(fd : FusionDefinition) -> None :" % (
        0 if fusion_id is None else fusion_id)
    return "\n".join([header] + body) + "\n"
