"""One reader for every input file named by a path (battlecalc.files): edition files, TripleA
saves and maps.  A FIFO, a device, a folder or a huge file is refused unread, with one line."""

from __future__ import annotations

import os

import pytest
from helpers import assert_usage_error, invoke

from battlecalc.errors import BattleInputError
from battlecalc.files import read_input, read_regular_file


@pytest.fixture
def odd_files(tmp_path):
    fifo = tmp_path / "x.tsvg"
    os.mkfifo(fifo)  # opening it for reading would block until a writer came
    huge = tmp_path / "huge.xml"
    with open(huge, "wb") as f:
        f.truncate(2**30)  # sparse: 1 GiB that costs nothing
    folder = tmp_path / "folder.tsvg"
    folder.mkdir()
    return {"FIFO": fifo, "1 GiB": huge, "folder": folder, "device": "/dev/zero"}


def test_the_reader_refuses_what_is_not_a_small_regular_file(odd_files, tmp_path):
    fine = tmp_path / "fine.txt"
    fine.write_bytes(b"12345")
    assert read_regular_file(fine, 5, "a test file") == b"12345"
    with pytest.raises(BattleInputError, match="more than a test file needs"):
        read_regular_file(fine, 4, "a test file")
    for path in odd_files.values():
        with pytest.raises(BattleInputError, match="not a regular file|more than"):
            read_input(path, 1 << 20, "a test file")
        with pytest.raises(BattleInputError, match=f"cannot read {path}"):
            read_input(path, 1 << 20, "a test file")
    with pytest.raises(BattleInputError, match="cannot read .*missing"):
        read_input(tmp_path / "missing", 10, "a test file")


@pytest.mark.parametrize("command", [("game",), ("luck",), ("edition", "import")])
def test_triplea_commands_refuse_odd_files_with_one_line(odd_files, tmp_path, command):
    for path in odd_files.values():
        extra = ("-o", str(tmp_path / "out.toml")) if command[0] == "edition" else ()
        assert_usage_error(invoke(*command, str(path), *extra), "cannot read")
