"""The engine's speed: Monte Carlo trials per second and exact solves, warm, on this machine.

Run:  python benchmarks/bench_engine.py [--trials N] [--repeats R] [--memory]

Prints the measures of the engine issue (9) and the editions issue (11) next to their goals;
never asserts.  Everything is warmed up (kernels compiled or loaded from numba's cache) before
timing; each figure is the best of R runs.  --memory also runs 100,000,000 trials of the big
land battle in a subprocess and reports its peak memory.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time

from timing import best_of

import battlecalc
from battlecalc import solver
from battlecalc.api import make_battle
from battlecalc.compile import TABLES, compile_battle
from battlecalc.kernels import jit
from battlecalc.rules import list_editions
from battlecalc.solver.montecarlo import run_monte_carlo
from battlecalc.solver.threads import thread_count


def run_exact(compiled):
    """The exact solver alone: the plan simulate would choose, carried out."""
    return solver.solve(compiled, solver.choose(compiled, "exact"))

BIG_LAND = dict(rules="1942-2e", attacker="30 inf 10 art 10 tank 8 ftr 4 bmb",
                defender="40 inf 5 art 5 tank 6 ftr")
MID_SEA = dict(rules="1942-2e", attacker="4 sub 2 dd 1 ca 2 ftr 1 bmb 1 bb",
               defender="1 bb 2 dd 1 ca 1 cv 2 ftr 2 sub 2 tt", sea=True)
HUGE_LAND = dict(rules="1942-2e", attacker="100 inf 40 art 10 ftr",
                 defender="100 inf 40 art 6 ftr 3 aa")
AMPHIBIOUS = dict(rules="1942-2e", attacker="6 inf 2 art 2 tank", landing="8 inf 2 tank",
                  bombard="1 bb 2 ca", defender="12 inf 2 art 2 tank 1 ftr 1 aa")
BIG_1940 = dict(rules="1940-2e", attacker="20 inf 6 mech 8 art 6 tank 4 ftr 4 tac 2 bmb",
                defender="30 inf 4 mech 4 art 4 tank 4 ftr 2 aa")


def monte_carlo_rate(battle: dict, trials: int, repeats: int) -> float:
    compiled = compile_battle(make_battle(**battle))
    run_monte_carlo(compiled, 50_000, 1)
    return trials / best_of(repeats, lambda: run_monte_carlo(compiled, trials, 1))[0]


def exact_times(battle: dict, repeats: int) -> tuple[float, float, float]:
    """(simulate end to end, the same battle's tables built anew each call, solver alone)."""
    battlecalc.simulate(**battle, method="exact")
    end_to_end = best_of(repeats, lambda: battlecalc.simulate(**battle, method="exact"))[0]

    def uncached():
        TABLES.forget("side")
        battlecalc.simulate(**battle, method="exact")

    fresh = best_of(repeats, uncached)[0]
    compiled = compile_battle(make_battle(**battle))
    solver = best_of(repeats, lambda: run_exact(compiled))[0]
    return end_to_end, fresh, solver


def peak_memory(trials: int) -> str:
    code = ("import resource, battlecalc\n"
            f"r = battlecalc.simulate(**{BIG_LAND!r}, method='mc', trials={trials}, seed=1)\n"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)")
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return f"{int(out.stdout.strip())} MB peak, {time.perf_counter() - started:.1f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=4_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--memory", action="store_true")
    args = parser.parse_args()
    jit.compiled()
    print(f"threads: {thread_count()}, trials per Monte Carlo run: {args.trials:,}")
    rows = [(name, f"{monte_carlo_rate(battle, args.trials, args.repeats) / 1e6:.2f}M trials/s",
             goal)
            for name, battle, goal in (("land Monte Carlo, big battle", BIG_LAND, ">= 6.5M"),
                                       ("sea Monte Carlo, mid battle", MID_SEA, ">= 5M"),
                                       ("amphibious Monte Carlo", AMPHIBIOUS, ""))]
    for name, battle, goal in (("exact, big land battle", BIG_LAND, "<= 3 ms"),
                               ("exact, mid sea battle", MID_SEA, "<= 2 ms"),
                               ("exact, amphibious", AMPHIBIOUS, "")):
        end_to_end, fresh, solver = exact_times(battle, max(args.repeats, 20))
        rows.append((name, f"{end_to_end * 1e3:.2f} ms through simulate ({fresh * 1e3:.2f} ms "
                     f"with tables built anew; solver {solver * 1e3:.2f} ms)", goal))
    compiled = compile_battle(make_battle(**HUGE_LAND))
    run_exact(compiled)
    rows.append(("exact, 100 inf 40 art 10 ftr v 100 inf 40 art 6 ftr 3 aa",
                 f"{best_of(args.repeats, lambda: run_exact(compiled))[0]:.3f} s "
                 f"({compiled.attacker.n_states:,} x {compiled.defender.n_states:,} states)",
                 "<= 0.1 s"))
    if "1940-2e" in list_editions():
        rows.append(("1940 2E big land battle, exact",
                     f"{exact_times(BIG_1940, args.repeats)[0] * 1e3:.1f} ms", "<= 20 ms"))
        rows.append(("1940 2E big land battle, Monte Carlo",
                     f"{monte_carlo_rate(BIG_1940, args.trials, args.repeats) / 1e6:.2f}M "
                     "trials/s", ">= 5M"))
    if args.memory:
        rows.append(("100,000,000 trials of the big land battle", peak_memory(100_000_000),
                     "< 500 MB"))
    width = max(len(name) for name, _, _ in rows)
    for name, value, goal in rows:
        print(f"{name:<{width}}  {value}{'   goal ' + goal if goal else ''}")
    print(f"this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MB peak")


if __name__ == "__main__":
    main()
