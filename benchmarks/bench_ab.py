"""Monte Carlo A/B: this working tree against any git revision, in one run.

Run:  python benchmarks/bench_ab.py REV [--threads 1,2] [--repeats 3] [--land-trials N]
      [--sea-trials N] [--keep]

REV is checked out into a temporary worktree (``git worktree add --detach``).  The same
battles (the big land battle and the README's mid sea battle, 1942 2E) run in separate
subprocesses, alternating old and new and the thread counts, each warm (its kernels compiled
or loaded from numba's cache first, then one warm-up run of each battle); the figure is the
kernel time (the result's ``elapsed_s``), best of the repeats, as trials/s, then the ratios
new/old and, per side, 2 threads / 1 thread.  The thread count is set both ways:
``NUMBA_NUM_THREADS`` (old revisions, whose threads were numba's) and ``BATTLECALC_THREADS``.
The machine may be loaded: only the ratios within one run mean something; repeat the run to
see their spread.  --keep leaves the worktree (and its numba cache) in place for the next run
of the same revision.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from timing import cpu_model

ROOT = Path(__file__).resolve().parents[1]
BATTLES = {
    "big land": dict(rules="1942-2e", attacker="30 inf 10 art 10 tank 8 ftr 4 bmb",
                     defender="40 inf 5 art 5 tank 6 ftr"),
    "mid sea": dict(rules="1942-2e", attacker="4 sub 2 dd 1 ca 2 ftr 1 bmb 1 bb",
                    defender="1 bb 2 dd 1 ca 1 cv 2 ftr 2 sub 2 tt", sea=True),
}
# one subprocess: warm every battle, then time each once; prints {battle: [elapsed_s, CPU s]}
# (CPU: the process's user + system time over the timed call, all its threads)
CHILD = """
import json, sys, time
import battlecalc
battles, trials = json.loads(sys.argv[1]), json.loads(sys.argv[2])
for name, battle in battles.items():
    battlecalc.simulate(**battle, method="mc", trials=min(trials[name], 200_000), seed=7)
out = {}
for name, battle in battles.items():
    cpu = time.process_time()
    elapsed = battlecalc.simulate(**battle, method="mc", trials=trials[name], seed=1).elapsed_s
    out[name] = [elapsed, time.process_time() - cpu]
print(json.dumps(out))
"""


def run_child(tree: Path, threads: int, trials: dict) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree), NUMBA_NUM_THREADS=str(threads),
               BATTLECALC_THREADS=str(threads))
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(BATTLES), json.dumps(trials)],
                         env=env, cwd=tree, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{tree}: the benchmark failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def worktree(rev: str) -> tuple[Path, bool]:
    """(the revision's worktree, whether this run created it)."""
    sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", f"{rev}^{{commit}}"],
                         capture_output=True, text=True)
    if sha.returncode != 0:
        sys.exit(f"unknown revision {rev!r}: {sha.stderr.strip()}")
    path = Path(tempfile.gettempdir()) / f"battlecalc-ab-{sha.stdout.strip()[:12]}"
    if (path / "battlecalc").is_dir():
        return path, False
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(path),
                    sha.stdout.strip()], check=True, capture_output=True)
    return path, True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rev", help="the git revision to compare with, e.g. 5d72448")
    parser.add_argument("--threads", default="1,2", help="thread counts, comma-separated")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--land-trials", type=int, default=3_000_000)
    parser.add_argument("--sea-trials", type=int, default=1_000_000)
    parser.add_argument("--keep", action="store_true", help="keep the revision's worktree")
    args = parser.parse_args()
    thread_counts = [int(t) for t in args.threads.split(",")]
    trials = {"big land": args.land_trials, "mid sea": args.sea_trials}
    old, created = worktree(args.rev)
    trees = {"old": old, "new": ROOT}
    try:
        for tree in trees.values():  # compile (or load) every kernel once per tree
            run_child(tree, 1, {name: 1000 for name in BATTLES})
        best: dict = {}
        best_cpu: dict = {}
        for _ in range(args.repeats):  # alternating old and new, and the thread counts
            for threads in thread_counts:
                for side, tree in trees.items():
                    for name, (elapsed, cpu) in run_child(tree, threads, trials).items():
                        key = (side, name, threads)
                        best[key] = min(best.get(key, float("inf")), elapsed)
                        best_cpu[key] = min(best_cpu.get(key, float("inf")), cpu)
    finally:
        if created and not args.keep:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(old)],
                           capture_output=True)
            shutil.rmtree(old, ignore_errors=True)
    rate = {key: trials[key[1]] / elapsed / 1e6 for key, elapsed in best.items()}
    cpu_rate = {key: trials[key[1]] / max(cpu, 1e-9) / 1e6 for key, cpu in best_cpu.items()}
    model = cpu_model()
    print(f"CPU {model}; load average {os.getloadavg()[0]:.2f} at the end; NUMBA_CPU_NAME="
          f"{os.environ.get('NUMBA_CPU_NAME', '(host)')}")
    print(f"old = {args.rev} ({old}), new = {ROOT}; kernel time (elapsed_s), best of "
          f"{args.repeats}; M trials/s")
    header = f"{'battle':<9} {'threads':>7} {'old':>7} {'new':>7} {'new/old':>8}"
    print(header)
    for name in BATTLES:
        for threads in thread_counts:
            o, n = rate[("old", name, threads)], rate[("new", name, threads)]
            print(f"{name:<9} {threads:>7} {o:>7.2f} {n:>7.2f} {n / o:>7.2f}x")
    if 1 in thread_counts:
        for threads in (t for t in thread_counts if t > 1):
            for name in BATTLES:
                print(f"{name}: {threads} threads / 1 thread: " + ", ".join(
                    f"{side} {rate[(side, name, threads)] / rate[(side, name, 1)]:.2f}x"
                    for side in trees))
    print("per CPU second (user + system of the timed call): M trials per CPU second")
    print(header)
    for name in BATTLES:
        for threads in thread_counts:
            o, n = cpu_rate[("old", name, threads)], cpu_rate[("new", name, threads)]
            print(f"{name:<9} {threads:>7} {o:>7.2f} {n:>7.2f} {n / o:>7.2f}x")


if __name__ == "__main__":
    main()
