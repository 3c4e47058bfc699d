"""Orders of losses: which unit a side loses next.

A side's order of losses is turned into its casualty sequence, the list of casualty steps
(unit, "damage" or "kill") the compiled tables walk along.  Orders come as:

* a preset: ``cheapest`` (the default, Decisions item 8: cheapest first, ties by the lower
  combat value in the side's role), ``weakest`` (lowest combat value first, ties by cost) or
  ``smart`` (each step loses the unit whose loss costs the least firepower, so artillery stays
  paired with infantry; anti-sub ships are kept while the enemy has submarines);
* a comma list of units to lose first: ``bomber,tank`` (then everything else by the preset);
* TripleA's notation: ``*^infantry;*^fighter;1^infantry``.  Sections are taken left to right;
  their counts are resolved from the right: the rightmost section claims its N units first, the
  next one to its left up to its N of what is left, ``*`` everything left of that type.

Whatever the order, healthy two-hit units absorb hits first (naming ``battleship`` or
``damaged_battleship`` only moves where they are sunk), and transports that are chosen last by
the rules (1942 2E) stay last.  ``keep_land`` N: the last N land units are lost only after every
aircraft; ``aa_last``: AAA are lost last instead of first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from types import MappingProxyType

from .army import resolve_unit_name
from .errors import BattleInputError, quoted
from .rules import Ruleset, Unit

PRESETS = ("cheapest", "weakest", "smart")
_SECTION = re.compile(r"^\s*(\*|[+-]?\d+)\s*\^\s*([^\s^;]+)\s*$")


@dataclass(frozen=True)
class LossOrder:
    """A side's order of losses (see the module docstring).  role: "attack" or "defense"."""

    role: str
    preset: str = "cheapest"
    sections: tuple[tuple[str, int | None], ...] = ()  # (unit, count; None = all)
    keep_land: int = 0
    aa_last: bool = False
    enemy_has_subs: bool = False
    text: str = "cheapest"
    # casualties chosen already (a battle that starts where it stands: battlecalc.starts),
    # lost before anything else: (unit, count)
    chosen: tuple[tuple[str, int], ...] = ()
    # the die the smart preset counts expected hits on (a battlecalc.die_law.DieLaw; None: the
    # fair six-sided die)
    die: object = None

    def with_enemy_subs(self, enemy_has_subs: bool) -> LossOrder:
        if self.enemy_has_subs == enemy_has_subs:
            return self  # (frozen: the same order)
        return replace(self, enemy_has_subs=enemy_has_subs)


def parse_loss_order(text: str | list[str] | tuple[str, ...] | None, ruleset: Ruleset,
                     role: str, keep_land: int = 0, aa_last: bool = False) -> LossOrder:
    """Parse an order of losses (text, or a list of unit names to lose first); BattleInputError
    for unknown units or malformed sections."""
    if isinstance(text, (list, tuple)) and all(isinstance(name, str) for name in text):
        text = ",".join(text)
    if text is not None and not isinstance(text, str):
        raise BattleInputError(
            f"an order of losses must be text or a list of unit names, got {quoted(text)}")
    raw = (text or "").strip()
    if not raw or raw.lower() in PRESETS:
        preset = raw.lower() or "cheapest"
        # (smart counts expected hits on the battle's die: a biased one's, Ruleset.die_law)
        die = getattr(ruleset, "die_law", None) if preset == "smart" else None
        key = (role, preset, keep_land, aa_last, die)
        found = _PRESET_ORDERS.get(key)
        if found is None:  # (a preset's order is a value: one object of each kept)
            if len(_PRESET_ORDERS) >= 256:
                _PRESET_ORDERS.clear()
            found = _PRESET_ORDERS[key] = LossOrder(role, preset, (), keep_land, aa_last,
                                                    text=preset, die=die)
        return found
    sections: list[tuple[str, int | None]] = []
    if "^" in raw or ";" in raw:
        for part in raw.split(";"):
            match = _SECTION.match(part)
            if not match:
                raise BattleInputError(
                    f"order of losses {quoted(raw)}: section {quoted(part.strip())} is not "
                    "COUNT^unit or *^unit"
                )
            count_text, name = match.groups()
            count = None if count_text == "*" else _count(count_text)
            if count is not None and count <= 0:
                raise BattleInputError(
                    f"order of losses {quoted(raw)}: count in {quoted(part.strip())} must be "
                    "at least 1"
                )
            sections.append((resolve_unit_name(name, ruleset), count))
    else:
        for name in raw.split(","):
            if not name.strip():
                raise BattleInputError(f"order of losses {quoted(raw)}: empty unit name")
            try:
                sections.append((resolve_unit_name(name, ruleset), None))
            except BattleInputError as exc:
                if "," in raw:
                    raise
                raise BattleInputError(
                    f"order of losses {quoted(raw)} is not a preset ({', '.join(PRESETS)}) "
                    f"nor a unit: {exc}") from None
    return LossOrder(role, "cheapest", tuple(sections), keep_land, aa_last, text=raw)


_PRESET_ORDERS: dict = {}  # (role, preset, keep_land, aa_last, die) -> its LossOrder
MAX_SECTION_COUNT = 10**9  # more units of a type than any battle has: the same as *


def _count(text: str) -> int:
    """A section's count; a count of more digits than Python turns into an int (4,300) or
    simply huge means every unit of the type, as MAX_SECTION_COUNT."""
    digits = text.lstrip("+-").lstrip("0")
    if len(digits) > len(str(MAX_SECTION_COUNT)):
        return -MAX_SECTION_COUNT if text.startswith("-") else MAX_SECTION_COUNT
    return max(min(int(text), MAX_SECTION_COUNT), -MAX_SECTION_COUNT)


def default_loss_order(units: dict[str, Unit], role: str) -> list[str]:
    """Decision 8: by loss rank, then cheapest first, ties by lower combat value in the role."""
    index = {name: i for i, name in enumerate(units)}
    return sorted(
        (u.name for u in units.values() if u.can_be_casualty),
        key=lambda name: (units[name].loss_rank, units[name].cost, units[name].value(role),
                          index[name]),
    )


def _weakest_order(units: dict[str, Unit], role: str) -> list[str]:
    index = {name: i for i, name in enumerate(units)}
    return sorted(
        (u.name for u in units.values() if u.can_be_casualty),
        key=lambda name: (units[name].loss_rank, units[name].value(role), units[name].cost,
                          index[name]),
    )


def _smart_kills(kills: dict[str, int], units: dict[str, Unit], role: str,
                 enemy_has_subs: bool, supports, die=None) -> list[str]:
    """Greedy: lose the unit whose loss costs the least expected hits, then the cheapest."""
    from .dice import firepower  # numpy: only the smart preset needs it, not parsing

    index = {name: i for i, name in enumerate(units)}
    left = {n: c for n, c in kills.items() if c}
    sequence: list[str] = []
    die = 6 if die is None else die
    while left:
        base = firepower(left, units, role, supports, die)
        costs = {}
        for name in left:
            unit = units[name]
            after = dict(left)
            after[name] -= 1
            keep_for_subs = 1 if (enemy_has_subs and unit.anti_sub) else 0
            lost = round(base - firepower(after, units, role, supports, die), 12)
            costs[name] = (unit.loss_rank, keep_for_subs, lost, unit.cost, index[name])
        name = min(left, key=costs.__getitem__)
        sequence.append(name)
        left[name] -= 1
        if not left[name]:
            del left[name]
    return sequence


_BASE_RANKS: dict = {}  # (id(units), role, weakest) -> (units, {unit: place in the order})
MAX_BASE_RANKS = 1024


def _base_rank(units: dict[str, Unit], role: str, weakest: bool) -> dict[str, int]:
    """Each unit's place in the preset's base order (default_loss_order or, for the weakest
    preset, _weakest_order), kept per unit table: a table is one object per edition and set
    of technologies (a read-only MappingProxyType; any other mapping is sorted each time), and
    the sort is most of a small force's casualty steps."""
    kept = isinstance(units, MappingProxyType)
    key = (id(units), role, weakest)
    if kept:
        found = _BASE_RANKS.get(key)
        if found is not None and found[0] is units:
            return found[1]
    base = _weakest_order(units, role) if weakest else default_loss_order(units, role)
    rank = {name: i for i, name in enumerate(base)}
    if not kept:
        return rank
    if len(_BASE_RANKS) >= MAX_BASE_RANKS:
        _BASE_RANKS.clear()
    _BASE_RANKS[key] = (units, rank)  # (holding units: its id is not reused while kept)
    return rank


def casualty_steps(force: dict[str, int], units: dict[str, Unit],
                   order: LossOrder | list[str], supports=()) -> list[tuple[str, str]]:
    """The casualty sequence of a force: (unit name, "damage" | "kill") in the order lost;
    supports (rules.Support) matter to the smart preset only."""
    if not isinstance(order, LossOrder):  # a plain list of unit names, lost in that order
        names = list(order)
        order = LossOrder("attack", "cheapest", tuple((n, None) for n in names))
    if order.chosen:  # lost first, then the rest of the force as the order says
        first = [(name, "kill") for name, count in order.chosen for _ in range(count)]
        rest = dict(force)
        for name, count in order.chosen:
            rest[name] -= count
        return first + casualty_steps({n: c for n, c in rest.items() if c}, units,
                                      replace(order, chosen=()), supports)
    role = order.role
    rank = _base_rank(units, role, order.preset == "weakest")

    # free hits: every healthy multi-hit unit is damaged before anything is killed
    steps: list[tuple[str, str]] = []
    kills = {name: n for name, n in force.items() if n and units[name].can_be_casualty}
    for name in sorted(kills, key=lambda n: rank.get(n, len(rank))):
        unit = units[name]
        if unit.hp > 1:
            steps.extend([(name, "damage")] * (kills[name] * (unit.hp - 1)))
            if unit.damaged_form:
                kills[unit.damaged_form] = kills.get(unit.damaged_form, 0) + kills.pop(name)

    # named sections: counts claimed from the right, units taken from the left
    left = dict(kills)
    claims: list[int] = [0] * len(order.sections)
    for i in range(len(order.sections) - 1, -1, -1):
        name, count = order.sections[i]
        name = units[name].damaged_form or name if units[name].hp > 1 else name
        available = left.get(name, 0)
        take = available if count is None else min(count, available)
        claims[i] = take
        left[name] = available - take
    kill_sequence: list[str] = []
    for (name, _), take in zip(order.sections, claims, strict=True):
        name = units[name].damaged_form or name if units[name].hp > 1 else name
        kill_sequence.extend([name] * take)
    if order.preset == "smart":
        remainder = _smart_kills(left, units, role, order.enemy_has_subs, supports, order.die)
    else:
        remainder = [n for n in sorted(left, key=lambda n: rank.get(n, len(rank)))
                     for _ in range(left[n])]
    if order.aa_last:
        # AAA the order does not place itself go last instead of first
        remainder = ([n for n in remainder if not units[n].is_aa]
                     + [n for n in remainder if units[n].is_aa])
    kill_sequence.extend(remainder)
    if order.keep_land:
        land_positions = [i for i, n in enumerate(kill_sequence) if units[n].is_land]
        kept = set(land_positions[-order.keep_land:])
        air_positions = [i for i, n in enumerate(kill_sequence) if units[n].is_air]
        if air_positions:
            last_air = air_positions[-1]
            moved = [kill_sequence[i] for i in sorted(kept) if i < last_air]
            rest = [n for i, n in enumerate(kill_sequence) if not (i in kept and i < last_air)]
            insert_at = max(i for i, n in enumerate(rest) if units[n].is_air) + 1
            kill_sequence = rest[:insert_at] + moved + rest[insert_at:]
    # transports the rules choose last (1942 2E) stay last whatever the order says
    last = [n for n in kill_sequence if units[n].transport and units[n].defenceless]
    kill_sequence = [n for n in kill_sequence if not (units[n].transport
                                                      and units[n].defenceless)] + last
    steps.extend((name, "kill") for name in kill_sequence)
    return steps
