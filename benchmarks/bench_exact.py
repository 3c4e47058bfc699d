"""Exact-solver benchmark: end-to-end `simulate(method="exact")` and solver-only time.

Run:  python benchmarks/bench_exact.py [--repeats N]

For each battle: a warm-up call (JIT compile / cache load), then the best of N end-to-end
`battlecalc.simulate(..., method="exact")` calls (parse, compile the tables, solve, build the
result) and the best of N solver-only calls (`run_exact` / `run_sea_exact` on tables compiled
once), the latter also with numba limited to one thread (the land solver runs attacker
profiles in parallel; on a busy machine the parallel region can cost more than it saves).
Prints the state counts (attacker states x defender states), the probability mass the
solver pruned and the target where the issue sets one; prints, never asserts.
"""

from __future__ import annotations

import argparse
import os
import time

import numba
from battlecalc.sea import compile_sea, rules_array

import battlecalc
from battlecalc.api import make_battle, run_exact, run_sea_exact
from battlecalc.compile import compile_tables

# label -> (simulate keyword arguments, target seconds for the end-to-end call or None)
BATTLES = {
    "1942 huge land": (
        dict(rules="1942-2e", attacker="100 inf 40 art 10 ftr",
             defender="100 inf 40 art 6 ftr 3 aa"),
        0.1,
    ),
    "1942 big land": (
        dict(rules="1942-2e", attacker="30 inf 10 art 10 tank 8 ftr 4 bmb",
             defender="40 inf 5 art 5 tank 6 ftr"),
        0.010,
    ),
    "1942 mid sea": (
        dict(rules="1942-2e", attacker="4 sub 2 dd 1 ca 2 ftr 1 bmb 1 bb",
             defender="1 bb 2 dd 1 ca 1 cv 2 ftr 2 sub 2 tt", sea=True),
        None,
    ),
    "revised mid sea": (
        dict(rules="revised", attacker="3 sub 2 dd 2 ftr 1 bmb 1 bb 1 cv",
             defender="1 bb 2 dd 1 cv 2 ftr 2 sub 2 tt", sea=True),
        None,
    ),
    "1942 amphibious": (
        dict(rules="1942-2e", attacker="4 inf 2 tank 3 ftr 1 bmb", landing="6 inf 2 art 2 tank",
             bombard="1 bb 2 ca", defender="12 inf 2 art 2 tank 2 ftr 1 aa"),
        None,
    ),
}


def _orders(battle):
    """The battle's orders of losses (the defaults unless the Battle carries its own)."""
    a_order = getattr(battle, "attacker_order", None)
    d_order = getattr(battle, "defender_order", None)
    if a_order is None or d_order is None:
        from battlecalc.compile import default_loss_order

        a_order = default_loss_order(dict(battle.attacker_rules.units), "attack")
        d_order = default_loss_order(dict(battle.defender_rules.units), "defense")
    return a_order, d_order


def compile_battle(kwargs: dict):
    """(battle, tables, exact solver, Monte Carlo runner) for simulate-style keyword arguments.

    The tables are compiled the way `simulate` compiles them; the solver runs on them as
    `solve()`, the Monte Carlo kernel as `monte_carlo(trials, seed)`.
    """
    from battlecalc.api import run_monte_carlo, run_sea_monte_carlo

    battle = make_battle(**kwargs)
    a_order, d_order = _orders(battle)
    if battle.sea:
        tables = compile_sea(battle.attacker, battle.defender, battle.attacker_rules,
                             battle.defender_rules, a_order, d_order)
        vector = rules_array(battle.rules.flags, battle.attacker_submerge,
                             battle.defender_submerge)
        return (battle, tables, lambda: run_sea_exact(tables, vector),
                lambda trials, seed: run_sea_monte_carlo(tables, vector, trials, seed))
    tables = compile_tables(
        battle.attacker, battle.defender, battle.attacker_rules, battle.defender_rules,
        is_land_battle=True, attacker_order=a_order, defender_order=d_order,
        bombard=battle.bombard, landing_units=sum(battle.landing.values()),
    )
    return (battle, tables, lambda: run_exact(tables),
            lambda trials, seed: run_monte_carlo(tables, trials, seed))


def best_of(fn, repeats: int) -> float:
    fn()  # warm-up
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="timed calls per measurement")
    args = parser.parse_args()

    print(f"threads: {numba.get_num_threads()}  cpus: {os.cpu_count()}  "
          f"best of {args.repeats} after a warm-up")
    print(f"{'battle':<18}{'states a x d':>16}{'end-to-end s':>14}{'solver s':>12}"
          f"{'1 thread s':>12}{'target s':>10}{'':>6}{'pruned':>10}{'attacker win':>14}")
    for label, (kwargs, target) in BATTLES.items():
        _, tables, solve, _ = compile_battle(kwargs)
        end_to_end = best_of(lambda kw=kwargs: battlecalc.simulate(**kw, method="exact"),
                             args.repeats)
        solver = best_of(solve, args.repeats)
        threads = numba.get_num_threads()
        try:
            numba.set_num_threads(1)
            one_thread = best_of(solve, args.repeats)
        finally:
            numba.set_num_threads(threads)
        result = battlecalc.simulate(**kwargs, method="exact")
        states = f"{tables.attacker.n_states:,} x {tables.defender.n_states:,}"
        verdict = "" if target is None else ("ok" if end_to_end <= target else "SLOW")
        target_text = "-" if target is None else f"{target:g}"
        print(f"{label:<18}{states:>16}{end_to_end:>14.4f}{solver:>12.4f}{one_thread:>12.4f}"
              f"{target_text:>10}"
              f"{verdict:>6}{result.pruned:>10.1e}{result.attacker_win:>14.4%}")
    for label, (kwargs, _) in BATTLES.items():
        armies = ", ".join(f"{k}={v!r}" for k, v in kwargs.items() if k != "rules")
        print(f"  {label}: {kwargs['rules']} {armies}")


if __name__ == "__main__":
    main()
