"""Many small exact battles in one kernel loop (solver.batch): which plans a batch carries out
(batchable), and each battle's law from the batch the law its own plan's solve computes, bit
for bit, however the batch is split into calls and among threads.  (solve_many, which lays
battles into batches: tests/test_solve_many.py.)"""

from __future__ import annotations

import battles
import pytest

import battlecalc
from battlecalc import api, solver
from battlecalc.kernels import jit

# small battles of the battery, land and sea, both editions, AA blocks (merged by simulate's
# plans), bombardment, retreats, and battles that start where they stand (the batch's kind)
SMALL = [battles.kwargs_of(b) for b in battles.BATTERY[::9]][:48] + [
    dict(rules="1942-2e", attacker="3 inf 1 tank", defender="3 inf 1 art", start_round=2),
    dict(rules="1942-2e", attacker="4 inf 1 tank", defender="4 inf", start_round=1,
         start_step="defender_fire", hits_on_defender=1, retreat_after=2),
    dict(rules="revised", attacker="2 inf 2 ftr", defender="3 inf 1 aa")]


@pytest.fixture(scope="module")
def batch():
    """The batchable battles of SMALL: compiled, with the plans simulate and solve_many give
    them."""
    compiled, plans = [], []
    for battle in SMALL:
        _, run, c = api.prepare(**battle, method="exact")
        plan = solver.choose(c, run.method, run.trials)
        if solver.batchable(plan):
            compiled.append(c)
            plans.append(plan)
    assert len(plans) >= 30
    assert any(plan.merge_blocks for plan in plans)
    assert any(c.start_rounds or c.retreat_from != 1 for c in compiled)
    return compiled, plans


def _law_of(law: solver.BatchLaw, i: int):
    a, d = law.a_out[i], law.d_out[i]
    return (law.outcomes[i].tolist(), law.takes[i], law.mean_rounds[i], law.pruned[i],
            law.a_final[a[0]:a[1]].tolist(), law.d_final[d[0]:d[1]].tolist())


def test_each_battle_of_a_batch_is_its_own_plans_solve(batch):
    jit.compiled()
    compiled, plans = batch
    law = solver.solve_batch(compiled, plans)
    for i, (c, plan) in enumerate(zip(compiled, plans, strict=True)):
        alone = solver.solve(c, plan)
        assert _law_of(law, i) == (alone.outcomes.tolist(), alone.takes, alone.mean_rounds,
                                   alone.pruned, alone.a_final.tolist(),
                                   alone.d_final.tolist()), i


def test_a_batch_does_not_depend_on_its_calls_or_threads(batch):
    jit.compiled()
    compiled, plans = batch
    expected = solver.solve_batch(compiled, plans)
    try:
        for n in (1, 3):
            battlecalc.set_threads(n)
            for limits in (solver.LIMITS, solver.Limits(call_seconds=1e-12)):  # one a call
                law = solver.solve_batch(compiled, plans, limits)
                for i in range(len(plans)):
                    assert _law_of(law, i) == _law_of(expected, i), (n, limits.call_seconds, i)
    finally:
        battlecalc.set_threads(None)


def test_a_battle_shared_by_battles_is_laid_out_once(batch):
    compiled, plans = batch
    law = solver.solve_batch([compiled[0], compiled[1], compiled[0]],
                             [plans[0], plans[1], plans[0]])
    assert len(law.attackers.unique) == 2 and list(law.attackers.index) == [0, 1, 0]
    assert _law_of(law, 0) == _law_of(law, 2)


@pytest.mark.parametrize("battle, why", [
    (dict(rules="1942-2e", attacker="3 inf 1 tank", defender="3 inf",
          rounds_distribution=True), "law of rounds"),
    (dict(rules="1942-2e", attacker="3 inf 1 tank", defender="3 inf", retreat_below=0.5),
     "--retreat-below table"),
    (dict(rules="1942-2e", attacker="3 inf 1 tank", defender="3 inf", method="mc"),
     "Monte Carlo"),
    (battles.SOLVE_MANY_MIXED[-1], "more than one thread's work"),
    (dict(rules="1942-2e", attacker="3 inf 1 tank 1 ftr", defender="4 inf",
          retreat_policy="optimal"), "the optimal retreat's table"),
])
def test_what_a_batch_does_not_carry_out(battle, why):
    _, run, compiled = api.prepare(**battle)
    plan = solver.choose(compiled, run.method, run.trials, run.rounds_distribution)
    assert not solver.batchable(plan), why
    # and a plan of the batch's kind, where the battle allows one, is
    small = dict(rules="1942-2e", attacker="3 inf 1 tank", defender="3 inf")
    _, run, compiled = api.prepare(**small)
    assert solver.batchable(solver.choose(compiled, run.method, run.trials))


def test_a_batch_carries_out_simulates_own_plan_merged_blocks_included():
    _, run, compiled = api.prepare(**battles.LAND_MERGED["aircraft only"], method="exact")
    plan = solver.choose(compiled, run.method, run.trials)
    assert plan.merge_blocks and solver.batchable(plan)
    law = solver.solve_batch([compiled], [plan])
    alone = solver.solve(compiled, plan)
    assert _law_of(law, 0) == (alone.outcomes.tolist(), alone.takes, alone.mean_rounds,
                               alone.pruned, alone.a_final.tolist(), alone.d_final.tolist())
