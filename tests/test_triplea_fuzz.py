"""Broken TripleA saves: byte mutations and truncations of the real saves, in the gzip layer
and in the Java object stream under it, give a save read or one clear BattleInputError
(the command line: exit 2, one ``Error:`` line), never another exception."""

from __future__ import annotations

import gzip

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from test_triplea import GLOBAL, LAND_COMBAT, SAVES, javaobj  # noqa: F401  (skips with them)

from battlecalc.errors import BattleInputError
from battlecalc.triplea import read_game

pytestmark = pytest.mark.skipif(not SAVES.is_dir(), reason="TripleA fixtures not found")

RAW = LAND_COMBAT.read_bytes() if SAVES.is_dir() else b""
STREAM = gzip.decompress(RAW) if RAW else b""
# 15 examples at a fixed seed (40 random ones before): each example reads most of a 300 kB
# object stream.  With the explicit examples below (an edit that changes nothing, so the whole
# reader runs; one in the middle of the stream; a field and a class renamed) they reach every
# line of battlecalc/triplea that three runs of 40 random examples reached (a line tracer).
FUZZ = settings(max_examples=15, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])


def _mutate(data: bytes, edits) -> bytes:
    out = bytearray(data)
    for position, value in edits:
        out[position % len(out)] = value
    return bytes(out)


edits = st.lists(st.tuples(st.integers(0, 2**31), st.integers(0, 255)), min_size=1, max_size=8)
# an edit that writes the byte already there (the save reads whole) and one that changes a byte
# in the middle of the stream
UNCHANGED = [(len(STREAM) - 1, STREAM[-1])] if STREAM else [(0, 0)]
MIDDLE = [(len(STREAM) // 2, (STREAM[len(STREAM) // 2] + 1) % 256)] if STREAM else [(0, 0)]


def _renamed(name: bytes) -> list[tuple[int, int]]:
    """An edit of the last letter of `name` where the stream first holds it (a field or class
    the reader looks for is then missing)."""
    at = STREAM.find(name)
    return [(at + len(name) - 1, ord("Q"))] if at >= 0 else [(0, 0)]


NO_FIELD = _renamed(b"unitTypeList")
NO_CLASS = _renamed(b"games.strategy.engine.data.GameData")


def _read(tmp_path, data: bytes):
    path = tmp_path / "fuzzed.tsvg"
    path.write_bytes(data)
    try:
        return read_game(path, solve=False)
    except BattleInputError as exc:
        message = str(exc)
        assert message and "\n" not in message
        return None


@FUZZ
@given(edits=edits)
def test_mutated_gzip_bytes(tmp_path, edits):
    _read(tmp_path, _mutate(RAW, edits))


@FUZZ
@given(edits=edits)
@example(edits=UNCHANGED)
@example(edits=MIDDLE)
@example(edits=NO_FIELD)
@example(edits=NO_CLASS)
def test_mutated_object_stream(tmp_path, edits):
    _read(tmp_path, gzip.compress(_mutate(STREAM, edits), compresslevel=1))


@FUZZ
@given(cut=st.integers(0, 2**31))
@example(cut=len(STREAM) // 2)
def test_truncated_object_stream(tmp_path, cut):
    _read(tmp_path, gzip.compress(STREAM[: cut % len(STREAM)], compresslevel=1))


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(edits=edits)
def test_cli_on_mutated_streams(tmp_path, edits):
    from cli_helpers import assert_usage_error, invoke

    path = tmp_path / "fuzzed.tsvg"
    path.write_bytes(gzip.compress(_mutate(STREAM, edits), compresslevel=1))
    result = invoke("game", str(path), "--method", "mc", "--trials", "2000", "--seed", "1")
    if result.exit_code != 0:
        assert_usage_error(result)
    assert "Traceback" not in result.output


@FUZZ
@given(edits=edits)
@example(edits=UNCHANGED)
@example(edits=MIDDLE)
@example(edits=NO_FIELD)
@example(edits=NO_CLASS)
def test_luck_of_mutated_streams(tmp_path, edits):
    from battlecalc.triplea.luck import read_luck

    path = tmp_path / "fuzzed.tsvg"
    path.write_bytes(gzip.compress(_mutate(STREAM, edits), compresslevel=1))
    try:
        read_luck(path)
    except BattleInputError as exc:
        assert str(exc) and "\n" not in str(exc)


@FUZZ
@given(edits=edits)
@example(edits=UNCHANGED)
@example(edits=MIDDLE)
@example(edits=NO_FIELD)
@example(edits=NO_CLASS)
def test_edition_import_of_mutated_saves(tmp_path, edits):
    from battlecalc.triplea.mapfile import import_edition

    path = tmp_path / "fuzzed.tsvg"
    path.write_bytes(gzip.compress(_mutate(STREAM, edits), compresslevel=1))
    try:
        import_edition(path, lenient=True)
    except BattleInputError as exc:
        assert str(exc) and "\n" not in str(exc)
