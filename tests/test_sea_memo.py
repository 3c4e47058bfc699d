"""The exact solver's general (sea) round in two phases (exact._play_phased).

Where a side's subs strike, the closed sweep moves each pair's mass first into a table of
the pairs after the strikes, and plays general fire once from each pair of that table (its
probability from every pair whose strikes lead to it), not once per strike outcome of every
pair.  Checked here: every answer equals the one-phase round (exact.TWO_PHASE = False) to
1e-12, on random sea battles of five editions with subs on either side or both, destroyers
(strikes cancelled, and Revised's strike casualties firing back: pairs played in one phase
among two-phase ones), transports (lone transports), submerging, retreats and low luck; and
small battles against the independent Fraction reference (tests/sea_reference.py).
"""

from __future__ import annotations

import random

import pytest
from exact_paths import SEA_EDITIONS, answers, assert_same, random_army, sea_units
from sea_reference import exact_sea

import battlecalc
from battlecalc import api
from battlecalc.kernels import exact, jit


def _battles(seed: int, count: int) -> list[dict]:
    """Random sea battles, subs on one side or both (the strikes the two phases are for)."""
    rng = random.Random(seed)
    battles = []
    for i in range(count):
        edition = SEA_EDITIONS[i % len(SEA_EDITIONS)]
        units = sea_units(edition)
        where = i % 3  # 0: attacker's subs, 1: defender's, 2: both
        battle = dict(rules=edition, sea=True,
                      attacker=random_army(rng, units, rng.randint(1, 6),
                                     rng.randint(1, 5) if where != 1 else 0),
                      defender=random_army(rng, units, rng.randint(1, 6),
                                     rng.randint(1, 5) if where != 0 else 0))
        extra = rng.randrange(6)
        submerge = battlecalc.load_rules(edition).flags["submerge_timing"] != "never"
        if extra == 1 and submerge:
            battle["attacker_submerge"] = "first-chance"
        elif extra == 2 and submerge:
            battle["defender_submerge"] = "when-only-subs-left"
        elif extra == 3:
            battle["retreat_after"] = rng.randint(1, 3)
        elif extra == 4:
            battle["retreat_when_left"] = rng.randint(1, 3)
        elif extra == 5 and edition != "classic":
            battle["dice"] = "low_luck"
        battles.append(battle)
    return battles


NAMED = {
    "sea 19": dict(rules="1942-2e", sea=True, attacker="4 battleship, 8 cruiser, 3 bomber",
                   defender="8 cruiser, 6 submarine, 2 destroyer"),
    "sea 46": dict(rules="1942-2e", sea=True,
                   attacker="2 battleship, 4 cruiser, 5 submarine, 1 carrier",
                   defender="7 submarine"),
    "subs v air": dict(rules="1942-2e", sea=True, attacker="8 submarine, 1 destroyer",
                       defender="5 fighter, 6 carrier, 2 submarine"),
    "revised, fire back": dict(rules="revised", sea=True,
                               attacker="4 submarine, 2 destroyer, 2 battleship",
                               defender="5 submarine, 1 destroyer, 2 transport"),
    "lone transports": dict(rules="1942-2e", sea=True, attacker="2 cruiser, 4 transport",
                            defender="4 submarine, 1 cruiser"),
}
RANDOM = _battles(2026, 60)


def _solve(battle: dict, two_phase: bool, monkeypatch) -> dict:
    monkeypatch.setattr(exact, "TWO_PHASE", two_phase)
    api.forget_compiled()
    return answers(battlecalc.simulate(**battle, method="exact"))


@pytest.mark.parametrize("name", list(NAMED))
def test_two_phase_round_equals_the_one_phase_round(name, monkeypatch):
    jit.compiled()
    assert_same(_solve(NAMED[name], True, monkeypatch), _solve(NAMED[name], False, monkeypatch))


@pytest.mark.parametrize("i", range(len(RANDOM)))
def test_two_phase_round_on_random_sea_battles(i, monkeypatch):
    jit.compiled()
    assert_same(_solve(RANDOM[i], True, monkeypatch), _solve(RANDOM[i], False, monkeypatch))


@pytest.mark.parametrize("edition, attacker, defender", [
    ("1942-2e", {"submarine": 2, "cruiser": 1}, {"submarine": 2, "fighter": 1}),
    ("1942-2e", {"battleship": 1, "bomber": 1}, {"submarine": 3}),
    ("revised", {"submarine": 2, "destroyer": 1}, {"submarine": 2, "transport": 1}),
    ("classic", {"battleship": 1, "submarine": 1}, {"submarine": 2, "carrier": 1}),
])
def test_two_phase_round_matches_the_reference(edition, attacker, defender, monkeypatch):
    monkeypatch.setattr(exact, "TWO_PHASE", True)
    api.forget_compiled()
    expected = exact_sea(edition, attacker, defender)
    result = battlecalc.simulate(rules=edition, attacker=attacker, defender=defender, sea=True,
                                 method="exact")
    for key in ("attacker_win", "defender_win", "draw", "stalemate", "mean_rounds"):
        assert getattr(result, key) == pytest.approx(float(expected[key]), abs=1e-12), key
