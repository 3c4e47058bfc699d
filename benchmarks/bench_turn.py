"""The turn planner's time (issue 44): `battlecalc turn SAVE` on the shared TripleA saves.

Run:  python benchmarks/bench_turn.py [--repeats 5] [--skip-global] [--skip-fresh]

Each figure is printed with the CPU's model and the 1-minute load average when it was taken
(the machine is shared):

* the Revised opening (the Russians), --counter none, warm: the best of --repeats plans in
  this process after one plan (kernels loaded, tables kept; every plan solves its battles
  again: its leaves are memoised per plan), beside the time solve_many takes, warm, for the
  same 753 leaves in the same process (issue 44: at most 2 s, and 50 times that);
* the same with --counter max (the counter-attacks solved for the plan's battles and shown),
  and with --objective hold --counter max (every candidate chained with its counter-attack):
  issue 44's at most 5 s;
* Global 1940, the Germans' first turn (249,042 candidate forces), --time-budget 30: its value
  against the greedy baseline, its seconds, whether proven optimal;
* a fresh install's first `battlecalc turn` on the Revised opening: a copy of the package with
  no bytecode and no numba cache (numba keeps its cache beside the sources), a new HOME and
  TMPDIR, `python -m battlecalc turn SAVE` as its own process: its CPU (user + system of it
  and its children) and wall (issue 44: at most 10 s of CPU).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from timing import best_of, cpu_model

ROOT = Path(__file__).resolve().parents[1]
SAVES = ROOT.parent / "shared" / "fixtures" / "triplea" / "saves"
START = SAVES / "revisted_start_of_game.tsvg"
GLOBAL = SAVES / "wwii_global_2nd_edition_during_g1_politics.tsvg"


def load() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


def leaves_battles(save) -> list[dict]:
    """The solve_many battles of every candidate of the Revised opening (the planner's)."""
    from battlecalc.turn.leaves import Leaves
    from battlecalc.turn.search import enumerate_forces
    from battlecalc.turn.theatre import theatre_of

    theatre = theatre_of(save)
    leaves = Leaves(theatre)
    battles = []
    for front in theatre.fronts.values():
        for force in enumerate_forces(theatre, front, need_land=False):
            battle = leaves._battle(front, force, None)
            if battle is not None:
                battles.append(battle)
    return battles


def warm(repeats: int) -> None:
    import battlecalc
    from battlecalc.turn import load as load_save
    from battlecalc.turn import plan_turn

    save = load_save(START)
    battles = leaves_battles(save)
    battlecalc.solve_many(battles)
    seconds, _ = best_of(repeats, lambda: battlecalc.solve_many(battles))
    print(f"solve_many, the {len(battles)} leaves of the Revised opening, warm: {seconds:.3f} s "
          f"(best of {repeats}; {load()})")
    leaves_s = seconds
    for label, options, limit in (("--counter none", {"counter": "none"}, 2.0),
                                  ("--counter max", {"counter": "max"}, 5.0),
                                  ("--objective hold --counter max",
                                   {"objective": "hold", "counter": "max"}, 5.0)):
        plan_turn(save, **options)
        seconds, plan = best_of(repeats, lambda options=options: plan_turn(save, **options))
        ratio = f", {seconds / leaves_s:.1f}x solve_many's" if options["counter"] == "none" \
            else ""
        print(f"the Revised opening {label}, warm: {seconds:.3f} s (best of {repeats}{ratio}; "
              f"issue 44: <= {limit:g} s; {plan.battles_solved} battles solved, value "
              f"{plan.value:.6f}; {load()})")


def global_1940() -> None:
    from battlecalc.turn import plan_turn

    before = load()
    started = time.perf_counter()
    plan = plan_turn(GLOBAL, time_budget=30)
    seconds = time.perf_counter() - started
    print(f"Global 1940, the Germans' first turn, --time-budget 30: value {plan.value:.6f} "
          f"against the greedy baseline's {plan.greedy:.6f} ({plan.value - plan.greedy:+.3f}), "
          f"{seconds:.1f} s, {plan.battles_solved:,} battles solved of {plan.forces:,} forces, "
          f"{'proven optimal' if plan.proven_optimal else 'not proven optimal'} ({before} at "
          f"the start, {load()} at the end)")


def fresh() -> None:
    with tempfile.TemporaryDirectory(prefix="battlecalc-fresh-") as work:
        tree = Path(work) / "tree"
        shutil.copytree(ROOT / "battlecalc", tree / "battlecalc",
                        ignore=shutil.ignore_patterns("__pycache__"))
        (Path(work) / "tmp").mkdir()
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("NUMBA_", "BATTLECALC_", "PYTHON", "XDG_"))}
        env.update(PYTHONPATH=str(tree), TMPDIR=str(Path(work) / "tmp"), HOME=work)
        before_load = load()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "battlecalc", "turn", str(START)],
                              env=env, cwd=work, capture_output=True, text=True)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    head = done.stdout.splitlines()[2] if done.returncode == 0 else done.stderr.strip()
    print(f"a fresh install's first battlecalc turn on the Revised opening: {cpu:.1f} s of CPU, "
          f"{wall:.1f} s wall (issue 44: <= 10 s of CPU; {before_load}): {head}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--skip-global", action="store_true")
    parser.add_argument("--skip-fresh", action="store_true")
    args = parser.parse_args()
    if not START.exists():
        sys.exit(f"the shared TripleA saves are not at {SAVES}")
    print(f"{cpu_model()}, {os.cpu_count()} cores")
    if not args.skip_fresh:
        fresh()
    warm(args.repeats)
    if not args.skip_global:
        global_1940()


if __name__ == "__main__":
    main()
