"""The formula combat model (seed-002 fan game, rules reference §9; docs/formula.md).

Editions with ``model = "formula"`` (the shipped one is ``formula``) are solved here, not by the
dice engine: :func:`simulate_formula` returns a :class:`FormulaResult`.  The names load on first
use, so that validating a formula edition file (battlecalc.formula.schema) loads no engine.
"""

import importlib

__all__ = ["FormulaResult", "make_formula_battle", "simulate_formula"]


def __getattr__(name: str):
    if name in __all__:
        return getattr(importlib.import_module(".engine", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
