"""Classic, Anniversary (AA50) and 1940 Second Edition (issue 11): the package against the
independent references (tests/references/reference.py, tests/references/sea_reference.py; the
contract is docs/editions.md), exact to 1e-9 and Monte Carlo within 4 standard errors at a fixed
seed, plus analytic values worked out by hand, the default orders of losses, the policies each
edition allows or refuses, and the edition files as listed by the command line."""

from __future__ import annotations

import json
from fractions import Fraction as F

import pytest
from helpers import MC_TRIALS, assert_mc_agrees, invoke
from reference import exact_land
from sea_reference import exact_sea
from tiers import sampled

import battlecalc
from battlecalc.dice import force_dice
from battlecalc.orders import LossOrder, casualty_steps
from battlecalc.rules import load_rules

NEW_EDITIONS = ("classic", "aa50", "1940-2e")
OUTCOMES = ("attacker_win", "defender_win", "draw", "stalemate", "retreat")
MEANS = ("attacker_ipc_loss", "defender_ipc_loss", "tuv_swing", "mean_rounds")
TRIALS = MC_TRIALS
SEED = 20_251_111

# (edition, attacker, defender, options as simulate() keywords); the references take the same
# keywords.  Land battles and amphibious assaults:
LAND = [
    # Classic: artillery, one-die-per-aircraft AA gun (attacker chooses), techs
    ("classic", {"infantry": 2, "artillery": 1, "tank": 1}, {"infantry": 3, "tank": 1}, {}),
    ("classic", {"fighter": 2, "bomber": 1, "infantry": 1}, {"infantry": 2, "aa": 1}, {}),
    ("classic", {"fighter": 3, "bomber": 1}, {"infantry": 2, "aa": 2}, {}),
    ("classic", {"bomber": 2, "infantry": 1}, {"infantry": 3},
     {"attacker_tech": ["heavy_bombers"]}),
    ("classic", {"tank": 2, "infantry": 1}, {"infantry": 2, "fighter": 1},
     {"defender_tech": ["jets"]}),
    # AA50: AA gun as Revised (own aircraft), radar, improved artillery, both heavy bombers
    ("aa50", {"infantry": 2, "artillery": 1, "tank": 1}, {"infantry": 3, "tank": 1}, {}),
    ("aa50", {"fighter": 2, "bomber": 1, "infantry": 1}, {"infantry": 2, "aa": 1}, {}),
    ("aa50", {"fighter": 2, "bomber": 1, "infantry": 1}, {"infantry": 2, "aa": 1},
     {"defender_tech": ["radar"]}),
    ("aa50", {"infantry": 3, "artillery": 1}, {"infantry": 3},
     {"attacker_tech": ["improved_artillery"]}),
    ("aa50", {"bomber": 2, "infantry": 1}, {"infantry": 2, "bomber": 1},
     {"attacker_tech": ["lhtr_heavy_bombers"], "defender_tech": ["lhtr_heavy_bombers"]}),
    ("aa50", {"bomber": 2, "tank": 1}, {"infantry": 3}, {"attacker_tech": ["heavy_bombers"]}),
    ("aa50", {"fighter": 2, "tank": 1}, {"infantry": 3}, {"attacker_tech": ["jets"]}),
    # 1940 2E: mechanized infantry, tactical bombers paired with fighters and tanks, AAA
    ("1940-2e", {"infantry": 1, "mech_infantry": 2, "artillery": 2},
     {"infantry": 3, "tank": 1}, {}),
    ("1940-2e", {"tactical_bomber": 2, "tank": 1, "fighter": 1}, {"infantry": 3, "aa": 1}, {}),
    ("1940-2e", {"tactical_bomber": 3, "fighter": 1}, {"infantry": 2, "mech_infantry": 1}, {}),
    ("1940-2e", {"tactical_bomber": 2, "tank": 2}, {"tactical_bomber": 1, "tank": 1,
                                                    "infantry": 1}, {}),
    ("1940-2e", {"infantry": 2, "mech_infantry": 2, "artillery": 1},
     {"infantry": 3, "aa": 1, "fighter": 1}, {"attacker_tech": ["improved_artillery"]}),
    ("1940-2e", {"bomber": 2, "tactical_bomber": 1, "fighter": 1}, {"infantry": 2, "aa": 1},
     {"attacker_tech": ["heavy_bombers", "jets"], "defender_tech": ["radar"]}),
    # orders of losses and retreat policies
    ("1940-2e", {"infantry": 2, "mech_infantry": 1, "tank": 1},
     {"infantry": 2, "mech_infantry": 1, "artillery": 1, "aa": 1}, {"aa_last": True}),
    ("1940-2e", {"infantry": 2, "tank": 1, "tactical_bomber": 1}, {"infantry": 3},
     {"retreat_after": 2}),
    ("1940-2e", {"infantry": 3, "tactical_bomber": 1, "fighter": 1}, {"infantry": 3},
     {"attacker_ool": "tactical_bomber", "retreat_when_only_air": True}),
    ("1940-2e", {"infantry": 2, "mech_infantry": 1, "artillery": 1, "fighter": 1},
     {"infantry": 3, "aa": 1}, {"attacker_ool": "*^mech_infantry;*^infantry;1^mech_infantry",
                                "keep_land": 1}),
    ("classic", {"infantry": 3, "tank": 1}, {"infantry": 3}, {"retreat_below": 0.45}),
    ("classic", {"infantry": 2, "fighter": 1}, {"infantry": 2, "tank": 1},
     {"retreat_when_left": 1, "defender_ool": "weakest"}),
    ("aa50", {"infantry": 3, "fighter": 1}, {"infantry": 3},
     {"strafe": 1, "defender_ool": "weakest"}),
    ("aa50", {"infantry": 2, "tank": 1, "bomber": 1}, {"infantry": 3, "aa": 1},
     {"attacker_ool": "weakest", "keep_land": 1}),
    # amphibious assaults: Classic bombardment without a limit, casualties firing back, no
    # retreat at all; AA50 / 1940 2E one ship per landing unit, partial retreats
    ("classic", {"tank": 1}, {"infantry": 2, "fighter": 1},
     {"landing": {"infantry": 2}, "bombard": {"battleship": 3}}),
    ("classic", {"fighter": 1}, {"infantry": 2},
     {"landing": {"infantry": 1, "artillery": 1}, "bombard": {"battleship": 1},
      "retreat_after": 1}),
    ("aa50", {"fighter": 1}, {"infantry": 2, "aa": 1},
     {"landing": {"infantry": 2}, "bombard": {"battleship": 1, "cruiser": 2}}),
    ("aa50", {"tank": 1}, {"infantry": 3},
     {"landing": {"infantry": 1}, "bombard": {"cruiser": 1}, "retreat_after": 1}),
    ("1940-2e", {"tank": 1, "tactical_bomber": 1}, {"infantry": 2, "aa": 1},
     {"landing": {"mech_infantry": 1, "artillery": 1},
      "bombard": {"battleship": 1, "cruiser": 1}}),
    ("1940-2e", {"fighter": 1, "tank": 1}, {"infantry": 3},
     {"landing": {"infantry": 1}, "bombard": {"battleship": 1}, "retreat_after": 1}),
    ("1940-2e", {}, {"infantry": 1, "mech_infantry": 1, "aa": 1},
     {"landing": {"mech_infantry": 2}, "bombard": {"battleship": 2, "cruiser": 1},
      "retreat_below": 0.45}),
]

# Sea battles
SEA = [
    # Classic: sneak attack (attacker only), cancelled by a destroyer; defending subs fire with
    # the others; air hits subs; one-hit battleships; lone transports retreat after a volley
    ("classic", {"submarine": 1}, {"transport": 1}, {}),
    ("classic", {"submarine": 2}, {"submarine": 1, "carrier": 1}, {}),
    ("classic", {"submarine": 2, "fighter": 1}, {"destroyer": 1, "submarine": 1}, {}),
    ("classic", {"submarine": 1, "destroyer": 1}, {"submarine": 2, "fighter": 1}, {}),
    ("classic", {"battleship": 1, "fighter": 1}, {"carrier": 1, "fighter": 2}, {}),
    ("classic", {"transport": 2, "submarine": 1}, {"destroyer": 1}, {}),
    ("classic", {"submarine": 2}, {"battleship": 1, "transport": 1},
     {"attacker_tech": ["super_subs"]}),
    ("classic", {"bomber": 1, "fighter": 1}, {"submarine": 2, "carrier": 1},
     {"attacker_tech": ["heavy_bombers"], "defender_tech": ["jets"]}),
    # AA50: the 1942 2E sea battle
    ("aa50", {"submarine": 2, "bomber": 1}, {"carrier": 1, "fighter": 1, "destroyer": 1}, {}),
    ("aa50", {"submarine": 3}, {"destroyer": 1, "submarine": 1},
     {"attacker_submerge": "first-chance"}),
    ("aa50", {"battleship": 1, "destroyer": 1}, {"battleship": 1, "cruiser": 1}, {}),
    ("aa50", {"destroyer": 1, "fighter": 1}, {"submarine": 2},
     {"defender_submerge": "first-chance"}),
    ("aa50", {"submarine": 2}, {"carrier": 1, "fighter": 1, "bomber": 1},
     {"attacker_tech": ["super_subs"], "defender_tech": ["lhtr_heavy_bombers"]}),
    # 1940 2E: two-hit carriers (healthy and damaged), tactical bombers at sea, submerging
    ("1940-2e", {"bomber": 1}, {"carrier": 1}, {}),
    ("1940-2e", {"tactical_bomber": 2, "fighter": 1},
     {"carrier": 1, "fighter": 2, "destroyer": 1}, {}),
    ("1940-2e", {"battleship": 1, "destroyer": 1},
     {"carrier": 1, "battleship": 1, "transport": 1}, {}),
    ("1940-2e", {"damaged_carrier": 1, "tactical_bomber": 1, "submarine": 1},
     {"submarine": 2, "damaged_battleship": 1}, {}),
    ("1940-2e", {"destroyer": 1, "tactical_bomber": 1}, {"submarine": 2},
     {"defender_submerge": "first-chance"}),
    ("1940-2e", {"submarine": 2, "tactical_bomber": 1}, {"carrier": 1, "fighter": 1},
     {"attacker_submerge": "when-only-subs-left"}),
    ("1940-2e", {"cruiser": 1, "tactical_bomber": 1, "fighter": 1},
     {"carrier": 1, "tactical_bomber": 1, "submarine": 1}, {}),
]


def _id(battle) -> str:
    edition, attacker, defender, options = battle

    def short(army):
        return "+".join(f"{n}{u[:4]}" for u, n in army.items()) or "-"

    extra = "+".join(k for k in options)
    return f"{edition}:{short(attacker)}-v-{short(defender)}" + (f"[{extra}]" if extra else "")


def _land(battle, **run):
    edition, attacker, defender, options = battle
    return battlecalc.simulate(rules=edition, attacker=attacker or None, defender=defender,
                               **options, **run)


def _sea(battle, **run):
    edition, attacker, defender, options = battle
    return battlecalc.simulate(rules=edition, attacker=attacker, defender=defender, sea=True,
                               **options, **run)


def _assert_matches(result, expected, keys):
    for key in keys:
        assert getattr(result, key) == pytest.approx(float(expected[key]), abs=1e-9), key
    for side in ("attacker_survivors", "defender_survivors"):
        got = getattr(result, side)
        for unit, value in expected[side].items():
            assert got.get(unit, 0.0) == pytest.approx(float(value), abs=1e-9), (side, unit)


def _assert_within_four_se(mc, expected, keys):
    assert mc.method == "mc" and mc.trials == TRIALS
    assert_mc_agrees(mc, expected, probabilities=keys, means=MEANS)


class _Computed(dict):
    """{index: answer}, each answer computed when first asked for (the quick tier asks for
    every other battle's)."""

    def __init__(self, compute):
        super().__init__()
        self.compute = compute

    def __missing__(self, index):
        self[index] = answer = self.compute(index)
        return answer


@pytest.fixture(scope="module")
def land_references():
    return _Computed(lambda i: exact_land(LAND[i][0], LAND[i][1], LAND[i][2], **LAND[i][3]))


@pytest.fixture(scope="module")
def sea_references():
    return _Computed(lambda i: exact_sea(SEA[i][0], SEA[i][1], SEA[i][2], **SEA[i][3]))


# each battery: every other battle in the quick tier (the same ones for the exact solver and
# Monte Carlo, so that the quick tier computes half the references), all in the slow
LAND_CASES = sampled([(i,) for i in range(len(LAND))], 2, [_id(b) for b in LAND])
SEA_CASES = sampled([(i,) for i in range(len(SEA))], 2, [_id(b) for b in SEA])


@pytest.mark.parametrize("index", LAND_CASES)
def test_land_exact_matches_reference(index, land_references):
    result = _land(LAND[index], method="exact")
    assert result.method == "exact" and result.pruned < 1e-9
    _assert_matches(result, land_references[index], (*OUTCOMES, "takes_territory", *MEANS))


@pytest.mark.parametrize("index", LAND_CASES)
def test_land_monte_carlo_within_four_standard_errors_of_reference(index, land_references):
    mc = _land(LAND[index], method="mc", trials=TRIALS, seed=SEED)
    _assert_within_four_se(mc, land_references[index], (*OUTCOMES, "takes_territory"))


@pytest.mark.parametrize("index", SEA_CASES)
def test_sea_exact_matches_reference(index, sea_references):
    result = _sea(SEA[index], method="exact")
    assert result.method == "exact" and result.pruned < 1e-9
    _assert_matches(result, sea_references[index], (*OUTCOMES, *MEANS))


@pytest.mark.parametrize("index", SEA_CASES)
def test_sea_monte_carlo_within_four_standard_errors_of_reference(index, sea_references):
    mc = _sea(SEA[index], method="mc", trials=TRIALS, seed=SEED)
    _assert_within_four_se(mc, sea_references[index], OUTCOMES)


def test_the_lists_cover_every_new_edition_and_kind():
    for edition in NEW_EDITIONS:
        land = [b for b in LAND if b[0] == edition]
        assert any(not o.get("landing") for _, _, _, o in land)
        assert any(o.get("landing") for _, _, _, o in land)
        assert any(o.get("attacker_tech") or o.get("defender_tech") for _, _, _, o in land)
        assert any(b[0] == edition for b in SEA)
    for edition in ("aa50", "1940-2e"):
        assert any(b[0] == edition and ("attacker_submerge" in b[3] or "defender_submerge"
                                        in b[3]) for b in SEA)


# ---------------------------------------------------------------------------------------------
# Analytic values (each worked out by hand; tests/references/test_references.py checks the
# references against the same numbers)


def _exact(rules, attacker, defender, **options):
    return battlecalc.simulate(rules=rules, attacker=attacker, defender=defender,
                               method="exact", **options)


def approx(value):
    return pytest.approx(float(value), abs=1e-12)


def test_tactical_bomber_paired_with_a_tank():
    # 1 tac (4 when paired) + 1 tank (3) v 1 inf (2); the tank (6) is lost first.  The attacker
    # hits with 1 - (2/6)(3/6) = 5/6 and wins; it misses (1/6): the infantry hits 1/3 (tac
    # alone at 3 v inf: 1/2), else repeat.  (5/6 + (1/6)(1/3)(1/2)) / (1 - (1/6)(2/3)) = 31/32.
    paired = _exact("1940-2e", "1 tac 1 tank", "1 inf")
    assert paired.attacker_win == approx(F(31, 32))
    alone = _exact("1940-2e", "1 tac", "1 inf")
    assert (alone.attacker_win, alone.draw, alone.defender_win) == (
        approx(F(1, 2)), approx(F(1, 4)), approx(F(1, 4)))


def test_tactical_bomber_gets_at_most_one_bonus_and_pairs_one_to_one():
    ruleset = load_rules("1940-2e")

    def dice(force, role="attack"):
        return force_dice(force, ruleset.units, role, ruleset.supports)

    # fighter + tank + tac: one tac at 4, never 5; 2 tacs + 1 fighter: one at 4, one at 3
    assert dice({"fighter": 1, "tank": 1, "tactical_bomber": 1}) == {(3, 1): 2, (4, 1): 1}
    assert dice({"fighter": 1, "tactical_bomber": 2}) == {(3, 1): 2, (4, 1): 1}
    assert dice({"fighter": 2, "tank": 1, "tactical_bomber": 2}) == {(3, 1): 3, (4, 1): 2}
    assert dice({"tank": 1, "tactical_bomber": 1}, "defense") == {(3, 1): 2}  # not on defence


def test_artillery_supports_mechanized_infantry():
    # 1 art (2) + 1 mech (2 supported) v 1 inf; the mech (4, attack 1) is lost first.  Hit
    # 1 - (4/6)^2 = 5/9 -> win; else the infantry hits 1/3 -> art alone (win 2/5), else repeat.
    # (5/9 + (4/9)(1/3)(2/5)) / (1 - (4/9)(2/3)) = 83/95, draw 4/95.
    result = _exact("1940-2e", "1 art 1 mech", "1 inf")
    assert (result.attacker_win, result.draw) == (approx(F(83, 95)), approx(F(4, 95)))
    # improved artillery: one artillery supports the infantry and the mech
    units = load_rules("1940-2e").with_techs(["improved_artillery"])
    assert force_dice({"infantry": 1, "mech_infantry": 1, "artillery": 1}, units.units,
                      "attack", units.supports) == {(2, 1): 3}


def test_heavy_bombers_and_jets_in_each_form():
    # Classic: 3 dice at 4, each may hit: a lone bomber v 1 inf scores with 1 - (1/3)^3 = 26/27
    p, q = F(26, 27), F(1, 3)
    classic = _exact("classic", "1 bmb", "1 inf", attacker_tech="heavy_bombers")
    assert classic.attacker_win == approx(p * (1 - q) / (1 - (1 - p) * (1 - q)))
    assert classic.attacker_ipc_loss == approx(15 * q * (1 - p) / (1 - (1 - p) * (1 - q))
                                               + 15 * p * q / (1 - (1 - p) * (1 - q)))
    # AA50 LHTR: best of 2 on defence too: a defending bomber hits with 11/36
    p, q = F(1, 6), F(11, 36)
    lhtr = _exact("aa50", "1 inf", "1 bmb", defender_tech="lhtr_heavy_bombers")
    assert lhtr.defender_win == approx(q * (1 - p) / (1 - (1 - p) * (1 - q)))
    plain = _exact("aa50", "1 inf", "1 bmb", defender_tech="heavy_bombers")
    q = F(1, 6)  # the printed form changes only the attack
    assert plain.defender_win == approx(q * (1 - p) / (1 - (1 - p) * (1 - q)))
    # jets: Classic fighter defence 5, 1940 2E fighter attack 4
    assert load_rules("classic").with_techs(["jets"]).units["fighter"].defense == 5
    jets = load_rules("1940-2e").with_techs(["jets"]).units["fighter"]
    assert (jets.attack, jets.defense) == (4, 4)


def test_aa_of_each_edition():
    # Classic: 2 dice at 1, the attacker loses the fighter (12) before the bomber (15)
    classic = _exact("classic", "1 ftr 1 bmb", "1 aa")
    assert classic.attacker_survivors["fighter"] == approx(1 - F(11, 36))
    assert classic.attacker_survivors["bomber"] == approx(1 - F(1, 36))
    assert classic.draw == approx(F(1, 36)) and "aa" not in classic.defender_survivors
    # AA50: each die at its own aircraft; radar hits on 2
    radar = _exact("aa50", "1 ftr 1 bmb", "1 aa", defender_tech="radar")
    assert radar.attacker_survivors["fighter"] == approx(F(2, 3))
    assert radar.draw == approx(F(1, 9)) and radar.attacker_ipc_loss == approx(F(22, 3))
    # 1940 2E AAA: 3 dice, losses fighter (10), tac (11), bomber (12); the AAA alone is lost
    v3 = _exact("1940-2e", "1 ftr 1 tac 1 bmb", "1 aa")
    assert v3.attacker_survivors["bomber"] == approx(1 - F(1, 216))
    assert v3.attacker_survivors["fighter"] == approx(F(125, 216))
    assert v3.attacker_win == approx(1 - F(1, 216))
    assert v3.defender_ipc_loss == approx(5 * (1 - F(1, 216)))


def test_classic_bombardment_fires_back_without_a_limit():
    # 1 landing inf + 2 battleships v 1 inf: no hit with (2/6)^2 (5/6) = 5/54; the defender
    # fires back in any case (1/3); then 1 inf v 1 inf (1/4).  (49/54)(2/3) + (5/54)(2/3)(1/4).
    classic = _exact("classic", None, "1 inf", landing="1 inf", bombard="2 bb")
    assert classic.attacker_win == approx(F(67, 108))
    for edition in ("aa50", "1940-2e"):  # one ship per landing unit: 19/36 as 1942 2E
        limited = _exact(edition, None, "1 inf", landing="1 inf", bombard="2 bb")
        assert limited.attacker_win == approx(F(19, 36))
    mech = _exact("1940-2e", None, "1 mech", landing="1 mech", bombard="1 bb")
    assert mech.takes_territory == approx(F(19, 36))


def test_classic_sneak_attack_and_destroyer():
    # 1 sub v 1 transport: the sub hits 1/3 before the transport fires (1/6 back otherwise):
    # (1/3) / (1 - (2/3)(5/6)) = 3/4, never a draw
    tt = _exact("classic", "1 sub", "1 tt", sea=True)
    assert (tt.attacker_win, tt.defender_win, tt.draw) == (approx(F(3, 4)), approx(F(1, 4)), 0)
    # defending subs fire with the others: 1 sub v 1 sub: (1/3) / (1 - 4/9) = 3/5, no draw
    sub = _exact("classic", "1 sub", "1 sub", sea=True)
    assert (sub.attacker_win, sub.defender_win, sub.draw) == (approx(F(3, 5)), approx(F(2, 5)),
                                                              0)
    # a defending destroyer cancels the sneak attack: (1/3)(1/2) / (1 - (2/3)(1/2)) = 1/4
    dd = _exact("classic", "1 sub", "1 dd", sea=True)
    assert (dd.attacker_win, dd.draw, dd.defender_win) == (approx(F(1, 4)), approx(F(1, 4)),
                                                           approx(F(1, 2)))


def test_classic_air_hits_subs_one_hit_battleships_lone_transports_retreat():
    air = _exact("classic", "1 ftr", "1 sub", sea=True)
    assert air.attacker_win == approx(1) and air.mean_rounds == approx(2)  # 1/2 a round
    bb = _exact("classic", "1 bmb", "1 bb", sea=True)
    assert bb.attacker_win == approx(F(4, 6) * F(2, 6) / (1 - F(2, 6) * F(2, 6)))
    assert "damaged_battleship" not in bb.defender_survivors
    lone = _exact("classic", "1 tt", "1 ftr", sea=True)
    assert (lone.retreat, lone.defender_win, lone.mean_rounds) == (approx(F(1, 3)),
                                                                   approx(F(2, 3)), approx(1))


def test_two_hit_carriers_1940():
    # 1 bomber (4) v 1 carrier (defence 2, two hits).  Damaged: win (2/3)(2/3) / (7/9) = 4/7,
    # draw 2/7.  Healthy: an unanswered hit (4/9) leads there, (4/9)(4/7) / (7/9) = 16/49.
    healthy = _exact("1940-2e", "1 bmb", "1 cv", sea=True)
    assert (healthy.attacker_win, healthy.draw) == (approx(F(16, 49)), approx(F(8, 49)))
    assert healthy.defender_survivors["damaged_carrier"] == approx(F(18, 49))
    assert healthy.defender_ipc_loss == approx(16 * F(24, 49))
    damaged = _exact("1940-2e", "1 bmb", "1 dcv", sea=True)
    assert damaged.attacker_win == approx(F(4, 7))
    one_hit = _exact("aa50", "1 bmb", "1 cv", sea=True)
    assert one_hit.attacker_win == approx(F(4, 6) * F(4, 6) / (1 - F(2, 6) * F(4, 6)))


def test_aa50_sea_is_the_1942_sea_battle():
    kwargs = dict(attacker="2 sub 1 bmb", defender="1 cv 1 ftr 1 dd", sea=True)
    aa50, second = _exact("aa50", **kwargs), _exact("1942-2e", **kwargs)
    assert aa50.to_dict()["attacker_win"] == second.attacker_win
    assert aa50.mean_rounds == second.mean_rounds


# ---------------------------------------------------------------------------------------------
# Default orders of losses (docs/editions.md section 3)


def _default_steps(edition, force, role):
    ruleset = load_rules(edition)
    steps = casualty_steps(force, ruleset.units, LossOrder(role), ruleset.supports)
    return [f"{name}(hit)" if kind == "damage" else name for name, kind in steps]


def _every(edition, domains, role):
    """One unit of every type of the domains (healthy forms; attackers that may attack)."""
    units = load_rules(edition).units
    damaged = {u.damaged_form for u in units.values()}
    return {n: 1 for n, u in units.items()
            if u.domain in domains and n not in damaged and (role == "defense" or u.can_attack)}


ORDERS = [
    ("classic", "land", "attack", "infantry artillery tank fighter bomber"),
    ("classic", "land", "defense", "infantry artillery tank fighter bomber"),
    ("aa50", "land", "attack", "infantry artillery tank fighter bomber"),
    ("aa50", "land", "defense", "infantry artillery tank fighter bomber"),
    ("1940-2e", "land", "attack",
     "infantry mech_infantry artillery tank fighter tactical_bomber bomber"),
    ("1940-2e", "land", "defense",
     "aa infantry mech_infantry artillery tank fighter tactical_bomber bomber"),
    ("classic", "sea", "attack",
     "transport submarine destroyer fighter bomber carrier battleship"),
    ("classic", "sea", "defense",
     "transport submarine destroyer fighter bomber carrier battleship"),
    ("aa50", "sea", "attack", "battleship(hit) submarine destroyer fighter cruiser bomber "
     "carrier damaged_battleship transport"),
    ("aa50", "sea", "defense", "battleship(hit) submarine destroyer fighter bomber cruiser "
     "carrier damaged_battleship transport"),
    ("1940-2e", "sea", "attack", "carrier(hit) battleship(hit) submarine destroyer fighter "
     "tactical_bomber cruiser bomber damaged_carrier damaged_battleship transport"),
    ("1940-2e", "sea", "defense", "carrier(hit) battleship(hit) submarine destroyer fighter "
     "tactical_bomber bomber cruiser damaged_carrier damaged_battleship transport"),
]


@pytest.mark.parametrize(("edition", "kind", "role", "expected"), ORDERS,
                         ids=[f"{e}-{k}-{r}" for e, k, r, _ in ORDERS])
def test_default_orders_of_losses(edition, kind, role, expected):
    domains = ("land", "air") if kind == "land" else ("sea", "air")
    assert _default_steps(edition, _every(edition, domains, role), role) == expected.split()


def test_two_kinds_of_two_hit_units_damaged_ones_given():
    # given damaged carriers and battleships: the healthy ones' free hits first, cheapest type
    # first; then the second hits, damaged carriers (16) before damaged battleships (20)
    steps = _default_steps("1940-2e", {"battleship": 1, "damaged_battleship": 1, "carrier": 1,
                                       "damaged_carrier": 1, "destroyer": 1}, "defense")
    assert steps == ["carrier(hit)", "battleship(hit)", "destroyer", "damaged_carrier",
                     "damaged_carrier", "damaged_battleship", "damaged_battleship"]


# ---------------------------------------------------------------------------------------------
# Policies each edition allows or refuses


def test_classic_has_no_amphibious_retreat_aa50_and_1940_retreat_air_and_overland():
    kwargs = dict(attacker="1 ftr 1 tank", defender="3 inf", landing="1 inf")
    for edition, partial in (("classic", False), ("aa50", True), ("1940-2e", True)):
        fight = _exact(edition, **kwargs)
        for policy in ({"retreat_after": 1}, {"retreat_when_left": 2}, {"strafe": 2}):
            retreat = _exact(edition, **kwargs, **policy)
            assert (retreat.attacker_win != fight.attacker_win) == partial, (edition, policy)
            # a full retreat once the landed infantry is lost; never in Classic
            assert (retreat.retreat > 0.0) == partial, (edition, policy)
    # an ordinary Classic land battle retreats as usual: both miss in round 1, (5/6)(4/6)
    plain = _exact("classic", "1 inf", "1 inf", retreat_after=1)
    assert plain.retreat == approx(F(5, 6) * F(4, 6))


@pytest.mark.parametrize(("arguments", "fragment"), [
    (dict(rules="classic", attacker="1 sub", defender="1 tt", sea=True,
          attacker_submerge="first-chance"), "submarines never submerge in classic"),
    (dict(rules="classic", attacker="1 sub", defender="1 dd", sea=True,
          defender_submerge="when-only-subs-left"), "submarines never submerge in classic"),
    (dict(rules="revised", attacker="1 mech", defender="1 inf"), "unknown unit 'mech'"),
    (dict(rules="aa50", attacker="1 tac", defender="1 inf"), "unknown unit 'tac'"),
    (dict(rules="classic", attacker="1 dbb", defender="1 cv", sea=True), "unknown unit 'dbb'"),
    (dict(rules="aa50", attacker="1 bmb", defender="1 dcv", sea=True), "unknown unit 'dcv'"),
    (dict(rules="1940-2e", attacker="1 bmb", defender="1 inf",
          attacker_tech="lhtr_heavy_bombers"), "unknown technology 'lhtr_heavy_bombers'"),
    (dict(rules="classic", attacker="1 ftr", defender="1 aa", defender_tech="radar"),
     "unknown technology 'radar' for classic"),
    (dict(rules="classic", landing="1 inf", bombard="1 dd", defender="1 inf"),
     "destroyer cannot bombard in classic"),
    (dict(rules="1940-2e", landing="1 tac", defender="1 inf"),
     "tactical_bomber cannot land from a transport"),
    (dict(rules="classic", attacker="2 ftr", defender="1 inf 1 aa", aa_last=True),
     "AA guns are never casualties in classic"),
    (dict(rules="aa50", attacker="2 ftr", defender="1 inf 1 aa", aa_last=True),
     "AA guns are never casualties in aa50"),
])
def test_refused_with_a_clear_message(arguments, fragment):
    with pytest.raises(battlecalc.BattleInputError, match=fragment):
        battlecalc.simulate(**arguments, method="exact")


def test_aliases_of_the_new_units():
    result = _exact("1940-2e", "1 mech 1 mec 1 tac 1 art", "1 inf")
    assert result.attacker_survivors.keys() >= {"mech_infantry", "tactical_bomber"}
    sea = _exact("1940-2e", "1 bmb", "1 dcv 1 ca", sea=True)
    assert "damaged_carrier" in sea.defender_survivors


# ---------------------------------------------------------------------------------------------
# The edition files on the command line


TECHS = {
    "classic": {"heavy_bombers", "jets", "super_subs"},
    "aa50": {"heavy_bombers", "lhtr_heavy_bombers", "jets", "super_subs", "radar",
             "improved_artillery"},
    "1940-2e": {"heavy_bombers", "jets", "super_subs", "radar", "improved_artillery"},
    "1942-2e": {"heavy_bombers", "lhtr_heavy_bombers", "jets", "super_subs", "radar",
                "improved_artillery"},
}
UNITS = {
    "classic": ["infantry", "artillery", "tank", "aa", "battleship", "destroyer", "carrier",
                "transport", "submarine", "fighter", "bomber"],
    "aa50": ["infantry", "artillery", "tank", "aa", "fighter", "bomber", "battleship",
             "damaged_battleship", "cruiser", "destroyer", "carrier", "transport", "submarine"],
    "1940-2e": ["infantry", "mech_infantry", "artillery", "tank", "aa", "fighter",
                "tactical_bomber", "bomber", "battleship", "damaged_battleship", "cruiser",
                "destroyer", "carrier", "damaged_carrier", "transport", "submarine"],
}
# (cost, attack, defence, hp) of the units whose values differ between editions
STATS = {
    "classic": {"tank": (5, 3, 2, 1), "fighter": (12, 3, 4, 1), "bomber": (15, 4, 1, 1),
                "battleship": (24, 4, 4, 1), "destroyer": (12, 3, 3, 1),
                "carrier": (18, 1, 3, 1), "transport": (8, 0, 1, 1),
                "submarine": (8, 2, 2, 1), "aa": (5, 0, 0, 1)},
    "aa50": {"tank": (5, 3, 3, 1), "aa": (6, 0, 0, 1), "bomber": (12, 4, 1, 1),
             "battleship": (20, 4, 4, 2), "destroyer": (8, 2, 2, 1), "carrier": (14, 1, 2, 1),
             "transport": (7, 0, 0, 1), "submarine": (6, 2, 1, 1)},
    "1940-2e": {"mech_infantry": (4, 1, 2, 1), "tank": (6, 3, 3, 1),
                "tactical_bomber": (11, 3, 3, 1), "carrier": (16, 0, 2, 2),
                "damaged_carrier": (16, 0, 2, 1), "aa": (5, 0, 0, 1)},
}


def _invoke(*args):
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("edition", NEW_EDITIONS)
def test_units_command_lists_the_edition(edition):
    rows = json.loads(_invoke("units", "--rules", edition, "--format", "json"))
    assert [row["name"] for row in rows] == UNITS[edition]
    by_name = {row["name"]: row for row in rows}
    for name, stats in STATS[edition].items():
        row = by_name[name]
        assert (row["cost"], row["attack"], row["defense"], row["hp"]) == stats, name


@pytest.mark.parametrize("edition", [*NEW_EDITIONS, "1942-2e"])
def test_rules_command_lists_the_technologies(edition):
    rows = json.loads(_invoke("rules", "--rules", edition, "--format", "json"))
    assert {row["name"] for row in rows if row["kind"] == "tech"} == TECHS[edition]
    flags = {row["name"]: row["value"] for row in rows if row["kind"] == "flag"}
    assert flags["bombard_return_fire"] == "True"


def test_rules_command_lists_the_new_editions():
    out = _invoke("rules")
    ids = [line.split()[0] for line in out.splitlines()[1:]]
    assert set(NEW_EDITIONS) <= set(ids)


def test_supports_as_the_units_command_shows_them():
    rows = {row["name"]: row for row in json.loads(_invoke("units", "--rules", "1940-2e",
                                                           "--format", "json"))}
    assert "+1 on attack to 1 infantry or mech_infantry" in rows["artillery"]["abilities"]
    assert "+1 on attack to 1 tactical_bomber" in rows["fighter"]["abilities"]
    assert "+1 on attack to 1 tactical_bomber" in rows["tank"]["abilities"]
