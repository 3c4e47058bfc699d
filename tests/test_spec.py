"""battlecalc.spec: every bad argument of simulate raises BattleInputError with a clear message
before anything runs; forms that mean the same give the same exact answer; edition files as
input."""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

import battlecalc
from battlecalc import rules as rules_module
from battlecalc.errors import BattleInputError, quoted
from battlecalc.rules import RulesFileError, list_editions, load_rules, load_rules_file
from battlecalc.spec import Retreat, make_battle

EXACT = {"rules": "revised", "attacker": "1 inf", "defender": "1 inf", "method": "exact"}
LONG = "x" * 500

BAD_ARGUMENTS = [
    ({"retreat_when_only_air": "no"},
     "retreat_when_only_air must be true or false (a bool), got 'no'"),
    ({"sea": "yes"}, "sea must be true or false (a bool), got 'yes'"),
    ({"rules": "1942-2e", "defender": "1 inf 1 aa", "aa_last": "yes"},
     "aa_last must be true or false (a bool), got 'yes'"),
    ({"rounds_distribution": "yes"},
     "rounds_distribution must be true or false (a bool), got 'yes'"),
    ({"rounds_distribution": 1}, "rounds_distribution must be true or false (a bool), got 1"),
    ({"keep_land": 1.5}, "keep_land must be a whole number, got 1.5"),
    ({"keep_land": "1"}, "keep_land must be a whole number, got '1'"),
    ({"keep_land": None}, "keep_land must be a whole number, got None"),
    ({"keep_land": True}, "keep_land must be a whole number, got True"),
    ({"keep_land": -1}, "keep_land must be 0 or more, got -1"),
    ({"keep_land": 2**70}, "keep_land 1180591620717411303424 is more than the attacker's 1 "
                           "land units"),
    ({"attacker_ool": 123},
     "attacker_ool must be an order of losses (text or a list of unit names), got 123"),
    ({"defender_ool": ["infantry", 3]},
     "defender_ool must be an order of losses (text or a list of unit names), got ['infantry', 3]"),
    ({"attacker_ool": "smartest"}, "order of losses 'smartest' is not a preset (cheapest, "
     "weakest, smart) nor a unit: unknown unit 'smartest' in revised"),
    ({"attacker_tech": 123}, "attacker_tech must be text or a list of technology names, got 123"),
    ({"defender_tech": ["jets", None]},
     "defender_tech must be text or a list of technology names, got ['jets', None]"),
    ({"attacker_tech": "lasers"}, "unknown technology 'lasers' for revised"),
    ({"rules": ["revised"]},
     "rules must be an edition id, a Ruleset or the path of an edition file, got ['revised']"),
    ({"rules": "bogus"}, "unknown edition 'bogus'; known editions: 1940-2e, 1942-2e, aa50, "
                         "classic, formula, revised"),
    ({"progress": 5}, "progress must be a function progress(done, total, ...) or None, got 5"),
    ({"method": None}, "method must be one of auto, exact, mc, got None"),
    ({"trials": 1.5}, "trials must be a whole number, got 1.5"),
    ({"trials": float("inf")}, "trials must be a whole number, got inf"),
    ({"trials": "1e6"}, "trials must be a whole number, got '1e6'"),
    ({"trials": 1e13}, "trials must be between 1 and 10,000,000,000, got 10000000000000"),
    ({"trials": True}, "trials must be a whole number, got True"),
    ({"seed": -1}, "seed must be between 0 and 2**63-1, got -1"),
    ({"seed": 2**63}, "seed must be between 0 and 2**63-1, got 9223372036854775808"),
    ({"seed": 1.0}, "seed must be a whole number, got 1.0"),
    ({"retreat_after": 0}, "retreat_after must be between 1 and 1,000, got 0"),
    ({"retreat_after": 2**70}, "retreat_after must be between 1 and 1,000, got "
                               "1180591620717411303424"),
    ({"retreat_after": 10**5000}, "retreat_after must be between 1 and 1,000, got a "
                                  "16610-bit integer"),
    ({"retreat_after": 1.0}, "retreat_after must be a whole number, got 1.0"),
    ({"retreat_when_left": -1}, "retreat_when_left must be 0 or more, got -1"),
    ({"strafe": "2"}, "strafe must be a whole number, got '2'"),
    ({"retreat_below": "0.5"}, "retreat_below must be a probability in (0, 1], got '0.5'"),
    ({"retreat_below": float("nan")}, "retreat_below must be a probability in (0, 1], got nan"),
    ({"retreat_below": True}, "retreat_below must be a probability in (0, 1], got True"),
    ({"retreat_below": 0.5, "retreat_after": 2},
     "retreat_below cannot be combined with retreat_after"),
    ({"sea": True, "attacker": "1 sub", "defender": "1 dd", "retreat_when_only_air": True},
     "retreat_when_only_air applies to land battles"),
    ({"sea": True, "attacker": "1 sub", "defender": "1 dd", "attacker_submerge": 3},
     "attacker_submerge must be one of never, when-only-subs-left, first-chance, optimal, "
     "got 3"),
    ({"attacker": {"inf": 5000}}, "attacker count of infantry must be between 0 and 1,000, "
                                  "got 5000"),
    ({"attacker": {"inf": 10**6}}, "attacker count of infantry must be between 0 and 1,000"),
    ({"defender": {"inf": 600, "infantry": 600}},
     "defender: 1200 infantry is more than the 1000 per unit type battlecalc accepts"),
    ({"attacker": {"inf": 1.0}}, "attacker count of infantry must be a whole number, got 1.0"),
    ({"attacker": {1: 2}}, "attacker: unit names must be text, got 1"),
    ({"attacker": 5}, "attacker must be army notation or a {unit: count} mapping, got 5"),
    ({"attacker": "1e3 inf"}, "cannot read army '1e3 inf': count '1e3' is not a whole number; "
                              "write counts in digits, e.g. '1000 infantry'"),
    ({"attacker": "2.5 tank"}, "count '2.5' is not a whole number"),
    ({"defender": "9" * 5000 + " inf"},
     "over 10**30 infantry is more than the 1000 per unit type battlecalc accepts"),
    ({"counter": 2}, "counter apply to formula-combat editions only, not to revised"),
    ({"rules": "formula", "attacker": "3 army", "defender": "2 army", "sea": True},
     "sea do not apply to the formula edition (formula combat)"),
    ({"rules": "formula", "attacker": "3 army", "defender": "2 army", "hatred": "yes"},
     "hatred must be true or false (a bool), got 'yes'"),
]


@pytest.mark.parametrize(("arguments", "message"), BAD_ARGUMENTS,
                         ids=[str(i) for i in range(len(BAD_ARGUMENTS))])
def test_bad_argument_raises_a_clear_error(arguments, message):
    with pytest.raises(BattleInputError) as info:
        battlecalc.simulate(**{**EXACT, **arguments})
    assert message in str(info.value)


def test_unknown_keyword_is_a_type_error():
    with pytest.raises(TypeError, match="unexpected keyword arguments: \\['colour'\\]"):
        battlecalc.simulate(**EXACT, colour="red")


def test_bad_progress_is_refused_before_the_battle_runs(monkeypatch):
    monkeypatch.setattr(battlecalc.api, "compile_battle",
                        lambda *a, **k: pytest.fail("compiled a battle with a bad argument"))
    with pytest.raises(BattleInputError, match="progress must be a function"):
        battlecalc.simulate(**{**EXACT, "method": "mc", "trials": 100}, progress=5)


@pytest.mark.parametrize("where", ["attacker", "attacker_ool", "rules"])
def test_messages_quote_at_most_80_characters_of_the_input(where):
    with pytest.raises(BattleInputError) as info:
        battlecalc.simulate(**{**EXACT, where: LONG})
    message = str(info.value)
    assert repr("x" * 79 + "…") in message
    assert "x" * 80 not in message


def test_quoted_cuts_long_and_nested_values():
    assert quoted("abc") == "'abc'"
    assert quoted("y" * 100) == repr("y" * 79 + "…")
    assert quoted(-(10**100)) == "-a 333-bit integer"
    nested: list = []
    for _ in range(5000):
        nested = [nested]
    assert len(quoted(nested)) <= 81
    assert len(quoted(list(range(1000)))) <= 81


# --- accepted forms give the same exact answer as the canonical form ---------------------------

def _odds(**arguments) -> tuple:
    r = battlecalc.simulate(method="exact", **arguments)
    return (r.attacker_win, r.defender_win, r.draw, r.retreat, r.attacker_ipc_loss,
            r.defender_ipc_loss, r.mean_rounds)


LAND = {"rules": "1942-2e", "attacker": "2 inf 1 tank 1 ftr", "defender": "3 inf"}

SAME = [
    ({"attacker_ool": ["tank", "infantry"]}, {"attacker_ool": "tank,infantry"}),
    ({"attacker_ool": ("fighter",)}, {"attacker_ool": "fighter"}),
    ({"retreat_after": np.int64(1)}, {"retreat_after": 1}),
    ({"keep_land": np.int32(1)}, {"keep_land": 1}),
    ({"attacker_tech": ["jets"], "defender_tech": ("jets",)},
     {"attacker_tech": "jets", "defender_tech": "jets"}),
    ({"attacker": {"inf": np.int64(2), "tank": 1, "ftr": 1}}, {}),
    ({"retreat_when_only_air": np.bool_(True)}, {"retreat_when_only_air": True}),
    ({"retreat_below": np.float64(0.25)}, {"retreat_below": 0.25}),
    # thresholds above the armies' sizes mean the same as the sizes
    ({"retreat_when_left": 10**20}, {"retreat_when_left": 4}),
    ({"strafe": 2**63}, {"strafe": 3}),
    ({"rules": load_rules("1942-2e")}, {}),
]


@pytest.mark.parametrize(("given", "canonical"), SAME, ids=[str(i) for i in range(len(SAME))])
def test_accepted_forms_give_the_canonical_answer(given, canonical):
    assert _odds(**{**LAND, **given}) == _odds(**{**LAND, **canonical})


def test_huge_retreat_thresholds_are_clamped_and_reported_as_clamped():
    r = battlecalc.simulate(**LAND, method="exact", retreat_when_left=10**20, strafe=2**63)
    assert (r.to_dict()["retreat_when_left"], r.to_dict()["strafe"]) == (4, 3)
    # with every unit left the attacker retreats after round 1 whenever the battle goes on
    one_round = battlecalc.simulate(**LAND, method="exact", retreat_after=1)
    assert r.retreat == pytest.approx(one_round.retreat, abs=1e-15)


def test_integral_float_trials_are_taken_like_the_command_line():
    mc = {**LAND, "method": "mc", "seed": 3}
    a = battlecalc.simulate(**mc, trials=2e4)
    b = battlecalc.simulate(**mc, trials=20_000)
    assert a.trials == 20_000 and isinstance(a.trials, int)
    assert (a.attacker_win, a.tuv_swing) == (b.attacker_win, b.tuv_swing)


def test_make_battle_takes_the_same_forms():
    battle = make_battle(load_rules("1942-2e"), {"inf": 2}, "3 inf", attacker_ool=["infantry"],
                         retreat={"after": np.int64(2), "when_left": 10**9})
    assert battle.retreat == Retreat(after=2, when_left=2)
    assert battle.attacker_order.text == "infantry"
    assert make_battle("1942-2e", "2 inf", "1 inf", retreat=battle.retreat).retreat == \
        battle.retreat
    assert not make_battle("1942-2e", "1 inf", "1 inf").retreat
    with pytest.raises(BattleInputError, match="unknown retreat options: 'later'"):
        make_battle("1942-2e", "1 inf", "1 inf", retreat={"later": 1})


@pytest.mark.fresh("spec_loads_without_numba_or_pandas")
def test_the_spec_module_loads_without_numba_or_pandas(fresh):
    # (a fresh interpreter, tests/fresh_checks.py; numpy comes with orders -> dice)
    assert fresh == []


# --- edition files as input --------------------------------------------------------------------

def _revised_text() -> str:
    return (resources.files("battlecalc.rules") / "revised.toml").read_text(encoding="utf-8")


@pytest.fixture
def house_file(tmp_path) -> Path:
    """Revised with a 2-IPC infantry that attacks at 2, as an edition file elsewhere."""
    text = _revised_text().replace('id = "revised"', 'id = "house"')
    start = text.index("[units.infantry]")
    end = text.index("[units.", start + 1)
    block = text[start:end].replace("cost = 3", "cost = 2").replace("attack = 1", "attack = 2")
    path = tmp_path / "house.toml"
    path.write_text(text[:start] + block + text[end:], encoding="utf-8")
    return path


def test_simulate_takes_a_ruleset_or_an_edition_file(house_file):
    house = load_rules_file(house_file)
    assert house.units["infantry"].attack == 2
    expected = _odds(rules=house, attacker="1 inf", defender="1 inf")
    assert expected[0] == pytest.approx(2 / 6 * 4 / 6 / (1 - 4 / 6 * 4 / 6), abs=1e-12)
    assert _odds(rules=house_file, attacker="1 inf", defender="1 inf") == expected
    assert _odds(rules=str(house_file), attacker="1 inf", defender="1 inf") == expected
    assert battlecalc.simulate(rules=house_file, attacker="1 inf", defender="1 inf",
                               method="exact").rules == "house"
    assert make_battle(house_file, "1 inf", "1 inf").rules.id == "house"


def _broken(tmp_path, name: str, data: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


@pytest.mark.parametrize(("data", "message"), [
    (None, "no such file"),
    (b"id = '\xff'\n", "not UTF-8 text"),
    (b"id = = 3\n", "not valid TOML: Invalid value (at line 1, column 6)"),
    (b"a = " + b"[" * 100_000 + b"]" * 100_000, "not valid TOML: nested too deeply"),
])
def test_load_rules_file_errors_name_the_file(tmp_path, data, message):
    path = str(tmp_path / "edition.toml") if data is None else _broken(tmp_path, "edition.toml",
                                                                       data)
    with pytest.raises(RulesFileError) as info:
        load_rules_file(path)
    assert str(info.value) == f"{path}: {message}"
    with pytest.raises(RulesFileError, match="edition.toml"):
        battlecalc.simulate(rules=path, attacker="1 inf", defender="1 inf")


def test_rules_file_errors_name_the_file_and_the_key(house_file):
    house_file.write_text(house_file.read_text().replace("cost = 2\n", 'cost = "two"\n'))
    with pytest.raises(RulesFileError) as info:
        battlecalc.simulate(rules=house_file, attacker="1 inf", defender="1 inf")
    assert str(info.value) == (f"{house_file}: invalid rules file:\n  house.units.infantry.cost: "
                               "expected an integer 0..1000, got 'two'")


def test_a_broken_shipped_edition_does_not_break_listing(monkeypatch, tmp_path):
    files = rules_module._edition_files()
    files["broken"] = Path(_broken(tmp_path, "broken.toml", b"[units.x]\ncost = \n"))
    monkeypatch.setattr(rules_module, "_edition_files", lambda: files)
    assert list_editions() == ["1940-2e", "1942-2e", "aa50", "broken", "classic", "formula",
                               "revised"]
    assert load_rules("revised").id == "revised"
    with pytest.raises(RulesFileError, match=r"^broken\.toml: not valid TOML: .*line 2"):
        load_rules("broken")


def test_an_edition_id_wins_over_a_file_of_that_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "revised").write_text("not an edition")
    assert load_rules("revised").id == "revised"
    assert os.path.exists("revised")
