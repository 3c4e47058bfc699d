"""Big battles solved exactly: seconds, pruned mass and the method `auto` picks.

Run:  python benchmarks/bench_big.py [--repeats R] [--mc]

For each battle (1942 2E, 300 v 300 land units of mixed types with AA, 200 v 200 land, 150 v
150 sea with and without submarines, and with submarines and aircraft on both sides): the
exact solve through ``simulate`` (warm, best of R), the probability it reports as pruned
(solver.Limits.prune_budget), the estimate `auto` chooses by
(solver.plan.exact_seconds; "-" for a battle solved in a compact table, whose work is
known only as it goes: solver.plan.compact_table), the method `auto` takes and, with --mc, a
million Monte Carlo trials for comparison.  Prints; asserts nothing.
"""

from __future__ import annotations

import argparse

from timing import best_of

import battlecalc
from battlecalc.api import make_battle
from battlecalc.compile import compile_battle
from battlecalc.solver.plan import compact_table, exact_seconds

BATTLES = {
    "land 300 v 300, AA": dict(rules="1942-2e",
                               attacker="150 inf, 50 art, 60 tank, 25 ftr, 15 bmb",
                               defender="180 inf, 50 art, 40 tank, 25 ftr, 5 aa"),
    "land 200 v 200, AA": dict(rules="1942-2e",
                               attacker="100 inf, 30 art, 40 tank, 20 ftr, 10 bmb",
                               defender="120 inf, 30 art, 30 tank, 15 ftr, 5 aa"),
    "sea 150 v 150": dict(rules="1942-2e", sea=True,
                          attacker="30 dd, 30 ca, 30 bb, 10 cv, 35 ftr, 15 bmb",
                          defender="40 dd, 25 ca, 30 bb, 15 cv, 40 ftr"),
    "sea 150 v 150, subs": dict(rules="1942-2e", sea=True,
                                attacker="20 sub, 30 dd, 25 ca, 25 bb, 10 cv, 25 ftr, 15 bmb",
                                defender="40 dd, 30 ca, 35 bb, 20 cv, 25 tt"),
    # subs and air on both sides: 1e10 state pairs, solved in a compact table
    "sea 150 v 150, subs+air": dict(rules="1942-2e", sea=True,
                                    attacker="20 sub, 25 dd, 25 ca, 20 bb, 10 cv, 35 ftr, 15 bmb",
                                    defender="20 sub, 30 dd, 25 ca, 25 bb, 15 cv, 35 ftr"),
    "sea 150 v 150, subs+air 2": dict(rules="1942-2e", sea=True,
                                      attacker="30 sub, 20 dd, 20 ca, 20 bb, 10 cv, 30 ftr, "
                                               "20 bmb",
                                      defender="30 sub, 20 dd, 30 ca, 20 bb, 15 cv, 35 ftr"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--mc", action="store_true", help="also time 1e6 Monte Carlo trials")
    args = parser.parse_args()
    print(f"{'battle':26s} {'pairs':>14s} {'exact s':>8s} {'estimate':>8s} {'pruned':>9s} "
          f"{'auto':>5s} {'attacker wins':>14s}" + (f" {'mc 1e6 s':>8s}" if args.mc else ""))
    for name, battle in BATTLES.items():
        compiled = compile_battle(make_battle(**battle))
        pairs = compiled.attacker.n_states * compiled.defender.n_states
        compact = compact_table(compiled)[0] > 0
        estimate = "-" if compact else f"{exact_seconds(compiled):.3f}"
        battlecalc.simulate(**battle, method="exact")  # warm: kernels and tables
        seconds, result = best_of(args.repeats,
                                  lambda b=battle: battlecalc.simulate(**b, method="exact"))
        auto = battlecalc.simulate(**battle, seed=1).method
        line = (f"{name:26s} {pairs:14,d} {seconds:8.3f} {estimate:>8s} {result.pruned:9.2e} "
                f"{auto:>5s} {result.attacker_win:14.10f}")
        if args.mc:
            mc_seconds, _ = best_of(1, lambda b=battle: battlecalc.simulate(**b, method="mc",
                                                                          seed=1))
            line += f" {mc_seconds:8.3f}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
