"""Schema of the ``[formula]`` table of a formula-model edition file (rules reference §9).

A formula-model edition (``model = "formula"``) describes the seed-002 combat: each side rolls
one die, its value is (die + level bonus) x face-up pieces + the sum of the per-type base
values of its face-up pieces, and the difference (attack - defence) is read off a loss table.
The table is data, validated here; :func:`validate_section` is called by
:func:`battlecalc.rules.validate` and appends its problems to the same error list, each with a
path (``formula.formula.loss_table[2].attacker_loses: ...``).

This module must not import :mod:`battlecalc.rules` (which loads it, by name, for formula
editions: rules.MODEL_SECTIONS).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

FORMULA_KEYS = ("die", "min_level", "max_level", "level_thresholds", "loss_table")
LOSS_ROW_KEYS = ("diff_at_least", "attacker_loses", "defender_loses")
MAX_DIE = 100
MAX_LEVEL = 100
MAX_LOSS_PER_ROW = 100
MAX_DIFF = 10_000
EXAMPLE_ROW = "{ diff_at_least = 6, attacker_loses = 0, defender_loses = 5 }"


def _int_problem(value: Any, lo: int, hi: int) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        return f"expected an integer {lo}..{hi}, got {value!r}"
    return None


def _validate_loss_table(raw: Any, path: str, errors: list[str]) -> tuple | None:
    """Rows ``(diff_at_least or None, attacker_loses, defender_loses)``, best row first."""
    if not isinstance(raw, list) or not raw:
        errors.append(f"{path}: expected a non-empty list of rows like {EXAMPLE_ROW}")
        return None
    rows = []
    previous: int | None = None
    ok = True
    for index, row in enumerate(raw):
        row_path = f"{path}[{index}]"
        last = index == len(raw) - 1
        if not isinstance(row, dict):
            errors.append(f"{row_path}: expected a table like {EXAMPLE_ROW}")
            ok = False
            continue
        for key in row:
            if key not in LOSS_ROW_KEYS:
                errors.append(f"{row_path}.{key}: unknown key")
                ok = False
        losses = []
        for key in ("attacker_loses", "defender_loses"):
            if key not in row:
                errors.append(f"{row_path}.{key}: missing")
                ok = False
            elif problem := _int_problem(row[key], 0, MAX_LOSS_PER_ROW):
                errors.append(f"{row_path}.{key}: {problem}")
                ok = False
            else:
                losses.append(row[key])
        if len(losses) == 2 and losses == [0, 0]:
            errors.append(
                f"{row_path}: at least one side must lose something "
                "(otherwise exchanges could repeat forever)"
            )
            ok = False
        threshold = row.get("diff_at_least")
        if last:
            if "diff_at_least" in row:
                errors.append(
                    f"{row_path}.diff_at_least: the last row covers every lower difference "
                    "and takes no diff_at_least"
                )
                ok = False
        elif "diff_at_least" not in row:
            errors.append(f"{row_path}.diff_at_least: missing (only the last row omits it)")
            ok = False
        elif problem := _int_problem(threshold, -MAX_DIFF, MAX_DIFF):
            errors.append(f"{row_path}.diff_at_least: {problem}")
            ok = False
        elif previous is not None and threshold >= previous:
            errors.append(
                f"{row_path}.diff_at_least: expected less than the previous row's {previous} "
                f"(rows go from the best difference for the attacker down), got {threshold}"
            )
            ok = False
        else:
            previous = threshold
        if len(losses) == 2:
            rows.append((None if last else threshold, losses[0], losses[1]))
    return tuple(rows) if ok else None


def _piece_types(units: dict[str, Any], prefix: str, errors: list[str]) -> tuple:
    """Pairs (face-up unit, its flipped form) in file order.

    In a formula edition every unit is either a face-up piece type whose ``damaged_form`` names
    its flipped form, or the flipped form of exactly one face-up type.
    """
    flipped_of: dict[str, str] = {}
    for unit in units.values():
        if unit.damaged_form:
            if unit.damaged_form in flipped_of:
                errors.append(
                    f"{prefix}.units.{unit.name}.damaged_form: {unit.damaged_form!r} is already "
                    f"the flipped form of {flipped_of[unit.damaged_form]!r}"
                )
            else:
                flipped_of[unit.damaged_form] = unit.name
    pairs = []
    for unit in units.values():
        if unit.damaged_form:
            flipped = units.get(unit.damaged_form)
            if flipped is not None and flipped.damaged_form:
                errors.append(
                    f"{prefix}.units.{flipped.name}.damaged_form: a flipped form cannot be "
                    "flipped again"
                )
            elif flipped_of.get(unit.damaged_form) == unit.name:
                pairs.append((unit.name, unit.damaged_form))
        elif unit.name not in flipped_of:
            errors.append(
                f"{prefix}.units.{unit.name}.damaged_form: missing (a formula-model unit names "
                "its flipped form, or is the flipped form of another unit)"
            )
    if units and not pairs and not errors:
        errors.append(f"{prefix}.units: a formula edition needs at least one piece type")
    return tuple(pairs)


def validate_section(raw: Any, prefix: str, units: dict[str, Any], errors: list[str]):
    """Check the ``[formula]`` table of a formula-model edition; append problems to `errors`.

    raw: the parsed table; prefix: the edition id used in error paths; units: the edition's
    validated units (name -> Unit).  Returns the read-only parameters (die, min_level,
    max_level, level_thresholds, loss_table rows ``(diff_at_least | None, attacker_loses,
    defender_loses)``, piece_types ``((face-up unit, flipped unit), ...)``) or None when
    something is wrong.
    """
    path = f"{prefix}.formula"
    n_errors = len(errors)
    if not isinstance(raw, dict):
        errors.append(f"{path}: expected a table")
        return None
    for key in raw:
        if key not in FORMULA_KEYS:
            errors.append(f"{path}.{key}: unknown key")
    for key in FORMULA_KEYS:
        if key not in raw:
            errors.append(f"{path}.{key}: missing")
    values: dict[str, Any] = {}
    for key, hi in (("die", MAX_DIE), ("min_level", MAX_LEVEL), ("max_level", MAX_LEVEL)):
        if key in raw:
            lo = 2 if key == "die" else 0
            if problem := _int_problem(raw[key], lo, hi):
                errors.append(f"{path}.{key}: {problem}")
            else:
                values[key] = raw[key]
    if "min_level" in values and "max_level" in values and values["min_level"] > values[
        "max_level"
    ]:
        errors.append(
            f"{path}.max_level: expected at least min_level {values['min_level']}, "
            f"got {values['max_level']}"
        )
    if "level_thresholds" in raw:
        thresholds = raw["level_thresholds"]
        lo, hi = values.get("min_level", 0), values.get("max_level", MAX_LEVEL)
        if (
            not isinstance(thresholds, list)
            or any(_int_problem(t, lo, hi) for t in thresholds)
            or any(b <= a for a, b in zip(thresholds, thresholds[1:], strict=False))
        ):
            errors.append(
                f"{path}.level_thresholds: expected increasing levels {lo}..{hi} at which "
                f"every unit gets +1, got {thresholds!r}"
            )
        else:
            values["level_thresholds"] = tuple(thresholds)
    if "loss_table" in raw:
        table = _validate_loss_table(raw["loss_table"], f"{path}.loss_table", errors)
        if table is not None:
            values["loss_table"] = table
    values["piece_types"] = _piece_types(units, prefix, errors)
    if len(errors) > n_errors:
        return None
    return MappingProxyType(values)
