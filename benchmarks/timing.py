"""Timing that the benchmark scripts share (they import it as ``timing``: a script's folder is
on its path when run as ``python benchmarks/NAME.py``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def best_of(repeats: int, call: Callable[[], Any]) -> tuple[float, Any]:
    """(the fewest wall-clock seconds of `repeats` calls of call(), the last call's value)."""
    best, value = float("inf"), None
    for _ in range(repeats):
        started = time.perf_counter()
        value = call()
        best = min(best, time.perf_counter() - started)
    return best, value
