"""First use (issue 28, goal 1): what a process compiles, and what it answers without
compiling.

Each Monte Carlo path compiles only its own entry kernel, and a battle without a retreat policy
none of the retreat code; a side's alias tables are built by the plain Python kernel where they
are small, the same tables the compiled kernel builds.  An exact solve runs compiled kernels
where they are compiled already or cheap to load from numba's cache, and in plain Python
otherwise until the process has spent more there than compiling them would cost
(solver.plan.kernels_for); a process that has compiled some kernels still runs others in plain
Python (jit.kernels).  The web server compiles in a child process, which leaves numba's cache
warm for the next process.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
import textwrap
import types

import numpy as np
import pytest

from battlecalc.api import make_battle
from battlecalc.compile import compile_battle
from battlecalc.kernels import jit, montecarlo, numba_private
from battlecalc.kernels.exact import pairs, sweep
from battlecalc.solver import plan as solver_plan
from battlecalc.solver import tables

SIDES = {
    "readme mc": dict(rules="revised", attacker="3inf 1art 2arm 1bmb", defender="4inf 1aa"),
    "big land": dict(rules="1942-2e", attacker="30 inf 10 art 10 tank 8 ftr 4 bmb",
                     defender="40 inf 5 art 5 tank 6 ftr"),
    "mid sea": dict(rules="1942-2e", attacker="4 sub 2 dd 1 ca 2 ftr 1 bmb 1 bb",
                    defender="1 bb 2 dd 1 ca 1 cv 2 ftr 2 sub 2 tt", sea=True),
    "low luck": dict(rules="revised", attacker="3 inf 2 art 1 bmb", defender="4 inf 1 aa",
                     dice="low_luck"),
}


@pytest.mark.parametrize("name", SIDES)
def test_plain_alias_tables_are_the_compiled_ones(name):
    jit.compiled()
    compiled = compile_battle(make_battle(**SIDES[name]))
    for side in (compiled.attacker, compiled.defender):
        assert side.pmf.size <= tables.PLAIN_ALIAS_CELLS  # (built plain by the sampler)
        thresh, alias = montecarlo.alias_tables(side.pmf, side.rows)
        plain = jit.kernels(montecarlo, compiled=False)
        plain_thresh, plain_alias = plain.alias_tables(side.pmf, side.rows)
        assert plain_thresh.dtype == thresh.dtype and plain_alias.dtype == alias.dtype
        assert np.array_equal(plain_thresh, thresh) and np.array_equal(plain_alias, alias)


COMPILES = textwrap.dedent("""
    import json
    from numba.core import event
    import battlecalc
    from battlecalc.kernels import jit

    said = []
    with event.install_recorder("numba:compile") as compiles:
        r = battlecalc.simulate(rules="revised", attacker="3inf 1art 2arm 1bmb",
                                defender="4inf 1aa", method="mc", trials=2000, seed=7,
                                progress=lambda done, total, what="trials", **_: said.append(what))
    names = [e.data["dispatcher"].py_func.__name__ for _, e in compiles.buffer
             if e.is_start and jit.in_kernels(e.data["dispatcher"].py_func.__code__.co_filename)]
    print(json.dumps([names, r.attacker_win, said]))
""")


@pytest.mark.slow
def test_a_land_battle_compiles_the_land_walk_alone(tmp_path):
    """A fresh process with an empty numba cache, the README's Monte Carlo example (land, no
    retreat): the kernels numba compiles are those of the land walk, without the general
    round's trial, the retreat step, the alias tables or the compiled side builder (the
    Python one builds its sides); its progress says so, kernel by
    kernel, before the trials."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    env.pop(jit.PLAIN_ENV, None)
    done = subprocess.run([sys.executable, "-c", COMPILES], capture_output=True, text=True,
                          env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    names, win, said = json.loads(done.stdout)
    assert "_simulate_walk_chunks" in names and "_trial_walk" in names
    for other in ("_simulate_chunks", "_chunk", "_trial", "_general_hits", "_retreat_step",
                  "should_retreat", "alias_tables", "build_side", "merged_walks"):
        assert other not in names, names
    assert 0.98 < win < 1.0
    compiling = said[:said.index("trials")]
    assert compiling[0] == jit.COMPILING
    told = [re.fullmatch(rf"{re.escape(jit.COMPILING)}: (\w+) \((\d+) of at most (\d+)\)", what)
            for what in compiling[1:]]
    assert all(told) and [m[1] for m in told] == names
    assert [int(m[2]) for m in told] == list(range(1, len(names) + 1))
    assert len({m[3] for m in told}) == 1 and int(told[0][3]) >= len(names)


# --- which kernels a solve runs ---------------------------------------------------------------


def test_the_plain_kernels_call_plain_kernels_once_compiled():
    jit.compiled()
    if jit.plain_kernels():
        assert jit.kernels(sweep, compiled=False) is sweep
        return
    plain_sweep = jit.kernels(sweep, compiled=False)
    plain_pairs = jit.kernels(pairs, compiled=False)
    assert jit.kernels(sweep, compiled=True) is sweep
    assert hasattr(sweep._solve_blocks, "py_func")  # (the module: dispatchers)
    for function in (plain_sweep._solve_blocks, plain_sweep._solve_block, plain_pairs._enter):
        assert isinstance(function, types.FunctionType)
    # what a plain kernel calls, by name or through a kernel module, is plain too
    space = plain_sweep._solve_blocks.__globals__
    assert space is vars(plain_sweep)
    assert isinstance(space["_solve_block"], types.FunctionType)
    assert isinstance(space["_play"], types.FunctionType)  # (from exact.fire)
    round_model = vars(plain_pairs)["settle"].__globals__
    assert isinstance(round_model["can_hit"], types.FunctionType)
    assert vars(jit.kernels(montecarlo, False))["round_model"] is jit.kernels(
        importlib.import_module("battlecalc.kernels.round_model"), False)


def test_cached_overloads_counts_what_numbas_cache_holds_for_this_source(tmp_path, monkeypatch):
    numba = pytest.importorskip("numba")
    source = tmp_path / "cached_probe.py"
    source.write_text("def f(x):\n    return x + 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    probe = importlib.import_module("cached_probe")
    compiled = numba.njit(cache=True)(probe.f)
    assert numba_private.cached_overloads(compiled) == 0
    assert compiled(1) == 2
    assert numba_private.cached_overloads(compiled) == 1
    assert numba_private.cached_overloads(numba.njit(cache=True)(probe.f)) == 1  # (from disk)
    source.write_text("def f(x):\n    return x + 2\n\n")  # edited: its cache is stale
    assert numba_private.cached_overloads(numba.njit(cache=True)(probe.f)) == 0
    assert numba_private.cached_overloads(lambda x: x) == 0  # (no dispatcher: none)


WALK = textwrap.dedent("""
    import json
    from numba.core import event
    from battlecalc import solver
    from battlecalc.api import make_battle
    from battlecalc.compile import compile_battle
    from battlecalc.kernels import jit

    # (its sides by the Python builder: nothing compiled yet; the builder's kernels are
    # another test's)
    compiled = compile_battle(make_battle(rules="1942-2e", attacker="1 inf 1 ftr",
                                          defender="2 inf 1 aa"))
    jit.compiled()  # (every solve compiled: the small battle too)
    with event.install_recorder("numba:compile") as compiles:
        law = solver.solve(compiled, solver.choose(compiled, "exact"))
    names = [e.data["dispatcher"].py_func.__name__ for _, e in compiles.buffer
             if e.is_start and jit.in_kernels(e.data["dispatcher"].py_func.__code__.co_filename)]
    print(json.dumps([names, law.outcomes[0] / law.total]))
""")


@pytest.mark.slow
def test_an_exact_land_battle_compiles_the_walks_alone(tmp_path):
    """A fresh process with an empty numba cache compiles, for the exact solve of a land
    battle (with AA: several blocks), the walk's entry and none of the general round (about
    14 s of CPU: the exact solver's walk kernels; all of them took 50 s)."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    env.pop(jit.PLAIN_ENV, None)
    done = subprocess.run([sys.executable, "-c", WALK], capture_output=True, text=True, env=env,
                          timeout=900)
    assert done.returncode == 0, done.stderr
    names, win = json.loads(done.stdout)
    assert "_solve_walk_blocks" in names and "_sweep_walks" in names
    for other in ("_solve_blocks", "_transition", "_fire", "_spread_after_strikes",
                  "_scratch", "_solve_compact", "build_side"):
        assert other not in names, names
    assert win == pytest.approx(0.2090059884317963, abs=1e-12)


FRESH = textwrap.dedent("""
    import json, sys
    import battlecalc
    from battlecalc.kernels import jit
    from battlecalc.kernels import builder
    from battlecalc.kernels.exact import sweep

    out = {}
    plan = battlecalc.plan(rules="1942-2e", defender="6 inf 2 art 1 tank 1 aa",
                           pool="10 inf 5 art 5 tank 4 ftr 2 bmb", goal="takes_territory>=0.9",
                           top=3)
    out["plan"] = [battlecalc.format_army(p.addition) for p in plan.plans]
    out["plan compiled"] = jit.is_compiled()
    mc = battlecalc.simulate(rules="revised", attacker="3inf 1art 2arm 1bmb",
                             defender="4inf 1aa", method="mc", trials=2000, seed=7)
    out["mc"] = [mc.attacker_win, jit.is_compiled()]
    exact = battlecalc.simulate(rules="1942-2e", attacker="3 inf 1 art 1 tank",
                                defender="4 inf")
    out["exact after mc"] = [exact.attacker_win, bool(sweep._solve_blocks.overloads)]
    big = battlecalc.simulate(rules="1942-2e", attacker="9 inf 3 art 3 tank 2 ftr",
                              defender="10 inf 2 art 1 aa", method="mc", trials=1000, seed=3)
    out["builder"] = [big.attacker_win, bool(builder.build_side.overloads),
                      bool(builder.merged_walks.overloads)]
    print(json.dumps(out))
""")


@pytest.mark.slow
def test_a_fresh_process_plans_in_plain_python_and_keeps_its_exact_solves_plain(tmp_path):
    """An empty numba cache: the README's plan compiles nothing (its 195 small battles in
    plain Python cost about a second; compiling the exact solver, half a minute); a Monte
    Carlo run then compiles its own kernels, and an exact battle after it still runs in plain
    Python (the exact solver's kernels are neither compiled nor on disk): the answers of a
    process that compiles nothing.  Nor does it compile the side builder (kernels/builder.py)
    for the battles after the first Monte Carlo run: the Python builder builds their sides."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    env.pop(jit.PLAIN_ENV, None)
    done = subprocess.run([sys.executable, "-c", FRESH], capture_output=True, text=True,
                          env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["plan"][0] == "10 infantry, 4 artillery" and not out["plan compiled"]
    assert out["mc"][1] and 0.98 < out["mc"][0] < 1.0
    win, compiled_exact = out["exact after mc"]
    assert not compiled_exact
    assert out["builder"][1:] == [False, False]  # (its sides by the Python builder)
    plain = subprocess.run(
        [sys.executable, "-c", "import battlecalc; print(repr(battlecalc.simulate("
         "rules='1942-2e', attacker='3 inf 1 art 1 tank', defender='4 inf').attacker_win))"],
        capture_output=True, text=True, env={**env, jit.PLAIN_ENV: "1"}, timeout=600)
    assert win == float(plain.stdout)  # (plain Python both: the same sums)


@pytest.mark.slow
def test_the_servers_child_leaves_the_cache_warm_for_the_next_process(tmp_path, monkeypatch):
    """Engine.build_in_child compiles the warm-up battles' kernels in a child process, into
    numba's cache: a new process finds them on disk (and loads, not compiles, them)."""
    pytest.importorskip("starlette")
    from battlecalc.web.server import Engine

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv(jit.PLAIN_ENV, raising=False)
    battle = dict(rules="revised", attacker="1 inf 1 art", defender="2 inf", method="mc",
                  trials=1000, seed=1)
    engine = Engine(warm_up_battles=[battle])
    try:
        engine.build_in_child()
    finally:
        engine.close()
    assert engine.builder.returncode == 0
    check = ("from battlecalc.kernels import jit; "
             "print(jit.on_disk('battlecalc.kernels.montecarlo', '_simulate_walk_chunks'), "
             "jit.on_disk('battlecalc.kernels.montecarlo', '_simulate_chunks'))")
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True,
                          env=dict(os.environ), timeout=300, check=True)
    assert done.stdout.split() == ["True", "False"]  # (a land battle: the walk's kernel)


class _Child:
    """A stand-in for the server's child compiling the kernels (Engine.builder): running."""

    returncode = None

    def poll(self):
        return None


def test_a_monte_carlo_request_waits_for_the_childs_kernel(monkeypatch):
    """While the child builds the kernels, a Monte Carlo request whose kernel is cold waits
    for the child to put it in numba's cache (says so as compiling), then runs; it waits for
    nothing where the kernel is warm, or no child is running."""
    pytest.importorskip("starlette")
    from battlecalc import api
    from battlecalc.web import server

    checks = []
    monkeypatch.setattr(server, "CHILD_POLL_S", 0.0)
    monkeypatch.setattr(api, "monte_carlo_kernel", lambda **kw: ("some.kernels", "entry"))
    monkeypatch.setattr(api, "kernel_cold", lambda kernel: checks.append(kernel) or
                        len(checks) < 3)
    engine = server.Engine(warm_up_battles=[])
    said = []
    battle = dict(rules="revised", attacker="3 inf", defender="2 inf", method="mc")
    try:
        engine._await_child(battle, lambda *args: said.append(args))  # (no child)
        assert said == [] and checks == []
        engine.builder = _Child()
        engine._await_child(battle, lambda *args: said.append(args))
        assert said == [(0, 0, server.COMPILING)] and len(checks) == 3
        monkeypatch.setattr(api, "monte_carlo_kernel", lambda **kw: None)  # (warm; exact)
        engine._await_child(battle, lambda *args: said.append(args))
        assert len(said) == 1 and len(checks) == 3
    finally:
        engine.builder = None
        engine.close()


def test_the_monte_carlo_kernel_of_a_battle():
    """api.monte_carlo_kernel: a Monte Carlo battle's own entry kernel while it is cold (the
    land walk's, the general round's), None for an exact one or one that does not check."""
    from battlecalc import api

    if jit.plain_kernels():
        pytest.skip("plain kernels: nothing compiles")
    land = dict(rules="revised", attacker="3 inf 1 art", defender="3 inf", method="mc")
    sea = dict(rules="1942-2e", sea=True, attacker="2 sub 1 dd", defender="1 dd 1 sub",
               method="mc")
    for battle, entry in ((land, solver_plan.MC_ENTRIES[0]), (sea, solver_plan.MC_ENTRIES[1])):
        kernel = api.monte_carlo_kernel(**battle)
        assert kernel in (entry, None)
        assert (kernel is None) == (not solver_plan.entry_cold(entry))
    assert api.monte_carlo_kernel(**{**land, "method": "exact"}) is None
    assert api.monte_carlo_kernel(rules="revised", attacker="3 nonsense", defender="1 inf") \
        is None


def test_the_child_compiles_monte_carlo_first(monkeypatch):
    """battlecalc.web.warm.build: the Monte Carlo battles first, before every kernel is
    compiled (a server's Monte Carlo request waits for their kernels; the side builder's
    compiled kernel waits), then every battle in its order."""
    from battlecalc import api
    from battlecalc.web import warm

    ran = []
    monkeypatch.setattr(api, "compile_kernels", lambda: ran.append("compile_kernels"))
    monkeypatch.setattr(warm, "solve", lambda battle, progress=None: ran.append(battle))
    warm.build(warm.WARM_UP, out=open(os.devnull, "w"))  # noqa: SIM115
    mc = [b for b in warm.WARM_UP if b["method"] == "mc"]
    assert ran == [*mc, "compile_kernels", *warm.WARM_UP]
