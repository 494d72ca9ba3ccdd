"""Shared by the benchmark scripts: wall-clock timing of one call."""

from __future__ import annotations

import time
from collections.abc import Callable


def timed(fn: Callable[[], object]) -> float:
    """Seconds one call of ``fn`` takes (perf_counter)."""
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t
