"""Biased dice (issue 43, from aacalc2's list): --die-law / die_law, the exact chances of the
die's faces 1..6; a unit of value v hits on faces 1..v (docs/rules.md, "Biased dice").  The
exact solver against the independent references (tests/references/reference.py's and
sea_reference.py's die_law: every chance a sum of the faces' Fractions) to a few ulps on land
and sea battles with loaded dice (AA fire, bombardment, heavy bombers' best of two, supports),
a battle by hand, Monte Carlo within 4 standard errors, the fair law given as six 1/6 equal to
no law to the last bit on the suite's battles, the surfaces (command line, solve_many, sweep)
and the refusals."""

from __future__ import annotations

import json
import math
import urllib.parse
from fractions import Fraction

import battles
import pytest
from helpers import MC_TRIALS, assert_mc_agrees
from reference import exact_land
from sea_reference import exact_sea
from tiers import sampled

import battlecalc
from battlecalc import BattleInputError
from battlecalc.die_law import MAX_WHOLE, DieLaw, read_die_law

F = Fraction
FAIR = "1/6,1/6,1/6,1/6,1/6,1/6"
# loaded toward 1 (a low roll hits): 1/3, 1/4, 1/6, 1/8, 1/12, 1/24
LOW = (F(1, 3), F(1, 4), F(1, 6), F(1, 8), F(1, 12), F(1, 24))
# loaded toward 6 (fewer hits)
HIGH = (F(1, 12), F(1, 12), F(1, 6), F(1, 6), F(1, 4), F(1, 4))
# decimals, read as exact decimal fractions (0.3 is 3/10, not the float nearest it)
DECIMAL = ("0.3", "0.2", "0.2", "0.1", "0.1", "0.1")
# face 1 never comes up: a unit of value 1 never hits (nor an AA gun at 1)
NO_ONES = (F(0), F(1, 5), F(1, 5), F(1, 5), F(1, 5), F(1, 5))


def text(law) -> str:
    return ",".join(str(p) for p in law)


KEYS = ("attacker_win", "defender_win", "draw", "stalemate", "retreat", "takes_territory",
        "attacker_ipc_loss", "defender_ipc_loss", "tuv_swing", "mean_rounds")
ULPS = 8  # of the larger of 1 and the value (and the IPC losses, for the TUV swing)

# (edition, attacker, defender, die law, options): general fire with support, round-1 AA fire
# (one die at each aircraft; the attacker's choice, 1942 2E's three a gun; radar at 2), heavy
# bombers (Revised: two dice each able to hit; 1942 2E: the best of two; LHTR on defence),
# bombardment (Revised before round 1, 1942 2E in round 1), tactical bombers paired, a retreat
# and a die with a face that never comes up
LAND = [
    ("revised", {"infantry": 3, "artillery": 1, "tank": 1}, {"infantry": 4, "tank": 1}, LOW,
     {}),
    ("revised", {"infantry": 3, "artillery": 1, "tank": 1}, {"infantry": 4, "tank": 1}, HIGH,
     {}),
    ("revised", {"infantry": 2, "fighter": 1, "bomber": 1}, {"infantry": 3, "aa": 1}, LOW, {}),
    ("1942-2e", {"infantry": 2, "fighter": 1, "bomber": 2}, {"infantry": 3, "aa": 1}, HIGH,
     {"attacker_tech": ["heavy_bombers"]}),
    ("revised", {"infantry": 2, "bomber": 1}, {"infantry": 3}, DECIMAL,
     {"attacker_tech": ["heavy_bombers"]}),
    ("1942-2e", {"bomber": 1, "infantry": 1}, {"bomber": 1, "infantry": 2}, LOW,
     {"attacker_tech": ["lhtr_heavy_bombers"], "defender_tech": ["lhtr_heavy_bombers"]}),
    ("aa50", {"fighter": 2, "infantry": 2}, {"infantry": 3, "aa": 1}, HIGH,
     {"defender_tech": ["radar"]}),
    ("classic", {"fighter": 2, "tank": 1}, {"infantry": 2, "aa": 1}, LOW, {}),
    ("1940-2e", {"fighter": 1, "tactical_bomber": 2, "mech_infantry": 1}, {"infantry": 3},
     DECIMAL, {}),
    ("revised", {"tank": 1}, {"infantry": 2, "artillery": 1}, LOW,
     {"landing": {"infantry": 2}, "bombard": {"battleship": 1}}),
    ("1942-2e", {}, {"infantry": 3, "aa": 1}, HIGH,
     {"landing": {"infantry": 2, "artillery": 1}, "bombard": {"battleship": 1, "cruiser": 1}}),
    ("1942-2e", {"infantry": 3, "tank": 1}, {"infantry": 4}, LOW,
     {"retreat_below": 0.4, "attacker_ool": "tank,infantry"}),
    ("revised", {"infantry": 2, "artillery": 1}, {"infantry": 2, "aa": 1}, NO_ONES, {}),
    ("revised", {"infantry": 1, "fighter": 1}, {"bomber": 1, "aa": 1}, NO_ONES, {}),
]
LAND_IDS = [f"{e}-{i}" for i, (e, *_rest) in enumerate(LAND)]


def close(result, expected, keys=KEYS) -> None:
    ipc = max(abs(float(expected[k])) for k in ("attacker_ipc_loss", "defender_ipc_loss"))
    for key in keys:
        want = expected[key]
        scale = max(1.0, abs(float(want)), ipc if key == "tuv_swing" else 0.0)
        assert abs(Fraction(getattr(result, key)) - want) <= ULPS * Fraction(math.ulp(scale)), (
            key, getattr(result, key), float(want))


@pytest.mark.parametrize("battle", sampled([(b,) for b in LAND], 2, LAND_IDS))
def test_land_battles_match_the_reference_to_a_few_ulps(battle):
    edition, attacker, defender, law, options = battle
    expected = exact_land(edition, attacker, defender, die_law=law, **options)
    result = battlecalc.simulate(rules=edition, attacker=attacker, defender=defender,
                                 method="exact", die_law=text(law), **options)
    close(result, expected)
    for side in ("attacker_survivors", "defender_survivors"):
        for unit, count in expected[side].items():
            assert getattr(result, side).get(unit, 0.0) == pytest.approx(float(count),
                                                                        abs=1e-13), unit
    # (which would pass a solver that ignored the law only if the reference did too)
    fair = battlecalc.simulate(rules=edition, attacker=attacker, defender=defender,
                               method="exact", **options)
    assert abs(fair.attacker_win - float(expected["attacker_win"])) > 1e-3


SEA = [
    ("1942-2e", {"submarine": 2, "destroyer": 1}, {"destroyer": 1, "cruiser": 1}, LOW, {}),
    ("1942-2e", {"carrier": 1, "fighter": 2}, {"destroyer": 2, "submarine": 1}, HIGH, {}),
    ("revised", {"battleship": 1, "fighter": 1}, {"destroyer": 2}, DECIMAL, {}),
    ("1942-2e", {"submarine": 1, "bomber": 1}, {"destroyer": 1, "transport": 1}, LOW,
     {"attacker_tech": ["heavy_bombers"]}),
    ("classic", {"submarine": 1, "battleship": 1}, {"fighter": 1, "carrier": 1}, HIGH, {}),
]


@pytest.mark.parametrize("battle", SEA, ids=[f"{b[0]}-{i}" for i, b in enumerate(SEA)])
def test_sea_battles_match_the_reference_to_a_few_ulps(battle):
    edition, attacker, defender, law, options = battle
    expected = exact_sea(edition, attacker, defender, die_law=law, **options)
    assert expected["attacker_win"] != exact_sea(edition, attacker, defender,
                                                 **options)["attacker_win"]
    result = battlecalc.simulate(rules=edition, attacker=attacker, defender=defender, sea=True,
                                 method="exact", die_law=list(law), **options)
    close(result, expected, [k for k in KEYS if k != "takes_territory"])


@pytest.mark.parametrize(("law", "p", "q"), [
    (LOW, F(1, 3), F(7, 12)),  # infantry attacks at 1: face 1; defends at 2: faces 1-2
    (HIGH, F(1, 12), F(1, 6)),
    (DECIMAL, F(3, 10), F(1, 2)),
    (NO_ONES, F(0), F(1, 5)),
])
def test_one_infantry_against_one_by_hand(law, p, q):
    # a round: the attacker alone hits p (1 - q), both hit p q, the defender alone hits
    # (1 - p) q, nobody (1 - p)(1 - q), which is fought again: P(win) = p (1 - q) / (1 - (1 -
    # p)(1 - q)), P(draw) = p q / (the same), the rounds 1 / (the same)
    again = 1 - (1 - p) * (1 - q)
    result = battlecalc.simulate(rules="revised", attacker="1 inf", defender="1 inf",
                                 method="exact", die_law=text(law))
    expected = (p * (1 - q) / again, p * q / again, (1 - p) * q / again, 1 / again)
    got = (result.attacker_win, result.draw, result.defender_win, result.mean_rounds)
    assert got == pytest.approx([float(x) for x in expected], rel=1e-15, abs=1e-16)


def test_a_law_a_program_gives_as_floats_is_read_as_the_decimals_written():
    law = read_die_law([0.3, 0.2, 0.2, 0.1, 0.1, 0.1])
    assert law == read_die_law("0.3 0.2 0.2 0.1 0.1 0.1") == read_die_law(
        [F(3, 10), F(1, 5), F(1, 5), F(1, 10), F(1, 10), F(1, 10)])
    assert law.weights == (3, 2, 2, 1, 1, 1) and law.text() == "3/10,1/5,1/5,1/10,1/10,1/10"
    assert read_die_law("2/12,2/12,2/12,2/12,2/12,2/12") == DieLaw((1,) * 6)


def test_smart_losses_count_hits_on_the_biased_die():
    # defending 1 infantry (at 2) and 1 bomber (at 1): on the fair die the bomber's loss costs
    # 1/6 hit and the infantry's 2/6, so smart loses the bomber first; on a die whose face 2
    # never comes up both cost the chance of face 1, and the tie goes to the cheaper infantry
    law = (F(1, 2), F(0), F(1, 8), F(1, 8), F(1, 8), F(1, 8))
    common = dict(rules="revised", attacker="2 inf 1 tank", defender="1 inf 1 bomber",
                  method="exact")
    fair_smart = battlecalc.simulate(**common, defender_ool="smart")
    assert fair_smart.tuv_swing == battlecalc.simulate(**common, defender_ool="bomber").tuv_swing
    smart = battlecalc.simulate(**common, defender_ool="smart", die_law=text(law))
    by_hand = battlecalc.simulate(**common, defender_ool="infantry", die_law=text(law))
    bomber_first = battlecalc.simulate(**common, defender_ool="bomber", die_law=text(law))
    # (the bomber costs 15 IPC, the infantry 3: the order shows in the swing)
    assert smart.tuv_swing == by_hand.tuv_swing != bomber_first.tuv_swing


# --- Monte Carlo samples the same laws ---------------------------------------------------------

@pytest.mark.parametrize("battle", [LAND[0], LAND[3], LAND[10]],
                         ids=[LAND_IDS[0], LAND_IDS[3], LAND_IDS[10]])
def test_monte_carlo_agrees_within_four_standard_errors(battle):
    edition, attacker, defender, law, options = battle
    expected = exact_land(edition, attacker, defender, die_law=law, **options)
    mc = battlecalc.simulate(rules=edition, attacker=attacker, defender=defender, method="mc",
                             trials=MC_TRIALS, seed=43, die_law=text(law), **options)
    assert mc.method == "mc"
    assert_mc_agrees(mc, expected)


def test_monte_carlo_of_a_sea_battle_agrees_within_four_standard_errors():
    edition, attacker, defender, law, options = SEA[0]
    expected = exact_sea(edition, attacker, defender, die_law=law, **options)
    mc = battlecalc.simulate(rules=edition, attacker=attacker, defender=defender, sea=True,
                             method="mc", trials=MC_TRIALS, seed=44, die_law=text(law))
    assert_mc_agrees(mc, expected, probabilities=("attacker_win", "defender_win", "draw"))


# --- the fair die given as six 1/6: the same answers, to the last bit ------------------------

def _answers(result) -> str:
    data = result.to_dict()
    data.pop("elapsed_s", None)
    data.pop("die_law", None)
    return json.dumps(data, sort_keys=True, default=str)


FAIR_SAMPLE = battles.BATTERY[::9]


@pytest.mark.filterwarnings("ignore::battlecalc.errors.BattleInputWarning")
@pytest.mark.parametrize("battle", sampled([(b,) for b in FAIR_SAMPLE], 2,
                                            [b["id"] for b in FAIR_SAMPLE]))
def test_the_fair_law_gives_the_battery_to_the_last_bit(battle):
    kwargs = battles.kwargs_of(battle)
    plain = battlecalc.simulate(**kwargs, method="exact")
    fair = battlecalc.simulate(**kwargs, method="exact", die_law=FAIR)
    assert fair.to_dict()["die_law"] == FAIR
    assert _answers(fair) == _answers(plain)


@pytest.mark.filterwarnings("ignore::battlecalc.errors.BattleInputWarning")
def test_the_fair_law_gives_any_battle_to_the_last_bit():
    # exact and Monte Carlo (auto: 2,000 trials, a seed), land, sea and amphibious, five
    # editions; a low-luck battle refuses any die law
    checked = 0
    for kwargs in battles.any_battles(4301, 30):
        try:
            plain = battlecalc.simulate(**kwargs)
        except BattleInputError:
            continue
        if kwargs.get("dice") == "low_luck":
            with pytest.raises(BattleInputError, match="die_law cannot be combined with dice "
                               "low_luck"):
                battlecalc.simulate(**kwargs, die_law=FAIR)
            continue
        fair = battlecalc.simulate(**kwargs, die_law=FAIR)
        assert _answers(fair) == _answers(plain), kwargs
        checked += 1
    assert checked >= 20


# --- every surface ---------------------------------------------------------------------------

def test_solve_many_answers_as_simulate_one_by_one():
    many = [dict(rules="revised", attacker=a, defender=d, method="exact", die_law=law)
            for a, d in (("2 inf 1 art", "2 inf"), ("1 inf 1 tank 1 ftr", "2 inf 1 aa"))
            for law in (None, FAIR, text(LOW), text(HIGH))]
    frame = battlecalc.solve_many(many)
    for kwargs, row in zip(many, frame.to_dict("records"), strict=True):
        one = battlecalc.simulate(**kwargs)
        assert row["attacker_win"] == one.attacker_win, kwargs
        assert row["tuv_swing"] == one.tuv_swing, kwargs
        given = row.get("die_law")
        assert given == (None if kwargs["die_law"] is None
                         else read_die_law(kwargs["die_law"]).text()) or (
            kwargs["die_law"] is None and given != given)  # (NaN: a column others fill)


def test_a_sweep_varies_it():
    laws = [FAIR, text(LOW), text(HIGH)]
    frame = battlecalc.sweep([dict(rules="revised", attacker="2 inf 1 ftr", defender="3 inf",
                                   method="exact")], vary={"die_law": laws}, workers=1)
    assert len(frame) == 3
    for row in frame.itertuples():
        want = battlecalc.simulate(rules="revised", attacker="2 inf 1 ftr", defender="3 inf",
                                   method="exact", die_law=row.die_law)
        assert row.attacker_win == want.attacker_win and row.tuv_swing == want.tuv_swing
    assert len(set(frame["attacker_win"])) == 3


def test_the_command_line_takes_it_as_simulate_does(invoke):
    result = invoke("run", "--rules", "1942-2e", "-a", "2 inf 1 ftr", "-d", "3 inf 1 aa",
                    "--die-law", "0.3,0.2,0.2,0.1,0.1,0.1", "--method", "exact",
                    "--format", "json")
    assert result.exit_code == 0, result.output
    want = battlecalc.simulate(rules="1942-2e", attacker="2 inf 1 ftr", defender="3 inf 1 aa",
                               method="exact", die_law=DECIMAL)
    got = json.loads(result.stdout)
    assert got["attacker_win"] == want.attacker_win and got["tuv_swing"] == want.tuv_swing
    assert got["die_law"] == "3/10,1/5,1/5,1/10,1/10,1/10"
    table = invoke("run", "--rules", "1942-2e", "-a", "2 inf 1 ftr", "-d", "3 inf 1 aa",
                   "--die-law", "0.3,0.2,0.2,0.1,0.1,0.1", "--method", "exact")
    assert "biased die: faces 1, 2, ... come up with chances 3/10, 1/5, 1/5" in table.stdout
    # without it, no die_law key (answers and CSV headers as they were)
    plain = invoke("run", "--rules", "1942-2e", "-a", "2 inf 1 ftr", "-d", "3 inf 1 aa",
                   "--method", "exact", "--format", "csv")
    assert "die_law" not in plain.stdout.splitlines()[0] and "die_law" in invoke(
        "run", "--rules", "1942-2e", "-a", "2 inf 1 ftr", "-d", "3 inf 1 aa", "--method",
        "exact", "--format", "csv", "--die-law", FAIR).stdout.splitlines()[0]


# --- refused ----------------------------------------------------------------------------------

BAD = [
    ("1/6,1/6,1/6,1/6,1/6,1/5", "the probabilities must sum to exactly 1, they sum to 31/30"),
    ("0.5,0.5,0.1,-0.1,0,0", "every probability must be between 0 and 1, got '-0.1'"),
    ([F(3, 2), F(-1, 2), 0, 0, 0, 0], "every probability must be between 0 and 1, got 3/2"),
    ("1/5,1/5,1/5,1/5,1/5", "die_law must give 6 probabilities, one for each face of the die, "
     "got 5"),
    ("1/7,1/7,1/7,1/7,1/7,1/7,1/7", "die_law must give 6 probabilities"),
    ("1/1000003,1000002/1000003,0,0,0,0", "the probabilities' common denominator is 1,000,003, "
     f"at most {MAX_WHOLE:,} is taken"),
    ("1/6,1/6,1/6,1/6,1/6,x", "die_law must be six probabilities of the faces 1..6"),
    ("1/0,1,0,0,0,0", "'1/0' divides by zero"),
    ([float("nan")] * 6, "die_law must be six probabilities"),
    (True, "die_law must be six probabilities"),
]


@pytest.mark.parametrize(("law", "fragment"), BAD, ids=[str(i) for i in range(len(BAD))])
def test_bad_laws_are_refused(law, fragment):
    with pytest.raises(BattleInputError) as caught:
        battlecalc.simulate(rules="revised", attacker="1 inf", defender="1 inf",
                            method="exact", die_law=law)
    assert fragment in str(caught.value)


def test_low_luck_and_formula_editions_refuse_it():
    with pytest.raises(BattleInputError, match="die_law cannot be combined with dice low_luck"):
        battlecalc.simulate(rules="revised", attacker="1 inf", defender="1 inf",
                            dice="low_luck", die_law=FAIR)
    with pytest.raises(BattleInputError, match="die_law do not apply"):
        battlecalc.simulate(rules="formula", attacker="3 inf", defender="3 inf", die_law=FAIR)


@pytest.mark.parametrize(("args", "fragment"), [
    (["--die-law", "1/6,1/6,1/6,1/6,1/6,1/5"], "Error: --die-law: the probabilities must sum "
     "to exactly 1"),
    (["--die-law", "-1,1,1,0,0,0"], "Error: --die-law: every probability must be between 0 "
     "and 1"),
    (["--die-law", "1/2,1/2"], "Error: --die-law must give 6 probabilities"),
    (["--die-law", "1/1000003,1000002/1000003,0,0,0,0"], "common denominator is 1,000,003"),
    (["--die-law", FAIR, "--dice", "low-luck"], "Error: --die-law cannot be combined with "
     "dice low_luck"),
])
def test_the_command_line_refuses_in_one_line(invoke, args, fragment):
    result = invoke("run", "--rules", "revised", "-a", "2 inf", "-d", "2 inf", *args)
    assert result.exit_code == 2, result.output
    assert fragment in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert result.stdout == ""


# --- raids: the AA dice and the damage dice --------------------------------------------------

def test_a_raid_by_hand():
    # Revised, 2 bombers against an AA gun (one die at each, a hit on 1: 1/3 on LOW), each
    # bomber left rolling one damage die: E[face] = (8 + 12 + 12 + 12 + 10 + 6) / 24 = 5/2
    raid = dict(rules="revised", attacker="2 bomber", target_value=10, aa=True)
    exact = battlecalc.raid(**raid, method="exact", die_law=text(LOW))
    assert exact.bombers_over_target == pytest.approx(2 * 2 / 3, rel=1e-15)
    assert exact.expected_damage == pytest.approx(2 * 2 / 3 * 5 / 2, rel=1e-15)
    assert exact.to_dict()["die_law"] == text(LOW)
    law = dict(exact.damage_distribution.itertuples(index=False))
    # two damage dice: 2 shows as 1 + 1 from both bombers over the target (4/9 x 1/9), or a
    # single 2 from one of them (2 x 2/9 x 1/3 x 1/4)
    assert law[2] == pytest.approx(F(4, 9) * F(1, 9) + 2 * F(2, 9) * F(1, 4), rel=1e-14)
    mc = battlecalc.raid(**raid, method="mc", trials=MC_TRIALS, seed=5, die_law=text(LOW))
    for key in ("expected_damage", "bombers_over_target"):
        assert abs(getattr(mc, key) - getattr(exact, key)) <= 4 * mc.stderr[key], key


def test_a_raid_with_the_fair_law_is_the_same_to_the_last_bit():
    for method in ("exact", "mc"):
        raid = dict(rules="1940-2e", attacker="2 bomber 1 fighter", defender="1 fighter",
                    facility="major", method=method, trials=5000, seed=9)
        plain, fair = battlecalc.raid(**raid), battlecalc.raid(**raid, die_law=FAIR)
        assert _answers(fair) == _answers(plain), method


def test_the_luck_of_a_save_takes_no_die_law():
    from battlecalc.rules import load_rules
    from battlecalc.triplea.luck import read_luck

    biased = load_rules("revised").with_die_law(read_die_law(text(LOW)))
    with pytest.raises(BattleInputError, match="TripleA's dice, which are fair: no die_law"):
        read_luck("no-such-save.tsvg", rules=biased)


# --- the web API ----------------------------------------------------------------------------

@pytest.mark.slow
def test_the_web_api_answers_as_the_command_line_and_refuses_with_400(invoke):
    pytest.importorskip("starlette")
    pytest.importorskip("uvicorn")
    from webserver import get_json, run_query, running_server

    battle = {"rules": "revised", "attacker": "2 inf 1 ftr", "defender": "3 inf 1 aa",
              "method": "exact"}
    cli = invoke("run", "--rules", "revised", "-a", "2 inf 1 ftr", "-d", "3 inf 1 aa",
                 "-m", "exact", "--die-law", text(HIGH), "--format", "json")
    want = json.loads(cli.stdout)
    with running_server() as base:
        status, data = run_query(base, **battle, die_law=text(HIGH))
        assert status == 200, data
        assert {k: v for k, v in data.items() if k != "elapsed_s"} == {
            k: v for k, v in want.items() if k != "elapsed_s"}
        for law, fragment in (("1/2,1/2,0,0,0,1/6", "must sum to exactly 1"),
                              ("1/2,1/2", "must give 6 probabilities"),
                              ("0.5,0.6,-0.1,0,0,0", "between 0 and 1")):
            status, data = run_query(base, **battle, die_law=law)
            assert status == 400 and fragment in data["error"], data
        status, data = run_query(base, **battle, dice="low_luck", die_law=FAIR)
        assert status == 400 and "cannot be combined with dice low_luck" in data["error"]
        status, data = get_json(base, "/api/raid?" + urllib.parse.urlencode(dict(
            rules="revised", attacker="2 bomber", target_value="10", aa="1",
            die_law=text(LOW))))
        assert status == 200 and data["die_law"] == text(LOW), data
        assert data["expected_damage"] == battlecalc.raid(
            rules="revised", attacker="2 bomber", target_value=10, aa=True,
            die_law=text(LOW)).expected_damage


def test_kamikaze_strikes_roll_the_biased_die():
    # 1940-2e: a token hits on 1-2, on LOW 1/3 + 1/4 = 7/12; two tokens on a battleship (two
    # hit points) sink it with (7/12)^2, damage it with 2 (7/12)(5/12)
    from battlecalc.reactions import after_strikes
    from battlecalc.rules import load_rules

    ruleset = load_rules("1940-2e").with_die_law(read_die_law(text(LOW)))
    fates = dict((tuple(sorted(force.items())), p) for p, force in after_strikes(
        ruleset, {"battleship": 1, "cruiser": 1}, (("battleship", 2), ("cruiser", 1)), False))
    p = F(7, 12)
    assert fates[(("cruiser", 1),)] == pytest.approx(float((1 - p) * p * p), rel=1e-15)
    assert fates[(("battleship", 1), ("cruiser", 1))] == pytest.approx(
        float((1 - p) ** 2 * (1 - p)), rel=1e-15)
    assert fates[(("cruiser", 1), ("damaged_battleship", 1))] == pytest.approx(
        float(2 * p * (1 - p) * (1 - p)), rel=1e-15)
    battle = dict(rules="1940-2e", sea=True, attacker="1 bb 1 ca", defender="2 dd",
                  kamikaze=2, kamikaze_targets="battleship:2", method="exact")
    assert battlecalc.simulate(**battle, die_law=text(LOW)).attacker_win != \
        battlecalc.simulate(**battle).attacker_win


def test_later_waves_and_the_counter_attack_roll_the_same_die():
    # on a die whose face 1 never comes up an infantry attacks in vain: wave 1 (1 inf v 1 inf)
    # is lost for sure, wave 2 (1 tank) fights the infantry left as a battle of its own, and
    # the counter-attack of 1 infantry on the tank never retakes the territory
    law = text(NO_ONES)
    result = battlecalc.simulate(rules="revised", attacker="1 inf", defender="1 inf",
                                 waves=["1 tank"], counterattack="1 inf", method="exact",
                                 die_law=law)
    first, second = result.waves
    assert first["defender_win"] == pytest.approx(1.0, abs=1e-15)
    alone = battlecalc.simulate(rules="revised", attacker="1 tank", defender="1 inf",
                                method="exact", die_law=law)
    assert second["attacker_win"] == pytest.approx(alone.attacker_win, abs=1e-15)
    assert result.counterattack["retakes"] == 0.0
    assert result.holds == pytest.approx(alone.attacker_win, abs=1e-15)
    assert result.to_dict()["die_law"] == law
    fair = dict(rules="revised", attacker="3 inf 1 tank", defender="4 inf",
                waves=["2 inf 2 tank"], counterattack="3 inf 1 tank", method="exact")
    plain, given = battlecalc.simulate(**fair), battlecalc.simulate(**fair, die_law=FAIR)
    assert _answers(given) == _answers(plain)
