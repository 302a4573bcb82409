"""Bounded per-format caches (least recently used first out).

Every cache softfp8 keeps per format (descriptors, per-format scalar types, np.finfo
objects, cast containment, shortest decimal strings) is an ``LRU`` registered here,
so that a program touching many distinct formats keeps a bounded amount of memory
(issue 13; docs/performance.md, "Per-format caches").  The size is a number of
entries, ``DEFAULT_SIZE`` unless ``SOFTFP8_FORMAT_CACHE`` is set in the environment at
import; ``set_size(n)`` changes it at run time.  Caches whose entries are finer than a
format (one entry per code) hold ``scale`` times as many.

Eviction only drops the cache's reference: an object still in use (a descriptor held
by an array) lives on and keeps working, and asking again builds an equal one.
This module imports nothing of softfp8.
"""
from __future__ import annotations

import os
import threading
from collections import OrderedDict

DEFAULT_SIZE = 2048
_MISSING = object()
_CACHES = []


def _check_size(n, what):
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"{what} must be an int number of entries, got {n!r}")
    if not 1 <= n <= 1 << 40:
        raise ValueError(f"{what} must be between 1 and 2**40 entries, got {n!r}")
    return n


class LRU:
    """A mapping of at most ``scale * size()`` entries; a lookup refreshes its entry,
    an insertion beyond the bound drops the least recently used ones.  Thread-safe:
    a lock guards each operation (values are built outside it, so two threads may
    both build one; the first stored wins)."""

    def __init__(self, name, scale=1):
        self.name = name
        self.scale = scale
        self._data = OrderedDict()
        # re-entrant: a key comparison inside a lookup (descriptors compare through cast
        # resolution, which may consult another cache entry) must not deadlock
        self._lock = threading.RLock()
        self._limit = scale * _SIZE[0]
        self.evictions = 0
        _CACHES.append(self)

    def get(self, key, default=None):
        with self._lock:
            value = self._data.get(key, _MISSING)
            if value is _MISSING:
                return default
            self._data.move_to_end(key)
            return value

    def setdefault(self, key, value):
        """Store value under key unless present; return the stored value."""
        with self._lock:
            old = self._data.get(key, _MISSING)
            if old is not _MISSING:
                self._data.move_to_end(key)
                return old
            self._data[key] = value
            self._trim()
            return value

    def _trim(self):
        while len(self._data) > self._limit:
            self._data.popitem(last=False)
            self.evictions += 1

    def _resize(self):
        with self._lock:
            self._limit = self.scale * _SIZE[0]
            self._trim()

    def clear(self):
        with self._lock:
            self._data.clear()

    def __len__(self):
        return len(self._data)

    def __contains__(self, key):
        with self._lock:
            return key in self._data


def _size_from_environment():
    v = os.environ.get("SOFTFP8_FORMAT_CACHE")
    if v is None or v.strip() == "":
        return DEFAULT_SIZE
    try:
        n = int(v)
    except ValueError:
        raise ValueError(f"SOFTFP8_FORMAT_CACHE must be a number of formats, got {v!r}") from None
    return _check_size(n, "SOFTFP8_FORMAT_CACHE")


_SIZE = [_size_from_environment()]


def size():
    """Entries (formats) each per-format cache holds at most."""
    return _SIZE[0]


def set_size(n):
    """Set the number of formats each per-format cache holds (evicting at once the
    least recently used beyond it); returns the previous size."""
    _check_size(n, "format cache size")
    old, _SIZE[0] = _SIZE[0], n
    for cache in _CACHES:
        cache._resize()
    return old


def stats():
    """{cache name: (entries, bound, evictions so far)}."""
    return {c.name: (len(c), c._limit, c.evictions) for c in _CACHES}
