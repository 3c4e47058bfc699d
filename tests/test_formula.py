"""Formula combat (seed-002 fan game): engine against the slow reference, MC against exact,
the edition file and its schema, and bad input."""

from __future__ import annotations

import copy
import json
import math
import tomllib
from collections import Counter
from fractions import Fraction
from importlib import resources

import formula_reference as ref
import pytest
from helpers import MC_TRIALS, assert_mc_agrees
from tiers import sampled

import battlecalc
from battlecalc.errors import BattleInputError
from battlecalc.formula import FormulaResult, simulate_formula
from battlecalc.formula import engine as formula_engine
from battlecalc.rules import RulesFileError, load_rules, validate

OUTCOMES = ("attacker_win", "defender_win", "draw", "stalemate", "retreat")


def _raw_formula() -> dict:
    text = (resources.files("battlecalc.rules") / "formula.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


def _based_rules():
    """The formula edition with per-type base values, so the order of losses matters:
    attack army 1 (air, navy 0): attacker order air, navy, army; defence air 2, navy 1
    (army 0): defender order army, navy, air."""
    raw = _raw_formula()
    raw["id"] = "formula_based"
    raw["units"]["army"]["attack"] = 1
    raw["units"]["air"]["defense"] = 2
    raw["units"]["navy"]["defense"] = 1
    return validate(raw, "formula_based.toml")


BASED = {"attack_base": {"army": 1}, "defence_base": {"air": 2, "navy": 1}}

# (attacker, defender, engine options, extra reference options)
CASES = [
    ({"army": 3}, {"army": 2}, {"exchanges": 1}, {}),
    ({"army": 3}, {"army": 2}, {"exchanges": "until-done"}, {}),
    ({"army": 3}, {"army": 2}, {"exchanges": "until-done", "flips": "A1"}, {}),
    ({"army": 2, "air": 1, "army_flipped": 1}, {"army": 2, "navy": 1},
     {"exchanges": "until-done", "attacker_level": 3, "defender_level": 6, "counter": 2,
      "hatred": True, "flips": "A1"}, {}),
    ({"army": 4, "navy_flipped": 2}, {"army": 3, "air": 1, "air_flipped": 1},
     {"exchanges": 3, "loss_multiplier": 2, "defender_level": 9}, {}),
    ({"army": 1, "air": 2, "navy": 1}, {"army": 2, "air": 1, "navy": 1, "army_flipped": 1},
     {"exchanges": "until-done", "attacker_level": 4}, BASED),
    ({"army": 2, "air": 1, "navy": 1}, {"army": 1, "air": 1, "navy": 2},
     {"exchanges": 2, "flips": "A1", "counter": 1}, BASED),
    ({"army": 5}, {"army": 5}, {"exchanges": "until-done", "exchange_cap": 2}, {}),
]


def _ref_kwargs(options: dict, extra: dict) -> dict:
    names = {"attacker_level", "defender_level", "counter", "hatred", "loss_multiplier",
             "exchanges", "flips"}
    kwargs = {k: v for k, v in options.items() if k in names}
    if "exchange_cap" in options:
        kwargs["cap"] = options["exchange_cap"]
    return {**kwargs, **extra}


def _close_dict(got: dict, want: dict, tol: float) -> None:
    for key in set(got) | set(want):
        assert got.get(key, 0.0) == pytest.approx(float(want.get(key, 0)), abs=tol), key


@pytest.mark.parametrize(("attacker", "defender", "options", "extra"), CASES)
def test_exact_engine_matches_reference(attacker, defender, options, extra):
    rules = _based_rules() if extra else "formula"
    result = simulate_formula(attacker, defender, method="exact", rules=rules, **options)
    want = ref.summary(ref.exact(attacker, defender, **_ref_kwargs(options, extra)))
    assert result.method == "exact"
    for key in ("attacker_win", "defender_win", "draw", "stalemate", "attacker_loss_points",
                "defender_loss_points", "mean_exchanges"):
        assert getattr(result, key) == pytest.approx(float(want[key]), abs=1e-12), key
    assert result.retreat == 0.0
    assert result.undecided == result.stalemate
    for key in ("attacker_loss_points_distribution", "defender_loss_points_distribution",
                "exchanges_distribution"):
        _close_dict(getattr(result, key), want[key], 1e-12)
    for side in ("attacker", "defender"):
        got = getattr(result, f"{side}_survivors")
        ref_survivors = want[f"{side}_survivors"]
        _close_dict(got, {k: v for k, v in ref_survivors.items() if k in got}, 1e-12)
        assert all(v == 0 for k, v in ref_survivors.items() if k not in got)
        face_up = sum(v for k, v in got.items() if not k.endswith("_flipped"))
        assert getattr(result, f"{side}_face_up_left") == pytest.approx(face_up, abs=1e-12)
    assert sum(getattr(result, k) for k in OUTCOMES) == pytest.approx(1.0, abs=1e-12)


def test_three_army_against_two_one_exchange():
    r = simulate_formula("3 army", "2 army", exchanges=1, method="exact")
    # 36 rolls of 3 x ra - 2 x rd: 22 leave the defender without a face-up piece, 5 the
    # attacker, 6 both (the 3/3 row), 3 neither (the 2/1 row)
    assert r.attacker_win == pytest.approx(22 / 36, abs=1e-15)
    assert r.defender_win == pytest.approx(5 / 36, abs=1e-15)
    assert r.draw == pytest.approx(6 / 36, abs=1e-15)
    assert r.stalemate == r.undecided == pytest.approx(3 / 36, abs=1e-15)
    assert r.capped == 0.0
    assert r.attacker_loss_points == pytest.approx(55 / 36, abs=1e-15)
    assert r.defender_loss_points == pytest.approx(117 / 36, abs=1e-15)
    assert r.mean_exchanges == 1.0
    assert r.attacker_loss_points_distribution[0] == pytest.approx(14 / 36, abs=1e-15)


def test_three_army_against_two_until_done():
    r = simulate_formula("3 army", "2 army", exchanges="until-done", method="exact")
    want = ref.summary(ref.exact({"army": 3}, {"army": 2}, exchanges="until-done"))
    assert want["attacker_win"] == Fraction(137, 216)
    assert r.attacker_win == pytest.approx(137 / 216, abs=1e-15)
    assert r.defender_win == pytest.approx(float(want["defender_win"]), abs=1e-15)
    assert r.draw == pytest.approx(float(want["draw"]), abs=1e-15)
    assert r.stalemate == r.capped == 0.0  # every battle ends within 3 exchanges
    assert max(r.exchanges_distribution) == 3
    assert r.attacker_loss_points == pytest.approx(float(want["attacker_loss_points"]),
                                                   abs=1e-13)
    assert r.defender_loss_points == pytest.approx(float(want["defender_loss_points"]),
                                                   abs=1e-13)


def test_unicode_names_and_flipped_aliases():
    a = simulate_formula("3 陆军, 1 翻面陸軍", "2 陸軍", method="exact", exchanges="until-done")
    b = simulate_formula("3 army, 1 army_flipped", {"army": 2}, method="exact",
                         exchanges="until-done")
    assert a.attacker == b.attacker == "3 army, 1 army_flipped"
    assert a.attacker_win == b.attacker_win


def test_flips_default_comes_from_the_edition_flag():
    assert load_rules("formula").flags["formula_flips"] == "A2"
    default = simulate_formula("3 army", "2 army", exchanges="until-done", method="exact")
    a2 = simulate_formula("3 army", "2 army", exchanges="until-done", method="exact",
                          flips="A2")
    a1 = simulate_formula("3 army", "2 army", exchanges="until-done", method="exact",
                          flips="A1")
    assert default.flips == "A2"
    assert default.to_dict()["attacker_win"] == a2.attacker_win != a1.attacker_win


def test_a1_and_a2_on_a_fresh_stack():
    # 3 army v 1 army, one exchange: the 3/3 row (3 ra - rd in -1..1) comes up for (ra, rd) =
    # (1, 2), (1, 3), (1, 4), (2, 5), (2, 6).  A2 flips all three attackers (no face-up left)
    # and flips then removes the defender: a draw.  A1 flips, removes, flips: one attacker
    # stays face-up, so the attacker wins (as it does on every other roll).
    a2 = simulate_formula("3 army", "1 army", exchanges=1, method="exact", flips="A2")
    a1 = simulate_formula("3 army", "1 army", exchanges=1, method="exact", flips="A1")
    assert a2.draw == pytest.approx(5 / 36, abs=1e-15)
    assert a1.draw == 0.0
    assert a1.attacker_win == 1.0
    assert a1.attacker_loss_points == a2.attacker_loss_points  # same table, same points


def test_exchange_cap_is_reported():
    r = simulate_formula("5 army", "5 army", exchanges="until-done", exchange_cap=1,
                         method="exact")
    one = simulate_formula("5 army", "5 army", exchanges=1, method="exact")
    assert r.capped == r.stalemate == one.stalemate > 0
    assert one.capped == 0.0
    assert r.attacker_win == one.attacker_win


def test_mc_matches_exact_within_four_standard_errors():
    kwargs = {"exchanges": "until-done", "attacker_level": 3, "counter": 1, "flips": "A1"}
    attacker, defender = "3 army, 1 air", "3 army, 1 navy_flipped"
    exact = simulate_formula(attacker, defender, method="exact", **kwargs)
    mc = simulate_formula(attacker, defender, method="mc", trials=MC_TRIALS, seed=7, **kwargs)
    assert mc.method == "mc" and mc.trials == MC_TRIALS and mc.seed == 7
    assert sum(getattr(mc, k) for k in OUTCOMES) == pytest.approx(1.0, abs=1e-12)
    # (every figure within 4 of its own standard errors, the outcomes' too)
    assert_mc_agrees(mc, exact, probabilities=(), means=(
        *OUTCOMES, "attacker_loss_points", "defender_loss_points", "mean_exchanges",
        "attacker_face_up_left", "attacker_flipped_left", "defender_face_up_left",
        "defender_flipped_left"))
    law = exact.defender_loss_points_distribution
    assert_mc_agrees(mc.defender_loss_points_distribution | {
        points: 0.0 for points in law if points not in mc.defender_loss_points_distribution},
        law, probabilities=list(law), means=(), trials=mc.trials)


def test_mc_three_against_two():
    for exchanges in (1, "until-done"):
        exact = simulate_formula("3 army", "2 army", exchanges=exchanges, method="exact")
        mc = simulate_formula("3 army", "2 army", exchanges=exchanges, method="mc",
                              trials=MC_TRIALS, seed=2024)
        assert_mc_agrees(mc, exact, probabilities=(), slack=0.0, means=(
            "attacker_win", "defender_win", "draw", "attacker_loss_points",
            "defender_loss_points"))


def test_mc_same_seed_same_numbers_whatever_the_threads():
    def run():
        r = simulate_formula("4 army, 1 air", "3 army, 1 army_flipped", method="mc",
                             exchanges="until-done", trials=50_000, seed=123)
        data = r.to_dict()
        data.pop("elapsed_s")
        return data

    threads = battlecalc.thread_count()
    try:
        battlecalc.set_threads(1)
        one = run()
        battlecalc.set_threads(3)
        many = run()
    finally:
        battlecalc.set_threads(threads)
    assert one == many
    other = simulate_formula("4 army, 1 air", "3 army, 1 army_flipped", method="mc",
                             exchanges="until-done", trials=50_000, seed=124)
    assert other.attacker_win != one["attacker_win"]


@pytest.mark.slow
def test_die_by_die_reference_agrees_with_the_engine():
    trials = MC_TRIALS
    sim = ref.summary(ref.simulate({"army": 3}, {"army": 2}, trials, seed=5,
                                   exchanges="until-done"))
    exact = simulate_formula("3 army", "2 army", exchanges="until-done", method="exact")
    assert_mc_agrees(sim, exact, probabilities=("attacker_win", "defender_win", "draw"),
                     means=(), slack=0.0, trials=trials)


def test_auto_is_exact_for_small_battles_and_falls_back_to_mc():
    assert simulate_formula("3 army", "2 army").method == "exact"
    from battlecalc.formula import engine

    big = engine.make_formula_battle("6 army", "6 army", exchanges="until-done")
    with pytest.raises(engine._TooLarge):
        engine._solve_exact(big, limit=10)


# The size of an exact solve, counted from the pieces (issue 16 point 6): small and medium
# battles, both flip readings, flipped pieces, mixed stacks in a base-value order, multipliers,
# a fixed number of exchanges.  (attacker, defender, engine options, base values?)
BOUND_CASES = [
    *CASES,
    ("10 army", "10 army", {"exchanges": "until-done"}, False),  # docs/formula.md §8
    ("10 army", "10 army", {"exchanges": "until-done", "flips": "A1"}, False),
    ("3 army, 1 army_flipped", "2 army, 1 air", {"exchanges": "until-done"}, False),
    ("15 army", "12 army", {"exchanges": "until-done", "defender_level": 4}, False),
    ("12 army, 3 army_flipped", "9 army, 2 air, 3 navy_flipped",
     {"exchanges": "until-done", "flips": "A1"}, False),
    ("10 army, 5 air", "8 army, 4 air, 2 navy", {"exchanges": "until-done"}, False),
    ("10 army, 5 air", "8 army, 4 air, 2 navy",
     {"exchanges": "until-done", "loss_multiplier": 2}, False),
    ("7 army, 6 air, 3 air_flipped, 6 navy", "4 army, 3 air", {"exchanges": 4}, False),
    ("3 army, 4 air, 2 navy_flipped", "5 army, 2 navy, 1 air_flipped",
     {"exchanges": "until-done", "counter": 3, "hatred": True}, True),
    ("6 army, 2 navy", "2 army, 5 air, 1 air_flipped",
     {"exchanges": "until-done", "flips": "A1", "attacker_level": 9}, True),
]


def _bound_battle(attacker, defender, options, based):
    from battlecalc.formula import engine

    return engine.make_formula_battle(attacker, defender,
                                      rules=_based_rules() if based else "formula", **options)


@pytest.mark.parametrize(("attacker", "defender", "options", "based"), sampled(BOUND_CASES, 3))
def test_transition_bound_bounds_the_solver(attacker, defender, options, based):
    from battlecalc.formula import engine

    battle = _bound_battle(attacker, defender, options, based)
    transitions = engine._solve_exact(battle, limit=10**9)["transitions"]
    assert 0 < transitions <= engine.transition_bound(battle)
    # stopped early, the count says only that it passed the limit
    if transitions > 1:
        assert engine.transition_bound(battle, limit=transitions - 1) > transitions - 1


def _reference_side_states(army, points, rule, order):
    """Every state of one side (reference pieces, canonical counts) that the loss points of
    the table's rows can lead to, exchange after exchange, while it keeps a face-up piece."""
    start = ref.counts(ref.make_pieces(army))
    seen, frontier = {start}, [start]
    while frontier:
        following = []
        for state in frontier:
            for p in points:
                pieces = ref.from_counts(state)  # all flipped pieces are from earlier exchanges
                ref.apply_losses(pieces, p, rule, 1, order)
                new = ref.counts(pieces)
                if sum(new[0]) and new not in seen:
                    seen.add(new)
                    following.append(new)
        frontier = following
    return seen


@pytest.mark.parametrize(("attacker", "defender", "options", "based"), sampled(BOUND_CASES, 3))
def test_side_state_counts_cover_the_reference_states(attacker, defender, options, based):
    from battlecalc.formula import engine

    battle = _bound_battle(attacker, defender, options, based)
    a1 = battle.spec.flips == "A1"
    for army, side, points, role in ((battle.spec.attacker, battle.a, battle.row_att, "attack"),
                                     (battle.spec.defender, battle.d, battle.row_def, "defence")):
        counts = engine._side_state_counts(side, points, a1)
        order = ref.loss_order(BASED[f"{role}_base"] if based else {})
        states = _reference_side_states(dict(army), sorted({int(p) for p in points}),
                                        battle.spec.flips, order)
        up0, flipped0 = ref.counts(ref.make_pieces(dict(army)))
        p0 = 2 * sum(up0) + sum(flipped0)
        per_drop = Counter(p0 - 2 * sum(up) - sum(fl) for up, fl in states)
        for drop, n in per_drop.items():
            assert n <= counts[drop], (army, drop)


def test_result_views():
    r = simulate_formula("3 army", "2 army", exchanges="until-done", method="exact")
    data = r.to_dict()
    for key in ("rules", "method", "trials", "seed", "attacker", "defender", "exchanges",
                *OUTCOMES, "undecided", "capped", "attacker_loss_points",
                "defender_loss_points", "attacker_loss_points_distribution",
                "defender_loss_points_distribution", "attacker_face_up_left",
                "attacker_flipped_left", "defender_face_up_left", "defender_flipped_left",
                "mean_exchanges"):
        assert key in data, key
    assert data["rules"] == "formula" and data["method"] == "exact"
    assert data["trials"] is None and data["seed"] is None
    assert data["exchanges"] == "until-done"
    assert sum(data["attacker_loss_points_distribution"].values()) == pytest.approx(1.0)
    assert json.loads(r.to_json())["attacker_win"] == r.attacker_win
    frame = r.to_frame()
    assert len(frame) == 1 and frame.loc[0, "attacker_win"] == r.attacker_win
    lines = r.to_csv().splitlines()
    assert len(lines) == 2 and lines[0].startswith("rules,method,trials,seed,")
    assert "attacker_loss_points_distribution.0" in lines[0]
    text = r.table()
    assert "attacker wins" in text and "63.43%" in text and "loss points" in text
    assert isinstance(r, FormulaResult)
    long = r.loss_points_frame()
    assert set(long["side"]) == {"attacker", "defender"}
    mc = simulate_formula("3 army", "2 army", method="mc", trials=1000, seed=1)
    assert "Monte Carlo, 1,000 trials, seed 1" in mc.table()
    assert mc.stderr["attacker_win"] > 0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"attacker_level": 0}, "attacker_level must be between 1 and 10, got 0"),
        ({"defender_level": 11}, "defender_level must be between 1 and 10, got 11"),
        ({"attacker_level": 2.5}, "attacker_level must be a whole number"),
        ({"counter": -1}, "counter must be between 0 and 1,000, got -1"),
        ({"loss_multiplier": 0}, "loss_multiplier must be between 1 and 10, got 0"),
        ({"exchanges": 0}, "exchanges must be between 1 and 1,000, got 0"),
        ({"exchanges": 10**6}, "exchanges must be between 1 and 1,000"),
        ({"exchanges": "forever"}, "exchanges must be a number 1..1000 or 'until-done'"),
        ({"exchanges": "until-done", "exchange_cap": 0}, "exchange_cap must be between 1"),
        ({"hatred": "yes"}, "hatred must be true or false"),
        ({"flips": "A3"}, "flips must be one of A2, A1, got 'A3'"),
        ({"method": "guess"}, "method must be one of auto, exact, mc"),
        ({"trials": 0, "method": "mc"}, "trials must be between 1"),
        ({"seed": -5, "method": "mc"}, "seed must be between 0"),
        ({"attacker": "-1 army"}, "count for army must be at least 1"),
        ({"attacker": {"army": -2}}, "attacker count of army must be between 0 and 1,000"),
        ({"defender": "3 tank"}, "unknown unit 'tank' in formula"),
        ({"defender": {"infantry": 1}}, "unknown unit 'infantry' in formula"),
        ({"attacker": "2 army_flipped"}, "the attacker needs at least one face-up piece"),
        ({"defender": {"army": 0}}, "the defender needs at least one face-up piece"),
        ({"rules": "revised"}, "revised is not a formula-model edition"),
    ],
)
def test_bad_input_raises(kwargs, message):
    args = {"attacker": "3 army", "defender": "2 army", **kwargs}
    with pytest.raises(BattleInputError, match=None) as info:
        simulate_formula(args.pop("attacker"), args.pop("defender"), **args)
    assert message in str(info.value)


def test_exact_refuses_too_large(monkeypatch):
    from battlecalc.formula import engine

    monkeypatch.setattr(engine, "EXACT_TRANSITION_LIMIT", 5)
    with pytest.raises(BattleInputError, match="too large to solve exactly"):
        simulate_formula("4 army", "4 army", exchanges="until-done", method="exact")
    r = simulate_formula("4 army", "4 army", exchanges="until-done", trials=1000, seed=1)
    assert r.method == "mc"


def test_edition_file():
    rules = load_rules("formula")
    assert rules.model == "formula"
    assert rules.formula["die"] == 6
    assert rules.formula["level_thresholds"] == (3, 6, 9)
    assert rules.formula["loss_table"] == (
        (6, 0, 5), (4, 1, 4), (2, 1, 2), (-1, 3, 3), (-3, 2, 1), (-5, 4, 1), (None, 5, 0))
    assert rules.formula["piece_types"] == (
        ("army", "army_flipped"), ("air", "air_flipped"), ("navy", "navy_flipped"))
    assert {rules.aliases[a] for a in ("陆军", "陸軍", "空军", "空軍", "海军", "海軍")} == {
        "army", "air", "navy"}
    assert all(u.attack == u.defense == 0 for u in rules.units.values())
    for edition in ("revised", "1942-2e"):
        other = load_rules(edition)
        assert other.model == "dice" and other.formula is None


def _formula_errors(mutate) -> list[str]:
    raw = copy.deepcopy(_raw_formula())
    mutate(raw)
    with pytest.raises(RulesFileError) as info:
        validate(raw, "formula.toml")
    return [line.strip() for line in str(info.value).splitlines()[1:]]


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda raw: raw.update(model="cards"),
         "formula.model: expected one of 'dice', 'formula', got 'cards'"),
        (lambda raw: raw.pop("formula"),
         'formula.formula: missing (required with model = "formula")'),
        (lambda raw: raw["formula"].update(die=1),
         "formula.formula.die: expected an integer 2..100, got 1"),
        (lambda raw: raw["formula"].update(colour=1), "formula.formula.colour: unknown key"),
        (lambda raw: raw["formula"].pop("loss_table"), "formula.formula.loss_table: missing"),
        (lambda raw: raw["formula"].update(level_thresholds=[6, 3]),
         "formula.formula.level_thresholds: expected increasing levels 1..10 at which every "
         "unit gets +1, got [6, 3]"),
        (lambda raw: raw["formula"]["loss_table"][2].update(attacker_loses=-1),
         "formula.formula.loss_table[2].attacker_loses: expected an integer 0..100, got -1"),
        (lambda raw: raw["formula"]["loss_table"][2].update(diff_at_least=9),
         "formula.formula.loss_table[2].diff_at_least: expected less than the previous row's "
         "4 (rows go from the best difference for the attacker down), got 9"),
        (lambda raw: raw["formula"]["loss_table"][6].update(diff_at_least=-7),
         "formula.formula.loss_table[6].diff_at_least: the last row covers every lower "
         "difference and takes no diff_at_least"),
        (lambda raw: raw["formula"]["loss_table"][3].update(attacker_loses=0, defender_loses=0),
         "formula.formula.loss_table[3]: at least one side must lose something (otherwise "
         "exchanges could repeat forever)"),
        (lambda raw: raw["rules"].update(formula_flips="A3"),
         "formula.rules.formula_flips: expected one of 'A2', 'A1', got 'A3'"),
        (lambda raw: raw["units"]["navy"].pop("damaged_form"),
         ["formula.units.navy.damaged_form: missing (a formula-model unit names its flipped "
          "form, or is the flipped form of another unit)",
          "formula.units.navy_flipped.damaged_form: missing (a formula-model unit names its "
          "flipped form, or is the flipped form of another unit)"]),
        (lambda raw: raw["units"]["army_flipped"].update(damaged_form="army"),
         ["formula.units.army_flipped.damaged_form: a flipped form cannot be flipped again",
          "formula.units.army.damaged_form: a flipped form cannot be flipped again"]),
    ],
)
def test_formula_schema_errors(mutate, expected):
    expected = [expected] if isinstance(expected, str) else expected
    assert _formula_errors(mutate) == expected


def test_formula_table_only_with_formula_model():
    text = (resources.files("battlecalc.rules") / "revised.toml").read_text(encoding="utf-8")
    raw = tomllib.loads(text)
    raw["formula"] = {"die": 6}
    with pytest.raises(RulesFileError) as info:
        validate(raw, "revised.toml")
    assert str(info.value) == (
        'invalid rules file:\n  revised.formula: only allowed with model = "formula"')


# --- bounded work (issue 16, point 6): an exact solve refused quickly (and Monte Carlo under
# the server's time limit: tests/test_web.py) ---------------------------------------------


FORMULA_BIG = dict(rules="formula", attacker="40 army 10 air", defender="40 army 10 air",
                   exchanges="until-done")


def _no_state(*args, **kwargs):
    raise AssertionError("the exact solver built a state")


def test_formula_exact_refusal_builds_no_state(monkeypatch):
    # decided from the pieces (engine.transition_bound) before the solver starts: 0.9-1.0 ms
    # warm where walking states until 1,000,000 transitions took 0.9-1.1 s (speed is a
    # benchmark's business, not a timed test's)
    monkeypatch.setattr(formula_engine._SideStates, "number", _no_state)
    monkeypatch.setattr(formula_engine, "_solve_exact", _no_state)
    with pytest.raises(BattleInputError, match=r"more than 1,000,000 transitions .*; use "
                                               r"method 'mc' for Monte Carlo"):
        battlecalc.simulate(**FORMULA_BIG, method="exact")


def test_formula_auto_picks_monte_carlo_without_building_states(monkeypatch):
    monkeypatch.setattr(formula_engine._SideStates, "number", _no_state)
    monkeypatch.setattr(formula_engine, "_solve_exact", _no_state)
    trials = 20_000
    r = battlecalc.simulate(**FORMULA_BIG, trials=trials, seed=3)
    assert r.method == "mc" and r.trials == trials
    # equal forces, equal levels, no counter points: the rules are symmetric, so both sides
    # win with the same probability; 4 standard errors of the difference at this sample size
    spread = 4 * math.sqrt((r.attacker_win + r.defender_win) / trials)
    assert abs(r.attacker_win - r.defender_win) <= spread


def test_formula_exact_or_not_is_the_bound_against_the_limit(monkeypatch):
    battle = dict(rules="formula", attacker="6 army", defender="5 army, 1 air",
                  exchanges="until-done")
    bound = formula_engine.transition_bound(formula_engine.make_formula_battle(
        battle["attacker"], battle["defender"], exchanges="until-done"))
    monkeypatch.setattr(formula_engine, "EXACT_TRANSITION_LIMIT", bound)
    assert battlecalc.simulate(**battle, method="exact").method == "exact"
    assert battlecalc.simulate(**battle).method == "exact"
    monkeypatch.setattr(formula_engine, "EXACT_TRANSITION_LIMIT", bound - 1)
    monkeypatch.setattr(formula_engine._SideStates, "number", _no_state)
    with pytest.raises(BattleInputError, match=rf"more than {bound - 1:,} transitions"):
        battlecalc.simulate(**battle, method="exact")
    assert battlecalc.simulate(**battle, trials=1000, seed=1).method == "mc"


def test_formula_monte_carlo_does_not_depend_on_the_call_sizes(monkeypatch):
    options = dict(rules="formula", attacker="30 army 5 air", defender="25 army 8 air",
                   exchanges=40, method="mc", trials=100_000, seed=9)
    reference = battlecalc.simulate(**options).to_dict()
    monkeypatch.setattr(formula_engine, "FIRST_CALL_CHUNKS", 1)
    monkeypatch.setattr(formula_engine, "CALL_SECONDS", 1e-9)  # one chunk a call
    one_by_one = battlecalc.simulate(**options).to_dict()
    for data in (reference, one_by_one):
        data.pop("elapsed_s", None)
        data.pop("timing", None)
    assert json.dumps(one_by_one, sort_keys=True, default=str) == \
        json.dumps(reference, sort_keys=True, default=str)
