"""The per-call floor of simulate(method="exact") (issue 19): small battles, warm and never seen.

Run:  python benchmarks/bench_call.py [--old PATH] [--new PATH]

Each tree (a checkout whose battlecalc is imported through PYTHONPATH; default: this one, and
with --old another one next to it) runs in a subprocess of its own, one thread, kernels
compiled first.  Per battle: warm (the same call again, best of 30 x 50 calls) and never seen
(every kept plan and side table dropped before each call, best of 10 x 5), then the median
over repeated calls of each stage, wrapped where it is reached through battlecalc.api: spec
(simulate_spec), compile (compile_battle), estimate (seconds_estimate; solver.choose since the
solver wing), kernel (jit.call / jit.threads, solver.threads' since the solver wing; a kept
plan's kernel called straight counts in run_exact), run_exact's own Python
(or ExactSolve.run's, and ExactSolve.again's, which simulate calls for a kept plan solved
exactly), build_result (or ExactResults.of), and the rest (simulate's own code).  A stage
a kept plan skips shows 0.  Only figures within one run compare: the machine may be shared.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import timeit
from pathlib import Path

BATTLES = {
    "land 86: 1 tank v 2 bmb 2 aa": dict(rules="1942-2e", attacker="1 tank",
                                         defender="2 bomber 2 aa"),
    "1 tank v 3 ftr 3 aa": dict(rules="1942-2e", attacker="1 tank", defender="3 fighter 3 aa"),
    "1 inf v 11 art 6 ftr": dict(rules="1942-2e", attacker="1 infantry",
                                 defender="11 artillery 6 fighter"),
    "revised 1 inf v 1 inf": dict(rules="revised", attacker="1 inf", defender="1 inf"),
    "sea 2 sub 1 dd v 1 ca 1 ftr": dict(rules="1942-2e", attacker="2 sub 1 destroyer",
                                        defender="1 cruiser 1 fighter", sea=True),
    "mid land 14 v 12": dict(rules="1942-2e", attacker="6 inf 3 art 3 tank 2 ftr",
                             defender="8 inf 2 art 1 tank 1 aa"),
}
STAGES = ("simulate_spec", "compile_battle", "seconds_estimate", "kernel", "run_exact",
          "build_result", "other", "total")


def measure() -> dict:
    """This process's battlecalc: {battle: {warm_us, cold_us, stages_us, cold_stages_us}}."""
    import battlecalc
    import battlecalc.api as api
    import battlecalc.compile as compile_module
    import battlecalc.kernels.jit as jit

    jit.compiled()
    spent: dict[str, float] = {}

    active: set[str] = set()

    def timed(name, function):
        def wrapper(*args, **kwargs):
            if name in active:  # reached from within the same stage: counted once
                return function(*args, **kwargs)
            active.add(name)
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                spent[name] = spent.get(name, 0.0) + time.perf_counter() - start
                active.discard(name)
        return wrapper

    def forget():
        if hasattr(api, "forget_compiled"):
            api.forget_compiled()
        else:  # (a tree before api.forget_compiled)
            compile_module.build_side.cache_clear()

    out = {}
    for name, battle in BATTLES.items():
        battle = dict(battle, method="exact")
        battlecalc.simulate(**battle)
        warm = min(timeit.repeat(lambda b=battle: battlecalc.simulate(**b), number=50,
                                 repeat=30)) / 50

        def cold(b=battle):
            forget()
            battlecalc.simulate(**b)
        out[name] = dict(warm_us=1e6 * warm,
                         cold_us=1e6 * min(timeit.repeat(cold, number=5, repeat=10)) / 5)
    for stage in ("simulate_spec", "compile_battle", "seconds_estimate", "run_exact",
                  "build_result"):
        if hasattr(api, stage):
            setattr(api, stage, timed(stage, getattr(api, stage)))
    solver = getattr(api, "solver", None)  # the solver wing (battlecalc.solver), where it is
    if solver is not None:  # its choice is the estimate's stage
        solver.choose = timed("seconds_estimate", solver.choose)
    solve_class = getattr(api, "ExactSolve", None) or getattr(solver, "ExactSolve", None)
    if solve_class is not None:  # simulate's exact solves (a kept plan's solve is kept)
        solve_class.run = timed("run_exact", solve_class.run)
        if hasattr(solve_class, "again"):  # a kept plan's solve run straight by simulate
            solve_class.again = timed("run_exact", solve_class.again)
    if hasattr(api, "ExactResults"):  # and its Result
        api.ExactResults.of = timed("build_result", api.ExactResults.of)
    pool = jit if hasattr(jit, "call") else __import__("battlecalc.solver.threads",
                                                       fromlist=["threads"])
    pool.call, pool.threads = timed("kernel", pool.call), timed("kernel", pool.threads)
    for never_seen in (False, True):
        for name, battle in BATTLES.items():
            battle = dict(battle, method="exact")
            per: dict[str, list[float]] = {k: [] for k in STAGES}
            for _ in range(60 if never_seen else 300):
                if never_seen:
                    forget()
                spent.clear()
                start = time.perf_counter()
                battlecalc.simulate(**battle)
                total = time.perf_counter() - start
                staged = dict(spent)
                if "run_exact" in staged:
                    staged["run_exact"] -= staged.get("kernel", 0.0)
                staged["other"] = total - sum(v for k, v in spent.items() if k != "kernel")
                staged["total"] = total
                for k in STAGES:
                    per[k].append(staged.get(k, 0.0))
            out[name]["cold_stages_us" if never_seen else "stages_us"] = {
                k: 1e6 * statistics.median(v) for k, v in per.items()}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = str(Path(__file__).resolve().parent.parent)
    parser.add_argument("--old", help="another checkout to compare with")
    parser.add_argument("--new", default=here)
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure()))
        return
    trees = [t for t in (args.old, args.new) if t]
    results = []
    for tree in trees:
        env = dict(os.environ, PYTHONPATH=tree, BATTLECALC_THREADS="1")
        done = subprocess.run([sys.executable, __file__, "--one"], env=env, cwd="/",
                              capture_output=True, text=True, check=True)
        results.append(json.loads(done.stdout.strip().splitlines()[-1]))
    print("trees: " + "  ->  ".join(trees) + "   (us a call)")
    for name in BATTLES:
        rows = [r[name] for r in results]
        print(f"{name:<28} warm " + " -> ".join(f"{r['warm_us']:7.1f}" for r in rows)
              + "   never seen " + " -> ".join(f"{r['cold_us']:7.1f}" for r in rows))
        for which, label in (("stages_us", "warm"), ("cold_stages_us", "never seen")):
            print(f"    {label:<11}" + "  ".join(
                f"{k.split('_')[0]} " + "->".join(f"{r[which][k]:.0f}" for r in rows)
                for k in STAGES))


if __name__ == "__main__":
    main()
