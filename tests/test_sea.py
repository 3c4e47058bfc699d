"""Sea battles: exact solver against the independent reference (tests/references/sea_reference.py),
Monte Carlo against exact within 4 standard errors at a fixed seed, and the reference's pitfalls of
section 11 with analytic values, and analytic values of sea battles without submarines (which the
exact solver plays by its walk path) and of lone attacking transports (which keep the general
round)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from helpers import MC_TRIALS, assert_mc_agrees, compiled_tables
from sea_reference import exact_sea
from tiers import sampled

import battlecalc
from battlecalc.kernels.layout import RU_SIMPLE, SIMPLE_EXACT

# (edition, attacker, defender, options)
BATTLES = [
    ("1942-2e", {"bomber": 1}, {"battleship": 1}, {}),
    ("1942-2e", {"submarine": 2}, {"fighter": 1, "destroyer": 1}, {}),
    ("1942-2e", {"submarine": 2}, {"destroyer": 1, "transport": 1}, {}),
    ("revised", {"submarine": 2}, {"destroyer": 1, "transport": 1}, {}),
    ("1942-2e", {"battleship": 1}, {"destroyer": 2}, {}),
    ("revised", {"battleship": 1}, {"destroyer": 2}, {}),
    ("1942-2e", {"carrier": 1, "fighter": 2}, {"submarine": 2, "destroyer": 1}, {}),
    ("1942-2e", {"fighter": 2}, {"submarine": 2}, {}),
    ("revised", {"fighter": 2}, {"submarine": 2}, {}),
    ("revised", {"submarine": 2}, {"submarine": 1}, {}),
    ("1942-2e", {"submarine": 2}, {"submarine": 1}, {}),
    ("1942-2e", {"submarine": 2, "bomber": 1}, {"carrier": 1, "fighter": 1}, {}),
    ("1942-2e", {"submarine": 2, "bomber": 1}, {"carrier": 1, "fighter": 1},
     {"attacker_submerge": "when-only-subs-left"}),
    ("revised", {"transport": 2}, {"submarine": 1, "destroyer": 1}, {}),
    ("revised", {"submarine": 1}, {"destroyer": 1}, {}),
    ("revised", {"submarine": 1}, {"carrier": 1}, {}),
    ("1942-2e", {"destroyer": 1}, {"transport": 1}, {}),
    ("1942-2e", {"transport": 1}, {"transport": 1}, {}),
    ("1942-2e", {"destroyer": 1, "submarine": 1}, {"submarine": 2}, {}),
    ("revised", {"destroyer": 1, "submarine": 1}, {"submarine": 2}, {}),
    ("1942-2e", {"cruiser": 1, "fighter": 1}, {"submarine": 1, "transport": 2}, {}),
    ("revised", {"battleship": 1, "fighter": 1}, {"carrier": 1, "fighter": 2}, {}),
    ("1942-2e", {"damaged_battleship": 1, "destroyer": 1}, {"cruiser": 1, "submarine": 1}, {}),
    ("1942-2e", {"submarine": 3}, {"destroyer": 1, "submarine": 1},
     {"attacker_submerge": "first-chance"}),
    ("1942-2e", {"destroyer": 1, "fighter": 1}, {"submarine": 2},
     {"defender_submerge": "first-chance"}),
    ("revised", {"destroyer": 1, "submarine": 2}, {"submarine": 2, "transport": 1},
     {"attacker_submerge": "first-chance", "defender_submerge": "when-only-subs-left"}),
    ("revised", {"submarine": 2}, {"battleship": 1}, {"attacker_tech": ("super_subs",)}),
    ("1942-2e", {"submarine": 2}, {"carrier": 1, "fighter": 2},
     {"attacker_tech": ("super_subs",)}),
]
IDS = [f"{e}:{'+'.join(f'{n}{u[:4]}' for u, n in a.items())}-v-"
       f"{'+'.join(f'{n}{u[:4]}' for u, n in d.items())}{'-opt' if o else ''}"
       for e, a, d, o in BATTLES]
OUTCOMES = ("attacker_win", "defender_win", "draw", "stalemate", "retreat")
MEANS = ("attacker_ipc_loss", "defender_ipc_loss", "tuv_swing", "mean_rounds")


def _reference(edition, attacker, defender, options):
    return exact_sea(
        edition, attacker, defender,
        attacker_submerge=options.get("attacker_submerge", "never"),
        defender_submerge=options.get("defender_submerge", "never"),
        attacker_super_subs="super_subs" in options.get("attacker_tech", ()),
    )


def _solve(edition, attacker, defender, options, **extra):
    return battlecalc.simulate(rules=edition, attacker=attacker, defender=defender, sea=True,
                               **options, **extra)


@pytest.mark.parametrize("battle", sampled([(b,) for b in BATTLES], 2, IDS))
def test_exact_matches_reference(battle):
    expected = _reference(*battle)
    result = _solve(*battle, method="exact")
    for key in (*OUTCOMES, *MEANS):
        assert getattr(result, key) == pytest.approx(float(expected[key]), abs=1e-9), key
    for side in ("attacker_survivors", "defender_survivors"):
        got = getattr(result, side)
        for unit, value in expected[side].items():
            assert got.get(unit, 0.0) == pytest.approx(float(value), abs=1e-9), (side, unit)
    assert result.pruned < 1e-9


@pytest.mark.parametrize("battle", sampled([(b,) for b in BATTLES], 2, IDS))
def test_monte_carlo_within_four_standard_errors(battle):
    exact = _solve(*battle, method="exact")
    mc = _solve(*battle, method="mc", trials=MC_TRIALS, seed=11)
    assert_mc_agrees(mc, exact, probabilities=OUTCOMES, means=MEANS)


def test_bomber_against_battleship_1942():
    # The battleship's first hit only damages it: 1/16, 13/16, 1/8 (issue 3).
    result = _solve("1942-2e", "1 bmb", "1 bb", {}, method="exact")
    assert (result.attacker_win, result.defender_win, result.draw) == pytest.approx(
        (1 / 16, 13 / 16, 1 / 8), abs=1e-12)


def test_subs_against_fighter_and_destroyer_1942():
    # Once the destroyer is gone, subs and fighter cannot hit each other: stalemate (issue 3).
    result = _solve("1942-2e", "2 sub", "1 ftr 1 dd", {}, method="exact")
    assert result.defender_win == pytest.approx(834 / 1679, abs=1e-12)
    assert result.stalemate == pytest.approx(1 - 834 / 1679, abs=1e-12)


def test_lone_transport_is_lost_without_dice_1942():
    result = _solve("1942-2e", "1 dd", "1 tt", {}, method="exact")
    assert result.attacker_win == 1.0 and result.mean_rounds == 0.0
    assert result.defender_ipc_loss == 7.0


def test_revised_sub_hits_on_a_side_with_destroyer_fire_back():
    # Revised 1 sub v 1 destroyer: the sub fires first every round (1/3); the destroyer fires
    # back even when hit (1/2).  Per round: win (1/3)(1/2), draw (1/3)(1/2), lose (2/3)(1/2).
    result = _solve("revised", "1 sub", "1 dd", {}, method="exact")
    assert (result.attacker_win, result.draw, result.defender_win) == pytest.approx(
        (1 / 4, 1 / 4, 1 / 2), abs=1e-12)


def test_revised_sub_hits_without_destroyer_are_removed_first():
    # Revised 1 sub v 1 carrier (defence 3): a carrier hit by the opening fire never fires.
    # Per round: sub hits 1/3; else the carrier hits 1/2.  P(win) = (1/3)/(1/3 + (2/3)(1/2)).
    result = _solve("revised", "1 sub", "1 cv", {}, method="exact")
    assert result.attacker_win == pytest.approx(1 / 2, abs=1e-12)
    assert result.draw == 0.0


def test_air_cannot_hit_subs_without_destroyer_1942_but_can_in_revised():
    v3 = _solve("1942-2e", "2 ftr", "2 sub", {}, method="exact")
    assert v3.stalemate == 1.0
    revised = _solve("revised", "2 ftr", "2 sub", {}, method="exact")
    assert revised.attacker_win == pytest.approx(1.0, abs=1e-12)
    assert revised.mean_rounds == pytest.approx(float(Fraction(20, 9)), abs=1e-12)


def test_sub_hits_never_land_on_carrier_fighters():
    # 1942: 1 sub v 2 fighters + nothing else at sea: the sub can hit nothing; the fighters
    # cannot hit it without a destroyer: stalemate at once.
    result = _solve("1942-2e", "1 sub", "2 ftr", {}, method="exact")
    assert result.stalemate == 1.0 and result.mean_rounds == 0.0


def test_submerged_subs_count_as_survivors_and_retreat():
    result = _solve("1942-2e", "2 sub", "1 cv 1 ftr", {"attacker_submerge": "first-chance"},
                    method="exact")
    assert result.retreat == 1.0
    assert result.attacker_survivors["submarine"] == 2.0
    assert result.attacker_ipc_loss == 0.0


def test_submerging_is_never_allowed_against_a_destroyer():
    never = _solve("1942-2e", "2 sub", "1 dd", {}, method="exact")
    first = _solve("1942-2e", "2 sub", "1 dd", {"attacker_submerge": "first-chance"},
                   method="exact")
    assert first.to_dict()["attacker_win"] == pytest.approx(never.attacker_win, abs=1e-15)
    assert first.retreat == 0.0


def test_same_seed_same_sea_numbers():
    kwargs = dict(rules="1942-2e", attacker="3 sub 1 dd 2 ftr", defender="1 cv 2 ftr 1 dd 1 tt",
                  sea=True, method="mc", trials=50_000, seed=9)
    one = battlecalc.simulate(**kwargs).to_dict()
    two = battlecalc.simulate(**kwargs).to_dict()
    one.pop("elapsed_s")
    two.pop("elapsed_s")
    assert one == two


def test_exact_sea_distributions_agree_with_means():
    result = _solve("1942-2e", "2 sub 1 dd 1 ftr", "1 cv 2 ftr 1 dd 1 tt", {}, method="exact")
    swing = result.swing_distribution
    assert swing["probability"].sum() == pytest.approx(1.0, abs=1e-12)
    assert (swing["tuv_swing"] * swing["probability"]).sum() == pytest.approx(result.tuv_swing,
                                                                            abs=1e-9)
    dist = result.defender_distribution
    assert (dist["carrier"] * dist["probability"]).sum() == pytest.approx(
        result.defender_survivors["carrier"], abs=1e-12)


# --- sea battles without submarines: the walk path's (tests/solver/test_variants.py) --------


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


# ----------------------------------------------- issue 42 item 15: submerged subs, then a defeat
# TripleA ends a battle with the defender's win when no attacking unit is left in it, and
# submerged subs are not in it (docs/rules.md: `retreat` is the attacker's withdrawal, its
# submarines all submerged and nothing else left in the battle).  A defeat or a draw of the
# attacker's other units after its subs submerged was labelled `retreat`.

OUTCOME_KEYS = ("attacker_win", "defender_win", "draw", "stalemate", "retreat")


def _outcomes(result) -> tuple:
    return tuple(getattr(result, k) for k in OUTCOME_KEYS)


@pytest.mark.parametrize(("rules", "attacker", "defender", "expected"), [
    # a destroyer (hits 1/3) against a cruiser (hits 1/2) once the sub has submerged at the
    # first chance: both hit 1/6 (draw), the destroyer alone 1/6, the cruiser alone 1/3,
    # neither 1/3 (again): 1/4, 1/2, 1/4
    ("1942-2e", "1 destroyer 1 sub", "1 cruiser", (Fraction(1, 4), Fraction(1, 2),
                                                   Fraction(1, 4), 0, 0)),
    # a carrier of 0 attack, the sub submerged: the battleship sinks it sooner or later
    ("1940-2e", "1 carrier 1 sub", "1 battleship", (0, 1, 0, 0, 0)),
    # subs alone submerging at the first chance: the attacker withdraws, a retreat still
    ("1942-2e", "2 sub", "1 cruiser", (0, 0, 0, 0, 1)),
], ids=["1942-2e dd sub v cruiser", "1940-2e carrier sub v battleship", "subs alone"])
def test_a_defeat_after_the_subs_submerged_is_a_defeat(rules, attacker, defender, expected):
    """The issue's two battles: retreat 75% and 100% before.  Exact against the analytic
    values and the independent reference, Monte Carlo against exact, the fixed policies and
    the optimal ones (the reference's decisions: decision_reference)."""
    import decision_reference as dr

    kwargs = dict(rules=rules, attacker=attacker, defender=defender, sea=True)
    exact = battlecalc.simulate(**kwargs, attacker_submerge="first-chance", method="exact")
    assert _outcomes(exact) == pytest.approx(tuple(float(x) for x in expected), abs=1e-12)
    ruleset = battlecalc.load_rules(rules)
    a, d = battlecalc.parse_army(attacker, ruleset), battlecalc.parse_army(defender, ruleset)
    reference = exact_sea(rules, a, d, attacker_submerge="first-chance")
    assert _outcomes(exact) == pytest.approx(tuple(float(reference[k]) for k in OUTCOME_KEYS),
                                             abs=1e-12)
    mc = battlecalc.simulate(**kwargs, attacker_submerge="first-chance", method="mc",
                             trials=MC_TRIALS, seed=42)
    assert_mc_agrees(mc, exact)
    # the optimal submerging and the optimal retreat, exact and Monte Carlo
    for options, solved in (
            (dict(attacker_submerge="optimal"),
             dr.optimal_sea(rules, a, d, retreat="never", attacker_submerge="optimal")),
            (dict(attacker_submerge="first-chance", retreat_policy="optimal"),
             dr.optimal_sea(rules, a, d, attacker_submerge="first-chance"))):
        got = battlecalc.simulate(**kwargs, **options, method="exact")
        assert _outcomes(got) == pytest.approx(tuple(float(solved[k]) for k in OUTCOME_KEYS),
                                               abs=1e-12), options
        mc = battlecalc.simulate(**kwargs, **options, method="mc", trials=MC_TRIALS, seed=43)
        assert_mc_agrees(mc, got)


# the battery's battles whose answers changed (tests/fixtures/battery.json, recorded again):
# each equal to the independent references, its outcomes and every other figure
CHANGED_BATTERY = [
    (edition, attacker, defender, policies)
    for edition in ("revised", "1942-2e")
    for attacker, defender, policies in (
        ({"submarine": 2, "destroyer": 1}, {"submarine": 2, "transport": 1},
         ("first-chance", "never")),
        ({"submarine": 2, "destroyer": 1}, {"submarine": 2, "transport": 1},
         ("first-chance", "when-only-subs-left")),
        ({"submarine": 2, "destroyer": 1}, {"submarine": 2, "transport": 1},
         ("first-chance", "first-chance")),
        ({"submarine": 3, "fighter": 1}, {"carrier": 1, "fighter": 1, "submarine": 2},
         ("first-chance", "never")),
        ({"submarine": 3, "fighter": 1}, {"carrier": 1, "fighter": 1, "submarine": 2},
         ("first-chance", "when-only-subs-left")),
        ({"submarine": 3, "fighter": 1}, {"carrier": 1, "fighter": 1, "submarine": 2},
         ("first-chance", "first-chance")),
        ({"submarine": 2, "fighter": 1}, {"carrier": 1, "fighter": 1},
         ("first-chance", "never")),
        ({"destroyer": 1, "submarine": 2}, {"submarine": 2, "transport": 1},
         ("first-chance", "when-only-subs-left")))]


@pytest.mark.parametrize(("edition", "attacker", "defender", "policies"), CHANGED_BATTERY)
def test_the_battery_s_changed_battles_are_the_reference_s(edition, attacker, defender,
                                                          policies):
    expected = exact_sea(edition, attacker, defender, attacker_submerge=policies[0],
                         defender_submerge=policies[1])
    got = battlecalc.simulate(rules=edition, attacker=attacker, defender=defender, sea=True,
                              attacker_submerge=policies[0], defender_submerge=policies[1],
                              method="exact")
    for key in (*OUTCOME_KEYS, "attacker_ipc_loss", "defender_ipc_loss", "mean_rounds"):
        assert getattr(got, key) == pytest.approx(float(expected[key]), abs=1e-12), key


def test_a_fixed_retreat_after_the_subs_submerged():
    """The battery's 1942-2e 2 sub 1 fighter v 1 carrier 1 fighter, retreat with 1 unit left:
    the fighter withdraws where it survives round 1 (2/9), else the defender wins."""
    import decision_reference as dr

    a, d = {"submarine": 2, "fighter": 1}, {"carrier": 1, "fighter": 1}
    expected = dr.exact_sea_retreat("1942-2e", a, d, retreat_when_left=1,
                                    attacker_submerge="first-chance")
    got = battlecalc.simulate(rules="1942-2e", attacker=a, defender=d, sea=True,
                              attacker_submerge="first-chance", retreat_when_left=1,
                              method="exact")
    assert _outcomes(got) == pytest.approx(tuple(float(expected[k]) for k in OUTCOME_KEYS),
                                           abs=1e-12)
    assert (got.retreat, got.defender_win) == pytest.approx((2 / 9, 7 / 9), abs=1e-12)
