"""The formula combat model (seed-002 fan game, rules reference §9; docs/formula.md).

Editions with ``model = "formula"`` (the shipped one is ``formula``) are solved here, not by the
dice engine: :func:`simulate_formula` returns a :class:`FormulaResult`.
"""

from .engine import FormulaResult, make_formula_battle, simulate_formula

__all__ = ["FormulaResult", "make_formula_battle", "simulate_formula"]
