"""solve_many benchmark: small exact battles a second, on one and two threads, against a plain
loop over simulate, in one run.

Run:  python benchmarks/bench_many.py [--battles N] [--loop M] [--seed S] [--repeat R]
      python benchmarks/bench_many.py --against REV [--rounds K]   (issue 45's A/B)
      python benchmarks/bench_many.py --chains N                    (sequences)

--against REV: this tree against the git revision REV (its worktree: bench_ab.worktree),
alternating one process a tree per round (the old tree first in even rounds), each measuring
issue 45's turn-size battles (1942 2E, 1-6 infantry, 0-3 artillery, 0-3 tanks, 0-2 fighters
against 1-6 infantry, 0-2 artillery, 0-2 tanks, exact, one thread, CPU time): 5,000 battles
of armies new to the process, then the same again (known); best of each tree over the
rounds, and the ratio new / old.  --chains N: N random turn-size battles with a
counter-attack, solved by solve_many and by simulate one by one (CPU time, alternating, best
of --repeat, armies new each time), each row checked equal to simulate's (every number with
==).

The battles: N random 1942 2E battles of 3 to 6 units a side, half land (infantry,
artillery, tanks, fighters and bombers; half the defenders with an AA gun) and half sea
(submarines, destroyers, cruisers, battleships, carriers, fighters), method exact.  After a
warm-up that compiles the kernels (and loads them from numba's cache on later runs):

* solve_many on 1 thread (battlecalc.set_threads) with an empty cache of small sides and of
  what sides are built from (every army new to the process), then with the sides dropped but
  their fire laws, walks and blocks known from other battles (a new army of a process that
  has weighed many), then again (the armies known: the steady state of a process that
  keeps weighing battles), then on 2 threads; each case best of --repeat runs (3; the caches
  emptied before each run of the first two);
* for each: battles a second by the wall clock and by the CPU time of the process (all
  threads; the rate on an idle core when other programs share the machine), and where the
  time went (frame.attrs["timing_s"]: checking the battles, compiling them, laying out the
  tables, the kernel, the result columns, the DataFrame);
* a plain loop over simulate on the first M of the same battles (warm, best of --repeat),
  battles a second, and the ratio.

Prints, never asserts.  The target (issue 19, item 3): >= 5,000 small exact battles a second
on one core.
"""

from __future__ import annotations

import argparse
import os
import random
import time

from timing import cpu_model

import battlecalc
from battlecalc import batch

TARGET_PER_S = 5_000
LAND = ("infantry", "artillery", "tank", "fighter", "bomber")
SEA = ("submarine", "destroyer", "cruiser", "battleship", "carrier", "fighter")


def battles(n: int, seed: int) -> list[dict]:
    rng = random.Random(seed)

    def army(units, extra=()):
        picked = [rng.choice(units) for _ in range(rng.randint(3, 6) - len(extra))]
        picked += extra
        return {unit: picked.count(unit) for unit in dict.fromkeys(picked)}

    out = []
    for i in range(n):
        if i % 2:
            out.append({"attacker": army(SEA), "defender": army(SEA), "sea": True})
        else:
            out.append({"attacker": army(LAND),
                        "defender": army(LAND[:3], ("aa",) if i % 4 == 0 else ())})
    return out


def timed(work):
    wall, cpu = time.perf_counter(), time.process_time()
    result = work()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def report(label: str, n: int, wall: float, cpu: float, timing: dict | None = None) -> None:
    line = (f"{label:<34} {n / wall:>9,.0f} /s wall {n / cpu:>9,.0f} /s cpu   "
            f"({wall / n * 1e6:6.1f} us wall, {cpu / n * 1e6:6.1f} us cpu a battle)")
    print(line)
    if timing:
        print(" " * 36 + "  ".join(f"{k} {v / n * 1e6:.1f}" for k, v in timing.items())
              + "  (us a battle)")


def forget_sides(every: bool) -> None:
    """Drop the cache of small sides (every army new to the process); every: also what
    sides are built from (compile.forget_tables: fire laws, casualty walks, block tables;
    a tree without it drops build_side's and the AA outcomes' caches)."""
    from battlecalc import compile as compile_module

    tables = getattr(compile_module, "TABLES", None)
    if tables is not None:  # (one store of every kept table: compile.cache)
        if every:
            compile_module.forget_tables()
        else:
            tables.forget("side")
        return
    batch._sides.clear()
    batch._side_bytes[0] = 0
    if every and hasattr(compile_module, "forget_tables"):
        compile_module.forget_tables()
    elif every:
        compile_module.build_side.cache_clear()
        compile_module._aa_outcomes.cache_clear()


def turn_battles(n: int, seed: int, counterattack: bool = False) -> list[dict]:
    """Issue 45's battles of a turn's size (and, with counterattack, a counter-attack of
    1-5 infantry, 0-2 tanks and 0-2 artillery on each)."""
    rng = random.Random(seed)

    def army(counts: dict) -> dict:
        return {unit: n for unit, n in counts.items() if n}

    out = []
    for _ in range(n):
        battle = {"attacker": army({"infantry": rng.randint(1, 6),
                                    "artillery": rng.randint(0, 3),
                                    "tank": rng.randint(0, 3), "fighter": rng.randint(0, 2)}),
                  "defender": army({"infantry": rng.randint(1, 6),
                                    "artillery": rng.randint(0, 2),
                                    "tank": rng.randint(0, 2)})}
        if counterattack:
            battle["counterattack"] = army({"infantry": rng.randint(1, 5),
                                            "tank": rng.randint(0, 2),
                                            "artillery": rng.randint(0, 2)})
        out.append(battle)
    return out


def turn_rates(rounds: int) -> dict:
    """This tree's turn-size battles a second (CPU time, one thread): {"new", "known"}."""
    options = {"rules": "1942-2e", "method": "exact"}
    battlecalc.solve_many(turn_battles(2_000, 99), **options)  # (kernels loaded)
    battlecalc.set_threads(1)
    best = {"new": 0.0, "known": 0.0}
    for r in range(rounds):
        work = turn_battles(5_000, r)
        forget_sides(every=True)
        _, _, cpu = timed(lambda work=work: battlecalc.solve_many(work, **options))
        best["new"] = max(best["new"], len(work) / cpu)
        _, _, cpu = timed(lambda work=work: battlecalc.solve_many(work, **options))
        best["known"] = max(best["known"], len(work) / cpu)
    return best


def against(rev: str, rounds: int) -> None:
    """This tree against `rev`, alternating (see the module docstring)."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_ab import ROOT, worktree

    old, _ = worktree(rev)
    script = Path(__file__).resolve()
    trees = {"old": old, "new": ROOT}
    best: dict = {"old": {}, "new": {}}
    for r in range(rounds):
        for name in (("old", "new") if r % 2 == 0 else ("new", "old")):
            env = {**os.environ, "PYTHONPATH": str(trees[name])}
            done = subprocess.run([sys.executable, str(script), "--rates", "3"], env=env,
                                  cwd=trees[name], capture_output=True, text=True, check=True)
            rates = json.loads(done.stdout.strip().splitlines()[-1])
            for key, rate in rates.items():
                best[name][key] = max(best[name].get(key, 0.0), rate)
    print(f"{cpu_model()}; {rev} against this tree, {rounds} rounds alternating")
    for key in ("new", "known"):
        old_rate, new_rate = best["old"][key], best["new"][key]
        print(f"turn-size battles, {key} armies: {old_rate:,.0f} -> {new_rate:,.0f} a second "
              f"(CPU, one thread): {new_rate / old_rate:.2f}x")


def chains(n: int, repeat: int) -> None:
    """Sequences with a counter-attack: solve_many against simulate one by one."""
    from battlecalc import api

    options = {"rules": "1942-2e", "method": "exact"}
    battlecalc.solve_many(turn_battles(100, 98, True), **options)
    best = {"solve_many": 0.0, "simulate": 0.0}
    for r in range(repeat):
        work = turn_battles(n, 1000 + r, True)
        api.forget_compiled()
        rows, _, cpu = timed(lambda work=work: battlecalc.batch.solve_rows(
            [{**b, **options} for b in work]))
        best["solve_many"] = max(best["solve_many"], n / cpu)
        api.forget_compiled()
        want, _, cpu = timed(lambda work=work: [battlecalc.simulate(**b, **options).flat_row()
                                      for b in work])
        best["simulate"] = max(best["simulate"], n / cpu)
        differ = sum(1 for (row, _), w in zip(rows, want, strict=True)
                     if row is None or any(row.get(k) != v for k, v in w.items()
                                           if not k.endswith("_s") and v == v))
        print(f"round {r}: rows unlike simulate's: {differ} of {n}")
    print(f"{cpu_model()}; {n} turn-size battles with a counter-attack, armies new: "
          f"solve_many {best['solve_many']:,.0f} a second, simulate one by one "
          f"{best['simulate']:,.0f} a second (CPU, best of {repeat}): "
          f"{best['solve_many'] / best['simulate']:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--battles", type=int, default=10_000)
    parser.add_argument("--loop", type=int, default=500)
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs a case")
    parser.add_argument("--against", metavar="REV", help="this tree against REV, alternating")
    parser.add_argument("--rounds", type=int, default=4, help="rounds of --against")
    parser.add_argument("--rates", type=int, metavar="ROUNDS", help=argparse.SUPPRESS)
    parser.add_argument("--chains", type=int, metavar="N",
                        help="N sequences with a counter-attack: solve_many against simulate")
    args = parser.parse_args()
    if args.rates:  # (a child of --against: its rates as JSON)
        import json

        print(json.dumps(turn_rates(args.rates)))
        return
    if args.against:
        against(args.against, args.rounds)
        return
    if args.chains:
        chains(args.chains, args.repeat)
        return
    work = battles(args.battles, args.seed)
    options = {"rules": "1942-2e", "method": "exact"}
    warm = battles(2_000, args.seed + 1)  # (enough work for the kernels to be compiled)
    battlecalc.solve_many(warm, **options)  # compile (or load) the kernels
    for b in warm[:50]:
        battlecalc.simulate(**b, **options)
    print(f"{args.battles:,} random 1942 2E battles, 3-6 units a side, half land half sea, "
          "exact")
    battlecalc.set_threads(1)

    def new_armies():
        forget_sides(every=True)
        return timed(lambda work=work: battlecalc.solve_many(work, **options))

    def known_sub_forces():
        forget_sides(every=True)
        battlecalc.solve_many(warm, **options)  # other battles' armies: forces, walks, blocks
        forget_sides(every=False)
        return timed(lambda work=work: battlecalc.solve_many(work, **options))

    for label, run in (("solve_many, 1 thread, new armies", new_armies),
                       ("  ... known sub-forces", known_sub_forces)):
        frame, wall, cpu = min((run() for _ in range(args.repeat)), key=lambda r: r[1])
        report(label, len(work), wall, cpu, frame.attrs["timing_s"])
        if run is new_armies:
            new_rate = (len(work) / wall, len(work) / cpu)
    for threads in (1, 2):
        battlecalc.set_threads(threads)
        runs = [timed(lambda work=work: battlecalc.solve_many(work, **options))
                for _ in range(args.repeat)]
        frame, wall, cpu = min(runs, key=lambda run: run[1])
        report(f"solve_many, {threads} thread{'s' * (threads > 1)}, known armies", len(work),
               wall, cpu, frame.attrs["timing_s"])
        if threads == 1:
            best_one = len(work) / wall
    battlecalc.set_threads(None)
    loop = work[:args.loop]
    _, wall, cpu = min((timed(lambda: [battlecalc.simulate(**b, **options) for b in loop])
                        for _ in range(args.repeat)), key=lambda r: r[1])
    report("simulate, plain loop", len(loop), wall, cpu)
    print(f"solve_many (1 thread, known armies) / simulate loop: "
          f"{best_one / (len(loop) / wall):.0f}x   target {TARGET_PER_S:,}/s on one core")
    print(f"every army new: {new_rate[0]:,.0f}/s wall, {new_rate[1]:,.0f}/s cpu   "
          f"target {TARGET_PER_S:,}/s on one core")


if __name__ == "__main__":
    main()
