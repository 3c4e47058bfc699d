"""Monte Carlo: sample the compiled tables trial by trial, aggregate inside the kernel.

Each chunk of trials has its own splitmix64 stream, seeded from numpy's SeedSequence; chunks
do not depend on the thread count and every aggregate is an integer, so the same seed gives the
same numbers whatever the number of threads.  Memory is bounded by the chunks per kernel call,
not by the number of trials.
"""

from __future__ import annotations

import types

import numpy as np

from . import round_model
from .jit import kernel
from .layout import (
    ATTACKER_WIN,
    CONTINUE,
    DEFENDER_WIN,
    DRAW,
    FULL_RETREAT,
    N_OUTCOMES,
    NO_CHOICES,
    NO_STATE,
    POLICY_NEVER,
    R_STRENGTH,
    R_TOP,
    RETREAT,
    RU_A_POLICY,
    RU_AIR_ALWAYS,
    RU_BOMBARD,
    RU_D_POLICY,
    RU_DIE,
    RU_LOW_LUCK,
    RU_SUBMERGE,
    S_INFO,
    S_IPC,
    S_OTHER,
    S_ROW_A,
    S_ROW_N,
    S_ROW_S,
    S_SUBS,
    STALEMATE,
    SUBMERGE_BEFORE_FIRE,
    SUBMERGE_NEVER,
)


def _inlined(function):
    """A copy of a round-model kernel that numba inlines into the general Monte Carlo trial,
    where it runs several times a round: `settle` inlined takes the mid sea battle from 2.0M
    to 3.0M trials/s for about a second more of compiling.  The exact sweep keeps calling
    the shared one; inlining `assign` too gained little and cost more compiling."""
    copy = types.FunctionType(function.__code__, function.__globals__, function.__name__,
                              function.__defaults__, function.__closure__)
    copy.__module__ = __name__
    return kernel(inline=True)(copy)


_settle = _inlined(round_model.settle)


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_TO_UNIT = 1.0 / 9007199254740992.0  # 2**-53
_LOW = np.uint64(0xFFFFFFFF)
_WORD = 4294967296.0  # 2**32


@kernel(inline=True)
def next_uniform(state):
    """(next uniform in [0, 1), next state) of a splitmix64 stream; state: uint64.  The state is
    passed as a value, not kept in an array, so drawing stores nothing to memory and the
    compiler may keep the battle's tables in registers across draws."""
    z, state = next_bits(state)
    return (z >> np.uint64(11)) * _TO_UNIT, state


@kernel(inline=True)
def next_bits(state):
    """(next 64 random bits, next state) of a splitmix64 stream; state: uint64."""
    state += _GOLDEN
    z = state
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31)), state


@kernel(inline=True)
def _alias(thresh, alias, xr, row, bits):
    """Hits of one category step, drawn in O(1) from its alias table (compile.Sampler) with
    32 random bits (bits < 2**32): bits * width splits into a uniform column (the high
    word) and a uniform fraction (the low word) that keeps the column or takes its alias."""
    t = bits * np.uint64(xr[row, R_TOP] + 1)
    column = np.int64(t >> np.uint64(32))
    if (t & _LOW) < thresh[row, column]:
        return column
    return alias[row, column]


@kernel(inline=True)
def _sample(thresh, alias, xr, row, state):
    """(hits of one category step, state): one 64-bit draw, its high word used."""
    bits, state = next_bits(state)
    return _alias(thresh, alias, xr, row, bits >> np.uint64(32)), state


@kernel(inline=True)
def _sample2(thresh, alias, xr, row1, row2, state):
    """(hits of two category steps of a side's tables, state): one 64-bit draw, a word each."""
    bits, state = next_bits(state)
    return (_alias(thresh, alias, xr, row1, bits >> np.uint64(32)),
            _alias(thresh, alias, xr, row2, bits & _LOW), state)


@kernel(inline=True)
def _pick(cdf, state):
    """(an index drawn with the law given by its running sums cdf[] (last entry 1), state);
    no draw where there is one index."""
    hi = cdf.shape[0] - 1
    if hi == 0:
        return 0, state
    u, state = next_uniform(state)
    lo = 0
    while lo < hi:
        mid = (lo + hi) >> 1
        if u < cdf[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo, state


@kernel
def alias_tables(pmf, rows):
    """Walker's alias tables of the hit laws pmf[R, W] (row r: hits 0..rows[r, R_TOP]), for
    O(1) sampling (Vose's construction): thresh[R, W] uint64, the chance (in units of 2**-32)
    of keeping column h, else alias[R, W]."""
    n_rows, width = pmf.shape
    thresh = np.zeros((n_rows, width), dtype=np.uint64)
    alias = np.zeros((n_rows, width), dtype=np.int64)
    small = np.empty(width, dtype=np.int64)
    large = np.empty(width, dtype=np.int64)
    q = np.empty(width)
    for r in range(n_rows):
        n = rows[r, R_TOP] + 1
        total = 0.0
        for h in range(n):
            total += pmf[r, h]
        n_small = 0
        n_large = 0
        for h in range(n):
            q[h] = pmf[r, h] * n / total
            alias[r, h] = h
            if q[h] < 1.0:
                small[n_small] = h
                n_small += 1
            else:
                large[n_large] = h
                n_large += 1
        while n_small > 0 and n_large > 0:
            n_small -= 1
            s = small[n_small]
            big = large[n_large - 1]
            alias[r, s] = big
            thresh[r, s] = np.uint64(min(max(q[s], 0.0) * _WORD + 0.5, _WORD))
            q[big] -= 1.0 - q[s]
            if q[big] < 1.0:
                n_large -= 1
                small[n_small] = big
                n_small += 1
        for k in range(n_small):  # what is left has chance 1 up to rounding
            thresh[r, small[k]] = np.uint64(_WORD)
        for k in range(n_large):
            thresh[r, large[k]] = np.uint64(_WORD)
    return thresh, alias


@kernel(inline=True)
def _settled(ast, a, dst, d, air_always):
    """The between-rounds checks (rules.settle) repeated until no unit is lost without dice,
    as the exact solver enters a round; a submerge step that moves nothing leaves a pair
    settled this way as it is, so it needs no check after it."""
    while True:
        outcome, a2, d2 = _settle(ast, a, dst, d, air_always)
        if a2 == a and d2 == d:
            return outcome, a, d
        a, d = a2, d2


# The kernels called per trial make no array and return none (their arrays live in _chunk's
# caller): compiled without reference counting (jit.kernel refs=False), they skip an atomic
# increment and decrement of every array argument on every call, about two thirds of the
# Monte Carlo kernel's time (big land 3.9 -> 10.4-10.9M trials a CPU second, mid sea 1.0 ->
# 3.2-3.4M, one thread, AMD EPYC Zen 5: benchmarks/bench_floor.py, bench_ab.py; the same
# numbers).  The cost of those atomic instructions differs from one CPU to another, which is
# why earlier gains measured on one machine did not hold on another.
@kernel(refs=False)
def _walk_settle(ast, a, dst, d):
    """_settled of the land walk, with the shared settle (called only off the free states)."""
    while True:
        outcome, a2, d2 = round_model.settle(ast, a, dst, d, round_model.FLAGS[0])
        if a2 == a and d2 == d:
            return outcome, a, d
        a, d = a2, d2


@kernel(refs=False)
def _trial_walk(ast, ar, ath, aal, afree, dst, dr, dth, dal, dfree, rules, bombard_cdf,
                retreat, start_rounds, retreat_from, a, d, state):
    """One battle of two single walks (land; row = state index): returns (outcome, a, d,
    rounds, random state).  A round is one 64-bit draw, a word for each side's alias table;
    settle is skipped while both states are free (compile.Sampler).  The tables come as
    arrays (see _chunk).  retreat: layout.RetreatTables, or None where the battle has no
    retreat policy and no table of submerge choices (numba then compiles none of the retreat
    code: it prunes a branch on `retreat is not None` while compiling for a None)."""
    a_end = a + ast[a, S_OTHER]
    d_end = d + dst[d, S_OTHER]
    outcome, a, d = _walk_settle(ast, a, dst, d)
    rounds = start_rounds
    bombard = rules[RU_BOMBARD] == 1
    if retreat is not None and outcome == CONTINUE and rounds >= retreat_from:
        # a battle that starts at the end of a round: the attacker's decision comes first
        outcome, a, d, stayers = _retreat_step(ast, a, dst, d, rounds, retreat,
                                               round_model.FLAGS[0])
        if stayers != NO_STATE:
            a_end = stayers + ast[stayers, S_OTHER]
    while outcome == CONTINUE:
        rounds += 1
        bits, state = next_bits(state)
        a_hits = _alias(ath, aal, ar, a, bits >> np.uint64(32))
        d_hits = _alias(dth, dal, dr, d, bits & _LOW)
        if bombard and rounds == 1:
            bombard_hits, state = _pick(bombard_cdf, state)
            a_hits += bombard_hits
        d = min(d + a_hits, d_end)
        a = min(a + d_hits, a_end)
        if afree[a] & dfree[d] == 0:
            outcome, a, d = _walk_settle(ast, a, dst, d)
        if retreat is not None and outcome == CONTINUE:
            outcome, a, d, stayers = _retreat_step(ast, a, dst, d, rounds, retreat,
                                                   round_model.FLAGS[0])
            if stayers != NO_STATE:
                a_end = stayers + ast[stayers, S_OTHER]
    return outcome, a, d, rounds, state


@kernel(refs=False)
def _retreat_step(ast, a, dst, d, rounds, retreat, air_always):
    """The attacker's retreat decision (retreat: layout.RetreatTables) after a round both sides
    survived: (outcome, a, d, stayers), stayers the state the units that stay after a partial
    retreat start in (they fight on), else NO_STATE."""
    if not round_model.should_retreat(a, d, rounds, retreat, ast, dst):
        return CONTINUE, a, d, NO_STATE
    stayers = retreat.remainder[a]
    if stayers == FULL_RETREAT:
        return RETREAT, a, d, NO_STATE
    outcome, a, d = round_model.settle(ast, stayers, dst, d, air_always)
    return outcome, a, d, stayers


@kernel(refs=False)
def _trial(ast, ar, ath, aal, dst, dr, dth, dal, rules, bombard_cdf, retreat, start_rounds,
           retreat_from, a, d, state):
    """One battle in the general round model (kernels/round_model.py): (outcome, a, d, rounds,
    random state).  Arrays, not the battle's NamedTuple, and retreat None where there is no
    retreat policy, as _trial_walk."""
    air_always = rules[RU_AIR_ALWAYS] == 1
    none = round_model.VALUES[0]
    timing = rules[RU_SUBMERGE]
    may_submerge = timing != SUBMERGE_NEVER and (rules[RU_A_POLICY] != POLICY_NEVER
                                                 or rules[RU_D_POLICY] != POLICY_NEVER)
    rounds = start_rounds
    outcome, a, d = _settled(ast, a, dst, d, air_always)
    if retreat is not None and outcome == CONTINUE and rounds >= retreat_from:
        # a battle that starts at the end of a round: the attacker's decision comes first
        outcome, a, d, _ = _retreat_step(ast, a, dst, d, rounds, retreat, air_always)
    while outcome == CONTINUE:
        if may_submerge and (timing == SUBMERGE_BEFORE_FIRE or rounds > 0):
            if retreat is not None:  # (None: no table of submerge choices either)
                a2, d2 = round_model.submerge_step(ast, a, dst, d, rules, retreat.choices,
                                                   rounds < retreat_from)
            else:
                a2, d2 = round_model.submerge_step(ast, a, dst, d, rules, NO_CHOICES,
                                                   rounds < retreat_from)
            if round_model.withdrew(ast, a, a2):  # its subs were all it had in the battle
                outcome, a, d = RETREAT, a2, d2
                break
            if a2 != a or d2 != d:
                outcome, a, d = _settled(ast, a2, dst, d2, air_always)
                if outcome != CONTINUE:
                    break
        rounds += 1
        lone = round_model.lone_transports(ast, a, rules)
        a_strike, d_strike = round_model.strikes(ast, a, dst, d, rules)
        d1 = d
        if a_strike:
            h, state = _sample(ath, aal, ar, ast[a, S_ROW_S], state)
            d1 = round_model.assign(dst, dr, d, h, none, none, round_model.FLAGS[0])
        a1 = a
        if d_strike:
            h, state = _sample(dth, dal, dr, dst[d, S_ROW_S], state)
            a1 = round_model.assign(ast, ar, a, h, none, none, round_model.FLAGS[0])
        # units in general fire: those left after the opening step, or all of them
        fa = a if round_model.fires_back(ast, a, rules) else a1
        fd = d if round_model.fires_back(dst, d, rules) else d1
        a_air_subs = round_model.air_on_subs(ast, fa, rules)
        d_air_subs = round_model.air_on_subs(dst, fd, rules)
        hs_a, ha_a, hg_a, state = _general_hits(ast, ar, ath, aal, fa, a_strike,
                                                dst[d1, S_INFO], a_air_subs, rules, state)
        hs_d, ha_d, hg_d, state = _general_hits(dst, dr, dth, dal, fd, d_strike,
                                                ast[a1, S_INFO], d_air_subs, rules, state)
        if rounds == 1 and rules[RU_BOMBARD] == 1:  # shore bombardment: at non-air units
            h, state = _pick(bombard_cdf, state)
            hs_a += h
        d = round_model.assign(dst, dr, d1, hs_a, ha_a, hg_a, a_air_subs)
        a = round_model.assign(ast, ar, a1, hs_d, ha_d, hg_d, d_air_subs)
        if lone and round_model.in_battle(ast, a):
            outcome = RETREAT
            break
        outcome, a, d = _settled(ast, a, dst, d, air_always)
        if retreat is not None and outcome == CONTINUE:
            outcome, a, d, _ = _retreat_step(ast, a, dst, d, rounds, retreat, air_always)
    return outcome, a, d, rounds, state


@kernel(refs=False)
def _general_hits(xst, xr, xth, xal, x, struck, y_info, air_subs, rules, state):
    """(sub hits, air hits, other hits, state) of a side's general fire at an enemy with
    state flags y_info.  Subs that struck in the opening step do not fire again."""
    subs_fire = not struck and xst[x, S_SUBS] > 0
    if rules[RU_LOW_LUCK] == 1:
        groups = round_model.fire_groups(xr[xst[x, S_ROW_S], R_STRENGTH] if subs_fire else 0,
                             xr[xst[x, S_ROW_A], R_STRENGTH], xr[xst[x, S_ROW_N], R_STRENGTH],
                             y_info, air_subs)
        hs, state = _low_luck(groups[0], rules[RU_DIE], state)
        ha, state = _low_luck(groups[1], rules[RU_DIE], state)
        hg, state = _low_luck(groups[2], rules[RU_DIE], state)
        return hs, ha, hg, state
    hs = 0
    if subs_fire:
        hs, state = _sample(xth, xal, xr, xst[x, S_ROW_S], state)
    ha, hg, state = _sample2(xth, xal, xr, xst[x, S_ROW_A], xst[x, S_ROW_N], state)
    return hs, ha, hg, state


@kernel(inline=True)
def _low_luck(strength, die, state):
    """(hits of a low-luck group of this strength, state): strength // die sure hits and one
    die for the remainder."""
    if strength % die == 0:
        return strength // die, state
    u, state = next_uniform(state)
    return strength // die + (1 if u * die < strength % die else 0), state


# A chunk's counts (each outcome in layout order, the territory taken, the rounds fought),
# summed in scalars and written to its row once (_write_counts): 8 chunks' counts share a
# cache line (an outcome row is 5 of 8 words), and the chunk next to it or a few places on
# runs on the other thread (false sharing); scalars, not a local array: np.zeros compiles for
# about 0.35 s, an eighth of a first Monte Carlo run's CPU.
NO_COUNTS = (0, 0, 0, 0, 0, 0, 0)


@kernel(inline=True)
def _count_trial(counts, outcome, a, d, rounds, ast, dst, a_final, d_final, rounds_hist,
                 swing_hist, swing_offset):
    """The counts after one more trial that ended in (outcome, a, d) after `rounds` rounds;
    its final states, rounds and TUV swing counted in the chunk's rows."""
    win, lose, draw, stalemate, retreat, taken, rounds_sum = counts
    a_final[a] += 1
    d_final[d] += 1
    rounds_hist[min(rounds, rounds_hist.shape[0] - 1)] += 1
    swing_hist[dst[d, S_IPC] - ast[a, S_IPC] + swing_offset] += 1
    return (win + (outcome == ATTACKER_WIN), lose + (outcome == DEFENDER_WIN),
            draw + (outcome == DRAW), stalemate + (outcome == STALEMATE),
            retreat + (outcome == RETREAT), taken + round_model.takes(outcome, a, ast),
            rounds_sum + rounds)


@kernel(inline=True)
def _write_counts(counts, outcomes, taken, rounds_sum):
    """A chunk's counts (_count_trial's) added to its row of the outputs."""
    for k in range(N_OUTCOMES):
        outcomes[k] += counts[k]
    taken[0] += counts[N_OUTCOMES]
    rounds_sum[0] += counts[N_OUTCOMES + 1]


@kernel(inline=True)
def _chunk_walk(seed, trials, A, D, rules, a_starts, a_start_cdf, d_starts, d_start_cdf,
                bombard_cdf, retreat, swing_offset, start_rounds, retreat_from, outcomes, taken,
                a_final, d_final, rounds_hist, rounds_sum, swing_hist):
    """Play `trials` battles of two single walks (rules[RU_SIMPLE] 1: _trial_walk) on one
    splitmix64 stream (seed) into one chunk's row of the outputs.  The arguments are the
    fields of the battle's layout.McBattle and of the chunk's row of layout.McOut, passed one
    by one down to the trials: numba code reading them from the NamedTuples in the trial loops
    ran 20-30% slower (big land and mid sea battles, CPU time, one thread).  A kernel of its
    own, not a branch of _chunk: numba compiles every branch of a kernel, and the general
    round's trial was most of the Monte Carlo kernels' compiling (a fresh cache: the README's
    land example 8.8 -> 3.5 s of CPU).  Inlined into _simulate_walk_chunks (0.6 s less
    compiling, the same trials a second; _chunk inlined so made the mid sea battle's trials
    25% slower)."""
    state = seed
    ast, ar, ath, aal, afree = A
    dst, dr, dth, dal, dfree = D
    counts = NO_COUNTS
    for _ in range(trials):
        i, state = _pick(a_start_cdf, state)
        j, state = _pick(d_start_cdf, state)
        outcome, a, d, rounds, state = _trial_walk(
            ast, ar, ath, aal, afree, dst, dr, dth, dal, dfree, rules, bombard_cdf, retreat,
            start_rounds, retreat_from, a_starts[i], d_starts[j], state)
        counts = _count_trial(counts, outcome, a, d, rounds, ast, dst, a_final, d_final,
                              rounds_hist, swing_hist, swing_offset)
    _write_counts(counts, outcomes, taken, rounds_sum)


@kernel
def _chunk(seed, trials, A, D, rules, a_starts, a_start_cdf, d_starts, d_start_cdf,
           bombard_cdf, retreat, swing_offset, start_rounds, retreat_from, outcomes, taken,
           a_final, d_final, rounds_hist, rounds_sum, swing_hist):
    """_chunk_walk's trials in the general round model (_trial)."""
    state = seed
    ast, ar, ath, aal, _a_free = A
    dst, dr, dth, dal, _d_free = D
    counts = NO_COUNTS
    for _ in range(trials):
        i, state = _pick(a_start_cdf, state)
        j, state = _pick(d_start_cdf, state)
        outcome, a, d, rounds, state = _trial(ast, ar, ath, aal, dst, dr, dth, dal, rules,
                                              bombard_cdf, retreat, start_rounds,
                                              retreat_from, a_starts[i], d_starts[j], state)
        counts = _count_trial(counts, outcome, a, d, rounds, ast, dst, a_final, d_final,
                              rounds_hist, swing_hist, swing_offset)
    _write_counts(counts, outcomes, taken, rounds_sum)


@kernel(nogil=True)
def _simulate_chunks(first, last, seeds, chunk_trials, battle, out):
    """Simulate chunks first..last-1 of trials of a battle (layout.McBattle) in the general
    round model, chunk c writing only to row c of each output (layout.McOut); seeds[C] uint64
    stream seeds, chunk_trials[C] trials per chunk."""
    for c in range(first, last):
        _chunk(seeds[c], chunk_trials[c], battle.att, battle.dfn, battle.rules,
               battle.a_starts, battle.a_start_cdf, battle.d_starts, battle.d_start_cdf,
               battle.bombard_cdf, battle.retreat, battle.swing_offset, battle.start_rounds,
               battle.retreat_from, out.outcomes[c],
               out.taken[c:c + 1], out.a_final[c], out.d_final[c], out.rounds_hist[c],
               out.rounds_sum[c:c + 1], out.swing_hist[c])


@kernel(nogil=True)
def _simulate_walk_chunks(first, last, seeds, chunk_trials, battle, out):
    """_simulate_chunks for a battle of two single walks (rules[RU_SIMPLE] 1: land)."""
    for c in range(first, last):
        _chunk_walk(seeds[c], chunk_trials[c], battle.att, battle.dfn, battle.rules,
                    battle.a_starts, battle.a_start_cdf, battle.d_starts, battle.d_start_cdf,
                    battle.bombard_cdf, battle.retreat, battle.swing_offset,
                    battle.start_rounds, battle.retreat_from, out.outcomes[c],
                    out.taken[c:c + 1], out.a_final[c], out.d_final[c], out.rounds_hist[c],
                    out.rounds_sum[c:c + 1], out.swing_hist[c])
