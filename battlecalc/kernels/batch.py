"""The exact solver over many small battles in one call (battlecalc.batch.solve_many).

Every battle's compiled tables (the arrays of tables.ExactBattle) are laid end to end in the
flat arrays of a :class:`BatchTables`, battle i's rows of each at ``offsets[i, col]`` ..
``offsets[i + 1, col]`` (OFF_* columns); one kernel call solves a range of battles one after
the other, each through exact._solve_blocks on views of its own rows (state and row indices
are the battle's own: views need no renumbering), writing only its own rows of the outputs
(:class:`BatchOut`).  So the results do not depend on how the battles are split among
threads, and each is the sum simulate computes for it, in the same order (one row of
outputs per battle, blocks solved in turn).

The only entry point of kernels/exact.py used here is ``_solve_blocks`` (with the NamedTuples
of kernels/tables.py that it takes).  The kernel is compiled on first use by :func:`solver`
(cached on disk like every kernel of this folder), not by jit.compiled(): a process that
never solves a batch never compiles it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import exact, jit
from .tables import ExactBattle, ExactOut, ExactSide, RetreatTables

# columns of BatchTables.offsets [n + 1, OFF_COLS]: where each battle's rows start
(OFF_A_STATES, OFF_A_ROWS, OFF_D_STATES, OFF_D_ROWS, OFF_BLOCKS, OFF_BOMBARD,
 OFF_TRANSFER) = range(7)
OFF_COLS = 7


class BatchTables(NamedTuple):
    """n battles' tables end to end (Fa / Fd: attacker / defender states of all battles, Ra /
    Rd: their category steps, W: the widest hit law of the batch, zero-padded)."""

    offsets: np.ndarray  # int64[n + 1, OFF_COLS]
    a_states: np.ndarray  # int64[Fa, STATE_COLS]
    a_rows: np.ndarray  # int64[Ra, ROW_COLS]
    a_pmf: np.ndarray  # float64[Ra, W] (pmf padded with 0, cdf with 1: past the top count)
    a_cdf: np.ndarray  # float64[Ra, W]
    a_start: np.ndarray  # float64[Fa]
    remainder: np.ndarray  # int64[Fa]: RetreatTables.remainder of each battle
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
    eps: float  # exact.TRANSITION_EPS
    state_eps: float  # exact.STATE_EPS


class BatchOut(NamedTuple):
    """What the battles write: a row per battle, or each battle's own states."""

    outcomes: np.ndarray  # float64[n, N_OUTCOMES]
    totals: np.ndarray  # float64[n, 3]: TOTAL_ROUNDS, TOTAL_PRUNED, TOTAL_TAKES
    rounds_hist: np.ndarray  # float64[n, 1]
    a_final: np.ndarray  # float64[Fa]
    d_final: np.ndarray  # float64[Fd]
    transfer: np.ndarray  # float64[sum of blocks x Fd]: ExactOut.transfer of each battle


def _solve_range(first, last, t, out):
    """Solve battles first..last-1 of the batch t (BatchTables) into out (BatchOut)."""
    one = np.ones(1)
    no_joint = np.zeros((0, 0))
    no_win_value = np.zeros((1, 1))
    o = t.offsets
    for i in range(first, last):
        a0, a1 = o[i, OFF_A_STATES], o[i + 1, OFF_A_STATES]
        ar0, ar1 = o[i, OFF_A_ROWS], o[i + 1, OFF_A_ROWS]
        d0, d1 = o[i, OFF_D_STATES], o[i + 1, OFF_D_STATES]
        dr0, dr1 = o[i, OFF_D_ROWS], o[i + 1, OFF_D_ROWS]
        b0, b1 = o[i, OFF_BLOCKS], o[i + 1, OFF_BLOCKS]
        k0, k1 = o[i, OFF_BOMBARD], o[i + 1, OFF_BOMBARD]
        t0, t1 = o[i, OFF_TRANSFER], o[i + 1, OFF_TRANSFER]
        att = ExactSide(t.a_states[a0:a1], t.a_rows[ar0:ar1], t.a_pmf[ar0:ar1],
                        t.a_cdf[ar0:ar1])
        dfn = ExactSide(t.d_states[d0:d1], t.d_rows[dr0:dr1], t.d_pmf[dr0:dr1],
                        t.d_cdf[dr0:dr1])
        retreat = RetreatTables(t.policy[i], t.below[i], no_win_value, t.remainder[a0:a1])
        battle = ExactBattle(att, dfn, t.blocks[b0:b1], t.rules[i], t.a_start[a0:a1],
                             t.d_start[d0:d1], t.bombard[k0:k1], one, retreat, t.eps,
                             t.state_eps)
        stacks = ExactOut(out.outcomes[i:i + 1], out.a_final[a0:a1],
                          out.d_final[d0:d1].reshape((1, d1 - d0)), no_joint,
                          out.totals[i:i + 1], out.rounds_hist[i:i + 1],
                          out.transfer[t0:t1].reshape((b1 - b0, d1 - d0)))
        for phase in range(t.phases[i]):
            exact._solve_blocks(0, b1 - b0, phase, battle, stacks, t.explicit[i])


_compiled: dict = {}


def solver():
    """_solve_range compiled with numba (once a process; it releases the GIL, for
    jit.threads), or plain Python under BATTLECALC_PLAIN_KERNELS=1."""
    jit.compiled()
    if not jit.is_compiled():
        return _solve_range
    if "solve_range" not in _compiled:
        import numba

        _compiled["solve_range"] = jit._jit(numba, _solve_range, {"nogil": True})
    return _compiled["solve_range"]
