"""Latency of the command line as a user meets it (issue 10): each figure is a fresh process.

Run:  python benchmarks/bench_latency.py [--repeats N]

* warm query: ``battlecalc run --rules 1942-2e -a "3 inf 1 art 1 tank" -d "4 inf 1 tank"
  --format json`` end to end (interpreter start, imports, numba cache load, solve, print):
  the median of N runs after one warm-up run (target 0.35 s);
* ``battlecalc --help`` (target 0.25 s), median of N;
* the same query cold: the first run with an empty numba cache (NUMBA_CACHE_DIR pointed at a
  fresh temporary folder), so every kernel it needs is compiled (one run: it is the slow one).

Runs ``python -m battlecalc`` from the repository root, so it measures this checkout (or the
one given with ``--repo``, to compare two checkouts under the same machine load).  Python
bytecode is written (PYTHONDONTWRITEBYTECODE is dropped for the child processes), as in a normal
install; the figures also depend on how busy the machine is.  Prints, never asserts.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QUERY = ["run", "--rules", "1942-2e", "-a", "3 inf 1 art 1 tank", "-d", "4 inf 1 tank",
         "--format", "json"]
TARGETS = {"warm query": 0.35, "--help": 0.25}


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(extra)
    return env


def timed(args: list[str], env: dict[str, str], repo: str = REPO) -> float:
    """Wall time of one `python -m battlecalc ARGS` process; fails loudly if it fails."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "battlecalc", *args], cwd=repo, env=env,
                          capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"battlecalc {' '.join(args)} failed ({done.returncode}):\n"
                         f"{done.stderr}")
    return elapsed


def report(label: str, times: list[float]) -> None:
    median = statistics.median(times)
    target = TARGETS.get(label)
    verdict = "" if target is None else (
        f"   target {target:.2f} s: {'met' if median <= target else 'NOT met'}")
    spread = f"  (min {min(times):.3f}, max {max(times):.3f}, n={len(times)})" if len(
        times) > 1 else ""
    print(f"{label:<22} {median:7.3f} s{spread}{verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7, help="runs per median (default 7)")
    parser.add_argument("--repo", default=REPO, help="checkout to measure (default: this one)")
    options = parser.parse_args()
    repeats, repo = options.repeats, os.path.abspath(options.repo)
    env = environment()

    load = f", load average {os.getloadavg()[0]:.2f}" if hasattr(os, "getloadavg") else ""
    print(f"{repo}: python {sys.version.split()[0]}, {os.cpu_count()} CPUs{load}")
    timed(QUERY, env, repo)  # warm-up: numba's cache filled, bytecode written
    report("warm query", [timed(QUERY, env, repo) for _ in range(repeats)])
    timed(["--help"], env, repo)
    report("--help", [timed(["--help"], env, repo) for _ in range(repeats)])
    with tempfile.TemporaryDirectory(prefix="battlecalc-numba-") as cache:
        report("cold query", [timed(QUERY, environment(NUMBA_CACHE_DIR=cache), repo)])


if __name__ == "__main__":
    main()
