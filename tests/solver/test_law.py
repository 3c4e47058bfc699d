"""The solvers' one final-law contract (results.FinalLaw) and what the compiled battle says of
itself (no sentinel read above compile).

1 infantry against 1 infantry (Revised): the attacker hits on 1 (1/6), the defender on 2 (2/6),
so a round ends the battle with probability 16/36: the attacker alone hits 4/36, the defender
alone 10/36, both 2/36.  Outcomes 1/4, 5/8, 1/8; rounds geometric with p = 16/36 (mean 9/4,
variance (1 - p) / p**2); TUV swing +3 (attacker wins), -3 (defender wins), 0 (both die).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from battlecalc.api import make_battle
from battlecalc.compile import compile_battle
from battlecalc.kernels.exact import run_exact
from battlecalc.kernels.montecarlo import ROUNDS_BINS, run_monte_carlo
from battlecalc.results import FinalLaw

OUTCOMES = np.array([1 / 4, 5 / 8, 1 / 8, 0.0, 0.0])
P_END = 16 / 36
MEAN_ROUNDS = 1 / P_END
ROUNDS_VARIANCE = (1 - P_END) / P_END**2
SWING = {-3: 5 / 8, 0: 1 / 8, 3: 1 / 4}
TRIALS = 40_000


@pytest.fixture(scope="module")
def one_on_one():
    return compile_battle(make_battle("revised", "1 inf", "1 inf"))


def test_exact_final_law(one_on_one):
    law = run_exact(one_on_one, ROUNDS_BINS)
    assert isinstance(law, FinalLaw) and law.total == 1.0 and law.trials is None
    np.testing.assert_allclose(law.outcomes, OUTCOMES, atol=1e-12)
    assert law.takes == pytest.approx(1 / 4, abs=1e-12)
    assert law.mean_rounds == pytest.approx(MEAN_ROUNDS, abs=1e-12)
    rounds = np.arange(len(law.rounds_hist))
    expected = np.where(rounds > 0, P_END * (1 - P_END) ** (rounds - 1.0), 0.0)
    expected[-1] = (1 - P_END) ** (len(rounds) - 2)  # last bin: that many rounds or more
    np.testing.assert_allclose(law.rounds_hist, expected, atol=1e-12)
    assert dict(zip(law.swing[0].tolist(), law.swing[1].tolist(), strict=True)) == (
        pytest.approx(SWING, abs=1e-12))
    assert law.swing_sum == pytest.approx(3 * (1 / 4 - 5 / 8), abs=1e-12)
    assert law.swing_sq_sum == pytest.approx(9 * (1 / 4 + 5 / 8), abs=1e-12)
    assert 0.0 <= law.pruned < 1e-12
    # without the law of rounds: the same law, rounds_hist not computed
    plain = run_exact(one_on_one)
    assert plain.rounds_hist is None
    np.testing.assert_allclose(plain.outcomes, OUTCOMES, atol=1e-12)


def test_monte_carlo_final_law_has_the_same_fields_as_counts(one_on_one):
    law = run_monte_carlo(one_on_one, TRIALS, 3)
    assert isinstance(law, FinalLaw) and law.total == TRIALS and law.trials == TRIALS
    assert {f.name for f in dataclasses.fields(law)} == {
        f.name for f in dataclasses.fields(run_exact(one_on_one))}
    assert law.outcomes.sum() == TRIALS and law.rounds_hist.sum() == TRIALS
    assert law.a_final.sum() == TRIALS and law.d_final.sum() == TRIALS
    assert law.swing[1].sum() == TRIALS and law.pruned == 0.0
    for count, p in zip(law.outcomes, OUTCOMES, strict=True):
        assert abs(count / TRIALS - p) <= 4 * math.sqrt(p * (1 - p) / TRIALS)
    assert abs(law.takes / TRIALS - 1 / 4) <= 4 * math.sqrt(3 / 16 / TRIALS)
    assert abs(law.mean_rounds - MEAN_ROUNDS) <= 4 * math.sqrt(ROUNDS_VARIANCE / TRIALS)
    swing_mean = 3 * (1 / 4 - 5 / 8)
    swing_var = 9 * (1 / 4 + 5 / 8) - swing_mean**2
    assert abs(law.swing_sum / TRIALS - swing_mean) <= 4 * math.sqrt(swing_var / TRIALS)
    weights = dict(zip(law.swing[0].tolist(), law.swing[1].tolist(), strict=True))
    assert {v for v, w in weights.items() if w > 0} == set(SWING)


def test_the_compiled_battle_says_what_the_api_asks():
    plain = compile_battle(make_battle("1942-2e", "3 inf 2 tank", "4 inf"))
    assert plain.retreat_below is None and not plain.has_partial_retreat
    below = compile_battle(make_battle("1942-2e", "3 inf 2 tank", "4 inf", retreat={"below": 0.4}))
    assert below.retreat_below == 0.4 and not below.has_partial_retreat
    # a land retreat takes every unit along
    full = compile_battle(make_battle("1942-2e", "3 inf 2 tank", "4 inf", retreat={"after": 1}))
    assert full.retreat_below is None and not full.has_partial_retreat
    # an amphibious assault: the fighter may withdraw, the landed infantry stay
    partial = compile_battle(make_battle("1942-2e", "1 ftr", "2 inf", landing="2 inf",
                                         retreat={"after": 1}))
    assert partial.has_partial_retreat
