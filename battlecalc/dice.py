"""Dice: how many hits a group of units scores in one fire step.

Every fire step (general fire, AA, bombardment) goes through :func:`hit_distribution`: units
roll dice with integer hit values on the edition's die (a die hits when it rolls at most the
value), grouped as ``{(value, best_of): dice}``; ``best_of`` > 1 is a unit rolling that many
dice of which the best counts (at most one hit).  The dice model is "standard" (every die rolled)
or "low_luck" (the strength of the group, the sum of its values, gives one sure hit per full die
size and one die for the remainder).  Which units fire together as one group is the round
model's business (kernels/round_model.py); this module gives the law of one group.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping

import numpy as np

DiceGroups = Mapping[tuple[int, int], int]  # (hit value, best of) -> number of dice


@functools.lru_cache(maxsize=4096)
def binomial_pmf(n: int, p: float) -> np.ndarray:
    """pmf of Binomial(n, p) as an array of length n+1 (exact to float rounding); cached,
    so the returned array is shared and read-only."""
    if n == 0 or p <= 0.0 or p >= 1.0:
        out = np.zeros(n + 1)
        out[n if p >= 1.0 else 0] = 1.0
        out.flags.writeable = False
        return out
    k = np.arange(n + 1)
    if n <= 200:
        combs = np.array([float(math.comb(n, i)) for i in range(n + 1)])
        with np.errstate(under="ignore"):
            out = combs * np.power(p, k) * np.power(1.0 - p, n - k)
    else:
        # log C(n, k) as a running sum of log((n - i + 1) / i): O(n), relative error ~1e-12
        log_comb = np.concatenate(
            ([0.0], np.cumsum(np.log(np.arange(n, 0, -1.0)) - np.log(np.arange(1.0, n + 1))))
        )
        with np.errstate(under="ignore"):
            out = np.exp(log_comb + k * math.log(p) + (n - k) * math.log1p(-p))
        out /= out.sum()  # the running sum's rounding, ~1e-13, taken out of the total
    out.flags.writeable = False
    return out


def hit_chance(value: int, best_of: int, die_size: int) -> float:
    """Chance that one unit's roll hits: value/die, or the best of `best_of` dice."""
    chance = min(value, die_size) / die_size
    return 1.0 - (1.0 - chance) ** best_of if best_of > 1 else chance


def hit_distribution(dice: DiceGroups, die_size: int = 6, model: str = "standard") -> np.ndarray:
    """Law of the number of hits of one fire step: pmf[h] for h = 0..most hits.  Read-only."""
    groups = tuple(sorted((v, b, n) for (v, b), n in dice.items() if n > 0 and v > 0))
    return _hit_distribution(groups, die_size, model)


def strength(dice: DiceGroups, die_size: int = 6) -> int:
    """A group's low-luck strength: the sum of its dice values (TripleA's "power"); a unit
    rolling k dice of which the best counts is worth min(value + k - 1, die) (docs/editions.md
    §6), a die that may hit on its own its value."""
    return sum(n * min(v + b - 1, die_size) for (v, b), n in dice.items() if n > 0 and v > 0)


def low_luck_hits(strength_: int, die_size: int = 6) -> tuple[int, float]:
    """(sure hits, chance of one more) of a low-luck group of the given strength."""
    sure, rest = divmod(strength_, die_size)
    return sure, rest / die_size


@functools.lru_cache(maxsize=65536)
def _hit_distribution(groups: tuple[tuple[int, int, int], ...], die_size: int,
                      model: str) -> np.ndarray:
    if model == "low_luck":
        sure, chance = low_luck_hits(strength({(v, b): n for v, b, n in groups}, die_size),
                                     die_size)
        pmf = np.zeros(sure + (2 if chance else 1))
        pmf[sure] = 1.0 - chance
        if chance:
            pmf[sure + 1] = chance
    else:
        by_chance: dict[float, int] = {}
        for v, b, n in groups:
            chance = hit_chance(v, b, die_size)
            by_chance[chance] = by_chance.get(chance, 0) + n
        pmf = np.ones(1)
        for chance in sorted(by_chance):
            pmf = np.convolve(pmf, binomial_pmf(by_chance[chance], chance))
    pmf.flags.writeable = False
    return pmf


def add_dice(dice: dict[tuple[int, int], int], value: int, units: int, dice_per_unit: int = 1,
             best_of: bool = False) -> None:
    """Add `units` units rolling `dice_per_unit` dice at `value` (best one counts if best_of)."""
    if value <= 0 or units <= 0:
        return
    key = (value, dice_per_unit) if best_of and dice_per_unit > 1 else (value, 1)
    count = units if key[1] > 1 else units * dice_per_unit
    dice[key] = dice.get(key, 0) + count


def firepower(force: Mapping[str, int], units, role: str, supports=(),
              die_size: int = 6) -> float:
    """Expected hits of a force in one round of general fire."""
    return sum(hit_chance(v, b, die_size) * n
               for (v, b), n in force_dice(force, units, role, supports).items())


def supported_counts(force: Mapping[str, int], supports) -> dict[str, tuple[int, int]]:
    """Units of each type that get a support bonus: {unit: (supported count, bonus)}.

    supports: rules.Support entries; each giver present supports `count` target units, the
    targets taken in the order listed; a unit gets at most one support bonus.
    """
    supported: dict[str, tuple[int, int]] = {}
    taken: dict[str, int] = {}
    for support in supports:
        capacity = force.get(support.giver, 0) * support.count
        for target in support.targets:
            given = min(force.get(target, 0) - taken.get(target, 0), capacity)
            if given > 0:
                taken[target] = taken.get(target, 0) + given
                capacity -= given
                n, bonus = supported.get(target, (0, support.bonus))
                supported[target] = (n + given, max(bonus, support.bonus))
    return supported


def force_dice(force: Mapping[str, int], units, role: str, supports=()) -> dict:
    """Dice a force rolls in one round of general fire: {(value, best_of): dice}.

    units: unit name -> Unit; role: "attack" or "defense"; supports (rules.Support) count on
    attack only, from the units present.
    """
    dice: dict[tuple[int, int], int] = {}
    supported = supported_counts(force, supports) if role == "attack" else {}
    for name, n in force.items():
        unit = units[name]
        if not n or (role == "attack" and not unit.can_attack):
            continue
        boosted, bonus = supported.get(name, (0, 0))
        value, per_unit = unit.value(role), unit.dice(role)
        add_dice(dice, value + bonus, boosted, per_unit, unit.best_die)
        add_dice(dice, value, n - boosted, per_unit, unit.best_die)
    return dice
