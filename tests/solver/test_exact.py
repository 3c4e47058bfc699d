"""Big sea battles are solved in a compact mass table (kernels.exact.compact_table).

A sea battle of submarines and aircraft on both sides has three categories of casualties a
side: 150 v 150 units make about 100,000 states a side, 1e10 state pairs, too many for a dense
table, while its probability keeps to a few hundred states a side.  Such a battle's solve
gives each state its row or column of the table when it first gets probability (the pairs
played in the same order).  Checked here: the compact table gives every answer of the dense
one, bit for bit, on random sea battles of every edition (options, rounds law, submerging,
low luck, retreats), also where it starts tiny and grows; the battles that take it; the work
limit and the size limit (a clear error for `exact`, Monte Carlo for `auto`, exit status 2 at
the command line); and the 150 v 150 battle itself, exact under `auto`, against Monte Carlo.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from cli_helpers import assert_usage_error, invoke
from exact_paths import answers, battle_id, compiled_tables

import battlecalc
from battlecalc import api
from battlecalc.kernels import exact, jit
from battlecalc.rules import load_rules

EDITIONS = ("1940-2e", "1942-2e", "revised", "classic", "aa50")
OPTIONS = ({}, {}, {"rounds_distribution": True}, {"attacker_submerge": "first-chance"},
           {"defender_submerge": "when-only-subs-left"}, {"dice": "low_luck"},
           {"retreat_after": 2}, {"retreat_when_left": 3})
BIG = dict(rules="1942-2e", sea=True,
           attacker="20 sub, 25 dd, 25 ca, 20 bb, 10 cv, 35 ftr, 15 bmb",
           defender="20 sub, 30 dd, 25 ca, 25 bb, 15 cv, 35 ftr")


def _random_battles(edition: str, count: int, seed: int) -> list[dict]:
    """Random sea battles of an edition with submarines and aircraft on both sides (and 0-3
    more of its ship types, 1-5 of each), some with an option of OPTIONS."""
    ruleset = load_rules(edition)
    units = ruleset.units
    never = ruleset.flags["submerge_timing"] == "never"
    subs = sorted(n for n, u in units.items() if u.domain == "sea" and u.submarine)
    air = sorted(n for n, u in units.items() if u.domain == "air")
    ships = sorted(n for n, u in units.items() if u.domain == "sea" and not u.submarine)
    rng = np.random.default_rng(seed)
    battles = []
    for _ in range(count):
        sides = []
        for _ in range(2):
            picked = [rng.choice(subs), rng.choice(air),
                      *rng.choice(ships, size=rng.integers(0, 4), replace=False)]
            sides.append({str(n): int(rng.integers(1, 6)) for n in picked})
        options = OPTIONS[int(rng.integers(len(OPTIONS)))]
        if never and any("submerge" in key for key in options):
            options = {}  # (its subs never submerge)
        battles.append(dict(rules=edition, attacker=sides[0], defender=sides[1], sea=True,
                            method="exact", **options))
    return battles


RANDOM = [battle for i, edition in enumerate(EDITIONS)
          for battle in _random_battles(edition, 8, 1201 + i)]


def _solve(battle: dict, compact: bool, monkeypatch, start: int = 4) -> dict:
    """Every answer of the battle, solved in a compact table of start x start to begin with
    (compact) or a dense one."""
    monkeypatch.setattr(exact, "COMPACT_PAIRS", 0 if compact else 10**18)
    monkeypatch.setattr(exact, "TABLE_START", start)
    api.forget_compiled()
    try:
        return answers(battlecalc.simulate(**battle))
    finally:
        api.forget_compiled()


@pytest.mark.parametrize("battle", RANDOM, ids=[battle_id(b) for b in RANDOM])
def test_compact_table_gives_the_dense_tables_answers(battle, monkeypatch):
    jit.compiled()
    dense = _solve(battle, False, monkeypatch)
    assert _solve(battle, True, monkeypatch) == dense  # a tiny table, grown
    assert _solve(battle, True, monkeypatch, start=1024) == dense


def test_a_tiny_table_grows_to_what_the_battle_needs(monkeypatch):
    jit.compiled()
    monkeypatch.setattr(exact, "COMPACT_PAIRS", 0)
    monkeypatch.setattr(exact, "TABLE_START", 2)
    compiled = compiled_tables(dict(rules="1942-2e", attacker="6 sub 4 ftr 2 dd",
                                    defender="5 sub 3 ftr 2 cv 1 dd", sea=True))
    solve = exact.ExactSolve(compiled)
    law = solve.run()
    rows, cols = solve.table
    assert rows > 2 and cols > 2
    monkeypatch.setattr(exact, "COMPACT_PAIRS", 10**18)
    dense = exact.ExactSolve(compiled)
    assert dense.table == (0, 0)
    expected = dense.run()
    assert list(law.outcomes) == list(expected.outcomes)
    assert law.pruned == expected.pruned


def test_pruned_battles_keep_their_answers(monkeypatch):
    """A battle pruned within the budget (PRUNE_PAIRS state pairs or more) is pruned alike."""
    jit.compiled()
    battle = dict(rules="1942-2e", sea=True, method="exact",
                  attacker="4 sub 5 dd 5 ca 4 bb 2 cv 7 ftr 3 bmb",
                  defender="4 sub 6 dd 5 ca 5 bb 3 cv 7 ftr")
    compiled = compiled_tables(battle)
    assert compiled.attacker.n_states * compiled.defender.n_states >= exact.PRUNE_PAIRS
    dense = _solve(battle, False, monkeypatch)
    assert dense[".pruned"] > 0
    compact = _solve(battle, True, monkeypatch, start=64)
    assert compact == dense
    # and they agree with the unpruned answer to the mass they report pruned
    monkeypatch.setattr(exact, "PRUNING", False)
    unpruned = _solve(battle, False, monkeypatch)
    assert unpruned[".pruned"] < compact[".pruned"] / 10
    for key in (".attacker_win", ".defender_win", ".draw"):
        difference = abs(compact[key] - unpruned[key])
        assert difference <= compact[".pruned"] + unpruned[".pruned"], key


@pytest.mark.parametrize("battle, compact", [
    (BIG, True),
    (dict(BIG, attacker="30 dd, 30 ca, 30 bb, 10 cv, 35 ftr, 15 bmb",
          defender="40 dd, 25 ca, 30 bb, 15 cv, 40 ftr"), False),  # one walk a side
    (dict(rules="1942-2e", sea=True, attacker="4 sub 2 ftr", defender="3 sub 2 ftr"), False),
    (dict(rules="1942-2e", attacker="150 inf, 50 art, 60 tank, 25 ftr, 15 bmb",
          defender="180 inf, 50 art, 40 tank, 25 ftr, 5 aa"), False),  # land
])
def test_the_battles_that_take_a_compact_table(battle, compact):
    compiled = api.compile_battle(api.make_battle(**battle))
    rows, cols = exact.compact_table(compiled)
    assert (rows > 0) == compact
    if compact:
        assert compiled.attacker.n_states * compiled.defender.n_states > api.EXACT_STATE_LIMIT
        assert (rows, cols) == (exact.TABLE_START, exact.TABLE_START)


SMALL = dict(rules="1942-2e", sea=True, attacker="6 sub 4 ftr 2 dd",
             defender="5 sub 3 ftr 2 cv 1 dd")


def test_past_the_work_limit_exact_refuses_and_auto_takes_monte_carlo(monkeypatch):
    jit.compiled()
    monkeypatch.setattr(exact, "COMPACT_PAIRS", 0)
    monkeypatch.setattr(exact, "WORK_RATE", 1)  # a second's work: one successor term
    api.forget_compiled()
    with pytest.raises(battlecalc.BattleInputError, match="too large to solve exactly"):
        battlecalc.simulate(**SMALL, method="exact")
    result = battlecalc.simulate(**SMALL, method="auto", trials=20_000, seed=3)
    assert result.method == "mc"
    monkeypatch.setattr(exact, "COMPACT_PAIRS", 10**18)
    api.forget_compiled()
    expected = battlecalc.simulate(**SMALL, method="exact").attacker_win
    error = math.sqrt(expected * (1 - expected) / 20_000)
    assert abs(result.attacker_win - expected) < 4 * error
    monkeypatch.setattr(exact, "COMPACT_PAIRS", 0)
    outcome = invoke("run", "--rules", "1942-2e", "--sea", "--method", "exact",
                     "-a", SMALL["attacker"], "-d", SMALL["defender"])
    assert_usage_error(outcome, "too large to solve exactly")


def test_a_table_past_its_size_limit_is_refused_and_auto_takes_monte_carlo(monkeypatch):
    jit.compiled()
    monkeypatch.setattr(exact, "COMPACT_PAIRS", 0)
    monkeypatch.setattr(exact, "TABLE_START", 2)
    monkeypatch.setattr(exact, "TABLE_CELLS", 16)
    api.forget_compiled()
    with pytest.raises(battlecalc.BattleInputError, match="spreads over more than 16 state"):
        battlecalc.simulate(**SMALL, method="exact")
    assert battlecalc.simulate(**SMALL, method="auto", trials=2000, seed=1).method == "mc"
    api.forget_compiled()


@pytest.mark.slow
def test_150_v_150_sea_battle_with_subs_and_air_on_both_sides():
    """`auto` solves it exactly, pruning at most 1e-9, and Monte Carlo agrees."""
    jit.compiled()
    result = battlecalc.simulate(**BIG, method="auto")
    assert result.method == "exact"
    assert 0 < result.pruned <= 1e-9
    assert result.attacker_win + result.defender_win + result.draw == pytest.approx(
        1.0, abs=1e-9)
    trials = 100_000
    mc = battlecalc.simulate(**BIG, method="mc", trials=trials, seed=11)
    for key in ("attacker_win", "defender_win"):
        p = getattr(result, key)
        assert abs(getattr(mc, key) - p) < 4 * math.sqrt(p * (1 - p) / trials), key
