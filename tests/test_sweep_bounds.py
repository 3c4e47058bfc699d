"""battlecalc sweep, hardening: bounded grids, one value per list element, exact seeds, CSV
files with trailing commas, extra fields or a duplicated column (issue 16, points 4, 9, 10, 12,
17)."""

from __future__ import annotations

import itertools
import os
import re
import time
import tracemalloc

import pandas as pd
import pytest
from helpers import invoke
from limited import run_limited

import battlecalc
from battlecalc import BattleInputError, simulate
from battlecalc.sweeper import MAX_ROWS, convert, parse_vary, read_battles

ONE_ROW = [{"rules": "revised", "attacker": "1 inf", "defender": "1 inf", "method": "exact"}]


def _exact(attacker: str, defender: str = "1 inf", **options) -> float:
    return simulate(rules="revised", attacker=attacker, defender=defender, method="exact",
                    **options).attacker_win


# ----------------------------------------------------------------------------- point 4

@pytest.mark.parametrize("vary", [
    ["attacker.infantry=0..1000000000000"],
    ["attacker.infantry=1..100000", "defender.infantry=1..100000"],
    {"attacker.infantry": range(10**12)},
    {"attacker.infantry": itertools.count()},  # endless: never listed whole
    {"attacker.infantry": range(1, 100_001), "defender.infantry": range(1, 100_001)},
])
@pytest.mark.slow
def test_a_huge_grid_is_refused_before_it_is_built(vary):
    tracemalloc.start()
    started = time.perf_counter()
    try:
        with pytest.raises(BattleInputError, match=f"more than .*{MAX_ROWS:,}"):
            battlecalc.sweep(ONE_ROW, vary=vary, workers=1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # two lists of 100,000 counts are a few MB; the grid itself would be 10**10 rows
    assert peak < 64 * 2**20
    assert time.perf_counter() - started < 20


def test_the_row_count_is_the_product_of_the_value_counts():
    battles = ONE_ROW * 10
    vary = ["attacker.infantry=1..1000", "defender.infantry=1..101"]  # 10 x 1000 x 101 rows
    with pytest.raises(BattleInputError, match="has 1,010,000 battles after --vary"):
        battlecalc.sweep(battles, vary=vary, workers=1)


def test_cli_huge_range_is_a_usage_error(tmp_path):
    source = tmp_path / "battles.csv"
    pd.DataFrame(ONE_ROW).to_csv(source, index=False)
    result = invoke("sweep", str(source), "-w", "1",
                    "--vary", "attacker.infantry=0..1000000000000")
    assert result.exit_code == 2
    assert "Error: --vary attacker.infantry: 1,000,000,000,001 values" in result.output
    assert "Traceback" not in result.output


# ----------------------------------------------------------------------------- point 9

def test_a_list_element_is_one_value_even_with_commas():
    table = battlecalc.sweep(ONE_ROW, vary={"attacker": ["3 inf, 1 art", "2 inf"]}, workers=1)
    assert list(table["attacker"]) == ["3 infantry, 1 artillery", "2 infantry"]
    assert table["error"].isna().all()
    assert table.loc[0, "attacker_win"] == pytest.approx(_exact("3 inf 1 art"), abs=1e-12)
    assert table.loc[1, "attacker_win"] == pytest.approx(_exact("2 inf"), abs=1e-12)


def test_orders_and_techs_in_a_list_are_one_value_each():
    base = [{"rules": "1942-2e", "attacker": "1 inf 1 art 1 bomber", "defender": "3 inf",
             "method": "exact"}]
    table = battlecalc.sweep(base, vary={"attacker_ool": ["bomber,infantry,artillery"],
                                         "attacker_tech": ["improved_artillery,heavy_bombers"]},
                             workers=1)
    assert len(table) == 1
    assert table.loc[0, "error"] is None
    expected = simulate(rules="1942-2e", attacker="1 inf 1 art 1 bomber", defender="3 inf",
                        method="exact", attacker_ool="bomber,infantry,artillery",
                        attacker_tech="improved_artillery,heavy_bombers")
    assert table.loc[0, "attacker_win"] == pytest.approx(expected.attacker_win, abs=1e-12)
    # the text form still splits on commas, and on | where the text has one
    assert parse_vary("attacker_ool=bomber,infantry")[1] == ["bomber", "infantry"]
    assert parse_vary("attacker_ool=bomber,infantry|infantry")[1] == ["bomber,infantry",
                                                                       "infantry"]


def test_a_text_in_the_mapping_form_is_still_split():
    table = battlecalc.sweep(ONE_ROW, vary={"attacker.infantry": "1..3"}, workers=1)
    assert list(table["attacker.infantry"]) == [1, 2, 3]


# ----------------------------------------------------------------------------- point 12

def test_a_long_seed_in_a_cell_is_read_exactly():
    assert convert("seed", "1234567890123456789.0") == 1234567890123456789
    assert convert("seed", "1234567890123456789") == 1234567890123456789
    assert convert("trials", "1e5") == 100_000
    battles = [{"rules": "revised", "attacker": "2 inf", "defender": "2 inf", "method": "mc",
                "trials": "2000", "seed": "1234567890123456789.0"}]
    table = battlecalc.sweep(battles, workers=1)
    assert table.loc[0, "seed"] == 1234567890123456789
    expected = simulate(rules="revised", attacker="2 inf", defender="2 inf", method="mc",
                        trials=2000, seed=1234567890123456789)
    assert table.loc[0, "attacker_win"] == expected.attacker_win


@pytest.mark.parametrize("value", [1234567890123456789.0, 2.0**60, 9007199254740994.0])
def test_a_float_too_large_to_be_exact_is_refused(value):
    with pytest.raises(BattleInputError, match="too large to be exact; give it as an integer"):
        convert("seed", value)
    refused = f"sweep seed must be a whole number, got {value!r}"
    with pytest.raises(BattleInputError, match=re.escape(refused)):
        battlecalc.sweep(ONE_ROW, seed=value, workers=1)  # the sweep seed takes ints only
    # a row's float seed: that row fails, named, and nothing runs under another seed
    table = battlecalc.sweep([{**ONE_ROW[0], "seed": value}], workers=1)
    assert "seed: " in table.loc[0, "error"] and "too large to be exact" in table.loc[0, "error"]
    assert "attacker_win" not in table  # no battle ran, so no result columns


@pytest.mark.parametrize("value", [2.5, "2.5", "1e-3", "nan", "inf", "1e999999"])
def test_a_seed_that_is_not_whole_is_refused(value):
    with pytest.raises(BattleInputError, match="seed must be a whole number"):
        convert("seed", value)


def test_exact_floats_are_still_whole_numbers_in_cells():
    assert convert("seed", 2.0**53) == 2**53
    assert convert("trials", 2.5e4) == 25_000
    assert convert("trials", "2.5e4") == 25_000


# ----------------------------------------------------------------------------- points 10, 17

CLEAN = ("label,rules,attacker,defender,method\n"
         "one,revised,1 inf,1 inf,exact\n"
         "two,revised,2 inf,1 inf,exact\n"
         "three,revised,3 inf,1 inf,exact\n")


def test_rows_ending_in_a_comma_read_as_the_clean_file(tmp_path):
    clean = tmp_path / "clean.csv"
    clean.write_text(CLEAN)
    trailing = tmp_path / "trailing.csv"
    trailing.write_text("".join(line + ",\n" for line in CLEAN.splitlines()))
    rows_only = tmp_path / "rows_only.csv"  # header without the comma, rows with two
    lines = CLEAN.splitlines()
    rows_only.write_text(lines[0] + "\n" + "".join(line + ",,\n" for line in lines[1:]))
    expected = read_battles(clean)
    assert list(expected.columns) == ["label", "rules", "attacker", "defender", "method"]
    for path in (trailing, rows_only):
        pd.testing.assert_frame_equal(read_battles(path), expected)
    table = battlecalc.sweep(trailing, workers=1)
    assert table["error"].isna().all()
    assert list(table["label"]) == ["one", "two", "three"]
    for count, win in zip((1, 2, 3), table["attacker_win"], strict=True):
        assert win == pytest.approx(_exact(f"{count} inf"), abs=1e-12)


def test_a_row_with_an_extra_field_fails_alone(tmp_path):
    path = tmp_path / "battles.csv"
    lines = CLEAN.splitlines()
    lines[2] += ",surprise"
    path.write_text("\n".join(lines) + "\n")
    table = battlecalc.sweep(path, workers=1, vary="defender.infantry=1,2")
    assert len(table) == 6
    errors = list(table["error"])
    assert errors[0] is None and errors[1] is None and errors[4] is None and errors[5] is None
    for error in errors[2:4]:
        assert error == ("row 2 of battles.csv has 6 fields, the header 5 "
                         "(extra: ['surprise'])")
    assert table.loc[2, "label"] == "two"  # its cells are still shown
    assert table.loc[5, "attacker_win"] == pytest.approx(_exact("3 inf", "2 inf"), abs=1e-12)


def test_a_short_row_reads_its_missing_fields_as_empty(tmp_path):
    path = tmp_path / "battles.csv"
    path.write_text("rules,attacker,defender,method\nrevised,1 inf,1 inf\n")
    table = battlecalc.sweep(path, workers=1, seed=3)
    assert table.loc[0, "error"] is None
    assert table.loc[0, "method"] == "exact"  # auto picks exact for so small a battle


def test_a_duplicated_column_is_named(tmp_path):
    path = tmp_path / "battles.csv"
    path.write_text("rules,attacker,defender,attacker\nrevised,1 inf,1 inf,1 inf\n")
    with pytest.raises(BattleInputError,
                       match="column 'attacker' is named more than once in the header"):
        read_battles(path)
    result = invoke("sweep", str(path), "-w", "1")
    assert result.exit_code == 2
    assert result.output.endswith("column 'attacker' is named more than once in the header\n")
    assert "cannot read army" not in result.output
    frame = pd.DataFrame([["revised", "1 inf", "1 inf", "2 inf"]],
                         columns=["rules", "attacker", "defender", "defender"])
    with pytest.raises(BattleInputError, match="column 'defender' is named more than once"):
        battlecalc.sweep(frame, workers=1)


def test_an_empty_csv_is_an_input_error(tmp_path):
    path = tmp_path / "battles.csv"
    path.write_text("")
    with pytest.raises(BattleInputError, match="cannot read .*empty"):
        read_battles(path)
    header_only = tmp_path / "header.csv"
    header_only.write_text("rules,attacker,defender\n")
    assert len(battlecalc.sweep(header_only, workers=1)) == 0


# ----------------------------------------------------------------------------- issue 29, item 7
# The battles file goes through the one bounded reader (battlecalc.files): a FIFO, a device or
# a huge file is refused unread, a table of too many rows before it is built.

TEN_MILLION_ROWS = 10_000_000
ROW = "revised,1 inf,1 inf\n"  # 20 bytes: 10,000,000 of them are 200 MB


def _fifo(folder, name):
    path = folder / name
    os.mkfifo(path)
    return path


def _zero_link(folder, name):
    path = folder / name
    path.symlink_to("/dev/zero")
    return path


def _huge_sparse(folder, name):
    path = folder / name  # 200 MB that cost no disk: the size alone refuses it
    with open(path, "wb") as handle:
        handle.truncate(len(ROW) * TEN_MILLION_ROWS)
    return path


def _rows(count: int):
    def write(folder, name):
        path = folder / name
        with open(path, "w") as handle:
            handle.write("rules,attacker,defender\n")
            for _ in range(count // 100_000):
                handle.write(ROW * 100_000)
            handle.write(ROW * (count % 100_000))
        return path
    return write


NOT_REGULAR = ("not a regular file (a FIFO, device or socket: battlecalc reads a battles table "
               "from a regular file only)")


def test_a_battles_file_over_the_size_limit_is_refused_unread(tmp_path):
    path = _huge_sparse(tmp_path, "battles.csv")
    message = "200,000,000 bytes is more than a battles table needs (67,108,864 at most)"
    started = time.perf_counter()
    with pytest.raises(BattleInputError) as caught:
        read_battles(path)
    assert str(caught.value) == f"cannot read {path}: {message}"
    with pytest.raises(BattleInputError, match=re.escape(message)):
        battlecalc.sweep(path, workers=1)
    assert time.perf_counter() - started < 5


def _refused_in_bounded_memory(path, message: str) -> None:
    """`battlecalc sweep PATH` in a child process under a memory limit (a regression could
    block, or eat memory): one line, exit status 2, the message, at most 250 MB at its peak
    (python, pandas and battlecalc take about 110 MB; the refusals add at most 40 MB), within
    20 s."""
    done = run_limited("sweep", str(path), "--workers", "1", timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (
        2, "", f"Error: cannot read {path}: {message}\n"), done
    assert done.peak_rss is not None and done.peak_rss < 250 * 2**20, done.peak_rss
    assert done.seconds < 20, done.seconds


def test_a_table_of_more_rows_than_a_sweep_runs_is_refused_before_it_is_built(tmp_path):
    # 20 MB, within the size limit: refused as its rows are counted, unkept.  A list of text
    # per row would be about 300 MB more than the 250 MB the child may peak at.  (In-process
    # under tracemalloc this cost 3.4 s of CPU, the child 1.1 s; the child's peak is the whole
    # process's, pandas' C buffers included, which tracemalloc does not see.)
    _refused_in_bounded_memory(_rows(MAX_ROWS + 1)(tmp_path, "battles.csv"),
                               "more than 1,000,000 rows (a sweep runs at most 1,000,000 "
                               "battles)")


def test_a_parquet_table_of_more_rows_than_a_sweep_runs_is_refused_from_its_metadata(
        tmp_path):
    pytest.importorskip("pyarrow")
    path = tmp_path / "battles.parquet"
    pd.DataFrame({"rules": ["revised"] * (MAX_ROWS + 1)}).to_parquet(path)
    with pytest.raises(BattleInputError, match=r"more than 1,000,000 rows"):
        read_battles(path)


HOSTILE_FILES = {  # (how the file is made, its name, the message after "cannot read PATH: ")
    "a FIFO": (_fifo, "battles.csv", NOT_REGULAR),
    "a symlink to /dev/zero": (_zero_link, "battles.csv", NOT_REGULAR),
    "a FIFO named .parquet": (_fifo, "battles.parquet", NOT_REGULAR),
    "200 MB of 10,000,000 rows": (_rows(TEN_MILLION_ROWS), "battles.csv",
                                  "200,000,024 bytes is more than a battles table needs "
                                  "(67,108,864 at most)"),
    # (1,000,001 rows in 20 MB: test_a_table_of_more_rows_than_a_sweep_runs_is_refused_before_
    # it_is_built, in the quick tier)
}


@pytest.mark.parametrize(("make", "name", "message"), HOSTILE_FILES.values(), ids=HOSTILE_FILES)
def test_sweep_of_a_hostile_file_is_one_line_exit_2_in_bounded_memory(tmp_path, make, name,
                                                                        message):
    # in a child process under a memory limit (a regression could block, or eat memory):
    # before, the FIFO blocked for ever, /dev/zero and the 200 MB file ended in MemoryError
    # at 2.3 GB, the FIFO named .parquet said "no such file"
    _refused_in_bounded_memory(make(tmp_path, name), message)
