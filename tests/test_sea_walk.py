"""Sea battles without submarines take the exact solver's walk path (the land fast path).

Without submarines on either side every hit may land on any unit (aircraft hit ships, ships
hit aircraft), so each side is one casualty walk in its order of losses, as on land: the
compiler marks them RU_SIMPLE = SIMPLE_EXACT (compile._simple) and the exact solver plays
them by _play / _sweep_walks.  Checked here: the path is chosen where, and only where, it is
the same model (not with submarines on a side, nor an attacker's transports in an edition
where lone attacking transports retreat after one volley); every answer equals the general
round's (compile.SEA_WALK = False) to 1e-12 on random sea battles of every edition (two-hit
battleships and carriers, transports, damaged units, low luck, retreats, the rounds law);
analytic values; Monte Carlo unchanged at a fixed seed (it keeps the general round).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from exact_paths import answers, assert_same, battle_id, compiled_tables

import battlecalc
from battlecalc import api
from battlecalc import compile as compile_module
from battlecalc.kernels import jit
from battlecalc.kernels.layout import RU_SIMPLE, SIMPLE_EXACT
from battlecalc.rules import load_rules

EDITIONS = ("1940-2e", "1942-2e", "revised", "classic", "aa50")
# options a random battle may carry (one each, or none)
OPTIONS = ({}, {}, {"dice": "low_luck"}, {"retreat_after": 2}, {"retreat_below": 0.4},
           {"rounds_distribution": True}, {"retreat_when_left": 2},
           {"attacker_ool": "weakest"})


def _solve(battle: dict, walk: bool, monkeypatch, **extra) -> dict:
    monkeypatch.setattr(compile_module, "SEA_WALK", walk)
    api.forget_compiled()
    try:
        return answers(battlecalc.simulate(**battle, **extra))
    finally:
        api.forget_compiled()


def _random_battles(edition: str, count: int, seed: int, subs: bool = False) -> list[dict]:
    """Random sea battles of an edition: 1-6 unit types a side of its ships and aircraft
    (submarines only if `subs`), 1-5 of each, some with an option of OPTIONS."""
    units = load_rules(edition).units
    names = sorted(n for n, u in units.items()
                   if u.domain in ("sea", "air") and (subs or not u.submarine))
    rng = np.random.default_rng(seed)
    battles = []
    while len(battles) < count:
        sides = []
        for _ in range(2):
            picked = rng.choice(names, size=rng.integers(1, 4), replace=False)
            sides.append({str(n): int(rng.integers(1, 6)) for n in picked})
        attacker, defender = sides
        if all(units[n].attack == 0 for n in attacker):
            continue  # (an attack that cannot fire: nothing to play)
        options = OPTIONS[int(rng.integers(len(OPTIONS)))]
        battles.append(dict(rules=edition, attacker=attacker, defender=defender, sea=True,
                            method="exact", **options))
    return battles


RANDOM = [battle for i, edition in enumerate(EDITIONS)
          for battle in _random_battles(edition, 12, 2026 + i)]


@pytest.mark.parametrize("battle", RANDOM, ids=[battle_id(b) for b in RANDOM])
def test_walk_path_equals_the_general_round(battle, monkeypatch):
    jit.compiled()
    assert_same(_solve(battle, True, monkeypatch), _solve(battle, False, monkeypatch))


def _lone_retreat(battle: dict) -> bool:
    rules = load_rules(battle["rules"])
    return (rules.flags["lone_attacking_transports"] == "one_volley_then_retreat"
            and any(rules.units[n].transport for n in battle["attacker"]))


@pytest.mark.parametrize("battle", RANDOM[::5], ids=[battle_id(b) for b in RANDOM[::5]])
def test_walk_path_is_chosen_for_sea_battles_without_subs(battle, monkeypatch):
    expected = 0 if _lone_retreat(battle) else SIMPLE_EXACT
    assert compiled_tables(battle).rules[RU_SIMPLE] == expected
    monkeypatch.setattr(compile_module, "SEA_WALK", False)
    assert compiled_tables(battle).rules[RU_SIMPLE] == 0


def test_the_edition_battles_of_the_path():
    # (the sampled battles hold both kinds of revised / classic attacker)
    assert any(_lone_retreat(b) for b in RANDOM)
    assert any(not _lone_retreat(b) and b["rules"] == "revised" for b in RANDOM)
    lone = dict(rules="revised", attacker={"battleship": 1, "transport": 2},
                defender={"destroyer": 2}, sea=True)
    assert compiled_tables(lone).rules[RU_SIMPLE] == 0
    destroyed = dict(lone, rules="1942-2e")  # (1942 2E: lone transports are destroyed)
    assert compiled_tables(destroyed).rules[RU_SIMPLE] == SIMPLE_EXACT


@pytest.mark.parametrize("subs", ["attacker", "defender"])
def test_submarines_keep_the_general_round(subs):
    battle = dict(rules="1942-2e", attacker={"cruiser": 2}, defender={"destroyer": 2},
                  sea=True)
    battle[subs] = {**battle[subs], "submarine": 1}
    assert compiled_tables(battle).rules[RU_SIMPLE] == 0
    assert compiled_tables(dict(battle, sea=False, attacker={"infantry": 2},
                        defender={"infantry": 1})).rules[RU_SIMPLE] == 1


def test_one_cruiser_against_one_bomber():
    # 1942 2E: cruiser attacks at 3 (p = 1/2), a defending bomber at 1 (q = 1/6); each round
    # resolves with probability 1 - (1 - p)(1 - q): attacker wins p(1 - q) / that, both lost
    # pq / that
    p, q = Fraction(1, 2), Fraction(1, 6)
    go = 1 - (1 - p) * (1 - q)
    result = battlecalc.simulate(rules="1942-2e", attacker={"cruiser": 1},
                                 defender={"bomber": 1}, sea=True, method="exact")
    assert result.attacker_win == pytest.approx(float(p * (1 - q) / go), abs=1e-14)
    assert result.draw == pytest.approx(float(p * q / go), abs=1e-14)


def test_two_hit_battleship_against_a_destroyer():
    # 1942 2E: battleship (attack 4, two hits) against a destroyer (defence 2): the first
    # hit on the battleship damages it (it fires the same), the second sinks it.  With
    # p = 2/3, q = 1/3: from k hits taken, the attacker wins before the destroyer scores
    # 2 - k more; P(win from k) = sum over ways, solved by the walk: W(1) = p(1-q)/g,
    # W(0) = [p(1-q) + (1-p)q W(1)] / g, g = 1 - (1-p)(1-q)
    p, q = Fraction(2, 3), Fraction(1, 3)
    g = 1 - (1 - p) * (1 - q)
    w1 = p * (1 - q) / g
    w0 = (p * (1 - q) + p * q * 0 + (1 - p) * q * w1) / g
    # both hit at once from 0: the destroyer is lost and the battleship damaged: a win
    w0 += p * q / g
    result = battlecalc.simulate(rules="1942-2e", attacker={"battleship": 1},
                                 defender={"destroyer": 1}, sea=True, method="exact")
    assert result.attacker_win == pytest.approx(float(w0), abs=1e-14)


def test_lone_defending_transports_are_lost_without_dice():
    # 1942 2E: 2 destroyers against 1 fighter and 2 transports: the transports are taken
    # last, and once the fighter is gone they are lost without dice (an attacker win).  The
    # fighter (defence 4, q = 2/3) and the destroyers' 2 dice at 2 (p = 1/3 each)
    result = battlecalc.simulate(rules="1942-2e", attacker={"destroyer": 2},
                                 defender={"fighter": 1, "transport": 2}, sea=True,
                                 method="exact")
    compiled = compiled_tables(dict(rules="1942-2e", attacker={"destroyer": 2},
                            defender={"fighter": 1, "transport": 2}, sea=True))
    assert compiled.rules[RU_SIMPLE] == SIMPLE_EXACT
    # P(attacker wins) by hand: states (destroyers left i, fighter alive); per round the
    # destroyers score hits (i dice at 1/3) and the fighter one die at 2/3
    p, q = Fraction(1, 3), Fraction(2, 3)

    def win(i):
        miss = (1 - p) ** i
        go = 1 - miss * (1 - q)
        # the fighter is hit (the transports then go without dice): a win unless the
        # fighter's hit took the last destroyer
        hit = 1 - miss
        total = hit * (1 - q) + (hit * q if i > 1 else 0)
        if i > 1:
            total += miss * q * win(i - 1)
        return total / go

    assert result.attacker_win == pytest.approx(float(win(2)), abs=1e-14)


def test_monte_carlo_keeps_the_general_round(monkeypatch):
    # the same seed gives the same draws with the walk path on or off (Monte Carlo plays sea
    # battles by the general round either way: RU_SIMPLE == 1 is its walk)
    battle = dict(rules="1940-2e", attacker={"battleship": 2, "fighter": 3, "cruiser": 2},
                  defender={"carrier": 2, "fighter": 4, "transport": 2}, sea=True,
                  method="mc", trials=20_000, seed=7)
    assert _solve(battle, True, monkeypatch) == _solve(battle, False, monkeypatch)


def test_lone_attacking_transports_retreat_after_one_volley():
    # Revised: attacking transports alone take one volley and retreat (the general round's
    # rule, which the walk path does not play: such a battle keeps the general round).  One
    # destroyer defending at 3 hits one of the 8-IPC transports half the time
    battle = dict(rules="revised", attacker={"transport": 2}, defender={"destroyer": 1},
                  sea=True)
    assert compiled_tables(battle).rules[RU_SIMPLE] == 0
    result = battlecalc.simulate(**battle, method="exact").to_dict()
    assert result["retreat"] == pytest.approx(1.0, abs=1e-14)
    assert result["attacker_ipc_loss"] == pytest.approx(8 * 0.5, abs=1e-12)
