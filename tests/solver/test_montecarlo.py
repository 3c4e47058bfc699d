"""The Monte Carlo driver (solver.montecarlo): trials in chunks of their own random streams,
integer counts, its progress (with the running counts of each outcome where the callback
asks for them), and the general round for every sea battle (the sea walk is the exact
solver's alone).  (Monte Carlo against exact answers: the statistical tests of each kind of
battle, tests/test_land_battles.py, test_sea.py, test_verification.py, ...)"""

from __future__ import annotations

import numpy as np
from helpers import compiled_tables

from battlecalc.kernels.layout import RU_SIMPLE, SIMPLE_EXACT
from battlecalc.solver.montecarlo import CHUNK_TRIALS, run_monte_carlo
from battlecalc.solver.plan import without_sea_walk


def _law(law) -> list:
    return [law.outcomes.tolist(), law.takes, law.a_final.tolist(), law.d_final.tolist(),
            law.mean_rounds, law.rounds_hist.tolist(), law.swing[0].tolist(),
            law.swing[1].tolist()]


def test_monte_carlo_keeps_the_general_round():
    # the same seed gives the same draws whether the battle may take the exact solver's walk
    # path (RU_SIMPLE SIMPLE_EXACT) or not (0): Monte Carlo plays sea battles by the general
    # round either way (RU_SIMPLE == 1 is its walk)
    compiled = compiled_tables(dict(
        rules="1940-2e", attacker={"battleship": 2, "fighter": 3, "cruiser": 2},
        defender={"carrier": 2, "fighter": 4, "transport": 2}, sea=True))
    general = without_sea_walk(compiled)
    assert compiled.rules[RU_SIMPLE] == SIMPLE_EXACT and general.rules[RU_SIMPLE] == 0
    assert _law(run_monte_carlo(compiled, 20_000, 7)) == _law(run_monte_carlo(general, 20_000, 7))


def test_progress_counts_trials_and_outcomes_so_far():
    compiled = compiled_tables(dict(rules="revised", attacker="3 inf 1 tank", defender="3 inf"))
    trials = 5 * CHUNK_TRIALS + 7
    plain, counted = [], []
    # one chunk a call: the first call's one thread, calls of no length after it
    law = run_monte_carlo(compiled, trials, 5, progress=lambda *a: plain.append(a),
                          thread_count=1, call_seconds=1e-9)
    run_monte_carlo(compiled, trials, 5, thread_count=1, call_seconds=1e-9,
                    progress=lambda done, total, what, *, outcomes: counted.append(
                        (done, total, what, outcomes)))
    assert [a[0] for a in plain] == [*(CHUNK_TRIALS * k for k in range(1, 6)), trials]
    assert all(a[1:] == (trials, "trials") for a in plain)
    assert [c[:3] for c in counted] == plain
    for done, _, _, outcomes in counted:
        assert outcomes.sum() == done
    assert np.array_equal(counted[-1][3], law.outcomes)
