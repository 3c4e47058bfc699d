"""Sweep benchmark: small exact battles per second, and where each battle's time goes.

Run:  python benchmarks/bench_sweep.py [--battles N] [--workers W] [--dask]

The battles are a grid of small exact land battles (1942 2E and Revised, 1-8 infantry plus
artillery/tanks against 1-8 infantry plus a tank or AA), repeated up to N.  Measured:

* simulate alone: the same battles through `battlecalc.simulate` in a plain loop, in this
  process (what the engine costs; the sweep cannot be faster than this per core);
* sweep in this process (`workers=1`): the sweep's own work per battle on top of simulate
  (reading cells, seeds, building flat rows, assembling the table), split by phase;
* pickling: one chunk of battle keywords out and its result rows back, as worker processes
  and Dask do it;
* sweep on W local worker processes: the fork server (imports battlecalc and loads the
  kernels once per Python process) and the start-up of W workers forked from it, each
  measured alone on a 2-battle sweep; the whole run; the rate once the workers are up; and
  the CPU time per battle in the workers and in this process (psutil), from which the rate
  on idle cores follows when other programs share the machine;
* with --dask, the same on a 2-worker `distributed.LocalCluster` (processes) on loopback.

Prints, never asserts.  The target (issue 12): >= 300 small exact battles per second on 2
cores, so per-battle overhead well under 5 ms.
"""

from __future__ import annotations

import argparse
import pickle
import sys
import threading
import time

import pandas as pd

import battlecalc
from battlecalc.sweeper import MAX_CHUNK, derived_seed, run_chunk

TARGET_PER_S = 300


def grid(n: int) -> pd.DataFrame:
    bases = [
        {"rules": "1942-2e", "attacker": "1 art 1 tank", "defender": "1 tank"},
        {"rules": "1942-2e", "attacker": "1 art 1 ftr", "defender": "1 aa"},
        {"rules": "revised", "attacker": "1 art 1 tank", "defender": "1 tank"},
        {"rules": "revised", "attacker": "2 tank", "defender": "1 art"},
    ]
    rows = []
    while len(rows) < n:
        for base in bases:
            for a in range(1, 9):
                for d in range(1, 9):
                    rows.append({**base, "method": "exact", "attacker.infantry": a,
                                 "defender.infantry": d})
    return pd.DataFrame(rows[:n])


class ChildrenCpu:
    """CPU seconds used by this process's descendants (the workers) from now until stop(),
    sampled by a thread (the workers exit before their time could be read at the end)."""

    def __init__(self):
        self.own_cpu = 0.0
        try:
            import psutil
        except ImportError:  # psutil comes with distributed; without it, no CPU split
            self.thread = None
            return
        self.me = psutil.Process()
        self.error = psutil.Error
        self.start = self._sample()
        self.last = dict(self.start)
        self.running = True
        self.thread = threading.Thread(target=self._poll, daemon=True)
        self.thread.start()

    def _sample(self) -> dict[int, float]:
        seen = {}
        for child in self.me.children(recursive=True):
            try:
                times = child.cpu_times()
                seen[child.pid] = times.user + times.system
            except self.error:
                pass
        return seen

    def _poll(self):
        while self.running:
            self.last.update(self._sample())
            self.own_cpu = time.thread_time()  # this thread's CPU, not the sweep's
            time.sleep(0.05)

    def stop(self) -> float | None:
        if self.thread is None:
            return None
        self.running = False
        self.thread.join()
        return sum(t - self.start.get(pid, 0.0) for pid, t in self.last.items())


def per_battle_ms(seconds: float, n: int) -> float:
    return 1000 * seconds / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--battles", type=int, default=1024)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--dask", action="store_true", help="also time a Dask LocalCluster")
    args = parser.parse_args()
    n = args.battles
    battles = grid(n)

    # warm-up: load the compiled kernels in this process
    battlecalc.sweep(battles.head(8), workers=1, seed=1)

    # 1. simulate alone, on the keywords the sweep would pass
    prepared = battlecalc.sweep(battles, workers=1, seed=1)
    kwargs = [{"rules": r, "attacker": a, "defender": d, "method": "exact",
               "seed": derived_seed(1, i)}
              for i, (r, a, d) in enumerate(zip(prepared["rules"], prepared["attacker"],
                                                prepared["defender"], strict=True))]
    wall, cpu = time.perf_counter(), time.process_time()
    for k in kwargs:
        battlecalc.simulate(**k)
    t_simulate = time.perf_counter() - wall
    c_simulate = time.process_time() - cpu
    results = [battlecalc.simulate(**k) for k in kwargs[:256]]
    cpu = time.process_time()
    for result in results:
        result.flat_row()
    c_flat = (time.process_time() - cpu) * n / len(results)

    # 2. the sweep in this process
    wall, cpu = time.perf_counter(), time.process_time()
    local = battlecalc.sweep(battles, workers=1, seed=1)
    t_local = time.perf_counter() - wall
    c_local = time.process_time() - cpu
    phases = local.attrs["timing_s"]
    assert local["error"].isna().all(), local["error"].dropna().head()

    # 3. pickling one chunk each way (what a worker process or Dask adds per battle)
    chunk = [(i, k) for i, k in enumerate(kwargs[:MAX_CHUNK])]
    back = run_chunk(chunk)
    t0 = time.perf_counter()
    for _ in range(20):
        pickle.loads(pickle.dumps(chunk, protocol=pickle.HIGHEST_PROTOCOL))
        pickle.loads(pickle.dumps(back, protocol=pickle.HIGHEST_PROTOCOL))
    t_pickle = (time.perf_counter() - t0) / 20 / len(chunk)
    row_bytes = len(pickle.dumps(back, protocol=pickle.HIGHEST_PROTOCOL)) / len(chunk)

    # 4. local worker processes: the first sweep of a process also starts the fork server
    t0 = time.perf_counter()
    battlecalc.sweep(battles.head(2), workers=args.workers, chunk_size=1, seed=1)
    t_first = time.perf_counter() - t0
    children = ChildrenCpu()
    t0 = time.perf_counter()
    battlecalc.sweep(battles.head(2), workers=args.workers, chunk_size=1, seed=1)
    t_startup = time.perf_counter() - t0
    c_startup = children.stop()
    children = ChildrenCpu()
    wall, cpu = time.perf_counter(), time.process_time()
    pooled = battlecalc.sweep(battles, workers=args.workers, seed=1)
    t_pool = time.perf_counter() - wall
    c_parent = time.process_time() - cpu
    c_workers = children.stop()
    c_parent -= children.own_cpu
    same = local.drop(columns="elapsed_s").equals(pooled.drop(columns="elapsed_s"))
    steady = t_pool - t_startup

    sim_ms, sim_cpu = per_battle_ms(t_simulate, n), per_battle_ms(c_simulate, n)
    print(f"{n} small exact battles (1942 2E and Revised land, 2-10 units a side), "
          f"python {sys.version.split()[0]}")
    print()
    print("per battle, in one process                        wall ms   CPU ms")
    print(f"  simulate() alone                              {sim_ms:7.3f}  {sim_cpu:7.3f}")
    print(f"  sweep(workers=1), all in                      {per_battle_ms(t_local, n):7.3f}  "
          f"{per_battle_ms(c_local, n):7.3f}")
    own = [("preparing rows (cells, grid, seeds)", per_battle_ms(phases["prepare"], n)),
           ("Result.flat_row() (in the worker)", per_battle_ms(c_flat, n)),
           ("pickling a battle out and its row back", 1000 * t_pickle),
           ("assembling the table", per_battle_ms(phases["assemble"], n))]
    print(f"  the sweep's own work                          "
          f"{sum(ms for _, ms in own):7.3f}   (the difference of the two lines above is "
          "noise-level)")
    for label, ms in own:
        print(f"    {label:<44}{ms:7.3f}")
    print(f"  ({row_bytes:,.0f} bytes a pickled result row)")
    print()
    print(f"{args.workers} local worker processes")
    print(f"  fork server (first sweep of a process only)   {t_first - t_startup:7.2f} s")
    print(f"  {f'start-up (forking {args.workers} warm workers)':<46}{t_startup:7.2f} s")
    print(f"  whole sweep                                   {t_pool:7.2f} s   "
          f"{n / t_pool:6.0f} battles/s")
    print(f"  once started                                  {steady:7.2f} s   "
          f"{n / steady:6.0f} battles/s   (target >= {TARGET_PER_S})")
    if c_workers is not None:
        c_workers -= c_startup  # the workers' own start-up, measured alone above
        per_battle = (c_workers + c_parent) / n
        print(f"  CPU per battle: workers {per_battle_ms(c_workers, n):.3f} ms, this process "
              f"{per_battle_ms(c_parent, n):.3f} ms -> on {args.workers} idle cores about "
              f"{args.workers / per_battle:,.0f} battles/s once started")
    print(f"  same table as workers=1                       {same}")

    if args.dask:
        from distributed import Client, LocalCluster

        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                          dashboard_address=None, worker_dashboard_address=None) as cluster, \
                Client(cluster) as client:
            t0 = time.perf_counter()
            battlecalc.sweep(battles.head(4), scheduler=client, chunk_size=1, seed=1)
            t_warm = time.perf_counter() - t0
            t0 = time.perf_counter()
            remote = battlecalc.sweep(battles, scheduler=client, seed=1)
            t_dask = time.perf_counter() - t0
        same = local.drop(columns="elapsed_s").equals(remote.drop(columns="elapsed_s"))
        print()
        print("Dask LocalCluster, 2 worker processes, loopback TCP")
        print(f"  first battles (workers load the kernels)      {t_warm:7.2f} s")
        print(f"  whole sweep, warm workers                     {t_dask:7.2f} s   "
              f"{n / t_dask:6.0f} battles/s")
        print(f"  same table as workers=1                       {same}")


if __name__ == "__main__":
    main()
