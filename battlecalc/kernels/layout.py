"""The layout of what the compiler, the kernels, the solver and the results share: outcome codes,
the columns of the compiled int64 tables, and the named tables the kernels take and write (a
compiled battle as a few NamedTuples of arrays), documented here once.  numba passes
NamedTuples of arrays through nopython code (and caches kernels that take them) as it does
plain tuples; plain Python reads the same fields.  F flat states of a side, R category steps
(rows), W hit counts, B blocks, C chunks of Monte Carlo trials.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

# Outcome codes; the order is the order of the outcome arrays the kernels fill.
ATTACKER_WIN = 0
DEFENDER_WIN = 1
DRAW = 2
STALEMATE = 3
RETREAT = 4
N_OUTCOMES = 5
CONTINUE = -1

# A side's state is a flat index f into its table of states: a block (the force it began the
# battle with, e.g. one per outcome of round-1 AA fire) and the casualty steps taken in each
# loss category (s submarines, a aircraft, n everything else; compile.py).  The kernels read
# everything they need about a state from one row of that table, int64[F, STATE_COLS]:
#   S_BLOCK, S_S, S_A, S_N      the block and the steps taken per category
#   S_INFO                      bit flags I_* below
#   S_ROW_S, S_ROW_A, S_ROW_N   row of each category's current step in the side's rows/tables
#   S_SUBS, S_AIR, S_OTHER      units (steps) left in the battle per category
#   S_STRIDE_S, S_STRIDE_A      flat-index step of one more casualty in s, in a (n: 1)
#   S_SUBMERGE                  flat-index step of submerging the subs left (0: they may not)
#   S_HAS_LAND, S_UNITS, S_IPC  a land unit is left; units left; IPC lost so far
#   S_MAY_RETREAT               the attacker may retreat from here
(S_BLOCK, S_S, S_A, S_N, S_INFO, S_ROW_S, S_ROW_A, S_ROW_N, S_SUBS, S_AIR, S_OTHER, S_STRIDE_S,
 S_STRIDE_A, S_SUBMERGE, S_HAS_LAND, S_UNITS, S_IPC, S_MAY_RETREAT) = range(18)
STATE_COLS = 18
# the columns that say where a state lies in its own block's table and rows (the others say
# what it holds: units, fire, IPC, what may happen next)
S_PLACE = (S_BLOCK, S_S, S_A, S_N, S_ROW_S, S_ROW_A, S_ROW_N, S_STRIDE_S, S_STRIDE_A)
I_SUBS, I_AIR, I_OTHER = 1, 2, 4  # units of the category in the battle
I_SUBS_FIRE, I_AIR_FIRE, I_OTHER_FIRE = 8, 16, 32  # ... that can score hits
I_DESTROYER = 64  # an anti-sub unit is left
I_DEFENCELESS = 128  # the other units left are all defenceless (lost without dice when alone)
I_TRANSPORTS = 256  # the other units left are all transports
I_SUBMERGED = 512  # the subs left have submerged
I_IN_BATTLE = I_SUBS | I_AIR | I_OTHER
# blocks int64[B, BLOCK_COLS]: first flat state, radix (steps + 1) of each category, kind:
# BLOCK_START (a force the battle may start with) or BLOCK_STAYERS (the units left behind by a
# partial retreat, which no battle starts in: they carry on where the retreat left them)
B_OFFSET, B_RADIX_S, B_RADIX_A, B_RADIX_N, B_KIND = range(5)
BLOCK_COLS = 5
BLOCK_START, BLOCK_STAYERS = 0, 1
# rows int64[R, ROW_COLS], per category step: most hits, rank of the next casualty in the
# side's order of losses, the range of hit counts the exact solver keeps, and the low-luck
# strength of what is left of the category (the sum of its dice values)
R_TOP, R_RANK, R_LO, R_HI, R_STRENGTH = range(5)
ROW_COLS = 5
NO_RANK = 2**62  # rank of the next casualty of an exhausted category

# Round rules, int64[RULE_COLS] (compile.round_rules):
# A_STRIKE, D_STRIKE: when that side's submarines fire in the opening step: 0 never, 1 always,
#   2 unless the enemy has a destroyer; subs that do not strike fire in general fire.
# STRIKE_RETURN: 1 a side with a destroyer lets its strike casualties fire back (Revised).
# AIR_ALWAYS: 1 aircraft may hit submarines without a destroyer on their side.
# SUBMERGE: 0 at the end of the round, 1 before firing, 2 never.
# LONE_RETREAT: 1 an attacker left with transports only takes one volley, then retreats.
# A_POLICY, D_POLICY: submerge policy, 0 never, 1 when only subs are left, 2 at the first chance.
# BOMBARD: 1 shore bombardment hits join the attacker's round-1 fire (at non-air units).
# SIMPLE: 1 both sides are single walks with no restricted fire (the land fast path);
#   SIMPLE_EXACT (2) the same for the exact solver only (a sea battle without submarines:
#   Monte Carlo plays it by the general round, its draws at a seed unchanged); 0 neither.
# LOW_LUCK: 1 low-luck dice (units firing at the same targets fire as one group); DIE: die size.
(RU_A_STRIKE, RU_D_STRIKE, RU_STRIKE_RETURN, RU_AIR_ALWAYS, RU_SUBMERGE, RU_LONE_RETREAT,
 RU_A_POLICY, RU_D_POLICY, RU_BOMBARD, RU_SIMPLE, RU_LOW_LUCK, RU_DIE) = range(12)
RULE_COLS = 12
SIMPLE_EXACT = 2  # (RU_SIMPLE: the exact solver's walk path, not Monte Carlo's)
STRIKE_NEVER, STRIKE_ALWAYS, STRIKE_UNLESS_DESTROYER = 0, 1, 2
SUBMERGE_END_OF_ROUND, SUBMERGE_BEFORE_FIRE, SUBMERGE_NEVER = 0, 1, 2
POLICY_NEVER, POLICY_ONLY_SUBS, POLICY_FIRST_CHANCE = 0, 1, 2
POLICY_TABLE = 3  # as RetreatTables.choices says (the optimal submerging found)

# Retreat policy, int64[RETREAT_COLS] (RT_, not to be confused with the rows' R_ columns):
# ACTIVE (0/1), AFTER (retreat after this round; 0 = no), WHEN_LEFT (with this many attacking
# units or fewer; NO_LIMIT = no), ONLY_AIR (0/1: once no land unit is left), STRAFE (once the
# defender has this many units or fewer; NO_LIMIT = no).  A win-probability threshold comes
# separately (NO_THRESHOLD: none), and where each state's units go on after a retreat:
# the first state of their stayers' block, or FULL_RETREAT (every unit withdraws).
RT_ACTIVE, RT_AFTER, RT_WHEN_LEFT, RT_ONLY_AIR, RT_STRAFE = range(5)
RETREAT_COLS = 5
NO_LIMIT = -1
NO_THRESHOLD = -1.0
FULL_RETREAT = -1
NO_STATE = -1  # "none": no stayers' state after a retreat; a state not in a sparse list

# Submerge choices of a side whose policy is POLICY_TABLE (RetreatTables.choices[a, d], bits):
# the attacker's at the start of a round in the pair (a, d) (C_A_); the defender's there after
# the attacker stayed (C_D_), or in the pair (a, d) the attacker's submerging led to this round
# (C_DA_, a the attacker's state after it): _DECIDES, the side decides there; _SUBMERGES, its
# subs submerge.  The same bits shifted by C_FIRST: at a battle's first round start, where no
# retreat was offered before (round_model.submerge_step's `first`).
C_A_DECIDES, C_A_SUBMERGES, C_D_DECIDES, C_D_SUBMERGES, C_DA_DECIDES, C_DA_SUBMERGES = (
    1, 2, 4, 8, 16, 32)
C_FIRST = 6
NO_CHOICES = np.zeros((1, 1), dtype=np.int64)
NO_AIR_VALUE = np.zeros((1, 1))  # RetreatTables.air_value without --retreat-air-loss
NO_AIR = np.zeros(1, dtype=np.int64)  # RetreatTables.has_air without it


class RetreatTables(NamedTuple):
    """The attacker's retreat policy (rules.should_retreat), the same for both solvers
    (compile.with_retreat builds it; CompiledBattle.retreat_tables), and the submerge choices
    of a side that submerges as a table says (POLICY_TABLE: solver.decide)."""

    policy: np.ndarray  # int64[RETREAT_COLS]: RT_* columns (NO_LIMIT: no such condition)
    below: float  # win-probability threshold of --retreat-below (NO_THRESHOLD: none)
    win_value: np.ndarray  # float64[Fa, Fd] (1 x 1 unless below): the chance if it fights on
    remainder: np.ndarray  # int64[Fa]: first state of the stayers' block, or FULL_RETREAT
    choices: np.ndarray = NO_CHOICES  # int64[Fa, Fd] (1 x 1 unless a table): C_* bits
    # --retreat-air-loss: the threshold (NO_THRESHOLD: none), air_value[a, d] the chance that
    # fighting on from (a, d) with no further retreat loses every aircraft (1 x 1 unless the
    # threshold), has_air[a] 1 where the attacker has an aircraft in the battle (length 1
    # unless the threshold)
    air_above: float = NO_THRESHOLD
    air_value: np.ndarray = NO_AIR_VALUE  # float64[Fa, Fd]
    has_air: np.ndarray = NO_AIR  # int64[Fa]


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
    # cells scanned or zeroed: Limits.work_rate of it about a second; 0: no limit)
    work_limit: int = 0
    # a battle that starts where it stands (compile.with_start): the rounds fought before its
    # start (the round counts go on from there), and the rounds fought from which the
    # attacker's retreat decisions are taken at a pair's entry (the end of the first round
    # the battle fights from its start: a decision at the start itself is already taken)
    start_rounds: int = 0
    retreat_from: int = 1


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
    # None where the battle has no retreat policy (its kernels then compile no retreat code)
    retreat: RetreatTables | None
    swing_offset: int  # McOut.swing_hist bin of a TUV swing of 0
    start_rounds: int  # rounds fought before the start (ExactBattle's)
    retreat_from: int  # rounds fought from which the attacker decides to retreat


class McOut(NamedTuple):
    """Monte Carlo counts, a row per chunk (C first; one chunk's row: without it)."""

    outcomes: np.ndarray  # int64[C, N_OUTCOMES]
    taken: np.ndarray  # int64[C]: territory taken
    a_final: np.ndarray  # int64[C, Fa]
    d_final: np.ndarray  # int64[C, Fd]
    rounds_hist: np.ndarray  # int64[C, R] (last bin: R-1 rounds or more)
    rounds_sum: np.ndarray  # int64[C]
    swing_hist: np.ndarray  # int64[C, K]: TUV swing in IPC + swing_offset
