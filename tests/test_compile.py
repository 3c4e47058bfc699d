"""compile.build_side with its caches (fire laws, casualty walks, block tables) builds the
same tables as a plain per-row rebuild: every field of every Side, on a mixed battery (land,
AA, sea with the subs / aircraft split, submerging, bombardment, partial amphibious retreat,
low luck, orders of losses, every dice edition), whether the caches are cold or warm, and
equal to the builder as it was before the caches (tests/side_reference.py)."""

from __future__ import annotations

import numpy as np
import pytest
from battery_battles import BATTLES as BATTERY
from side_reference import reference_build_side
from test_verification import BATTLES as VERIFICATION

from battlecalc import api
from battlecalc import compile as compile_module
from battlecalc.batch import _battle_arguments
from battlecalc.spec import simulate_spec

ARRAYS = ("blocks", "states", "rows", "pmf", "cdf", "start", "survivors", "ipc_lost")

MORE = [
    dict(rules="1942-2e", attacker="3 inf 2 art 2 tank 2 ftr 1 bmb", defender="5 inf 1 aa 2 ftr",
         dice="low_luck"),
    dict(rules="1942-2e", attacker="3 sub 2 dd 1 bb 2 ftr 1 bmb", defender="2 sub 1 cv 2 ftr 1 ca",
         sea=True, attacker_submerge="first-chance", defender_submerge="when-only-subs-left"),
    dict(rules="1942-2e", attacker="2 sub 1 dd 1 bb", defender="2 sub 2 tt 1 ftr", sea=True,
         dice="low_luck", attacker_submerge="when-only-subs-left"),
    dict(rules="1942-2e", attacker="1 ftr 1 tank", landing="3 inf 1 art", bombard="1 bb 1 ca",
         defender="4 inf 1 ftr 1 aa", retreat_when_left=3),
    dict(rules="revised", attacker="2 ftr", landing="2 inf 1 tank", bombard="2 bb",
         defender="3 inf 1 ftr 1 aa", retreat_after=1),
    dict(rules="aa50", attacker="2 ftr 1 bmb 2 tank", landing="2 inf", bombard="1 ca",
         defender="3 inf 2 ftr", retreat_after=2, dice="low_luck"),
    dict(rules="1940-2e", attacker="3 inf 1 art 1 mech 1 tank 1 tac 1 ftr",
         defender="4 inf 1 aa 1 ftr", attacker_ool="smart", retreat_when_only_air=True),
    dict(rules="classic", attacker="4 ftr 2 bmb 3 inf", defender="3 inf 2 aa 1 ftr",
         defender_ool="fighter,infantry", keep_land=1),
    dict(rules="1942-2e", attacker="6 ftr 3 bmb", defender="4 inf 3 aa 2 ftr", aa_last=True,
         attacker_ool="*^fighter;1^bomber"),
    dict(rules="1942-2e", attacker="2 bb 2 cv 2 ftr 1 sub", defender="1 bb 1 sub 2 dd 1 tt",
         sea=True, attacker_tech="super_subs", retreat_after=2),
    # laws longer than compile.SHORT_LAW (tables built from the arrays)
    dict(rules="1942-2e", attacker="30 inf 10 art 6 tank 4 ftr", defender="36 inf 2 art 2 aa"),
    dict(rules="revised", attacker="10 sub 8 dd 6 bb 6 ftr", defender="12 sub 6 dd 4 cv 8 ftr",
         sea=True, defender_submerge="first-chance"),
]


def _specs(battles) -> list:
    """Every _SideSpec the battles' compilation builds (retreat and bombardment variants
    included), in order, without duplicates."""
    seen: dict = {}
    plain = compile_module.build_side

    def record(spec):
        seen.setdefault(spec, None)
        return plain(spec)

    record.cache_clear = plain.cache_clear
    compile_module.build_side = record
    try:
        for given in battles:
            given = {k: v for k, v in given.items() if k != "id"}
            battle, _ = simulate_spec(_battle_arguments(dict(given, method="exact")))
            compile_module.compile_battle(battle)
    finally:
        compile_module.build_side = plain
    return list(seen)


def _assert_same(side, reference) -> None:
    for name in ARRAYS:
        got, want = getattr(side, name), getattr(reference, name)
        assert got.dtype == want.dtype, name
        assert got.shape == want.shape, name
        assert got.flags.c_contiguous, name  # (the kernels are compiled for C arrays)
        assert got.flags.writeable, name  # (... and writable ones)
        assert np.array_equal(got, want), name
    assert side.unit_names == reference.unit_names
    assert side.split == reference.split


@pytest.fixture(scope="module")
def specs():
    battles = MORE + VERIFICATION + [b for b in BATTERY if b["rules"] != "formula"][::3]
    found = _specs(battles)
    # the battery spans what the caches are keyed by
    assert any(len(s.blocks) > 1 for s in found)  # AA outcomes or partial retreats
    assert any(b[3] is not None for s in found for b in s.blocks)  # stayers' blocks
    assert any(s.submerge for s in found)
    assert any(all(s.split) for s in found)
    assert any(s.dice_model == "low_luck" for s in found)
    assert len({s.ruleset.id for s in found}) == 5
    return found


def test_cached_build_equals_the_plain_rebuild(specs):
    api.forget_compiled()
    cold = [compile_module.build_side.__wrapped__(s) for s in specs]  # caches filling
    warm = [compile_module.build_side.__wrapped__(s) for s in specs]  # every block kept
    widths = []
    for spec, first, again in zip(specs, cold, warm, strict=True):
        reference = reference_build_side(spec)
        widths.append(reference.pmf.shape[1])
        _assert_same(first, reference)
        _assert_same(again, reference)
        api.forget_compiled()
        _assert_same(compile_module.build_side.__wrapped__(spec), reference)  # never seen
    # both ways of building the hit tables (from Python floats, from the arrays) were used
    assert min(widths) <= compile_module.SHORT_LAW < max(widths)


@pytest.mark.parametrize("blocks", ["one", "several"])
def test_built_tables_are_not_the_kept_ones(specs, blocks):
    """A Side owns its arrays, writable (the kernels are compiled for writable arrays):
    writing one leaves the kept block tables, and so the next build, as they were."""
    spec = next(s for s in specs if (len(s.blocks) > 1) == (blocks == "several"))
    api.forget_compiled()
    side = compile_module.build_side.__wrapped__(spec)
    for name in ARRAYS:
        getattr(side, name)[...] = 0
    _assert_same(compile_module.build_side.__wrapped__(spec), reference_build_side(spec))


def test_forget_compiled_drops_every_table_cache(specs):
    for spec in specs[:20]:
        compile_module.build_side(spec)
    assert compile_module._blocks and compile_module._kept_walks.cache_info().currsize
    api.forget_compiled()
    assert not compile_module._blocks and compile_module._block_bytes[0] == 0
    for cache in (compile_module.build_side, compile_module._kept_walks, compile_module._fire_law,
                  compile_module._block_size, compile_module._aa_outcomes):
        assert cache.cache_info().currsize == 0


def test_the_block_cache_stays_within_its_bytes(specs, monkeypatch):
    monkeypatch.setattr(compile_module, "BLOCK_CACHE_BYTES", 20_000)
    api.forget_compiled()
    for spec in specs:
        compile_module.build_side.__wrapped__(spec)
        assert compile_module._block_bytes[0] <= 20_000
        assert compile_module._block_bytes[0] == sum(t.nbytes for t in
                                                     compile_module._blocks.values())
    api.forget_compiled()
