"""--retreat-air-loss (issue 43, from aacalc2's list): at the end of a round, where it may
retreat, the attacker retreats when the exact chance that fighting on, with no further retreat,
ends with every one of its aircraft lost is above X (an attacker with no aircraft left never
retreats by it; docs/rules.md).  The exact solver against the independent reference
(tests/references/reference.py's retreat_air_loss, a recursion over states in Fractions) to a
few ulps, cases by hand, Monte Carlo within 4 standard errors, the combinations refused, the
table's cost, and the surfaces (command line, sweep)."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from helpers import MC_TRIALS, assert_mc_agrees, compiled_tables
from reference import exact_land
from tiers import sampled

import battlecalc
from battlecalc import BattleInputError, solver
from battlecalc.solver import cost

# (edition, attacker, defender, options): alone, with each other fixed retreat option, after
# round-1 AA fire, a partial amphibious retreat (the aircraft withdraw, the landed units fight
# on), aircraft lost first (no retreat by it once they are gone)
AIR_BATTLES = [
    ("revised", {"fighter": 1}, {"infantry": 1}, {"retreat_air_loss": 0.4}),
    ("revised", {"infantry": 2, "fighter": 1}, {"infantry": 3}, {"retreat_air_loss": 0.3}),
    ("revised", {"infantry": 2, "fighter": 1}, {"infantry": 3},
     {"retreat_air_loss": 0.05, "attacker_ool": "fighter"}),
    ("1942-2e", {"infantry": 2, "fighter": 2, "bomber": 1}, {"infantry": 3, "aa": 1},
     {"retreat_air_loss": 0.25}),
    ("1942-2e", {"fighter": 1, "tank": 1}, {"infantry": 3, "tank": 1},
     {"landing": {"infantry": 2}, "bombard": {"cruiser": 1}, "retreat_air_loss": 0.35}),
    ("revised", {"fighter": 2}, {"infantry": 2, "tank": 1},
     {"landing": {"infantry": 1, "tank": 1}, "retreat_air_loss": 0.5}),
    ("1942-2e", {"infantry": 3, "fighter": 2}, {"infantry": 4},
     {"retreat_air_loss": 0.2, "retreat_below": 0.4}),
    ("1942-2e", {"infantry": 3, "fighter": 2}, {"infantry": 4},
     {"retreat_air_loss": 0.5, "retreat_after": 3}),
    ("revised", {"infantry": 1, "fighter": 1}, {"infantry": 2},
     {"retreat_air_loss": 0.1, "strafe": 0}),
    ("1942-2e", {"infantry": 2, "tank": 1, "fighter": 1}, {"infantry": 3},
     {"retreat_air_loss": 0.6, "retreat_when_left": 1}),
    ("aa50", {"infantry": 2, "bomber": 1}, {"infantry": 2, "aa": 1},
     {"retreat_air_loss": 0.15, "retreat_when_only_air": True}),
]
IDS = [f"{e}-{i}" for i, (e, *_rest) in enumerate(AIR_BATTLES)]
KEYS = ("attacker_win", "defender_win", "draw", "stalemate", "retreat", "takes_territory",
        "attacker_ipc_loss", "defender_ipc_loss", "tuv_swing", "mean_rounds")
ULPS = 8  # of the larger of 1 and the value: sums of a few hundred terms in another order


def _solve(edition, attacker, defender, options, **extra):
    return battlecalc.simulate(rules=edition, attacker=attacker, defender=defender, **options,
                               **extra)


@pytest.mark.parametrize("battle", sampled([(b,) for b in AIR_BATTLES], 2, IDS))
def test_exact_matches_the_reference_to_a_few_ulps(battle):
    edition, attacker, defender, options = battle
    expected = exact_land(edition, attacker, defender, **options)
    result = _solve(*battle, method="exact")
    ipc = max(abs(float(expected[k])) for k in ("attacker_ipc_loss", "defender_ipc_loss"))
    for key in KEYS:
        want = expected[key]
        # (the TUV swing is a difference of the IPC losses: their ulps)
        scale = max(1.0, abs(float(want)), ipc if key == "tuv_swing" else 0.0)
        ulp = Fraction(math.ulp(scale))
        assert abs(Fraction(getattr(result, key)) - want) <= ULPS * ulp, (key, result, want)
    for unit, count in expected["attacker_survivors"].items():
        assert result.attacker_survivors.get(unit, 0.0) == pytest.approx(float(count),
                                                                           abs=1e-13), unit


def test_the_option_retreats_and_every_battle_differs_from_fighting_on():
    # (the comparison above would pass a solver that ignored the option only if the
    # reference did too: each battle retreats somewhere)
    for edition, attacker, defender, options in AIR_BATTLES:
        plain = {k: v for k, v in options.items() if k != "retreat_air_loss"}
        with_it = exact_land(edition, attacker, defender, **options)
        without = exact_land(edition, attacker, defender, **plain)
        assert with_it["attacker_win"] != without["attacker_win"], (attacker, options)


@pytest.mark.parametrize(("threshold", "expected"), [
    # fighting on loses the fighter with chance (1/3) / (1 - 1/2 x 2/3) = 1/2
    (0.45, (Fraction(1, 3), Fraction(1, 6), Fraction(1, 6), Fraction(1, 3))),  # retreat
    (0.55, (Fraction(1, 2), Fraction(1, 4), Fraction(1, 4), 0)),  # 1/2 is not above: fight on
])
def test_one_fighter_against_one_infantry_by_hand(threshold, expected):
    # Revised 1 fighter (attack 3: hits 1/2) v 1 infantry (defence 2: hits 1/3).  Round 1:
    # the fighter wins 1/2 x 2/3 = 1/3, both die 1/6, the infantry wins 1/6, nobody hits 1/3;
    # in that last case the attacker stands where it began, and retreats if 1/2 > threshold
    result = battlecalc.simulate(rules="revised", attacker="1 ftr", defender="1 inf",
                                 method="exact", retreat_air_loss=threshold)
    got = (result.attacker_win, result.draw, result.defender_win, result.retreat)
    assert got == pytest.approx([float(x) for x in expected], abs=1e-15)
    mc = battlecalc.simulate(rules="revised", attacker="1 ftr", defender="1 inf", method="mc",
                             trials=MC_TRIALS, seed=43, retreat_air_loss=threshold)
    keys = ("attacker_win", "draw", "defender_win", "retreat")
    assert_mc_agrees(mc, dict(zip(keys, expected, strict=True)), probabilities=keys, means=())


def test_an_attacker_without_aircraft_never_retreats_by_it():
    # every aircraft lost already is a chance of 1 above any threshold: no retreat by it
    plain = battlecalc.simulate(rules="revised", attacker="3 inf 1 tank", defender="3 inf",
                                method="exact")
    given = battlecalc.simulate(rules="revised", attacker="3 inf 1 tank", defender="3 inf",
                                method="exact", retreat_air_loss=0.01)
    assert (given.attacker_win, given.defender_win, given.retreat, given.mean_rounds) == (
        plain.attacker_win, plain.defender_win, plain.retreat, plain.mean_rounds)


@pytest.mark.parametrize("battle", [AIR_BATTLES[i] for i in (1, 3, 4, 6)],
                         ids=[IDS[i] for i in (1, 3, 4, 6)])
def test_monte_carlo_plays_the_exact_table_within_four_standard_errors(battle):
    edition, attacker, defender, options = battle
    expected = exact_land(edition, attacker, defender, **options)
    mc = _solve(*battle, method="mc", trials=MC_TRIALS, seed=41)
    assert mc.method == "mc"
    assert_mc_agrees(mc, expected)


# sea battles: carriers' fighters, subs that aircraft cannot hit without a destroyer, a lone
# transport's withdrawal, a submerging attacker (tests/references/decision_reference.py's
# exact_sea_retreat, its _AirLossGame)
SEA_AIR_BATTLES = [
    ("1942-2e", {"carrier": 1, "fighter": 2}, {"destroyer": 2}, {"retreat_air_loss": 0.3}),
    ("1942-2e", {"destroyer": 1, "fighter": 1}, {"cruiser": 1, "submarine": 1},
     {"retreat_air_loss": 0.2, "retreat_when_left": 0}),
    ("revised", {"fighter": 1, "transport": 1}, {"destroyer": 1}, {"retreat_air_loss": 0.4}),
    ("1942-2e", {"submarine": 1, "fighter": 1, "destroyer": 1}, {"cruiser": 1, "fighter": 1},
     {"retreat_air_loss": 0.1, "retreat_below": 0.3, "attacker_submerge": "first-chance"}),
    ("1942-2e", {"submarine": 2, "fighter": 1}, {"destroyer": 1, "fighter": 1},
     {"retreat_air_loss": 0.2, "retreat_below": 0.2, "attacker_submerge": "first-chance"}),
]


@pytest.mark.parametrize("battle", SEA_AIR_BATTLES, ids=[f"{b[0]}-{i}" for i, b in
                                                          enumerate(SEA_AIR_BATTLES)])
def test_sea_battles_match_the_reference_to_a_few_ulps(battle):
    from decision_reference import exact_sea_retreat

    edition, attacker, defender, options = battle
    expected = exact_sea_retreat(edition, attacker, defender, **options)
    result = battlecalc.simulate(rules=edition, attacker=attacker, defender=defender, sea=True,
                                 method="exact", **options)
    plain = {k: v for k, v in options.items() if k != "retreat_air_loss"}
    assert exact_sea_retreat(edition, attacker, defender, **plain)["attacker_win"] != (
        expected["attacker_win"])  # (it retreats somewhere)
    ipc = max(abs(float(expected[k])) for k in ("attacker_ipc_loss", "defender_ipc_loss"))
    for key in KEYS:
        if key == "takes_territory":
            continue
        scale = max(1.0, abs(float(expected[key])), ipc if key == "tuv_swing" else 0.0)
        assert abs(Fraction(getattr(result, key)) - expected[key]) <= ULPS * Fraction(
            math.ulp(scale)), (key, getattr(result, key), float(expected[key]))


def test_a_sea_battle_retreats_its_carrier_fighters():
    # 1942 2E: 1 carrier 2 fighters attack 2 destroyers; the exact solve retreats somewhere,
    # and Monte Carlo, which plays the same table, agrees within 4 standard errors
    battle = dict(rules="1942-2e", sea=True, attacker="1 cv 2 ftr", defender="2 dd")
    plain = battlecalc.simulate(**battle, method="exact")
    exact = battlecalc.simulate(**battle, method="exact", retreat_air_loss=0.3)
    assert plain.retreat == 0 and exact.retreat > 0.05
    mc = battlecalc.simulate(**battle, method="mc", trials=MC_TRIALS, seed=7,
                             retreat_air_loss=0.3)
    assert_mc_agrees(mc, exact)


# --- what it is combined with, and bad values -----------------------------------------------

@pytest.mark.parametrize(("options", "fragment"), [
    ({"retreat_air_loss": 0}, "retreat_air_loss must be a probability in (0, 1], got 0"),
    ({"retreat_air_loss": 1.5}, "retreat_air_loss must be a probability in (0, 1]"),
    ({"retreat_air_loss": -0.2}, "retreat_air_loss must be a probability in (0, 1]"),
    ({"retreat_air_loss": True}, "retreat_air_loss must be a probability in (0, 1]"),
    ({"retreat_air_loss": float("nan")}, "retreat_air_loss must be a probability in (0, 1]"),
    ({"retreat_air_loss": 0.5, "retreat_policy": "optimal"},
     "retreat_policy optimal decides every retreat: it cannot be combined with "
     "retreat_air_loss"),
])
def test_bad_values_and_combinations_are_refused(options, fragment):
    with pytest.raises(BattleInputError) as caught:
        battlecalc.simulate(rules="revised", attacker="2 inf 1 ftr", defender="2 inf",
                            method="exact", **options)
    assert fragment in str(caught.value)


def test_optimal_submerging_refuses_it():
    with pytest.raises(BattleInputError, match="optimal submerging is solved with the "
                       "attacker's retreat optimal .* it cannot be combined with "
                       "retreat_air_loss"):
        battlecalc.simulate(rules="1942-2e", sea=True, attacker="2 sub 1 ftr 1 cv",
                            defender="2 dd", attacker_submerge="optimal",
                            retreat_air_loss=0.5, method="exact")


def test_a_formula_edition_refuses_it():
    with pytest.raises(BattleInputError, match="retreat_air_loss do not apply"):
        battlecalc.simulate(rules="formula", attacker="3 inf", defender="3 inf",
                            retreat_air_loss=0.5)


# --- its table's cost, accounted before it is built -------------------------------------------

SEA = dict(rules="1942-2e", sea=True, attacker="6 sub 6 dd 3 ca 2 bb 4 ftr 1 cv",
           defender="5 dd 3 ca 2 cv 3 ftr 2 bb 3 sub")


def test_the_table_is_counted_in_the_plan_and_refused_over_its_limit(plan_of, monkeypatch):
    compiled = compiled_tables(dict(SEA, retreat_air_loss=0.5))
    one = cost.win_values_seconds(compiled)
    planned = plan_of(dict(SEA, retreat_air_loss=0.5, method="mc", trials=1000, seed=1))
    assert planned.plan.win_values and planned.plan.win_values_seconds == one
    both = plan_of(dict(SEA, retreat_air_loss=0.5, retreat_below=0.3, method="mc",
                        trials=1000, seed=1))
    assert both.plan.win_values_seconds == 2 * one  # two sweeps

    def built(*_args, **_kwargs):
        raise AssertionError("the table was built")

    monkeypatch.setattr(solver, "fill_win_values", built)
    with pytest.raises(BattleInputError, match=(
            r"--retreat-air-loss needs the exact chance of losing every aircraft from every "
            r"state, and this battle has 126,000 state pairs")):
        plan_of(dict(SEA, retreat_air_loss=0.5, method="auto", trials=1000, seed=1),
                max_win_value_seconds=one / 2)


def test_progress_names_the_table():
    heard = []
    battlecalc.simulate(rules="revised", attacker="2 inf 1 ftr", defender="3 inf",
                        method="exact", retreat_air_loss=0.3,
                        progress=lambda done, total, what: heard.append(what))
    assert "retreat-air-loss table" in heard


# --- the command line and the sweep ------------------------------------------------------------

def test_the_command_line_takes_it_as_simulate_does(invoke):
    import json

    result = invoke("run", "--rules", "revised", "-a", "2 inf 1 ftr", "-d", "3 inf",
                    "--retreat-air-loss", "0.3", "--method", "exact", "--format", "json")
    assert result.exit_code == 0, result.output
    want = battlecalc.simulate(rules="revised", attacker="2 inf 1 ftr", defender="3 inf",
                               method="exact", retreat_air_loss=0.3)
    got = json.loads(result.stdout)
    assert got["retreat"] == want.retreat and got["attacker_win"] == want.attacker_win
    assert got["retreat_air_loss"] == 0.3
    table = invoke("run", "--rules", "revised", "-a", "2 inf 1 ftr", "-d", "3 inf",
                   "--retreat-air-loss", "0.3", "--method", "exact")
    assert "when its chance of losing every aircraft > 0.3" in table.stdout


@pytest.mark.parametrize(("args", "fragment"), [
    (["--retreat-air-loss", "1.5"], "Error: --retreat-air-loss must be a probability in (0, 1]"),
    (["--retreat-air-loss", "x"], "Error: --retreat-air-loss must be a finite number"),
    (["--retreat-air-loss", "0.5", "--retreat", "optimal"], "cannot be combined"),
])
def test_the_command_line_refuses_bad_values_in_one_line(invoke, args, fragment):
    result = invoke("run", "--rules", "revised", "-a", "2 inf 1 ftr", "-d", "3 inf", *args)
    assert result.exit_code == 2, result.output
    assert fragment in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_a_sweep_varies_it():
    frame = battlecalc.sweep([dict(rules="revised", attacker="2 inf 1 ftr", defender="3 inf",
                                   method="exact")],
                             vary={"retreat_air_loss": [0.1, 0.5, 0.9]}, workers=1)
    for row in frame.itertuples():
        want = battlecalc.simulate(rules="revised", attacker="2 inf 1 ftr", defender="3 inf",
                                   method="exact", retreat_air_loss=row.retreat_air_loss)
        assert row.retreat == want.retreat and row.attacker_win == want.attacker_win
    assert len(set(frame["retreat"])) == 3
