"""The hit laws of battlecalc.dice against exact fractions: a binomial term rounded once, a
law of mixed dice within a few ulps, the long laws within their stated bound."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from battlecalc.dice import binomial_law, hit_distribution, hit_ratio


def _exact_binomial(n: int, p: Fraction) -> list[Fraction]:
    return [math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)]


def _exact_law(groups: dict[tuple[int, int], int], die: int) -> list[Fraction]:
    law = [Fraction(1)]
    for (value, best_of), n in groups.items():
        p = 1 - (1 - Fraction(min(value, die), die)) ** best_of
        term = _exact_binomial(n, p)
        out = [Fraction(0)] * (len(law) + n)
        for i, a in enumerate(law):
            for j, b in enumerate(term):
                out[i + j] += a * b
        law = out
    return law


@pytest.mark.parametrize("value, best_of, die, expected", [
    (1, 1, 6, (1, 6)), (2, 1, 6, (1, 3)), (6, 1, 6, (1, 1)), (9, 1, 6, (1, 1)),
    (4, 2, 6, (8, 9)), (1, 2, 6, (11, 36)), (3, 1, 12, (1, 4))])
def test_a_dice_chance_in_lowest_terms(value, best_of, die, expected):
    assert hit_ratio(value, best_of, die) == expected


@pytest.mark.parametrize("n", [1, 2, 7, 30, 120, 200])
@pytest.mark.parametrize("hit, whole", [(1, 6), (1, 3), (5, 6), (11, 36), (35, 36)])
def test_each_binomial_term_is_the_exact_one_rounded_once(n, hit, whole):
    law = binomial_law(n, hit, whole)
    assert law.tolist() == [float(x) for x in _exact_binomial(n, Fraction(hit, whole))]


@pytest.mark.parametrize("n", [201, 450])
@pytest.mark.parametrize("hit, whole", [(1, 6), (5, 6), (8, 9), (215, 216)])
def test_a_long_binomial_within_n_ulps(n, hit, whole):
    # (p near 1 once lost digits in 1 - p: 43 terms past the bound at 5/6, n = 201)
    exact = _exact_binomial(n, Fraction(hit, whole))
    for got, x in zip(binomial_law(n, hit, whole).tolist(), exact, strict=True):
        if x > Fraction(1, 10**290):  # (far below, the recurrence underflows to 0 first)
            assert abs(Fraction(got) - x) <= n * Fraction(2) ** -52 * x


@pytest.mark.parametrize("groups", [{(1, 1): 3, (2, 1): 2, (3, 1): 4},
                                    {(4, 2): 2, (1, 1): 9, (3, 1): 1, (2, 1): 5},
                                    {(1, 1): 40, (2, 1): 10, (3, 1): 10, (4, 1): 8}])
def test_a_law_of_mixed_dice_within_a_few_ulps(groups):
    got = hit_distribution(groups, 6)
    exact = _exact_law(groups, 6)
    assert len(got) == len(exact)
    for g, x in zip(got.tolist(), exact, strict=True):
        assert abs(Fraction(g) - x) <= 4 * Fraction(math.ulp(float(x)))


def test_a_long_binomial_of_a_chance_that_rounds_to_one():
    # the best of 21 dice hitting on 5: 1 - 6^-21 is 1.0 as a float (a ZeroDivisionError
    # in 1 / (1 - p) before the odds came from whole numbers)
    hit, whole = hit_ratio(5, 21, 6)
    assert hit / whole == 1.0 and hit < whole
    exact = _exact_binomial(201, Fraction(hit, whole))
    for got, x in zip(binomial_law(201, hit, whole).tolist(), exact, strict=True):
        if x > Fraction(1, 10**290):
            assert abs(Fraction(got) - x) <= 201 * Fraction(2) ** -52 * x
