"""Low-luck dice (issue 11): each fire step's group of units firing at the same targets sums its
strength; every full die of it is a sure hit and one die rolls for the rest.  Exact answers against
the independent references (tests/references/reference.py, tests/references/sea_reference.py, their
low-luck rules written without package code), Monte Carlo within 4 standard errors, and the issue's
analytic anchors."""

from __future__ import annotations

import pytest
from helpers import MC_TRIALS, assert_mc_agrees, invoke
from reference import exact_land
from sea_reference import exact_sea

import battlecalc
from battlecalc.dice import hit_distribution

KEYS = ("attacker_win", "defender_win", "draw", "attacker_ipc_loss", "defender_ipc_loss",
        "mean_rounds")

LAND = [
    ("revised", {"infantry": 3}, {"infantry": 2}, {}),
    ("1942-2e", {"infantry": 3, "artillery": 1, "tank": 1}, {"infantry": 3, "tank": 1}, {}),
    # AA where the attacker does not choose: sure hits on full groups of six aircraft a type
    ("revised", {"infantry": 2, "fighter": 7, "bomber": 2}, {"infantry": 3, "aa": 1}, {}),
    ("1942-2e", {"infantry": 2, "fighter": 2, "bomber": 1}, {"infantry": 2, "aa": 1}, {}),
    ("1942-2e", {"fighter": 1}, {"infantry": 2},
     {"landing": {"infantry": 2}, "bombard": {"battleship": 1, "cruiser": 1}}),
    ("revised", {"tank": 1}, {"infantry": 2},
     {"landing": {"infantry": 1}, "bombard": {"battleship": 2}}),
    ("revised", {"bomber": 2, "infantry": 1}, {"infantry": 3}, {"heavy_bombers": True}),
    ("1942-2e", {"bomber": 2, "infantry": 1}, {"infantry": 3}, {"heavy_bombers": True}),
    ("1942-2e", {"infantry": 4, "tank": 2}, {"infantry": 4}, {"retreat_after": 2}),
]
SEA = [
    ("1942-2e", {"submarine": 2, "destroyer": 1, "fighter": 1},
     {"destroyer": 1, "carrier": 1, "fighter": 1, "submarine": 1}),
    ("revised", {"submarine": 2, "fighter": 1}, {"destroyer": 1, "transport": 1}),
    # air without a destroyer fires apart from the ships (other targets): two groups
    ("1942-2e", {"submarine": 2, "fighter": 2}, {"submarine": 1, "carrier": 1, "fighter": 1}),
    ("revised", {"battleship": 1, "submarine": 1}, {"submarine": 2, "fighter": 1,
                                                    "carrier": 1}),
]


def _land(edition, attacker, defender, options, **extra):
    options = dict(options)
    if options.pop("heavy_bombers", False):
        options["attacker_tech"] = "heavy_bombers"
    return battlecalc.simulate(rules=edition, attacker=attacker or None, defender=defender,
                               dice="low_luck", **options, **extra)


@pytest.mark.parametrize("battle", LAND, ids=lambda b: f"{b[0]}-{len(b[1])}-{len(b[2])}")
def test_land_low_luck_matches_the_reference(battle):
    edition, attacker, defender, options = battle
    expected = exact_land(edition, attacker, defender, dice="low_luck", **options)
    result = _land(*battle, method="exact")
    for key in KEYS:
        assert getattr(result, key) == pytest.approx(float(expected[key]), abs=1e-9), key


@pytest.mark.parametrize("battle", SEA, ids=lambda b: f"{b[0]}-{len(b[1])}-{len(b[2])}")
def test_sea_low_luck_matches_the_reference(battle):
    edition, attacker, defender = battle
    expected = exact_sea(edition, attacker, defender, dice="low_luck")
    result = battlecalc.simulate(rules=edition, attacker=attacker, defender=defender, sea=True,
                                 dice="low_luck", method="exact")
    for key in (*KEYS, "stalemate"):
        assert getattr(result, key) == pytest.approx(float(expected[key]), abs=1e-9), key


MONTE_CARLO = [dict(rules=e, attacker=a, defender=d, sea=True) for e, a, d in SEA] + [
    dict(rules=e, attacker=a or None, defender=d, **o) for e, a, d, o in (LAND[2], LAND[4])]


@pytest.mark.parametrize("kwargs", MONTE_CARLO, ids=lambda k: f"{k['rules']}-{k['defender']}")
def test_monte_carlo_low_luck_within_four_standard_errors(kwargs):
    exact = battlecalc.simulate(**kwargs, dice="low_luck", method="exact")
    mc = battlecalc.simulate(**kwargs, dice="low_luck", method="mc", trials=MC_TRIALS, seed=5)
    assert_mc_agrees(mc, exact, probabilities=("attacker_win", "defender_win", "draw",
                                               "stalemate"),
                     means=("attacker_ipc_loss", "defender_ipc_loss", "mean_rounds"))


def test_the_issues_anchors():
    # 3 infantry attacking: strength 3, no sure hit, one die hitting on 3 -> 0 or 1, 1/2 each
    assert list(hit_distribution({(1, 1): 3}, 6, "low_luck")) == [0.5, 0.5]
    # 6 infantry: strength 6, exactly one hit
    assert list(hit_distribution({(1, 1): 6}, 6, "low_luck")) == [0.0, 1.0]
    # in a battle: 6 infantry surely kill one tank in round 1 (the tank, strength 3, kills an
    # infantry half the time)
    r = battlecalc.simulate(rules="revised", attacker="6 inf", defender="1 tank",
                            dice="low_luck", method="exact")
    assert (r.attacker_win, r.mean_rounds, r.attacker_ipc_loss) == pytest.approx((1, 1, 1.5))
    # ... while 3 infantry do it only half the time a round
    r = battlecalc.simulate(rules="revised", attacker="3 inf", defender="1 tank",
                            dice="low_luck", retreat_after=1, method="exact")
    assert r.defender_ipc_loss == pytest.approx(5 * 0.5)


def test_low_luck_changes_the_answer_and_is_reported():
    standard = battlecalc.simulate(rules="1942-2e", attacker="3 inf 1 art 1 tank",
                                   defender="4 inf 1 tank", method="exact")
    low = battlecalc.simulate(rules="1942-2e", attacker="3 inf 1 art 1 tank",
                              defender="4 inf 1 tank", method="exact", dice="low-luck")
    assert abs(low.attacker_win - standard.attacker_win) > 0.01
    assert low.to_dict()["dice"] == "low_luck" and standard.to_dict()["dice"] == "standard"
    assert "low luck" in low.table()


def test_cli_dice_option():
    args = ["run", "--rules", "revised", "-a", "6 inf", "-d", "1 tank", "--format", "json"]
    result = invoke(*args, "--dice", "low-luck")
    assert result.exit_code == 0, result.output
    assert '"dice": "low_luck"' in result.stdout and '"attacker_win": 1.0' in result.stdout
    bad = invoke(*args, "--dice", "loaded")
    assert bad.exit_code == 2 and "Error:" in bad.stderr


def test_dice_is_checked_and_refused_by_formula_editions():
    with pytest.raises(battlecalc.BattleInputError, match="dice"):
        battlecalc.simulate(rules="revised", attacker="1 inf", defender="1 inf", dice="loaded")
    with pytest.raises(battlecalc.BattleInputError, match="dice"):
        battlecalc.simulate(rules="formula", attacker="1 army", defender="1 army",
                            dice="low_luck")
