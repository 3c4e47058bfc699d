"""Battles that start where they stand (battlecalc.starts, spec.Start): the engine from a round
or a position inside one, against the independent reference (tests/references/start_reference.py) to
1e-12, on random battles of every edition; Monte Carlo from the same starts within its
standard errors; the positions the engine refuses name their step."""

from __future__ import annotations

import json
import random

import pytest
import reference
from helpers import MC_TRIALS, assert_mc_agrees, assert_usage_error, invoke
from start_reference import Position as P
from start_reference import exact_land_from, exact_sea_from
from test_start_reference import _random_sea  # (random sea battles of every edition)
from tiers import sampled

import battlecalc
from battlecalc.errors import BattleInputError

KEYS = ("attacker_win", "defender_win", "draw", "stalemate", "retreat", "takes_territory",
        "mean_rounds")
IPC = ("attacker_ipc_loss", "defender_ipc_loss")
EDITIONS = ("classic", "revised", "aa50", "1942-2e", "1940-2e")


def _options(position) -> dict:
    """simulate's start keywords of a reference Position."""
    if position is None:
        return {}
    out = {"start_round": position.round, "start_step": position.step,
           "hits_on_attacker": position.hits_on_attacker,
           "hits_on_defender": position.hits_on_defender,
           "bombard_hits": position.bombard_hits}
    for side in ("attacker", "defender"):
        waiting = getattr(position, f"{side}_waiting")
        if waiting:
            out[f"{side}_waiting"] = dict(waiting)
    return {k: v for k, v in out.items() if v or k == "start_round"}


def _assert_matches(got, want, where) -> None:
    for key in KEYS:
        assert got[key] == pytest.approx(float(want.get(key, 0)), abs=1e-12), (key, where)
    for key in IPC:
        assert got[key] == pytest.approx(float(want[key]), abs=1e-10), (key, where)
    for side in ("attacker_survivors", "defender_survivors"):
        mine = {u: v for u, v in got[side].items() if v}
        theirs = {u: float(v) for u, v in want[side].items() if v}
        assert mine.keys() == theirs.keys(), (side, where)
        for unit, value in theirs.items():
            assert mine[unit] == pytest.approx(value, abs=1e-12), (side, unit, where)


def _engine(edition, attacker, defender, sea, options, position=None, start_round=None):
    kwargs = dict(rules=edition, attacker=attacker or None, defender=defender, sea=sea,
                  method="exact", **options, **_options(position))
    if start_round is not None:
        kwargs["start_round"] = start_round
    return battlecalc.simulate(**kwargs).to_dict()


def _land(rng, edition):
    units = [u for u in reference.STATS[edition] if u != "aa"]
    air = [u for u in reference.AIRCRAFT if u in reference.STATS[edition]]
    attacker = {}
    for _ in range(rng.randint(1, 3)):
        u = rng.choice(units + air)
        attacker[u] = attacker.get(u, 0) + 1
    defender = {}
    for _ in range(rng.randint(1, 3)):
        u = rng.choice(units)
        defender[u] = defender.get(u, 0) + 1
    if rng.random() < 0.6:
        defender["aa"] = 1
    options = {}
    if rng.random() < 0.3:
        options["dice"] = "low_luck"
    if rng.random() < 0.3:
        options["retreat_after"] = rng.randint(1, 3)
    elif rng.random() < 0.2:
        options["retreat_when_left"] = 1
    if rng.random() < 0.2:
        options["attacker_ool"] = "weakest"
    return attacker, defender, options


def _attacks(edition, attacker) -> bool:
    return any(reference.STATS[edition][u][1] for u in attacker)


# (round 2 in the quick tier, a later one too in the slow)
@pytest.mark.parametrize("start_round", sampled([(2,), (3,)], 2))
def test_land_from_a_later_round_equals_the_reference(start_round):
    rng = random.Random(300 + start_round)
    for i in range(25):
        edition = EDITIONS[i % 5]
        attacker, defender, options = _land(rng, edition)
        if not _attacks(edition, attacker):
            continue
        want = exact_land_from(edition, attacker, defender, start_round=start_round,
                               **options)
        got = _engine(edition, attacker, defender, False, options, start_round=start_round)
        _assert_matches(got, want, (edition, attacker, defender, options))


@pytest.mark.parametrize("start_round", sampled([(2,), (4,)], 2))
def test_sea_from_a_later_round_equals_the_reference(start_round):
    rng = random.Random(400 + start_round)
    for i in range(20):
        edition = EDITIONS[i % 5]
        attacker, defender, options = _random_sea(rng, edition)
        want = exact_sea_from(edition, attacker, defender, start_round=start_round, **options)
        got = _engine(edition, attacker, defender, True, options, start_round=start_round)
        _assert_matches(got, want, (edition, attacker, defender, options))


def _land_positions(rng, edition, attacker, defender):
    """Positions of a land round the engine solves, for these armies."""
    air = [u for u in attacker if u in reference.AIRCRAFT]
    positions = [P(round=1, step="attacker_fire"), P(round=2, step="attacker_fire"),
                 P(round=rng.randint(1, 3), step="defender_fire",
                   hits_on_defender=rng.randint(0, 2)),
                 P(round=rng.randint(1, 3), step="general_casualties",
                   hits_on_attacker=rng.randint(0, 2), hits_on_defender=rng.randint(0, 1)),
                 P(round=rng.randint(1, 2), step="end_of_round")]
    if "aa" in defender and air:
        positions.append(P(round=1, step="aa_casualties", hits_on_attacker=rng.randint(0, 1)))
        positions.append(P(round=1, step="bombard_fire", attacker_waiting={air[0]: 1}))
    chosen = [u for u in defender if u != "aa" or edition in ("1942-2e", "1940-2e")]
    if chosen:
        positions.append(P(round=rng.randint(1, 2), step="defender_fire",
                           defender_waiting={rng.choice(chosen): 1}))
    return positions


def _standing(army, waiting):
    """The units standing when `waiting` are chosen out of `army` (None: not possible)."""
    left = dict(army)
    for unit, count in waiting.items():
        if left.get(unit, 0) < count:
            return None
        left[unit] -= count
    return {u: c for u, c in left.items() if c}


# the random batteries of positions: 30 battles in the slow tier, the first 15 in the quick
# (tests/tiers.py), each with its share of positions checked


def test_land_positions_inside_a_round_equal_the_reference(full_size):
    rng = random.Random(61)
    checked, count = 0, 30 if full_size else 15
    for i in range(count):
        edition = EDITIONS[i % 5]
        attacker, defender, options = _land(rng, edition)
        if not _attacks(edition, attacker):
            continue
        for position in _land_positions(rng, edition, attacker, defender):
            a_stand = _standing(attacker, position.attacker_waiting)
            d_stand = _standing(defender, position.defender_waiting)
            if a_stand is None or d_stand is None or not a_stand:
                continue
            try:
                want = exact_land_from(edition, a_stand, d_stand, position=position, **options)
            except ValueError:
                continue  # (a position the reference refuses for these armies)
            got = _engine(edition, a_stand, d_stand, False, options, position)
            _assert_matches(got, want, (edition, a_stand, d_stand, options, position))
            checked += 1
    assert checked >= 100 * count // 30


def test_amphibious_round_one_positions_equal_the_reference():
    rng = random.Random(8)
    cases = [("1942-2e", {"tank": 1}, {"infantry": 2, "artillery": 1}, {"battleship": 1},
              {"infantry": 3, "aa": 1}),
             ("revised", {"fighter": 1}, {"infantry": 2}, {"battleship": 1},
              {"infantry": 2, "tank": 1, "aa": 1}),
             ("1940-2e", {}, {"infantry": 2, "artillery": 1}, {"cruiser": 1, "battleship": 1},
              {"infantry": 2, "artillery": 1}),
             ("classic", {"tank": 1}, {"infantry": 2}, {"battleship": 1}, {"infantry": 3})]
    for edition, attacker, landing, bombard, defender in cases:
        fire_back = edition != "revised"
        positions = [P(round=1, step="bombard_fire"),
                     P(round=1, step="bombard_casualties", hits_on_defender=1),
                     P(round=1, step="bombard_casualties", hits_on_defender=0)]
        if fire_back:
            positions += [P(round=1, step="attacker_fire", bombard_hits=1),
                          P(round=1, step="defender_fire", bombard_hits=1,
                            hits_on_defender=rng.randint(0, 1))]
        positions.append(P(round=1, step="attacker_fire",
                           defender_waiting={"infantry": 1}))
        for position in positions:
            d_stand = _standing(defender, position.defender_waiting)
            options = dict(landing=landing, bombard=bombard)
            want = exact_land_from(edition, attacker, d_stand, position=position, **options)
            got = _engine(edition, attacker, d_stand, False, options, position)
            _assert_matches(got, want, (edition, position))


def test_sea_positions_inside_a_round_equal_the_reference(full_size):
    rng = random.Random(62)
    checked, count = 0, 30 if full_size else 15
    for i in range(count):
        edition = EDITIONS[i % 5]
        attacker, defender, options = _random_sea(rng, edition)
        positions = [P(round=rng.randint(1, 2), step="attacker_fire"),
                     P(round=1, step="defender_fire", hits_on_defender=rng.randint(0, 2)),
                     P(round=rng.randint(1, 2), step="general_casualties",
                       hits_on_attacker=rng.randint(0, 2), hits_on_defender=rng.randint(0, 1)),
                     P(round=2, step="end_of_round")]
        if (options.get("attacker_submerge", "never") == "never"
                and options.get("defender_submerge", "never") == "never"
                and set(attacker) != {"transport"} and set(defender) != {"transport"}):
            # (after the round's start checks: no side of transports alone, which they
            # remove at once; a save never stands there with one)
            positions.append(P(round=2, step="attacker_strike"))
        single = [u for u in defender if not u.startswith("battleship") or defender[u] == 0]
        if single:
            positions.append(P(round=1, step="defender_fire",
                               defender_waiting={rng.choice(single): 1}))
        for position in positions:
            d_stand = _standing(defender, position.defender_waiting)
            if not d_stand:
                continue
            try:
                want = exact_sea_from(edition, attacker, d_stand, position=position, **options)
            except ValueError:
                continue
            try:
                got = _engine(edition, attacker, d_stand, True, options, position)
            except BattleInputError as exc:  # (refused, its own test below)
                assert "lone attacking transports" in str(exc)
                continue
            _assert_matches(got, want, (edition, attacker, d_stand, options, position))
            checked += 1
    assert checked >= 80 * count // 30


def test_the_issues_numbers():
    """1942 2E, 3 fighters v 2 infantry 1 AAA: from round 2 no AAA fire (0.803492, 0.149292,
    0.047217, the independent oracle); after the AAA fired in round 1 and the attacker's
    volley missed, the defender's volley to come: 0.530378."""
    battle = dict(rules="1942-2e", attacker="3 fighter", defender="2 infantry 1 aa",
                  method="exact")
    got = battlecalc.simulate(**battle, start_round=2)
    assert [round(got.attacker_win, 6), round(got.defender_win, 6), round(got.draw, 6)] == [
        0.803492, 0.149292, 0.047217]
    assert round(battlecalc.simulate(**battle, start_step="defender_fire").attacker_win,
                 6) == 0.530378


def test_start_round_1_is_the_plain_battle_to_the_last_bit():
    for battle in (dict(rules="1942-2e", attacker="3 fighter 2 inf", defender="2 inf 1 aa"),
                   dict(rules="revised", sea=True, attacker="2 sub 1 dd",
                        defender="1 cv 1 ftr 1 tt")):
        plain = battlecalc.simulate(**battle, method="exact").to_dict()
        started = battlecalc.simulate(**battle, method="exact", start_round=1).to_dict()
        plain.pop("elapsed_s"), started.pop("elapsed_s")
        assert started == plain


@pytest.mark.parametrize("battle, options", [
    (dict(rules="1942-2e", attacker="3 fighter 2 tank", defender="3 inf 1 art 1 aa"),
     dict(start_round=2, retreat_after=3)),
    (dict(rules="revised", attacker="4 inf 2 tank 1 ftr", defender="5 inf 1 tank"),
     dict(start_step="defender_fire", hits_on_defender=1, retreat_when_left=2)),
    (dict(rules="1942-2e", sea=True, attacker="2 sub 2 dd 1 ftr", defender="1 cv 2 ftr 2 sub"),
     dict(start_round=2, start_step="general_casualties", hits_on_attacker=1)),
    (dict(rules="1942-2e", attacker="2 inf 1 tank", landing="2 inf", bombard="1 bb",
          defender="3 inf 1 aa"), dict(start_step="attacker_fire", bombard_hits=1)),
])
def test_monte_carlo_from_a_start_agrees_with_exact(battle, options):
    exact = battlecalc.simulate(**battle, **options, method="exact")
    mc = battlecalc.simulate(**battle, **options, method="mc", trials=MC_TRIALS, seed=5)
    # (each figure within 4 of its own standard errors)
    assert_mc_agrees(mc, exact, probabilities=(), slack=1e-9, means=(
        "attacker_win", "defender_win", "retreat", "mean_rounds", "attacker_ipc_loss"))


@pytest.mark.parametrize("battle, options, message", [
    (dict(sea=True, attacker="2 sub", defender="1 dd"),
     dict(start_step="strike_casualties", hits_on_defender=1), "start_step strike_casualties"),
    (dict(sea=True, attacker="2 sub", defender="1 dd"),
     dict(start_step="defender_strike"), "start_step defender_strike"),
    (dict(attacker="2 inf", defender="1 inf"), dict(start_round=2, start_step="aa_fire"),
     "start_step aa_fire comes in round 1 only"),
    (dict(attacker="2 inf", defender="1 inf"), dict(start_step="attacker_strike"),
     "start_step attacker_strike is not a step of a land battle"),
    (dict(attacker="2 inf", defender="1 inf"), dict(start_step="attacker_fire",
                                                     hits_on_attacker=1),
     "hits_on_attacker at start_step attacker_fire"),
    (dict(attacker="2 ftr", defender="1 inf 1 aa"),
     dict(start_step="aa_casualties", hits_on_attacker=3), "start_step aa_casualties"),
    (dict(attacker="2 inf", defender="1 inf"), dict(start_step="bombard_casualties"),
     "start_step bombard_casualties"),
])
def test_positions_not_solved_are_refused_naming_the_step(battle, options, message):
    with pytest.raises(BattleInputError, match=message):
        battlecalc.simulate(rules="1942-2e", **battle, **options, method="exact")


def test_cli_start_round():
    out = invoke("run", "--rules", "1942-2e", "-a", "3 fighter", "-d", "2 infantry 1 aa",
                 "--start-round", "2", "--method", "exact", "--format", "json")
    assert out.exit_code == 0, out.output
    assert round(json.loads(out.stdout)["attacker_win"], 6) == 0.803492
    assert_usage_error(invoke("run", "--rules", "1942-2e", "-a", "3 fighter", "-d",
                              "2 infantry", "--start-round", "0"), "--start-round")
    assert_usage_error(invoke("run", "--rules", "1942-2e", "--sea", "-a", "2 sub", "-d",
                              "1 dd", "--start-step", "strike_casualties"),
                       "--start-step strike_casualties")
