"""The compiled side-table builder (kernels/builder.py, compile._built_side) builds every
array of every side equal, to the last bit, to the Python builder (compile._python_side) and
to the reference rebuild (tests/side_reference.py): on the battles of the side-cache battery
and on a random battery of every dice edition (land, AA, sea with the subs / aircraft split,
submerging, amphibious assaults with bombardment and partial retreats, low luck, technologies,
every preset, sections, keep_land, aa_last, battles that start where they stand), whether its
law bank is empty, warm or emptied midway; and it refuses a side too large as the Python
builder does."""

from __future__ import annotations

import numpy as np
import pytest
from battles import BUILDER_FIXED, builder_random
from helpers import assert_same_side, side_specs
from side_reference import reference_build_side

from battlecalc import BattleInputError, api
from battlecalc.batch import _battle_arguments
from battlecalc.compile import sides as compile_module
from battlecalc.kernels import jit
from battlecalc.spec import simulate_spec

EDITIONS = ("revised", "1942-2e", "1940-2e", "aa50", "classic")


def _assert_same(side, want) -> None:
    """assert_same_side, and the hit combinations' mean the builder sums (where exact)."""
    assert_same_side(side, want)
    kept = side.__dict__.get("mean_hit_combinations")
    if kept is not None:
        assert kept == compile_module.Side.mean_hit_combinations.func(want)


# the random battery: 60 battles in the quick tier, the full 400 in the slow tier (every test
# of the battery runs on both)
@pytest.fixture(scope="module", params=[
    60, pytest.param(400, marks=pytest.mark.slow(reason="the full random battery"))])
def specs(request):
    jit.compiled()
    found = side_specs(BUILDER_FIXED + builder_random(2026, request.param),
                       refused_left_out=True)
    # the battery spans what the builder takes
    assert any(len(s.blocks) > 1 for s in found)  # AA outcomes or partial retreats
    assert any(b[3] is not None for s in found for b in s.blocks)  # stayers' blocks
    assert any(s.submerge for s in found)
    assert any(all(s.split) for s in found)
    assert any(s.dice_model == "low_luck" for s in found)
    assert any(s.order.sections for s in found)
    assert any(s.order.keep_land for s in found)
    assert any(s.order.aa_last for s in found)
    assert any(s.order.preset == "smart" for s in found)
    assert any(s.order.preset == "weakest" for s in found)
    assert any(s.order.chosen for s in found)
    assert any(s.ruleset.supports and s.role == "attack" for s in found)
    assert len({s.ruleset.id for s in found}) == len(EDITIONS)
    return found


def test_compiled_builder_equals_the_python_builder(specs):
    compile_module.forget_laws()
    built = 0
    for spec in specs:
        want = compile_module._python_side(spec)
        side = compile_module._built_side(spec)
        if side is None:  # (casualties chosen already, a battleship among them)
            assert spec.order.chosen
            side = compile_module._new_side(spec)
        else:
            built += 1
        _assert_same(side, want)
    assert built >= len(specs) - 5
    assert all("mean_hit_combinations" in compile_module._built_side(s).__dict__
               for s in specs[:50])


def test_the_reference_builds_the_same(specs):
    for spec in specs[::4]:
        _assert_same(compile_module._new_side(spec), reference_build_side(spec))


def test_law_bank_cold_warm_and_emptied(specs, monkeypatch):
    sample = specs[::7]
    compile_module.forget_laws()
    cold = [compile_module._built_side(s) for s in sample]
    warm = [compile_module._built_side(s) for s in sample]
    monkeypatch.setattr(compile_module, "MAX_BANK_LAWS", 8)  # emptied many times over
    compile_module.forget_laws()
    emptied = [compile_module._built_side(s) for s in sample]
    compile_module.forget_laws()
    for spec, *sides in zip(sample, cold, warm, emptied, strict=True):
        want = compile_module._python_side(spec)
        for side in sides:
            if side is not None:
                _assert_same(side, want)


def test_forget_compiled_keeps_the_banks_but_builds_anew(specs):
    spec = next(s for s in specs if len(s.blocks) > 1)
    api.forget_compiled()  # (built here, whatever an earlier test kept)
    first = compile_module.build_side(spec)
    api.forget_compiled()
    assert compile_module._banks  # (the laws of dice, as dice.hit_distribution keeps them)
    again = compile_module.build_side(spec)
    assert again is not first
    _assert_same(again, compile_module._python_side(spec))


def test_too_large_is_refused_as_by_the_python_builder():
    battle, _ = simulate_spec(_battle_arguments(dict(
        rules="1942-2e", attacker="3 inf", defender="3 inf", method="exact")))
    force = (("artillery", 1000), ("infantry", 1000), ("tank", 1000))
    spec = compile_module._SideSpec(battle.attacker_rules, "attack", battle.attacker_order,
                                    (False, False), False, ((1.0, force, 0, None),))
    jit.compiled()
    with pytest.raises(BattleInputError) as built:
        compile_module._built_side(spec)
    with pytest.raises(BattleInputError) as python:
        compile_module._python_side(spec)
    assert str(built.value) == str(python.value)


def test_merged_walks_by_the_kernel_as_by_numpy(specs, monkeypatch):
    """solver.tables.merged_walks (a side of several blocks of single walks: land after AA
    fire) gives the same merge and sweep by its kernel as by numpy."""
    from battlecalc.solver import tables

    sides = [compile_module._python_side(s) for s in specs]
    kernel = [tables.merged_walks(side) for side in sides]
    monkeypatch.setattr(jit, "is_compiled", lambda: False)
    merged = 0
    for side, got in zip(sides, kernel, strict=True):
        want = tables.merged_walks(side)
        assert (got is None) == (want is None)
        if want is not None:
            merged += 1
            for a, b in zip(got, want, strict=True):
                assert a.dtype == b.dtype and np.array_equal(a, b)
    assert merged >= 10


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "plain"])
def test_repeated_codes_are_found_as_a_set_finds_them(compiled):
    """builder._repeats (merged_walks' check that block 0's codes are distinct) answers as a
    set of the codes does: random codes, codes of few high bits (one slot: every code probes
    past the others), one code repeated anywhere, no code."""
    from battlecalc.kernels import builder

    jit.compiled()
    repeats = jit.kernels(builder, compiled)._repeats
    rng = np.random.default_rng(7)
    cases = [np.zeros(0, dtype=np.uint64), np.arange(40, dtype=np.uint64)]
    for n in (1, 2, 3, 17, 64, 500):
        codes = rng.integers(0, 2**64 - 1, size=n, dtype=np.uint64)
        cases.append(codes)
        for at in {0, n // 2, n - 1} - {0}:
            again = codes.copy()
            again[at] = codes[rng.integers(0, at)]
            cases.append(again)
    for codes in cases:
        assert repeats(codes) == (len(set(codes.tolist())) < len(codes)), codes
