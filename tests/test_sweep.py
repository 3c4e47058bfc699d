"""battlecalc sweep: many battles in one table, on local workers or a Dask cluster."""

from __future__ import annotations

import inspect
import json
import math
import os
import stat
import sys

import numpy as np
import pandas as pd
import pytest
from helpers import invoke

import battlecalc
from battlecalc import BattleInputError, simulate
from battlecalc.sweeper import (
    OPTION_TYPES,
    convert,
    derived_seed,
    option_lookalikes,
    parse_vary,
    read_battles,
    run_chunk,
    write_table,
)

# 1 infantry (attack 1) against 1 infantry (defence 2), Revised: per round the attacker alone
# hits with 1/6 * 2/3 = 1/9, the defender alone with 5/6 * 1/3 = 5/18, both with 1/18; the
# battle ends in the first round that is not a double miss, so the odds are those three over
# their sum 4/9.
ONE_V_ONE = {"attacker_win": 1 / 4, "defender_win": 5 / 8, "draw": 1 / 8}

BATTLES = pd.DataFrame([
    {"label": "exact land", "rules": "revised", "attacker": "1 inf", "defender": "1 inf",
     "method": "exact", "trials": "", "seed": "", "sea": ""},
    {"label": "mc seeded", "rules": "1942-2e", "attacker": "3 inf 1 art", "defender": "3 inf",
     "method": "mc", "trials": "2e4", "seed": "11", "sea": "no"},
    {"label": "mc unseeded", "rules": "1942-2e", "attacker": "3 inf 1 tank",
     "defender": "2 inf 1 aa", "method": "mc", "trials": "20_000", "seed": "", "sea": "false"},
    {"label": "bad unit", "rules": "revised", "attacker": "2 inf", "defender": "2 infanty",
     "method": "", "trials": "", "seed": "", "sea": ""},
    {"label": "sea", "rules": "1942-2e", "attacker": "1 sub 1 dd", "defender": "1 dd",
     "method": "", "trials": "", "seed": "", "sea": "TRUE"},
    {"label": "bad bool", "rules": "revised", "attacker": "2 inf", "defender": "2 inf",
     "method": "", "trials": "", "seed": "", "sea": "perhaps"},
    {"label": "formula", "rules": "formula", "attacker": "3 army", "defender": "2 army",
     "method": "exact", "trials": "", "seed": "", "sea": ""},
])


def comparable(frame: pd.DataFrame) -> pd.DataFrame:
    """A sweep's table without the one column that differs between runs (time taken)."""
    return frame.drop(columns=["elapsed_s"])


@pytest.fixture(scope="module")
def local_table():
    return battlecalc.sweep(BATTLES, seed=2024, workers=1)


# ----------------------------------------------------------------------------- reading cells

@pytest.mark.parametrize(("name", "text", "value"), [
    ("sea", "yes", True), ("sea", "N", False), ("sea", "1", True), ("sea", "0.0", False),
    ("sea", np.bool_(True), True), ("aa_last", "On", True),
    ("trials", "1e5", 100_000), ("trials", "100,000", 100_000), ("trials", "100_000", 100_000),
    ("trials", 2.5e4, 25_000), ("seed", "  42 ", 42), ("seed", np.int64(7), 7),
    ("keep_land", "2.0", 2), ("retreat_below", "0.25", 0.25), ("attacker", " 3 inf ", "3 inf"),
    ("seed", "", None), ("seed", "   ", None), ("seed", None, None), ("seed", float("nan"), None),
    ("seed", pd.NA, None),
])
def test_cells_are_read_as_the_keyword_type(name, text, value):
    converted = convert(name, text)
    assert converted == value and type(converted) is type(value)


@pytest.mark.parametrize(("name", "text", "message"), [
    ("sea", "maybe", "sea must be true or false (yes/no, 1/0), got 'maybe'"),
    ("seed", "1.5", "seed must be a whole number, got '1.5'"),
    ("seed", "x", "seed must be a whole number, got 'x'"),
    ("keep_land", True, "keep_land must be a whole number, got True"),
    ("retreat_below", "inf", "retreat_below must be a finite number, got 'inf'"),
])
def test_bad_cells_are_named(name, text, message):
    with pytest.raises(BattleInputError) as info:
        convert(name, text)
    assert str(info.value) == message


def test_every_keyword_of_simulate_can_be_a_column():
    # (a sweep row is one battle: waves and counter-attacks are sequences, not columns)
    keywords = set(inspect.signature(simulate).parameters) - {
        "progress", "formula_options", "waves", "counterattack"}
    assert keywords <= set(OPTION_TYPES)
    assert {"attacker_level", "exchanges", "hatred"} <= set(OPTION_TYPES)


def test_a_column_named_almost_like_an_option_gets_a_note():
    notes = option_lookalikes(["atacker_ool", "label", "attacker", "attacker.infantry"])
    assert notes == ["column 'atacker_ool' is not an option of simulate (did you mean "
                     "'attacker_ool'?); it is passed through as a label"]


# ----------------------------------------------------------------------------- grid syntax

@pytest.mark.parametrize(("spec", "key", "values"), [
    ("attacker.infantry=1..5", "attacker.infantry", [1, 2, 3, 4, 5]),
    ("attacker.Inf=0..10:5", "attacker.inf", [0, 5, 10]),
    ("defender.tank=1,3,5", "defender.tank", [1, 3, 5]),
    ("defender.tank=1..2,7", "defender.tank", [1, 2, 7]),
    ("trials=1e4,1e5", "trials", [10_000, 100_000]),
    ("retreat-below=,0.3,0.5", "retreat_below", [None, 0.3, 0.5]),
    ("attacker_ool=bomber,tank|tank,bomber", "attacker_ool", ["bomber,tank", "tank,bomber"]),
    ("attacker=3 inf, 1 art|4 inf", "attacker", ["3 inf, 1 art", "4 inf"]),
    ("sea=no,yes", "sea", [False, True]),
    ("seed=5", "seed", [5]),
])
def test_vary_syntax(spec, key, values):
    assert parse_vary(spec) == (key, values)


@pytest.mark.parametrize(("spec", "message"), [
    ("attacker.infantry", "expected KEY=VALUES"),
    ("attacker.infantry=5..1", "empty range '5..1'"),
    ("attacker.infantry=1..3:0", "empty range '1..3:0'"),
    ("attacker.infantry=-1,2", "a unit count cannot be negative, got -1"),
    ("attacker.infantry=1,,2", "expected a unit count, got nothing"),
    ("trials=lots", "trials must be a whole number, got 'lots'"),
    ("atacker.infantry=1", "expected an option of simulate"),
    ("colour=red", "expected an option of simulate"),
])
def test_bad_vary_is_an_input_error(spec, message):
    with pytest.raises(BattleInputError, match=message.replace(".", r"\.")):
        parse_vary(spec)


def test_grid_expands_each_row_into_every_combination():
    battles = [{"rules": "revised", "attacker": "1 inf 1 tank", "defender": "1 inf", "id": "a"},
               {"rules": "1942-2e", "attacker": "2 art", "defender": "1 inf", "id": "b"}]
    table = battlecalc.sweep(battles, vary=["attacker.infantry=1..3", "method=exact,mc",
                                            "trials=1e4"], seed=1, workers=1)
    assert len(table) == 2 * 3 * 2
    assert list(table["id"]) == ["a"] * 6 + ["b"] * 6
    assert list(table["attacker.infantry"]) == [1, 1, 2, 2, 3, 3] * 2
    assert list(table["method"]) == ["exact", "mc"] * 6
    assert list(table["attacker"][:6:2]) == ["1 infantry, 1 tank", "2 infantry, 1 tank",
                                             "3 infantry, 1 tank"]
    assert list(table["attacker"][6::2]) == ["1 infantry, 2 artillery",
                                             "2 infantry, 2 artillery",
                                             "3 infantry, 2 artillery"]
    assert table["error"].isna().all()
    for _, row in table.iterrows():
        expected = simulate(rules=row["rules"], attacker=row["attacker"],
                            defender=row["defender"], method=row["method"],
                            trials=10_000, seed=None if row["method"] == "exact" else row["seed"])
        flat = expected.flat_row()
        for key in ("attacker_win", "defender_win", "tuv_swing", "takes_territory"):
            assert row[key] == flat[key]
    # more infantry never lowers the odds (exact rows)
    exact = table[table["method"] == "exact"]
    for _, series in exact.groupby("id"):
        assert series["attacker_win"].is_monotonic_increasing


def test_unit_columns_set_counts_and_zero_removes_the_unit():
    table = battlecalc.sweep([{"rules": "revised", "attacker": "2 inf 1 tank", "defender": "1 inf",
                               "attacker.tank": 0, "defender.inf": "", "defender.art": "2"}],
                             workers=1)
    assert table.loc[0, "attacker"] == "2 infantry"
    assert table.loc[0, "defender"] == "1 infantry, 2 artillery"
    assert table.loc[0, "attacker.tank"] == 0


def test_vary_mapping_form_equals_string_form():
    battles = [{"rules": "revised", "attacker": "1 inf", "defender": "1 inf", "method": "exact"}]
    by_text = battlecalc.sweep(battles, vary="attacker.infantry=1..3", workers=1)
    by_map = battlecalc.sweep(battles, vary={"attacker.infantry": range(1, 4)}, workers=1)
    pd.testing.assert_frame_equal(comparable(by_text), comparable(by_map))


def test_one_v_one_is_exact(local_table):
    row = local_table.iloc[0]
    for key, value in ONE_V_ONE.items():
        assert row[key] == pytest.approx(value, abs=1e-12)
    assert row["label"] == "exact land"
    assert row["attacker"] == "1 infantry" and row["method"] == "exact"


# ----------------------------------------------------------------------------- rows and seeds

def test_bad_rows_get_an_error_and_the_others_go_on(local_table):
    assert list(local_table["label"]) == list(BATTLES["label"])  # no row lost, order kept
    errors = dict(zip(local_table["label"], local_table["error"], strict=True))
    assert errors["bad unit"].startswith("unknown unit 'infanty' in revised; did you mean "
                                         "'infantry'?")
    assert errors["bad bool"] == "sea must be true or false (yes/no, 1/0), got 'perhaps'"
    good = local_table[local_table["error"].isna()]
    assert len(good) == 5
    assert good[["attacker_win", "defender_win", "draw", "stalemate", "retreat"]].sum(
        axis=1).to_numpy() == pytest.approx(np.ones(5), abs=1e-9)
    bad = local_table[local_table["error"].notna()]
    assert bad["attacker_win"].isna().all()
    assert list(bad["defender"]) == ["2 infanty", "2 inf"]  # what was given, for fixing it


def test_every_row_matches_simulate_with_its_seed(local_table):
    for i, row in local_table[local_table["error"].isna()].iterrows():
        given = BATTLES.iloc[i]
        kwargs = {k: convert(k, given[k]) for k in OPTION_TYPES if k in given}
        kwargs = {k: v for k, v in kwargs.items() if v is not None}
        if row["method"] == "mc":
            expected_seed = 11 if given["seed"] else derived_seed(2024, i)
            assert row["seed"] == expected_seed
            kwargs["seed"] = expected_seed
        flat = simulate(**kwargs).flat_row()
        for key, value in flat.items():
            if key == "elapsed_s":
                continue
            if value is None:
                assert pd.isna(row[key]), key
            elif row["method"] == "exact" and isinstance(value, float):
                # a sweep solves its small exact battles together (solve_many), summing each
                # battle's means in another order: the same numbers to rounding
                assert row[key] == pytest.approx(value, rel=1e-12, abs=1e-12), key
            else:  # Monte Carlo rows are solved one by one: the same counts, the same floats
                assert row[key] == value, key


def test_derived_seed_is_the_documented_formula():
    assert derived_seed(2024, 2) == int(np.random.SeedSequence(2024, spawn_key=(2,))
                                        .generate_state(1, np.uint64)[0]) >> 1
    seeds = {derived_seed(1, i) for i in range(1000)}
    assert len(seeds) == 1000 and all(0 <= s < 2**63 for s in seeds)


def test_same_sweep_seed_same_numbers_other_seed_other_numbers():
    battles = [{"rules": "revised", "attacker": "3 inf", "defender": "3 inf", "method": "mc",
                "trials": 5000}]
    first = battlecalc.sweep(battles, vary="attacker.infantry=3,4", seed=9, workers=1)
    again = battlecalc.sweep(battles, vary="attacker.infantry=3,4", seed=9, workers=1)
    other = battlecalc.sweep(battles, vary="attacker.infantry=3,4", seed=10, workers=1)
    pd.testing.assert_frame_equal(comparable(first), comparable(again))
    assert (first["attacker_win"] != other["attacker_win"]).all()
    assert first.attrs["seed"] == 9


def test_unseeded_sweep_reports_its_seed():
    battles = [{"rules": "revised", "attacker": "2 inf", "defender": "2 inf", "method": "mc",
                "trials": 2000}]
    table = battlecalc.sweep(battles, workers=1)
    assert table.loc[0, "seed"] == derived_seed(table.attrs["seed"], 0)


def test_a_table_without_rules_is_refused():
    with pytest.raises(BattleInputError, match="battles need a 'rules' column"):
        battlecalc.sweep([{"attacker": "1 inf", "defender": "1 inf"}], workers=1)
    table = battlecalc.sweep([{"attacker": "1 inf", "defender": "1 inf"}], vary="rules=revised",
                             workers=1)
    assert table.loc[0, "attacker_win"] == pytest.approx(1 / 4, abs=1e-12)


def test_empty_table_gives_an_empty_result():
    table = battlecalc.sweep(pd.DataFrame(columns=["rules", "attacker", "defender"]), workers=1)
    assert len(table) == 0 and list(table.columns) == ["rules", "attacker", "defender", "error"]


# ----------------------------------------------------------------------------- where it runs

@pytest.mark.slow
def test_worker_processes_give_the_same_table(local_table):
    # chunks of 2 on 2 processes: rows come back out of order and are put back in place
    pooled = battlecalc.sweep(BATTLES, seed=2024, workers=2, chunk_size=2)
    pd.testing.assert_frame_equal(comparable(pooled), comparable(local_table),
                                  check_exact=True)


@pytest.fixture(scope="module")
def dask_cluster():
    distributed = pytest.importorskip("distributed")
    # two workers on loopback TCP, as threads of this process: tasks and results still
    # travel serialized over the sockets, and the workers find numba's kernels already loaded
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  host="127.0.0.1", protocol="tcp://", dashboard_address=None,
                                  worker_dashboard_address=None) as cluster:
        yield cluster


@pytest.mark.slow
def test_dask_cluster_gives_the_same_table(dask_cluster, local_table):
    by_address = battlecalc.sweep(BATTLES, seed=2024, scheduler=dask_cluster.scheduler_address,
                                  chunk_size=3)
    pd.testing.assert_frame_equal(comparable(by_address), comparable(local_table),
                                  check_exact=True)


@pytest.mark.slow
def test_dask_client_and_cli_give_the_same_numbers(dask_cluster, tmp_path):
    from distributed import Client

    battles = [{"rules": "1942-2e", "attacker": "2 inf 1 art", "defender": "2 inf",
                "method": "mc", "trials": 4000}]
    vary = ["attacker.infantry=1..6", "defender.infantry=1,2"]
    local = battlecalc.sweep(battles, vary=vary, seed=5, workers=1)
    with Client(dask_cluster) as client:
        remote = battlecalc.sweep(battles, vary=vary, seed=5, scheduler=client)
    pd.testing.assert_frame_equal(comparable(remote), comparable(local), check_exact=True)
    source = tmp_path / "battles.csv"
    pd.DataFrame(battles).to_csv(source, index=False)
    out = tmp_path / "out.csv"
    result = invoke("sweep", str(source), "-o", str(out), "--seed", "5",
                    "--scheduler", dask_cluster.scheduler_address,
                    "--vary", vary[0], "--vary", vary[1])
    assert result.exit_code == 0, result.output
    from_cli = pd.read_csv(out)
    assert list(from_cli["attacker_win"]) == list(local["attacker_win"])
    assert list(from_cli["seed"]) == list(local["seed"])


def test_unreachable_scheduler_is_an_input_error(monkeypatch):
    pytest.importorskip("distributed")
    monkeypatch.setattr(sys.modules["battlecalc.sweeper"], "CONNECT_TIMEOUT_S", 1)
    with pytest.raises(BattleInputError, match="cannot reach the Dask scheduler"):
        battlecalc.sweep(BATTLES.head(1), scheduler="tcp://127.0.0.1:9")


# ----------------------------------------------------------------------------- files

def test_csv_round_trip_keeps_every_number(local_table, tmp_path):
    path = tmp_path / "out.csv"
    write_table(local_table, path)
    back = pd.read_csv(path)
    assert list(back.columns) == list(local_table.columns)
    for column in ("attacker_win", "tuv_swing", "seed", "trials"):
        assert back[column].tolist() == pytest.approx(
            local_table[column].astype("float64").tolist(), rel=0, abs=0, nan_ok=True)


def test_parquet_round_trip(local_table, tmp_path):
    path = tmp_path / "out.parquet"
    write_table(local_table, path)
    back = pd.read_parquet(path)
    assert list(back.columns) == list(local_table.columns)
    assert len(back) == len(local_table)
    for column in local_table.columns:
        for ours, theirs in zip(local_table[column], back[column], strict=True):
            if pd.isna(ours):
                assert pd.isna(theirs), column
            elif column == "sea":  # bools next to a cell that failed to convert: text
                assert str(ours) == str(theirs)
            else:
                assert ours == theirs, column
    assert back["seed"].dropna().astype("int64").tolist() == [11, derived_seed(2024, 2)]


def test_parquet_input_with_typed_columns(tmp_path):
    typed = pd.DataFrame({
        "rules": ["revised", "1942-2e"], "attacker": ["1 inf", "2 inf 1 art"],
        "defender": ["1 inf", "2 inf"], "sea": [False, False],
        "trials": pd.array([None, 3000], dtype="Int64"), "method": ["exact", "mc"],
        "seed": pd.array([None, 2**62 + 1], dtype="Int64"),
        "retreat_below": [np.nan, np.nan], "attacker.infantry": pd.array([None, 3], "Int64"),
    })
    source = tmp_path / "battles.parquet"
    typed.to_parquet(source, index=False)
    table = battlecalc.sweep(source, workers=1)
    assert table["error"].isna().all()
    assert table.loc[0, "attacker_win"] == pytest.approx(1 / 4, abs=1e-12)
    assert table.loc[1, "seed"] == 2**62 + 1  # exact, not through a float
    assert table.loc[1, "attacker"] == "3 infantry, 1 artillery"
    expected = simulate(rules="1942-2e", attacker="3 inf 1 art", defender="2 inf", method="mc",
                        trials=3000, seed=2**62 + 1)
    assert table.loc[1, "attacker_win"] == expected.attacker_win
    as_csv = tmp_path / "battles.csv"
    typed.to_csv(as_csv, index=False)
    pd.testing.assert_frame_equal(comparable(battlecalc.sweep(as_csv, workers=1)),
                                  comparable(table), check_dtype=False)


def test_write_is_atomic(local_table, tmp_path, monkeypatch):
    path = tmp_path / "results.csv"
    path.write_text("previous results\n")

    def disk_full(fd):  # the temporary file is written, then the disk fills before the rename
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(BattleInputError, match="cannot write .*results.csv: No space left"):
        write_table(local_table, path)
    assert path.read_text() == "previous results\n"
    assert os.listdir(tmp_path) == ["results.csv"]  # no temporary file left behind
    monkeypatch.undo()
    write_table(local_table, path)
    assert len(pd.read_csv(path)) == len(local_table)
    assert os.listdir(tmp_path) == ["results.csv"]
    mode = stat.S_IMODE(os.stat(path).st_mode)
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o666 & ~umask


@pytest.mark.parametrize(("path", "message"), [
    ("out.txt", "cannot tell the format of"),
    ("missing/out.csv", "does not exist"),
])
def test_bad_output_paths(local_table, tmp_path, path, message):
    with pytest.raises(BattleInputError, match=message):
        write_table(local_table, tmp_path / path)


def test_bad_input_files(tmp_path):
    with pytest.raises(BattleInputError, match="no such file"):
        read_battles(tmp_path / "none.csv")
    with pytest.raises(BattleInputError, match="cannot tell the format"):
        read_battles(tmp_path / "battles.xlsx")
    broken = tmp_path / "broken.parquet"
    broken.write_text("not parquet")
    with pytest.raises(BattleInputError, match="cannot read"):
        read_battles(broken)


# ----------------------------------------------------------------------------- command line

def test_cli_writes_csv_and_counts_failures(tmp_path):
    source = tmp_path / "battles.csv"
    BATTLES.to_csv(source, index=False)
    out = tmp_path / "results.csv"
    result = invoke("sweep", str(source), "-o", str(out), "--seed", "2024",
                    "--workers", "1")
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert result.stderr == "2 of 7 battles failed (see the error column)\n"
    table = pd.read_csv(out)
    assert len(table) == 7
    assert table.loc[0, "attacker_win"] == pytest.approx(1 / 4, abs=1e-12)


def test_cli_prints_csv_without_output_and_varies(tmp_path):
    source = tmp_path / "battles.csv"
    source.write_text("rules,attacker,defender\nrevised,1 tank,2 inf\n")
    result = invoke("sweep", str(source), "-w", "1", "--vary",
                    "attacker.infantry=0..2")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("rules,attacker,defender,attacker.infantry,method,")
    assert lines[1].startswith("revised,1 tank,2 infantry,0,exact,")
    assert lines[2].startswith('revised,"1 infantry, 1 tank",2 infantry,1,exact,')
    assert lines[3].startswith('revised,"2 infantry, 1 tank",2 infantry,2,exact,')


@pytest.mark.parametrize(("args", "message"), [
    (["--vary", "attacker.infantry=9..1"],
     "Error: --vary 'attacker.infantry=9..1': empty range '9..1'\n"),
    (["-o", "results.xlsx"],
     "Error: cannot tell the format of results.xlsx: use a .csv or .parquet file\n"),
    (["--vary", "trials=1", "--vary", "trials=2"], "Error: --vary trials given more than once\n"),
])
def test_cli_bad_input_exits_2_with_one_line(tmp_path, args, message):
    source = tmp_path / "battles.csv"
    source.write_text("rules,attacker,defender\nrevised,1 inf,1 inf\n")
    result = invoke("sweep", str(source), *args)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == message


def test_cli_notes_a_misspelt_column(tmp_path):
    source = tmp_path / "battles.csv"
    source.write_text("rules,attacker,defender,atacker_ool\nrevised,1 inf,1 inf,weakest\n")
    result = invoke("sweep", str(source), "-w", "1")
    assert result.exit_code == 0
    assert "Note: column 'atacker_ool' is not an option of simulate (did you mean " \
           "'attacker_ool'?)" in result.stderr
    assert math.isclose(float(result.stdout.splitlines()[1].split(",").pop(
        result.stdout.splitlines()[0].split(",").index("attacker_win"))), 0.25)


def test_an_earlier_output_can_be_swept_again(local_table):
    again = local_table.drop(columns=["elapsed_s"]).copy()
    again.loc[0, "defender"] = "1 infantri"  # now a bad row: its old numbers must go
    again.loc[3, "defender"] = "2 infantry"  # now a good row: its old error must go
    table = battlecalc.sweep(again, seed=2024, workers=1)
    assert list(comparable(table).columns) == list(comparable(local_table).columns)
    assert table.loc[0, "error"].startswith("unknown unit 'infantri'")
    assert pd.isna(table.loc[0, "attacker_win"]) and pd.isna(table.loc[0, "tuv_swing"])
    assert pd.isna(table.loc[3, "error"])
    assert table.loc[3, "attacker_win"] == simulate(
        rules="revised", attacker="2 inf", defender="2 inf", seed=derived_seed(2024, 3)
    ).attacker_win
    same = [1, 2, 4, 6]
    pd.testing.assert_frame_equal(comparable(table).iloc[same], comparable(local_table).iloc[same],
                                  check_dtype=False)


# ----------------------------------------------------------------------------- failures, progress

def crashing_chunk(jobs):
    """Stands in for run_chunk: the worker process running the chunk of row 3 dies."""
    if any(index == 3 for index, _ in jobs):
        os._exit(1)
    return _real_run_chunk(jobs)


def failing_chunk(jobs):
    """Stands in for run_chunk: the task of the chunk of row 3 raises on the cluster."""
    if any(index == 3 for index, _ in jobs):
        raise RuntimeError("worker lost")
    return _real_run_chunk(jobs)


_real_run_chunk = run_chunk  # the genuine one, whatever a test patches into the module


SIX = [{"rules": "revised", "attacker": f"{n} inf", "defender": "1 inf", "method": "exact"}
       for n in range(1, 7)]


def check_lost_chunk(table, message):
    assert len(table) == 6  # no row lost
    lost = table["error"].notna()
    assert lost[2] and lost[3]  # chunks of two: rows 2 and 3 travel together
    assert (table.loc[lost, "error"].str.startswith(message)).all()
    assert table.loc[lost, "attacker_win"].isna().all()
    for i in table.index[~lost]:
        assert table.loc[i, "attacker_win"] == simulate(**SIX[i]).attacker_win


@pytest.mark.slow
def test_a_dead_worker_process_marks_its_rows(monkeypatch):
    monkeypatch.setattr(sys.modules["battlecalc.sweeper"], "run_chunk", crashing_chunk)
    table = battlecalc.sweep(SIX, workers=2, chunk_size=2)
    check_lost_chunk(table, "worker process died")


@pytest.mark.slow
def test_a_failed_cluster_task_marks_its_rows(dask_cluster, monkeypatch):
    monkeypatch.setattr(sys.modules["battlecalc.sweeper"], "run_chunk", failing_chunk)
    table = battlecalc.sweep(SIX, scheduler=dask_cluster.scheduler_address, chunk_size=2)
    check_lost_chunk(table, "cluster task failed: worker lost")
    assert table["error"].notna().sum() == 2


def test_progress_counts_every_row():
    calls = []
    battlecalc.sweep(SIX + [{"rules": "revised", "attacker": "1 inf", "sea": "maybe"}],
                     workers=1, chunk_size=4, progress=lambda done, total, what: calls.append(
                         (done, total, what)))
    # the bad row counts as done before any battle runs; then two chunks of 4 and 2 (and,
    # where kernels compile meanwhile, notices of no size: "compiling kernels ...")
    assert [c for c in calls if c[1]] == [(1, 7, "battles"), (5, 7, "battles"),
                                          (7, 7, "battles")]
    assert all(c[:2] == (0, 0) and c[2].startswith("compiling kernels") for c in calls
               if not c[1])


# The README's sweep (issue 43, friction 1): 21 battles, 7 of them failing, 7 by Monte Carlo
README_BATTLES = """label,rules,attacker,defender,method,trials,seed
Karelia,1942-2e,2 art 2 tank 1 ftr,5 inf 1 art 1 aa,,,
Egypt,revised,1 tank 1 bmb,2 inf 1 art 1 tank,mc,1e5,7
typo,revised,3 inf,2 infanty,,,
"""


def test_a_small_sweep_runs_in_this_process(tmp_path, monkeypatch):
    """A sweep of at most SMALL_SWEEP battles starts no worker process by default (starting
    them costs more than the sweep: on a first run the fork server compiles every kernel
    before the first battle, minutes), and gives the table of workers=1."""
    from battlecalc import sweeper

    path = tmp_path / "battles.csv"
    path.write_text(README_BATTLES.replace(",mc,1e5,7", ",mc,2e3,7"))  # (quick: 2,000 trials)
    monkeypatch.setattr(sweeper, "_run_pool", lambda *args: pytest.fail("workers started"))
    table = battlecalc.sweep(str(path), vary="attacker.infantry=0..6", seed=1)
    assert len(table) == 21 and table["error"].notna().sum() == 7
    egypt = table[table.label == "Egypt"].iloc[0]
    assert egypt["attacker_win"] == simulate(rules="revised", attacker="1 tank 1 bmb",
                                             defender="2 inf 1 art 1 tank", method="mc",
                                             trials=2000, seed=7).attacker_win
    karelia = table[table.label == "Karelia"].iloc[4]  # 4 infantry: the README's 0.919045
    assert karelia["takes_territory"] == pytest.approx(simulate(
        rules="1942-2e", attacker="4 inf 2 art 2 tank 1 ftr", defender="5 inf 1 art 1 aa"
    ).takes_territory, abs=1e-12)  # (a batch of battles sums in another order: an ulp)


COLD_SWEEP = """
import json, sys, time
import battlecalc
said = []
started = time.monotonic()
table = battlecalc.sweep(sys.argv[1], vary="attacker.infantry=0..6", seed=1,
                         progress=lambda done, total, what: said.append([done, total, what]))
print(json.dumps({"seconds": time.monotonic() - started, "said": said,
                  "failed": int(table["error"].notna().sum()), "rows": len(table)}))
"""


@pytest.mark.slow
def test_the_readme_sweep_from_an_empty_cache_starts_at_once_and_says_it_compiles(tmp_path):
    """From an empty numba cache, the README's sweep (21 battles) answers within a minute (183
    s on a 2-core machine when the fork server compiled every kernel first, its progress
    stalled at 9 of 21 without a word), saying that kernels compile as `run` does."""
    from battlecalc.kernels import jit

    path = tmp_path / "battles.csv"
    path.write_text(README_BATTLES)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    env.pop(jit.PLAIN_ENV, None)
    import subprocess

    done = subprocess.run([sys.executable, "-c", COLD_SWEEP, str(path)], capture_output=True,
                          text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["rows"] == 21 and out["failed"] == 7
    sizes = [total for _, total, _ in out["said"]]
    assert sizes[0] == 21 and sizes[-1] == 21 and out["said"][-1][0] == 21
    notices = [what for _, total, what in out["said"] if not total]
    assert notices and all(n.startswith(jit.COMPILING) for n in notices), out["said"]
