"""pytest plugin of softfp8 (entry point ``pytest11``: ``softfp8``).

Provides the fixture ``softfp8_isolated`` (not autouse): the test runs in a fresh
softfp8 context - default rounding (nearest_even), saturation (each format's
default) and tininess (after), sticky flags cleared - and the enclosing context,
flags included, is restored afterwards.  The fixture's value exposes ``flags``: the
sticky flags raised so far inside the test.

Loading the plugin changes nothing for tests that do not request the fixture.
"""
from __future__ import annotations

import pytest

from . import _context


class IsolatedContext:
    """Value of the ``softfp8_isolated`` fixture."""

    __slots__ = ("_state",)

    def __init__(self, state):
        self._state = state

    @property
    def flags(self):
        """softfp8.Flags raised inside the test so far (this thread / task)."""
        return _context.Flags(self._state.cell.flags)

    def clear(self):
        """Clear the test's sticky flags."""
        self._state.cell.flags = 0

    def __repr__(self):
        return f"<softfp8 isolated context, flags {self.flags!r}>"


@pytest.fixture
def softfp8_isolated():
    """Run the test in a fresh softfp8 context (default settings, no flags raised)."""
    state = _context._new_state()
    token = _context._set(state)
    try:
        yield IsolatedContext(state)
    finally:
        _context._VAR.reset(token)
