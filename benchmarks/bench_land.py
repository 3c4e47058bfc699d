"""Land-battle benchmark: Monte Carlo trials per second, exact-solver time, peak memory.

Run:  python benchmarks/bench_land.py [--big-trials N] [--memory-trials N] [--skip-memory]

Warms up (JIT compile / cache load) before timing; prints, never asserts.  The pure-Python
die-by-die reference (tests/reference.py) is timed on the same battles so the ratio shows.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time

import numba

from battlecalc.api import make_battle, run_exact, run_monte_carlo
from battlecalc.compile import compile_tables

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

BATTLES = {
    "small (1 v 1)": ("1942-2e", "1 inf", "1 inf"),
    "mid (8 v 8)": ("1942-2e", "4 inf 2 art 1 tank 1 ftr", "5 inf 1 art 1 tank 1 ftr"),
    "big": ("1942-2e", "30 inf 10 art 10 tank 8 ftr 4 bmb", "40 inf 5 art 5 tank 6 ftr"),
}


def tables_for(edition: str, attacker: str, defender: str):
    battle = make_battle(edition, attacker, defender)
    return compile_tables(battle.attacker, battle.defender, battle.attacker_rules,
                          battle.defender_rules, is_land_battle=True)


def time_mc(tables, trials: int, repeats: int = 3) -> float:
    run_monte_carlo(tables, 50_000, seed=1)  # warm-up
    best = float("inf")
    for r in range(repeats):
        start = time.perf_counter()
        run_monte_carlo(tables, trials, seed=r)
        best = min(best, time.perf_counter() - start)
    return trials / best


def time_exact(tables, repeats: int = 5) -> float:
    run_exact(tables)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run_exact(tables)
        best = min(best, time.perf_counter() - start)
    return best


def reference_rate(edition, attacker, defender, trials: int) -> float:
    from reference import simulate_land

    from battlecalc.army import parse_army
    from battlecalc.rules import load_rules

    rules = load_rules(edition)
    start = time.perf_counter()
    simulate_land(edition, parse_army(attacker, rules), parse_army(defender, rules),
                  trials=trials, seed=1)
    return trials / (time.perf_counter() - start)


def peak_memory_mb(trials: int) -> tuple[float, float]:
    """Peak RSS (MB) and seconds of a fresh process running `trials` trials of the big battle."""
    edition, attacker, defender = BATTLES["big"]
    code = (
        "import time, resource\n"
        "from battlecalc.api import simulate\n"
        "t = time.perf_counter()\n"
        f"r = simulate(rules={edition!r}, attacker={attacker!r}, defender={defender!r}, "
        f"method='mc', trials={trials}, seed=1)\n"
        "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    seconds, maxrss_kb = out.stdout.split()
    return int(maxrss_kb) / 1024, float(seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=5_000_000, help="trials per timing run")
    parser.add_argument("--memory-trials", type=int, default=100_000_000)
    parser.add_argument("--skip-memory", action="store_true")
    args = parser.parse_args()

    print(f"threads: {numba.get_num_threads()}  cpus: {os.cpu_count()}")
    print(f"{'battle':<16}{'states a x d':>14}{'MC trials/s':>16}{'exact s':>12}"
          f"{'reference trials/s':>22}{'MC / reference':>16}")
    for label, (edition, attacker, defender) in BATTLES.items():
        tables = tables_for(edition, attacker, defender)
        rate = time_mc(tables, args.trials)
        exact_s = time_exact(tables)
        ref_trials = 20_000 if label.startswith("small") else 500
        ref_rate = reference_rate(edition, attacker, defender, ref_trials)
        states = f"{tables.attacker.n_states} x {tables.defender.n_states}"
        print(f"{label:<16}{states:>14}{rate:>16,.0f}{exact_s:>12.4f}{ref_rate:>22,.0f}"
              f"{rate / ref_rate:>16,.0f}")
    edition, attacker, defender = BATTLES["big"]
    print(f"big battle: {edition} {attacker} v {defender}")
    if not args.skip_memory:
        mb, seconds = peak_memory_mb(args.memory_trials)
        print(f"{args.memory_trials:,} trials of the big battle in a fresh process: "
              f"{seconds:.1f} s, peak RSS {mb:.0f} MB "
              f"(self: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB)")


if __name__ == "__main__":
    main()
