"""How a battle is solved, as a value (solver.plan): choose's decisions under the shipped limits
and under Limits given as data, never a patched module constant.

* The method: `auto` takes the faster of exact and Monte Carlo; `exact` refuses a battle too
  large (its state pairs or its estimated seconds), `auto` takes Monte Carlo there.
* --retreat-below's table (issue 16, point 5): sized and estimated before it is built, its
  estimate counted with the solve's, refused before any of it is built (by the library and
  at once by the command line).
* The variant a battle takes: merged blocks (and the estimate of a merged solve), a compact
  mass table for a big battle of the general round, pruning within a budget from
  Limits.prune_pairs on, the sea walk for a sea battle without submarines.
"""

from __future__ import annotations

import dataclasses
import time

import battles
import pytest
from helpers import compiled_tables
from tiers import sampled

import battlecalc
from battlecalc import BattleInputError, api, solver
from battlecalc.kernels.layout import R_HI, RU_SIMPLE, SIMPLE_EXACT
from battlecalc.solver import cost
from battlecalc.solver.plan import compact_table, exact_view

# sea battles of the general round: 126,000 and 628,425 state pairs
MID = dict(rules="1942-2e", sea=True, attacker="6 sub 6 dd 3 ca 2 bb 4 ftr 1 cv",
           defender="5 dd 3 ca 2 cv 3 ftr 2 bb 3 sub")
BIG = dict(rules="1942-2e", sea=True, attacker="8 sub 8 dd 4 ca 3 bb 6 ftr 2 cv",
           defender="6 dd 4 ca 2 cv 4 ftr 3 bb 4 sub")


@pytest.fixture
def no_table(monkeypatch):
    """solver.solve's --retreat-below table made to fail the test if it is built."""

    def built(*_args, **_kwargs):
        raise AssertionError("the retreat-below table was built")

    monkeypatch.setattr(solver, "fill_win_values", built)


# --- the method -------------------------------------------------------------------------------


def test_auto_takes_the_faster_method(plan_of):
    battle = dict(rules="1942-2e", attacker="10 inf 3 art 3 tank", defender="12 inf 2 tank")
    assert plan_of(battle).plan.method == "exact"
    assert battlecalc.simulate(**battle).method == "exact"
    # few trials: Monte Carlo would be done before the exact solve
    fast = plan_of(dict(battle, trials=1000, seed=1), mc_rate_walk=10**15,
                   mc_rate_general=10**15)
    assert fast.plan.method == "mc"
    assert fast.result().method == "mc"


def test_exact_refuses_a_battle_too_large_and_auto_falls_back_to_monte_carlo(plan_of):
    # the limits scaled down so that a small battle counts as too large
    small = dict(max_exact_seconds=1e-7, mc_rate_walk=10**12, mc_rate_general=10**12)
    battle = dict(rules="1942-2e", attacker="12 inf 4 art", defender="14 inf")
    with pytest.raises(BattleInputError, match="too large to solve exactly.*--method mc"):
        plan_of(dict(battle, method="exact"), **small)
    result = plan_of(dict(battle, method="auto", trials=2_000, seed=1), **small).result()
    assert result.method == "mc" and result.trials == 2_000
    # (under the shipped limits: exact)
    assert plan_of(dict(battle, method="exact")).plan.method == "exact"


def test_a_state_limit_refuses_exact_whatever_the_estimate(plan_of):
    battle = dict(rules="1942-2e", attacker="12 inf 4 art", defender="14 inf", method="exact")
    pairs = compiled_tables(battle).attacker.n_states * compiled_tables(battle).defender.n_states
    with pytest.raises(BattleInputError, match=f"{pairs:,} state pairs, limit {pairs - 1:,}"):
        plan_of(battle, exact_state_limit=pairs - 1)
    assert plan_of(battle, exact_state_limit=pairs).plan.method == "exact"


# --- --retreat-below's table (issue 16, point 5) ----------------------------------------------


def test_exact_refusal_counts_the_table_and_comes_before_it(no_table):
    compiled = compiled_tables(dict(BIG, retreat_below=0.5, method="exact"))
    solve, table = solver.exact_seconds(compiled), cost.win_values_seconds(compiled)
    # refused for the table's sake
    assert solve < solver.LIMITS.max_exact_seconds < solve + table
    started = time.perf_counter()
    with pytest.raises(BattleInputError, match=f"about {solve + table:.2g} s of work, limit 10 s"):
        battlecalc.simulate(**BIG, retreat_below=0.5, method="exact")
    assert time.perf_counter() - started < 10  # the table takes 18-40 s on two cores


def test_the_table_is_in_the_estimate_auto_and_exact_use(plan_of, no_table):
    compiled = compiled_tables(dict(MID, retreat_below=0.5))
    solve, table = solver.exact_seconds(compiled), cost.win_values_seconds(compiled)
    assert table > 0 and cost.win_values_seconds(compiled_tables(MID)) > 0
    limit = dict(max_exact_seconds=solve + table / 2)
    # without --retreat-below the solve alone is under the limit ...
    assert plan_of(dict(MID, method="exact"), **limit).plan.method == "exact"
    # ... with it, solve + table is over: exact refuses, auto (which would otherwise solve
    # exactly: many trials make Monte Carlo the slower) runs Monte Carlo, the table first
    with pytest.raises(BattleInputError, match="battle too large to solve exactly"):
        plan_of(dict(MID, retreat_below=0.5, method="exact"), **limit)
    assert plan_of(dict(MID, method="auto", trials=10**8), **limit).plan.method == "exact"
    auto = plan_of(dict(MID, retreat_below=0.5, method="auto", trials=2000, seed=1), **limit)
    assert auto.plan.method == "mc" and auto.plan.win_values
    assert auto.plan.win_values_seconds == table


@pytest.mark.parametrize("method", ["exact", "mc", "auto"])
def test_a_table_over_its_limit_is_refused_before_it_is_built(plan_of, method, no_table):
    table = cost.win_values_seconds(compiled_tables(dict(MID, retreat_below=0.5)))
    with pytest.raises(BattleInputError, match=(
            rf"--retreat-below needs the exact win probability of every state, and this "
            rf"battle has 126,000 state pairs \(about {table:.2g} s of work; limits "
            rf"4,000,000 pairs, {table / 2:g} s\)")):
        plan_of(dict(MID, retreat_below=0.5, method=method, trials=1000, seed=1),
                max_win_value_seconds=table / 2)


def test_cli_refuses_a_table_of_minutes_at_once(invoke, no_table):
    huge = dict(rules="1942-2e", sea=True, attacker="10 sub 10 dd 5 ca 4 bb 8 ftr 2 cv",
                defender="8 dd 5 ca 2 cv 6 ftr 4 bb 5 sub")
    table = cost.win_values_seconds(compiled_tables(dict(huge, retreat_below=0.5)))
    # 2,594,592 pairs: under the pair limit
    assert table > solver.LIMITS.max_win_value_seconds
    started = time.perf_counter()
    result = invoke("run", "--rules", "1942-2e", "--sea", "-a", huge["attacker"],
                    "-d", huge["defender"], "--retreat-below", "0.5", "--method", "mc",
                    "--trials", "1000")
    assert result.exit_code == 2
    assert "Error: --retreat-below needs the exact win probability of every state, and this " \
        "battle has 2,594,592 state pairs" in " ".join(result.output.split())
    assert time.perf_counter() - started < 10


# --- the variant ------------------------------------------------------------------------------


def test_estimate_counts_the_merged_table():
    # 25 fighters against 2 AAA: 26 of the blocks' 161 states are played
    compiled = compiled_tables(battles.LAND_MERGED["aircraft only"])
    merged = solver.exact_seconds(compiled)
    assert merged == pytest.approx(
        solver.exact_seconds(compiled, merge_blocks=False) * 26 / 161, rel=1e-12)
    assert solver.exact_seconds(compiled, merge_blocks=False) == cost.solve_seconds(compiled)


# (the first and the third in the quick tier: one that takes a compact table, one that does
# not; all four in the slow)
@pytest.mark.parametrize("battle, compact", sampled([
    (battles.COMPACT_BIG, True),
    (dict(battles.COMPACT_BIG, attacker="30 dd, 30 ca, 30 bb, 10 cv, 35 ftr, 15 bmb",
          defender="40 dd, 25 ca, 30 bb, 15 cv, 40 ftr"), False),  # one walk a side
    (dict(rules="1942-2e", sea=True, attacker="4 sub 2 ftr", defender="3 sub 2 ftr"), False),
    (battles.PRUNE_BIG_LAND, False),  # land
], 2))
def test_the_battles_that_take_a_compact_table(battle, compact):
    compiled = api.compile_battle(api.make_battle(**battle))
    rows, cols = compact_table(compiled)
    assert (rows > 0) == compact
    if compact:
        pairs = compiled.attacker.n_states * compiled.defender.n_states
        assert pairs > solver.LIMITS.exact_state_limit
        assert (rows, cols) == (solver.LIMITS.table_start, solver.LIMITS.table_start)
        plan = solver.choose(compiled, "auto", 10**6)
        assert plan.method == "exact" and plan.table == (rows, cols)
        assert plan.fallback and plan.work_limit > 0  # Monte Carlo past its work limit
        # and a smaller first table where the limits say so
        assert compact_table(compiled, solver.Limits(table_start=64)) == (64, 64)


@pytest.mark.parametrize("name", list(battles.PRUNE_SMALL))
def test_pruning_within_a_budget_from_its_size_on(name, plan_of):
    battle = dict(battles.PRUNE_SMALL[name], method="exact")
    shipped = plan_of(battle)
    compiled = shipped.compiled
    pairs = compiled.attacker.n_states * compiled.defender.n_states
    assert pairs < solver.LIMITS.prune_pairs and not shipped.plan.pruned_within_budget
    assert (shipped.plan.prune_eps, shipped.plan.tail_eps, shipped.plan.budget) == (0, 0, 0)
    at_its_size = plan_of(battle, prune_pairs=pairs)
    assert at_its_size.plan.pruned_within_budget
    assert (at_its_size.plan.prune_eps, at_its_size.plan.tail_eps, at_its_size.plan.budget) == (
        solver.LIMITS.prune_state_eps, solver.LIMITS.prune_tail_eps, solver.LIMITS.prune_budget)
    assert not plan_of(battle, prune_pairs=pairs, pruning=False).plan.pruned_within_budget


@pytest.mark.parametrize("battle", battles.sea_walk_random()[::5])
def test_the_sea_walk_is_the_plans_where_the_battle_allows_it(battle, plan_of):
    """A sea battle without submarines takes the walk path unless the plan forbids it
    (exact_view: the battle as the exact solver takes it)."""
    walk, general = plan_of(battle), plan_of(battle, sea_walk=False)
    rules = walk.compiled.rules[RU_SIMPLE]
    assert rules in (0, SIMPLE_EXACT)  # (0: lone attacking transports, tests/test_compile.py)
    assert exact_view(walk.compiled, walk.plan).rules[RU_SIMPLE] == rules
    assert exact_view(general.compiled, general.plan).rules[RU_SIMPLE] == 0


def test_the_tables_hit_cut_is_a_limit_the_plan_shows(plan_of):
    """Hit counts less likely than Limits.hit_eps are cut from a side's tables when they are
    built: the compiled battle records the cut, its plan shows it (repr), and a coarser cut
    gives a battle whose answer moves by no more than the mass cut (the exact solver reports
    it as pruned)."""
    import dataclasses

    battle = dict(rules="1942-2e", attacker="12 inf 4 art 4 tank 3 ftr",
                  defender="14 inf 3 art 2 tank 1 ftr", method="exact")
    fine = plan_of(battle)
    assert fine.compiled.hit_eps == solver.LIMITS.hit_eps == fine.plan.hit_eps
    assert f"hit_eps={solver.LIMITS.hit_eps!r}" in repr(fine.plan)
    coarse_limits = dataclasses.replace(solver.LIMITS, hit_eps=1e-6)
    b, run, _ = api.prepare(**battle)
    coarse_compiled = battlecalc.compile.compile_battle(b, hit_eps=1e-6)
    coarse = solver.choose(coarse_compiled, run.method, run.trials, limits=coarse_limits)
    assert coarse.hit_eps == 1e-6
    rows = coarse_compiled.attacker.rows, fine.compiled.attacker.rows
    assert (rows[0][:, R_HI] <= rows[1][:, R_HI]).all()
    assert (rows[0][:, R_HI] < rows[1][:, R_HI]).any()
    result = api.solve(b, run, compiled=coarse_compiled, solve_plan=coarse,
                       limits=coarse_limits)
    exact = fine.result()
    assert result.pruned > exact.pruned
    assert abs(result.attacker_win - exact.attacker_win) <= result.pruned + 1e-12
    with pytest.raises(ValueError, match="hit_eps"):
        solver.choose(coarse_compiled, run.method, run.trials)  # (the default limits' cut)


# --- which kernels a solve runs: the kernels' state as a value (solver.KernelState) ----------


def test_kernels_are_loaded_from_the_cache_soon_and_compiled_only_when_worth_it():
    limits = solver.LIMITS
    fresh = solver.KernelState()  # nothing compiled, nothing spent in plain Python
    slowdown = limits.python_slowdown
    small = 0.1 * limits.python_budget / slowdown  # a tenth of the budget in plain Python
    mid = 2 * limits.python_budget / slowdown
    blocks, compact = solver.plan.SOLVE_BLOCKS, solver.plan.SOLVE_COMPACT
    assert not fresh.compiles(small, limits, (blocks,))
    # past the budget: compiled where the cache holds the entry, plain Python where not...
    assert not fresh.compiles(mid, limits, (blocks,))
    on_disk = solver.KernelState(on_disk=frozenset({blocks}))
    assert on_disk.compiles(mid, limits, (blocks,))
    assert not on_disk.compiles(mid, limits, (compact,))
    # ... until the process's plain Python passes the cold budget
    spent = solver.KernelState(on_disk=frozenset({blocks}), spent=limits.python_budget_cold)
    assert spent.compiles(small, limits, (compact,))


def test_kernels_compiled_in_the_process_run_from_the_first_solve():
    limits = solver.LIMITS
    blocks, batch = solver.plan.SOLVE_BLOCKS, solver.plan.SOLVE_BATCH
    loaded = solver.KernelState(loaded=frozenset({blocks}))
    assert loaded.compiles(1e-9, limits, (blocks,))
    assert not loaded.compiles(1e-9, limits, (batch,))
    assert solver.KernelState(everywhere=True).compiles(1e-9, limits, (batch,))  # jit.compiled()
    assert not solver.KernelState(plain=True).compiles(1e3, limits, (blocks,))  # PLAIN_KERNELS


def test_choose_runs_the_kernels_its_state_says(plan_of):
    """choose(c, kernels=...) decides compiled kernels or plain Python from the state it is
    given (the plan says which), the same battle otherwise planned alike."""
    _, run, compiled = api.prepare(rules="1942-2e", attacker="3 inf 1 tank", defender="3 inf")
    plain = solver.choose(compiled, "exact", 1, kernels=solver.KernelState())
    fast = solver.choose(compiled, "exact", 1, kernels=solver.KernelState(everywhere=True))
    assert not plain.compiled and fast.compiled
    assert dataclasses.replace(plain, compiled=True) == fast


def test_the_compiled_builder_only_where_it_costs_no_compiling():
    """KernelState.ready (the choice of the compiled side builder and of the merged walks'
    kernel, which have Python twins): never before jit.compiled(), then where every solve
    runs compiled or the kernels are compiled in the process or on disk."""
    entries = battlecalc.compile.sides.BUILDER_KERNELS
    assert not solver.KernelState(on_disk=frozenset(entries)).ready(entries)  # not compiled()
    started = solver.KernelState(compiled=True)  # (a Monte Carlo run's compiled())
    assert not started.ready(entries)
    assert solver.KernelState(compiled=True, on_disk=frozenset(entries)).ready(entries)
    assert solver.KernelState(compiled=True, loaded=frozenset(entries)).ready(entries)
    assert solver.KernelState(everywhere=True).ready(entries)
    assert not solver.KernelState(plain=True).ready(entries)


def test_the_side_builder_is_the_states_and_the_plan_says_which():
    """build_side builds by the compiled builder where the kernels' state has it ready, by the
    Python builder where not: the same arrays, Side.builder and the plan saying which."""
    import numpy as np

    from battlecalc.compile import sides
    from battlecalc.compile.battle import _attacker_spec
    from battlecalc.kernels import jit

    jit.compiled()
    battle, run, _ = api.prepare(rules="1942-2e", attacker="4 inf 2 art 1 tank 1 ftr",
                                 defender="3 inf 1 aa")
    spec = _attacker_spec(battle, (False, False), (("aa", 1),), solver.LIMITS.hit_eps)
    python = sides._new_side(spec, solver.KernelState())
    built = sides._new_side(spec, solver.KernelState(everywhere=True))
    assert (python.builder, built.builder) == ("python", "compiled")
    for name in ("blocks", "states", "rows", "pmf", "cdf", "start", "survivors", "ipc_lost"):
        assert np.array_equal(getattr(python, name), getattr(built, name)), name
    compiled = battlecalc.compile.compile_battle(battle)
    plan = solver.choose(compiled, run.method, run.trials)
    assert plan.side_builders == (compiled.attacker.builder, compiled.defender.builder)
    assert "side_builders=" in repr(plan)


def test_a_plain_solve_counts_its_seconds_and_a_compiled_one_does_not():
    seconds = 1e-4
    before = solver.plan._spent[0]  # (the process's plain-Python seconds: KernelState.spent)
    plain = solver.SolvePlan("exact", seconds, 0.0, 1, compiled=False)
    solver.plan.spend(plain, seconds)
    spent = solver.plan._spent[0] - before
    assert spent == pytest.approx(seconds * solver.LIMITS.python_slowdown)
    solver.plan.spend(dataclasses.replace(plain, compiled=True), seconds)
    assert solver.plan._spent[0] - before == pytest.approx(spent)


def test_a_plan_carries_the_limits_it_was_chosen_under():
    """solve(compiled, plan) reads every limit from the plan (SolvePlan.limits): a plan
    chosen under a decision tolerance no gain passes retreats nowhere, solved with nothing
    else given; the same battle's plan under the shipped limits retreats somewhere."""
    import dataclasses

    battle = dict(rules="1942-2e", attacker="3 inf 1 tank 1 ftr", defender="5 inf",
                  retreat_policy="optimal", method="exact")
    _, run, compiled = api.prepare(**battle)
    shipped = solver.choose(compiled, run.method, run.trials)
    lax = dataclasses.replace(solver.LIMITS, decision_tolerance=1e9)
    tolerant = solver.choose(compiled, run.method, run.trials, limits=lax)
    assert shipped.limits is solver.LIMITS and tolerant.limits is lax
    retreats = solver.solve(compiled, shipped).policy.table
    assert any(row["choice"] == "retreat" for row in retreats)
    assert not any(row["choice"] == "retreat" for row in solver.solve(compiled,
                                                                       tolerant).policy.table)
