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
