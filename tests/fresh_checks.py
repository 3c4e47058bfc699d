"""What a fresh interpreter does, checked in two interpreters for the whole session instead of
one per test (tests/conftest.py's `fresh` fixture runs this file; each test names its check
with @pytest.mark.fresh(NAME) and asserts on its answer).

``python fresh_checks.py KIND NAME...`` runs the named checks of KIND in the order of this file
and prints {name: answer} as JSON ({"error": traceback} for a check that raised).  KIND
"compiled": an ordinary interpreter; "plain": BATTLECALC_PLAIN_KERNELS=1, warnings as
errors.

The order is the point: each check asserts what is loaded (or started, or compiled) after it
ran, so every check before it loads no more than it allows: the command line's help and edition
tables first (no numpy), then the spec module, the first solves in plain Python (no numba),
the first compile, the waves (no pandas), the views (pandas on demand), then numba's thread
pool and a fork.  This file imports only the standard library at its top.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import traceback
from collections.abc import Callable

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKS: dict[str, tuple[str, Callable]] = {}  # name -> (kind, check), in the order they run


def check(kind: str):
    def register(function):
        CHECKS[function.__name__] = (kind, function)
        return function

    return register


def _loaded(*names: str) -> list[str]:
    return [name for name in names if name in sys.modules]


# --- an ordinary interpreter ------------------------------------------------------------------


@check("compiled")
def help_loads_no_engine():
    """`battlecalc --help`, `run --help`, `units --help`: the heavy modules they leave out."""
    from click.testing import CliRunner

    from battlecalc.cli import cli

    for args in (["--help"], ["run", "--help"], ["units", "--help"]):
        assert CliRunner().invoke(cli, args).exit_code == 0
    return _loaded("numba", "numpy", "pandas", "battlecalc.api", "battlecalc.compile")


@check("compiled")
def dice_edition_tables_load_no_engine():
    """`battlecalc rules --rules 1942-2e`, `units --rules revised`."""
    from click.testing import CliRunner

    from battlecalc.cli import cli

    assert CliRunner().invoke(cli, ["rules", "--rules", "1942-2e"]).exit_code == 0
    assert CliRunner().invoke(cli, ["units", "--rules", "revised"]).exit_code == 0
    return _loaded("numba", "numpy", "pandas")


@check("compiled")
def spec_loads_without_numba_or_pandas():
    import battlecalc.spec  # noqa: F401

    return sorted(_loaded("numba", "pandas"))


@check("compiled")
def threads_env_refused_by_the_first_solve():
    """BATTLECALC_THREADS=many: the count is read when a kernel first runs, here a small
    exact solve's (the message it raises)."""
    import battlecalc

    os.environ["BATTLECALC_THREADS"] = "many"
    try:
        battlecalc.simulate(rules="revised", attacker="1 inf", defender="1 inf")
    except battlecalc.BattleInputError as exc:
        return str(exc)
    finally:
        del os.environ["BATTLECALC_THREADS"]
    return "not refused"


@check("compiled")
def small_exact_solve_loads_no_numba():
    """The first README example, solved in plain Python: [method, attacker_win, numba]."""
    import battlecalc

    r = battlecalc.simulate(rules="1942-2e", attacker="6 inf, 2 art, 2 tank, 2 ftr",
                            defender="8 inf 1 tank 1 aa")
    return [r.method, r.attacker_win, "numba" in sys.modules]


@check("compiled")
def raid_without_air_battle_loads_no_numba():
    import battlecalc

    r = battlecalc.raid("revised", "3 bomber", target_value=3, aa=True, method="mc",
                        trials=1000, seed=1)
    return [r.method, "numba" in sys.modules]


@check("compiled")
def compiling_from_threads_compiles_once():
    """Four first requests at once: one compiles and rebinds, the others wait for it.
    [kernels compiled, most compiles of one kernel]."""
    import collections
    import threading

    from battlecalc.kernels import jit
    from battlecalc.kernels.exact import sweep

    calls = collections.Counter()
    real = jit._jit

    def counting(numba, func, options):
        calls[func.__module__, func.__qualname__] += 1
        return real(numba, func, options)

    jit._jit = counting
    barrier = threading.Barrier(4)
    failed = []

    def first_request():
        barrier.wait()
        jit.compiled()
        if not (jit.is_compiled() and hasattr(sweep._solve_blocks, "py_func")):
            failed.append("not compiled")

    threads = [threading.Thread(target=first_request) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    jit._jit = real
    assert not failed, failed
    return [len(calls), max(calls.values())]


@check("compiled")
def waves_load_no_pandas():
    """Two waves and a counter-attack, exact and Monte Carlo, with their dict, JSON, CSV and
    table views, and a sea battle's wave: pandas is never imported."""
    import battlecalc

    for method in ("exact", "mc"):
        r = battlecalc.simulate(rules="revised", attacker="2 inf 1 tank",
                                defender="2 inf 1 aa", waves=["2 inf 1 ftr"],
                                counterattack="2 inf 1 ftr", method=method,
                                trials=2000, seed=1)
        r.to_json(), r.to_csv(), r.table()
        assert r.method == method and r.holds is not None
    sea = battlecalc.simulate(rules="1942-2e", sea=True, attacker="1 dd",
                              defender="1 dd 1 sub", waves=["2 dd"], method="exact")
    assert sea.defender_eliminated > 0
    return "pandas" in sys.modules


@check("compiled")
def views_load_pandas_on_demand():
    """A dice and a formula result's views without pandas, then a law as a DataFrame:
    [pandas after the views, pandas after the frame, its columns, its infantry column]."""
    import battlecalc

    r = battlecalc.simulate(rules="revised", attacker="2 inf", defender="1 inf",
                            method="exact")
    f = battlecalc.simulate(rules="formula", attacker="3 army", defender="2 army")
    for x in (r, f):
        x.to_dict(), x.to_json(), x.table(), x.to_csv()
    before = "pandas" in sys.modules
    d = r.attacker_distribution
    return [before, "pandas" in sys.modules, list(d.columns), [int(v) for v in d["infantry"]]]


@check("compiled")
def numba_thread_pool_never_started():
    """Monte Carlo and a parallel exact solve on 2 threads: numba.threading_layer() raises
    while numba's own pool was never started (no kernel uses its parallel loops)."""
    import numba

    import battlecalc

    battlecalc.set_threads(2)
    battlecalc.simulate(rules="revised", attacker="3 inf 1 ftr", defender="3 inf 1 aa",
                        method="mc", trials=100000, seed=1)
    battlecalc.simulate(rules="revised", attacker="20 inf 6 art 6 tank 10 ftr 4 bmb",
                        defender="30 inf 4 tank 1 aa 4 ftr", method="exact")
    battlecalc.set_threads(None)
    try:
        return numba.threading_layer()
    except ValueError:
        return "not started"


@check("compiled")
def forked_child_has_a_pool_of_its_own():
    """The parent's pool threads do not exist in a forked child: the child solves on a pool
    of its own (the child's exit status: 0 for the parent's answer)."""
    import battlecalc

    battlecalc.set_threads(2)
    battle = dict(rules="revised", attacker="3 inf", defender="3 inf", method="mc",
                  trials=100000, seed=1)
    parent = battlecalc.simulate(**battle).attacker_win
    pid = os.fork()
    if pid == 0:
        os._exit(0 if battlecalc.simulate(**battle).attacker_win == parent else 1)
    battlecalc.set_threads(None)
    return os.waitpid(pid, 0)[1]


# --- BATTLECALC_PLAIN_KERNELS=1 ---------------------------------------------------------------

PLAIN_TRIALS = 1000  # plain Python draws about 20,000 trials a second


def plain_kernel_solve(name: str, method: str):
    """simulate of battles.PLAIN_KERNELS[name] by `method` (a compact mass table where
    battles.PLAIN_KERNELS_COMPACT says)."""
    import dataclasses

    import battles

    import battlecalc
    from battlecalc import api, solver

    call = dict(battles.PLAIN_KERNELS[name], method=method, trials=PLAIN_TRIALS, seed=17)
    if name not in battles.PLAIN_KERNELS_COMPACT:
        return battlecalc.simulate(**call)
    limits = dataclasses.replace(solver.LIMITS, compact_pairs=0)
    spec, run, compiled = api.prepare(**call)
    plan = solver.choose(compiled, run.method, run.trials, run.rounds_distribution, limits)
    return api.solve(spec, run, compiled=compiled, solve_plan=plan, limits=limits)


def summary(result) -> dict:
    """Every number of a result: its JSON object (less the time taken) and, for the dice
    model, its laws."""
    data = result.to_dict()
    data.pop("elapsed_s")
    laws = {}
    if hasattr(result, "attacker_law"):
        laws["attacker"] = result.attacker_law.probability.tolist()
        laws["defender"] = result.defender_law.probability.tolist()
        for name in ("swing_law", "rounds_law"):
            law = getattr(result, name)
            if law is not None:
                laws[name] = [[float(x) for x in part] for part in law]
    return {"data": data, "laws": laws}


def kernels_not_run(work) -> list[str]:
    """The kernels (jit.kernel) that work() does not call, as module.name (plain Python)."""
    import importlib
    import threading

    from battlecalc.kernels import jit

    kernels = {}
    for module in map(importlib.import_module, jit.KERNEL_MODULES):
        for name, obj in vars(module).items():
            if hasattr(obj, jit._MARK) and obj.__module__ == module.__name__:
                kernels[obj.__code__] = f"{module.__name__.rsplit('.', 1)[1]}.{name}"
    called = set()

    def note(frame, event, arg):
        if event == "call" and frame.f_code in kernels:
            called.add(kernels[frame.f_code])

    sys.setprofile(note)
    threading.setprofile(note)  # kernels on the pool's threads
    try:
        work()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    return sorted(set(kernels.values()) - called)


@check("plain")
def plain_kernels_give_answers():
    """Every battle of battles.PLAIN_KERNELS exactly and by Monte Carlo, and solve_many's
    batched battles (battles.SOLVE_MANY_MIXED: its batch loop), in plain Python; then what
    runs only once the kernels are compiled, on every side those battles built, its kernels
    in plain Python: the compiled builder's driver (compile._built_side, which build_side
    calls) and solver.tables.merged_walks' kernel (builder.merged_walks):
    {"results": {name, method: summary}, "solve_many": the rows' answers, "missed": kernels
    never run, "numba": imported, "builder": [sides built, sides built unlike the Python
    builder's], "merged_walks": [sides merged, sides merged unlike numpy's merge]}."""
    import battles
    import numpy as np

    import battlecalc
    from battlecalc.compile import sides as compile_module
    from battlecalc.solver import KernelState, tables

    results, rows, built, merged = {}, [], [0, 0], [0, 0]

    def run_all():
        specs = {}
        python_side = compile_module._python_side

        def recorded(spec):
            specs.setdefault(spec, None)
            return python_side(spec)

        compile_module._python_side = recorded
        try:
            for name in battles.PLAIN_KERNELS:
                for method in ("exact", "mc"):
                    results[f"{name}, {method}"] = summary(plain_kernel_solve(name, method))
            batched = battles.SOLVE_MANY_MIXED[:battles.SOLVE_MANY_BATCHED]
            frame = battlecalc.solve_many(batched, method="exact")
            rows.extend(frame[["attacker_win", "defender_win", "tuv_swing",
                               "mean_rounds"]].values.tolist())
        finally:
            compile_module._python_side = python_side
        for spec in specs:
            want = python_side(spec)
            with np.errstate(over="ignore"):  # the builder's hashes wrap, as compiled
                side = compile_module._built_side(spec)
                # (merged_walks by its kernel, as compiled)
                by_kernel = tables.merged_walks(want, KernelState(everywhere=True))
            if side is not None:
                built[0] += 1
                built[1] += not all(np.array_equal(getattr(side, a), getattr(want, a))
                                    for a in ("blocks", "states", "rows", "pmf", "cdf",
                                              "start", "survivors", "ipc_lost"))
            by_numpy = tables.merged_walks(want)
            if by_numpy is not None:
                merged[0] += 1
            merged[1] += (by_kernel is None) != (by_numpy is None) or (
                by_numpy is not None and not all(a.dtype == b.dtype and np.array_equal(a, b)
                                                 for a, b in zip(by_kernel, by_numpy, strict=True)))

    missed = kernels_not_run(run_all)
    return {"results": results, "solve_many": rows, "missed": missed,
            "numba": "numba" in sys.modules, "builder": built, "merged_walks": merged}


@check("plain")
def plain_switch_keeps_kernels_plain():
    """jit.compiled() under the switch: [compiled, numba imported, a kernel's type]."""
    from battlecalc.kernels import jit
    from battlecalc.kernels.exact import sweep

    jit.compiled()
    return [jit.is_compiled(), "numba" in sys.modules, type(sweep._solve_blocks).__name__]


# --- running them -----------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    kind, wanted = argv[0], set(argv[1:])
    sys.path.insert(0, HERE)
    out = {}
    for name, (of_kind, function) in CHECKS.items():
        if of_kind == kind and name in wanted:
            try:
                out[name] = function()
            except Exception:  # noqa: BLE001 - reported to the test that named the check
                out[name] = {"error": traceback.format_exc()}
    print(json.dumps(out))
    return 0


def run(wanted: set[str]) -> dict:
    """The answers of the wanted checks, each kind's in one interpreter of its own."""
    unknown = wanted - set(CHECKS)
    assert not unknown, f"no such fresh check: {sorted(unknown)}"
    answers = {}
    for kind, extra, options in (("compiled", {}, []),
                                 ("plain", {"BATTLECALC_PLAIN_KERNELS": "1"}, ["-W", "error"])):
        names = [name for name, (of_kind, _) in CHECKS.items()
                 if of_kind == kind and name in wanted]
        if not names:
            continue
        environment = {**os.environ, **extra}
        if kind == "compiled":
            environment.pop("BATTLECALC_PLAIN_KERNELS", None)
        done = subprocess.run([sys.executable, *options, __file__, kind, *names],
                              capture_output=True, text=True, env=environment, timeout=900)
        try:
            answers.update(json.loads(done.stdout.splitlines()[-1]))
        except (IndexError, json.JSONDecodeError):
            answers.update({name: {"error": f"exit status {done.returncode}\n{done.stderr}"}
                            for name in names})
    return answers


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
