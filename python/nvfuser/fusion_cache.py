"""FusionCache: nvFuser's process-wide cache of defined fusions.

A FusionDefinition whose definition was seen before (same ops, inputs,
layouts and outputs) gets the fusion made the first time, and with it that
fusion's executor cache: segmentation and compiled kernels are reused. The
cache lives in memory only; nvFuser's serialization to disk is not provided.
"""

import threading

from . import _C


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
        """The process-wide cache. The arguments are nvFuser's and change
        nothing here (no eviction, no device binding, no disk)."""
        del max_fusions, selected_device, load_from_default_workspace
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
