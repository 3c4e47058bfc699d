"""The exact-answer battery: every battle of tests/fixtures/battery.json solved exactly again and
compared with the answers frozen from the engine as it landed (tests/battles.py).

Scalars and survivor means must agree within TOL (absolute); the laws of survivors, TUV swing
and rounds must agree as mappings (survivor counts + IPC lost, swing value, rounds ->
probability) within TOL per entry, where an entry below NEGLIGIBLE may be missing on one side.
"""

from __future__ import annotations

import json
import math
from collections import Counter

import pytest
from battles import (
    BATTERY,
    EDITIONS,
    FIXTURE,
    PRESETS,
    RETREATS,
    SCALARS,
    SUBMERGE,
    SURVIVORS,
    kwargs_of,
)

import battlecalc

TOL = 1e-12
NEGLIGIBLE = 1e-15

with open(FIXTURE) as _handle:
    FIXTURE_DATA = json.load(_handle)
ENTRIES = FIXTURE_DATA["battles"]


def _kind(kwargs: dict) -> str:
    if kwargs.get("sea"):
        return "sea"
    return "amphibious" if kwargs.get("landing") else "land"


def _law(distribution: dict | None, key_columns: str) -> dict | None:
    """A distribution (columns + rows, or a DataFrame) as {key: probability}.

    key_columns "survivors": (nonzero (unit, count) pairs sorted, ipc_lost), so a unit column
    that is all zeros may come or go; otherwise the value of that single column."""
    if distribution is None:
        return None
    if hasattr(distribution, "columns"):  # a DataFrame from the package
        columns = [str(c) for c in distribution.columns]
        rows = [list(r) for r in distribution.itertuples(index=False, name=None)]
    else:
        columns, rows = distribution["columns"], distribution["rows"]
    p = columns.index("probability")
    law: dict = {}
    for row in rows:
        if key_columns == "survivors":
            units = tuple(sorted((c, int(v)) for c, v in zip(columns, row, strict=True)
                                 if c not in ("probability", "ipc_lost") and v != 0))
            key = (units, float(row[columns.index("ipc_lost")]))
        else:
            key = float(row[columns.index(key_columns)])
        law[key] = law.get(key, 0.0) + float(row[p])
    return law


LAWS = {
    "attacker_distribution": "survivors",
    "defender_distribution": "survivors",
    "swing_distribution": "tuv_swing",
    "rounds_distribution": "rounds",
}


def _show(key) -> str:
    """A law's key for humans: "2 infantry, 1 tank; ipc_lost 3" or the value."""
    if isinstance(key, tuple):
        units, ipc = key
        army = ", ".join(f"{n} {u}" for u, n in units) or "nothing"
        return f"{army}; ipc_lost {ipc:g}"
    return f"{key:g}"


def _compare_laws(name: str, expected: dict, got: dict, problems: list[str]) -> None:
    for key in sorted(set(expected) | set(got), key=repr):
        e, g = expected.get(key), got.get(key)
        if e is None or g is None:
            present = e if g is None else g
            if present >= NEGLIGIBLE:
                where = "missing from the result" if g is None else "not in the fixture"
                problems.append(f"{name}[{_show(key)}]: {where} (probability {present!r})")
        elif not abs(g - e) <= TOL:
            problems.append(f"{name}[{_show(key)}]: fixture {e!r}, got {g!r}, "
                            f"off by {g - e:.3g}")


def _scalar_problem(key: str, expected, got) -> str | None:
    if expected is None or got is None:
        return None if expected is got else f"{key}: fixture {expected!r}, got {got!r}"
    if not abs(float(got) - float(expected)) <= TOL:
        return (f"{key}: fixture {expected!r}, got {got!r}, "
                f"off by {float(got) - float(expected):.3g}")
    return None


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["id"] for e in ENTRIES])
def test_exact_answer_unchanged(entry):
    result = battlecalc.simulate(**entry["kwargs"], method="exact")
    expected = entry["result"]
    assert result.method == "exact"
    problems = []
    for key in SCALARS:
        problem = _scalar_problem(key, expected[key], getattr(result, key))
        if problem:
            problems.append(problem)
    for side in SURVIVORS:
        want, got = expected[side], getattr(result, side)
        if set(want) != set(got):
            problems.append(f"{side}: units {sorted(want)} in the fixture, got {sorted(got)}")
        for unit in sorted(set(want) & set(got)):
            problem = _scalar_problem(f"{side}[{unit}]", want[unit], got[unit])
            if problem:
                problems.append(problem)
    for name, key_columns in LAWS.items():
        want = _law(expected[name], key_columns)
        got = _law(getattr(result, name), key_columns)
        if want is None:
            continue  # not frozen (rounds law not requested): nothing to compare
        if got is None:
            problems.append(f"{name}: in the fixture, missing from the result")
            continue
        _compare_laws(name, want, got, problems)
    if problems:
        pytest.fail(f"battle {entry['id']}: {len(problems)} difference(s)\n  "
                    + "\n  ".join(problems))


# ---------------------------------------------------------------------------------------------
# The battery itself: nobody shrinks it silently


def test_fixture_is_the_battery_list():
    """The fixture holds exactly the battles of tests/battles.py, same kwargs."""
    assert [e["id"] for e in ENTRIES] == [b["id"] for b in BATTERY]
    for entry, battle in zip(ENTRIES, BATTERY, strict=True):
        assert entry["kwargs"] == kwargs_of(battle), entry["id"]
    assert len({e["id"] for e in ENTRIES}) == len(ENTRIES)


def test_fixture_laws_are_probability_laws():
    for entry in ENTRIES:
        result = entry["result"]
        total = sum(result[k] for k in ("attacker_win", "defender_win", "draw", "stalemate",
                                        "retreat"))
        assert math.isclose(total, 1.0, abs_tol=1e-9), entry["id"]
        for name in LAWS:
            law = _law(result[name], LAWS[name])
            if law is not None:
                assert math.isclose(sum(law.values()), 1.0, abs_tol=1e-9), (entry["id"], name)


def test_battery_covers_every_feature():
    kwargs = [e["kwargs"] for e in ENTRIES]
    assert len(kwargs) >= 300
    counts: Counter = Counter()
    for k in kwargs:
        counts[k["rules"], _kind(k)] += 1
        for side in ("attacker_ool", "defender_ool"):
            if k.get(side) in PRESETS:
                counts["preset", k[side]] += 1
            elif k.get(side):
                counts["ool", "triplea" if "^" in k[side] else "list"] += 1
        for policy in RETREATS:
            if k.get(policy) is not None and k.get(policy) is not False:
                counts["retreat", policy, _kind(k) == "sea"] += 1
                if _kind(k) == "amphibious":
                    counts["partial retreat", k["rules"]] += 1
        for side in ("attacker_submerge", "defender_submerge"):
            if side in k:
                counts["submerge", k[side]] += 1
        for side in ("attacker_tech", "defender_tech"):
            for tech in (k.get(side) or "").split(","):
                if tech:
                    counts["tech", tech, side] += 1
        for flag in ("keep_land", "aa_last", "rounds_distribution", "bombard"):
            if k.get(flag):
                counts[flag] += 1
        if k.get("landing") and not k.get("attacker"):
            counts["landing only"] += 1
        defender = k["defender"]
        if " aa" in f" {defender}" and not k.get("sea"):
            counts["aa", k["rules"]] += 1

    for edition in EDITIONS:
        for kind in ("land", "sea", "amphibious"):
            assert counts[edition, kind] >= 20, (edition, kind)
        assert counts["aa", edition] >= 10, edition
        assert counts["partial retreat", edition] >= 5, edition
    for preset in PRESETS:
        assert counts["preset", preset] >= 8, preset
    assert counts["ool", "list"] >= 8 and counts["ool", "triplea"] >= 8
    for policy in RETREATS:
        assert counts["retreat", policy, False] >= 5, policy
        if policy != "retreat_when_only_air":
            assert counts["retreat", policy, True] >= 3, ("sea", policy)
    for policy in SUBMERGE:
        assert counts["submerge", policy] >= 10, policy
    for tech, side in (("heavy_bombers", "attacker_tech"), ("jets", "attacker_tech"),
                       ("jets", "defender_tech"), ("super_subs", "attacker_tech"),
                       ("combined_bombardment", "attacker_tech")):
        assert counts["tech", tech, side] >= 3, (tech, side)
    for flag in ("keep_land", "aa_last", "rounds_distribution", "bombard", "landing only"):
        assert counts[flag] >= 5, flag
