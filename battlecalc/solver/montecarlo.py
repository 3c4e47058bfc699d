"""The Monte Carlo driver: a compiled battle's trials in chunks of CHUNK_TRIALS, each chunk on
a splitmix64 stream of its own seeded from numpy's SeedSequence (kernels/montecarlo.py), the
chunks run on the engine's threads a call at a time, every aggregate an integer: the same
seed gives the same numbers whatever the number of threads.

One kernel call = one progress step, and what Ctrl-C waits for: about CALL_SECONDS, from the
rate of the calls before (the first call: one chunk a thread), at most CHUNKS_PER_CALL chunks
and OUTPUT_BUDGET int64 entries of per-chunk output rows.  Chunks, not calls, carry the random
streams, so the split into calls changes no number.
"""

from __future__ import annotations

import inspect
import time

import numpy as np

from ..kernels import jit, montecarlo
from ..kernels.layout import (
    N_OUTCOMES,
    POLICY_TABLE,
    RT_ACTIVE,
    RU_A_POLICY,
    RU_D_POLICY,
    RU_SIMPLE,
    McBattle,
    McOut,
    McSide,
)
from . import threads
from .law import FinalLaw, weighted_sum
from .plan import ROUNDS_BINS
from .tables import sampler

CHUNK_TRIALS = 16_384
CALL_SECONDS = 0.25
CHUNKS_PER_CALL = 1024
OUTPUT_BUDGET = 8_000_000


def _side_tables(side) -> McSide:
    """A side's tables as the kernel takes them: states, rows and its Monte Carlo sampler."""
    tables = sampler(side)
    return McSide(side.states, side.rows, tables.thresh, tables.alias, tables.free)


def _start_law(start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(possible start states, running sums of their probabilities, last exactly 1)."""
    states = np.flatnonzero(start > 0).astype(np.int64)
    cdf = np.cumsum(start[states])
    cdf[-1] = 1.0
    return states, cdf


def _retreat_acts(compiled, retreat) -> bool:
    """Whether the kernels need the battle's retreat tables: a retreat policy, or a side
    that submerges as a table of choices says (POLICY_TABLE).  (Without, they get None and
    compile none of the retreat code.)"""
    rules = compiled.rules
    return (retreat.policy[RT_ACTIVE] == 1
            or POLICY_TABLE in (rules[RU_A_POLICY], rules[RU_D_POLICY]))


def _takes_outcomes(progress) -> bool:
    """Whether a progress callback names a keyword parameter `outcomes`."""
    try:
        parameter = inspect.signature(progress).parameters.get("outcomes")
    except (TypeError, ValueError):  # a callable without a signature
        return False
    return parameter is not None and parameter.kind in (
        inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def run_monte_carlo(compiled, trials: int, seed: int, progress=None,
                    thread_count: int | None = None,
                    call_seconds: float = CALL_SECONDS) -> FinalLaw:
    """Monte Carlo law of a compiled battle (compile.CompiledBattle): integer counts out of
    `trials`.

    progress(done, total, what) is called after every kernel call; a callback with a keyword
    parameter ``outcomes`` gets, as well, the trial counts of each outcome so far
    (outcomes[N_OUTCOMES] by outcome code, out of `done`).  thread_count: the threads of the
    first call (default: the pool's); call_seconds: the kernel calls' length aimed at (the
    answer depends on neither).
    """
    partial = progress is not None and _takes_outcomes(progress)
    jit.compiled(everywhere=False)  # (Monte Carlo always runs compiled kernels)
    # two single walks (land) or the general round: each its own kernel, compiled apart
    simulate = (montecarlo._simulate_walk_chunks if compiled.rules[RU_SIMPLE] == 1
                else montecarlo._simulate_chunks)
    with jit.compiling(simulate, progress):
        return _run(compiled, simulate, trials, seed, progress, partial, thread_count,
                    call_seconds)


def _run(compiled, simulate, trials: int, seed: int, progress, partial: bool,
         thread_count: int | None, call_seconds: float) -> FinalLaw:
    """run_monte_carlo's trials by the kernel `simulate`."""
    att, dfn = compiled.attacker, compiled.defender
    bombard_cdf = np.cumsum(compiled.bombardment.pmf)
    bombard_cdf[-1] = 1.0
    swing_offset = int(att.ipc_lost.max())
    shapes = {
        "outcomes": (N_OUTCOMES,), "takes": (), "a_final": (att.n_states,),
        "d_final": (dfn.n_states,), "rounds_hist": (ROUNDS_BINS,), "rounds_sum": (),
        "swing_hist": (swing_offset + int(dfn.ipc_lost.max()) + 1,),
    }
    n_chunks = -(-trials // CHUNK_TRIALS)
    chunk_trials = np.full(n_chunks, CHUNK_TRIALS, dtype=np.int64)
    chunk_trials[-1] = trials - CHUNK_TRIALS * (n_chunks - 1)
    seeds = np.random.SeedSequence(seed).generate_state(n_chunks, dtype=np.uint64)
    totals = {key: np.zeros(shape, dtype=np.int64) for key, shape in shapes.items()}
    retreat = compiled.retreat_tables()
    battle = McBattle(_side_tables(att), _side_tables(dfn), compiled.rules,
                      *_start_law(att.start), *_start_law(dfn.start), bombard_cdf,
                      retreat if _retreat_acts(compiled, retreat) else None, swing_offset,
                      compiled.start_rounds, compiled.retreat_from)
    most = max(1, min(CHUNKS_PER_CALL, OUTPUT_BUDGET // sum(
        int(np.prod(shape)) for shape in shapes.values())))
    per_call = min(most, thread_count or threads.thread_count())
    done = first = 0
    while first < n_chunks:
        last = min(first + per_call, n_chunks)
        rows = {key: np.zeros((last - first, *shape), dtype=np.int64)
                for key, shape in shapes.items()}
        call_started = time.perf_counter()
        threads.threads(simulate, last - first, seeds[first:last],
                        chunk_trials[first:last], battle, McOut(*rows.values()),
                        short=n_chunks == 1)
        seconds = time.perf_counter() - call_started
        per_call = max(1, min(most, int(call_seconds * (last - first) / max(seconds, 1e-6))))
        for key, value in rows.items():
            totals[key] += value.sum(axis=0)
        done += int(chunk_trials[first:last].sum())
        first = last
        if progress is not None:
            if partial:  # the running totals so far (a copy): the random stream is unchanged
                progress(done, trials, "trials", outcomes=totals["outcomes"].copy())
            else:
                progress(done, trials, "trials")
    swing = np.arange(len(totals["swing_hist"]), dtype=np.float64) - swing_offset
    swing_hist = totals["swing_hist"]
    return FinalLaw(
        total=float(trials), trials=trials, outcomes=totals["outcomes"],
        takes=int(totals["takes"]), a_final=totals["a_final"], d_final=totals["d_final"],
        mean_rounds=int(totals["rounds_sum"]) / float(trials), rounds_hist=totals["rounds_hist"],
        swing=(np.arange(len(swing_hist), dtype=np.int64) - swing_offset, swing_hist),
        swing_sum=float(weighted_sum(swing_hist, swing)),
        swing_sq_sum=float(weighted_sum(swing_hist, swing * swing)),
        pruned=0.0, seed=seed)
