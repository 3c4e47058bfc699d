"""Orders of losses and retreat policies: exact solver against the independent reference,
Monte Carlo within 4 standard errors of exact, analytic cases, and bad input."""

from __future__ import annotations

import pytest
from helpers import MC_TRIALS, assert_mc_agrees, invoke
from reference import exact_land
from tiers import sampled

import battlecalc

A = {"infantry": 3, "artillery": 1, "tank": 1}
D = {"infantry": 4, "tank": 1}

# (edition, attacker, defender, options as simulate() keywords)
POLICY_BATTLES = [
    ("1942-2e", A, D, {"retreat_after": 1}),
    ("1942-2e", A, D, {"retreat_after": 2}),
    ("1942-2e", A, D, {"retreat_when_left": 2}),
    ("1942-2e", A, D, {"strafe": 2}),
    ("1942-2e", A, D, {"retreat_below": 0.3}),
    ("1942-2e", {"infantry": 2, "fighter": 2}, {"infantry": 3}, {"retreat_when_only_air": True}),
    ("1942-2e", {"fighter": 1}, {"infantry": 3},
     {"landing": {"infantry": 2}, "bombard": {"battleship": 1}, "retreat_after": 1}),
    ("1942-2e", {"infantry": 3, "fighter": 2}, {"infantry": 3, "aa": 1}, {"aa_last": True}),
    ("revised", {"infantry": 2, "tank": 1, "bomber": 1}, {"infantry": 3}, {"keep_land": 1}),
    ("revised", {"infantry": 2, "tank": 1, "bomber": 1}, {"infantry": 3},
     {"attacker_ool": "weakest"}),
    ("1942-2e", {"fighter": 2, "bomber": 1, "infantry": 2}, {"infantry": 2, "aa": 2},
     {"attacker_ool": "bomber"}),
    ("1942-2e", {"infantry": 3, "fighter": 2}, {"infantry": 3},
     {"attacker_ool": "*^infantry;*^fighter;1^infantry"}),
    ("revised", {"fighter": 1}, {"infantry": 2, "fighter": 1, "aa": 1},
     {"landing": {"infantry": 1, "tank": 1}, "bombard": {"battleship": 1}, "retreat_after": 1,
      "defender_ool": "weakest"}),
    ("1942-2e", {"fighter": 2, "infantry": 1}, {"infantry": 2, "aa": 1, "fighter": 1},
     {"landing": {"infantry": 1, "artillery": 1}, "bombard": {"battleship": 1},
      "retreat_below": 0.5, "defender_ool": "infantry"}),
    ("1942-2e", {"infantry": 4, "tank": 2}, {"infantry": 3, "tank": 1},
     {"defender_ool": "tank", "retreat_when_left": 3}),
    # partial retreats of amphibious assaults: what may withdraw does, the landed units fight on
    ("1942-2e", {"fighter": 1}, {"infantry": 2}, {"landing": {"infantry": 1}, "retreat_after": 1}),
    ("revised", {"fighter": 1, "tank": 1}, {"infantry": 2},
     {"landing": {"infantry": 1}, "retreat_after": 1}),
    ("1942-2e", {"tank": 1}, {"infantry": 3}, {"landing": {"infantry": 1}, "retreat_after": 1}),
    ("1942-2e", {"fighter": 2}, {"infantry": 3}, {"landing": {"infantry": 1}, "retreat_after": 1}),
    ("1942-2e", {"fighter": 1, "tank": 1}, {"infantry": 3, "tank": 1},
     {"landing": {"infantry": 2}, "bombard": {"cruiser": 1}, "retreat_below": 0.5}),
    ("revised", {"fighter": 2}, {"infantry": 2, "tank": 1},
     {"landing": {"infantry": 1, "tank": 1}, "strafe": 1}),
    ("1942-2e", {"infantry": 1, "tank": 1, "fighter": 1}, {"infantry": 4},
     {"landing": {"infantry": 2}, "retreat_after": 2}),
]
IDS = [f"{e}-{'-'.join(k for k in o if k not in ('landing', 'bombard'))}-{i}"
       for i, (e, a, d, o) in enumerate(POLICY_BATTLES)]
KEYS = ("attacker_win", "defender_win", "draw", "retreat", "takes_territory",
        "attacker_ipc_loss", "defender_ipc_loss", "mean_rounds")

# (every other battle in the quick tier, all in the slow: tests/tiers.py)
POLICY_CASES = sampled([(b,) for b in POLICY_BATTLES], 2, IDS)


def _solve(edition, attacker, defender, options, **extra):
    return battlecalc.simulate(rules=edition, attacker=attacker or None, defender=defender,
                               **options, **extra)


@pytest.mark.parametrize("battle", POLICY_CASES)
def test_policy_exact_matches_reference(battle):
    edition, attacker, defender, options = battle
    expected = exact_land(edition, attacker, defender, **options)
    result = _solve(*battle, method="exact")
    for key in KEYS:
        assert getattr(result, key) == pytest.approx(float(expected[key]), abs=1e-9), key


@pytest.mark.parametrize("battle", POLICY_CASES)
def test_policy_monte_carlo_within_four_standard_errors(battle):
    exact = _solve(*battle, method="exact")
    mc = _solve(*battle, method="mc", trials=MC_TRIALS, seed=17)
    # + 4 / trials: a count expected below 1 (a draw of chance 6e-6) is Poisson, not normal;
    # 4 counts of slack keep the false alarms rare there
    assert_mc_agrees(mc, exact, probabilities=("attacker_win", "defender_win", "draw",
                                               "retreat", "takes_territory"), means=(),
                     slack=4 / MC_TRIALS)
    assert_mc_agrees(mc, exact, probabilities=(),
                     means=("attacker_ipc_loss", "defender_ipc_loss", "mean_rounds"))


def test_retreat_after_one_round_is_analytic():
    # 1 inf v 1 inf, retreat after round 1: win (1/6)(4/6), draw (1/6)(2/6), lose (5/6)(2/6),
    # and both miss (5/6)(4/6) = 5/9: the attacker withdraws.
    result = _solve("revised", {"infantry": 1}, {"infantry": 1}, {"retreat_after": 1},
                    method="exact")
    assert (result.attacker_win, result.draw, result.defender_win, result.retreat) == \
        pytest.approx((1 / 9, 1 / 18, 5 / 18, 5 / 9), abs=1e-12)
    assert result.mean_rounds == pytest.approx(1.0, abs=1e-12)


def test_comma_and_triplea_orders_give_identical_results():
    kwargs = dict(rules="1942-2e", attacker="2 inf 1 tank 1 bmb", defender="3 inf",
                  method="exact")
    comma = battlecalc.simulate(attacker_ool="bomber,tank", **kwargs)
    triplea = battlecalc.simulate(attacker_ool="*^bomber;*^tank", **kwargs)
    assert comma.attacker_win == triplea.attacker_win
    assert comma.attacker_survivors == triplea.attacker_survivors


def test_keep_land_is_triplea_reserving_the_last_infantry():
    kwargs = dict(rules="1942-2e", attacker="3 inf 2 ftr", defender="3 inf", method="exact")
    keep = battlecalc.simulate(keep_land=1, **kwargs)
    triplea = battlecalc.simulate(attacker_ool="*^infantry;*^fighter;1^infantry", **kwargs)
    plain = battlecalc.simulate(**kwargs)
    assert keep.takes_territory == pytest.approx(triplea.takes_territory, abs=1e-15)
    assert keep.takes_territory > plain.takes_territory + 0.1


def test_losing_bombers_first_costs_more():
    kwargs = dict(rules="1942-2e", attacker="2 inf 1 tank 1 bmb", defender="3 inf",
                  method="exact")
    default = battlecalc.simulate(**kwargs)
    bombers_first = battlecalc.simulate(attacker_ool="bomber", **kwargs)
    assert bombers_first.attacker_ipc_loss > default.attacker_ipc_loss
    assert bombers_first.attacker_win < default.attacker_win


def test_smart_order_loses_the_least_firepower_first():
    # Defending bomber (defence 1) and infantry (2): cheapest-first loses the infantry first,
    # smart loses the bomber first and keeps more dice that hit, so the defender does better.
    kwargs = dict(rules="1942-2e", attacker="4 inf 1 tank", defender="2 inf 1 bmb",
                  method="exact")
    smart = battlecalc.simulate(defender_ool="smart", **kwargs)
    cheapest = battlecalc.simulate(**kwargs)
    weakest = battlecalc.simulate(defender_ool="weakest", **kwargs)
    assert smart.defender_win > cheapest.defender_win + 0.01
    assert smart.defender_win == pytest.approx(weakest.defender_win, abs=1e-15)


def test_submerge_policy_is_echoed_and_retreat_counts_survivors():
    result = battlecalc.simulate(rules="1942-2e", attacker="2 sub", defender="1 cv 1 ftr",
                                 sea=True, attacker_submerge="first-chance", method="exact")
    data = result.to_dict()
    assert data["attacker_submerge"] == "first-chance"
    assert data["retreat"] == 1.0 and data["attacker_survivors"]["submarine"] == 2.0


RUN = ["run", "--rules", "1942-2e", "--method", "exact"]


@pytest.mark.parametrize(("args", "fragment"), [
    (["-a", "3 inf", "-d", "2 inf", "--attacker-ool", "tonk"], "unknown unit 'tonk'"),
    (["-a", "3 inf", "-d", "2 inf", "--attacker-ool", "2^inf;x^tank"], "is not COUNT^unit"),
    (["-a", "3 inf", "-d", "2 inf", "--attacker-ool", "0^inf"], "must be at least 1"),
    (["-a", "3 inf", "-d", "2 inf", "--attacker-ool", "-1^inf"], "must be at least 1"),
    (["-a", "3 inf", "-d", "2 inf", "--defender-ool", "inf,,tank"], "empty unit name"),
    (["-a", "3 inf", "-d", "2 inf", "--keep-land", "4"], "more than the attacker's 3 land"),
    (["-a", "3 inf", "-d", "2 inf", "--keep-land", "-1"], "keep-land must be 0 or more"),
    (["-a", "2 sub", "-d", "1 dd", "--sea", "--retreat-when-only-air"], "applies to land"),
    (["-a", "2 sub", "-d", "1 dd", "--sea", "--keep-land", "1"], "land battles"),
    (["-a", "3 inf", "-d", "2 inf", "--retreat-after", "0"], "--retreat-after must be"),
    (["-a", "3 inf", "-d", "2 inf", "--retreat-below", "1.5"], "--retreat-below must be"),
    (["-a", "3 inf", "-d", "2 inf", "--retreat-below", "0.5", "--retreat-after", "2"],
     "cannot be combined"),
    (["-a", "3 inf", "-d", "2 inf", "--strafe", "-2"], "--strafe must be"),
    (["-a", "3 inf", "-d", "2 inf", "--attacker-submerge", "first-chance"], "sea battles only"),
])
def test_bad_policy_input_exits_2(args, fragment):
    result = invoke(*RUN, *args)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("Error:") and fragment in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_revised_aa_last_is_refused():
    result = invoke("run", "--rules", "revised", "-a", "2 ftr", "-d",
                    "1 inf 1 aa", "--aa-last")
    assert result.exit_code == 2 and "never casualties" in result.stderr


@pytest.mark.parametrize("edition", ["revised", "1942-2e"])
@pytest.mark.parametrize("order", ["fighter", "*^fighter;1^infantry"])
def test_bombardment_with_aircraft_first_in_the_defenders_order(edition, order):
    # bombardment hits only land units: with aircraft first in the defender's order, its
    # aircraft form a loss category of their own that bombardment cannot reach, while the
    # attacker's general hits still take them first (as many hits land as the rules allow)
    options = {"landing": {"infantry": 2}, "bombard": {"battleship": 1}, "defender_ool": order}
    expected = exact_land(edition, {}, {"infantry": 2, "fighter": 1}, **options)
    result = _solve(edition, None, {"infantry": 2, "fighter": 1}, options, method="exact")
    for key in KEYS:
        assert getattr(result, key) == pytest.approx(float(expected[key]), abs=1e-9), key
    assert result.defender_survivors["fighter"] == pytest.approx(
        float(expected["defender_survivors"]["fighter"]), abs=1e-9)


def test_sea_retreat_after_one_round_is_analytic():
    # Revised 1 sub v 1 destroyer: the sub fires first (1/3), the destroyer fires back even
    # when hit (1/2): win 1/6, draw 1/6, lose 1/3, and with both missing (1/3) the attacker
    # withdraws after round 1.
    result = battlecalc.simulate(rules="revised", attacker="1 sub", defender="1 dd", sea=True,
                                 retreat_after=1, method="exact")
    assert (result.attacker_win, result.draw, result.defender_win, result.retreat) == \
        pytest.approx((1 / 6, 1 / 6, 1 / 3, 1 / 3), abs=1e-12)


@pytest.mark.parametrize("policy", [{"retreat_after": 2}, {"retreat_when_left": 2},
                                    {"strafe": 1}])
@pytest.mark.parametrize("edition", ["revised", "1942-2e"])
def test_sea_retreat_monte_carlo_within_four_standard_errors(edition, policy):
    kwargs = dict(rules=edition, attacker="3 sub 1 dd 1 ftr", defender="1 cv 2 ftr 1 dd 1 tt",
                  sea=True, **policy)
    exact = battlecalc.simulate(method="exact", **kwargs)
    mc = battlecalc.simulate(method="mc", trials=MC_TRIALS, seed=23, **kwargs)
    assert exact.retreat > 0.01
    # + 4 / trials: a count expected below 1 (a draw of chance 6e-6) is Poisson, not normal;
    # 4 counts of slack keep the false alarms rare there
    assert_mc_agrees(mc, exact, probabilities=("attacker_win", "defender_win", "draw",
                                               "stalemate", "retreat"), means=(),
                     slack=4 / MC_TRIALS)
    assert_mc_agrees(mc, exact, probabilities=(),
                     means=("attacker_ipc_loss", "defender_ipc_loss", "mean_rounds"))


def test_sea_retreat_counts_units_in_the_battle_not_submerged_subs():
    # 2 subs that submerge at once (no enemy destroyer) leave 1 fighter in the battle, so
    # "retreat with 1 unit left" withdraws it after round 1; were the submerged subs counted
    # (3 units), the fighter would fight on.  The fighter withdraws where it survives round
    # 1 (the defender's carrier misses, 4/6, and its fighter, 2/6: 2/9); where it is shot
    # down the attacker has nothing left in the battle: the defender wins (issue 42 item 15:
    # it was `retreat` too, its subs having submerged).  Both subs survive either way.
    common = dict(rules="1942-2e", attacker="2 sub 1 ftr", defender="1 cv 1 ftr", sea=True,
                  attacker_submerge="first-chance", method="exact")
    withdraw = battlecalc.simulate(retreat_when_left=1, **common)
    fight_on = battlecalc.simulate(**common)
    assert withdraw.mean_rounds == pytest.approx(1.0, abs=1e-12)
    assert fight_on.mean_rounds > 1.2
    assert withdraw.retreat == pytest.approx(2 / 9, abs=1e-12)
    assert withdraw.defender_win == pytest.approx(7 / 9, abs=1e-12)
    assert withdraw.attacker_survivors["submarine"] == pytest.approx(2.0, abs=1e-12)


@pytest.mark.parametrize(("threshold", "expected"), [
    (0.3, (1 / 6, 1 / 6, 1 / 3, 1 / 3)),  # fighting on wins 1/4 < 0.3: withdraw after round 1
    (0.2, (1 / 4, 1 / 4, 1 / 2, 0.0)),  # 1/4 >= 0.2: fight to the end
])
def test_sea_retreat_below_uses_the_exact_win_probability(threshold, expected):
    # Revised 1 sub v 1 destroyer: fighting on from the start state wins 1/4 (see above).
    kwargs = dict(rules="revised", attacker="1 sub", defender="1 dd", sea=True,
                  retreat_below=threshold)
    result = battlecalc.simulate(method="exact", **kwargs)
    got = (result.attacker_win, result.draw, result.defender_win, result.retreat)
    assert got == pytest.approx(expected, abs=1e-12)
    mc = battlecalc.simulate(method="mc", trials=MC_TRIALS, seed=29, **kwargs)
    keys = ("attacker_win", "draw", "defender_win", "retreat")
    assert_mc_agrees(mc, dict(zip(keys, expected, strict=True)), probabilities=keys, means=())


def test_partial_amphibious_retreat_by_hand():
    # 1942 2E: 1 fighter + 1 landed infantry v 2 infantry, retreat after round 1 (exact values
    # of the reference, which were also checked by enumerating round 1 by hand):
    result = battlecalc.simulate(rules="1942-2e", attacker="1 ftr", landing="1 inf",
                                 defender="2 inf", retreat_after=1, method="exact")
    assert result.attacker_win == pytest.approx(62 / 459, abs=1e-12)
    assert result.retreat == pytest.approx(11 / 27, abs=1e-12)
    # the fighter is lost after the infantry, so only when both defenders hit in round 1
    # ((2/6)^2 = 1/9); otherwise it withdraws after round 1 and survives
    assert result.attacker_survivors["fighter"] == pytest.approx(8 / 9, abs=1e-12)
    assert result.takes_territory == pytest.approx(5 / 51, abs=1e-12)


def test_exact_rounds_law_is_refused_with_partial_retreats():
    with pytest.raises(battlecalc.BattleInputError, match="partial amphibious retreats"):
        battlecalc.simulate(rules="1942-2e", attacker="1 ftr", landing="1 inf",
                            defender="2 inf", retreat_after=1, method="exact",
                            rounds_distribution=True)
