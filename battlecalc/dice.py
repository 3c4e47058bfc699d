"""Dice: how many hits a group of units scores in one fire step.

Every fire step (general fire, AA, bombardment) goes through :func:`hit_distribution`: units
roll dice with integer hit values on the edition's die (a die hits when it rolls at most the
value), grouped as ``{(value, best_of): dice}``; ``best_of`` > 1 is a unit rolling that many
dice of which the best counts (at most one hit).  The dice model is "standard" (every die rolled)
or "low_luck" (the strength of the group, the sum of its values, gives one sure hit per full die
size and one die for the remainder).  The die is the edition's fair die of die_size faces, or a
biased die (battlecalc.die_law.DieLaw: a unit of value v hits on faces 1..v, with the exact
chance of those faces), standard dice only.  Which units fire together as one group is the round
model's business (kernels/round_model.py); this module gives the law of one group.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping

import numpy as np

from .die_law import DieLaw

DiceGroups = Mapping[tuple[int, int], int]  # (hit value, best of) -> number of dice


# Every law here is computed with + - * / and sums in a fixed order, never with numpy's exp, log
# or power, nor with np.convolve: numpy picks their code by CPU (SIMD exp/log/power that differ
# in the last bit between an AVX-512 and an AVX2 machine, BLAS's dot inside np.convolve), and
# the same battle must give the same numbers, to the last bit, on any machine.


@functools.lru_cache(maxsize=4096)
def binomial_law(n: int, hit: int, whole: int) -> np.ndarray:
    """pmf of Binomial(n, hit / whole) as an array of length n+1; cached, so the returned array
    is shared and read-only.  Up to n = 200 each term, C(n, k) hit^k (whole - hit)^(n - k) /
    whole^n, is computed in whole numbers and rounded once to the nearest float (a die's
    chance, 2/6 say, in small numbers: quick); beyond, the terms' ratios from the mode
    outward, normalised (relative error about n x 1e-16)."""
    if n == 0 or hit <= 0 or hit >= whole:
        out = np.zeros(n + 1)
        out[n if hit >= whole else 0] = 1.0
        out.flags.writeable = False
        return out
    if n <= 200:
        miss, total = whole - hit, whole**n
        hits, misses = [1] * (n + 1), [1] * (n + 1)
        for k in range(1, n + 1):
            hits[k], misses[k] = hits[k - 1] * hit, misses[k - 1] * miss
        # whole numbers to the one division, which Python rounds correctly (to 0.0 when tiny)
        out = np.array([math.comb(n, k) * hits[k] * misses[n - k] / total
                        for k in range(n + 1)])
    else:
        # (the odds from the whole numbers: 1 - p in floats loses digits as p nears 1)
        odds, mode = hit / (whole - hit), min((n + 1) * hit // whole, n)
        terms = [0.0] * (n + 1)
        terms[mode] = 1.0
        for k in range(mode, n):  # P(k + 1) / P(k) = (n - k) / (k + 1) x p / (1 - p)
            terms[k + 1] = terms[k] * ((n - k) / (k + 1) * odds)
        for k in range(mode, 0, -1):
            terms[k - 1] = terms[k] * (k / (n - k + 1) / odds)
        out = np.array(terms)
        out /= np.add.reduce(out)
    out.flags.writeable = False
    return out


def convolve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """np.convolve(a, b) of two float vectors, the same on every CPU: numpy's convolve of
    doubles adds each term with BLAS's dot, whose kernel OpenBLAS picks by CPU, and of long
    doubles with a plain loop (its sums, in 64-bit mantissas, then rounded once).  Long double
    is x87's 80 bits on x86-64 Linux and macOS, a plain double with MSVC (Windows) and 128
    bits on ARM: there the last bits differ (a fixed-order sum of doubles would agree
    everywhere, at 10-20 us a convolution against 3-6: a cold big battle 4 ms slower)."""
    return np.convolve(np.asarray(a, np.longdouble),
                       np.asarray(b, np.longdouble)).astype(np.float64)


def hit_ratio(value: int, best_of: int, die: int | DieLaw) -> tuple[int, int]:
    """Chance that one unit's roll hits, exactly, as (hits, whole) in lowest terms: on a fair
    die of `die` faces value/die, on a biased one (a DieLaw) the chance H/W of faces
    1..value; the best of `best_of` dice 1 - ((W - H)/W)^best_of."""
    if type(die) is int:
        face, faces = min(value, die), die
    else:
        face, faces = die.at_most(value), die.whole
    whole = faces**best_of
    hits = whole - (faces - face) ** best_of
    common = math.gcd(hits, whole)
    return hits // common, whole // common


def hit_chance(value: int, best_of: int, die: int | DieLaw) -> float:
    """Chance that one unit's roll hits (hit_ratio, rounded once)."""
    hits, whole = hit_ratio(value, best_of, die)
    return hits / whole


def faces(die: int | DieLaw) -> int:
    """The number of faces of a die (a fair die's size, or a law's faces)."""
    return die if type(die) is int else die.faces


def hit_distribution(dice: DiceGroups, die: int | DieLaw = 6,
                     model: str = "standard") -> np.ndarray:
    """Law of the number of hits of one fire step: pmf[h] for h = 0..most hits.  Read-only.
    die: a fair die's number of faces, or a biased die's law (standard dice only)."""
    groups = tuple(sorted((v, b, n) for (v, b), n in dice.items() if n > 0 and v > 0))
    return _hit_distribution(groups, die, model)


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
def _hit_distribution(groups: tuple[tuple[int, int, int], ...], die_size: int | DieLaw,
                      model: str) -> np.ndarray:
    if model == "low_luck":
        if type(die_size) is not int:  # (refused by the spec, by name: docs/rules.md)
            raise ValueError("low luck rolls the edition's fair die, not a die law")
        sure, chance = low_luck_hits(strength({(v, b): n for v, b, n in groups}, die_size),
                                     die_size)
        pmf = np.zeros(sure + (2 if chance else 1))
        pmf[sure] = 1.0 - chance
        if chance:
            pmf[sure + 1] = chance
    else:
        by_chance: dict[tuple[int, int], int] = {}
        for v, b, n in groups:
            chance = hit_ratio(v, b, die_size)
            by_chance[chance] = by_chance.get(chance, 0) + n
        pmf = np.ones(1)
        for chance in sorted(by_chance, key=lambda ratio: ratio[0] / ratio[1]):
            pmf = convolve(pmf, binomial_law(by_chance[chance], *chance))
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
              die: int | DieLaw = 6) -> float:
    """Expected hits of a force in one round of general fire."""
    return sum(hit_chance(v, b, die) * n
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
