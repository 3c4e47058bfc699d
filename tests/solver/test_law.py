"""The solvers' one final-law contract (solver.FinalLaw): an exact solve's probabilities and a
Monte Carlo run's counts, the same fields.

1 infantry against 1 infantry (Revised): the attacker hits on 1 (1/6), the defender on 2 (2/6),
so a round ends the battle with probability 16/36: the attacker alone hits 4/36, the defender
alone 10/36, both 2/36.  Outcomes 1/4, 5/8, 1/8; rounds geometric with p = 16/36 (mean 9/4,
variance (1 - p) / p**2); TUV swing +3 (attacker wins), -3 (defender wins), 0 (both die).
"""

from __future__ import annotations

import dataclasses
import math
from types import SimpleNamespace

import numpy as np
import pytest
from helpers import MC_TRIALS

from battlecalc import solver
from battlecalc.api import make_battle
from battlecalc.compile import compile_battle
from battlecalc.solver import FinalLaw
from battlecalc.solver.montecarlo import run_monte_carlo

OUTCOMES = np.array([1 / 4, 5 / 8, 1 / 8, 0.0, 0.0])
P_END = 16 / 36
MEAN_ROUNDS = 1 / P_END
ROUNDS_VARIANCE = (1 - P_END) / P_END**2
SWING = {-3: 5 / 8, 0: 1 / 8, 3: 1 / 4}
SWING_MEAN = 3 * (1 / 4 - 5 / 8)
SWING_VARIANCE = 9 * (1 / 4 + 5 / 8) - SWING_MEAN**2


@pytest.fixture(scope="module")
def one_on_one():
    return compile_battle(make_battle("revised", "1 inf", "1 inf"))


def _exact(compiled, rounds: bool = False) -> FinalLaw:
    return solver.solve(compiled, solver.choose(compiled, "exact", rounds_distribution=rounds))


def test_exact_final_law(one_on_one):
    law = _exact(one_on_one, rounds=True)
    assert isinstance(law, FinalLaw) and law.total == 1.0 and law.trials is None
    np.testing.assert_allclose(law.outcomes, OUTCOMES, atol=1e-12)
    assert law.takes == pytest.approx(1 / 4, abs=1e-12)
    assert law.mean_rounds == pytest.approx(MEAN_ROUNDS, abs=1e-12)
    assert len(law.rounds_hist) == solver.ROUNDS_BINS
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
    plain = _exact(one_on_one)
    assert plain.rounds_hist is None
    np.testing.assert_allclose(plain.outcomes, OUTCOMES, atol=1e-12)


def test_monte_carlo_final_law_has_the_same_fields_as_counts(one_on_one, assert_mc_agrees):
    trials = MC_TRIALS
    law = run_monte_carlo(one_on_one, trials, 3)
    assert isinstance(law, FinalLaw) and law.total == trials and law.trials == trials
    assert {f.name for f in dataclasses.fields(law)} == {
        f.name for f in dataclasses.fields(_exact(one_on_one))}
    assert law.outcomes.sum() == trials and law.rounds_hist.sum() == trials
    assert law.a_final.sum() == trials and law.d_final.sum() == trials
    assert law.swing[1].sum() == trials and law.pruned == 0.0
    # the counts as a sample, the means' standard errors from the exact variances
    sample = SimpleNamespace(
        trials=trials, **{f"outcome_{i}": c / trials for i, c in enumerate(law.outcomes)},
        takes=law.takes / trials, mean_rounds=law.mean_rounds,
        swing=law.swing_sum / trials,
        stderr={"mean_rounds": math.sqrt(ROUNDS_VARIANCE / trials),
                "swing": math.sqrt(SWING_VARIANCE / trials)})
    exact = {**{f"outcome_{i}": p for i, p in enumerate(OUTCOMES)}, "takes": 1 / 4,
             "mean_rounds": MEAN_ROUNDS, "swing": SWING_MEAN}
    assert_mc_agrees(sample, exact, probabilities=[*(f"outcome_{i}" for i in range(5)),
                                                   "takes"],
                     means=("mean_rounds", "swing"), slack=0.0)
    weights = dict(zip(law.swing[0].tolist(), law.swing[1].tolist(), strict=True))
    assert {v for v, w in weights.items() if w > 0} == set(SWING)
