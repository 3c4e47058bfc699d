"""Command-line interface, through click's CliRunner (click >= 8.2: stderr is kept apart)."""

from __future__ import annotations

import csv
import errno
import io
import json
import os

import battles
import pytest
from helpers import MC_TRIALS, assert_mc_agrees, assert_usage_error, invoke

EXACT_1V1 = ["run", "--rules", "revised", "-a", "1 inf", "-d", "1 inf", "--method", "exact"]
MC_1V1 = ["run", "--rules", "revised", "-a", "1 inf", "-d", "1 inf", "--method", "mc",
          "--seed", "5", "--trials", "20000"]

SUMMARY_KEYS = (
    "rules", "method", "trials", "seed", "attacker_win", "defender_win", "draw", "stalemate",
    "retreat", "takes_territory", "mean_rounds", "attacker_ipc_loss", "defender_ipc_loss",
    "tuv_swing", "attacker_survivors", "defender_survivors",
)
REVISED_UNITS = (
    "infantry", "artillery", "tank", "aa", "fighter", "bomber", "battleship",
    "damaged_battleship", "destroyer", "carrier", "transport", "submarine",
)


def ok(*args: str):
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    assert result.exception is None
    assert result.stderr == ""
    return result


def run_json(*args: str) -> dict:
    return json.loads(ok(*args, "--format", "json").stdout)


# --- run: formats ----------------------------------------------------------------------------


def test_json_exact_one_infantry_each():
    data = run_json(*EXACT_1V1)
    assert set(SUMMARY_KEYS) <= set(data)
    assert data["rules"] == "revised"
    assert data["method"] == "exact"
    assert data["trials"] is None
    assert data["seed"] is None
    assert data["attacker"] == "1 infantry"
    assert data["defender"] == "1 infantry"
    assert data["attacker_win"] == pytest.approx(1 / 4, abs=1e-12)
    assert data["defender_win"] == pytest.approx(5 / 8, abs=1e-12)
    assert data["draw"] == pytest.approx(1 / 8, abs=1e-12)
    assert data["stalemate"] == 0
    assert data["retreat"] == 0
    assert data["takes_territory"] == pytest.approx(1 / 4, abs=1e-12)
    # rounds until someone hits: geometric with success chance 1 - (5/6)(4/6) = 4/9
    assert data["mean_rounds"] == pytest.approx(9 / 4, abs=1e-12)
    # attacker's infantry dies unless the attacker wins: 3 IPC x 3/4
    assert data["attacker_ipc_loss"] == pytest.approx(9 / 4, abs=1e-12)
    assert data["defender_ipc_loss"] == pytest.approx(3 * 3 / 8, abs=1e-12)
    assert data["tuv_swing"] == pytest.approx(9 / 8 - 9 / 4, abs=1e-12)
    assert data["attacker_survivors"] == {"infantry": pytest.approx(1 / 4, abs=1e-12)}
    assert data["defender_survivors"] == {"infantry": pytest.approx(5 / 8, abs=1e-12)}


def test_json_is_one_object():
    result = ok(*EXACT_1V1, "--format", "json")
    decoder = json.JSONDecoder()
    obj, end = decoder.raw_decode(result.stdout)
    assert isinstance(obj, dict)
    assert result.stdout[end:].strip() == ""


def test_csv_one_row_matching_json():
    data = run_json(*EXACT_1V1)
    result = ok(*EXACT_1V1, "--format", "csv")
    rows = list(csv.reader(io.StringIO(result.stdout)))
    assert len(rows) == 2  # header + exactly one data row
    header, values = rows
    row = dict(zip(header, values, strict=True))
    assert row["rules"] == "revised"
    assert row["method"] == "exact"
    assert row["trials"] == ""
    assert row["seed"] == ""
    for key in ("attacker_win", "defender_win", "draw", "stalemate", "retreat",
                "takes_territory", "mean_rounds", "attacker_ipc_loss", "defender_ipc_loss",
                "tuv_swing"):
        assert float(row[key]) == data[key], key
    assert float(row["attacker_survivors.infantry"]) == data["attacker_survivors"]["infantry"]
    assert float(row["defender_survivors.infantry"]) == data["defender_survivors"]["infantry"]
    # survivor columns cover every unit of the edition, 0 where absent
    for unit in REVISED_UNITS:
        assert f"attacker_survivors.{unit}" in row
    assert float(row["attacker_survivors.tank"]) == 0.0


def test_table_exact():
    out = ok(*EXACT_1V1).stdout
    assert out.startswith("revised: 1 infantry  attacking  1 infantry\n")
    assert "method: exact" in out
    assert "attacker wins" in out
    assert "25.00%" in out
    assert "62.50%" in out
    assert "12.50%" in out
    assert "95% CI" not in out


def test_table_monte_carlo():
    out = ok(*MC_1V1).stdout
    assert "attacker wins" in out
    assert "defender wins" in out
    assert "95% CI" in out
    assert "Monte Carlo, 20,000 trials, seed 5" in out


def test_monte_carlo_same_seed_same_numbers():
    first = run_json(*MC_1V1)
    second = run_json(*MC_1V1)
    assert first.pop("elapsed_s") >= 0
    second.pop("elapsed_s")
    assert first == second
    assert first["method"] == "mc"
    assert first["trials"] == 20000
    assert first["seed"] == 5
    # exact answer 1/4, 5/8, 1/8; standard error about 0.003 at 20000 trials
    assert first["attacker_win"] == pytest.approx(0.25, abs=0.02)
    assert first["defender_win"] == pytest.approx(0.625, abs=0.02)
    assert first["draw"] == pytest.approx(0.125, abs=0.02)
    total = sum(first[k] for k in ("attacker_win", "defender_win", "draw", "stalemate",
                                   "retreat"))
    assert total == pytest.approx(1.0, abs=1e-12)


def test_monte_carlo_other_seed_other_numbers():
    first = run_json(*MC_1V1)
    other = run_json(*MC_1V1[:-4], "--seed", "6", "--trials", "20000")
    assert other["seed"] == 6
    assert (first["attacker_win"], first["draw"]) != (other["attacker_win"], other["draw"])


@pytest.mark.parametrize("spelling", ["2000", "2_000", "2,000", "2e3", "2.0e3"])
def test_trials_spellings(spelling):
    data = run_json(*MC_1V1[:-2], "--trials", spelling)
    assert data["trials"] == 2000


# --- run: --output -----------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["json", "csv", "table"])
def test_output_file(tmp_path, fmt):
    target = tmp_path / f"result.{fmt}"
    result = ok(*EXACT_1V1, "--format", fmt, "--output", str(target))
    assert result.stdout == ""
    assert result.output == ""
    text = target.read_text(encoding="utf-8")
    assert text.endswith("\n")
    if fmt == "json":
        assert json.loads(text)["attacker_win"] == pytest.approx(0.25, abs=1e-12)
    elif fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(text)))
        assert len(rows) == 1
        assert float(rows[0]["defender_win"]) == pytest.approx(0.625, abs=1e-12)
    else:
        assert "attacker wins" in text
        assert "25.00%" in text
    assert sorted(p.name for p in tmp_path.iterdir()) == [target.name]  # no temp file left


def test_output_replaces_existing_file(tmp_path):
    target = tmp_path / "out.json"
    target.write_text("old", encoding="utf-8")
    ok(*EXACT_1V1, "--format", "json", "-o", str(target))
    assert json.loads(target.read_text(encoding="utf-8"))["method"] == "exact"


def test_output_into_missing_folder(tmp_path):
    target = tmp_path / "missing" / "out.json"
    assert_usage_error(invoke(*EXACT_1V1, "-o", str(target)), "does not exist")
    assert not target.parent.exists()
    assert list(tmp_path.iterdir()) == []


def test_failed_run_leaves_existing_output_untouched(tmp_path):
    target = tmp_path / "out.json"
    target.write_text("old", encoding="utf-8")
    result = invoke("run", "--rules", "revised", "-a", "1 infanty", "-d", "1 inf",
                    "--method", "exact", "--format", "json", "-o", str(target))
    assert_usage_error(result, "did you mean 'infantry'?")
    assert target.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_failed_write_leaves_no_temp_file_and_old_file_intact(tmp_path, monkeypatch):
    target = tmp_path / "out.json"
    target.write_text("old", encoding="utf-8")

    def refuse(src, dst):
        raise OSError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(os, "replace", refuse)
    result = invoke(*EXACT_1V1, "--format", "json", "-o", str(target))
    assert_usage_error(result, f"cannot write {target}: Permission denied")
    assert target.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


# --- run: --distribution -----------------------------------------------------------------------


@pytest.mark.parametrize("which", ["survivors", "ipc", "rounds", "swing"])
@pytest.mark.parametrize("fmt", [None, "table", "json"])
def test_distribution_needs_csv(which, fmt):
    args = [*EXACT_1V1, "--distribution", which]
    if fmt:
        args += ["--format", fmt]
    assert_usage_error(invoke(*args), "--distribution needs --format csv")


def test_distribution_swing_exact():
    out = ok(*EXACT_1V1, "--format", "csv", "--distribution", "swing").stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    law = {int(r["tuv_swing"]): float(r["probability"]) for r in rows}
    assert law == {
        -3: pytest.approx(5 / 8, abs=1e-12),
        0: pytest.approx(1 / 8, abs=1e-12),
        3: pytest.approx(1 / 4, abs=1e-12),
    }


def test_distribution_ipc_exact():
    out = ok(*EXACT_1V1, "--format", "csv", "--distribution", "ipc").stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    law = {(r["side"], int(r["ipc_lost"])): float(r["probability"]) for r in rows}
    assert law == {
        ("attacker", 0): pytest.approx(1 / 4, abs=1e-12),
        ("attacker", 3): pytest.approx(3 / 4, abs=1e-12),
        ("defender", 0): pytest.approx(5 / 8, abs=1e-12),
        ("defender", 3): pytest.approx(3 / 8, abs=1e-12),
    }


def test_distribution_survivors_exact():
    out = ok(*EXACT_1V1, "--format", "csv", "--distribution", "survivors").stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    assert list(rows[0]) == ["side", "survivors", "ipc_lost", "probability"]
    law = {(r["side"], r["survivors"]): float(r["probability"]) for r in rows}
    assert law == {
        ("attacker", "1 infantry"): pytest.approx(1 / 4, abs=1e-12),
        ("attacker", "nothing"): pytest.approx(3 / 4, abs=1e-12),
        ("defender", "1 infantry"): pytest.approx(5 / 8, abs=1e-12),
        ("defender", "nothing"): pytest.approx(3 / 8, abs=1e-12),
    }


def test_distribution_rounds_monte_carlo():
    out = ok(*MC_1V1, "--format", "csv", "--distribution", "rounds").stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    law = {int(r["rounds"]): float(r["probability"]) for r in rows}
    assert sum(law.values()) == pytest.approx(1.0, abs=1e-12)
    assert min(law) == 1
    assert law[1] == pytest.approx(4 / 9, abs=0.02)  # first round decides with chance 4/9


def test_exact_rounds_distribution_is_geometric_for_one_infantry_each():
    # 1 inf v 1 inf: a round decides the battle with 4/9, so P(r rounds) = (5/9)^(r-1) (4/9).
    out = ok(*EXACT_1V1, "--format", "csv", "--distribution", "rounds").stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    for row in rows[:10]:
        r = int(row["rounds"])
        assert float(row["probability"]) == pytest.approx((5 / 9) ** (r - 1) * 4 / 9, abs=1e-12)
    assert sum(float(row["probability"]) for row in rows) == pytest.approx(1.0, abs=1e-12)


# --- units and rules commands ------------------------------------------------------------------


def test_units_lists_every_canonical_name():
    out = ok("units", "--rules", "revised").stdout
    names = [line.split()[0] for line in out.splitlines()[1:]]
    assert names == list(REVISED_UNITS)
    assert out.splitlines()[0].split()[:3] == ["name", "aliases", "cost"]


def test_units_json():
    rows = json.loads(ok("units", "--rules", "1942-2e", "--format", "json").stdout)
    by_name = {row["name"]: row for row in rows}
    assert "cruiser" in by_name
    assert (by_name["tank"]["cost"], by_name["tank"]["attack"]) == (6, 3)
    assert "AA at 1 (3 shots/gun)" in by_name["aa"]["abilities"]


def test_rules_lists_editions():
    out = ok("rules").stdout
    ids = [line.split()[0] for line in out.splitlines()[1:]]
    assert ids == ["1940-2e", "1942-2e", "aa50", "classic", "formula", "revised"]


def test_rules_of_one_edition():
    out = ok("rules", "--rules", "1942-2e").stdout
    rows = {tuple(line.split()[:3]) for line in out.splitlines()[1:]}
    assert ("flag", "aa_dice", "per_gun") in rows
    assert any(row[:2] == ("tech", "heavy_bombers") for row in rows)
    assert any(row[:2] == ("tech", "jets") for row in rows)


def test_rules_of_one_edition_csv():
    out = ok("rules", "--rules", "revised", "--format", "csv").stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    flags = {r["name"]: r["value"] for r in rows if r["kind"] == "flag"}
    techs = {r["name"] for r in rows if r["kind"] == "tech"}
    assert flags["aa_dice"] == "per_aircraft"
    assert flags["bombard_return_fire"] == "False"
    assert techs == {"heavy_bombers", "jets", "super_subs", "combined_bombardment"}


# --- bad input: exit 2 and one "Error:" line -------------------------------------------------

BAD_INPUT = [
    pytest.param(["run", "--rules", "bogus", "-a", "1 inf", "-d", "1 inf"],
                 "'bogus' is not one of '1940-2e', '1942-2e', 'aa50', 'classic', 'formula', "
                 "'revised'", id="unknown-edition"),
    pytest.param(["run", "--rules", "revised", "-a", "1 infanty", "-d", "1 inf"],
                 "unknown unit 'infanty' in revised; did you mean 'infantry'?",
                 id="unknown-unit"),
    pytest.param(["run", "--rules", "revised", "-a", "-1 inf", "-d", "1 inf"],
                 "count for infantry must be at least 1, got -1", id="negative-count"),
    pytest.param(["run", "--rules", "revised", "-a", "1 inf", "-d", "0 tank"],
                 "count for tank must be at least 1, got 0", id="zero-count"),
    pytest.param(["run", "--rules", "revised", "-a", "1 inf", "-d", "1 inf", "--trials", "0"],
                 "trials must be between 1 and 10,000,000,000, got 0", id="trials-0"),
    pytest.param(["run", "--rules", "revised", "-a", "1 inf", "-d", "1 inf", "--trials", "-5"],
                 "trials must be between 1 and 10,000,000,000, got -5", id="trials-negative"),
    pytest.param(["run", "--rules", "revised", "-a", "1 inf", "-d", "1 inf", "--trials",
                  "1e13"], "trials must be between 1 and 10,000,000,000", id="trials-1e13"),
    pytest.param(["run", "--rules", "revised", "-a", "1 inf", "-d", "1 inf", "--trials", "abc"],
                 "--trials must be a whole number, got 'abc'", id="trials-abc"),
    pytest.param(["run", "--rules", "revised", "-a", "1 inf", "-d", "1 inf", "--trials", "2.5"],
                 "--trials must be a whole number, got '2.5'", id="trials-fraction"),
    pytest.param(["run", "--rules", "revised", "-a", "1 inf", "-d", "1 inf", "--seed", "abc"],
                 "--seed must be a whole number, got 'abc'", id="seed-abc"),
    pytest.param(["run", "--rules", "revised", "-a", "1 inf", "-d", "1 inf", "--method", "mc",
                  "--trials", "100", "--seed", "-1"],
                 "seed must be between 0 and 2**63-1, got -1", id="seed-negative"),
    pytest.param(["run", "--rules", "revised", "-a", "1 tank", "-d", "1 bb", "--sea"],
                 "tank is a land unit and cannot be in a sea battle (attacker)",
                 id="tank-at-sea"),
    pytest.param(["run", "--rules", "1942-2e", "-a", "1 dd", "-d", "1 tt", "--sea",
                  "--landing", "2 inf"],
                 "--landing and --bombard belong to amphibious assaults", id="landing-at-sea"),
    pytest.param(["run", "--rules", "1942-2e", "-a", "1 dd", "-d", "1 tt", "--sea",
                  "--bombard", "1 bb"],
                 "--landing and --bombard belong to amphibious assaults", id="bombard-at-sea"),
    pytest.param(["run", "--rules", "1942-2e", "--landing", "2 inf", "--bombard", "1 dd",
                  "-d", "2 inf"],
                 "destroyer cannot bombard in 1942-2e", id="destroyer-bombard-1942"),
    pytest.param(["run", "--rules", "revised", "--landing", "2 inf", "--bombard", "1 dd",
                  "-d", "2 inf"],
                 "destroyer cannot bombard in revised (needs the combined_bombardment "
                 "technology)", id="destroyer-bombard-revised"),
    pytest.param(["run", "--rules", "1942-2e", "-a", "1 tank", "--bombard", "1 bb",
                  "-d", "2 inf"],
                 "--bombard needs --landing", id="bombard-without-landing"),
    pytest.param(["run", "--rules", "1942-2e", "--landing", "2 ftr", "-d", "2 inf"],
                 "fighter cannot land from a transport", id="fighter-landing"),
    pytest.param(["run", "--rules", "revised", "-a", "1 inf", "-d", "1 bb"],
                 "battleship is a sea unit and cannot be in a land battle (defender)",
                 id="battleship-on-land"),
    pytest.param(["run", "--rules", "revised", "-a", "1 aa, 1 inf", "-d", "1 inf"],
                 "aa cannot attack", id="aa-attacking"),
    pytest.param(["run", "--rules", "1942-2e", "-a", "1 aaa", "-d", "1 inf"],
                 "aa cannot attack", id="aaa-attacking-1942"),
    pytest.param(["run", "--rules", "revised", "-a", "", "-d", "1 inf"],
                 "the attacker has no units", id="empty-attacker"),
    pytest.param(["run", "--rules", "revised", "-a", "1 inf", "-d", "  "],
                 "the defender has no units", id="blank-defender"),
    pytest.param(["run", "--rules", "revised", "-a", "1 inf"],
                 "Missing option '--defender'", id="missing-defender"),
    pytest.param(["run", "--rules", "revised", "-d", "1 inf"],
                 "Missing option '--attacker'", id="missing-attacker"),
    pytest.param(["run", "--rules", "revised", "-a", "1 inf", "-d", "1 inf",
                  "--attacker-tech", "lasers"],
                 "unknown technology 'lasers' for revised", id="unknown-tech"),
    pytest.param(["run", "--rules", "revised", "-a", "1 inf", "-d", "1 inf",
                  "--defender-tech", "jets,lasers"],
                 "unknown technology 'lasers' for revised", id="unknown-defender-tech"),
    pytest.param(["run", "--rules", "revised", "-a", "1 inf", "-d", "1 inf", "--format", "xml"],
                 "Invalid value for '--format'", id="unknown-format"),
    pytest.param(["run", "--rules", "revised", "-a", "1 inf", "-d", "1 inf", "--method", "fast"],
                 "--method must be one of auto, exact, mc, got 'fast'", id="unknown-method"),
    pytest.param(["run", "--rules", "revised", "-a", "3 inf 2", "-d", "1 inf"],
                 "cannot read army '3 inf 2'", id="trailing-number"),
    pytest.param(["run", "--rules", "revised", "-a", "1001 inf", "-d", "1 inf"],
                 "1001 infantry is more than the 1000 per unit type", id="too-many"),
    pytest.param(["run", "--rules", "revised", "-a", "1 inf", "-d", "1 inf", "--frobnicate"],
                 "--frobnicate", id="unknown-option"),
    pytest.param(["rules", "--rules", "bogus"], "'bogus' is not one of", id="rules-bogus"),
    pytest.param(["units", "--rules", "bogus"], "'bogus' is not one of", id="units-bogus"),
    pytest.param(["battle"], "No such command 'battle'", id="unknown-command"),
]


@pytest.mark.parametrize(("args", "fragment"), BAD_INPUT)
def test_bad_input_is_one_error_line(args, fragment):
    assert_usage_error(invoke(*args), fragment)


def test_infinite_trials_is_one_error_line():
    assert_usage_error(invoke(*EXACT_1V1, "--trials", "1e999"), "trials")


def test_units_without_rules_is_one_error_line():
    assert_usage_error(invoke("units"), "Missing option '--rules'")


def test_version():
    result = ok("--version")
    assert "0.1.0" in result.stdout


# --- formula edition (issue 6) ---------------------------------------------------------------


def test_formula_single_exchange_exact_odds():
    # 3 army v 2 army, one exchange, level 1: 36 equally likely dice pairs (docs/formula.md)
    data = json.loads(ok("run", "--rules", "formula", "-a", "3 army", "-d", "2 army",
                         "--exchanges", "1", "--format", "json").stdout)
    assert data["method"] == "exact"
    assert data["attacker_win"] == pytest.approx(22 / 36, abs=1e-12)
    assert data["defender_win"] == pytest.approx(5 / 36, abs=1e-12)
    assert data["draw"] == pytest.approx(6 / 36, abs=1e-12)
    assert data["attacker_loss_points"] == pytest.approx(55 / 36, abs=1e-12)
    assert data["defender_loss_points"] == pytest.approx(117 / 36, abs=1e-12)


def test_formula_until_done_matches_its_monte_carlo():
    args = ("run", "--rules", "formula", "-a", "3 army", "-d", "2 army", "--exchanges",
            "until-done", "--format", "json")
    exact = json.loads(ok(*args).stdout)
    mc = json.loads(ok(*args, "--method", "mc", "--trials", str(MC_TRIALS), "--seed",
                       "3").stdout)
    assert exact["attacker_win"] == pytest.approx(137 / 216, abs=1e-12)
    assert_mc_agrees(mc, exact, probabilities=("attacker_win",), means=(), slack=0.0,
                     trials=MC_TRIALS)


@pytest.mark.parametrize(("extra", "fragment"), [
    (["--attacker-level", "11"], "level"),
    (["--defender-level", "0"], "level"),
    (["--counter", "-1"], "counter"),
    (["--loss-multiplier", "0"], "multiplier"),
    (["--exchanges", "0"], "exchanges"),
    (["--exchanges", "often"], "exchanges"),
    (["--sea"], "do not apply"),
])
def test_formula_bad_input_exits_2(extra, fragment):
    result = invoke("run", "--rules", "formula", "-a", "3 army", "-d", "2 army", *extra)
    assert_usage_error(result, fragment)


def test_formula_options_are_refused_by_dice_editions():
    result = invoke(*EXACT_1V1, "--counter", "2")
    assert_usage_error(result, "formula-combat editions only")


def _without_timings(data):
    """A JSON answer without its wall-clock fields, at every depth."""
    if isinstance(data, dict):
        return {k: _without_timings(v) for k, v in data.items()
                if k not in ("elapsed_s", "timing")}
    if isinstance(data, list):
        return [_without_timings(v) for v in data]
    return data


@pytest.mark.parametrize("command", [
    ("run", "--rules", "1942-2e", "-a", "6 inf 2 art 2 tank", "-d", "7 inf 1 tank",
     "--method", "mc", "--trials", "20000", "--seed", "3"),
    ("plan", "--rules", "1942-2e", "-d", "2 inf 1 tank", "--pool", "5 inf 2 art 2 tank",
     "--method", "mc", "--trials", "5000", "--seed", "3", "--top", "2"),
    ("raid", "--rules", "1940-2e", "-a", "2 ftr 3 bmb", "-d", "2 ftr", "--facility", "major",
     "--method", "mc", "--trials", "20000", "--seed", "3"),
])
def test_threads_flag_of_run_plan_and_raid_changes_no_number(command):
    import battlecalc

    outputs = []
    try:
        for threads in ("1", "3"):
            result = invoke(*command, "--threads", threads, "--format", "json")
            assert result.exit_code == 0, result.output
            outputs.append(json.dumps(_without_timings(json.loads(result.stdout)),
                                      sort_keys=True))
        assert battlecalc.thread_count() == 3  # the flag sized the engine's pool
    finally:
        battlecalc.set_threads(None)
    assert outputs[0] == outputs[1]
    assert_usage_error(invoke(*command, "--threads", "0"), "--threads")


ANSWERS = ("attacker_win", "defender_win", "draw", "stalemate", "retreat", "takes_territory",
           "tuv_swing", "mean_rounds", "attacker_ipc_loss", "defender_ipc_loss")


def _run_args(battle: dict) -> list[str]:
    """`battlecalc run`'s arguments for simulate's keywords, each by its flag (the options
    table's), armies in notation, a flag of a bool given where it is True."""
    from battlecalc import format_army
    from battlecalc.options import BY_NAME

    args = ["run"]
    for name, value in battle.items():
        flag = BY_NAME[name].flag
        if isinstance(value, bool):
            args += [flag] if value else []
            continue
        args += [flag, format_army(value) if isinstance(value, dict) else str(value)]
    return [*args, "--format", "json"]


@pytest.mark.parametrize(("given", "least"), [
    (lambda: battles.any_battles(2026_12_02, 120), 60),
    (lambda: battles.air_loss_battles(2026_12_05, 30), 12)], ids=["any", "air-loss"])
def test_run_answers_any_battle_as_simulate_does(given, least, full_size):
    """`run` gives simulate's answer, or exit status 2 where simulate refuses the battle, for
    random battles of every kind and option (tests/battles.py's any_battles, and
    air_loss_battles: --retreat-air-loss on each; those with the law of rounds, which has no
    flag, left out).  (Every battle in the slow tier, every other one in the quick.)"""
    import warnings

    import battlecalc
    from battlecalc import BattleInputError

    answered, every = 0, 1 if full_size else 2
    least //= every
    for battle in given()[::every]:
        if battle.get("rounds_distribution"):
            continue
        result = invoke(*_run_args(battle))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                want = battlecalc.simulate(**battle)
        except BattleInputError:
            assert result.exit_code == 2, (battle, result.output)
            continue
        assert result.exit_code == 0, (battle, result.output)
        got = json.loads(result.stdout)
        for key in ANSWERS:
            assert got[key] == pytest.approx(getattr(want, key), abs=1e-12), (battle, key)
        answered += 1
    assert answered > least

