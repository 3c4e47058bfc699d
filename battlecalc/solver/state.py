"""What a process has of the compiled kernels, as a value (KernelState): the choice of
compiled kernels or plain Python reads it and nothing else (solver.plan.kernels_for, the
side builder's and the merged walks' choice of their kernel or their Python twin)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Protocol

from ..kernels import jit


class Budgets(Protocol):
    """What KernelState.compiles reads of solver.plan.Limits (typed here, not imported:
    plan.py imports this module)."""

    python_slowdown: float
    python_budget: float
    python_budget_cold: float

_spent = [0.0]  # estimated seconds this process has spent in plain-Python solves
# entry kernels found compiled in this process: they stay so (numba keeps a dispatcher's
# overloads, and jit.compiled() is never undone), so each is looked up once, not at every
# choice (jit.loaded imports the kernel's module: about 10 us an entry)
_loaded: set = set()
_dispatchers: dict = {}  # entry -> its numba dispatcher (once jit.compiled() has run)
_states: dict = {}  # (entries, spent, compiled) -> the KernelState now() made of them


@dataclass(frozen=True)
class KernelState:
    """What a process has of the compiled kernels, as a value: the choice of compiled kernels
    or plain Python (kernels_for) reads this and nothing else.  plain: every kernel stays
    plain Python (BATTLECALC_PLAIN_KERNELS=1); everywhere: every solve runs compiled kernels
    (jit.compiled() has run); loaded / on_disk: the entry kernels (module, name) compiled in
    this process / held by numba's cache (None: numba's cache is read where the choice needs
    it, not before: reading it imports numba, which a small first solve never needs); spent:
    the seconds this process has spent in plain-Python solves.  KernelState.now() reads the
    process's; a test builds one."""

    plain: bool = False
    everywhere: bool = False
    loaded: frozenset = frozenset()
    on_disk: frozenset | None = frozenset()
    spent: float = 0.0
    compiled: bool = False  # jit.compiled() has run: the kernels' globals are numba's

    @classmethod
    def now(cls, entries: tuple = ()) -> KernelState:
        """The process's state now, of the entry kernels `entries`."""
        if jit.plain_kernels():
            return _PLAIN
        if jit.compiled_everywhere():
            return _EVERYWHERE
        compiled = jit.is_compiled()
        key = (entries, _spent[0], compiled)
        state = _states.get(key)
        # (kept while no entry it lacks has been compiled since: the one change it can see)
        if state is not None and (len(state.loaded) == len(entries) or not compiled or not any(
                _compiled_here(e) for e in entries if e not in state.loaded)):
            return state
        for entry in entries:
            if entry not in _loaded and compiled and _compiled_here(entry):
                _loaded.add(entry)
        loaded = frozenset(e for e in entries if e in _loaded)
        state = cls(loaded=loaded, on_disk=None if len(loaded) < len(entries) else frozenset(),
                    spent=_spent[0], compiled=compiled)
        if len(_states) >= 64:
            _states.clear()
        _states[key] = state
        return state

    def _on_disk(self, entries: tuple) -> bool:
        if self.on_disk is None:  # (the process's cache, read now)
            return all(jit.on_disk(*e) for e in entries)
        return self.on_disk.issuperset(entries)

    def ready(self, entries: tuple) -> bool:
        """Whether calling the compiled kernels `entries` now costs no compiling, for a
        kernel that has a Python twin (the side builder, the merged walks: compile.sides,
        solver.tables): jit.compiled() has run and every solve runs compiled kernels, or each
        is compiled in this process or held by numba's cache.  A process that has compiled
        some kernels (Monte Carlo) keeps to the Python twin while these are cold."""
        return not self.plain and (self.everywhere or (self.compiled and (
            self.loaded.issuperset(entries) or self._on_disk(entries))))

    def compiles(self, seconds: float, limits: Budgets, entries: tuple) -> bool:
        """Whether a solve of this estimate runs compiled kernels (its entry kernels
        `entries`): always once every solve does, and where they are compiled in this process
        already; else once this process's plain-Python solves, this one's included, reach
        limits.python_budget and numba's cache holds them (loading them costs about that
        much), or reach limits.python_budget_cold (compiling them costs far more, and saves
        them for the next process).  Never where every kernel stays plain."""
        if self.plain:
            return False
        if self.everywhere or self.loaded.issuperset(entries):
            return True
        python = self.spent + seconds * limits.python_slowdown
        if python < limits.python_budget:
            return False
        return python >= limits.python_budget_cold or self._on_disk(entries)


def _compiled_here(entry: tuple) -> bool:
    """jit.loaded(*entry) once jit.compiled() has run (the kernels' globals are numba's
    dispatchers for good), each dispatcher looked up once."""
    dispatcher = _dispatchers.get(entry)
    if dispatcher is None:
        dispatcher = _dispatchers[entry] = getattr(importlib.import_module(entry[0]), entry[1])
    return bool(getattr(dispatcher, "overloads", None))


_PLAIN = KernelState(plain=True)
_EVERYWHERE = KernelState(everywhere=True, compiled=True)
