"""Land battles: the exact solver against the independent reference, Monte Carlo against exact.

Statistical checks use a fixed seed and a band of 4 standard errors derived from the sample
size, so each fails for a broken rule and passes (at that seed) for a correct one.
"""

from __future__ import annotations

import pytest
from helpers import MC_TRIALS, assert_mc_agrees
from reference import exact_land, simulate_land
from tiers import sampled

import battlecalc

# (edition, attacker, defender, attacker techs, defender techs)
BATTLES = [
    ("revised", {"infantry": 1}, {"infantry": 1}, (), ()),
    ("revised", {"infantry": 2}, {"infantry": 1}, (), ()),
    ("revised", {"infantry": 3, "artillery": 1, "tank": 1}, {"infantry": 4, "tank": 1}, (), ()),
    ("1942-2e", {"infantry": 3, "artillery": 1, "tank": 1}, {"infantry": 4, "tank": 1}, (), ()),
    ("revised", {"infantry": 2, "artillery": 2}, {"infantry": 3}, (), ()),
    ("1942-2e", {"infantry": 3, "artillery": 1}, {"infantry": 2, "artillery": 1}, (), ()),
    ("revised", {"tank": 1}, {"infantry": 1, "aa": 1}, (), ()),
    ("revised", {"fighter": 1}, {"aa": 1}, (), ()),
    ("1942-2e", {"bomber": 1}, {"aa": 1}, (), ()),
    ("1942-2e", {"infantry": 1, "artillery": 1}, {"infantry": 1, "aa": 1}, (), ()),
    ("revised", {"fighter": 2, "bomber": 1, "infantry": 1}, {"infantry": 2, "aa": 1},
     ("heavy_bombers",), ("jets",)),
    ("1942-2e", {"fighter": 2, "bomber": 1, "infantry": 1}, {"infantry": 2, "aa": 1},
     ("heavy_bombers", "jets"), ()),
    ("1942-2e", {"fighter": 3, "bomber": 2, "infantry": 1}, {"infantry": 2, "aa": 2, "fighter": 1},
     ("heavy_bombers",), ()),
    ("revised", {"fighter": 3, "bomber": 2, "infantry": 1}, {"infantry": 2, "aa": 2, "fighter": 1},
     (), ("jets",)),
    ("revised", {"bomber": 3}, {"infantry": 3}, ("heavy_bombers",), ()),
    ("1942-2e", {"bomber": 3}, {"infantry": 3}, ("heavy_bombers",), ()),
    ("1942-2e", {"tank": 2, "fighter": 2}, {"infantry": 1, "tank": 1, "aa": 1}, (), ()),
]
IDS = [f"{e}:{'+'.join(f'{n}{u[:3]}' for u, n in a.items())}-v-"
       f"{'+'.join(f'{n}{u[:3]}' for u, n in d.items())}{'-tech' if at or dt else ''}"
       for e, a, d, at, dt in BATTLES]
PROBABILITIES = ("attacker_win", "defender_win", "draw", "stalemate", "takes_territory")
MEANS = ("attacker_ipc_loss", "defender_ipc_loss", "tuv_swing", "mean_rounds")


def _reference(edition, attacker, defender, a_tech, d_tech):
    # The reference takes one switch per technology for the side that uses it in combat.
    return exact_land(
        edition, attacker, defender,
        heavy_bombers="heavy_bombers" in a_tech,
        jets=("jets" in d_tech) if edition == "revised" else ("jets" in a_tech),
    )


def _exact(edition, attacker, defender, a_tech, d_tech):
    return battlecalc.simulate(rules=edition, attacker=attacker, defender=defender,
                               method="exact", attacker_tech=a_tech, defender_tech=d_tech)


def test_one_infantry_each_is_analytic():
    # P(round decides) = 1 - (5/6)(4/6) = 4/9; win 1/4, lose 5/8, draw 1/8, rounds 9/4.
    result = _exact("revised", "1 inf", "1 inf", (), ())
    assert result.attacker_win == pytest.approx(1 / 4, abs=1e-12)
    assert result.defender_win == pytest.approx(5 / 8, abs=1e-12)
    assert result.draw == pytest.approx(1 / 8, abs=1e-12)
    assert result.mean_rounds == pytest.approx(9 / 4, abs=1e-12)
    assert result.trials is None and result.method == "exact"


@pytest.mark.parametrize("battle", sampled([(b,) for b in BATTLES], 2, IDS))
def test_exact_matches_reference(battle):
    expected = _reference(*battle)
    result = _exact(*battle)
    for key in (*PROBABILITIES, *MEANS):
        assert getattr(result, key) == pytest.approx(float(expected[key]), abs=1e-9), key
    for side in ("attacker_survivors", "defender_survivors"):
        got = getattr(result, side)
        for unit, value in expected[side].items():
            assert got.get(unit, 0.0) == pytest.approx(float(value), abs=1e-9), (side, unit)
    total = sum(getattr(result, k) for k in ("attacker_win", "defender_win", "draw",
                                             "stalemate", "retreat"))
    assert total == pytest.approx(1.0, abs=1e-12)
    assert result.pruned < 1e-9


@pytest.mark.parametrize("battle", sampled([(b,) for b in BATTLES], 2, IDS))
def test_monte_carlo_within_four_standard_errors_of_exact(battle):
    edition, attacker, defender, a_tech, d_tech = battle
    trials = MC_TRIALS
    exact = _exact(*battle)
    mc = battlecalc.simulate(rules=edition, attacker=attacker, defender=defender, method="mc",
                             trials=trials, seed=20261129, attacker_tech=a_tech,
                             defender_tech=d_tech)
    assert mc.method == "mc" and mc.trials == trials
    # (the means' band: the sample's own standard error of the mean)
    assert_mc_agrees(mc, exact, probabilities=PROBABILITIES,
                     means=("attacker_ipc_loss", "defender_ipc_loss", "tuv_swing", "mean_rounds"))


@pytest.mark.slow
def test_reference_dice_simulation_agrees_with_reference_exact():
    """The die-by-die reference and the reference solver check each other."""
    edition, attacker, defender = "1942-2e", {"fighter": 2, "infantry": 2}, {"infantry": 2, "aa": 1}
    trials = MC_TRIALS
    exact = exact_land(edition, attacker, defender)
    dice = simulate_land(edition, attacker, defender, trials=trials, seed=7)
    assert_mc_agrees(dice, exact, probabilities=PROBABILITIES, means=(), trials=trials)


def test_same_seed_same_numbers_whatever_the_thread_count():
    kwargs = dict(rules="1942-2e", attacker="6 inf 2 art 2 tank 2 ftr",
                  defender="7 inf 1 tank 1 aa", method="mc", trials=300_000, seed=42)
    before = battlecalc.thread_count()
    try:  # 3 threads even on a one-core machine: the engine's pool, not the cores
        battlecalc.set_threads(1)
        one = battlecalc.simulate(**kwargs).to_dict()
        battlecalc.set_threads(3)
        many = battlecalc.simulate(**kwargs).to_dict()
        again = battlecalc.simulate(**kwargs).to_dict()
    finally:
        battlecalc.set_threads(before)
    for result in (one, many, again):
        result.pop("elapsed_s")
    assert one == many == again
    other_seed = battlecalc.simulate(**{**kwargs, "seed": 43}).to_dict()
    assert other_seed["attacker_win"] != one["attacker_win"]


def test_auto_uses_exact_for_small_battles_and_reports_it():
    result = battlecalc.simulate(rules="revised", attacker="3 inf 1 tank", defender="3 inf")
    assert result.method == "exact"
    assert result.trials is None and result.seed is None


def test_revised_aa_gun_is_neither_casualty_nor_survivor():
    # 2 fighters v 1 infantry + AA gun: the AA gun never appears among survivors or losses.
    result = _exact("revised", "2 ftr", "1 inf 1 aa", (), ())
    assert set(result.defender_survivors) == {"infantry"}
    lost_infantry = 1 - result.defender_survivors["infantry"]
    assert result.defender_ipc_loss == pytest.approx(3 * lost_infantry)


def test_aaa_left_alone_is_destroyed_1942():
    # 1 tank v 1 AAA: the AAA has nothing to shoot at and is lost without dice.
    result = _exact("1942-2e", "1 tank", "1 aa", (), ())
    assert result.attacker_win == 1.0 and result.takes_territory == 1.0
    assert result.mean_rounds == 0.0 and result.defender_ipc_loss == 5.0


def test_result_views_agree():
    result = _exact("1942-2e", "2 inf 1 art", "2 inf", (), ())
    data = result.to_dict()
    frame = result.to_frame()
    assert len(frame) == 1
    for key in ("attacker_win", "defender_win", "draw", "tuv_swing"):
        assert frame[key].iloc[0] == pytest.approx(data[key])
    assert frame["attacker_survivors.artillery"].iloc[0] == pytest.approx(
        data["attacker_survivors"]["artillery"])
    dist = result.attacker_distribution
    assert dist["probability"].sum() == pytest.approx(1.0, abs=1e-12)
    mean_inf = (dist["infantry"] * dist["probability"]).sum()
    assert mean_inf == pytest.approx(result.attacker_survivors["infantry"], abs=1e-12)
    swing = result.swing_distribution
    assert (swing["tuv_swing"] * swing["probability"]).sum() == pytest.approx(result.tuv_swing)


# Amphibious assaults: (edition, overland attacker, landing, bombard, defender, options)
AMPHIBIOUS = [
    ("1942-2e", {}, {"infantry": 1}, {"battleship": 2}, {"infantry": 1}, {}),
    ("revised", {}, {"infantry": 1}, {"battleship": 1}, {"infantry": 1}, {}),
    ("revised", {}, {"infantry": 1}, {"battleship": 2}, {"infantry": 1, "fighter": 1}, {}),
    ("1942-2e", {"tank": 1}, {"infantry": 2, "artillery": 1}, {"battleship": 1, "cruiser": 1},
     {"infantry": 3, "aa": 1, "fighter": 1}, {}),
    ("revised", {"fighter": 1}, {"infantry": 2, "tank": 1}, {"battleship": 2},
     {"infantry": 2, "tank": 1, "aa": 1}, {}),
    ("1942-2e", {"fighter": 2, "bomber": 1}, {"infantry": 1, "artillery": 1},
     {"battleship": 2, "cruiser": 2}, {"infantry": 2, "artillery": 1, "aa": 1, "fighter": 1},
     {"heavy_bombers": True}),
    ("revised", {"fighter": 2, "bomber": 1}, {"infantry": 2, "artillery": 1},
     {"battleship": 1, "destroyer": 2}, {"infantry": 2, "aa": 1, "fighter": 1},
     {"jets": True, "combined_bombardment": True}),
    ("1942-2e", {}, {"tank": 2}, {"cruiser": 2, "battleship": 1},
     {"aa": 1, "infantry": 1, "fighter": 2}, {}),
]
AMPHIBIOUS_IDS = [f"{e}:{'+'.join(f'{n}{u[:3]}' for u, n in {**a, **land}.items())}"
                  f"-bomb-{'+'.join(f'{n}{u[:3]}' for u, n in b.items())}"
                  for e, a, land, b, d, o in AMPHIBIOUS]


def _amphibious(edition, overland, landing, bombard, defender, options, **extra):
    a_tech = [t for t in ("heavy_bombers", "combined_bombardment") if options.get(t)]
    if edition == "1942-2e" and options.get("jets"):
        a_tech.append("jets")
    d_tech = ["jets"] if edition == "revised" and options.get("jets") else []
    return battlecalc.simulate(rules=edition, attacker=overland or None, landing=landing,
                               bombard=bombard, defender=defender, attacker_tech=a_tech,
                               defender_tech=d_tech, **extra)


@pytest.mark.parametrize("battle", sampled([(b,) for b in AMPHIBIOUS], 2, AMPHIBIOUS_IDS))
def test_amphibious_exact_matches_reference(battle):
    edition, overland, landing, bombard, defender, options = battle
    expected = exact_land(edition, overland, defender, landing=landing, bombard=bombard,
                          **options)
    result = _amphibious(*battle, method="exact")
    for key in (*PROBABILITIES, *MEANS):
        assert getattr(result, key) == pytest.approx(float(expected[key]), abs=1e-9), key
    for side in ("attacker_survivors", "defender_survivors"):
        for unit, value in expected[side].items():
            assert getattr(result, side).get(unit, 0.0) == pytest.approx(float(value), abs=1e-9)


@pytest.mark.parametrize("battle", sampled([(b,) for b in AMPHIBIOUS], 2, AMPHIBIOUS_IDS))
def test_amphibious_monte_carlo_within_four_standard_errors(battle):
    exact = _amphibious(*battle, method="exact")
    mc = _amphibious(*battle, method="mc", trials=MC_TRIALS, seed=5)
    assert_mc_agrees(mc, exact, probabilities=PROBABILITIES, means=MEANS)


def test_bombardment_limit_is_one_ship_per_landing_unit_1942():
    # 1 landing infantry: a second battleship adds nothing, and is reported as unused.
    one = _amphibious("1942-2e", {}, {"infantry": 1}, {"battleship": 1}, {"infantry": 1}, {},
                      method="exact")
    two = _amphibious("1942-2e", {}, {"infantry": 1}, {"battleship": 2}, {"infantry": 1}, {},
                      method="exact")
    assert two.attacker_win == pytest.approx(one.attacker_win, abs=1e-15)
    assert two.attacker_win == pytest.approx(19 / 36, abs=1e-12)
    assert two.to_dict()["bombard_unused"] == {"battleship": 1}


def test_revised_bombardment_casualties_do_not_fire_back():
    # 1 landing infantry + 1 battleship v 1 infantry: the battleship kills it first with 4/6.
    result = _amphibious("revised", {}, {"infantry": 1}, {"battleship": 1}, {"infantry": 1}, {},
                         method="exact")
    assert result.attacker_win == pytest.approx(2 / 3 + (1 / 3) * (1 / 4), abs=1e-12)


def test_reference_example_bomber_lost_first_1942():
    # Rules reference / issue 4: 1 tank + 1 bomber (bomber lost first) v 1 tank + 1 fighter.
    result = battlecalc.simulate(rules="1942-2e", attacker="1 tank 1 bmb",
                                 defender="1 tank 1 ftr", attacker_ool="bomber", method="exact")
    assert result.attacker_win == pytest.approx(2351 / 6545, abs=1e-12)
    assert result.defender_win == pytest.approx(2726 / 6545, abs=1e-12)
    assert result.draw == pytest.approx(1468 / 6545, abs=1e-12)
