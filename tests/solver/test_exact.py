"""The exact solver's driver (solver.exact, solver.tables): a plan carried out on a compiled
battle.

* The merged table of a side of several blocks of single walks (solver.tables.merged_walks):
  what the battle says (analytic counts of states), and every merged state the same state
  (units and IPC lost).
* The compact mass table: a big sea battle of submarines and aircraft on both sides has three
  categories of casualties a side: 150 v 150 units make about 100,000 states a side, 1e10
  state pairs, too many for a dense table, while its probability keeps to a few hundred states
  a side; a state gets its row or column when it first gets probability, and a table that
  fills up grows (four times the rows or columns) and the battle is solved again.  Its work
  limit and its size limit (TooBigToSolve: a clear error for `exact`, Monte Carlo for `auto`,
  exit status 2 at the command line), and the 150 v 150 battle itself, exact under `auto`,
  against Monte Carlo.
* --retreat-below's table (fill_win_values): filled a range of attacker states at a time,
  reporting its progress, stopped by a progress hook that raises, the same bit for bit
  however it is split into calls.
* A prepared solve (ExactSolve) kept or not.
"""

from __future__ import annotations

import battles
import numpy as np
import pytest
from helpers import MC_TRIALS, MC_TRIALS_SLOW, assert_usage_error, compiled_tables

import battlecalc
from battlecalc import api, solver
from battlecalc.kernels import jit
from battlecalc.solver.tables import merged

# --- the merged table of a side ---------------------------------------------------------------


@pytest.mark.parametrize("name", list(battles.LAND_MERGED))
def test_merged_states_are_the_same_units(name, plan_of):
    planned = plan_of(dict(battles.LAND_MERGED[name], method="exact"))
    compiled, plan = planned.compiled, planned.plan
    att = compiled.attacker
    merge, sweep = merged(att)
    # (and the solve merges them)
    assert plan.merge_blocks
    solver.solve(compiled, plan)
    assert (att.survivors[merge] == att.survivors).all()
    assert (att.ipc_lost[merge] == att.ipc_lost).all()
    # a state is merged into block 0 only, and the rows played are the states kept
    assert (merge[merge != np.arange(att.n_states)] < att.blocks[1, 0]).all()
    assert sorted(sweep) == sorted(np.flatnonzero(merge == np.arange(att.n_states)))


def test_aircraft_only_attacker_is_one_walk():
    # 25 fighters against 2 AAA (6 shots): blocks of 25 .. 19 fighters, each the walk of 25
    # fighters from its b-th state on: 26 rows in all, block b starting at state b
    att = compiled_tables(battles.LAND_MERGED["aircraft only"]).attacker
    merge, sweep = merged(att)
    assert len(att.blocks) == 7
    assert list(sweep) == list(range(26))
    assert [merge[offset] for offset in att.blocks[:, 0]] == list(range(7))


def test_land_unit_first_keeps_each_block_start():
    # 1 art, 7 ftr, 9 bmb against 3 AAA (9 shots, fighters then bombers shot down): block b
    # starts with the artillery and 17 - b aircraft, a state of its own, and its next state
    # (the artillery lost) is block 0's state 1 + b
    att = compiled_tables(battles.LAND_MERGED["one land unit first"]).attacker
    merge, sweep = merged(att)
    offsets = att.blocks[:, 0]
    assert len(offsets) == 10
    assert [merge[o] for o in offsets] == list(offsets)
    assert [merge[o + 1] for o in offsets[1:]] == [1 + b for b in range(1, 10)]
    assert len(sweep) == 18 + 9


# --- the compact mass table -------------------------------------------------------------------


def test_a_tiny_table_grows_to_what_the_battle_needs(plan_of):
    jit.compiled()
    exact = dict(battles.COMPACT_SMALL, method="exact")
    compact = plan_of(exact, compact_pairs=0, table_start=2)
    assert compact.plan.table == (2, 2)
    solve = solver.ExactSolve(compact.compiled, compact.plan)
    law = solve.run()
    rows, cols = solve.table
    assert rows > 2 and cols > 2
    dense = plan_of(exact, compact_pairs=10**18)
    assert dense.plan.table == (0, 0)
    expected = solver.ExactSolve(dense.compiled, dense.plan).run()
    assert list(law.outcomes) == list(expected.outcomes)
    assert law.pruned == expected.pruned


def test_past_the_work_limit_exact_refuses_and_auto_takes_monte_carlo(plan_of,
                                                                       assert_mc_agrees):
    jit.compiled()
    # a second's work: one successor term
    limited = dict(compact_pairs=0, work_rate=1)
    exact = plan_of(dict(battles.COMPACT_SMALL, method="exact"), **limited)
    assert exact.plan.table[0] and exact.plan.work_limit and not exact.plan.fallback
    with pytest.raises(battlecalc.BattleInputError, match="too large to solve exactly") as info:
        exact.result()
    assert isinstance(info.value, solver.TooBigToSolve)
    auto = plan_of(dict(battles.COMPACT_SMALL, method="auto", trials=MC_TRIALS, seed=3),
                   **limited)
    assert auto.plan.method == "exact" and auto.plan.fallback  # tried, then Monte Carlo
    result = auto.result()
    assert result.method == "mc" and result.trials == MC_TRIALS
    expected = plan_of(dict(battles.COMPACT_SMALL, method="exact"),
                       compact_pairs=10**18).result()
    assert_mc_agrees(result, expected, probabilities=("attacker_win",), means=())


def test_the_command_line_reports_a_solve_past_its_limit_as_a_usage_error(monkeypatch,
                                                                        invoke):
    # (the command line takes the shipped limits: the refusal above, raised where simulate
    # would raise it)
    def too_big(*_args, **_kwargs):
        raise solver.TooBigToSolve("battle too large to solve exactly (its solve passed 1 "
                                   "successor terms, about 1 s of work); use --method mc "
                                   "for Monte Carlo")

    # battlecalc.waves reads api.simulate's signature as it is imported: imported before the
    # patch, or a file run alone keeps the patch's signature for its later tests
    import battlecalc.waves  # noqa: F401

    monkeypatch.setattr(api, "simulate", too_big)
    outcome = invoke("run", "--rules", "1942-2e", "--sea", "--method", "exact",
                     "-a", battles.COMPACT_SMALL["attacker"],
                     "-d", battles.COMPACT_SMALL["defender"])
    assert_usage_error(outcome, "too large to solve exactly")


def test_a_table_past_its_size_limit_is_refused_and_auto_takes_monte_carlo(plan_of):
    jit.compiled()
    limited = dict(compact_pairs=0, table_start=2, table_cells=16)
    with pytest.raises(battlecalc.BattleInputError, match="spreads over more than 16 state"):
        plan_of(dict(battles.COMPACT_SMALL, method="exact"), **limited).result()
    auto = plan_of(dict(battles.COMPACT_SMALL, method="auto", trials=2000, seed=1), **limited)
    assert auto.result().method == "mc"


@pytest.mark.slow
def test_150_v_150_sea_battle_with_subs_and_air_on_both_sides(assert_mc_agrees):
    """`auto` solves it exactly, pruning at most 1e-9, and Monte Carlo agrees."""
    jit.compiled()
    result = battlecalc.simulate(**battles.COMPACT_BIG, method="auto")
    assert result.method == "exact"
    assert 0 < result.pruned <= 1e-9
    assert result.attacker_win + result.defender_win + result.draw == pytest.approx(
        1.0, abs=1e-9)
    mc = battlecalc.simulate(**battles.COMPACT_BIG, method="mc", trials=MC_TRIALS_SLOW,
                             seed=11)
    assert_mc_agrees(mc, result, probabilities=("attacker_win", "defender_win"), means=(),
                     slack=0.0)


# --- --retreat-below's table ------------------------------------------------------------------

# a sea battle of the general round: 126,000 state pairs
MID = dict(rules="1942-2e", sea=True, attacker="6 sub 6 dd 3 ca 2 bb 4 ftr 1 cv",
           defender="5 dd 3 ca 2 cv 3 ftr 2 bb 3 sub")


def test_the_table_reports_progress_and_stops_when_the_hook_raises():
    calls = []
    battlecalc.simulate(**MID, retreat_below=0.5, method="mc", trials=1000, seed=1,
                        progress=lambda done, total, what="trials": calls.append(
                            (done, total, what)))
    table = [(done, total) for done, total, what in calls if what == "retreat-below table"]
    assert len(table) >= 5  # about 2 s of work, reported every ~0.1 s of it
    assert table[0] == (0, 126_000) and table[-1] == (126_000, 126_000)
    assert all(a[0] < b[0] for a, b in zip(table, table[1:], strict=False))

    class Stop(Exception):
        pass

    seen = []

    def stop_at_second(done, total, what="trials"):
        if what == "retreat-below table":
            seen.append(done)
            if len(seen) == 2:
                raise Stop

    with pytest.raises(Stop):
        battlecalc.simulate(**MID, retreat_below=0.5, method="mc", trials=1000, seed=1,
                            progress=stop_at_second)
    assert len(seen) == 2 and 0 < seen[1] < 126_000


@pytest.mark.parametrize("battle", [
    dict(rules="1942-2e", sea=True, attacker="2 sub 1 dd", defender="1 dd 1 ca"),
    dict(rules="1942-2e", attacker="1 ftr", landing="3 inf 1 tank", bombard="1 bb",
         defender="4 inf"),
    dict(rules="1942-2e", attacker="4 inf 2 art 2 tank 1 ftr", defender="6 inf 1 aa 1 art"),
    dict(rules="1942-2e", sea=True, attacker="3 sub 3 dd 2 ca 2 ftr",
         defender="3 dd 2 ca 1 cv 2 ftr"),
])
def test_the_table_filled_a_row_at_a_time_equals_one_sweep(battle, plan_of):
    battle = dict(battle, retreat_below=0.4, method="exact")
    whole = plan_of(battle, win_value_call_seconds=1e9).result()  # one kernel call
    by_rows = plan_of(battle, win_value_call_seconds=1e-12).result()  # a state a call
    assert whole.retreat > 0  # the policy did something
    rows = [{k: v for k, v in r.flat_row().items() if k != "elapsed_s"}
            for r in (whole, by_rows)]
    assert rows[0] == rows[1]  # bit for bit


# --- a prepared solve -------------------------------------------------------------------------


@pytest.mark.skipif(jit.plain_kernels(), reason="BATTLECALC_PLAIN_KERNELS=1: nothing is "
                    "compiled")
def test_a_solve_not_kept_looks_for_no_compiled_kernel(plan_of):
    # (a battle of a sequence, a solve of its own: solved by the dispatcher every time)
    jit.compiled()
    planned = plan_of(dict(rules="1942-2e", attacker="1 tank", defender="3 fighter 3 aa",
                           method="exact"))
    once = solver.ExactSolve(planned.compiled, planned.plan)
    first, second = once.run(), once.run()
    assert once.entry is None
    assert list(first.outcomes) == list(second.outcomes)
    kept = solver.ExactSolve(planned.compiled, planned.plan, kept=True)
    kept.run()
    assert kept.entry is None  # a battle solved once: no kernel looked for (a fresh battle's cost)
    kept.run()
    assert kept.entry  # asked again: found for the next solve
    assert list(kept.law_of(kept.again()).outcomes) == list(first.outcomes)
