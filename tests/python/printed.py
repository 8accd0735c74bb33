"""Re-executes a FusionDefinition's printed forms: the C++ printer's script
(`python_definition()`) and nvFuser's printed function (`repr(fd)`, as a
user pastes it), so tests can check that printing loses nothing."""

from nvfuser import DataType, FusionDefinition


def run_printed(fd, inputs):
    """(outputs of python_definition()'s script, outputs of repr(fd)'s
    function), both executed on `inputs`."""
    scope = {}
    exec(fd.python_definition(), scope)  # noqa: S102 (our printer's text)
    from_script = scope["fd"].execute(inputs)
    scope = {"FusionDefinition": FusionDefinition, "DataType": DataType}
    exec(repr(fd), scope)  # noqa: S102
    func = next(v for k, v in scope.items()
                if k.startswith("nvfuser_fusion_id"))
    with FusionDefinition() as repro:
        func(repro)
    return from_script, repro.execute(inputs)
