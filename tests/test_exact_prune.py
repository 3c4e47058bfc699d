"""The exact solver's pruning and its faster general fire.

Pruning only ever drops probability (a state not played on, the tails of a hit law), so each
probability of a pruned answer lies between the unpruned one less the mass the pruned solve
reports as pruned, and the unpruned one: checked on battles small enough for both, with the
pruning switched on at their size (kernels/exact.PRUNE_PAIRS) and its thresholds raised so
that it really drops something.  The incremental hit assignment of the general fire
(exact._assign_counts / _assign_step) is checked against rules.assign on every state of small
random sides.
"""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

import battlecalc
from battlecalc import api
from battlecalc.kernels import exact, rules
from battlecalc.kernels import layout as c

SMALL = {
    "land, AA blocks": dict(rules="1942-2e", attacker="12 inf 4 art 4 tank 3 ftr 2 bmb",
                            defender="16 inf 3 art 2 tank 2 ftr 2 aa"),
    "land, revised": dict(rules="revised", attacker="14 inf 5 art 5 tank",
                          defender="18 inf 3 tank 1 ftr"),
    "land, amphibious retreat": dict(rules="1942-2e", attacker="3 inf 2 tank 2 ftr",
                                     landing="4 inf 2 art", bombard="1 bb",
                                     defender="7 inf 1 tank 1 aa", retreat_after=2),
    # the closed sweep's two-phase rounds: a pair under the threshold is dropped with the
    # mass that the strikes of earlier pairs left it for general fire
    "sea, subs strike": dict(rules="1942-2e", attacker="8 sub 2 carrier",
                             defender="6 transport 3 cruiser 2 carrier 2 fighter", sea=True),
    "sea, subs strike both ways": dict(rules="1942-2e", attacker="6 sub 2 destroyer 3 bomber",
                                       defender="4 sub 3 cruiser 2 carrier 2 fighter",
                                       sea=True),
}
BIG_LAND = dict(rules="1942-2e", attacker="150 inf, 50 art, 60 tank, 25 ftr, 15 bmb",
                defender="180 inf, 50 art, 40 tank, 25 ftr, 5 aa")


def _law(law) -> dict:
    """A side's final law as {(survivor counts, IPC lost): probability}."""
    return {(tuple(row), ipc): p for row, ipc, p in
            zip(law.survivors.tolist(), law.ipc_lost.tolist(), law.probability, strict=True)}


def _probabilities(result, keys=None) -> np.ndarray:
    """Every probability of an exact result: its outcomes, then both sides' final laws at the
    end states `keys` (default: its own; missing ones 0)."""
    laws = [_law(result.attacker_law), _law(result.defender_law)]
    keys = keys or [sorted(law) for law in laws]
    return np.concatenate([
        [result.attacker_win, result.defender_win, result.draw, result.stalemate,
         result.retreat, result.takes_territory],
        *([law.get(k, 0.0) for k in side_keys] for law, side_keys in zip(laws, keys,
                                                                         strict=True))])


def _gap(full, pruned) -> np.ndarray:
    """full's probabilities less pruned's, end states keyed as in full."""
    keys = [sorted(_law(full.attacker_law)), sorted(_law(full.defender_law))]
    # pruning only removes probability: no end state of its own
    assert set(_law(pruned.attacker_law)) <= set(keys[0])
    assert set(_law(pruned.defender_law)) <= set(keys[1])
    return _probabilities(full, keys) - _probabilities(pruned, keys)


@pytest.fixture
def pruned_hard(monkeypatch):
    """Pruning on at every size, with thresholds far above the shipped ones."""
    monkeypatch.setattr(exact, "PRUNE_PAIRS", 0)
    monkeypatch.setattr(exact, "PRUNE_BUDGET", 1e-5)
    monkeypatch.setattr(exact, "PRUNE_STATE_EPS", 1e-7)
    monkeypatch.setattr(exact, "PRUNE_TAIL_EPS", 1e-8)


@pytest.mark.parametrize("name", list(SMALL))
def test_pruned_answers_lie_within_the_reported_pruned_mass(name, pruned_hard, monkeypatch):
    battle = SMALL[name]
    pruned = battlecalc.simulate(**battle, method="exact")
    monkeypatch.setattr(exact, "PRUNING", False)
    full = battlecalc.simulate(**battle, method="exact")
    assert 1e-9 < pruned.pruned <= 1e-5  # it dropped something, within the budget
    assert full.pruned < 1e-12
    gap = _gap(full, pruned)
    assert gap.min() >= -1e-14
    assert gap.max() <= pruned.pruned - full.pruned + 1e-14


@pytest.mark.parametrize("name", [name for name in SMALL if name.startswith("sea")])
def test_a_spent_budget_plays_every_pair_after_it(name, pruned_hard, monkeypatch):
    # a budget this small is spent early in the sweep: the pairs under the threshold after
    # that are played (two-phase where the pair allows), and the answer stays within it
    monkeypatch.setattr(exact, "PRUNE_BUDGET", 1e-9)
    pruned = battlecalc.simulate(**SMALL[name], method="exact")
    monkeypatch.setattr(exact, "PRUNING", False)
    full = battlecalc.simulate(**SMALL[name], method="exact")
    assert 0.0 < pruned.pruned <= 1e-9 + 1e-12  # (and what STATE_EPS drops: far less)
    gap = _gap(full, pruned)
    assert gap.min() >= -1e-14
    assert gap.max() <= pruned.pruned - full.pruned + 1e-14


def test_small_battles_are_not_pruned_within_the_budget(monkeypatch):
    # below PRUNE_PAIRS nothing changes: the same numbers with the switch off
    battle = SMALL["land, AA blocks"]
    on = battlecalc.simulate(**battle, method="exact")
    monkeypatch.setattr(exact, "PRUNING", False)
    off = battlecalc.simulate(**battle, method="exact")
    assert np.array_equal(_probabilities(on), _probabilities(off)) and on.pruned == off.pruned


@pytest.mark.slow
def test_big_land_battle_is_solved_exactly_by_auto_within_the_budget(monkeypatch):
    result = battlecalc.simulate(**BIG_LAND)
    assert result.method == "exact"
    assert 0.0 <= result.pruned <= exact.PRUNE_BUDGET <= 1e-9
    monkeypatch.setattr(exact, "PRUNING", False)
    full = battlecalc.simulate(**BIG_LAND, method="exact")
    gap = _gap(full, result)
    assert gap.min() >= -1e-13
    assert gap.max() <= result.pruned - full.pruned + 1e-13


def test_pruned_answers_do_not_depend_on_the_thread_count(pruned_hard):
    battle = SMALL["land, AA blocks"]
    try:
        api.set_threads(1)
        one = battlecalc.simulate(**battle, method="exact")
        api.set_threads(2)
        two = battlecalc.simulate(**battle, method="exact")
    finally:
        api.set_threads(None)
    assert np.array_equal(_probabilities(one), _probabilities(two))
    assert one.pruned == two.pruned


def _side(cats: list[int]):
    """A side whose order of losses is the categories `cats` (0 subs, 1 air, 2 others), as the
    rows (ranks) and a function from casualties taken (s, a, n) to its one-state table."""
    ranks = {0: [], 1: [], 2: []}
    for rank, cat in enumerate(cats):
        ranks[cat].append(rank)
    rows, first = [], {}
    for cat in (2, 0, 1):
        first[cat] = len(rows)
        for rank in ranks[cat] + [c.NO_RANK]:
            row = [0] * c.ROW_COLS
            row[c.R_RANK] = rank
            rows.append(row)

    def state(xs, xa, xn):
        st = np.zeros((1, c.STATE_COLS), dtype=np.int64)
        st[0, c.S_SUBS] = len(ranks[0]) - xs
        st[0, c.S_AIR] = len(ranks[1]) - xa
        st[0, c.S_OTHER] = len(ranks[2]) - xn
        st[0, c.S_ROW_S], st[0, c.S_ROW_A], st[0, c.S_ROW_N] = (
            first[0] + xs, first[1] + xa, first[2] + xn)
        st[0, c.S_STRIDE_S], st[0, c.S_STRIDE_A] = 100, 10
        return st

    return np.array(rows, dtype=np.int64), state, [len(ranks[k]) for k in range(3)]


def _random_side_states(seed: int):
    """(casualty categories, rows, state, units left per category) of every state of 40
    random sides of up to 3 subs, 3 aircraft and 3 others."""
    generator = random.Random(seed)
    for _ in range(40):
        cats = [0] * generator.randint(0, 3) + [1] * generator.randint(0, 3) + [2] * \
            generator.randint(0, 3)
        generator.shuffle(cats)
        rows, state, (n_s, n_a, n_n) = _side(cats)
        for xs, xa, xn in itertools.product(range(n_s + 1), range(n_a + 1), range(n_n + 1)):
            yield cats, rows, state(xs, xa, xn), (n_s - xs, n_a - xa, n_n - xn)


def test_incremental_assignment_equals_rules_assign():
    checked = 0
    for cats, rows, st, left in _random_side_states(7):
        for hs, ha, hg, air_subs in itertools.product(range(3), range(3), range(4),
                                                      (False, True)):
            want = rules.assign(st, rows, 0, hs, ha, hg, air_subs)
            got = exact._assign_counts(st, rows, 0, hs, ha, hg, air_subs)
            assert got[0] * 100 + got[1] * 10 + got[2] == want, (cats, left, hs, ha, hg,
                                                                  air_subs)
            checked += 1
    assert checked > 10_000


@pytest.mark.slow
def test_hits_beyond_their_targets_change_nothing():
    # exact._fire sums the hit counts of a kind past what the enemy has for them to land on
    # into one term: rules.assign must give the same state for all of them
    for _, rows, st, (s, a, n) in _random_side_states(11):
        for hs, ha, hg, air_subs in itertools.product(range(8), range(8), range(8),
                                                      (False, True)):
            last = (s + n, a + n + (s if air_subs else 0), s + a + n)
            capped = (min(hs, last[0]), min(ha, last[1]), min(hg, last[2]))
            assert (rules.assign(st, rows, 0, hs, ha, hg, air_subs)
                    == rules.assign(st, rows, 0, *capped, air_subs))
