"""Sea-battle benchmark: Monte Carlo trials per second of sea battles and amphibious assaults
next to the land battles of bench_land.py.

Run:  python benchmarks/bench_sea.py [--trials N]

Issue: sea battles should run within 2x the land-battle throughput, so the last columns give
each battle's rate relative to the 8 v 8 and the big land battle (land rate / this rate; 2.0
or less meets the goal).  Warms up before timing (best of 3); prints, never asserts.
"""

from __future__ import annotations

import argparse
import os
import time

import numba
from bench_exact import compile_battle

BATTLES = {
    "land 8 v 8": dict(rules="1942-2e", attacker="4 inf 2 art 1 tank 1 ftr",
                       defender="5 inf 1 art 1 tank 1 ftr"),
    "land big": dict(rules="1942-2e", attacker="30 inf 10 art 10 tank 8 ftr 4 bmb",
                     defender="40 inf 5 art 5 tank 6 ftr"),
    "1942 mid sea": dict(rules="1942-2e", attacker="4 sub 2 dd 1 ca 2 ftr 1 bmb 1 bb",
                         defender="1 bb 2 dd 1 ca 1 cv 2 ftr 2 sub 2 tt", sea=True),
    "revised mid sea": dict(rules="revised", attacker="3 sub 2 dd 2 ftr 1 bmb 1 bb 1 cv",
                            defender="1 bb 2 dd 1 cv 2 ftr 2 sub 2 tt", sea=True),
    "1942 small sea": dict(rules="1942-2e", attacker="2 sub 1 dd 1 ftr",
                           defender="1 cv 1 ftr 1 dd 1 tt", sea=True),
    "1942 amphibious": dict(rules="1942-2e", attacker="4 inf 2 tank 3 ftr 1 bmb",
                            landing="6 inf 2 art 2 tank", bombard="1 bb 2 ca",
                            defender="12 inf 2 art 2 tank 2 ftr 1 aa"),
    "revised amphibious": dict(rules="revised", attacker="2 ftr", landing="4 inf 1 art 1 tank",
                               bombard="1 bb", defender="5 inf 1 tank 1 aa"),
}
LAND_REFERENCES = ("land 8 v 8", "land big")


def trials_per_second(monte_carlo, trials: int, repeats: int = 3) -> float:
    monte_carlo(50_000, 1)  # warm-up
    best = float("inf")
    for r in range(repeats):
        start = time.perf_counter()
        monte_carlo(trials, r)
        best = min(best, time.perf_counter() - start)
    return trials / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=5_000_000, help="trials per timing run")
    args = parser.parse_args()

    print(f"threads: {numba.get_num_threads()}  cpus: {os.cpu_count()}  "
          f"{args.trials:,} trials, best of 3")
    print(f"{'battle':<20}{'states a x d':>16}{'MC trials/s':>16}"
          f"{'8v8 / this':>12}{'big / this':>12}")
    rates, states = {}, {}
    for label, kwargs in BATTLES.items():
        _, tables, _, monte_carlo = compile_battle(kwargs)
        rates[label] = trials_per_second(monte_carlo, args.trials)
        states[label] = f"{tables.attacker.n_states:,} x {tables.defender.n_states:,}"
    for label, rate in rates.items():
        ratios = "".join(f"{rates[ref] / rate:>12.2f}" for ref in LAND_REFERENCES)
        print(f"{label:<20}{states[label]:>16}{rate:>16,.0f}{ratios}")
    for label, kwargs in BATTLES.items():
        armies = ", ".join(f"{k}={v!r}" for k, v in kwargs.items() if k != "rules")
        print(f"  {label}: {kwargs['rules']} {armies}")


if __name__ == "__main__":
    main()
