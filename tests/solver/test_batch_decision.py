"""solve_many's decision of which battles the batch kernel solves, without plans
(solver.batch.batch_seconds), is the one its plans make (batchable(batch_plan(...)), and the
plan's estimate): on a random battery of every dice edition, methods exact and auto, a range
of trial counts, --retreat-below, decisions solved (an optimal retreat, optimal submerging),
battles that start where they stand, and other limits."""

from __future__ import annotations

import dataclasses

import pytest
from battles import BUILDER_FIXED, builder_random

from battlecalc import BattleInputError, api
from battlecalc.batch import _battle_arguments
from battlecalc.compile import compile_battle
from battlecalc.kernels import jit
from battlecalc.solver import LIMITS, batch_plan, batch_seconds, batchable
from battlecalc.spec import simulate_spec

LIMITS_VARIANTS = [
    LIMITS,
    dataclasses.replace(LIMITS, exact_only_where_auto=True),
    dataclasses.replace(LIMITS, parallel_seconds=1e-6),
    dataclasses.replace(LIMITS, mc_rate_walk=10**12, mc_rate_general=10**12),
    dataclasses.replace(LIMITS, exact_state_limit=50, prune_pairs=20),
]


@pytest.fixture(scope="module")
def compiled():
    jit.compiled()
    found = []
    battles = BUILDER_FIXED + builder_random(11, 250) + [
        dict(rules="1942-2e", attacker="3 inf 2 tank", defender="4 inf", retreat_below=0.4),
        dict(rules="1942-2e", attacker="30 inf 10 tank 5 ftr", defender="40 inf 4 aa"),
        dict(rules="revised", attacker="8 sub 4 dd", defender="6 dd 4 cv 8 ftr", sea=True),
        # decisions solved (their tables are not the batch's)
        dict(rules="1942-2e", attacker="3 inf 1 tank 1 ftr", defender="4 inf",
             retreat_policy="optimal"),
        dict(rules="1942-2e", attacker="2 sub 1 dd", defender="2 dd", sea=True,
             attacker_submerge="optimal")]
    for given in battles:
        try:
            battle, _ = simulate_spec(_battle_arguments(dict(given, method="exact")))
            found.append(compile_battle(battle))
        except BattleInputError:
            continue
    api.forget_compiled()
    return found


@pytest.mark.parametrize("limits", range(len(LIMITS_VARIANTS)))
def test_batch_seconds_is_the_batchable_plans_estimate(compiled, limits):
    limits = LIMITS_VARIANTS[limits]
    seen = {True: 0, False: 0}
    for c in compiled:
        for method, trials in (("exact", 1), ("auto", 1), ("auto", 300), ("auto", 10_000),
                               ("auto", 1_000_000), ("mc", 1000)):
            try:
                plan = batch_plan(c, method, trials, limits)
                want = plan.seconds if batchable(plan, c, limits) else None
            except BattleInputError:
                want = None
            got = batch_seconds(c, method, trials, limits)
            assert got == want, (method, trials)
            seen[want is not None] += 1
    assert seen[True] and seen[False]
