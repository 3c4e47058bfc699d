"""tests/start_reference.py itself (no package): battles that start where they stand.

* the acceptance numbers of issue 27 (1942-2e AAA after round 1, the defender's volley still to
  come, a revised raid after its AA roll);
* start_round=1 / no position equal (==) to the existing references on random battles;
* small cases worked out by hand (each test says how), in exact Fractions;
* chains: the value at a step is the law-weighted mixture of the values at the next step, for
  every step of a land, a sea and a raid round (the hit laws written out in the test);
* the die-by-die simulations from a position agree with the exact values (4 standard errors);
* the positions it refuses, with the step named.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction as F
from math import comb

import pytest
import raid_reference
import reference
import sea_reference
from start_reference import (
    Position,
    exact_land_from,
    exact_raid_from,
    exact_sea_from,
    simulate_land_from,
    simulate_raid_from,
    simulate_sea_from,
)
from tiers import sampled

P = Position


def binom(n, p):
    return {k: comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)}


def mix(parts):
    """sum of p * result over (p, result): numbers and {name: number} dicts alike."""
    out = {}
    for p, result in parts:
        for key, value in result.items():
            if isinstance(value, dict):
                inner = out.setdefault(key, {})
                for k, v in value.items():
                    inner[k] = inner.get(k, 0) + p * v
            else:
                out[key] = out.get(key, 0) + p * value
    return out


def equal(a, b, keys=None):
    """Equal results (dict values compared without their zero entries)."""
    for key in keys or a:
        x, y = a[key], b[key]
        if isinstance(x, dict):
            x = {k: v for k, v in x.items() if v}
            y = {k: v for k, v in y.items() if v}
        assert x == y, (key, x, y)


OUTCOMES = ("attacker_win", "defender_win", "draw", "stalemate", "retreat")


# ---------------------------------------------------------------------------
# The issue's numbers
# ---------------------------------------------------------------------------

def test_issue_1942_aaa_from_round_2_fires_no_more():
    got = exact_land_from("1942-2e", {"fighter": 3}, {"infantry": 2, "aa": 1}, start_round=2)
    assert [round(float(got[k]), 6) for k in ("attacker_win", "defender_win", "draw")] == [
        0.803492, 0.149292, 0.047217]
    assert got["attacker_win"] + got["defender_win"] + got["draw"] == 1
    # the same as reference.py's solver fighting from the end of round 1
    fresh = exact_land_from("1942-2e", {"fighter": 3}, {"infantry": 2, "aa": 1})
    assert round(float(fresh["attacker_win"]), 6) != 0.803492  # round 1 has the AAA fire


def test_issue_1942_defender_volley_to_come_after_aaa_and_attacker_missed():
    # round 1: the AAA fired (0 hits), the attacker's volley missed; the defender fires now
    pos = P(round=1, step="defender_fire", hits_on_defender=0)
    got = exact_land_from("1942-2e", {"fighter": 3}, {"infantry": 2, "aa": 1}, position=pos)
    assert round(float(got["attacker_win"]), 6) == 0.530378
    # the attacker's volley missing is hits_on_defender=0 or no casualty chosen: the same
    assert got == exact_land_from("1942-2e", {"fighter": 3}, {"infantry": 2, "aa": 1},
                                  position=P(step="defender_fire"))


def test_issue_revised_raid_after_its_aa_missed():
    for pos in (P(step="aa_casualties", hits_on_attacker=0), P(step="bombing")):
        got = exact_raid_from("revised", {"bomber": 1}, target_value=10, aa=True, position=pos)
        assert got["expected_damage"] == F(7, 2)
        assert got["bombers_over_target"] == 1
        assert got["attacker_ipc_loss"] == 0
        assert got["damage_distribution"] == {d: F(1, 6) for d in range(1, 7)}
    fresh = raid_reference.exact_raid("revised", {"bomber": 1}, target_value=10, aa=True)
    assert fresh["expected_damage"] == F(35, 12)  # 2.917: AA fires first
    assert fresh["attacker_ipc_loss"] == F(5, 2)


# ---------------------------------------------------------------------------
# start_round=1 and no position are today's references
# ---------------------------------------------------------------------------

def _random_land(rng, edition):
    units = [u for u in reference.STATS[edition] if u != "aa"]
    air = [u for u in reference.AIRCRAFT if u in reference.STATS[edition]]
    land = [u for u in reference.LANDING_UNITS if u in reference.STATS[edition]]
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
    if rng.random() < 0.35:
        options["landing"] = {rng.choice(land): rng.randint(1, 2)}
        ships = sorted(reference.RULES[edition].bombard_values)
        options["bombard"] = {rng.choice(ships): rng.randint(1, 2)}
    if rng.random() < 0.3:
        options["dice"] = "low_luck"
    if rng.random() < 0.3:
        options["retreat_after"] = rng.randint(1, 2)
    if rng.random() < 0.2:
        options["attacker_ool"] = "weakest"
    return attacker, defender, options


def _random_lands(seed=27, count=30):
    """The battles the test once drew in its loop: the same stream, in the same order."""
    rng = random.Random(seed)
    editions = [reference.EDITIONS[i % 5] for i in range(count)]
    return [(edition, *_random_land(rng, edition)) for edition in editions]


@pytest.mark.parametrize(("edition", "attacker", "defender", "options"),
                         sampled(_random_lands(), 3))
def test_land_start_round_1_is_exact_land_on_random_battles(edition, attacker, defender,
                                                            options):
    want = reference.exact_land(edition, attacker, defender, **options)
    assert exact_land_from(edition, attacker, defender, **options) == want
    assert exact_land_from(edition, attacker, defender, start_round=1, **options) == want
    for pos in (P(), P(round=1, step="aa_fire")):
        got = exact_land_from(edition, attacker, defender, position=pos, **options)
        assert got == want, (edition, attacker, defender, options)


def _random_sea(rng, edition):
    names = [u for u in sea_reference.STATS[edition] if not u.startswith("damaged")]
    sides = []
    for _ in range(2):
        side = {}
        for _ in range(rng.randint(1, 3)):
            u = rng.choice(names)
            side[u] = side.get(u, 0) + 1
        sides.append(side)
    options = {}
    if sea_reference.MODEL[edition] != "classic" and rng.random() < 0.5:
        options["attacker_submerge"] = rng.choice(sea_reference.POLICIES)
        options["defender_submerge"] = rng.choice(sea_reference.POLICIES)
    if rng.random() < 0.3:
        options["dice"] = "low_luck"
    return sides[0], sides[1], options


def test_sea_start_round_1_is_exact_sea_on_random_battles():
    rng = random.Random(2027)
    for i in range(25):
        edition = sea_reference.EDITIONS[i % 5]
        attacker, defender, options = _random_sea(rng, edition)
        want = sea_reference.exact_sea(edition, attacker, defender, **options)
        assert exact_sea_from(edition, attacker, defender, **options) == want
        got = exact_sea_from(edition, attacker, defender, position=P(), **options)
        assert got == want, (edition, attacker, defender, options)


def test_raid_no_position_is_exact_raid_on_random_raids():
    rng = random.Random(7)
    for i in range(20):
        edition = raid_reference.EDITIONS[i % 5]
        attacker = {"bomber": rng.randint(1, 3)}
        defender = None
        options = {"dice": rng.choice(("standard", "low_luck"))}
        if edition == "1940-2e":
            attacker["fighter"] = rng.randint(0, 2)
            defender = {"fighter": rng.randint(0, 2)}
            options["facility"] = rng.choice(("major", "minor"))
            options["attacker_ool"] = rng.choice((None, "bomber"))
        elif edition == "classic":
            options["aa"] = rng.random() < 0.7
        else:
            options["target_value"] = rng.randint(0, 4)
            options["aa"] = rng.random() < 0.7
        if edition != "classic" and rng.random() < 0.3:
            options["attacker_tech"] = ["heavy_bombers"]
        want = raid_reference.exact_raid(edition, attacker, defender, **options)
        assert exact_raid_from(edition, attacker, defender, **options) == want
        assert exact_raid_from(edition, attacker, defender, position=P(), **options) == want


def test_battles_without_round_1_rules_only_shift_their_rounds():
    # no AA, no bombardment: round N is fought as round 1; mean_rounds counts from round 1
    fresh = reference.exact_land("revised", {"infantry": 2, "tank": 1}, {"infantry": 2})
    got = exact_land_from("revised", {"infantry": 2, "tank": 1}, {"infantry": 2},
                          start_round=4)
    assert got == {**fresh, "mean_rounds": fresh["mean_rounds"] + 3}
    for edition in ("revised", "1942-2e", "classic"):
        att, dfn = {"submarine": 1, "fighter": 1}, {"destroyer": 1, "transport": 1}
        fresh = sea_reference.exact_sea(edition, att, dfn)
        got = exact_sea_from(edition, att, dfn, start_round=3)
        assert got == {**fresh, "mean_rounds": fresh["mean_rounds"] + 2}


def test_retreat_after_counts_rounds_from_round_1():
    # retreat_after=R from start_round N <= R: the rounds N..R are fought, as a fresh battle
    # with retreat_after R - N + 1
    att, dfn = {"infantry": 2, "artillery": 1}, {"infantry": 2}
    fresh = reference.exact_land("revised", att, dfn, retreat_after=2)
    got = exact_land_from("revised", att, dfn, start_round=3, retreat_after=4)
    assert got == {**fresh, "mean_rounds": fresh["mean_rounds"] + 2}
    # R < N: the attacker fights round N and retreats at its end (the first retreat point
    # left).  1 inf (hits 1/6) v 1 inf (hits 1/3), round 3:
    got = exact_land_from("revised", {"infantry": 1}, {"infantry": 1}, start_round=3,
                          retreat_after=1)
    assert (got["attacker_win"], got["defender_win"], got["draw"], got["retreat"]) == (
        F(1, 6) * F(2, 3), F(5, 6) * F(1, 3), F(1, 6) * F(1, 3), F(5, 6) * F(2, 3))
    assert got["mean_rounds"] == 3


# ---------------------------------------------------------------------------
# Small cases by hand
# ---------------------------------------------------------------------------

def test_1942_lone_aaa_in_round_2_is_lost_without_dice():
    got = exact_land_from("1942-2e", {"fighter": 1}, {"aa": 1}, start_round=2)
    assert got["attacker_win"] == 1 and got["mean_rounds"] == 1
    assert (got["attacker_ipc_loss"], got["defender_ipc_loss"]) == (0, 5)
    # round 1: the AAA first shoots (1/6) at the fighter
    fresh = exact_land_from("1942-2e", {"fighter": 1}, {"aa": 1})
    assert fresh["attacker_win"] == F(5, 6) and fresh["mean_rounds"] == 0


@pytest.mark.parametrize("edition,fighter_left,bomber_left", [
    ("revised", F(1, 2), F(1, 2)),  # one random aircraft of the two
    ("aa50", F(1, 2), F(1, 2)),
    ("classic", 0, 1),  # the attacker chooses: its cheapest aircraft
    ("1942-2e", 0, 1),
    ("1940-2e", 0, 1),
])
def test_aa_hit_pending_is_taken_by_the_editions_rule(edition, fighter_left, bomber_left):
    # the defender has only its AA gun / AAA: after the AA hit the attacker wins at once
    pos = P(step="aa_casualties", hits_on_attacker=1)
    got = exact_land_from(edition, {"fighter": 1, "bomber": 1}, {"aa": 1}, position=pos)
    assert got["attacker_win"] == 1 and got["mean_rounds"] == 0
    assert got["attacker_survivors"] == {"fighter": fighter_left, "bomber": bomber_left}
    cost = reference.STATS[edition]
    assert got["attacker_ipc_loss"] == ((1 - fighter_left) * cost["fighter"][0]
                                        + (1 - bomber_left) * cost["bomber"][0])


def test_low_luck_aa_hits_pending_follow_triplea_groups():
    # 3 fighters + 3 bombers: strength 6, exactly one hit; no type fills a group of 6, so it
    # falls on one of the six at random
    pos = P(step="aa_casualties", hits_on_attacker=1)
    got = exact_land_from("revised", {"fighter": 3, "bomber": 3}, {"aa": 1}, position=pos,
                          dice="low_luck")
    assert got["attacker_survivors"] == {"fighter": F(5, 2), "bomber": F(5, 2)}
    # 6 fighters + 1 bomber: the fighters' group takes the sure hit, the rest of a second hit
    # is the bomber
    for hits, left in ((1, {"fighter": 5, "bomber": 1}), (2, {"fighter": 5, "bomber": 0})):
        got = exact_land_from("revised", {"fighter": 6, "bomber": 1}, {"aa": 1},
                              position=P(step="aa_casualties", hits_on_attacker=hits),
                              dice="low_luck")
        assert got["attacker_survivors"] == left
    with pytest.raises(ValueError, match="low luck cannot roll 2 AA hits"):
        exact_land_from("revised", {"fighter": 3, "bomber": 3}, {"aa": 1},
                        position=P(step="aa_casualties", hits_on_attacker=2), dice="low_luck")


def test_revised_bombardment_casualties_never_fire_back():
    # one bombard hit on {infantry, fighter}: the infantry (land) is removed at once; then 1
    # landed infantry against the fighter alone
    after = reference.exact_land("revised", {}, {"fighter": 1}, landing={"infantry": 1})
    for pos in (P(step="bombard_casualties", hits_on_defender=1),
                P(step="attacker_fire", defender_waiting={"infantry": 1})):
        defender = {"infantry": 1, "fighter": 1} if pos.step == "bombard_casualties" else {
            "fighter": 1}
        got = exact_land_from("revised", {}, defender, landing={"infantry": 1},
                              bombard={"battleship": 1}, position=pos)
        equal(got, after, OUTCOMES + ("takes_territory", "mean_rounds", "attacker_ipc_loss"))
        assert got["defender_ipc_loss"] == after["defender_ipc_loss"] + 3


def test_v3_subs_hit_in_the_surprise_strike_still_strike_back():
    # 1942-2e sub v sub, no destroyers: the defender's sub, hit by the attacker's strike,
    # fires its own strike (defence 1) before it goes
    for defender, pos in (({"submarine": 1}, P(step="defender_strike", hits_on_defender=1)),
                          ({}, P(step="defender_strike",
                                 defender_waiting={"submarine": 1}))):
        got = exact_sea_from("1942-2e", {"submarine": 1}, defender, position=pos)
        assert (got["attacker_win"], got["draw"], got["mean_rounds"]) == (F(5, 6), F(1, 6), 1)
        assert got["defender_ipc_loss"] == 6


def test_revised_opening_casualty_of_a_side_with_a_destroyer_fires_in_the_general_fire():
    # revised sub v sub + destroyer; the attacker's opening fire hit the destroyer.  It still
    # fires (at 3) in round 1's general fire: the attacker's sub is lost w.p. 1/2.  Then sub v
    # sub (both at 2, opening fire): win 2/5, draw 1/5, lose 2/5, 9/5 rounds on average.
    got = exact_sea_from("revised", {"submarine": 1}, {"submarine": 1},
                         position=P(step="attacker_fire", defender_waiting={"destroyer": 1}))
    assert (got["attacker_win"], got["draw"], got["defender_win"]) == (F(1, 5), F(1, 10),
                                                                       F(7, 10))
    assert got["mean_rounds"] == 1 + F(1, 2) * F(9, 5)
    # 1942-2e: the same casualty waiting at "attacker_fire" is removed before it fires
    v3 = exact_sea_from("1942-2e", {"submarine": 1}, {"submarine": 1},
                        position=P(step="attacker_fire", defender_waiting={"destroyer": 1}))
    assert v3 == {**exact_sea_from("1942-2e", {"submarine": 1}, {"submarine": 1},
                                   position=P(step="attacker_fire")),
                  "defender_ipc_loss": v3["defender_ipc_loss"],
                  "tuv_swing": v3["tuv_swing"],
                  "defender_survivors": v3["defender_survivors"]}
    assert v3["defender_survivors"]["destroyer"] == 0


def test_revised_lone_transports_flag_is_the_round_start():
    # a lone attacking transport takes one round of fire (the destroyer at 3) and then
    # retreats; if the round began with another attacker unit (lost in the opening fire), the
    # transport fights this round out and is a lone transport from round 2 on
    pos = P(step="attacker_fire", lone_transports=True)
    got = exact_sea_from("revised", {"transport": 1}, {"destroyer": 1}, position=pos)
    assert (got["retreat"], got["defender_win"], got["mean_rounds"]) == (F(1, 2), F(1, 2), 1)
    pos = P(step="attacker_fire", lone_transports=False)
    got = exact_sea_from("revised", {"transport": 1}, {"destroyer": 1}, position=pos)
    assert (got["retreat"], got["defender_win"], got["mean_rounds"]) == (F(1, 4), F(3, 4),
                                                                         F(3, 2))


def test_1940_raid_after_the_air_battle():
    # the escort and the bomber fired, the interceptor is hit (waits to die) and hit back:
    # the attacker loses its cheapest unit, the escort; the bomber then faces AA (1/6) and
    # rolls 1d6 + 2 on the major complex (cap 20)
    pos = P(step="air_casualties", hits_on_attacker=1, defender_waiting={"fighter": 1})
    got = exact_raid_from("1940-2e", {"fighter": 1, "bomber": 1}, {}, facility="major",
                          position=pos)
    assert got["expected_damage"] == F(5, 6) * F(11, 2)
    assert got["bombers_over_target"] == F(5, 6)
    assert (got["attacker_ipc_loss"], got["defender_ipc_loss"]) == (10 + F(12, 6), 10)
    assert got["defender_survivors"] == {"fighter": 0}
    # bombers shot by AA and not yet removed are losses that do not bomb
    got = exact_raid_from("revised", {"bomber": 1}, target_value=10, aa=True,
                          position=P(step="bombing", attacker_waiting={"bomber": 1}))
    assert (got["expected_damage"], got["attacker_ipc_loss"]) == (F(7, 2), 15)
    assert got["attacker_survivors"] == {"bomber": 1}


def test_the_shared_revised_save_stands_at_the_germans_choice():
    # saves/revised_during_land_to_land_combat.tsvg: West Russia, round 1, the Russians fired
    # 11 dice with 1 hit, "Germans select casualties" next (docs/in-progress.md, step L11);
    # these are the odds `battlecalc game` gives for it today (exact)
    got = exact_land_from("revised", {"infantry": 6, "artillery": 1, "tank": 3, "fighter": 1},
                          {"infantry": 3, "artillery": 1, "tank": 1},
                          position=P(round=1, step="defender_fire", hits_on_defender=1))
    assert {k: round(float(got[k]), 6) for k in (
        "attacker_win", "defender_win", "draw", "takes_territory", "mean_rounds",
        "attacker_ipc_loss", "defender_ipc_loss")} == {
        "attacker_win": 0.99894, "defender_win": 0.000781, "draw": 0.000279,
        "takes_territory": 0.99771, "mean_rounds": 2.691231, "attacker_ipc_loss": 11.62988,
        "defender_ipc_loss": 17.994545}


# ---------------------------------------------------------------------------
# Chains: each step is the mixture of the next one over its hit law
# ---------------------------------------------------------------------------

def test_land_chain_1942_amphibious_every_step():
    att, dfn = {"fighter": 1}, {"infantry": 1, "aa": 1}
    kw = dict(landing={"infantry": 1}, bombard={"battleship": 1})

    def at(position, attacker=att, defender=dfn, landing=None):
        return exact_land_from("1942-2e", attacker, defender, position=position,
                               **{**kw, "landing": landing or kw["landing"]})

    fresh = reference.exact_land("1942-2e", att, dfn, **kw)
    # AA: min(3 x 1, 1) = 1 die at 1
    aa = {k: at(P(step="aa_casualties", hits_on_attacker=k)) for k in (0, 1)}
    equal(fresh, mix((p, aa[k]) for k, p in binom(1, F(1, 6)).items()))
    equal(aa[1], at(P(step="bombard_fire", attacker_waiting={"fighter": 1}), attacker={}))
    equal(aa[0], at(P(step="bombard_fire")))
    # bombardment: the battleship at 4; then the hits go with the general fire
    bomb = {k: at(P(step="bombard_casualties", hits_on_defender=k)) for k in (0, 1)}
    equal(aa[0], mix((p, bomb[k]) for k, p in binom(1, F(4, 6)).items()))
    for hb in (0, 1):
        general = at(P(step="attacker_fire", bombard_hits=hb))
        equal(bomb[hb], general)
        # the attacker's fire: fighter at 3, infantry at 1
        law = {0: F(5, 12), 1: F(6, 12), 2: F(1, 12)}
        parts = []
        for h, p in law.items():
            pending = at(P(step="defender_fire", hits_on_defender=h, bombard_hits=hb))
            # the joint round-1 choice: the AAA first, then the infantry
            lost = {0: {}, 1: {"aa": 1}, 2: {"aa": 1, "infantry": 1}}[min(h + hb, 2)]
            standing = {u: n - lost.get(u, 0) for u, n in dfn.items()}
            chosen = at(P(step="defender_fire", defender_waiting=lost), defender=standing)
            equal(pending, chosen)
            # the defender fires with everything (its casualties too): the infantry at 2
            fired = {hd: at(P(step="general_casualties", hits_on_attacker=hd,
                              defender_waiting=lost), defender=standing) for hd in (0, 1)}
            equal(chosen, mix((q, fired[hd]) for hd, q in binom(1, F(1, 3)).items()))
            # the attacker takes its infantry (3) before its fighter (10)
            end = at(P(step="end_of_round", attacker_waiting={"infantry": 1},
                       defender_waiting=lost), defender=standing,
                     landing={"infantry": 0})
            equal(fired[1], end)
            parts.append((p, pending))
        equal(general, mix(parts))


def test_land_end_of_round_then_start_of_next_round():
    att, dfn = {"infantry": 2, "fighter": 1}, {"infantry": 2, "aa": 1}
    for edition in ("1942-2e", "revised"):
        end = exact_land_from(edition, att, dfn, position=P(round=1, step="end_of_round"))
        start = exact_land_from(edition, att, dfn, start_round=2)
        equal(end, start)
        # with a retreat after round 1 the end of round 1 retreats, round 2's start does not
        end = exact_land_from(edition, att, dfn, position=P(round=1, step="end_of_round"),
                              retreat_after=1)
        assert end["retreat"] == 1 and end["mean_rounds"] == 1
        start = exact_land_from(edition, att, dfn, start_round=2, retreat_after=1)
        assert 0 < start["retreat"] < 1


def test_sea_chain_1942_every_step():
    # attacker sub + destroyer, defender sub + cruiser, 1942-2e: the attacker's sub strikes
    # (no enemy destroyer); the defender's does not (enemy destroyer): it fires in the
    # general fire with sub hits
    edition, att, dfn = "1942-2e", {"submarine": 1, "destroyer": 1}, {"submarine": 1,
                                                                      "cruiser": 1}

    def at(position, attacker=att, defender=dfn):
        return exact_sea_from(edition, attacker, defender, position=position)

    fresh = sea_reference.exact_sea(edition, att, dfn)
    strike = {k: at(P(step="defender_strike", hits_on_defender=k)) for k in (0, 1)}
    equal(fresh, mix((p, strike[k]) for k, p in binom(1, F(2, 6)).items()))
    equal(strike[1], at(P(step="strike_casualties", hits_on_defender=(1, 0, 0))))
    # the strike hit takes the defender's sub (6) before its cruiser (12); it leaves now
    after = at(P(step="attacker_fire", defender_waiting={"submarine": 1}),
               defender={"cruiser": 1})
    equal(strike[1], after)
    # general fire (the struck sub is gone: the positions below start without it): the
    # attacker's destroyer at 2 (its sub struck already)
    plain = at(P(step="attacker_fire"), defender={"cruiser": 1})
    equal(after, plain, OUTCOMES + ("mean_rounds", "attacker_ipc_loss", "attacker_survivors"))
    assert after["defender_ipc_loss"] == plain["defender_ipc_loss"] + 6
    parts = []
    for h, p in binom(1, F(2, 6)).items():
        pending = at(P(step="defender_fire", hits_on_defender=(0, 0, h)),
                     defender={"cruiser": 1})
        # the defender's cruiser (general hit, at 3) fires, also when chosen
        chosen = at(P(step="defender_fire", defender_waiting={"cruiser": h}),
                    defender={"cruiser": 1 - h})
        equal(pending, chosen)
        fired = {hd: at(P(step="general_casualties", hits_on_attacker=(0, 0, hd),
                          hits_on_defender=(0, 0, h)), defender={"cruiser": 1})
                 for hd in (0, 1)}
        equal(pending, mix((q, fired[hd]) for hd, q in binom(1, F(3, 6)).items()))
        # the attacker takes its sub (6) before its destroyer (8)
        end = at(P(step="end_of_round", attacker_waiting={"submarine": 1},
                   defender_waiting={"cruiser": h}),
                 attacker={"destroyer": 1}, defender={"cruiser": 1 - h})
        equal(fired[1], end)
        parts.append((p, pending))
    equal(plain, mix(parts))


def test_sea_chain_revised_opening_fire_with_destroyers():
    # revised: every sub fires in the opening fire; a side with a destroyer keeps its
    # opening casualties for the general fire
    edition, att, dfn = "revised", {"submarine": 1}, {"submarine": 1, "destroyer": 1}

    def at(position, attacker=att, defender=dfn):
        return exact_sea_from(edition, attacker, defender, position=position)

    fresh = sea_reference.exact_sea(edition, att, dfn)
    parts = []
    for k, p in binom(1, F(2, 6)).items():  # the attacker's sub at 2
        pending = at(P(step="defender_strike", hits_on_defender=k))
        both = {kd: at(P(step="strike_casualties", hits_on_attacker=kd,
                         hits_on_defender=k)) for kd in (0, 1)}
        equal(pending, mix((q, both[kd]) for kd, q in binom(1, F(2, 6)).items()))
        parts.append((p, pending))
    equal(fresh, mix(parts))
    # one sub hit on the defender takes its sub (8) before its destroyer (12); with its
    # destroyer the sub stays for the general fire, where subs do not roll
    equal(at(P(step="strike_casualties", hits_on_defender=1)),
          at(P(step="attacker_fire", defender_waiting={"submarine": 1}),
             defender={"destroyer": 1}))


def test_raid_chain_1940_every_step():
    att, dfn, kw = {"fighter": 1, "bomber": 1}, {"fighter": 1}, {"facility": "major"}

    def at(position, attacker=att, defender=dfn):
        return exact_raid_from("1940-2e", attacker, defender, position=position, **kw)

    fresh = raid_reference.exact_raid("1940-2e", att, dfn, **kw)
    # the escort and the bomber roll at 1: at least one hit 11/36 (one interceptor)
    air = {h: at(P(step="air_defender_fire", hits_on_defender=h)) for h in (0, 1)}
    equal(fresh, mix([(F(25, 36), air[0]), (F(11, 36), air[1])]))
    equal(air[1], at(P(step="air_defender_fire", defender_waiting={"fighter": 1}),
                     defender={}))
    # the interceptor (hit or not) rolls at 1
    back = {h: at(P(step="air_casualties", hits_on_attacker=h)) for h in (0, 1)}
    equal(air[0], mix((p, back[h]) for h, p in binom(1, F(1, 6)).items()))
    aa = at(P(step="aa_fire", attacker_waiting={"fighter": 1}), attacker={"bomber": 1})
    equal(back[1], aa)
    bomb = {k: at(P(step="aa_casualties", hits_on_attacker=k, attacker_waiting={"fighter": 1}),
                  attacker={"bomber": 1}) for k in (0, 1)}
    equal(aa, mix((p, bomb[k]) for k, p in binom(1, F(1, 6)).items()))
    equal(bomb[0], at(P(step="bombing", attacker_waiting={"fighter": 1}),
                      attacker={"bomber": 1}))
    assert bomb[0]["expected_damage"] == F(11, 2)


def test_a_fire_under_way_rolls_only_the_units_that_have_not_fired():
    # land, 1942-2e round 2: the fighter (at 3) of the attacker's fire has rolled
    att, dfn = {"fighter": 1, "infantry": 1}, {"infantry": 1, "artillery": 1}

    def at(position):
        return exact_land_from("1942-2e", att, dfn, position=position)

    whole = at(P(round=2, step="attacker_fire"))
    part = {h: at(P(round=2, step="attacker_fire", fired={"fighter": 1}, hits_on_defender=h))
            for h in (0, 1)}
    equal(whole, mix((p, part[h]) for h, p in binom(1, F(1, 2)).items()))
    # everything fired: the defender's fire is next
    equal(at(P(round=2, step="attacker_fire", fired=att, hits_on_defender=1)),
          at(P(round=2, step="defender_fire", hits_on_defender=1)))
    # the defender's infantry (at 2) has rolled, its artillery (at 2) not yet
    both = at(P(round=2, step="defender_fire"))
    half = {h: at(P(round=2, step="defender_fire", fired={"infantry": 1}, hits_on_attacker=h))
            for h in (0, 1)}
    equal(both, mix((p, half[h]) for h, p in binom(1, F(1, 3)).items()))


def test_sea_groups_fired_one_after_the_other_1942():
    # the attacker's sub cannot strike (enemy destroyer): TripleA rolls it in its own group
    # before the fighter; the hits of both are taken together (the project's rule)
    att, dfn = {"submarine": 1, "fighter": 1}, {"destroyer": 1, "transport": 1}

    def at(position, defender=dfn):
        return exact_sea_from("1942-2e", att, defender, position=position)

    whole = at(P(step="attacker_fire"))
    part = {k: at(P(step="attacker_fire", fired={"submarine": 1}, hits_on_defender=(k, 0, 0)))
            for k in (0, 1)}
    equal(whole, mix((p, part[k]) for k, p in binom(1, F(2, 6)).items()))
    # no strike this round: the attacker's fire to come is the whole round 1
    equal(whole, sea_reference.exact_sea("1942-2e", att, dfn))
    # the defender's destroyer (at 2) rolled, its transport (0) does not roll
    done = at(P(step="defender_fire", fired={"destroyer": 1}, hits_on_attacker=(0, 0, 1)))
    equal(done, at(P(step="general_casualties", hits_on_attacker=1)))


# ---------------------------------------------------------------------------
# The die-by-die simulations agree
# ---------------------------------------------------------------------------

# the reference's die-by-die runs: 1,000 trials in the quick tier (every other case), 3,000
# in the slow tier (the same band of 4 standard errors, from the run's own size)
TRIALS = [1000, pytest.param(3000, marks=pytest.mark.slow(reason="3,000 die-by-die trials"))]


def _agree(exact, mc, trials, keys):
    for key in keys:
        p = float(exact[key])
        se = math.sqrt(max(p * (1 - p), 1 / trials) / trials)
        assert abs(mc[key] - p) <= 4 * se, (key, mc[key], p)


LAND_CASES = [
    ("revised", {"fighter": 2, "bomber": 1, "infantry": 1}, {"aa": 1, "infantry": 2},
     P(step="aa_casualties", hits_on_attacker=1), {}),
    ("aa50", {"fighter": 3, "bomber": 1}, {"aa": 1, "infantry": 2},
     P(step="aa_casualties", hits_on_attacker=1), {"dice": "low_luck"}),
    ("1942-2e", {"fighter": 1}, {"infantry": 1, "aa": 1, "fighter": 1},
     P(step="defender_fire", hits_on_defender=1, bombard_hits=1),
     {"landing": {"infantry": 2}, "bombard": {"cruiser": 1}}),
    ("1942-2e", {"tank": 1, "fighter": 1}, {"infantry": 2, "aa": 1},
     P(round=2), {"landing": {"infantry": 1}, "retreat_after": 2}),
    ("classic", {"infantry": 1, "tank": 1}, {"infantry": 2},
     P(step="bombard_fire"), {"landing": {"infantry": 1}, "bombard": {"battleship": 2}}),
]


@pytest.mark.parametrize("trials", TRIALS)
@pytest.mark.parametrize("case", sampled([(c,) for c in LAND_CASES], 2,
                                         [f"{c[0]}-{c[3].step}" for c in LAND_CASES]))
def test_land_simulation_agrees(case, trials):
    edition, att, dfn, pos, options = case
    exact = exact_land_from(edition, att, dfn, position=pos, **options)
    mc = simulate_land_from(edition, att, dfn, position=pos, trials=trials, seed=5, **options)
    _agree(exact, mc, trials, OUTCOMES + ("takes_territory",))


SEA_CASES = [
    ("revised", {"submarine": 1, "destroyer": 1}, {"submarine": 2},
     P(step="defender_strike", hits_on_defender=1), {}),
    ("1942-2e", {"submarine": 2, "fighter": 1}, {"carrier": 1, "submarine": 1},
     P(step="strike_casualties", hits_on_attacker=1, hits_on_defender=1),
     {"attacker_submerge": "when-only-subs-left"}),
    ("1940-2e", {"fighter": 1, "tactical_bomber": 1}, {"carrier": 1, "destroyer": 1},
     P(step="defender_fire", hits_on_defender=(0, 1, 0)), {}),
    ("classic", {"submarine": 1, "fighter": 1}, {"submarine": 1, "transport": 1},
     P(step="attacker_strike", round=2), {}),
]


@pytest.mark.parametrize("trials", TRIALS)
@pytest.mark.parametrize("case", sampled([(c,) for c in SEA_CASES], 2,
                                         [f"{c[0]}-{c[3].step}" for c in SEA_CASES]))
def test_sea_simulation_agrees(case, trials):
    edition, att, dfn, pos, options = case
    exact = exact_sea_from(edition, att, dfn, position=pos, **options)
    mc = simulate_sea_from(edition, att, dfn, position=pos, trials=trials, seed=6, **options)
    _agree(exact, mc, trials, OUTCOMES)


def test_raid_simulation_agrees():
    att, dfn = {"fighter": 1, "bomber": 2}, {"fighter": 1}
    pos = P(step="air_defender_fire", hits_on_defender=1)
    exact = exact_raid_from("1940-2e", att, dfn, facility="major", position=pos)
    mc = simulate_raid_from("1940-2e", att, dfn, facility="major", position=pos, trials=3000,
                            seed=8)
    mean = exact["expected_damage"]
    var = sum(p * (d - mean) ** 2 for d, p in exact["damage_distribution"].items())
    assert abs(mc["expected_damage"] - float(mean)) <= 4 * math.sqrt(float(var) / 3000)


# ---------------------------------------------------------------------------
# Refused positions
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("call,message", [
    (lambda: exact_land_from("1942-2e", {"fighter": 1}, {"aa": 1},
                             position=P(round=2, step="aa_casualties", hits_on_attacker=1)),
     "step 'aa_casualties' in round 2: AA fire and bombardment happen in round 1 only"),
    (lambda: exact_land_from("1942-2e", {"fighter": 1}, {"aa": 1},
                             position=P(step="attacker_fire", hits_on_attacker=1)),
     "hits_on_attacker given at step 'attacker_fire'"),
    (lambda: exact_land_from("revised", {}, {"infantry": 1}, landing={"infantry": 1},
                             bombard={"battleship": 1},
                             position=P(step="attacker_fire", bombard_hits=1)),
     "bombard_hits at step 'attacker_fire' of round 1"),
    (lambda: exact_land_from("1942-2e", {"infantry": 1}, {"infantry": 1},
                             position=P(step="bombard_casualties", hits_on_defender=1)),
     "step 'bombard_casualties' without bombarding ships"),
    (lambda: exact_land_from("1942-2e", {"infantry": 1}, {"infantry": 1},
                             position=P(step="strike_casualties")),
     "unknown land step 'strike_casualties'"),
    (lambda: exact_land_from("1942-2e", {"infantry": 1}, {"infantry": 1}, start_round=0),
     "start_round must be an int >= 1"),
    (lambda: exact_land_from("1942-2e", {"infantry": 1}, {"infantry": 1},
                             position=P(round=3, step="attacker_fire",
                                        defender_waiting={"infantry": 1})),
     "units waiting to die at step 'attacker_fire' of round 3: a round starts with none"),
    (lambda: exact_sea_from("classic", {"submarine": 1}, {"submarine": 1},
                            position=P(step="defender_strike")),
     "step 'defender_strike' in classic"),
    (lambda: exact_sea_from("1942-2e", {"submarine": 1}, {"submarine": 1},
                            position=P(step="start", defender_waiting={"submarine": 1})),
     "units waiting to die at step 'start'"),
    (lambda: exact_raid_from("revised", {"bomber": 1}, target_value=3, aa=True,
                             position=P(step="air_battle")),
     "step 'air_battle': an air battle is fought only in 1940-2e raids"),
    (lambda: exact_raid_from("revised", {"bomber": 1}, target_value=3,
                             position=P(step="aa_casualties", hits_on_attacker=1)),
     "step 'aa_casualties' in a revised raid without AA fire"),
    (lambda: exact_raid_from("1942-2e", {"bomber": 1}, target_value=3,
                             position=P(round=2, step="bombing")),
     "a raid has one round, not round 2"),
    (lambda: exact_land_from("1942-2e", {"infantry": 1}, {"infantry": 1},
                             position=P(step="general_casualties", fired={"infantry": 1})),
     "fired given at step 'general_casualties'"),
    (lambda: exact_sea_from("1942-2e", {"submarine": 1}, {"submarine": 1},
                            position=P(step="attacker_fire", fired={"submarine": 2})),
     "more units than the firing side has"),
])
def test_refused_positions_name_the_step(call, message):
    with pytest.raises(ValueError) as err:
        call()
    assert message in str(err.value)
