"""Helpers of the tests that compare two paths of the exact solver (tests/test_land_sweep.py,
test_sea_walk.py, test_sea_memo.py): a battle's compiled tables as simulate builds them, every
number of a result, and the comparison of two results to 1e-12."""

from __future__ import annotations

import pytest

import battlecalc
from battlecalc import api


def compiled_tables(battle: dict):
    """The battle's compiled tables, as an exact simulate builds them (plans forgotten before
    and after, so that the tables are built anew and kept by no later call)."""
    seen = {}
    compile_battle = api.compile_battle

    def keep(*args, **kwargs):
        seen["compiled"] = compile_battle(*args, **kwargs)
        return seen["compiled"]

    api.forget_compiled()
    try:
        api.compile_battle = keep
        battlecalc.simulate(**{**battle, "method": "exact"})
    finally:
        api.compile_battle = compile_battle
        api.forget_compiled()
    return seen["compiled"]


def answers(result) -> dict:
    """Every number of a result's dict (IPC means divided by 100, so that 1e-12 is about the
    same relative bound as for probabilities; timings left out)."""
    flat = {}

    def walk(path, value):
        if isinstance(value, dict):
            for key, item in value.items():
                walk(f"{path}.{key}", item)
        elif isinstance(value, list | tuple):
            for i, item in enumerate(value):
                walk(f"{path}[{i}]", item)
        elif not isinstance(value, float):
            flat[path] = value
        elif not path.endswith("_s"):
            flat[path] = value / 100 if "ipc" in path or "swing" in path else value

    walk("", result.to_dict())
    return flat


def assert_same(got: dict, expected: dict) -> None:
    """Two answers() with the same keys, every float within 1e-12, everything else equal."""
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        if isinstance(value, float):
            assert got[key] == pytest.approx(value, rel=0, abs=1e-12), key
        else:
            assert got[key] == value, key
