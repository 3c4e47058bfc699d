"""The named tables the kernels take: a compiled battle (compile.CompiledBattle) as a few
NamedTuples of arrays, documented here once.  numba passes NamedTuples of arrays through
nopython code (and caches kernels that take them) as it does plain tuples; plain Python reads
the same fields.  Columns of the int64 tables: kernels/common.py.  F flat states of a side, R
category steps (rows), W hit counts, B blocks, C chunks of Monte Carlo trials.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class RetreatTables(NamedTuple):
    """The attacker's retreat policy (rules.should_retreat), the same for both solvers
    (compile.with_retreat builds it; CompiledBattle.retreat_tables)."""

    policy: np.ndarray  # int64[RETREAT_COLS]: RT_* columns (NO_LIMIT: no such condition)
    below: float  # win-probability threshold of --retreat-below (NO_THRESHOLD: none)
    win_value: np.ndarray  # float64[Fa, Fd] (1 x 1 unless below): the chance if it fights on
    remainder: np.ndarray  # int64[Fa]: first state of the stayers' block, or FULL_RETREAT


class ExactSide(NamedTuple):
    """One side's tables for the exact solver."""

    states: np.ndarray  # int64[F, STATE_COLS]
    rows: np.ndarray  # int64[R, ROW_COLS]
    pmf: np.ndarray  # float64[R, W]: law of a category step's hits in one round
    cdf: np.ndarray  # float64[R, W]: its running sums (exactly 1 from the top count on)


NO_MERGE = np.zeros(0, dtype=np.int64)  # ExactBattle.merge / sweep: the blocks one by one


class ExactBattle(NamedTuple):
    """Everything the exact solver reads about a battle (kernels/exact.py)."""

    att: ExactSide
    dfn: ExactSide
    blocks: np.ndarray  # int64[B, BLOCK_COLS]: the attacker's blocks
    rules: np.ndarray  # int64[RULE_COLS]: RU_* round rules
    a_start: np.ndarray  # float64[Fa]: probability of starting in each attacker state
    d_start: np.ndarray  # float64[Fd]
    bombard_pmf: np.ndarray  # float64[K]: law of shore-bombardment hits in round 1
    one: np.ndarray  # float64[1] = [1.0]: "no extra hits" (the law of zero hits)
    retreat: RetreatTables
    eps: float  # transitions moving this much probability or less are skipped
    state_eps: float  # states holding less are not played on
    # pruning within a budget (probability, the whole battle; 0: none): states holding less
    # than prune_eps are not played on, and a round from a state may leave out up to tail_eps
    # in the tails of the hit laws (kernels/exact._sweep_round)
    prune_eps: float = 0.0
    tail_eps: float = 0.0
    budget: float = 0.0
    # every attacker block solved in one table (exact._solve_merged; empty: block by block):
    # merge[a], the state whose row holds a's probability (a itself, or the same state of
    # block 0 where a's block reaches it: a land single walk after round-1 AA fire), and
    # sweep, the rows played, each after every row that can reach it
    merge: np.ndarray = NO_MERGE
    sweep: np.ndarray = NO_MERGE
    # the land fast path's closed sweep a row of pairs at a time (exact._sweep_walks; False:
    # a pair at a time, exact._sweep_round)
    row_sweep: bool = True
    # the closed sweep's general round in two phases, strikes then general fire, where the
    # strikes spread a side (exact._play_phased; False: one phase)
    phased: bool = True
    # the general round's compact mass table (exact._solve_compact; 0: a dense table of every
    # pair): at most table_rows attacker states by table_cols defender states, each given its
    # row or column when it first receives probability (a big sea battle's mass keeps to a
    # few hundred of its hundred thousand states a side)
    table_rows: int = 0
    table_cols: int = 0
    # a compact table's solve stops (FULL 4) past this much work (successor terms spread, and
    # cells scanned or zeroed: exact.WORK_RATE of it about a second; 0: no limit)
    work_limit: int = 0


class ExactOut(NamedTuple):
    """What the exact solver writes (exact._finish), a row per block (stacks: a leading block
    axis on outcomes, d_final, totals and rounds_hist; a_final, joint and transfer shared,
    each block writing only its own states)."""

    outcomes: np.ndarray  # float64[N_OUTCOMES]
    a_final: np.ndarray  # float64[Fa]
    d_final: np.ndarray  # float64[Fd]
    joint: np.ndarray  # float64[Fa, Fd] (0 x 0: not kept)
    totals: np.ndarray  # float64[TOTAL_COLS]: TOTAL_ROUNDS, TOTAL_PRUNED, TOTAL_TAKES, ...
    rounds_hist: np.ndarray  # float64[R] (last bin: R-1 rounds or more)
    transfer: np.ndarray  # float64[B, Fd]: mass a partial retreat sends to a stayers' block


TOTAL_ROUNDS, TOTAL_PRUNED, TOTAL_TAKES = 0, 1, 2  # ExactOut.totals
# and for a compact mass table (exact._solve_compact): TOTAL_FULL, 1 where it ran out of rows,
# 2 of columns, 4 past the work limit; TOTAL_WORK, its work (ExactBattle.work_limit)
TOTAL_FULL, TOTAL_WORK = 3, 4
TOTAL_COLS = 5


class McSide(NamedTuple):
    """One side's tables for Monte Carlo (compile.Sampler)."""

    states: np.ndarray  # int64[F, STATE_COLS]
    rows: np.ndarray  # int64[R, ROW_COLS]
    thresh: np.ndarray  # uint64[R, W]: alias tables, chance of keeping column h (2**-32 units)
    alias: np.ndarray  # int64[R, W]: the column taken otherwise
    free: np.ndarray  # int64[F]: 1 where settle has nothing to do (single walks)


class McBattle(NamedTuple):
    """Everything the Monte Carlo kernel reads about a battle (kernels/montecarlo.py)."""

    att: McSide
    dfn: McSide
    rules: np.ndarray  # int64[RULE_COLS]
    a_starts: np.ndarray  # int64[K]: the attacker's possible start states
    a_start_cdf: np.ndarray  # float64[K]: running sums of their probabilities (last 1)
    d_starts: np.ndarray  # int64[L]
    d_start_cdf: np.ndarray  # float64[L]
    bombard_cdf: np.ndarray  # float64[K]: running sums of the law of bombardment hits
    retreat: RetreatTables
    swing_offset: int  # McOut.swing_hist bin of a TUV swing of 0


class McOut(NamedTuple):
    """Monte Carlo counts, a row per chunk (C first; one chunk's row: without it)."""

    outcomes: np.ndarray  # int64[C, N_OUTCOMES]
    taken: np.ndarray  # int64[C]: territory taken
    a_final: np.ndarray  # int64[C, Fa]
    d_final: np.ndarray  # int64[C, Fd]
    rounds_hist: np.ndarray  # int64[C, R] (last bin: R-1 rounds or more)
    rounds_sum: np.ndarray  # int64[C]
    swing_hist: np.ndarray  # int64[C, K]: TUV swing in IPC + swing_offset
