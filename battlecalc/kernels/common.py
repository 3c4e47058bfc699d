"""Constants shared by the compiler, the kernels and the results: outcome codes and the column
layout of the compiled tables.  No code, no imports: cheap for everyone."""

# Outcome codes; the order is the order of the outcome arrays the kernels fill.
ATTACKER_WIN = 0
DEFENDER_WIN = 1
DRAW = 2
STALEMATE = 3
RETREAT = 4
N_OUTCOMES = 5
CONTINUE = -1

# A side's state is (block, s, a, n): the block (the force it started the battle with, e.g. one
# per outcome of round-1 AA fire) and the casualty steps taken in each loss category:
# s submarines (s > n_sub: the n_sub - (s - n_sub - 1) subs left have submerged),
# a aircraft, n everything else.  Categories a side does not need are empty.
# blocks int64[B, BLOCK_COLS]:
B_OFFSET, B_RADIX_S, B_RADIX_A, B_RADIX_N, B_ROW_S, B_ROW_A, B_ROW_N, B_NSUB = range(8)
BLOCK_COLS = 8
# states int64[F, STATE_COLS], per flat state:
S_BLOCK, S_S, S_A, S_N, S_ALIVE, S_HAS_LAND, S_UNITS, S_IPC, S_MAY_RETREAT = range(9)
STATE_COLS = 9
# rows int64[R, ROW_COLS], per category step (row = block's row offset + steps taken):
R_TOP, R_RANK, R_DESTROYER, R_DEFENCELESS, R_TRANSPORTS, R_LO, R_HI = range(7)
ROW_COLS = 7
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
# SIMPLE: 1 both sides are single walks with no restricted fire (the land fast path).
(RU_A_STRIKE, RU_D_STRIKE, RU_STRIKE_RETURN, RU_AIR_ALWAYS, RU_SUBMERGE, RU_LONE_RETREAT,
 RU_A_POLICY, RU_D_POLICY, RU_BOMBARD, RU_SIMPLE) = range(10)
RULE_COLS = 10
STRIKE_NEVER, STRIKE_ALWAYS, STRIKE_UNLESS_DESTROYER = 0, 1, 2
SUBMERGE_END_OF_ROUND, SUBMERGE_BEFORE_FIRE, SUBMERGE_NEVER = 0, 1, 2
POLICY_NEVER, POLICY_ONLY_SUBS, POLICY_FIRST_CHANCE = 0, 1, 2

# Retreat policy, int64[5]: ACTIVE (0/1), AFTER (retreat after this round; 0 = no), WHEN_LEFT
# (with this many attacking units or fewer; -1 = no), ONLY_AIR (0/1: once no land unit is
# left), STRAFE (once the defender has this many units or fewer; -1 = no).  A win-probability
# threshold comes separately (below < 0: none).
R_ACTIVE, R_AFTER, R_WHEN_LEFT, R_ONLY_AIR, R_STRAFE = range(5)
