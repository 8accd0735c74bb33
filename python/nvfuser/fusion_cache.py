"""FusionCache: nvFuser's process-wide cache of defined fusions.

A FusionDefinition whose definition was seen before (same ops, inputs,
layouts and outputs) gets the fusion made the first time, and with it that
fusion's executor cache: segmentation and compiled kernels are reused.

Across processes, what takes the time (NVRTC compiling each kernel) is
kept on disk: ``enable_automatic_serialization()`` (or
``FusionCache.get(load_from_default_workspace=True)``) turns on the
verified kernel cache (docs/security.md) in the default workspace, so a
restarted process's first ``execute`` of a known definition runs no NVRTC
compile (``kernel_compile_stats()`` counts them). Definitions themselves
are not written: a process defines its fusions again (cheap) and finds
their kernels on disk. ``NVFUSER_CACHE_DIR`` set by the user wins.
"""

import os
import threading

from . import _C

_WORKSPACE_ENV = "NVFUSER_CACHE_DIR"
_we_set_workspace = [False]


def default_workspace():
    """The kernel cache directory automatic serialization uses:
    $XDG_CACHE_HOME/nvfuser-lite/kernels (~/.cache by default)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache")
    return os.path.join(base, "nvfuser-lite", "kernels")


def enable_automatic_serialization():
    """Compiled kernels are written to and read from the default workspace
    (unless NVFUSER_CACHE_DIR already names a directory)."""
    if not os.environ.get(_WORKSPACE_ENV):
        path = default_workspace()
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        os.environ[_WORKSPACE_ENV] = path
        _we_set_workspace[0] = True


def disable_automatic_serialization():
    """Undoes enable_automatic_serialization() (a directory the user named
    in NVFUSER_CACHE_DIR stays)."""
    if _we_set_workspace[0]:
        os.environ.pop(_WORKSPACE_ENV, None)
        _we_set_workspace[0] = False


def serialize():
    """nvFuser writes its cache here; kernels are written as they are
    compiled once serialization is enabled, so there is nothing left to do.
    Returns the directory in use (None when none)."""
    return os.environ.get(_WORKSPACE_ENV) or None


def kernel_compile_stats():
    """This process' kernel compiles since it started: ``nvrtc_compiles``,
    ``memory_hits`` and ``disk_hits`` (kernels a cache had)."""
    return dict(_C.kernel_compile_stats())


class FusionCache:
    """One per process: ``FusionCache.get()``."""

    _instance = None
    _instance_lock = threading.Lock()

    def __init__(self):
        self._lock = threading.Lock()
        self._by_key = {}  # canonical definition text -> (id, _C.Fusion)

    @classmethod
    def get(cls, max_fusions=None, selected_device=None,
            load_from_default_workspace=None):
        """The process-wide cache. ``load_from_default_workspace=True``
        turns on automatic serialization (kernels on disk in the default
        workspace); ``max_fusions`` and ``selected_device`` change nothing
        here (no eviction, one device)."""
        del max_fusions, selected_device
        if load_from_default_workspace:
            enable_automatic_serialization()
        with cls._instance_lock:
            if cls._instance is None:
                cls._instance = FusionCache()
            return cls._instance

    @classmethod
    def reset(cls):
        """Forgets every fusion: definitions made afterwards compile anew
        and ids start at 0 again. FusionDefinitions already defined keep
        working with their fusions."""
        cache = cls.get()
        with cache._lock:
            cache._by_key.clear()

    def num_fusions(self):
        """How many distinct definitions the cache holds."""
        with self._lock:
            return len(self._by_key)

    def _lookup_or_add(self, key, fusion):
        """(id, fusion to use): the cached fusion of an equal definition, or
        `fusion`, finalized and added under a new id."""
        with self._lock:
            hit = self._by_key.get(key)
            if hit is not None:
                return hit
            fusion.finalize()
            entry = (len(self._by_key), fusion)
            self._by_key[key] = entry
            return entry
