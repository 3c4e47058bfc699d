"""A/B of this working tree against any git revision on what users see, in one run.

Run:  python benchmarks/bench_revisions.py REV [--repeats 5] [--rounds 3] [--cold] [--keep]

REV is checked out into a worktree (bench_ab.worktree).  First each tree's numba cache is
filled (a process compiling every kernel, where the revision has jit.compiled, and solving a
land, a sea and a solve_many battle with them): whether a never-seen battle's side tables are
built by the compiled builder or in plain Python depends on what the cache holds
(solver.plan.kernels_for), and a new worktree holds only what a warm-up compiled (at 88f8f4a
a never-seen battle took 1.0-3.2 ms so, 0.26-0.44 ms with the cache full: "never seen" once
read 2-4x in favour of whichever tree had the fuller cache).  Then each round runs one
subprocess per tree, alternating old and new, each warm (a warm-up of every battle first),
and reports per figure the best of --repeats inside the process:

* exact, kept: simulate(method="exact") of the same small battle again (the per-call floor,
  microseconds a call, a mean over 200 calls);
* exact, never seen: the same after api.forget_compiled() (checking, compiling, solving);
* exact, big: battles of thousands to hundreds of thousands of state pairs (seconds);
* Monte Carlo: the big land and the mid sea battle (trials a second);
* solve_many: 2,000 battles of new armies (battles a second).

The trees take turns going first (old first in even rounds).  The figure of a tree is its best
over the rounds; the ratio is old / new for times and new / old for rates (above 1: the new
tree is faster), and "median" the median over the rounds of each round's ratio (less moved by
one lucky process).  An A/A run (REV = HEAD, the working tree clean) shows the host's noise.
--cold adds the first compile: numba's cache of the tree emptied, one process solving an exact
land, an exact sea and a Monte Carlo battle (CPU seconds, user + sys of the process), taking
turns, best of --rounds.  Only the public API is used (battlecalc.simulate,
battlecalc.solve_many, battlecalc.api.forget_compiled), so any revision runs the same script.
The machine may be loaded: only ratios within one run mean something; the CPU model is
printed.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ab import ROOT, worktree  # noqa: E402
from timing import cpu_model  # noqa: E402

SMALL = {
    "1 inf v 1 inf": dict(rules="revised", attacker="1 inf", defender="1 inf"),
    "3 inf 1 art v 3 inf": dict(rules="1942-2e", attacker="3 inf 1 art", defender="3 inf"),
    "land with AA": dict(rules="1942-2e", attacker="6 inf 2 art 2 tank 2 ftr",
                         defender="8 inf 1 tank 1 aa"),
    "sea, subs v air": dict(rules="1942-2e", sea=True, attacker="10 sub",
                            defender="6 ftr 2 bmb 2 dd"),
}
BIG = {
    "big land": dict(rules="1942-2e", attacker="30 inf 10 art 10 tank 8 ftr 4 bmb",
                     defender="40 inf 5 art 5 tank 6 ftr"),
    "100 v 100": dict(rules="1942-2e", attacker="60 inf 20 art 20 tank",
                      defender="70 inf 20 art 10 tank"),
    "mid sea": dict(rules="1942-2e", sea=True, attacker="4 sub 2 dd 1 ca 2 ftr 1 bmb 1 bb",
                    defender="1 bb 2 dd 1 ca 1 cv 2 ftr 2 sub 2 tt"),
    "sea 75": dict(rules="1942-2e", sea=True, attacker="3 bmb 16 dd 13 cv",
                   defender="4 tt 4 ca 3 sub 4 cv"),
}
MC = {"big land": BIG["big land"], "mid sea": BIG["mid sea"]}

CHILD = r"""
import json, random, sys, time
import battlecalc
from battlecalc import api
small, big, mc, repeats = json.loads(sys.argv[1])
out = {}
for battle in (*small.values(), *big.values()):
    battlecalc.simulate(**battle, method="exact")
for battle in mc.values():
    battlecalc.simulate(**battle, method="mc", trials=100_000, seed=7)

def best(function, n):
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(n):
            function()
        times.append((time.perf_counter() - t) / n)
    return min(times)

for name, battle in small.items():
    out[f"exact kept: {name} (us)"] = 1e6 * best(
        lambda: battlecalc.simulate(**battle, method="exact"), 200)
    def fresh():
        api.forget_compiled()
        battlecalc.simulate(**battle, method="exact")
    out[f"exact never seen: {name} (us)"] = 1e6 * best(fresh, 20)
for name, battle in big.items():
    out[f"exact big: {name} (ms)"] = 1e3 * best(
        lambda: battlecalc.simulate(**battle, method="exact"), 3)
for name, battle in mc.items():
    rates = []
    for i in range(repeats):
        r = battlecalc.simulate(**battle, method="mc", trials=400_000, seed=i)
        rates.append(400_000 / r.elapsed_s)
    out[f"monte carlo: {name} (trials/s)"] = max(rates)
rng = random.Random(5)
units = ["inf", "art", "tank", "ftr", "bmb"]
def army():
    return " ".join(f"{rng.randint(1, 4)} {u}" for u in rng.sample(units, rng.randint(1, 3)))
rates = []
for i in range(repeats):
    battles = [dict(attacker=army(), defender=army()) for _ in range(2000)]
    api.forget_compiled()
    t = time.perf_counter()
    battlecalc.solve_many(battles, rules="1942-2e", method="exact")
    rates.append(len(battles) / (time.perf_counter() - t))
out["solve_many new armies (battles/s)"] = max(rates)
print(json.dumps(out))
"""

PRIME = r"""
try:
    from battlecalc.kernels import jit
except ImportError:  # (a revision that compiles its kernels as it imports them)
    jit = None
if getattr(jit, "compiled", None) is not None:
    jit.compiled()  # (every solve of this process compiled: the builder's kernels too)
import battlecalc
battlecalc.simulate(rules="1942-2e", attacker="6 inf 2 art 2 tank 2 ftr",
                    defender="8 inf 1 tank 1 aa", method="exact")
battlecalc.simulate(rules="1942-2e", sea=True, attacker="2 sub 1 dd 1 ftr",
                    defender="1 cv 2 ftr 1 dd 1 tt", method="exact")
battlecalc.solve_many([dict(attacker="2 inf", defender="1 inf")] * 2, rules="1942-2e",
                      method="exact")
"""

COLD = r"""
import battlecalc
battlecalc.simulate(rules="1942-2e", attacker="6 inf 2 art 2 tank 2 ftr",
                    defender="8 inf 1 tank 1 aa", method="exact")
battlecalc.simulate(rules="1942-2e", sea=True, attacker="2 sub 1 dd 1 ftr",
                    defender="1 cv 2 ftr 1 dd 1 tt", method="exact")
battlecalc.simulate(rules="revised", attacker="3inf 1art 2arm 1bmb", defender="4inf 1aa",
                    method="mc", trials=100_000, seed=7)
"""


def child(tree: Path, script: str, args: list[str], threads: int) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(tree), BATTLECALC_THREADS=str(threads),
               NUMBA_NUM_THREADS=str(threads))
    out = subprocess.run([sys.executable, "-c", script, *args], env=env, cwd=tree,
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{tree}: the benchmark failed:\n{out.stderr[-3000:]}")
    return out


def empty_numba_cache(tree: Path) -> None:
    for folder in (tree / "battlecalc" / "kernels").rglob("__pycache__"):
        for path in folder.iterdir():
            if path.suffix in (".nbi", ".nbc"):
                path.unlink()


def cold_cpu(tree: Path, threads: int) -> float:
    """CPU seconds (user + sys) of a process whose kernels compile from an empty cache."""
    empty_numba_cache(tree)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    child(tree, COLD, [], threads)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _order(number: int) -> tuple[str, str]:
    """The trees' order in round `number`: old first in even rounds, new first in odd ones
    (with old always first, the order was part of every ratio: on an Intel Xeon, two trees of
    the same engine code read 0.93-1.03 on the sub-millisecond sea rows)."""
    return ("old", "new") if number % 2 == 0 else ("new", "old")


def _ratio(key: str, old: float, new: float) -> float:
    """Above 1: the new tree is faster (old / new for times, new / old for rates)."""
    return new / old if "/s" in key else old / new


def _add_round(got: dict, best: dict, rounds: dict) -> None:
    """One round's figures of both trees: each tree's best so far, and the round's ratio."""
    for key in got["new"]:
        keep = max if "/s" in key else min
        for side in ("old", "new"):
            best[side][key] = keep(best[side].get(key, got[side][key]), got[side][key])
        rounds.setdefault(key, []).append(_ratio(key, got["old"][key], got["new"][key]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rev")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--cold", action="store_true", help="also the first compile")
    parser.add_argument("--keep", action="store_true", help="keep the revision's worktree")
    args = parser.parse_args()
    old, made = worktree(args.rev)
    trees = {"old": old, "new": ROOT}
    print(f"{cpu_model()}, {os.cpu_count()} cores; {args.rev} (old) against the working tree "
          f"(new); {args.threads} threads; best of {args.repeats} in a process, "
          f"{args.rounds} rounds alternating")
    try:
        best: dict[str, dict[str, float]] = {"old": {}, "new": {}}
        payload = json.dumps([SMALL, BIG, MC, args.repeats])
        for side in ("old", "new"):
            child(trees[side], PRIME, [], args.threads)
        rounds: dict[str, list[float]] = {}  # each round's ratio, per figure
        for number in range(args.rounds):
            got = {}
            for side in _order(number):
                got[side] = json.loads(child(trees[side], CHILD, [payload],
                                             args.threads).stdout.splitlines()[-1])
            _add_round(got, best, rounds)
        if args.cold:
            key = "first compile, empty cache (CPU s)"
            for number in range(args.rounds):
                got = {side: {key: cold_cpu(trees[side], args.threads)}
                       for side in _order(number)}
                _add_round(got, best, rounds)
        width = max(len(k) for k in best["new"])
        print(f"{'':{width}}  {'old':>12}  {'new':>12}  ratio  median")
        for key in best["new"]:
            o, n = best["old"][key], best["new"][key]
            print(f"{key:{width}}  {o:12.4g}  {n:12.4g}  {_ratio(key, o, n):5.3f}  "
                  f"{statistics.median(rounds[key]):6.3f}")
    finally:
        if made and not args.keep:
            subprocess.run(["git", "worktree", "remove", "--force", str(old)], cwd=ROOT)
            shutil.rmtree(old, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
