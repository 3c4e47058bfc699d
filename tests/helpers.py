"""Helpers of the tests that compare two paths of the exact solver (tests/test_land_sweep.py,
test_sea_walk.py, test_sea_memo.py, test_compact_table.py, test_fire_lists.py): a battle's
compiled tables as simulate builds them, every number of a result, the comparison of two
results to 1e-12, the units of random sea armies, random armies and the ids of parametrized
battles."""

from __future__ import annotations

import random

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


SEA_EDITIONS = ("1942-2e", "revised", "classic", "aa50", "1940-2e")
SEA_UNITS = ("battleship", "cruiser", "destroyer", "submarine", "carrier", "fighter", "bomber",
             "transport")


def sea_units(edition: str) -> list[str]:
    """The units of SEA_UNITS that the edition has, in that order (what random sea armies of
    test_sea_memo and test_fire_lists are drawn from)."""
    units = battlecalc.load_rules(edition).units
    return [unit for unit in SEA_UNITS if unit in units]


def random_army(rng: random.Random, units: list[str], size: int, subs: int = 0) -> str:
    """Army notation of `size` units drawn from `units` (and `subs` submarines first)."""
    counts = {"submarine": subs} if subs else {}
    for _ in range(size):
        unit = rng.choice(units)
        counts[unit] = counts.get(unit, 0) + 1
    return ", ".join(f"{n} {unit}" for unit, n in counts.items())


def battle_id(battle: dict) -> str:
    """A parametrized battle's test id: edition, both armies, its first extra option."""
    side = lambda force: "+".join(f"{c}{n[:4]}" for n, c in force.items())  # noqa: E731
    extra = [k for k in battle if k not in ("rules", "attacker", "defender", "sea", "method")]
    return f"{battle['rules']}:{side(battle['attacker'])}-v-{side(battle['defender'])}" + (
        f"-{extra[0]}" if extra else "")
