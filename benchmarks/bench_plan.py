"""Planner and wave benchmark: `battlecalc.plan` on the issue's speed target, and waves.

Run:  python benchmarks/bench_plan.py [--repeats N] [--threads T]

For each case: a warm-up (JIT compile / cache load), then the best of N end-to-end calls.
Prints the time, the number of battles the search solved (`solves`) next to the number of
forces the pool describes, the time per solve, and the target where the issue sets one
(1942 2E, defender 6 inf 2 art 1 tank 1 aa, pool 10 inf 5 art 5 tank 4 ftr 2 bmb, goal
takes_territory>=0.9: <= 5 s on 2 cores). Since the search's time is about solves x time per
solve, the solve count says what a faster exact solver will buy. Prints, never asserts.
"""

from __future__ import annotations

import argparse

from timing import best_of

import battlecalc

PLANS = {
    "speed target (cost)": (
        dict(rules="1942-2e", defender="6 inf 2 art 1 tank 1 aa",
             pool="10 inf 5 art 5 tank 4 ftr 2 bmb", goal="takes_territory>=0.9"),
        5.0,
    ),
    "speed target, top 1": (
        dict(rules="1942-2e", defender="6 inf 2 art 1 tank 1 aa",
             pool="10 inf 5 art 5 tank 4 ftr 2 bmb", goal="takes_territory>=0.9", top=1),
        None,
    ),
    "revised defence (cost)": (
        dict(rules="revised", attacker="6 inf 2 art 3 tank 2 ftr 1 bmb", defend=True,
             defender="2 inf", pool="8 inf 2 art 3 tank 2 ftr", goal="takes_territory<=0.1"),
        None,
    ),
    "loss objective, smaller pool": (
        dict(rules="1942-2e", defender="4 inf 1 art 1 tank 1 aa",
             pool="6 inf 3 art 3 tank 2 ftr", goal="takes_territory>=0.9", objective="loss"),
        None,
    ),
}

WAVES = {
    "1942 three waves + counter, exact": dict(
        rules="1942-2e", attacker="6 inf 2 art 2 tank 2 ftr", defender="10 inf 2 tank 1 aa",
        waves=["4 inf 2 tank", "3 inf 1 art 1 tank"], counterattack="4 inf 1 art 1 tank",
        method="exact"),
    "1942 three waves + counter, mc 1e6": dict(
        rules="1942-2e", attacker="6 inf 2 art 2 tank 2 ftr", defender="10 inf 2 tank 1 aa",
        waves=["4 inf 2 tank", "3 inf 1 art 1 tank"], counterattack="4 inf 1 art 1 tank",
        method="mc", trials=1_000_000, seed=1),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    battlecalc.set_threads(args.threads)  # None: BATTLECALC_THREADS, else the usable cores
    battlecalc.simulate(rules="1942-2e", attacker="1 inf 1 ftr", defender="1 inf 1 aa",
                        method="exact")  # warm-up: numba cache load
    print(f"threads: {battlecalc.thread_count()}")
    for label, (kwargs, target) in PLANS.items():
        battlecalc.plan(**kwargs)
        seconds, result = best_of(args.repeats, lambda kwargs=kwargs: battlecalc.plan(**kwargs))
        best = result.plans[0] if result.plans else None
        line = (f"{label:<30} {seconds:7.3f} s   {result.solves:>5} solves of "
                f"{result.forces:>6,} forces   {1000 * seconds / max(result.solves, 1):5.1f} "
                f"ms/solve   best: {battlecalc.format_army(best.addition) if best else '-'}"
                + (f" ({best.cost} IPC)" if best else ""))
        if target is not None:
            line += f"   target <= {target} s: {'met' if seconds <= target else 'MISSED'}"
        print(line)
    for label, kwargs in WAVES.items():
        battlecalc.simulate(**kwargs)
        seconds, result = best_of(args.repeats,
                                  lambda kwargs=kwargs: battlecalc.simulate(**kwargs))
        print(f"{label:<38} {seconds:7.3f} s   {result.solves:>3} battles   takes "
              f"{result.takes_territory:.4f}   holds {result.holds:.4f}")


if __name__ == "__main__":
    main()
