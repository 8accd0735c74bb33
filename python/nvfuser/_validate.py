"""Checks of Python arguments before they reach the compiler: a bad value
gets a message that names it, not pybind11's "Unable to cast"."""

INT64_MIN = -2**63
INT64_MAX = 2**63 - 1


def check_int(value, what):
    """Returns value, an int (not a bool) in the int64 range."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("%s must be an int, got %s" %
                        (what, type(value).__name__))
    if not INT64_MIN <= value <= INT64_MAX:
        raise ValueError("%s = %d is out of the int64 range" % (what, value))
    return value


def check_int_list(name, values, allow_none=False):
    """Returns values as a list of ints (None allowed where asked)."""
    if not isinstance(values, (list, tuple)):
        raise TypeError("%s must be a list of ints, got %s" %
                        (name, type(values).__name__))
    for i, v in enumerate(values):
        if v is None and allow_none:
            continue
        check_int(v, "%s[%d]" % (name, i))
    return list(values)
