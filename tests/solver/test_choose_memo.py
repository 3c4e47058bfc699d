"""choose() keeps the plan it chose with the battle's attacker side (solve_many's battles share
sides, and a lane's many battles cost it a dict look-up): the plan it gives back is the plan a
fresh choice makes, field for field, on a random battery of every dice edition, methods exact,
auto and mc, a range of trial counts, --retreat-below, decisions solved, battles that start
where they stand, other limits and other states of the kernels (compiled or plain)."""

from __future__ import annotations

import dataclasses

import pytest
from battles import BUILDER_FIXED, builder_random

from battlecalc import BattleInputError, api
from battlecalc.batch import _battle_arguments
from battlecalc.compile import compile_battle
from battlecalc.solver import LIMITS, KernelState, batchable, choose
from battlecalc.solver.plan import SOLVE_BLOCKS, SOLVE_WALK_BLOCKS, _choose
from battlecalc.spec import simulate_spec

LIMITS_VARIANTS = [
    LIMITS,
    dataclasses.replace(LIMITS, exact_only_where_auto=True),
    dataclasses.replace(LIMITS, parallel_seconds=1e-6),
    dataclasses.replace(LIMITS, mc_rate_walk=10**12, mc_rate_general=10**12),
    dataclasses.replace(LIMITS, exact_state_limit=50, prune_pairs=20),
]
KERNEL_STATES = [
    KernelState(everywhere=True),
    KernelState(plain=True),
    KernelState(spent=0.0),  # nothing compiled, nothing spent: plain Python for a small solve
    KernelState(loaded=frozenset({SOLVE_BLOCKS, SOLVE_WALK_BLOCKS})),
]
pytestmark = pytest.mark.filterwarnings("ignore::battlecalc.errors.BattleInputWarning")
RUNS = (("exact", 1), ("auto", 1), ("auto", 300), ("auto", 10_000), ("auto", 1_000_000),
        ("mc", 1000))


@pytest.fixture(scope="module")
def compiled():
    found = []
    battles = BUILDER_FIXED + builder_random(11, 120) + [
        dict(rules="1942-2e", attacker="3 inf 2 tank", defender="4 inf", retreat_below=0.4),
        dict(rules="1942-2e", attacker="30 inf 10 tank 5 ftr", defender="40 inf 4 aa"),
        dict(rules="revised", attacker="8 sub 4 dd", defender="6 dd 4 cv 8 ftr", sea=True),
        dict(rules="1942-2e", attacker="3 inf 1 tank 1 ftr", defender="4 inf",
             retreat_policy="optimal"),
        dict(rules="1942-2e", attacker="2 sub 1 dd", defender="2 dd", sea=True,
             attacker_submerge="optimal"),
        dict(rules="1942-2e", attacker="3 inf 1 tank", defender="3 inf", start_round=2),
        dict(rules="1942-2e", attacker="2 ftr 3 inf", defender="3 inf 1 aa")]
    for given in battles:
        try:
            battle, _ = simulate_spec(_battle_arguments(dict(given, method="exact")))
            found.append(compile_battle(battle))
        except BattleInputError:
            continue
    api.forget_compiled()
    return found


def _fresh(c, method, trials, limits, kernels):
    try:
        return _choose(c, method, trials, False, limits, kernels)
    except BattleInputError as exc:
        return str(exc)


def _kept(c, method, trials, limits, kernels):
    try:
        return choose(c, method, trials, False, limits, kernels=kernels)
    except BattleInputError as exc:
        return str(exc)


@pytest.mark.parametrize("limits", range(len(LIMITS_VARIANTS)))
def test_a_kept_plan_is_the_plan_a_fresh_choice_makes(compiled, limits):
    limits = LIMITS_VARIANTS[limits]
    seen = {True: 0, False: 0}
    for c in compiled:
        for kernels in KERNEL_STATES:  # (the kept plan asked again under other kernels)
            for method, trials in RUNS:
                want = _fresh(c, method, trials, limits, kernels)
                assert _kept(c, method, trials, limits, kernels) == want, (method, trials)
                assert _kept(c, method, trials, limits, kernels) == want, (method, trials)
                if not isinstance(want, str):
                    seen[batchable(want, limits)] += 1
    assert seen[True] and seen[False]


def test_a_plan_is_kept_only_for_the_same_defender_and_limits(compiled):
    a, b = compiled[0], compiled[1]
    other = dataclasses.replace(a, defender=b.defender)
    assert choose(other, "auto", 1000) == _choose(other, "auto", 1000, False, LIMITS, None)
    tight = dataclasses.replace(LIMITS, max_exact_seconds=0.0)
    assert choose(a, "auto", 1000, limits=tight) == _choose(a, "auto", 1000, False, tight, None)
