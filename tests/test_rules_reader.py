"""The one reader of edition files named by a path (issue 16, points 1 and 3): regular files only,
at most 1 MB, a FIFO or a device refused unread, for the file itself and for every `base =`
below it; through load_rules_file, load_rules, simulate and --rules-file alike.

Everything happens in temporary folders; of the real /dev, /dev/null and /dev/zero are stat-ed
only.  A FIFO test runs its call in a thread with a deadline and lets a blocked reader go
afterwards, so that a regression fails the test instead of hanging the suite.
"""

from __future__ import annotations

import os
import stat
import threading
import time
import tracemalloc
from importlib import resources
from pathlib import Path

import pytest
from helpers import assert_usage_error, invoke

import battlecalc
from battlecalc.rules import (
    MAX_BASE_DEPTH,
    MAX_RULES_FILE_BYTES,
    RulesFileError,
    load_rules,
    load_rules_file,
    read_rules_file,
)

ROOT = os.geteuid() == 0 if hasattr(os, "geteuid") else False
GIGABYTE = 2**30


def revised_text(new_id: str = "custom") -> str:
    text = (Path(str(resources.files("battlecalc.rules"))) / "revised.toml").read_text("utf-8")
    return "\n".join(f'id = "{new_id}"' if line.startswith("id = ") else line
                     for line in text.splitlines()) + "\n"


def on_base(base: str, new_id: str = "child") -> str:
    """An edition file that states nothing but its id and its base."""
    return f'format = 1\nid = "{new_id}"\nname = "{new_id}"\nbase = "{base}"\n'


def finishes(call, seconds: float = 10.0):
    """call() in a thread: its result or exception, or a failure after `seconds` (a FIFO open
    that blocks).  Any reader still blocked on a FIFO under tmp is let go by the fixture."""
    box: dict = {}

    def target():
        try:
            box["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still blocked after {seconds} s (a FIFO was opened?)"
    if "error" in box:
        raise box["error"]
    return box.get("value")


@pytest.fixture
def fifo(tmp_path):
    """A FIFO named like an edition file; afterwards any reader blocked on it is let go."""
    path = tmp_path / "rules.toml"
    os.mkfifo(path)
    yield path
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))  # succeeds only if one waits
    except OSError:
        pass


@pytest.fixture
def sparse_gigabyte(tmp_path):
    """A 1 GB file of zeros that takes no disk space (sparse), named like an edition file."""
    path = tmp_path / "huge.toml"
    with open(path, "wb") as handle:
        handle.truncate(GIGABYTE)
    assert path.stat().st_size == GIGABYTE
    return path


def _device(tmp_path):
    """A character device to name: a copy of /dev/zero (endless) where mknod is allowed (root),
    else the real /dev/zero, which is only stat-ed."""
    if ROOT:
        path = tmp_path / "zero.toml"
        try:
            os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 5))
            return path
        except OSError:
            pass
    return Path("/dev/zero")


# --- the reader ------------------------------------------------------------------------------


def test_a_fifo_is_refused_without_being_opened(fifo):
    with pytest.raises(RulesFileError, match="not a regular file"):
        finishes(lambda: read_rules_file(fifo))
    with pytest.raises(RulesFileError, match=f"{fifo}: not a regular file"):
        finishes(lambda: load_rules_file(fifo))


def test_a_fifo_is_refused_by_simulate_and_load_rules(fifo):
    with pytest.raises(RulesFileError, match="not a regular file"):
        finishes(lambda: load_rules(str(fifo)))
    with pytest.raises(RulesFileError, match="not a regular file"):
        finishes(lambda: battlecalc.simulate(rules=str(fifo), attacker="1 inf",
                                             defender="1 inf", method="exact"))


def test_a_symlink_to_a_fifo_is_refused(tmp_path, fifo):
    link = tmp_path / "link.toml"
    link.symlink_to(fifo.name)
    with pytest.raises(RulesFileError, match="not a regular file"):
        finishes(lambda: load_rules_file(link))


def test_a_symlink_to_an_edition_file_is_read(tmp_path):
    real = tmp_path / "real.toml"
    real.write_text(revised_text("linked"), encoding="utf-8")
    (tmp_path / "link.toml").symlink_to("real.toml")
    assert load_rules_file(tmp_path / "link.toml").id == "linked"


def test_a_gigabyte_file_is_refused_unread(sparse_gigabyte):
    tracemalloc.start()
    started = time.perf_counter()
    try:
        with pytest.raises(RulesFileError) as info:
            load_rules_file(sparse_gigabyte)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert str(info.value) == (f"{sparse_gigabyte}: {GIGABYTE:,} bytes is more than an edition "
                               f"file needs ({MAX_RULES_FILE_BYTES:,} at most)")
    assert peak < 200_000  # nothing of the file was read (the whole file: 1,073,741,824)
    assert time.perf_counter() - started < 2


def test_the_cap_is_exact(tmp_path):
    at_cap = tmp_path / "at-cap.toml"
    text = revised_text("padded")
    at_cap.write_text(text + "#" * (MAX_RULES_FILE_BYTES - len(text.encode()) - 1) + "\n",
                      encoding="utf-8")
    assert at_cap.stat().st_size == MAX_RULES_FILE_BYTES
    assert load_rules_file(at_cap).id == "padded"
    over = tmp_path / "over.toml"
    over.write_bytes(at_cap.read_bytes() + b"\n")
    with pytest.raises(RulesFileError, match="1,000,001 bytes is more than"):
        load_rules_file(over)


def test_a_device_is_refused_unread(tmp_path):
    device = _device(tmp_path)
    with pytest.raises(RulesFileError, match="not a regular file .a FIFO, device or socket"):
        finishes(lambda: load_rules_file(device))
    with pytest.raises(RulesFileError, match="not a regular file"):
        load_rules_file("/dev/null")


def test_a_folder_is_refused(tmp_path):
    (tmp_path / "folder.toml").mkdir()
    with pytest.raises(RulesFileError, match=r"not a regular file \(a folder"):
        load_rules_file(tmp_path / "folder.toml")


def test_a_file_that_grows_past_the_cap_after_the_check_is_not_read_whole(tmp_path,
                                                                          monkeypatch):
    # what a /proc file does (it says 0 bytes) or a file appended to between stat and read:
    # the read itself stops at the cap
    path = tmp_path / "growing.toml"
    path.write_bytes(b"#" * (3 * MAX_RULES_FILE_BYTES))
    def says_empty(real):
        def call(*args, **kwargs):
            info = real(*args, **kwargs)
            return os.stat_result((*info[:6], 0, *info[7:]))  # st_size is field 6
        return call

    monkeypatch.setattr(os, "fstat", says_empty(os.fstat))
    monkeypatch.setattr(os, "stat", says_empty(os.stat))
    with pytest.raises(RulesFileError, match="more than 1,000,000 bytes"):
        read_rules_file(path)


# --- base = "file": the same reader ---------------------------------------------------------


def test_a_gigabyte_base_file_is_refused_unread(tmp_path, sparse_gigabyte):
    child = tmp_path / "child.toml"
    child.write_text(on_base(sparse_gigabyte.name), encoding="utf-8")
    tracemalloc.start()
    try:
        with pytest.raises(RulesFileError) as info:
            load_rules_file(child)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "more than an edition file needs" in str(info.value)
    assert str(sparse_gigabyte) in str(info.value)  # the message names the base file
    assert peak < 200_000


def test_a_fifo_base_file_is_refused(tmp_path, fifo):
    child = tmp_path / "child.toml"
    child.write_text(on_base(fifo.name), encoding="utf-8")
    with pytest.raises(RulesFileError, match="not a regular file"):
        finishes(lambda: load_rules_file(child))


def test_a_device_base_file_is_refused(tmp_path):
    child = tmp_path / "child.toml"
    child.write_text(on_base(str(_device(tmp_path))), encoding="utf-8")
    with pytest.raises(RulesFileError, match="not a regular file"):
        finishes(lambda: load_rules_file(child))


def test_a_base_file_is_still_read(tmp_path):
    (tmp_path / "parent.toml").write_text(revised_text("parent"), encoding="utf-8")
    (tmp_path / "child.toml").write_text(on_base("parent.toml"), encoding="utf-8")
    ruleset = load_rules_file(tmp_path / "child.toml")
    assert ruleset.id == "child"
    assert ruleset.units == load_rules("revised").units


def test_a_cycle_through_other_spellings_of_one_file_is_refused(tmp_path):
    # a.toml -> ./a.toml -> ././a.toml ...: one file, so one cycle (before: a recursion that
    # read the file again at every level)
    (tmp_path / "a.toml").write_text(on_base("./a.toml", "a"), encoding="utf-8")
    with pytest.raises(RulesFileError, match="is a cycle"):
        load_rules_file(tmp_path / "a.toml")


def test_a_chain_of_bases_is_bounded(tmp_path):
    depth = MAX_BASE_DEPTH + 2
    (tmp_path / f"e{depth}.toml").write_text(revised_text(f"e{depth}"), encoding="utf-8")
    for level in range(depth):
        (tmp_path / f"e{level}.toml").write_text(on_base(f"e{level + 1}.toml", f"e{level}"),
                                                 encoding="utf-8")
    with pytest.raises(RulesFileError, match=f"more than {MAX_BASE_DEPTH} files deep"):
        load_rules_file(tmp_path / "e0.toml")
    # a chain within the bound loads
    assert load_rules_file(tmp_path / f"e{depth - MAX_BASE_DEPTH + 1}.toml").units == \
        load_rules("revised").units


# --- --rules-file: the same reader, one error line -----------------------------------------


def test_cli_rules_file_fifo_gigabyte_and_device(tmp_path, fifo, sparse_gigabyte):
    for path, fragment in [(fifo, "not a regular file"),
                           (sparse_gigabyte, "more than an edition file needs"),
                           (_device(tmp_path), "not a regular file")]:
        result = finishes(lambda p=path: invoke("units", "--rules-file", str(p)))
        assert_usage_error(result, fragment)


def test_cli_rules_file_whose_base_is_a_gigabyte(tmp_path, sparse_gigabyte):
    child = tmp_path / "child.toml"
    child.write_text(on_base(sparse_gigabyte.name), encoding="utf-8")
    assert_usage_error(invoke("units", "--rules-file", str(child)),
                       "more than an edition file needs")
