"""Monte Carlo kernel: sample the per-state hit tables, aggregate inside the kernel.

Each chunk of trials has its own random stream, seeded from numpy's SeedSequence by the
caller; chunks are independent of the thread count, and all aggregates are integers, so the
same seed gives the same numbers whatever the number of threads.
"""

import numpy as np
from numba import njit, prange

from .common import ATTACKER_WIN, CONTINUE, RETREAT, settle, should_retreat

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_TO_UNIT = 1.0 / 9007199254740992.0  # 2**-53


@njit(cache=True)
def _next_uniform(state):
    """Next uniform in [0, 1) from a splitmix64 stream; state: uint64[1], advanced in place."""
    state[0] += _GOLDEN
    z = state[0]
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(11)) * _TO_UNIT


@njit(cache=True)
def _search(cdf, row, top, u):
    """Smallest h in [0, top] with u < cdf[row, h] (cdf[row, top] is exactly 1)."""
    lo = 0
    hi = top
    while lo < hi:
        mid = (lo + hi) >> 1
        if u < cdf[row, mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


@njit(cache=True)
def _search_1d(cdf, u):
    lo = 0
    hi = cdf.shape[0] - 1
    while lo < hi:
        mid = (lo + hi) >> 1
        if u < cdf[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


@njit(cache=True, inline="always")
def record_trial(c, outcome, a, d, rounds, a_ipc, d_ipc, outcomes, a_final, d_final,
                 rounds_hist, rounds_sum, swing_sum, swing_sq_sum):
    """Add one finished trial (outcome, final states a and d, rounds) to chunk c's row of the
    aggregates; the last rounds bin takes that many rounds or more."""
    outcomes[c, outcome] += 1
    a_final[c, a] += 1
    d_final[c, d] += 1
    rounds_hist[c, min(rounds, rounds_hist.shape[1] - 1)] += 1
    rounds_sum[c] += rounds
    swing = d_ipc[d] - a_ipc[a]
    swing_sum[c] += swing
    swing_sq_sum[c] += swing * swing


@njit(parallel=True, cache=True)
def simulate_chunks(seeds, chunk_trials,
                    a_profile_cdf, a_offset, a_length, a_cdf, a_top, a_can_hit, a_alive,
                    a_defenceless, a_has_land, a_ipc,
                    d_cdf, d_top, d_can_hit, d_alive, d_defenceless, d_ipc, d_length,
                    bombard_cdf, bombard_mode, land_prefix,
                    retreat, below, a_units_left, d_units_left, a_may_retreat, win_value,
                    remainder_start, a_profile_end,
                    outcomes, takes, a_final, d_final, rounds_hist, rounds_sum,
                    swing_sum, swing_sq_sum):
    """Simulate len(seeds) chunks of trials, chunk c writing only to row c of each output.

    seeds[C] uint64 stream seeds; chunk_trials[C] trials per chunk.  Attacker tables (a_*)
    are indexed by flat state, a_profile_cdf[P] is the cumulative probability of the
    attacker's round-1 profiles; the defender has one profile of d_length steps.  ipc tables
    are IPC lost per state.  Shore bombardment: bombard_cdf[B] cumulative law of its hits,
    which only land on the defender's first land_prefix casualty steps (its land units);
    bombard_mode 0 none, 1 before round 1 with no return fire (Revised), 2 together with the
    attacker's round-1 fire (1942 2E: the casualties fire back).  Retreat: see
    kernels.common.should_retreat, checked at the end of every round; a partial retreat
    (remainder_start[a] >= 0, compile.with_partial_retreats) goes on in the stayers' profile,
    whose last state is a_profile_end[start].  Outputs: outcomes[C, 5]
    counts, takes[C] territory taken, a_final[C, Sa] / d_final[C, Sd] final-state counts,
    rounds_hist[C, R] rounds (last bin is R-1 or more), rounds_sum[C], swing_sum[C] and
    swing_sq_sum[C] of the TUV swing in IPC.
    """
    n_chunks = seeds.shape[0]
    for c in prange(n_chunks):
        state = np.empty(1, dtype=np.uint64)
        state[0] = seeds[c]
        d_end = d_length
        for _ in range(chunk_trials[c]):
            profile = _search_1d(a_profile_cdf, _next_uniform(state))
            a = a_offset[profile]
            a_end = a + a_length[profile]
            d = 0
            if bombard_mode == 1:
                d = min(_search_1d(bombard_cdf, _next_uniform(state)), land_prefix)
            outcome, a, d = settle(a, d, a_end, d_end, a_alive, a_can_hit, a_defenceless,
                                   d_alive, d_can_hit, d_defenceless)
            rounds = 0
            while outcome == CONTINUE:
                rounds += 1
                a_hits = _search(a_cdf, a, a_top[a], _next_uniform(state))
                d_hits = _search(d_cdf, d, d_top[d], _next_uniform(state))
                if bombard_mode == 2 and rounds == 1:
                    bombard_hits = _search_1d(bombard_cdf, _next_uniform(state))
                    a_hits += min(bombard_hits, max(land_prefix - d, 0))
                d = min(d + a_hits, d_end)
                a = min(a + d_hits, a_end)
                outcome, a, d = settle(a, d, a_end, d_end, a_alive, a_can_hit,
                                       a_defenceless, d_alive, d_can_hit, d_defenceless)
                # (checking the flag here first keeps the call out of the hot loop)
                if outcome == CONTINUE and retreat[0] == 1 and should_retreat(
                        a, d, rounds, retreat, below, a_units_left, d_units_left,
                        a_may_retreat, a_has_land, win_value):
                    start = remainder_start[a]
                    if start < 0:
                        outcome = RETREAT
                    else:
                        a = start
                        a_end = a_profile_end[start]
                        outcome, a, d = settle(a, d, a_end, d_end, a_alive, a_can_hit,
                                               a_defenceless, d_alive, d_can_hit,
                                               d_defenceless)
            if outcome == ATTACKER_WIN and a_has_land[a]:
                takes[c] += 1
            record_trial(c, outcome, a, d, rounds, a_ipc, d_ipc, outcomes, a_final, d_final,
                         rounds_hist, rounds_sum, swing_sum, swing_sq_sum)

