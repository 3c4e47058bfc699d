"""`--output`: files replaced atomically, symlinks followed, devices and FIFOs written through,
modes kept, and every bad destination refused before the battle runs (issue 10).

Everything happens in a temporary folder; the real /dev is only stat-ed, except /dev/stdout in
a subprocess whose standard output is a pipe.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import subprocess
import sys
import tempfile
import threading
import time

import pytest
from helpers import assert_usage_error, invoke

from battlecalc import output

EXACT_1V1 = ["run", "--rules", "revised", "-a", "1 inf", "-d", "1 inf", "--method", "exact",
             "--format", "json"]
ROOT = os.geteuid() == 0 if hasattr(os, "geteuid") else False
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def snapshot(folder) -> dict:
    """Every entry under `folder`: kind, mode, link target or content (the file system state)."""
    state = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            info = os.lstat(path)
            rel = os.path.relpath(path, folder)
            if stat.S_ISLNK(info.st_mode):
                state[rel] = ("link", os.readlink(path))
            elif stat.S_ISREG(info.st_mode):
                with open(path, "rb") as handle:
                    state[rel] = ("file", stat.S_IMODE(info.st_mode), handle.read())
            else:
                state[rel] = (stat.S_IFMT(info.st_mode), stat.S_IMODE(info.st_mode))
    return state


@pytest.fixture
def battle_must_not_run(monkeypatch):
    """Make any call of the engine fail the test: the refusal must come before it."""
    import battlecalc.api

    def refuse(*args, **kwargs):
        raise AssertionError("the battle ran although the destination was refused")

    monkeypatch.setattr(battlecalc.api, "simulate", refuse)


@pytest.fixture
def umask():
    """Set a umask for one test and put the old one back."""
    saved = os.umask(0o022)
    os.umask(saved)
    yield os.umask
    os.umask(saved)


def is_result(text: str) -> bool:
    return json.loads(text)["attacker_win"] == pytest.approx(0.25, abs=1e-12)


# --- regular files -----------------------------------------------------------------------------


@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600),
                                            (0o027, 0o640)])
def test_new_file_respects_the_umask(tmp_path, umask, mask, mode):
    umask(mask)
    target = tmp_path / "new.json"
    assert invoke(*EXACT_1V1, "-o", str(target)).exit_code == 0
    assert stat.S_IMODE(target.stat().st_mode) == mode
    assert is_result(target.read_text(encoding="utf-8"))
    assert [p.name for p in tmp_path.iterdir()] == ["new.json"]


@pytest.mark.parametrize("mode", [0o664, 0o600, 0o640, 0o444 if ROOT else 0o644])
def test_existing_file_keeps_its_mode(tmp_path, umask, mode):
    umask(0o077)
    target = tmp_path / "out.json"
    target.write_text("old", encoding="utf-8")
    target.chmod(mode)
    inode = target.stat().st_ino
    assert invoke(*EXACT_1V1, "-o", str(target)).exit_code == 0
    assert stat.S_IMODE(target.stat().st_mode) == mode
    assert target.stat().st_ino != inode  # replaced by a rename, not rewritten in place
    assert is_result(target.read_text(encoding="utf-8"))
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_symlink_is_followed_and_stays_a_link(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old", encoding="utf-8")
    real.chmod(0o664)
    link = tmp_path / "link.json"
    link.symlink_to("real.json")  # relative, as `ln -s` makes them
    assert invoke(*EXACT_1V1, "-o", str(link)).exit_code == 0
    assert link.is_symlink()
    assert os.readlink(link) == "real.json"
    assert is_result(real.read_text(encoding="utf-8"))
    assert stat.S_IMODE(real.stat().st_mode) == 0o664
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "real.json"]


def test_symlink_chain_into_another_folder(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    real = tmp_path / "b" / "real.json"
    real.write_text("old", encoding="utf-8")
    (tmp_path / "a" / "hop").symlink_to(real)
    (tmp_path / "a" / "link").symlink_to(tmp_path / "a" / "hop")
    assert invoke(*EXACT_1V1, "-o", str(tmp_path / "a" / "link")).exit_code == 0
    assert is_result(real.read_text(encoding="utf-8"))
    assert sorted(os.listdir(tmp_path / "a")) == ["hop", "link"]
    assert os.listdir(tmp_path / "b") == ["real.json"]  # the temporary file was renamed there
    assert (tmp_path / "a" / "link").is_symlink() and (tmp_path / "a" / "hop").is_symlink()


def test_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "link.json"
    link.symlink_to("made.json")
    assert invoke(*EXACT_1V1, "-o", str(link)).exit_code == 0
    assert link.is_symlink()
    assert is_result((tmp_path / "made.json").read_text(encoding="utf-8"))


def test_symlink_loop_is_refused(tmp_path, battle_must_not_run):
    (tmp_path / "x").symlink_to("y")
    (tmp_path / "y").symlink_to("x")
    before = snapshot(tmp_path)
    assert_usage_error(invoke(*EXACT_1V1, "-o", str(tmp_path / "x")), "symbolic links")
    assert snapshot(tmp_path) == before


def test_dash_is_standard_output(tmp_path):
    result = invoke(*EXACT_1V1, "-o", "-")
    assert result.exit_code == 0
    assert is_result(result.stdout)
    assert not os.path.exists("-")


# --- refused before the battle runs ---------------------------------------------------------


@pytest.mark.parametrize(("make", "fragment"), [
    (lambda tmp: "", "the output path is empty"),
    (lambda tmp: str(tmp), "it is a directory"),
    (lambda tmp: str(tmp / "sub") + "/", "the path names a directory"),
    (lambda tmp: str(tmp / "missing" / "out.json"), "does not exist"),
    (lambda tmp: str(tmp / "file.txt" / "out.json"), "Not a directory"),
    (lambda tmp: "/proc/x", "does not create or replace files in /proc"),
    (lambda tmp: "/sys/x", "does not create or replace files in /sys"),
    (lambda tmp: "/proc/self/status", "does not create or replace files in /proc"),
    (lambda tmp: "/dev/battlecalc-test-no-such-device", "does not create or replace files"),
    (lambda tmp: str(tmp / ("x" * 300)), "File name too long"),
], ids=["empty", "directory", "trailing-slash", "missing-folder", "file-as-folder", "proc",
        "sys", "proc-file", "new-file-in-dev", "name-too-long"])
def test_bad_destination_is_refused_before_the_battle(tmp_path, battle_must_not_run, make,
                                                      fragment):
    (tmp_path / "sub").mkdir()
    (tmp_path / "file.txt").write_text("keep", encoding="utf-8")
    before = snapshot(tmp_path)
    path = make(tmp_path)
    assert_usage_error(invoke(*EXACT_1V1, "-o", path), fragment)
    assert snapshot(tmp_path) == before
    assert not os.path.exists("/proc/x") and not os.path.exists("/sys/x")


def test_refusal_comes_before_a_huge_monte_carlo_run(tmp_path):
    # 10 billion trials would take minutes: the refusal must come first (the engine is not
    # even imported for it)
    started = time.perf_counter()
    result = invoke("run", "--rules", "revised", "-a", "10 inf 10 tank", "-d", "12 inf",
                    "--method", "mc", "--trials", "1e10", "-o", str(tmp_path / "no" / "x"))
    assert_usage_error(result, "does not exist")
    assert time.perf_counter() - started < 5


@pytest.mark.skipif(ROOT, reason="root may write into any folder")
def test_unwritable_folder_is_refused_before_the_battle(tmp_path, battle_must_not_run):
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        assert_usage_error(invoke(*EXACT_1V1, "-o", str(folder / "out.json")),
                         "Permission denied")
        assert list(folder.iterdir()) == []
    finally:
        folder.chmod(0o755)


@pytest.mark.skipif(ROOT, reason="root may write any file")
def test_read_only_file_is_refused_before_the_battle(tmp_path, battle_must_not_run):
    target = tmp_path / "out.json"
    target.write_text("old", encoding="utf-8")
    target.chmod(0o444)
    assert_usage_error(invoke(*EXACT_1V1, "-o", str(target)), "the file is read-only")
    assert target.read_text(encoding="utf-8") == "old"


def test_folder_where_no_file_can_be_created_is_refused_before_the_battle(
        tmp_path, monkeypatch, battle_must_not_run):
    # what an unwritable folder does for a user who is not root (root can write anywhere)
    def refuse(*args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    before = snapshot(tmp_path)
    line = assert_usage_error(invoke(*EXACT_1V1, "-o", str(tmp_path / "out.json")),
                            "Permission denied")
    assert line == f"Error: cannot write {tmp_path / 'out.json'}: Permission denied"
    assert snapshot(tmp_path) == before


def test_failed_battle_leaves_the_symlinked_file_untouched(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old", encoding="utf-8")
    (tmp_path / "link.json").symlink_to("real.json")
    before = snapshot(tmp_path)
    result = invoke("run", "--rules", "revised", "-a", "1 infanty", "-d", "1 inf",
                    "-o", str(tmp_path / "link.json"))
    assert_usage_error(result, "did you mean 'infantry'?")
    assert snapshot(tmp_path) == before


def test_interrupted_battle_leaves_the_file_untouched(tmp_path, monkeypatch):
    import battlecalc.api

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(battlecalc.api, "simulate", interrupted)
    target = tmp_path / "out.json"
    target.write_text("old", encoding="utf-8")
    before = snapshot(tmp_path)
    result = invoke(*EXACT_1V1, "-o", str(target))
    assert result.exit_code == 130
    assert result.stderr == "Aborted.\n"
    assert snapshot(tmp_path) == before


# --- FIFOs and character devices: written through, never replaced ---------------------------


def test_fifo_is_written_through(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []

    def read():
        with open(fifo, encoding="utf-8") as handle:
            received.append(handle.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        result = invoke(*EXACT_1V1, "-o", str(fifo))
    finally:
        if reader.is_alive() and not received:
            # the command failed before opening the FIFO: let the reader go
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            os.close(fd)
        reader.join(10)
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert is_result(received[0])
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # still the FIFO, not a file
    assert os.listdir(tmp_path) == ["pipe"]


def test_fifo_destination_is_checked_without_opening_it(tmp_path):
    # opening a FIFO blocks until a reader comes: the early check must only stat it
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    destination = output.open_destination(str(fifo))
    assert (destination.kind, destination.path) == ("through", str(fifo))


def test_real_dev_null_is_written_through_not_replaced():
    # only a stat of the real /dev/null: the destination kind decides that it is never replaced
    assert output.open_destination("/dev/null").kind == "through"
    assert output.open_destination("/dev/full").kind == "through"


def _char_device(tmp_path, name: str, minor: int):
    """A copy of /dev/null (1, 3) or /dev/full (1, 7) in tmp_path; skip where not allowed."""
    if not ROOT:
        pytest.skip("making a device node needs root")
    path = tmp_path / name
    os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, minor))
    try:
        os.close(os.open(path, os.O_WRONLY))
    except OSError:
        pytest.skip("device nodes cannot be opened here (file system mounted nodev)")
    return path


def test_character_device_is_written_through(tmp_path):
    null = _char_device(tmp_path, "null", 3)
    rdev = os.lstat(null).st_rdev
    result = invoke(*EXACT_1V1, "-o", str(null))
    assert result.exit_code == 0, result.output
    assert result.output == ""
    info = os.lstat(null)
    assert stat.S_ISCHR(info.st_mode) and info.st_rdev == rdev  # still the device node
    assert os.listdir(tmp_path) == ["null"]


def test_full_device_gives_one_error_line_and_stays(tmp_path):
    full = _char_device(tmp_path, "full", 7)
    result = invoke(*EXACT_1V1, "-o", str(full))
    assert_usage_error(result, f"cannot write {full}: No space left on device")
    assert stat.S_ISCHR(os.lstat(full).st_mode)
    assert os.listdir(tmp_path) == ["full"]


def test_symlink_to_a_character_device_is_written_through(tmp_path):
    null = _char_device(tmp_path, "null", 3)
    (tmp_path / "link").symlink_to("null")
    assert invoke(*EXACT_1V1, "-o", str(tmp_path / "link")).exit_code == 0
    assert stat.S_ISCHR(os.lstat(null).st_mode)
    assert (tmp_path / "link").is_symlink()


def test_dev_stdout_prints():
    # standard output is a pipe here: /dev/stdout resolves to it and is written through
    assert os.path.islink("/dev/stdout") or stat.S_ISCHR(os.lstat("/dev/stdout").st_mode)
    kind_before = os.lstat("/dev/stdout").st_mode
    done = subprocess.run(
        [sys.executable, "-m", "battlecalc", *EXACT_1V1, "-o", "/dev/stdout"],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert is_result(done.stdout)
    assert done.stderr == ""
    assert os.lstat("/dev/stdout").st_mode == kind_before


def test_dev_stdout_redirected_to_a_file_is_appended_to(tmp_path):
    # `battlecalc ... -o /dev/stdout >> log`: the log is written at its end, not replaced
    log = tmp_path / "log"
    log.write_text("earlier line\n", encoding="utf-8")
    inode = log.stat().st_ino
    with open(log, "a", encoding="utf-8") as handle:
        done = subprocess.run(
            [sys.executable, "-m", "battlecalc", *EXACT_1V1, "-o", "/dev/stdout"],
            cwd=REPO, stdout=handle, stderr=subprocess.PIPE, text=True, timeout=120,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    text = log.read_text(encoding="utf-8")
    assert text.startswith("earlier line\n")
    assert is_result(text.removeprefix("earlier line\n"))
    assert log.stat().st_ino == inode


# --- the module on its own --------------------------------------------------------------------


def test_write_failure_removes_the_temporary_file(tmp_path, monkeypatch):
    target = tmp_path / "out.txt"
    target.write_text("old", encoding="utf-8")
    destination = output.open_destination(str(target))

    def refuse(src, dst):
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(output.OutputError, match="cannot write .*: Invalid cross-device link"):
        destination.write("new")
    assert target.read_text(encoding="utf-8") == "old"
    assert os.listdir(tmp_path) == ["out.txt"]


def test_write_adds_the_final_newline(tmp_path):
    target = tmp_path / "out.txt"
    output.open_destination(str(target)).write("a line")
    assert target.read_text(encoding="utf-8") == "a line\n"


def test_checking_a_destination_changes_nothing(tmp_path):
    before = snapshot(tmp_path)
    output.open_destination(str(tmp_path / "new.txt"))
    assert snapshot(tmp_path) == before == {}


# --- one writer for every command (issue 16, points 2 and 16) -------------------------------
# `sweep -o` replaced a symlink, a FIFO or a device node by a regular file and reset the mode to
# 0644; `sweep X.csv -o X.csv` overwrote its input; `--plot` had a writer of its own.  Now
# run, raid, plan, units, sweep (CSV and Parquet) and --plot all go through output.py.

ONE_BATTLE_CSV = "rules,attacker,defender,method\nrevised,1 inf,1 inf,exact\n"


def sweep_args(source, *more: str) -> list[str]:
    return ["sweep", str(source), "-w", "1", "--seed", "1", *more]


def sweep_result(text: str) -> float:
    """attacker_win of the one-battle sweep (1 inf v 1 inf, Revised: exactly 1/4)."""
    from io import StringIO

    import pandas as pd

    (value,) = pd.read_csv(StringIO(text))["attacker_win"]
    return value


@pytest.fixture
def battles(tmp_path):
    path = tmp_path / "battles.csv"
    path.write_text(ONE_BATTLE_CSV, encoding="utf-8")
    return path


def read_fifo_while(fifo, call):
    """Run call() while a thread reads `fifo` to its end; (call's result, bytes read)."""
    received = []

    def read():
        with open(fifo, "rb") as handle:
            received.append(handle.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        result = call()
    finally:
        if reader.is_alive() and not received:
            try:  # the command did not open the FIFO: let the reader go
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
        reader.join(10)
    assert not reader.is_alive()
    return result, received[0] if received else b""


def test_sweep_output_symlink_stays_a_link_and_keeps_the_mode(tmp_path, battles, umask):
    umask(0o022)
    real = tmp_path / "real.csv"
    real.write_text("old\n", encoding="utf-8")
    real.chmod(0o600)
    link = tmp_path / "link.csv"
    link.symlink_to("real.csv")
    result = invoke(*sweep_args(battles, "-o", str(link)))
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and os.readlink(link) == "real.csv"
    assert stat.S_IMODE(real.stat().st_mode) == 0o600  # not reset to 0644
    assert sweep_result(real.read_text(encoding="utf-8")) == pytest.approx(0.25, abs=1e-12)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["battles.csv", "link.csv", "real.csv"]


def test_sweep_output_fifo_is_written_through(tmp_path, battles):
    fifo = tmp_path / "out.csv"
    os.mkfifo(fifo)
    result, data = read_fifo_while(fifo, lambda: invoke(*sweep_args(battles, "-o", str(fifo))))
    assert result.exit_code == 0, result.output
    assert sweep_result(data.decode("utf-8")) == pytest.approx(0.25, abs=1e-12)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_sweep_output_device_node_stays_a_device(tmp_path, battles):
    null = _char_device(tmp_path, "null.csv", 3)
    rdev = os.lstat(null).st_rdev
    result = invoke(*sweep_args(battles, "-o", str(null)))
    assert result.exit_code == 0, result.output
    info = os.lstat(null)
    assert stat.S_ISCHR(info.st_mode) and info.st_rdev == rdev
    assert sorted(os.listdir(tmp_path)) == ["battles.csv", "null.csv"]


def test_parquet_table_through_a_symlink_and_a_fifo(tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    from battlecalc.sweeper import write_table

    frame = pd.DataFrame({"attacker_win": [0.25, 0.5], "label": ["a", "b"]})
    real = tmp_path / "real.parquet"
    real.write_bytes(b"old")
    real.chmod(0o640)
    (tmp_path / "link.parquet").symlink_to("real.parquet")
    write_table(frame, tmp_path / "link.parquet")
    assert (tmp_path / "link.parquet").is_symlink()
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert pd.read_parquet(real).equals(frame)
    fifo = tmp_path / "pipe.parquet"
    os.mkfifo(fifo)
    _, data = read_fifo_while(fifo, lambda: write_table(frame, fifo))
    assert data == real.read_bytes()  # the same file, written through the FIFO
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.parametrize("how", ["same-path", "symlink", "hard-link", "dot-path"])
def test_sweep_refuses_to_write_over_its_input(tmp_path, battles, how, monkeypatch):
    import battlecalc.sweeper

    def must_not_run(*args, **kwargs):
        raise AssertionError("the sweep ran although its output was refused")

    monkeypatch.setattr(battlecalc.sweeper, "sweep", must_not_run)
    if how == "symlink":
        (tmp_path / "alias.csv").symlink_to("battles.csv")
        target = str(tmp_path / "alias.csv")
    elif how == "hard-link":
        os.link(battles, tmp_path / "alias.csv")
        target = str(tmp_path / "alias.csv")
    elif how == "dot-path":
        target = f"{tmp_path}/./battles.csv"
    else:
        target = str(battles)
    before = snapshot(tmp_path)
    line = assert_usage_error(invoke(*sweep_args(battles, "-o", target)), "it is the input file")
    assert str(battles) in line
    assert snapshot(tmp_path) == before


def test_run_refuses_to_write_over_its_rules_file(tmp_path, battle_must_not_run):
    edition = tmp_path / "custom.toml"
    text = open(os.path.join(REPO, "battlecalc", "rules", "revised.toml"), encoding="utf-8").read()
    edition.write_text(text.replace('id = "revised"', 'id = "custom"', 1), encoding="utf-8")
    before = snapshot(tmp_path)
    for command in (["run", "-a", "1 inf", "-d", "1 inf"], ["units"]):
        assert_usage_error(invoke(*command, "--rules-file", str(edition), "-o", str(edition)),
                           "it is the input file")
    assert snapshot(tmp_path) == before


@pytest.mark.slow
def test_plot_goes_through_the_one_writer(tmp_path, umask):
    pytest.importorskip("matplotlib")
    umask(0o022)
    real = tmp_path / "real.svg"
    real.write_text("old", encoding="utf-8")
    real.chmod(0o600)
    (tmp_path / "link.svg").symlink_to("real.svg")
    result = invoke(*EXACT_1V1, "--plot", str(tmp_path / "link.svg"))
    assert result.exit_code == 0, result.output
    assert (tmp_path / "link.svg").is_symlink()
    assert stat.S_IMODE(real.stat().st_mode) == 0o600
    assert real.read_text(encoding="utf-8").lstrip().startswith(("<?xml", "<svg"))
    fifo = tmp_path / "pipe.svg"
    os.mkfifo(fifo)
    result, data = read_fifo_while(fifo, lambda: invoke(*EXACT_1V1, "--plot", str(fifo)))
    assert result.exit_code == 0, result.output
    assert b"<svg" in data
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(os.listdir(tmp_path)) == ["link.svg", "pipe.svg", "real.svg"]


def test_plot_and_output_cannot_be_one_file(tmp_path, battle_must_not_run):
    pytest.importorskip("matplotlib")
    target = str(tmp_path / "odds.svg")
    assert_usage_error(invoke(*EXACT_1V1, "-o", target, "--plot", target), "it is the input file")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("length", [250, 255])
def test_a_long_legal_file_name_is_written(tmp_path, length):
    # the temporary file was named `.{name}.XXXXXXXX.tmp`: 264 characters for a 250-character
    # name, over NAME_MAX (255), refused after the battle had run
    name = "r" * (length - len(".json")) + ".json"
    result = invoke(*EXACT_1V1, "-o", str(tmp_path / name))
    assert result.exit_code == 0, result.output
    assert is_result((tmp_path / name).read_text(encoding="utf-8"))
    assert os.listdir(tmp_path) == [name]


@pytest.mark.slow
def test_a_long_legal_file_name_for_sweep_and_plot(tmp_path, battles):
    csv_name = "s" * 246 + ".csv"
    result = invoke(*sweep_args(battles, "-o", str(tmp_path / csv_name)))
    assert result.exit_code == 0, result.output
    assert sweep_result((tmp_path / csv_name).read_text("utf-8")) == pytest.approx(0.25,
                                                                                    abs=1e-12)
    pytest.importorskip("matplotlib")
    svg_name = "p" * 246 + ".svg"
    result = invoke(*EXACT_1V1, "--plot", str(tmp_path / svg_name))
    assert result.exit_code == 0, result.output
    assert sorted(os.listdir(tmp_path)) == sorted(["battles.csv", csv_name, svg_name])


def test_the_check_makes_the_same_kind_of_temporary_file_as_the_write(tmp_path, monkeypatch):
    # the early check and the write must not disagree on what can be created there
    names = []
    real = tempfile.mkstemp

    def recording(*args, **kwargs):
        fd, path = real(*args, **kwargs)
        names.append(os.path.basename(path))
        return fd, path

    monkeypatch.setattr(tempfile, "mkstemp", recording)
    target = tmp_path / ("x" * 251 + ".txt")
    output.open_destination(str(target)).write("text")
    probe, write = names
    assert len(probe) == len(write) <= 30
    assert target.read_text(encoding="utf-8") == "text\n"


def test_sweep_to_a_fifo_without_an_extension_writes_csv(tmp_path, battles):
    # a FIFO, a device or /dev/stdout has no extension to tell the format: CSV, as on stdout;
    # a regular file still needs .csv or .parquet
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    result, data = read_fifo_while(fifo, lambda: invoke(*sweep_args(battles, "-o", str(fifo))))
    assert result.exit_code == 0, result.output
    assert sweep_result(data.decode("utf-8")) == pytest.approx(0.25, abs=1e-12)
    assert_usage_error(invoke(*sweep_args(battles, "-o", str(tmp_path / "out.txt"))),
                       "cannot tell the format")
    result = invoke(*sweep_args(battles, "-o", "-"))
    assert result.exit_code == 0, result.output
    assert sweep_result(result.stdout) == pytest.approx(0.25, abs=1e-12)
