"""The table of options (battlecalc.options) drives every surface, and its one reader.

Each keyword of simulate is in the table once; each table option is a flag of `run`, each
battle option a flag of `plan` and a keyword of :func:`battlecalc.plan`, a column of a sweep
and a parameter of the web API; wrong types raise BattleInputError from every public
function; the page's "same numbers" command line runs as written.
"""

from __future__ import annotations

import inspect
import json
import shlex
import subprocess
from pathlib import Path

import battles
import helpers
import numpy as np
import pytest
from helpers import invoke

import battlecalc
from battlecalc import options, planner, spec, sweeper
from battlecalc.cli import cli
from battlecalc.errors import BattleInputError
from battlecalc.options import BY_NAME, OPTIONS, flag_message, read
from battlecalc.web import spec as web_spec

APP_JS = Path(battlecalc.__file__).parent / "web" / "static" / "app.js"
LAND = {"rules": "revised", "attacker": "3 inf 1 tank", "defender": "3 inf", "method": "exact"}


def _params(command: str) -> dict:
    return {p.name: p for p in cli.commands[command].params}


def _outcome(result) -> tuple:
    return (result.attacker_win, result.defender_win, result.draw, result.attacker_ipc_loss)


# ------------------------------------------------------------------ the table drives every surface

def test_every_simulate_keyword_is_in_the_table_once_with_its_default():
    signature = inspect.signature(battlecalc.simulate).parameters
    keywords = [n for n, p in signature.items() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    formula = [n for n, p in inspect.signature(spec.make_formula_spec).parameters.items()
               if p.kind is inspect.Parameter.KEYWORD_ONLY and n != "rules"]
    names = [o.name for o in OPTIONS]
    assert len(names) == len(set(names))
    assert set(names) == set(keywords) | set(formula)
    for name in keywords:
        assert BY_NAME[name].default == signature[name].default, name
    assert set(options.FORMULA_OPTIONS) == set(formula)
    for option in OPTIONS:
        assert option.kind in options.KINDS
        assert option.applies <= options.ALL_KINDS | {"waves"} and option.applies


def test_every_table_flag_is_an_option_of_run():
    params = _params("run")
    for option in OPTIONS:
        if option.flag is None:
            continue
        assert option.name in params, option.name
        assert option.flag in params[option.name].opts
        if option.short:
            assert option.short in params[option.name].opts


def test_every_battle_option_is_a_flag_of_plan_and_a_plan_keyword():
    params = _params("plan")
    keywords = set(inspect.signature(battlecalc.plan).parameters) | set(planner.PLAN_OPTIONS)
    battle = [o for o in OPTIONS if o.battle and o.applies & options.DICE_KINDS]
    assert {"dice", "landing", "bombard", "sea", "attacker_ool", "strafe"} <= {
        o.name for o in battle}
    for option in battle:
        assert option.name in keywords, option.name
        assert option.flag in params[option.name].opts, option.name
    assert "--rules-file" in params["rules_file"].opts


def test_the_other_surfaces_read_the_table():
    dice_only = {o.name: o.default for o in OPTIONS if o.dice_only}
    assert spec.DICE_ONLY == dice_only
    assert "keep_land" in dice_only and "counter" not in dice_only and "trials" not in dice_only
    assert set(web_spec.READERS) == {o.name for o in OPTIONS} - {"progress"}
    assert set(sweeper.OPTION_TYPES) == {o.name for o in OPTIONS} - {
        "progress", "waves", "counterattack"}
    own = {**web_spec.raid_parameters(), **web_spec.plan_parameters()}  # raid's, plan's
    for field in web_spec.OPTIONS:
        if field["name"] not in BY_NAME:
            assert field["name"] in own
            continue
        option = BY_NAME[field["name"]]
        assert field["label"] == option.label
        assert field["flag"] == option.flag
        assert set(option.choices) <= set(field.get("choices", option.choices))
    flags = web_spec.page_spec()["flags"]
    assert {k: v for k, v in flags.items() if k in BY_NAME} == {
        o.name: o.flag for o in OPTIONS if o.flag}


# ------------------------------------------------------------------ plan takes the battle options

def test_plan_with_low_luck_dice_solves_every_force_with_low_luck():
    args = {"rules": "revised", "defender": "2 inf", "pool": "4 inf 2 tank",
            "goal": "takes_territory>=0.8", "method": "exact"}
    low = battlecalc.plan(**args, dice="low_luck")
    standard = battlecalc.plan(**args)
    assert low.plans
    for p in low.plans:
        attacker = battlecalc.format_army(p.addition)
        expected = battlecalc.simulate(rules="revised", attacker=attacker, defender="2 inf",
                                       method="exact", dice="low_luck")
        assert _outcome(p.result) == pytest.approx(_outcome(expected), abs=1e-12)
        assert p.result.takes_territory >= 0.8
        plain = battlecalc.simulate(rules="revised", attacker=attacker, defender="2 inf",
                                    method="exact")
        assert abs(plain.attacker_win - expected.attacker_win) > 1e-3  # low luck was used
    assert [p.addition for p in low.plans] != [p.addition for p in standard.plans] or any(
        abs(a.result.attacker_win - b.result.attacker_win) > 1e-3
        for a, b in zip(low.plans, standard.plans, strict=False))
    # the pruned search finds what solving every force finds
    exhaustive = battlecalc.plan(**args, dice="low_luck", search="exhaustive")
    assert [(p.addition, p.cost) for p in low.plans] == [
        (p.addition, p.cost) for p in exhaustive.plans]


def test_plan_of_an_amphibious_assault_keeps_the_landing_and_the_bombardment():
    args = {"rules": "1942-2e", "defender": "3 inf", "pool": "4 inf 2 tank",
            "goal": "takes_territory>=0.8", "method": "exact"}
    result = battlecalc.plan(**args, landing="2 inf", bombard="1 bb")
    assert result.plans
    for p in result.plans:
        expected = battlecalc.simulate(
            rules="1942-2e", attacker=battlecalc.format_army(p.addition), defender="3 inf",
            landing="2 inf", bombard="1 bb", method="exact")
        assert _outcome(p.result) == pytest.approx(_outcome(expected), abs=1e-12)
    exhaustive = battlecalc.plan(**args, landing="2 inf", bombard="1 bb", search="exhaustive")
    assert [(p.addition, p.cost) for p in result.plans] == [
        (p.addition, p.cost) for p in exhaustive.plans]
    # a partial retreat (the landing stays) is not pruned on an unproven assumption
    goals = planner.parse_goals("takes_territory>=0.8")
    assert planner.why_not_monotone(goals, "attack", {"landing": "2 inf", "retreat_after": 1})
    assert planner.why_not_monotone(goals, "attack", {"landing": "2 inf"}) is None


def test_plan_command_takes_dice_landing_bombard_and_rules_file():
    rules_file = Path(battlecalc.__file__).parent / "rules" / "1942-2e.toml"
    args = ["plan", "--rules-file", str(rules_file), "-d", "3 inf", "--pool", "4 inf 2 tank",
            "--goal", "takes_territory>=0.8", "-m", "exact", "--dice", "low-luck",
            "--landing", "2 inf", "--bombard", "1 bb", "--format", "json"]
    run = invoke(*args)
    assert run.exit_code == 0, run.output
    expected = battlecalc.plan(rules="1942-2e", defender="3 inf", pool="4 inf 2 tank",
                               goal="takes_territory>=0.8", method="exact", dice="low_luck",
                               landing="2 inf", bombard="1 bb")
    data = json.loads(run.stdout)
    assert [p["addition"] for p in data["plans"]] == [
        battlecalc.format_army(p.addition) for p in expected.plans]
    assert [p["attacker_win"] for p in data["plans"]] == pytest.approx(
        [p.result.attacker_win for p in expected.plans], abs=1e-12)


def test_plan_refuses_a_defend_that_is_not_a_bool():
    with pytest.raises(BattleInputError, match="defend must be true or false"):
        battlecalc.plan(rules="revised", defender="2 inf", attacker="3 inf", pool="2 inf",
                        defend="no", method="exact")


# ------------------------------------------------------------------ wrong types, everywhere

BAD_BY_KIND = {
    "edition": [5, object()], "army": [5, [object()]], "armies": [5, [3]],
    "bool": ["no", 1.5, object()], "int": ["2", 1.5, True, object()],
    "trials": ["1e3", 1.5, True, object()], "float": ["0.5", True, object()],
    "choice": [3, object(), ["mc"]], "techs": [5, [1]], "order": [5, [1]],
    "exchanges": [1.5, True, object()], "callable": [5, "print"],
    "die_law": [5, [object()], "1/2"],
}
BASES = {"formula": {"rules": "formula", "attacker": "3 army", "defender": "2 army",
                     "method": "exact"},
         "sea": {"rules": "1942-2e", "attacker": "1 sub 1 dd", "defender": "1 dd",
                 "sea": True, "method": "exact"},
         "amphibious": {**LAND, "rules": "1942-2e", "landing": "1 inf"},
         "dice": LAND}


def _base(option) -> dict:
    for kind in ("formula", "sea", "amphibious"):
        if option.applies == {kind}:
            return BASES[kind]
    return BASES["dice"]


SIMULATE_CASES = [pytest.param(o.name, bad, id=f"{o.name}-{i}") for o in OPTIONS
                  for i, bad in enumerate(BAD_BY_KIND[o.kind])]


@pytest.mark.parametrize(("name", "bad"), SIMULATE_CASES)
def test_simulate_refuses_every_wrong_type_naming_the_keyword(name, bad):
    option = BY_NAME[name]
    kwargs = {**_base(option), name: bad}
    with pytest.raises(BattleInputError) as info:
        battlecalc.simulate(**kwargs)
    assert name in str(info.value) or (option.kind == "army" and "army" in str(info.value))


PLAN_BASE = {"rules": "revised", "defender": "2 inf", "pool": "2 inf 1 tank",
             "goal": "takes_territory>=0.5", "method": "exact"}
PLAN_CASES = [
    ("rules", 5), ("defender", 5), ("defender", {"inf": object()}), ("pool", [1]),
    ("pool", {"inf": "2"}), ("goal", 5), ("goal", [object()]), ("objective", 5),
    ("top", "3"), ("top", 2.0), ("defend", "no"), ("defend", 1), ("attacker", 5),
    ("max_cost", "10"), ("max_cost", float("nan")), ("max_cost", True), ("sea", "yes"),
    ("method", 3), ("trials", "1e3"), ("seed", "1"), ("seed", 1.5), ("search", 3),
    ("progress", "print"),
    *((o.name, bad) for o in OPTIONS if o.name in planner.PLAN_OPTIONS
      for bad in BAD_BY_KIND[o.kind][:2]),
]


@pytest.mark.parametrize(("name", "bad"), PLAN_CASES)
def test_plan_refuses_every_wrong_type(name, bad):
    with pytest.raises(BattleInputError):
        battlecalc.plan(**{**PLAN_BASE, name: bad})


RAID_BASE = {"rules": "revised", "attacker": "2 bmb", "target_value": 5, "method": "exact"}
RAID_CASES = [
    ("rules", 5), ("attacker", 5), ("attacker", {"bmb": 1.5}), ("defender", 5),
    ("target_value", "5"), ("target_value", 5.5), ("facility", 5), ("aa", "yes"),
    ("trials", "1e3"), ("seed", "1"), ("method", 3), ("attacker_tech", 5),
    ("defender_tech", [1]), ("attacker_ool", 5), ("dice", 3), ("progress", "print"),
]


@pytest.mark.parametrize(("name", "bad"), RAID_CASES)
def test_raid_refuses_every_wrong_type(name, bad):
    with pytest.raises(BattleInputError):
        battlecalc.raid(**{**RAID_BASE, name: bad})


SWEEP_ROWS = [{"rules": "revised", "attacker": "1 inf", "defender": "1 inf", "method": "exact"}]
SWEEP_CASES = [
    ("battles", 5), ("battles", b"x.csv"), ("vary", 5), ("vary", [object()]), ("seed", "1"),
    ("seed", 1234567890123456789.0), ("workers", "2"), ("workers", 2.5), ("workers", 0),
    ("chunk_size", "4"), ("chunk_size", 1.5), ("scheduler", 5), ("progress", "print"),
]


@pytest.mark.parametrize(("name", "bad"), SWEEP_CASES)
def test_sweep_refuses_every_wrong_type(name, bad):
    with pytest.raises(BattleInputError, match=name.replace("_", "_") if name != "seed"
                       else "sweep seed"):
        battlecalc.sweep(**{"battles": SWEEP_ROWS, "workers": 1, name: bad})


# ------------------------------------------------------------------ the one reader

@pytest.mark.parametrize(("name", "text", "value"), [
    ("keep_land", " 12 ", 12), ("keep_land", "+3", 3), ("keep_land", "2.0", 2),
    ("keep_land", np.int64(4), 4), ("keep_land", 3.0, 3), ("seed", "0", 0),
    ("trials", "1e5", 100_000), ("trials", "100_000", 100_000), ("trials", "1,000,000", 10**6),
    ("retreat_below", "0.25", 0.25), ("retreat_below", ".5", 0.5), ("retreat_below", "5e-1", 0.5),
    ("sea", "Yes", True), ("sea", "off", False), ("sea", "1.0", True), ("sea", 0, False),
    ("sea", np.bool_(True), True),
    ("dice", "low-luck", "low_luck"), ("dice", " low_luck ", "low_luck"),
    ("attacker_submerge", "when_only_subs_left", "when-only-subs-left"),
    ("exchanges", "3", 3), ("exchanges", "until_done", "until-done"),
    ("exchanges", "Until-Done", "until-done"),
    ("attacker", {"inf": 2}, {"inf": 2}), ("waves", "2 inf", ["2 inf"]),
    ("attacker_tech", ["jets"], ["jets"]),
    ("seed", "", None), ("seed", "  ", None), ("seed", None, None), ("seed", float("nan"), None),
])
def test_reader_reads_loose_values(name, text, value):
    read_value = read(name, text)
    assert read_value == value and type(read_value) is type(value)


@pytest.mark.parametrize(("name", "text"), [
    ("trials", "²"), ("seed", "¹²"), ("keep_land", "٣"), ("keep_land", "３"),
    ("exchanges", "²"), ("retreat_below", "0.５"), ("retreat_below", "1" * 400),
    ("retreat_below", "0." + "1" * 400), ("keep_land", "9" * 5000), ("trials", "1e400"),
    ("retreat_below", "nan"), ("retreat_below", "inf"), ("keep_land", "1.5"),
    ("keep_land", "1,000"), ("keep_land", "x"), ("keep_land", True), ("sea", "maybe"),
    ("sea", 2), ("dice", "loaded"), ("method", "MC2"), ("attacker", 5), ("attacker_tech", [1]),
])
def test_reader_refuses_naming_the_keyword(name, text):
    with pytest.raises(BattleInputError) as info:
        read(name, text)
    message = str(info.value)
    assert message.startswith(f"{name} must be ")
    assert len(message) < 200  # a huge input is quoted short


def test_library_cli_and_web_name_the_option_their_way():
    with pytest.raises(BattleInputError, match="^keep_land must be a whole number"):
        battlecalc.simulate(**LAND, keep_land="x")
    run = invoke("run", "--rules", "revised", "-a", "3 inf", "-d", "3 inf",
                 "--keep-land", "x")
    assert run.exit_code == 2
    assert run.stderr == "Error: --keep-land must be a whole number, got 'x'\n"
    with pytest.raises(web_spec.ParamError, match="^keep_land must be a whole number"):
        web_spec.parse_params({"keep_land": "x"})
    assert flag_message("retreat_below cannot be combined with retreat_after") == (
        "--retreat-below cannot be combined with --retreat-after")
    # one-word keywords are rewritten only where a message names them
    assert flag_message("the attacker has no units; trials must be 1 or more") == (
        "the attacker has no units; --trials must be 1 or more")


# ------------------------------------------------------------------ issue 16: 13, 14, 17

@pytest.mark.parametrize("args", [
    ["run", "--rules", "formula", "-a", "3 army", "-d", "2 army", "--exchanges", "²"],
    ["run", "--rules", "revised", "-a", "3 inf", "-d", "3 inf", "--trials", "²"],
    ["run", "--rules", "revised", "-a", "3 inf", "-d", "3 inf", "--seed", "²"],
    ["run", "--rules", "revised", "-a", "3 inf", "-d", "3 inf", "--keep-land", "²"],
    ["run", "--rules", "revised", "-a", "3 inf", "-d", "3 inf", "--retreat-below", "1" * 400],
    ["plan", "--rules", "revised", "-d", "2 inf", "--pool", "3 inf", "--max-cost", "nan"],
    ["plan", "--rules", "revised", "-d", "2 inf", "--pool", "3 inf", "--max-cost", "-1"],
])
def test_cli_refuses_unreadable_numbers_in_one_line(args):
    run = invoke(*args)
    assert run.exit_code == 2, run.output
    (line,) = run.stderr.splitlines()
    flag = next(a for a in args if a in ("--exchanges", "--trials", "--seed", "--keep-land",
                                         "--retreat-below", "--max-cost"))
    assert line.startswith(f"Error: {flag} must be "), line
    assert run.stdout == ""


def test_plan_without_rules_says_which_option_is_missing():
    run = invoke("plan", "-d", "2 inf", "--pool", "3 inf")
    assert run.exit_code == 2
    assert "None" not in run.stderr
    assert run.stderr.startswith("Error: Missing option '--rules'")


WEB_UNREADABLE = [("trials", "²"), ("seed", "²"), ("keep_land", "²"), ("exchanges", "²"),
                  ("retreat_below", "1" * 400), ("retreat_after", "١")]


@pytest.mark.parametrize(("name", "text"), WEB_UNREADABLE)
def test_web_parameters_with_unicode_or_huge_numbers_are_param_errors(name, text):
    with pytest.raises(web_spec.ParamError, match=f"^{name} must be "):
        web_spec.parse_params({"rules": "revised", name: text})


def test_the_server_answers_unreadable_numbers_with_400():
    pytest.importorskip("starlette")
    pytest.importorskip("uvicorn")
    from webserver import run_query, running_server

    battle = {"rules": "revised", "attacker": "3 inf", "defender": "2 inf"}
    formula = {"rules": "formula", "attacker": "3 army", "defender": "2 army"}
    with running_server() as base:
        for name, text in WEB_UNREADABLE:
            status, data = run_query(base, **(formula if name == "exchanges" else battle),
                                     **{name: text})
            assert status == 400, (name, data)
            assert data["error"].startswith(f"{name} must be "), data


# ------------------------------------------------------------------ the page's command line

NODE = helpers.NODE


def _page_function(name: str, call: str, data) -> str:
    """Function `name` of app.js, run by node as `call` on `data` (JSON on standard input)."""
    source = APP_JS.read_text()
    start = source.index(f"  function {name}(")
    end = source.index("\n  }\n", start) + len("\n  }\n")
    script = (source[start:end] + "\nconst data = JSON.parse(require('fs').readFileSync(0, "
              f"'utf8'));\nprocess.stdout.write({call});\n")
    out = subprocess.run([NODE, "-e", script], input=json.dumps(data), capture_output=True,
                         text=True, timeout=60, check=True)
    return out.stdout


def _page_command_line(params: list[tuple[str, str]]) -> str:
    """cliLine of app.js on the page's own spec data."""
    page = web_spec.page_spec()
    return _page_function("cliLine", "cliLine(new URLSearchParams(data[2]), data[0], data[1])",
                          [page["flags"], page["options"], params])


@pytest.mark.skipif(NODE is None, reason="needs node to run the page's script")
@pytest.mark.parametrize(("query", "shown"), [
    ({"keep_land": "x"}, "\"attacker keeps last N land units\" must be a whole number, got 'x'"),
    ({"counter": "²"}, "\"counter points\" must be a whole number, got '²'"),
    ({"attacker_tech": 5}, "\"attacker\" (Technologies) must be text or a list of technology "
                           "names, got 5"),
])
def test_the_page_names_options_by_their_labels(query, shown):
    with pytest.raises(web_spec.ParamError) as info:
        web_spec.parse_params(query)
    page = web_spec.page_spec()
    assert _page_function("pageMessage", "pageMessage(data[0], data[1])",
                          [str(info.value), page["options"]]) == shown


PAGE_REQUESTS = [
    [("rules", "1942-2e"), ("attacker", "3 infantry, 1 tank"), ("defender", "3 infantry"),
     ("method", "exact"), ("dice", "low_luck"), ("aa_last", "1"), ("keep_land", "1")],
    [("rules", "1942-2e"), ("sea", "1"), ("attacker", "2 submarine, 1 destroyer"),
     ("defender", "1 destroyer, 1 cruiser"), ("method", "exact"), ("dice", "low_luck"),
     ("attacker_submerge", "first-chance"), ("defender_ool", "cheapest")],
    [("rules", "1942-2e"), ("attacker", "1 tank"), ("landing", "2 infantry"),
     ("bombard", "1 battleship"), ("defender", "3 infantry"), ("method", "exact"),
     ("retreat_when_left", "1"), ("attacker_ool", "*^infantry;*^tank")],
    [("rules", "revised"), ("attacker", "4 infantry, 2 tank"), ("defender", "4 infantry"),
     ("method", "mc"), ("trials", "20000"), ("seed", "1"), ("retreat_below", "0.3"),
     ("attacker_tech", "heavy_bombers"), ("rounds_distribution", "1")],
    [("rules", "formula"), ("attacker", "3 army"), ("defender", "2 army"), ("method", "exact"),
     ("attacker_level", "2"), ("hatred", "1"), ("exchanges", "until-done"), ("flips", "A1")],
]


@pytest.mark.skipif(NODE is None, reason="needs node to run the page's script")
@pytest.mark.parametrize("params", PAGE_REQUESTS, ids=lambda p: dict(p).get("rules"))
def test_the_page_command_line_runs_as_written_with_the_page_numbers(params):
    line = _page_command_line(params)
    words = shlex.split(line)
    assert words[:2] == ["battlecalc", "run"]
    assert "--dice low_luck" not in line
    run = invoke(*words[1:], "--format", "json")
    assert run.exit_code == 0, (line, run.output)
    kwargs, _ = web_spec.parse_params(dict(params))
    expected = json.loads(battlecalc.simulate(**kwargs).to_json())
    got = json.loads(run.stdout)
    for key in ("attacker_win", "defender_win", "draw", "attacker_ipc_loss", "defender_ipc_loss"):
        if key in expected:
            assert got[key] == pytest.approx(expected[key], abs=1e-12), (line, key)


# ------------------------------------------------------------------ the page's requests


@pytest.fixture(scope="module")
def page_requests():
    return helpers.page_requests({screen: query.removeprefix("/")
                                  for screen, query in battles.PAGE_SCREENS.items()})


@pytest.mark.skipif(NODE is None, reason="needs node to run the page's script")
@pytest.mark.parametrize("screen", list(battles.PAGE_SCREENS))
def test_every_shown_option_changes_the_request(page_requests, screen):
    """Each option the page shows, changed from the form's value as its control changes it,
    is in the request; put back, the request is the form's again, and so are the options
    shown: the page's own script (app.js) on the page spec (web/spec.py), before an answer
    and after method auto answered exactly (trials and seed then neither shown nor sent).
    (That the page shows what this script says: tests/test_browser.py, a screen of each
    kind.)"""
    found = page_requests[screen]
    assert set(found) == {"before", "exact"}
    assert "seed" in found["before"]["pristine"] and "seed" not in found["exact"]["pristine"]
    for answered, shown in found.items():
        assert len(shown["names"]) >= 4
        for change in shown["changes"]:
            name, value, body = change["name"], change["value"], change["body"]
            assert name in body, (screen, answered, name)
            sent = body[name]
            if name == "waves":
                assert sent == [value]
            elif value is not True:
                assert str(sent) == value or value in str(sent), (name, sent, value)
            assert change["back"] == shown["pristine"], (screen, answered, name)
            assert change["shown_back"] == shown["names"], (screen, answered, name)


LAND_ONLY = ["keep_land", "aa_last", "retreat_when_only_air", "counterattack"]
SEA = battles.PAGE_SCREENS["sea"].removeprefix("/")
BIG_LAND = ("?rules=1942-2e&attacker=30+inf+10+art+10+tank+8+ftr+4+bmb"
            "&defender=40+inf+8+tank+6+ftr+3+aa&trials=20000")


@pytest.mark.skipif(NODE is None, reason="needs node to run the page's script")
def test_at_sea_the_land_only_options_are_not_shown():
    found = helpers.page_requests({
        "land": battles.PAGE_SCREENS["land"].removeprefix("/"), "sea": SEA,
        "sea, exact": SEA + "&method=exact", "sea, mc": SEA + "&method=mc",
        "big land": BIG_LAND, "revised, AA": "?rules=revised&attacker=2+inf&defender=2+inf+1+aa"})
    land, sea = found["land"]["before"]["names"], found["sea"]["exact"]["names"]
    for name in LAND_ONLY:
        assert name in land, name
    for name in [*LAND_ONLY, "target_value", "goal", "attacker_level"]:
        assert name not in sea, name
    assert "defender_submerge" in sea
    # method auto solved it exactly (the server's answer the page learns): trials and seed
    # cannot change the answer, not shown, not sent
    assert battlecalc.simulate(rules="1942-2e", sea=True, attacker="2 sub 1 dd 1 ftr",
                               defender="1 dd 1 cv 1 ftr").method == "exact"
    assert "trials" not in sea and "seed" not in sea
    # with method exact: not shown, not sent
    exact = found["sea, exact"]["before"]
    assert exact["pristine"]["method"] == "exact"
    assert "trials" not in exact["pristine"] and "seed" not in exact["pristine"]
    assert "trials" not in exact["names"] and "seed" not in exact["names"]
    # method mc: shown and sent
    mc = found["sea, mc"]["before"]
    assert mc["pristine"]["method"] == "mc" and "seed" in mc["pristine"]
    assert "trials" in mc["names"] and "seed" in mc["names"]
    # method auto on a battle it answers by Monte Carlo: shown (and sent), as for mc
    assert battlecalc.simulate(rules="1942-2e", attacker="30 inf 10 art 10 tank 8 ftr 4 bmb",
                               defender="40 inf 8 tank 6 ftr 3 aa", trials=20000,
                               seed=1).method == "mc"
    big = found["big land"]["before"]
    assert "trials" in big["names"] and "seed" in big["names"]
    [seed] = [c for c in big["changes"] if c["name"] == "seed"]
    assert seed["body"]["trials"] == "20000" and seed["body"]["seed"] == "5"
    # Revised: AA guns are never casualties, so no "AAA last" (it would be refused)
    assert "aa_last" not in found["revised, AA"]["before"]["names"]
