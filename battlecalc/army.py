"""Army notation: ``"3 infantry, 2 artillery, 1 tank"`` or ``"3inf 2art 1arm"``.

Counts come before names (a bare name means one unit), separated by commas or spaces,
case-insensitive, canonical names or the aliases players use.
"""

from __future__ import annotations

import difflib
import re

from .errors import BattleInputError, quoted
from .rules import Ruleset

MAX_UNITS_PER_TYPE = 1000

# One entry: an optional signed count, then a name made of letters and underscores.
_ENTRY = re.compile(r"\s*(?:(?P<count>[+-]?\d+)\s*)?(?P<name>[^\W\d_][^\W\d]*(?:-[^\W\d]+)*)")
# A count written as a fraction or in scientific notation ("1e3 inf", "2.5 tank").
_NOT_WHOLE = re.compile(r"\s*(?P<count>[+-]?(?:\d+[eE][+-]?\d+|\d*\.\d+(?:[eE][+-]?\d+)?))")


def resolve_unit_name(name: str, ruleset: Ruleset) -> str:
    """Canonical unit name for a name or alias; unknown names get the closest suggestion."""
    key = name.strip().lower().replace("-", "_")
    if key in ruleset.aliases:
        return ruleset.aliases[key]
    if key.endswith("s") and key[:-1] in ruleset.aliases:  # "tanks", "fighters"
        return ruleset.aliases[key[:-1]]
    close = difflib.get_close_matches(key, list(ruleset.aliases), n=1, cutoff=0.6)
    hint = f"; did you mean {ruleset.aliases[close[0]]!r}?" if close else ""
    raise BattleInputError(
        f"unknown unit {quoted(name)} in {ruleset.id}{hint} "
        f"(units: {', '.join(ruleset.units)})"
    )


def parse_army(text: str, ruleset: Ruleset) -> dict[str, int]:
    """Parse army notation into ``{canonical unit name: count}`` in the edition's unit order.

    Raises BattleInputError for unknown names, zero or negative counts, absurd counts and
    anything that is not army notation.
    """
    if text is None:
        return {}
    counts: dict[str, int] = {}
    position = 0
    source = text.strip()
    while position < len(source):
        if bad := _NOT_WHOLE.match(source, position):
            raise BattleInputError(
                f"cannot read army {quoted(text)}: count {quoted(bad.group('count'))} is not a "
                "whole number; write counts in digits, e.g. '1000 infantry'"
            )
        match = _ENTRY.match(source, position)
        if not match or match.end() == position:
            rest = source[position:].strip()
            raise BattleInputError(
                f"cannot read army {quoted(text)} near {rest[:20]!r}: "
                "write counts before unit names, e.g. '3 infantry, 1 tank' or '3inf 1arm'"
            )
        position = match.end()
        while position < len(source) and source[position] in " ,":
            position += 1
        name = resolve_unit_name(match.group("name"), ruleset)
        count_text = match.group("count") or "1"
        digits = count_text.lstrip("+-").lstrip("0")
        # Python refuses to turn over 4,300 digits into an int: a long count reads as 10**30
        count = int(count_text) if len(digits) < 30 else 10**30 * (-1 if "-" in count_text else 1)
        if count <= 0:
            shown = count_text if len(digits) < 30 else count_text[:30] + "…"
            raise BattleInputError(
                f"count for {name} must be at least 1, got {shown} in {quoted(text)}"
            )
        counts[name] = counts.get(name, 0) + count
        if counts[name] > MAX_UNITS_PER_TYPE:
            total = counts[name] if count < 10**30 else "over 10**30"
            raise BattleInputError(
                f"{total} {name} is more than the {MAX_UNITS_PER_TYPE} per unit type "
                "battlecalc accepts"
            )
    return {name: counts[name] for name in ruleset.units if name in counts}


def format_army(counts: dict[str, int]) -> str:
    """Canonical notation for a parsed army, e.g. ``"3 infantry, 1 tank"``."""
    return ", ".join(f"{n} {name}" for name, n in counts.items() if n) or "nothing"
