"""The floor: the plainest sampler of battlecalc's own method against its Monte Carlo kernel.

Run:  python benchmarks/bench_floor.py [--trials N] [--repeats R]

The floor is a numba loop over the same per-state hit CDFs as the compiled big land battle
(1942 2E, 30 inf 10 art 10 tank 8 ftr 4 bmb v 40 inf 5 art 5 tank 6 ftr; cheapest first,
artillery pairing, as compile.py builds them): per round one ``np.random.random()`` and one
``np.searchsorted`` in each side's CDF row at its state, keeping the law of end states and of
rounds.  Both run warm on one thread in this process, best of R; printed: both rates, the
ratio kernel / floor (goal >= 1.5) and each one's chance that the defender is destroyed next to the
exact one (a check that both sample the same battle); then the same rates per CPU second of this
process (best of R), which other jobs on a busy machine disturb far less than the wall clock.
Only ratios within one run mean something.
"""

from __future__ import annotations

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
os.environ.setdefault("BATTLECALC_THREADS", "1")

import argparse  # noqa: E402
import time  # noqa: E402

import numba  # noqa: E402
import numpy as np  # noqa: E402
from timing import best_of, cpu_model

import battlecalc  # noqa: E402
from battlecalc.api import make_battle  # noqa: E402
from battlecalc.compile import compile_battle  # noqa: E402
from battlecalc.kernels.layout import ATTACKER_WIN, DRAW, R_TOP, S_OTHER  # noqa: E402
from battlecalc.solver.montecarlo import run_monte_carlo  # noqa: E402

BIG_LAND = dict(rules="1942-2e", attacker="30 inf 10 art 10 tank 8 ftr 4 bmb",
                defender="40 inf 5 art 5 tank 6 ftr")


@numba.njit(cache=True)
def floor(a_cdf, a_top, a_steps, d_cdf, d_top, d_steps, trials, seed):
    """trials battles of two casualty walks (state = casualties taken, row = state): returns
    the counts of the attacker's and the defender's end states and of the rounds fought."""
    np.random.seed(seed)
    a_final = np.zeros(a_steps + 1, dtype=np.int64)
    d_final = np.zeros(d_steps + 1, dtype=np.int64)
    rounds_hist = np.zeros(101, dtype=np.int64)
    for _ in range(trials):
        a = 0
        d = 0
        rounds = 0
        while a < a_steps and d < d_steps:  # every unit of this battle can hit
            rounds += 1
            a_hits = np.searchsorted(a_cdf[a, :a_top[a] + 1], np.random.random(), side="right")
            d_hits = np.searchsorted(d_cdf[d, :d_top[d] + 1], np.random.random(), side="right")
            a = min(a + d_hits, a_steps)
            d = min(d + a_hits, d_steps)
        a_final[a] += 1
        d_final[d] += 1
        rounds_hist[min(rounds, 100)] += 1
    return a_final, d_final, rounds_hist


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=3_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    compiled = compile_battle(make_battle(**BIG_LAND))
    att, dfn = compiled.attacker, compiled.defender
    tables = (att.cdf, att.rows[:, R_TOP].copy(), int(att.states[0, S_OTHER]),
              dfn.cdf, dfn.rows[:, R_TOP].copy(), int(dfn.states[0, S_OTHER]))
    floor(*tables, 1000, 1)
    run_monte_carlo(compiled, 100_000, 1)
    floor_cpu, kernel_cpu = [], []

    def cpu_timed(call, into):
        started = time.process_time()
        value = call()
        into.append(time.process_time() - started)
        return value

    floor_s, (_, d_final, _) = best_of(
        args.repeats, lambda: cpu_timed(lambda: floor(*tables, args.trials, 1), floor_cpu))
    kernel_s, law = best_of(
        args.repeats, lambda: cpu_timed(lambda: run_monte_carlo(compiled, args.trials, 1),
                                        kernel_cpu))
    exact = battlecalc.simulate(**BIG_LAND, method="exact")
    floor_win = d_final[-1] / args.trials  # the defender is gone: an attacker win or a draw
    kernel_win = law.outcomes[[ATTACKER_WIN, DRAW]].sum() / args.trials
    print(f"big land battle, one thread, {args.trials:,} trials, best of {args.repeats}")
    print(f"floor  (np.random + searchsorted): {args.trials / floor_s / 1e6:6.2f}M trials/s"
          f"   defender destroyed {floor_win:.4f}")
    print(f"kernel (run_monte_carlo):          {args.trials / kernel_s / 1e6:6.2f}M trials/s"
          f"   defender destroyed {kernel_win:.4f}")
    print(f"kernel / floor: {floor_s / kernel_s:.2f}x   (goal >= 1.5x)   exact: defender destroyed "
          f"{exact.attacker_win + exact.draw:.4f}")
    # per CPU second (this process's user + system time, best of the repeats): a busy machine
    # disturbs it far less than the wall clock
    print(f"per CPU second: floor {args.trials / min(floor_cpu) / 1e6:.2f}M, kernel "
          f"{args.trials / min(kernel_cpu) / 1e6:.2f}M trials/s, kernel / floor "
          f"{min(floor_cpu) / min(kernel_cpu):.2f}x; CPU {cpu_model()}, load average "
          f"{os.getloadavg()[0]:.2f}, NUMBA_CPU_NAME={os.environ.get('NUMBA_CPU_NAME', '(host)')}")


if __name__ == "__main__":
    main()
