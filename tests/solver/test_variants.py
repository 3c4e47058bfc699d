"""The exact solver's land fast path: every attacker block in one table, a row at a time.

Round-1 AA fire starts the attacker in one block per outcome (its aircraft shot down); a
block often reaches a state of block 0 (the same units) after a few casualties, or at once
when its first casualties are aircraft, and from there on the two walks are one.  The exact
solver then plays each such state once, its probability from every block summed
(exact.merged_walks, exact._solve_merged).  Checked here: the merged tables are what the
battle says (analytic counts of states), every merged state is the same state (units and IPC
lost), and every answer equals the block-by-block solve (exact.MERGE_BLOCKS = False) to
1e-12, on editions with either AA casualty rule, low luck, the rounds law, keep_land, orders
of losses and retreats.

The closed sweep plays a whole row of state pairs (one attacker state) at once
(exact._sweep_walks): every answer equals the sweep a pair at a time (exact.ROW_SWEEP =
False, exact._sweep_round) to 1e-12, with and without AA, merged or not, with retreats.
"""

from __future__ import annotations

import numpy as np
import pytest
from exact_paths import answers, assert_same, compiled_tables

import battlecalc
from battlecalc import api
from battlecalc.kernels import exact, jit

BATTLES = {
    "aircraft only": dict(rules="1942-2e", attacker="25 ftr", defender="7 tank 10 art 2 aa"),
    "one land unit first": dict(rules="1942-2e", attacker="7 ftr 9 bmb 1 art",
                                defender="7 art 21 bmb 5 inf 1 ftr 3 aa"),
    "land units first": dict(rules="1942-2e", attacker="6 tank 2 bmb 3 art 3 ftr",
                             defender="20 tank 3 aa"),
    "revised, each die its aircraft": dict(rules="revised", attacker="5 ftr 4 bmb 2 inf",
                                           defender="6 inf 2 tank 1 aa"),
    "rounds law": dict(rules="1942-2e", attacker="8 ftr 3 bmb", defender="9 inf 2 art 2 aa",
                       rounds_distribution=True),
    "low luck": dict(rules="1942-2e", attacker="9 ftr 2 tank", defender="8 inf 3 tank 3 aa",
                     dice="low_luck"),
    "keep land, weakest": dict(rules="1940-2e", attacker="3 inf 6 ftr 2 bmb",
                               defender="7 inf 2 art 1 aa", keep_land=1,
                               attacker_ool="weakest"),
    "retreat after 2": dict(rules="1942-2e", attacker="2 tank 7 ftr 2 bmb",
                            defender="8 inf 2 tank 2 aa", retreat_after=2),
    "retreat below 40%": dict(rules="1942-2e", attacker="10 ftr 1 bmb",
                              defender="9 inf 3 art 2 aa", retreat_below=0.4),
    "strafe, only air": dict(rules="revised", attacker="2 inf 5 ftr 3 bmb",
                             defender="8 inf 1 tank 1 aa", strafe=2,
                             retreat_when_only_air=True),
}


def _solve(battle: dict, merge: bool, monkeypatch, row_sweep: bool = True) -> dict:
    monkeypatch.setattr(exact, "MERGE_BLOCKS", merge)
    monkeypatch.setattr(exact, "ROW_SWEEP", row_sweep)
    api.forget_compiled()
    return answers(battlecalc.simulate(**battle, method="exact"))


@pytest.mark.parametrize("name", list(BATTLES))
def test_merged_solve_equals_the_block_by_block_one(name, monkeypatch):
    assert_same(_solve(BATTLES[name], True, monkeypatch),
                 _solve(BATTLES[name], False, monkeypatch))


SWEPT = {
    **BATTLES,
    "no AA": dict(rules="1942-2e", attacker="12 inf 4 art 5 tank 3 ftr 2 bmb",
                  defender="16 inf 3 art 2 tank 2 ftr"),
    "land first, retreat after 2": dict(rules="1942-2e", attacker="8 inf 3 tank 4 ftr",
                                        defender="10 inf 2 art 1 aa", retreat_after=2),
    "retreat when 3 left": dict(rules="revised", attacker="9 inf 4 tank 2 ftr",
                                defender="11 inf 2 tank", retreat_when_left=3),
    "classic, defender wiped at once": dict(rules="classic", attacker="14 ftr 6 bmb",
                                            defender="2 inf 1 aa"),
}


@pytest.mark.parametrize("merge", [True, False])
@pytest.mark.parametrize("name", list(SWEPT))
def test_row_sweep_equals_the_pair_sweep(name, merge, monkeypatch):
    jit.compiled()  # (the compiled kernels, as battles of some size run; plain: plain ones)
    assert_same(_solve(SWEPT[name], merge, monkeypatch),
                 _solve(SWEPT[name], merge, monkeypatch, row_sweep=False))


@pytest.mark.parametrize("name", list(BATTLES))
def test_merged_states_are_the_same_units(name):
    compiled = compiled_tables(BATTLES[name])
    att = compiled.attacker
    merge, sweep = att.merged_walks
    # (and the solve merges them)
    solve = exact.ExactSolve(compiled)
    solve.run()
    assert solve.merged
    assert (att.survivors[merge] == att.survivors).all()
    assert (att.ipc_lost[merge] == att.ipc_lost).all()
    # a state is merged into block 0 only, and the rows played are the states kept
    assert (merge[merge != np.arange(att.n_states)] < att.blocks[1, 0]).all()
    assert sorted(sweep) == sorted(np.flatnonzero(merge == np.arange(att.n_states)))


def test_aircraft_only_attacker_is_one_walk():
    # 25 fighters against 2 AAA (6 shots): blocks of 25 .. 19 fighters, each the walk of 25
    # fighters from its b-th state on: 26 rows in all, block b starting at state b
    att = compiled_tables(BATTLES["aircraft only"]).attacker
    merge, sweep = att.merged_walks
    assert len(att.blocks) == 7
    assert list(sweep) == list(range(26))
    assert [merge[offset] for offset in att.blocks[:, 0]] == list(range(7))


def test_land_unit_first_keeps_each_block_start():
    # 1 art, 7 ftr, 9 bmb against 3 AAA (9 shots, fighters then bombers shot down): block b
    # starts with the artillery and 17 - b aircraft, a state of its own, and its next state
    # (the artillery lost) is block 0's state 1 + b
    att = compiled_tables(BATTLES["one land unit first"]).attacker
    merge, sweep = att.merged_walks
    offsets = att.blocks[:, 0]
    assert len(offsets) == 10
    assert [merge[o] for o in offsets] == list(offsets)
    assert [merge[o + 1] for o in offsets[1:]] == [1 + b for b in range(1, 10)]
    assert len(sweep) == 18 + 9


def test_merged_answers_do_not_depend_on_threads(monkeypatch):
    battle = BATTLES["land units first"]
    by_threads = []
    try:
        for n in (1, 2):
            jit.set_threads(n)
            by_threads.append(_solve(battle, True, monkeypatch))
    finally:
        jit.set_threads(None)
    assert by_threads[0] == by_threads[1]


def test_estimate_counts_the_merged_table(monkeypatch):
    # 25 fighters against 2 AAA: 26 of the blocks' 161 states are played
    compiled = compiled_tables(BATTLES["aircraft only"])
    merged = exact.seconds_estimate(compiled)
    monkeypatch.setattr(exact, "MERGE_BLOCKS", False)
    assert merged == pytest.approx(exact.seconds_estimate(compiled) * 26 / 161, rel=1e-12)
