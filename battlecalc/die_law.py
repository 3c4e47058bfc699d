"""A biased die: the law of its faces given as exact probabilities (docs/rules.md, "Biased
dice").

Face k (1..n) comes up with probability p_k, exact rationals summing to exactly 1; a unit of
value v hits on faces 1..v, with probability p_1 + ... + p_v.  :class:`DieLaw` holds the
probabilities as whole weights over their least common denominator (in lowest terms: equal
laws are equal values), so every chance the engine computes from it stays a ratio of whole
numbers (battlecalc.dice.hit_ratio).  The denominator is at most :data:`MAX_WHOLE`, which
bounds the whole numbers of a law of 200 dice at 200 x log2(MAX_WHOLE x best of) bits.

:func:`read_die_law` reads one from text (``"1/6,1/6,1/6,1/6,1/6,1/6"``, ``"0.3 0.2 0.2 0.1
0.1 0.1"``) or a list of numbers; decimals are read as the exact decimal fractions written,
never as binary floats (a float given by a program is read as the shortest decimal that is
that float: 0.1 is 1/10).  The standard library only: the command line reads it without the
engine.
"""

from __future__ import annotations

import decimal
import math
import numbers
import re
from fractions import Fraction
from typing import Any, NamedTuple

from .errors import BattleInputError, quoted

MAX_WHOLE = 10**6  # the largest common denominator of a die law's probabilities
MAX_FACES = 100  # (an edition's die has at most 100 faces: rules' die_size)
MAX_LAW_TEXT = 1000  # characters of a die law written as text
_FRACTION = re.compile(r"[0-9]{1,12}/[0-9]{1,12}")
_DECIMAL = re.compile(r"(?:[0-9]{1,12}\.?[0-9]{0,12}|\.[0-9]{1,12})")
_SEPARATOR = re.compile(r"\s*[,;\s]\s*")

NAME = "die_law"


class DieLaw(NamedTuple):
    """The law of a die's faces: face k (1-based) comes up with probability weights[k - 1] /
    whole, whole = sum(weights), the weights in lowest terms (their gcd 1)."""

    weights: tuple[int, ...]

    @property
    def faces(self) -> int:
        return len(self.weights)

    @property
    def whole(self) -> int:
        return sum(self.weights)

    def at_most(self, value: int) -> int:
        """The weight of faces 1..value (a unit of that value hits on them): its chance of
        hitting is at_most(value) / whole."""
        return sum(self.weights[:max(0, min(value, self.faces))])

    def probabilities(self) -> tuple[Fraction, ...]:
        whole = self.whole
        return tuple(Fraction(w, whole) for w in self.weights)

    @property
    def fair(self) -> bool:
        """Every face equally likely (the edition's own die)."""
        return len(set(self.weights)) == 1

    def text(self) -> str:
        """The law as read_die_law reads it, in lowest terms: ``"1/3,1/6,1/6,1/6,1/12,1/12"``
        (the results' die_law)."""
        return ",".join(str(p) for p in self.probabilities())

    def __repr__(self) -> str:
        return f"DieLaw({self.text()!r})"


def of(probabilities) -> DieLaw:
    """A DieLaw from exact probabilities (Fractions, ints) that sum to 1 (unchecked here:
    read_die_law checks)."""
    probabilities = [Fraction(p) for p in probabilities]
    whole = math.lcm(*(p.denominator for p in probabilities))
    weights = [int(p * whole) for p in probabilities]
    common = math.gcd(*weights)
    return DieLaw(tuple(w // common for w in weights))


def _fail(what: str, value: Any) -> BattleInputError:
    return BattleInputError(f"{NAME} must be {what}, got {quoted(value)}")


_WHAT = ("six probabilities of the faces 1..6 that sum to exactly 1, as fractions or decimals "
         'such as "1/6,1/6,1/6,1/6,1/6,1/6"')


def _one(value: Any, whole: Any) -> Fraction:
    """One face's probability, exactly."""
    if isinstance(value, bool) or (type(value).__name__ == "bool_"):
        raise _fail(_WHAT, whole)
    if isinstance(value, Fraction) or isinstance(value, numbers.Integral):
        return Fraction(value)
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            raise _fail(_WHAT, whole)
        return Fraction(value)
    if isinstance(value, numbers.Real):  # a program's float: the decimal that is it
        number = float(value)
        if not math.isfinite(number):
            raise _fail(_WHAT, whole)
        return Fraction(decimal.Decimal(repr(number)))
    if not isinstance(value, str):
        raise _fail(_WHAT, whole)
    text = value.strip()
    if _FRACTION.fullmatch(text):
        top, bottom = (int(part) for part in text.split("/"))
        if bottom == 0:
            raise BattleInputError(f"{NAME}: {quoted(text)} divides by zero")
        return Fraction(top, bottom)
    if _DECIMAL.fullmatch(text):
        return Fraction(decimal.Decimal(text))
    if text.startswith("-"):
        raise BattleInputError(
            f"{NAME}: every probability must be between 0 and 1, got {quoted(text)}")
    raise _fail(_WHAT, whole)


def read_die_law(value: Any, faces: int | None = None) -> DieLaw | None:
    """A die law from text or a list of numbers (None where empty); faces: the number of
    probabilities wanted (the edition's die size; None: any number from 2 to MAX_FACES).
    BattleInputError, one line, for anything that is not exactly such a law."""
    if value is None:
        return None
    if isinstance(value, DieLaw):
        parts: list = list(value.probabilities())
    elif isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        if len(text) > MAX_LAW_TEXT:
            raise _fail(f"at most {MAX_LAW_TEXT} characters", value)
        parts = _SEPARATOR.split(text.strip("[]() "))
    elif isinstance(value, (list, tuple)):
        parts = list(value)
        if len(parts) > MAX_FACES:
            raise _fail(_WHAT, value)
    else:
        raise _fail(_WHAT, value)
    if isinstance(value, DieLaw):
        value = value.text()  # (as the messages quote it)
    probabilities = [_one(part, value) for part in parts]
    wanted = 6 if faces is None else faces
    if faces is not None and len(parts) != faces or not 2 <= len(parts) <= MAX_FACES:
        raise BattleInputError(
            f"{NAME} must give {wanted} probabilities, one for each face of the die, got "
            f"{len(parts)}: {quoted(value)}")
    for p in probabilities:
        if not 0 <= p <= 1:
            raise BattleInputError(
                f"{NAME}: every probability must be between 0 and 1, got {p} in {quoted(value)}")
    total = sum(probabilities)
    if total != 1:
        raise BattleInputError(
            f"{NAME}: the probabilities must sum to exactly 1, they sum to {total} "
            f"({quoted(value)})")
    law = of(probabilities)
    if law.whole > MAX_WHOLE:
        raise BattleInputError(
            f"{NAME}: the probabilities' common denominator is {law.whole:,}, at most "
            f"{MAX_WHOLE:,} is taken (round them to 6 decimals)")
    return law
