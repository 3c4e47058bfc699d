"""battlecalc.solve_many: many battles in one call, each with the answer simulate gives it."""

from __future__ import annotations

import math
import random

import battles
import numpy as np
import pandas as pd
import pytest
from helpers import invoke

import battlecalc
from battlecalc import BattleInputError, api, simulate, solve_many
from battlecalc.kernels import jit

TOLERANCE = 1e-12

MIXED = battles.SOLVE_MANY_MIXED
ON_THEIR_OWN = range(battles.SOLVE_MANY_BATCHED, len(MIXED))


def expected_row(battle: dict, **options) -> dict:
    return simulate(**{"method": "exact", **options, **battle}).flat_row()


def assert_row_matches(got: pd.Series, want: dict, where: str) -> None:
    """Every column of simulate's row, with the same value (numbers to TOLERANCE); the
    columns only other editions have are missing (NaN)."""
    for key, value in want.items():
        if key == "elapsed_s":
            continue
        have = got[key]
        if isinstance(value, float) and value is not None:
            assert math.isclose(have, value, rel_tol=0, abs_tol=TOLERANCE) or (
                math.isnan(value) and math.isnan(have)), (where, key, have, value)
        elif value is None:
            assert pd.isna(have), (where, key, have)
        else:
            # (a column that other editions' rows lack holds NaN there: numbers as floats)
            assert have == value, (where, key, have, value)
    extra = set(got.index) - set(want)
    assert all(pd.isna(got[k]) for k in extra), where


@pytest.fixture(scope="module")
def mixed():
    return solve_many(MIXED, method="exact"), [expected_row(b) for b in MIXED]


def test_the_batch_takes_the_small_exact_battles(monkeypatch):
    from battlecalc import batch

    batched = []
    solve = batch._solve_batch
    monkeypatch.setattr(batch, "_solve_batch", lambda b, started: (
        batched.extend(b.positions), solve(b, started))[1])
    solve_many(MIXED, method="exact")
    assert batched == [i for i in range(len(MIXED)) if i not in ON_THEIR_OWN]


def test_one_row_per_battle_in_order(mixed):
    frame, want = mixed
    assert len(frame) == len(MIXED)
    assert list(frame["attacker"]) == [row["attacker"] for row in want]
    # columns: those of the first row's flat_row, then the new ones of later rows
    assert list(frame.columns[:len(want[0])]) == list(want[0])


def test_every_row_equals_simulate(mixed):
    frame, want = mixed
    for i, row in enumerate(want):
        assert_row_matches(frame.iloc[i], row, f"battle {i}: {MIXED[i]}")


def test_one_infantry_each_analytic(mixed):
    """Revised, 1 inf against 1 inf: per round the attacker alone hits with 1/9, the defender
    alone with 5/18, both with 1/18; the first round that is not a double miss ends it."""
    frame, _ = mixed
    row = frame.iloc[0]
    for key, p in (("attacker_win", 1 / 4), ("defender_win", 5 / 8), ("draw", 1 / 8)):
        assert math.isclose(row[key], p, abs_tol=TOLERANCE)
    assert math.isclose(row["mean_rounds"], 9 / 4, abs_tol=TOLERANCE)  # geometric, 4/9


def test_random_battery_equals_simulate():
    """Random small battles, land and sea, of one edition (the batch's fast path), with the
    kernels compiled."""
    jit.compiled()
    rng = random.Random(20261201)
    land = ["infantry", "artillery", "tank", "fighter", "bomber", "aa"]
    sea = ["submarine", "destroyer", "cruiser", "battleship", "carrier", "fighter"]
    battles = []
    for i in range(60):
        units = sea if i % 2 else land
        army = [rng.choice(units[:-1] if i % 2 == 0 else units) for _ in range(rng.randint(3, 6))]
        guard = [rng.choice(units) for _ in range(rng.randint(3, 6))]
        battles.append({"attacker": {u: army.count(u) for u in set(army)},
                        "defender": {u: guard.count(u) for u in set(guard)}, "sea": bool(i % 2)})
    frame = solve_many(battles, rules="1942-2e", method="exact")
    for i, battle in enumerate(battles):
        assert_row_matches(frame.iloc[i], expected_row(battle, rules="1942-2e"), f"battle {i}")


def test_a_battle_given_again_is_checked_and_compiled_once(monkeypatch):
    from battlecalc.compile import battle as battle_module
    from battlecalc.compile import sides

    asked, built = [], []
    ask, build = battle_module.build_side, sides._new_side
    monkeypatch.setattr(battle_module, "build_side", lambda spec: asked.append(spec) or ask(spec))
    monkeypatch.setattr(sides, "_new_side",
                        lambda spec, *state: built.append(spec) or build(spec, *state))
    battles = [{"attacker": {"infantry": 3, "tank": 1}, "defender": "3 inf"},
               {"attacker": "2 sub 1 dd", "defender": "2 dd", "sea": True},
               {"attacker": {"infantry": 3, "tank": 1}, "defender": "3 inf"},
               {"attacker": {"infantry": 3, "tank": True}, "defender": "3 inf"},
               {"attacker": "2 sub 1 dd", "defender": "2 dd", "sea": True, "method": "mc",
                "trials": 1000, "seed": 4},
               {"attacker": "2 sub 1 dd", "defender": "2 dd", "sea": True, "method": "mc",
                "trials": 1000, "seed": 4},
               {"attacker": "3 inf 2 bmb", "defender": "3 inf", "attacker_tech": "heavy_bombers"},
               {"attacker": "3 inf 2 bmb", "defender": "3 inf", "attacker_tech": "heavy_bombers"},
               {"attacker": "3 inf 1 tank", "defender": "3 inf 1 art"}]
    with pytest.raises(BattleInputError, match="^battle 3: attacker count of tank must be"):
        solve_many(battles, rules="1942-2e")  # (True is no count, even if 1 == True)
    del battles[3]
    api.forget_compiled()
    asked.clear()
    built.clear()
    frame = solve_many(battles, rules="1942-2e")
    # each side of a set of options asked for once: the first battle's two sides, the sea
    # battle's two, the Monte Carlo battle's two (other options: asked again), the battle
    # with techs' two, the last battle's defender (its attacker the first battle's); a battle
    # given again asks for nothing; and each distinct side built once (the Monte Carlo
    # battle's found in the tables kept, and the battle with techs' defender, 3 inf, the first
    # battle's)
    assert len(asked) == 2 + 2 + 2 + 2 + 1
    assert len(built) == len(set(built)) == 2 + 2 + 1 + 1
    for i, battle in enumerate(battles):
        want = simulate(**battle, rules="1942-2e").flat_row()
        assert_row_matches(frame.iloc[i], want, f"battle {i}")


def test_per_battle_options_win_over_the_common_ones():
    frame = solve_many([{"attacker": "3 inf", "defender": "3 inf"},
                        {"attacker": "3 inf", "defender": "3 inf", "retreat_after": 1}],
                       rules="1942-2e", method="exact", retreat_after=2)
    assert list(frame["retreat_after"]) == [2, 1]
    for i, after in enumerate((2, 1)):
        want = expected_row({"attacker": "3 inf", "defender": "3 inf"}, rules="1942-2e",
                            retreat_after=after)
        assert_row_matches(frame.iloc[i], want, f"battle {i}")


def test_columns_are_typed_as_sweeps_table():
    """Whole numbers stay whole (nullable where some rows have none), flags are flags."""
    frame = solve_many([{"attacker": "3 inf", "defender": "3 inf"},
                        {"attacker": "3 inf", "defender": "3 inf", "retreat_after": 2},
                        {"rules": "formula", "attacker": "3 army", "defender": "2 army"}],
                       rules="1942-2e", method="exact")
    assert str(frame["retreat_after"].dtype) == "Int64"
    assert frame["retreat_after"].isna().tolist() == [True, False, True]
    assert frame["retreat_after"][1] == 2
    assert str(frame["attacker_ipc_loss_percentiles.p50"].dtype) == "Int64"
    assert frame["attacker_win"].dtype == np.float64
    assert str(frame["sea"].dtype) == "boolean"


def test_dataframe_input_reads_cells_as_sweep_does():
    table = pd.DataFrame([
        {"label": "a", "rules": "revised", "attacker": "1 inf", "defender": "1 inf",
         "sea": "", "retreat_after": "", "method": "exact"},
        {"label": "b", "rules": "1942-2e", "attacker": "1 sub 1 dd", "defender": "1 dd",
         "sea": "TRUE", "retreat_after": "2", "method": ""},
        {"label": "c", "rules": "1942-2e", "attacker": "3 inf", "defender": "2 inf",
         "sea": "no", "retreat_after": "1.0", "method": "exact"},
    ])
    frame = solve_many(table)
    typed = [{"rules": "revised", "attacker": "1 inf", "defender": "1 inf", "method": "exact"},
             {"rules": "1942-2e", "attacker": "1 sub 1 dd", "defender": "1 dd", "sea": True,
              "retreat_after": 2, "method": "auto"},
             {"rules": "1942-2e", "attacker": "3 inf", "defender": "2 inf", "sea": False,
              "retreat_after": 1, "method": "exact"}]
    assert "label" not in frame.columns
    for i, battle in enumerate(typed):
        assert_row_matches(frame.iloc[i], simulate(**battle).flat_row(), f"row {i}")
    assert frame.drop(columns="elapsed_s").equals(solve_many(typed).drop(columns="elapsed_s"))


def test_same_answer_at_one_and_two_threads():
    battles = [dict(b) for b in MIXED[:ON_THEIR_OWN.start]
               if b["rules"] != "revised" or "landing" not in b]
    try:
        battlecalc.set_threads(1)
        one = solve_many(battles, method="exact")
        battlecalc.set_threads(2)
        two = solve_many(battles, method="exact")
    finally:
        battlecalc.set_threads(None)
    pd.testing.assert_frame_equal(one.drop(columns="elapsed_s"), two.drop(columns="elapsed_s"),
                                  check_exact=True)


@pytest.mark.parametrize(("battles", "options", "message"), [
    ([{"attacker": "2 inf", "defender": "2 inf"},
      {"attacker": "2 inf", "defender": "2 inf", "keep_land": "x"}], {},
     "battle 1: keep_land must be a whole number, got 'x'"),
    ([{"atacker": "2 inf", "defender": "2 inf"}], {},
     "battle 0: 'atacker' is not an option of simulate"),
    ([{"attacker": "2 inf", "defender": "2 infanty"}], {}, "battle 0: "),
    ([{"attacker": "2 inf", "defender": "2 inf", "waves": ["3 zeppelin"]}], {},
     "battle 0: unknown unit 'zeppelin'"),
    ([{"attacker": "2 inf", "defender": "2 inf", "counterattack": "2 inf", "sea": True}], {},
     "battle 0: a counter-attack retakes a territory"),
    ([{"attacker": "2 inf", "defender": "2 inf"}], {"keep_land": -1},
     "battle 0: keep_land must be 0 or more, got -1"),
    ([{"attacker": "2 inf", "defender": "2 inf"}], {"retreat_aftr": 2},
     "'retreat_aftr' is not an option of simulate"),
    ([{"attacker": "2 inf", "defender": "2 inf"}], {"progress": print},
     "progress is not an option of solve_many"),
    ([{"attacker": "2 inf", "defender": "1 inf"}, "3 inf"], {},
     "battle 1: a battle must be a {keyword: value} mapping, got '3 inf'"),
    ("3 inf", {}, "battles must be a list of {keyword: value} battles or a DataFrame"),
    # (2,001 x 2,001 states: past the dense table, and a land battle takes no compact one; its
    # sides cost half a second to build)
    pytest.param([{"attacker": "1000 inf 1000 art", "defender": "1000 inf 1000 art",
                   "method": "exact"}], {}, "battle 0: battle too large",
                 marks=pytest.mark.slow(reason="builds two sides of 2,000 units")),
])
def test_bad_input_names_the_battle_and_the_option(battles, options, message):
    with pytest.raises(BattleInputError) as caught:
        solve_many(battles, rules="1942-2e", **options)
    assert str(caught.value).startswith(message), str(caught.value)


def test_every_battle_is_checked_before_any_is_solved(monkeypatch):
    from battlecalc import batch

    solved = []
    monkeypatch.setattr(batch, "_one", lambda *args: solved.append(args))
    monkeypatch.setattr(batch, "_solve_batch", lambda *args: solved.append(args))
    with pytest.raises(BattleInputError, match="^battle 2: "):
        solve_many([{"attacker": "3 inf", "defender": "3 inf", "method": "mc", "seed": 1},
                    {"attacker": "3 inf", "defender": "3 inf"},
                    {"attacker": "3 inf", "defender": "3 inf", "dice": "loaded"}],
                   rules="1942-2e")
    assert solved == []


def test_bad_cells_of_a_dataframe_name_the_row():
    table = pd.DataFrame([{"rules": "revised", "attacker": "1 inf", "defender": "1 inf",
                           "sea": ""},
                          {"rules": "revised", "attacker": "1 inf", "defender": "1 inf",
                           "sea": "perhaps"}])
    with pytest.raises(BattleInputError, match=r"^battle 1: sea must be true or false"):
        solve_many(table)
    with pytest.raises(BattleInputError, match="SIDE.UNIT"):
        solve_many(pd.DataFrame([{"rules": "revised", "attacker.infantry": 2,
                                  "defender": "1 inf"}]))


def test_empty_batch():
    assert solve_many([]).empty


def test_sweep_rows_equal_simulate():
    """sweep solves its chunks through the batch: every row as simulate gives it, the bad
    rows with simulate's message."""
    typed = [{"rules": "revised", "attacker": "3 inf 1 art", "defender": "3 inf"},
             {"rules": "1942-2e", "attacker": "2 sub 1 dd", "defender": "2 dd", "sea": True},
             {"rules": "1942-2e", "attacker": "2 inf", "defender": "2 infanty"},
             {"rules": "1942-2e", "attacker": "3 inf 1 ftr", "defender": "3 inf 1 aa"}]
    table = pd.DataFrame([{**b, "sea": "yes" if b.get("sea") else ""} for b in typed])
    out = battlecalc.sweep(table, vary="trials=1e4|1e5|1e6", workers=1, seed=1)
    assert len(out) == 12
    for i in range(12):
        row = out.iloc[i]
        battle = {**typed[i // 3], "trials": (10_000, 100_000, 1_000_000)[i % 3],
                  "seed": battlecalc.sweeper.derived_seed(1, i)}
        if i // 3 == 2:
            with pytest.raises(BattleInputError) as caught:
                simulate(**battle)
            assert row["error"] == str(caught.value)
            continue
        assert row["error"] is None
        want = simulate(**battle).flat_row()
        assert_row_matches(row[list(want)], want, f"sweep row {i}")


def test_cli_sweep_unchanged(tmp_path):
    source = tmp_path / "battles.csv"
    source.write_text("rules,attacker,defender,sea\nrevised,1 inf,1 inf,\n"
                      "1942-2e,1 sub 1 dd,1 dd,yes\n")
    result = invoke("sweep", str(source), "-o", str(tmp_path / "out.csv"),
                    "--workers", "1")
    assert result.exit_code == 0, result.output
    out = pd.read_csv(tmp_path / "out.csv")
    want = [simulate(rules="revised", attacker="1 inf", defender="1 inf"),
            simulate(rules="1942-2e", attacker="1 sub 1 dd", defender="1 dd", sea=True)]
    for i, result in enumerate(want):
        for key in ("attacker_win", "defender_win", "draw", "tuv_swing", "mean_rounds"):
            assert math.isclose(out[key][i], getattr(result, key), abs_tol=TOLERANCE)
    assert math.isclose(out["attacker_win"][0], 0.25, abs_tol=TOLERANCE)


def test_the_sides_of_a_batch_are_kept_within_the_tables_budget():
    from battlecalc.compile import TABLES

    api.forget_compiled()
    solve_many([{"attacker": f"{n} inf", "defender": "2 inf"} for n in range(1, 8)],
               rules="1942-2e", method="exact")
    sides = [key for key in TABLES._tables if key[0] == "side"]
    assert len(sides) == 7 + 1  # (each attacker, and the defender)
    assert TABLES.nbytes == sum(size for _, size in TABLES._tables.values())
    assert 0 < TABLES.nbytes <= TABLES.max_bytes


@pytest.mark.fresh("plain_kernels_give_answers")
def test_plain_python_kernels_give_the_same_rows(fresh):
    """Under BATTLECALC_PLAIN_KERNELS=1 the batch loop runs as plain Python (numba never
    imported: a fresh interpreter, tests/fresh_checks.py), with the answers of the compiled
    one."""
    assert not fresh["numba"]
    plain = fresh["solve_many"]
    jit.compiled()
    compiled = solve_many(MIXED[:battles.SOLVE_MANY_BATCHED], method="exact")
    assert len(plain) == battles.SOLVE_MANY_BATCHED
    for i, row in enumerate(plain):
        want = compiled.iloc[i][["attacker_win", "defender_win", "tuv_swing", "mean_rounds"]]
        assert np.allclose(row, want.astype(float), rtol=0, atol=TOLERANCE), (i, row, want)


def _form_cases() -> list[dict]:
    """Random battles of the lane's kind (one edition, no techs, landing or retreat) with the
    options a form checks once (orders of losses, AA last, submerging, low luck), some armies
    bad (unknown units, bool or negative counts, units of the wrong domain, AA attacking, no
    units), retreat policies (their thresholds clamped to the armies' sizes), and some
    battles a form cannot stand for (retreat_below, techs, a later round)."""
    rng = random.Random(2026_12_01)
    land = ["infantry", "artillery", "tank", "fighter", "bomber", "aa", "inf", "ftr"]
    sea = ["submarine", "destroyer", "cruiser", "battleship", "carrier", "fighter",
           "transport"]
    bad = [{"dragon": 1}, {"infantry": True}, {"infantry": -1}, {"infantry": 1.0}, {},
           "3 inf 1 zeppelin", {"battleship": 1}, {"infantry": 2, "submarine": 1}]
    cases = []
    for i in range(160):
        is_sea = i % 2 == 1
        units = sea if is_sea else land
        armies = []
        for _ in range(2):
            picked = [rng.choice(units) for _ in range(rng.randint(1, 5))]
            army = {u: picked.count(u) for u in dict.fromkeys(picked)}
            armies.append(army if rng.random() < 0.7 else
                          " ".join(f"{c} {u}" for u, c in army.items()))
        if rng.random() < 0.15:
            armies[rng.randrange(2)] = rng.choice(bad)
        battle = {"rules": rng.choice(["1942-2e", "revised", "1940-2e"]), "sea": is_sea,
                  "attacker": armies[0], "defender": armies[1]}
        extra = rng.random()
        if extra < 0.1:
            battle["attacker_ool"] = "fighter,infantry"
        elif extra < 0.2:
            battle["aa_last"] = True
        elif extra < 0.3:
            battle["defender_submerge"] = "first-chance"
        elif extra < 0.4:
            battle["dice"] = "low_luck"
        elif extra < 0.45:
            battle["retreat_after"] = 2
        elif extra < 0.5:
            battle["attacker_tech"] = "jets"
        elif extra < 0.55:
            battle["retreat_when_left"] = rng.choice([0, 2, 100])  # (100: clamped)
        elif extra < 0.6:
            battle["strafe"] = rng.choice([1, 100])
        elif extra < 0.65:
            battle["retreat_when_only_air"] = True  # (sea: refused)
        elif extra < 0.68:
            battle["retreat_below"] = 0.4
        elif extra < 0.73:
            battle["start_round"] = 2  # (a battle from where it stands: no form)
        cases.append(battle)
    return cases


def test_one_form_makes_each_battle_a_fresh_one_makes():
    """A lane's spec.BattleForm (simulate's checks of the options, once; each army read once
    and kept) makes, battle after battle, the Battle simulate_spec makes afresh, field for
    field, and refuses what it refuses with its message."""
    import warnings

    from battlecalc import batch
    from battlecalc.spec import simulate_form, simulate_spec

    forms: dict = {}
    formed = refused = 0
    for battle in _form_cases() * 2:
        args = batch._battle_arguments(battle)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                want = simulate_spec(args)[0]
            except BattleInputError as exc:
                want = str(exc)
            key = batch._form_key(battle)
            try:
                if key not in forms:
                    forms[key] = simulate_form({**args, "seed": None})[0]
                got = forms[key].battle(battle["attacker"], battle["defender"])
            except BattleInputError as exc:
                got = str(exc)
        if isinstance(want, str):
            assert got == want, battle
            refused += 1
            continue
        formed += 1
        assert got == want and vars(got) == vars(want), battle
        assert list(got.attacker) == list(want.attacker), battle  # (the edition's order)
        assert list(got.defender) == list(want.defender), battle
    assert formed > 120 and refused > 20  # (the cases reach both)


@pytest.mark.parametrize("battle, first", [
    # each battle has two faults: it is refused for the one make_battle meets first (its
    # order: the edition, dice and technologies; the armies; the landing and bombardment; the
    # start; the armies' units (attacker, defender, then what the attacker cannot attack
    # with); submerging; keep_land; aa_last; the orders of losses; the retreat; reactions;
    # the decisions), however the form checked the options before the armies
    (dict(attacker="3 zeppelin", defender="2 inf", landing="1 dragon"), "zeppelin"),
    (dict(attacker="3 inf", defender="2 dragon", start_round=0), "dragon"),
    (dict(attacker="3 inf", defender="2 inf", landing="2 bb", start_round=0), "landing"),
    (dict(attacker="3 inf", defender="1 bb", start_round=0), "start_round"),
    (dict(attacker="3 inf", defender="1 bb", attacker_submerge="first-chance"), "sea unit"),
    (dict(attacker="1 aa", defender="2 inf", attacker_submerge="first-chance"),
     "cannot attack"),
    (dict(attacker="1 aa", defender="1 bb"), "sea unit"),
    (dict(attacker="2 ftr", defender="2 inf", keep_land=1, aa_last="yes"), "keep_land 1"),
    (dict(attacker="2 inf", defender="2 inf", keep_land=-1, aa_last="yes"), "keep_land must"),
    (dict(attacker="2 ftr", defender="2 inf", keep_land=1, retreat_after=0), "keep_land 1"),
    (dict(attacker="2 inf", defender="2 inf", aa_last="yes", attacker_ool="dragon"),
     "aa_last"),
    (dict(attacker="2 inf", defender="2 inf", attacker_ool="dragon", retreat_after=0),
     "dragon"),
    (dict(attacker="2 inf", defender="2 inf", retreat_after=0, optimize="win"),
     "retreat_after"),
    (dict(attacker="2 inf", defender="2 inf", optimize="win"), "optimize must come"),
    (dict(attacker="1 sub", defender="1 dd", sea=True, attacker_submerge="optimal",
          retreat_after=1, optimize="takes"), "optimal submerging is solved"),
])
def test_a_battle_with_two_faults_is_refused_for_the_first(battle, first):
    with pytest.raises(BattleInputError, match=first):
        simulate(rules="1942-2e", **battle)
    with pytest.raises(BattleInputError, match=first):
        solve_many([battle], rules="1942-2e")


def test_a_side_cache_compiles_what_compile_battle_compiles():
    """compile_battle with a form's SideCache (each distinct army's sides worked out once,
    found by its dict) gives every table compile_battle gives alone, retreat tables too, for
    battles of one form in any order."""
    import warnings

    from battlecalc import batch
    from battlecalc.compile import SideCache, compile_battle
    from battlecalc.spec import simulate_spec

    kept: dict = {}
    seen = retreats = 0
    for battle in _form_cases() * 2:
        args = batch._battle_arguments(battle)
        if "start_round" in battle:  # (compile_battle alone: solver.start.with_start)
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                checked = simulate_spec(args)[0]
            except BattleInputError:
                continue
        key = (battle["rules"], battle["sea"], *sorted(
            (k, str(v)) for k, v in battle.items() if k not in batch.ARMIES))
        got = compile_battle(checked, kept.setdefault(key, SideCache()))
        want = compile_battle(checked)
        seen += 1
        for name in ("attacker", "defender"):
            have, expect = getattr(got, name), getattr(want, name)
            for field in ("blocks", "states", "rows", "pmf", "cdf", "start", "survivors",
                          "ipc_lost"):
                assert np.array_equal(getattr(have, field), getattr(expect, field)), (
                    battle, name, field)
            assert have.unit_names == expect.unit_names and have.split == expect.split
        assert np.array_equal(got.rules, want.rules), battle
        assert np.array_equal(got.bombardment.pmf, want.bombardment.pmf)
        assert got.sea == want.sea and (got.retreat is None) == (want.retreat is None)
        retreats += got.retreat is not None
        have, expect = got.retreat_tables(), want.retreat_tables()
        for field in ("policy", "win_value", "remainder"):
            assert np.array_equal(getattr(have, field), getattr(expect, field)), battle
        assert have.below == expect.below and got.has_partial_retreat == want.has_partial_retreat
    assert seen > 100 and retreats > 20


def test_bad_armies_of_a_lane_give_simulates_message():
    """Bad armies among battles of one form: each row's error is simulate's own message."""
    battles = [{"attacker": {"infantry": 2}, "defender": {"infantry": 2}},
               {"attacker": {"infantry": True}, "defender": {"infantry": 2}},
               {"attacker": {"dragon": 1}, "defender": {"infantry": 2}},
               {"attacker": {"infantry": 1}, "defender": {"battleship": 1}},
               {"attacker": {"aa": 1}, "defender": {"infantry": 1}},
               {"attacker": {}, "defender": {"infantry": 1}},
               {"attacker": {"infantry": -2, "tank": 1}, "defender": {"infantry": 1}},
               {"attacker": {"infantry": 2}, "defender": {"infantry": 2}}]
    rows = battlecalc.batch.solve_rows([{**b, "rules": "1942-2e", "method": "exact"}
                                        for b in battles])
    for battle, (row, error) in zip(battles, rows, strict=True):
        try:
            want = simulate(**battle, rules="1942-2e", method="exact").flat_row()
        except BattleInputError as exc:
            assert row is None and error == str(exc), battle
        else:
            assert error is None, battle
            assert_row_matches(pd.Series(row), want, str(battle))


def test_sides_of_the_lane_equal_the_reference_builder():
    """Every distinct side of the random lane battles, built with every cache empty, equals
    tests/references/side_reference.py's slow builder field for field (casualty walks of
    two-hit ships, subs and aircraft as categories, submerging, AA outcomes, five
    editions)."""
    import warnings

    from side_reference import reference_build_side

    from battlecalc import api, batch
    from battlecalc.compile import SideCache
    from battlecalc.compile import battle as battle_module
    from battlecalc.compile import sides as compile_module
    from battlecalc.kernels.layout import R_HI, R_LO, S_ROW_A, S_ROW_N, S_ROW_S, S_SUBS
    from battlecalc.spec import simulate_spec

    specs: dict = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(battle_module, "build_side",
                      lambda spec: specs.setdefault(spec, compile_module._new_side(spec)))
        for battle in _form_cases():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    checked = simulate_spec(batch._battle_arguments(battle))[0]
                except BattleInputError:
                    continue
            battle_module.compile_battle(checked, SideCache())
    assert len(specs) > 150 and any(s.submerge for s in specs)
    assert any(all(s.split) for s in specs) and any(len(s.blocks) > 1 for s in specs)
    api.forget_compiled()
    for spec in specs:
        side, want = compile_module._new_side(spec), reference_build_side(spec)
        for name in ("blocks", "states", "rows", "pmf", "cdf", "start", "survivors",
                     "ipc_lost"):
            got = getattr(side, name)
            assert got.dtype == getattr(want, name).dtype and got.flags.c_contiguous, name
            assert got.flags.writeable and np.array_equal(got, getattr(want, name)), name
        assert side.unit_names == want.unit_names and side.split == want.split
        # (its mean hit combinations, for seconds_estimate: numpy's mean of the products)
        widths = (want.rows[:, R_HI] - want.rows[:, R_LO] + 1).astype(np.float64)
        st = want.states
        mean = float((np.where(st[:, S_SUBS] > 0, widths[st[:, S_ROW_S]], 1.0)
                      * widths[st[:, S_ROW_A]] * widths[st[:, S_ROW_N]]).mean())
        assert side.mean_hit_combinations == mean


def test_battles_of_one_form_with_seeds_of_their_own():
    """A sweep gives each battle a seed: battles that differ in their seeds (and armies) share
    a lane, and each is solved as simulate solves it with its seed (auto: Monte Carlo for the
    larger ones at 10 trials, exact for the others); a bad seed is simulate's error."""
    battles = [{"attacker": f"{2 + i % 5} inf 1 tank", "defender": f"{1 + i % 4} inf",
                "seed": 1000 + i} for i in range(12)]
    battles[5]["seed"] = -1
    rows = battlecalc.batch.solve_rows([{**b, "rules": "1942-2e", "method": "auto",
                                         "trials": 10} for b in battles])
    methods = set()
    for battle, (row, error) in zip(battles, rows, strict=True):
        try:
            want = simulate(**battle, rules="1942-2e", method="auto", trials=10).flat_row()
        except BattleInputError as exc:
            assert row is None and error == str(exc) and battle["seed"] == -1
            continue
        assert error is None, battle
        methods.add(want["method"])
        assert_row_matches(pd.Series(row), want, str(battle))
    assert methods == {"exact", "mc"}


def test_lane_battles_equal_simulate_row_for_row():
    """The random lane battles (orders of losses, AA last, submerging, low luck, retreat
    policies, bad armies, battles of no lane) through solve_many's runner: each row simulate's
    row, each error simulate's message."""
    import warnings

    cases = [{"method": "exact", **b} for b in _form_cases()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = battlecalc.batch.solve_rows(cases)
        solved = retreats = 0
        for battle, (row, error) in zip(cases, rows, strict=True):
            try:
                want = simulate(**battle).flat_row()
            except BattleInputError as exc:
                assert row is None and error == str(exc), battle
                continue
            assert error is None, (battle, error)
            assert_row_matches(pd.Series(row), want, str(battle))
            solved += 1
            retreats += any(k.startswith("retreat") or k == "strafe" for k in battle)
    assert solved > 60 and retreats > 10


def test_the_table_is_the_concat_of_the_parts():
    """solve_many's table (batch._frame, laid out column by column) equals pandas' concat of
    one frame per part (the batch of each edition, each battle solved on its own) with
    sweep's typing: every value and dtype, on the mixed batch (editions with other units,
    formula columns, Monte Carlo rows, gaps)."""
    import copy

    from battlecalc import batch

    def reference(parts):
        parts.sort(key=lambda part: part[0][0])
        columns = list(dict.fromkeys(name for _, part in parts for name in part))
        frames = [pd.DataFrame({name: values if isinstance(values, np.ndarray)
                                and values.dtype == np.float64
                                else np.array(values, dtype=object)
                                for name, values in part.items()}, index=positions)
                  for positions, part in parts]
        frame = pd.concat(frames).reindex(columns=columns).sort_index().reset_index(drop=True)
        return pd.DataFrame({name: batch.typed_column(frame[name])
                             if frame[name].dtype == object else frame[name]
                             for name in columns})

    parts, _, timing = batch._run(MIXED, {"method": "exact"}, strict=True)
    assert len(parts) > 5
    got = batch._frame(copy.deepcopy(parts), timing)
    pd.testing.assert_frame_equal(got, reference(copy.deepcopy(parts)), check_exact=True)


def test_battles_that_start_where_they_stand_are_solved_as_simulate_solves_them():
    """The start arguments (a later round, a position inside a round, hits rolled, casualties
    waiting) are part of a battle: solve_many's rows equal simulate's, the issue's round-2
    battle included (0.803492: no AAA fire after round 1).  Before, a lane's form left them
    out and solved each as a battle from its start (0.599643)."""
    battles = [
        {"attacker": "3 fighter", "defender": "2 infantry 1 aa", "start_round": 2},
        {"attacker": "3 fighter 1 inf", "defender": "2 infantry 1 aa", "start_round": 2},
        {"attacker": "3 fighter", "defender": "2 infantry 1 aa"},
        {"attacker": "3 fighter", "defender": "2 infantry 1 aa", "start_step": "defender_fire"},
        {"attacker": "2 inf 1 tank", "defender": "3 inf", "start_round": 2,
         "start_step": "general_casualties", "hits_on_attacker": 1, "hits_on_defender": 1},
        {"attacker": "2 inf 1 ftr", "defender": "2 inf 1 aa", "start_step": "bombard_fire",
         "attacker_waiting": {"fighter": 1}},
        {"attacker": "2 inf 1 tank", "defender": "3 inf", "start_round": 3},
    ]
    frame = solve_many(battles, rules="1942-2e", method="exact")
    for i, battle in enumerate(battles):
        assert_row_matches(frame.iloc[i], expected_row(battle, rules="1942-2e"), f"battle {i}")
    assert round(frame["attacker_win"][0], 6) == 0.803492
    assert round(frame["attacker_win"][3], 6) == 0.530378
    rows = battlecalc.batch.solve_rows([{**b, "rules": "1942-2e", "method": "exact"}
                                        for b in battles])  # (sweep's runner)
    assert [round(row["attacker_win"], 12) for row, _ in rows] == [
        round(v, 12) for v in frame["attacker_win"]]


def test_battles_that_decide_are_solved_as_simulate_solves_them():
    """An optimal retreat or optimal submerging (decisions solved: their table is built
    first) is solved as simulate solves it, never by the batch kernel, which has no such
    table: before, such a battle joined the batch (compiled: 0.427 where simulate gives 0.616;
    plain Python: an IndexError for every battle of the batch)."""
    battles = [
        {"attacker": "3 inf 1 tank 1 ftr", "defender": "4 inf", "retreat_policy": "optimal"},
        {"attacker": "3 inf 1 tank 1 ftr", "defender": "4 inf", "retreat_policy": "optimal",
         "optimize": "tuv"},
        {"attacker": "2 sub 1 dd", "defender": "2 dd 1 sub", "sea": True,
         "attacker_submerge": "optimal"},
        {"attacker": "3 inf 1 tank 1 ftr", "defender": "4 inf"},
    ]
    frame = solve_many(battles, rules="1942-2e", method="exact")
    for i, battle in enumerate(battles):
        assert_row_matches(frame.iloc[i], expected_row(battle, rules="1942-2e"), f"battle {i}")
    assert round(frame["attacker_win"][0], 3) == 0.616


def test_battles_with_the_defenders_reactions_are_solved_as_simulate_solves_them():
    """A sea battle with scramble or kamikaze is a battle for each choice of the defender
    (battlecalc.reactions): solve_many's row is simulate's, the scrambled fighters among the
    defenders.  Before, the batch solved it without them (1940 2E: attacker_win 0.596 where
    the defender scrambles and the attacker wins 0.006)."""
    battles = [
        {"attacker": {"cruiser": 1, "carrier": 2, "destroyer": 1},
         "defender": {"destroyer": 1, "carrier": 1, "submarine": 1},
         "scramble_from": {"fighter": 2}},
        {"attacker": {"cruiser": 1, "carrier": 2, "destroyer": 1},
         "defender": {"destroyer": 1, "carrier": 1, "submarine": 1}},
        {"attacker": "2 dd 1 cv", "defender": "1 dd 1 sub", "kamikaze": 2},
    ]
    frame = solve_many(battles, rules="1940-2e", sea=True, method="exact")
    for i, battle in enumerate(battles):
        assert_row_matches(frame.iloc[i], expected_row(battle, rules="1940-2e", sea=True),
                           f"battle {i}")
    assert frame["defender"][0].startswith("2 fighter")
    assert round(frame["attacker_win"][0], 3) == 0.006


def test_any_battle_is_solved_as_simulate_solves_it(full_size):
    """solve_rows (solve_many's and sweep's runner) gives every battle simulate's row, or
    simulate's error, over random battles of every kind and option: starts where they stand,
    decisions solved, the defender's reactions, amphibious assaults, technologies, retreats,
    low luck, the law of rounds, five editions (the batch takes the small exact ones, a lane's
    form the plain ones; the rest go one by one).  Three kinds of battle were once solved
    wrongly this way: a start, decisions, reactions.  (240 battles in the slow tier, the
    first 120 of them in the quick.)"""
    import warnings

    count = 240 if full_size else 120
    given = battles.any_battles(2026_12_02, count)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = battlecalc.batch.solve_rows(given)
        solved = 0
        for i, (battle, (row, error)) in enumerate(zip(given, rows, strict=True)):
            try:
                want = simulate(**battle).flat_row()
            except BattleInputError as exc:
                assert row is None and error == str(exc), (i, battle)
                continue
            assert error is None, (i, battle, error)
            assert_row_matches(pd.Series(row), want, f"battle {i}: {battle}")
            solved += 1
    assert count // 2 < solved < count  # (both kinds: solved and refused)
    for name in ("start_round", "retreat_policy", "scramble_from", "kamikaze", "landing",
                 "attacker_tech", "retreat_below", "rounds_distribution"):
        assert any(name in b for b in given), name


def _same_to_the_last_bit(got: dict, want: dict) -> bool:
    """Every column of simulate's row in the solve_many row, equal with == (floats by their
    bits: NaN equal to NaN), elapsed_s aside."""
    for key, value in want.items():
        if key == "elapsed_s":
            continue
        have = got[key]
        if isinstance(value, float) and isinstance(have, float):
            if value.hex() != have.hex() and not (math.isnan(value) and math.isnan(have)):
                return False
        elif have != value:
            return False
    return set(got) - {"elapsed_s"} == set(want) - {"elapsed_s"}


def _rows_differ(given: list[dict]) -> tuple[list[int], int]:
    """The battles of `given` whose solve_rows row is not simulate's flat row to the last bit
    (an error must be simulate's, word for word), and how many were solved."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = battlecalc.batch.solve_rows(given)
        differ, solved = [], 0
        for i, (battle, (row, error)) in enumerate(zip(given, rows, strict=True)):
            try:
                want = simulate(**battle).flat_row()
            except BattleInputError as exc:
                assert row is None and error == str(exc), (i, battle)
                continue
            solved += 1
            if not _same_to_the_last_bit(row, want):
                differ.append(i)
    return differ, solved


def test_rows_are_simulates_to_the_last_bit(full_size):
    """One path: every row solve_many's runner gives, of battles of every kind (the 240 random
    ones, whose batch once merged no blocks and added its means in another order) and of the
    exact battery (every fourth battle in the quick tier, all in the slow), is simulate's
    flat row to the last bit."""
    battery = battles.BATTERY if full_size else battles.BATTERY[::4]
    given = battles.any_battles(2026_12_02, 240) + [
        {**battles.kwargs_of(b), "method": "exact"} for b in battery]
    differ, _ = _rows_differ(given)
    assert not differ, differ


def test_air_loss_rows_are_simulates_to_the_last_bit():
    """--retreat-air-loss on random battles of every kind and option (battles.air_loss_battles:
    its table built before the solve, with retreat_below's or alone, exact or Monte Carlo):
    solve_many's row is simulate's to the last bit, and its refusals are simulate's."""
    given = battles.air_loss_battles(2026_12_04, 80)
    differ, solved = _rows_differ(given)
    assert not differ, differ
    assert solved > 40
    assert sum(1 for b in given if b.get("retreat_below") and b.get("method") == "exact") >= 2


# --- sequences of battles: waves and counter-attacks ----------------------------------------


def _chains(seed: int, n: int) -> list[dict]:
    """n random sequences of 1942 2E battles: a counter-attack on most, a second wave on some,
    AA guns, an order of losses, Monte Carlo with a seed on a few, and a sea battle in waves."""
    rng = random.Random(seed)

    def army(units, lo, hi):
        picked = {u: rng.randint(0, 2) for u in units}
        picked[units[0]] = rng.randint(lo, hi)
        return {u: c for u, c in picked.items() if c}

    out = []
    for i in range(n):
        battle = {"rules": "1942-2e", "method": "exact",
                  "attacker": army(["infantry", "artillery", "tank", "fighter"], 1, 6),
                  "defender": army(["infantry", "artillery", "tank", "aa"], 1, 5)}
        if i % 5:
            battle["counterattack"] = army(["infantry", "tank", "artillery"], 1, 5)
        if i % 3 == 0:
            battle["waves"] = [army(["infantry", "tank"], 1, 3)]
        if i % 7 == 0:
            battle.update(attacker_ool="fighter,infantry")
        if i % 11 == 0:
            battle.update(method="mc", trials=3000, seed=rng.randint(1, 99))
        out.append(battle)
    out.append({"rules": "1942-2e", "sea": True, "attacker": "2 sub 1 dd", "defender": "2 dd",
                "waves": ["1 dd 1 ca"], "method": "exact"})
    return out


def test_sequences_are_simulates_to_the_last_bit(full_size):
    """solve_many takes battles with waves and a counter-attack, each chained as simulate
    chains it (its battles solved together with every sequence's): each row simulate's
    WavesResult row, every number equal to the last bit.  (60 sequences in the slow tier, the
    first 30 of them in the quick.)"""
    count = 60 if full_size else 30
    given = _chains(2026_12_07, count)
    rows = battlecalc.batch.solve_rows(given)
    assert sum("counterattack" in b for b in given) > 40 * count // 60
    assert sum("waves" in b for b in given) > 15 * count // 60
    for i, (battle, (row, error)) in enumerate(zip(given, rows, strict=True)):
        assert error is None, (i, error)
        assert _same_to_the_last_bit(row, simulate(**battle).flat_row()), (i, battle)
    frame = solve_many(given[:5] + [{"rules": "1942-2e", "attacker": "3 inf", "defender": "2 inf"}])
    assert frame["holds"].notna().sum() == sum("counterattack" in b for b in given[:5])
    assert frame["wave1.sent"].isna().tolist() == [False] * 5 + [True]


def test_the_law_a_counter_attack_fights_is_the_occupiers():
    """A sequence's occupiers (the law of the attacker's forces holding the territory) sum to
    takes_territory, and the counter-attack on each of them, solved on its own, gives the
    sequence's holds: takes - sum of P(force) x P(the counter-attack takes it)."""
    battle = dict(rules="1942-2e", attacker="4 inf 1 art 1 tank 1 ftr", defender="4 inf 1 tank",
                  counterattack="3 inf 1 tank", method="exact")
    result = simulate(**battle)
    occupiers = result.occupiers
    assert math.isclose(sum(p for _, p in occupiers), result.takes_territory, abs_tol=1e-12)
    retaken = sum(p * simulate(rules="1942-2e", attacker="3 inf 1 tank", defender=force,
                               method="exact").takes_territory for force, p in occupiers)
    assert math.isclose(result.holds, result.takes_territory - retaken, abs_tol=1e-12)
    assert all("fighter" not in force for force, _ in occupiers)  # (aircraft have left)
    assert sum(p for _, p in result.defenders_left) <= 1 - result.takes_territory + 1e-12
