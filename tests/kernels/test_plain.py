"""Kernels are plain Python until they are worth compiling (kernels.jit): the marker and its
compile registry.

* BATTLECALC_PLAIN_KERNELS=1 runs every kernel as plain Python (nothing compiled, numba not
  imported): small battles of each kind through every kernel (checked: none missed) give the
  compiled answers, exact ones to 1e-12, Monte Carlo ones identical at the same seed; the
  kernels that run only once compiled (the side-table builder's, merged_walks') run plain on
  those battles' sides and give the Python builder's and numpy's arrays.  A small exact solve
  in a fresh interpreter loads no numba at all.
* Compiling: once per process however many threads ask at once; numba's cache moves to a
  temporary folder when no folder is writable; the compiling notice only when the cache is
  cold.
* The cache stamp: numba judges a cached kernel fresh by its own source file only, while
  kernels inline and call kernels and constants of the other kernel files (an edit of the
  round model once left the Monte Carlo kernel's stale compiled code in use, with wrong odds):
  every kernel's cache is stamped with a digest of every kernel file, subfolders included
  (jit.kernel_sources_digest; numba's side: tests/kernels/test_numba_private.py).
* Kernels compiled without reference counting (jit.kernel refs=False: the exact solver's
  per-pair kernels and its sweeps): numba then neither takes nor drops a reference on the
  arrays they are handed, which is sound only while they make no array and return none (a
  kernel that returned an array to a counting caller would have it dropped once too often, one
  that kept a view past its caller would read freed memory).  The check: numba's own
  allocation counts (NUMBA_NRT_STATS) balance after many solves through every exact path
  (the counts are switched on before numba starts: tests/conftest.py).

The fresh interpreters are tests/fresh_checks.py's, one for the session."""

from __future__ import annotations

import dataclasses
import gc
import json
import math
import shutil

import battles
import pytest
from fresh_checks import plain_kernel_solve, summary
from tiers import sampled

import battlecalc
from battlecalc import api, solver
from battlecalc.kernels import jit
from battlecalc.kernels.exact import fire, pairs, sweep

# --- plain Python -----------------------------------------------------------------------------


def _close(plain, compiled, tolerance: float, where: str) -> None:
    if isinstance(compiled, dict):
        assert plain.keys() == compiled.keys(), where
        for key in compiled:
            _close(plain[key], compiled[key], tolerance, f"{where}.{key}")
    elif isinstance(compiled, list):
        assert len(plain) == len(compiled), where
        for i, (p, c) in enumerate(zip(plain, compiled, strict=True)):
            _close(p, c, tolerance, f"{where}[{i}]")
    elif isinstance(compiled, float) and not isinstance(plain, str):
        assert math.isclose(plain, compiled, rel_tol=0, abs_tol=tolerance) or plain == compiled, (
            where, plain, compiled)
    else:
        assert plain == compiled, (where, plain, compiled)


@pytest.mark.fresh("plain_kernels_give_answers")
@pytest.mark.parametrize("name", battles.PLAIN_KERNELS)
@pytest.mark.parametrize("method", ["exact", "mc"])
def test_plain_python_kernels_give_the_compiled_answers(fresh, name, method):
    assert fresh["missed"] == [], f"kernels never run: {fresh['missed']}"
    assert not fresh["numba"], "numba was imported"
    # what runs only once compiled, run plain: the builder, merged_walks' kernel
    built, unlike = fresh["builder"]
    assert built >= 10 and unlike == 0, fresh["builder"]
    merged, unlike = fresh["merged_walks"]
    assert merged >= 3 and unlike == 0, fresh["merged_walks"]
    jit.compiled()
    assert jit.is_compiled()
    compiled = summary(plain_kernel_solve(name, method))
    compiled = json.loads(json.dumps(compiled))  # the same types as the subprocess's JSON
    tolerance = 1e-12 if method == "exact" else 0.0  # Monte Carlo: counts, identical
    _close(fresh["results"][f"{name}, {method}"], compiled, tolerance, f"{name}, {method}")


@pytest.mark.fresh("plain_switch_keeps_kernels_plain")
def test_the_switch_keeps_kernels_plain_even_when_asked_to_compile(fresh):
    assert fresh == [False, False, "function"]


@pytest.mark.fresh("small_exact_solve_loads_no_numba")
def test_a_small_exact_solve_loads_no_numba(fresh):
    # a fresh interpreter: the first README example solves in plain Python
    method, attacker_win, numba_loaded = fresh
    compiled = battlecalc.simulate(rules="1942-2e", attacker="6 inf, 2 art, 2 tank, 2 ftr",
                                   defender="8 inf 1 tank 1 aa", method="exact")
    assert method == "exact" and numba_loaded is False
    assert attacker_win == pytest.approx(compiled.attacker_win, abs=1e-12)


# --- compiling --------------------------------------------------------------------------------


@pytest.mark.fresh("compiling_from_threads_compiles_once")
def test_compiling_from_several_threads_at_once_compiles_once(fresh):
    # four first requests at once: one compiles and rebinds, the others wait for it
    kernels, most = fresh
    assert kernels > 40 and most == 1


def test_unwritable_cache_falls_back_to_a_temporary_folder(monkeypatch):
    import numba

    numba.njit(lambda x: x)(1)  # numba's first compile loads more of numba, which calls njit
    real = numba.njit
    calls = []

    def njit(*args, **options):
        calls.append(numba.config.CACHE_DIR)
        if options.get("cache") and len(calls) == 1:
            raise RuntimeError("cannot cache function 'f': no locator available for file")
        return real(*args, **options)

    monkeypatch.setattr(numba, "njit", njit)
    monkeypatch.setattr(numba.config, "CACHE_DIR", numba.config.CACHE_DIR)

    def double(x):
        return 2 * x

    dispatcher = jit._jit(numba, double, {"inline": "never", "nogil": False})
    assert dispatcher(21) == 42
    assert len(calls) == 2 and "battlecalc-numba" in numba.config.CACHE_DIR


def test_compiling_notice_only_when_the_cache_is_cold(monkeypatch):
    jit.compiled()
    calls = []
    monkeypatch.setattr(jit, "cache_is_cold", lambda dispatcher: True)
    battlecalc.simulate(rules="revised", attacker="2 inf", defender="2 inf", method="mc",
                        trials=100, seed=1, progress=lambda *args: calls.append(args))
    assert calls[0] == (0, 0, "compiling kernels (first run only)")
    calls.clear()
    monkeypatch.setattr(jit, "cache_is_cold", lambda dispatcher: False)
    battlecalc.simulate(rules="revised", attacker="2 inf", defender="2 inf", method="mc",
                        trials=100, seed=1, progress=lambda *args: calls.append(args))
    assert all(what == "trials" for *_, what in calls)


# --- the cache stamp --------------------------------------------------------------------------


@pytest.fixture
def kernels_copy(tmp_path):
    """A copy of battlecalc/kernels (sources only) and its digest."""
    copy = tmp_path / "kernels"
    shutil.copytree(jit.FOLDER, copy, ignore=shutil.ignore_patterns("__pycache__", "*.nbi",
                                                                    "*.nbc"))
    return copy, jit.kernel_sources_digest(str(copy))


def test_the_stamp_covers_every_kernel_file_subfolders_included(kernels_copy):
    copy, digest = kernels_copy
    assert digest == jit.kernel_sources_digest()  # the same files: the same stamp
    sources = jit.kernel_sources()
    assert {"round_model.py", "montecarlo.py", "layout.py", "jit.py",
            "exact/sweep.py", "exact/fire.py", "exact/pairs.py"} <= set(sources)
    assert not any("__pycache__" in name for name in sources)
    # (every module the compile registry compiles is among them)
    for module in jit.KERNEL_MODULES:
        assert module.removeprefix("battlecalc.kernels.").replace(".", "/") + ".py" in sources


@pytest.mark.parametrize("edited", ["exact/sweep.py", "exact/fire.py", "exact/pairs.py",
                                    "round_model.py", "layout.py"])
def test_an_edit_of_any_kernel_file_changes_the_stamp(kernels_copy, edited):
    copy, digest = kernels_copy
    path = copy / edited
    path.write_text(path.read_text() + "\n# an edit\n")
    assert jit.kernel_sources_digest(str(copy)) != digest


def test_a_new_kernel_file_in_a_subfolder_changes_the_stamp(kernels_copy):
    copy, digest = kernels_copy
    (copy / "exact" / "more.py").write_text("X = 1\n")
    assert jit.kernel_sources_digest(str(copy)) != digest
    (copy / "exact" / "notes.txt").write_text("not a source\n")  # (not code: no new stamp)
    (copy / "exact" / "more.py").unlink()
    assert jit.kernel_sources_digest(str(copy)) == digest


def test_the_files_a_kernel_reaches_are_the_stamped_ones():
    assert jit.in_kernels(sweep.__file__) and jit.in_kernels(fire.__file__)
    assert jit.in_kernels(jit.__file__)
    assert not jit.in_kernels(battlecalc.__file__)
    assert not jit.in_kernels(jit.FOLDER + "-other/x.py")  # (a folder named alike)


# --- kernels without reference counting -------------------------------------------------------


def test_refs_false_compiles_without_reference_counting_and_only_when_asked():
    def f(x):
        return x

    assert getattr(jit.kernel(f), jit._MARK) == {"inline": "never", "nogil": False}
    assert getattr(jit.kernel(refs=False)(f), jit._MARK)["_nrt"] is False

    # the per-pair kernels are marked so, and _solve_tables (its tables made by _tables); the
    # kernels that make arrays (_scratch, _tables, the block drivers) or return them (_out)
    # are not
    def options(module, name):
        function = getattr(module, name)
        return getattr(getattr(function, "py_func", function), jit._MARK)

    for module, name in ((pairs, "_enter"), (fire, "_fire"), (fire, "_play_phased"),
                         (fire, "_play"), (fire, "_transition"), (sweep, "_sweep_round"),
                         (sweep, "_sweep_walks"), (fire, "_fight_on"), (sweep, "_solve_tables")):
        assert options(module, name)["_nrt"] is False, name
    for module, name in ((pairs, "_scratch"), (sweep, "_solve_block"), (sweep, "_tables"),
                         (sweep, "_solve_compact"), (pairs, "_out"), (sweep, "_solve_blocks")):
        assert "_nrt" not in options(module, name), name


@pytest.mark.skipif(jit.plain_kernels(), reason="BATTLECALC_PLAIN_KERNELS=1: nothing is "
                    "compiled")
@pytest.mark.parametrize("name", sampled([(name,) for name in battles.EXACT_PATHS], 2))
@pytest.mark.parametrize("method", ["exact", "mc"])
def test_solves_leave_numba_allocations_balanced(name, method):
    """Twenty solves again of a battle through each exact path (and by Monte Carlo): every
    solve makes arrays (its outputs, the mass tables), counted by numba (NUMBA_NRT_STATS, on
    from the start of the test process: tests/conftest.py), and all of them are freed."""
    from numba.core.runtime import rtsys

    jit.compiled()
    battle = {"rules": "1942-2e", **battles.EXACT_PATHS[name]}
    rounds = battle.pop("rounds_law", False)
    limits = (dataclasses.replace(solver.LIMITS, compact_pairs=0) if battle.pop("compact", False)
              else None)
    call = dict(battle, method=method, trials=2000, seed=5)

    def solve():
        if limits is None:  # (simulate: a kept battle solved again)
            return battlecalc.simulate(**call)
        spec, run, compiled = api.prepare(**call)
        plan = solver.choose(compiled, run.method, run.trials, limits=limits)
        return api.solve(spec, run, compiled=compiled, solve_plan=plan, limits=limits)

    first = solve()
    if rounds:
        first.rounds_distribution  # noqa: B018
    # (what the test process holds already, the first solve's garbage too: neither scanned nor
    # freed by the collection below, so that the counts are the twenty solves' alone)
    gc.freeze()
    try:
        before = rtsys.get_allocation_stats()
        for _ in range(20):
            again = solve()
            assert again.attacker_win == first.attacker_win
        del again
        gc.collect()
        after = rtsys.get_allocation_stats()
    finally:
        gc.unfreeze()
    alloc, free, mi_alloc, mi_free = (after[i] - before[i] for i in range(4))
    assert alloc > 0 and alloc == free and mi_alloc == mi_free, (alloc, free, mi_alloc, mi_free)
