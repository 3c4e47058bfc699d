"""Timing that the benchmark scripts share (they import it as ``timing``: a script's folder is
on its path when run as ``python benchmarks/NAME.py``)."""

from __future__ import annotations

import platform
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


def cpu_model() -> str:
    """The CPU's model name (Linux's /proc/cpuinfo; elsewhere what platform says): every
    speed figure names its CPU."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()
