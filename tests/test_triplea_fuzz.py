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

# (the slow tier: every test fuzzes, tests/tiers.py)
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


def _stream_examples(test):
    """The fixed-seed fuzz of the object stream, with the explicit edits above."""
    for chosen in (NO_CLASS, NO_FIELD, MIDDLE, UNCHANGED):
        test = example(edits=chosen)(test)
    return FUZZ(given(edits=edits)(test))


def _mutated_stream(edits) -> bytes:
    """The save with `edits` made in its object stream, gzipped again."""
    return gzip.compress(_mutate(STREAM, edits), compresslevel=1)


def _read(tmp_path, data: bytes, read=lambda path: read_game(path, solve=False)):
    """read(path) of `data` written as a save: its answer, or None after one clear error."""
    path = tmp_path / "fuzzed.tsvg"
    path.write_bytes(data)
    try:
        return read(path)
    except BattleInputError as exc:
        message = str(exc)
        assert message and "\n" not in message
        return None


@FUZZ
@given(edits=edits)
def test_mutated_gzip_bytes(tmp_path, edits):
    _read(tmp_path, _mutate(RAW, edits))


@_stream_examples
def test_mutated_object_stream(tmp_path, edits):
    _read(tmp_path, _mutated_stream(edits))


@FUZZ
@given(cut=st.integers(0, 2**31))
@example(cut=len(STREAM) // 2)
def test_truncated_object_stream(tmp_path, cut):
    _read(tmp_path, gzip.compress(STREAM[: cut % len(STREAM)], compresslevel=1))


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(edits=edits)
def test_cli_on_mutated_streams(tmp_path, edits):
    from helpers import assert_usage_error, invoke

    path = tmp_path / "fuzzed.tsvg"
    path.write_bytes(_mutated_stream(edits))
    result = invoke("game", str(path), "--method", "mc", "--trials", "2000", "--seed", "1")
    if result.exit_code != 0:
        assert_usage_error(result)
    assert "Traceback" not in result.output


@_stream_examples
def test_luck_of_mutated_streams(tmp_path, edits):
    from battlecalc.triplea.luck import read_luck

    _read(tmp_path, _mutated_stream(edits), read_luck)


@_stream_examples
def test_edition_import_of_mutated_saves(tmp_path, edits):
    from battlecalc.triplea.mapfile import import_edition

    _read(tmp_path, _mutated_stream(edits), lambda path: import_edition(path, lenient=True))
