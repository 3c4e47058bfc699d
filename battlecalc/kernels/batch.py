"""The exact solver over many small battles in one call (battlecalc.batch.solve_many).

Every battle's compiled tables (the arrays of layout.ExactBattle) are laid end to end in the
flat arrays of a :class:`BatchTables` (a side that several battles share, once), battle i's
rows of each at ``spans[i, SP_*, 0]`` .. ``spans[i, SP_*, 1]``; one kernel call solves a range
of battles one after
the other, each through exact._solve_blocks on views of its own rows (state and row indices
are the battle's own: views need no renumbering), writing only its own rows of the outputs
(:class:`BatchOut`).  So the results do not depend on how the battles are split among
threads, and each is the sum simulate computes for it, in the same order (one row of
outputs per battle, blocks solved in turn).

The entry point of kernels/exact used here: the kernel ``sweep._solve_blocks`` (with the
NamedTuples of kernels/layout.py that it takes).  Fields added to those NamedTuples after the
ones set here take their declared defaults: a batch's plans (solver.batch.batchable) are the
plans of those defaults (no pruning budget, the row sweep and the two-phase round, a dense
table), each battle's attacker blocks one by one or merged (its merge and sweep rows: an
empty span, one by one) and from where it starts (its start_rounds and retreat_from).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .exact import sweep
from .jit import kernel
from .layout import ExactBattle, ExactOut, ExactSide, RetreatTables

# BatchTables.spans [n, SPAN_COLS, 2]: (first, end) of battle i's rows in each array: its
# sides' states (a_states, a_start, remainder / d_states, d_start), category steps (a_rows,
# a_pmf, a_cdf / d_...), attacker blocks and bombardment law; and its own rows of the
# outputs (BatchOut.a_final, d_final, transfer)
(SP_A_STATES, SP_A_ROWS, SP_D_STATES, SP_D_ROWS, SP_BLOCKS, SP_BOMBARD, SP_A_OUT, SP_D_OUT,
 SP_TRANSFER, SP_MERGE, SP_SWEEP) = range(11)
SPAN_COLS = 11


def _later_defaults(table, given: int) -> tuple:
    """The defaults of the fields of a tables NamedTuple after the first `given` ones, which
    _solve_range sets (numba's constructor takes no defaults: they are passed on)."""
    return tuple(table._field_defaults[name] for name in table._fields[given:])


SIDE_REST = _later_defaults(ExactSide, 4)
RETREAT_REST = _later_defaults(RetreatTables, 4)
# (after merge and sweep: the row sweep, two phases, a dense table, no work limit; the last
# two, start_rounds and retreat_from, are each battle's)
BATTLE_REST = _later_defaults(ExactBattle, 16)[:-2]
OUT_REST = _later_defaults(ExactOut, 7)


class BatchTables(NamedTuple):
    """n battles' tables end to end (Fa / Fd: attacker / defender states of the batch's
    sides, Ra / Rd: their category steps, W: the widest hit law of the batch, zero-padded)."""

    spans: np.ndarray  # int64[n, SPAN_COLS, 2]
    a_states: np.ndarray  # int64[Fa, STATE_COLS]
    a_rows: np.ndarray  # int64[Ra, ROW_COLS]
    a_pmf: np.ndarray  # float64[Ra, W] (pmf padded with 0, cdf with 1: past the top count)
    a_cdf: np.ndarray  # float64[Ra, W]
    a_start: np.ndarray  # float64[Fa]
    remainder: np.ndarray  # int64[Fa]: RetreatTables.remainder of each side
    d_states: np.ndarray  # int64[Fd, STATE_COLS]
    d_rows: np.ndarray  # int64[Rd, ROW_COLS]
    d_pmf: np.ndarray  # float64[Rd, W]
    d_cdf: np.ndarray  # float64[Rd, W]
    d_start: np.ndarray  # float64[Fd]
    blocks: np.ndarray  # int64[B, BLOCK_COLS]: the attacker's blocks of each battle
    bombard: np.ndarray  # float64[K]: each battle's law of bombardment hits
    rules: np.ndarray  # int64[n, RULE_COLS]
    policy: np.ndarray  # int64[n, RETREAT_COLS]: RetreatTables.policy
    below: np.ndarray  # float64[n]: RetreatTables.below (NO_THRESHOLD: none)
    explicit: np.ndarray  # int64[n]: rounds played one at a time (exact.run_exact)
    phases: np.ndarray  # int64[n]: 2 where a partial retreat leaves a stayers' block, else 1
    merge: np.ndarray  # int64[M]: ExactBattle.merge of each battle whose blocks merge
    sweep: np.ndarray  # int64[S]: ExactBattle.sweep of each
    start_rounds: np.ndarray  # int64[n]: ExactBattle.start_rounds
    retreat_from: np.ndarray  # int64[n]: ExactBattle.retreat_from
    eps: float  # Limits.transition_eps
    state_eps: float  # Limits.state_eps


class BatchOut(NamedTuple):
    """What the battles write: a row per battle, or each battle's own states."""

    outcomes: np.ndarray  # float64[n, N_OUTCOMES]
    totals: np.ndarray  # float64[n, TOTAL_COLS]: ExactOut.totals
    rounds_hist: np.ndarray  # float64[n, 1]
    a_final: np.ndarray  # float64[sum of the battles' attacker states]
    d_final: np.ndarray  # float64[sum of the battles' defender states]
    transfer: np.ndarray  # float64[sum of blocks x Fd]: ExactOut.transfer of each battle


@kernel(nogil=True)
def _solve_range(first, last, t, out):
    """Solve battles first..last-1 of the batch t (BatchTables) into out (BatchOut)."""
    one = np.ones(1)
    no_joint = np.zeros((0, 0))
    no_win_value = np.zeros((1, 1))
    sp = t.spans
    for i in range(first, last):
        a0, a1 = sp[i, SP_A_STATES, 0], sp[i, SP_A_STATES, 1]
        ar0, ar1 = sp[i, SP_A_ROWS, 0], sp[i, SP_A_ROWS, 1]
        d0, d1 = sp[i, SP_D_STATES, 0], sp[i, SP_D_STATES, 1]
        dr0, dr1 = sp[i, SP_D_ROWS, 0], sp[i, SP_D_ROWS, 1]
        b0, b1 = sp[i, SP_BLOCKS, 0], sp[i, SP_BLOCKS, 1]
        k0, k1 = sp[i, SP_BOMBARD, 0], sp[i, SP_BOMBARD, 1]
        fa, fd = sp[i, SP_A_OUT, 0], sp[i, SP_D_OUT, 0]
        t0, t1 = sp[i, SP_TRANSFER, 0], sp[i, SP_TRANSFER, 1]
        m0, m1 = sp[i, SP_MERGE, 0], sp[i, SP_MERGE, 1]
        w0, w1 = sp[i, SP_SWEEP, 0], sp[i, SP_SWEEP, 1]
        att = ExactSide(t.a_states[a0:a1], t.a_rows[ar0:ar1], t.a_pmf[ar0:ar1],
                        t.a_cdf[ar0:ar1], *SIDE_REST)
        dfn = ExactSide(t.d_states[d0:d1], t.d_rows[dr0:dr1], t.d_pmf[dr0:dr1],
                        t.d_cdf[dr0:dr1], *SIDE_REST)
        retreat = RetreatTables(t.policy[i], t.below[i], no_win_value, t.remainder[a0:a1],
                                *RETREAT_REST)
        battle = ExactBattle(att, dfn, t.blocks[b0:b1], t.rules[i], t.a_start[a0:a1],
                             t.d_start[d0:d1], t.bombard[k0:k1], one, retreat, t.eps,
                             t.state_eps, 0.0, 0.0, 0.0, t.merge[m0:m1], t.sweep[w0:w1],
                             *BATTLE_REST, t.start_rounds[i], t.retreat_from[i])
        stacks = ExactOut(out.outcomes[i:i + 1], out.a_final[fa:fa + a1 - a0],
                          out.d_final[fd:fd + d1 - d0].reshape((1, d1 - d0)), no_joint,
                          out.totals[i:i + 1], out.rounds_hist[i:i + 1],
                          out.transfer[t0:t1].reshape((b1 - b0, d1 - d0)), *OUT_REST)
        for phase in range(t.phases[i]):
            sweep._solve_blocks(0, b1 - b0, phase, battle, stacks, t.explicit[i])


@kernel
def _pairwise(values, first, n, column):
    """The sum of values[first:first + n, column] added as numpy adds a float vector
    (np.add.reduce: pairwise, blocks of at most 128 summed with 8 accumulators, from -0.0),
    so that a batch's sums equal a battle's own (solver.law.weighted_sum) to the last bit."""
    if n < 8:
        res = -0.0
        for i in range(n):
            res += values[first + i, column]
        return res
    if n <= 128:
        r0 = values[first, column]
        r1 = values[first + 1, column]
        r2 = values[first + 2, column]
        r3 = values[first + 3, column]
        r4 = values[first + 4, column]
        r5 = values[first + 5, column]
        r6 = values[first + 6, column]
        r7 = values[first + 7, column]
        i = 8
        while i < n - n % 8:
            r0 += values[first + i, column]
            r1 += values[first + i + 1, column]
            r2 += values[first + i + 2, column]
            r3 += values[first + i + 3, column]
            r4 += values[first + i + 4, column]
            r5 += values[first + i + 5, column]
            r6 += values[first + i + 6, column]
            r7 += values[first + i + 7, column]
            i += 8
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        while i < n:
            res += values[first + i, column]
            i += 1
        return res
    half = n // 2
    half -= half % 8
    return (_pairwise(values, first, half, column)
            + _pairwise(values, first + half, n - half, column))


@kernel(nogil=True)
def _segment_sums(values, offsets, out):
    """out[i, j] = the sum of values[offsets[i]:offsets[i + 1], j], each added as
    _pairwise adds it."""
    for i in range(offsets.shape[0] - 1):
        for j in range(values.shape[1]):
            out[i, j] = _pairwise(values, offsets[i], offsets[i + 1] - offsets[i], j)
