"""The round model: rule functions shared by the Monte Carlo kernel and the exact solver.

A side is passed as its compiled arrays (compile.Side; columns in kernels/layout.py): its
table of states int64[F, STATE_COLS] (``st``), its category steps int64[R, ROW_COLS] (``rows``)
and their hit laws float64[R, W] (pmf for the exact solver, cdf for Monte Carlo).  A state is a
flat index into the table of states, which says everything the rules ask about it; a casualty
moves it by a fixed stride.  Rules arrive as int64[RULE_COLS] (compile.round_rules).

A round: submerge decisions (before firing, or at the end of the previous round), the
submarines' opening strike (hits on non-air units, casualties removed at once unless their
side may fire back), then general fire of everything else (submarines that did not strike
included; their hits never land on aircraft, and aircraft hit submarines only with a
destroyer on their side or where the edition allows it always); hits are assigned so that as
many land as the rules allow, then by the owner's order of losses (Decision 6).
"""

import numpy as np

from .jit import kernel
from .layout import (
    ATTACKER_WIN,
    C_A_SUBMERGES,
    C_D_SUBMERGES,
    C_DA_SUBMERGES,
    C_FIRST,
    CONTINUE,
    DEFENDER_WIN,
    DRAW,
    I_AIR,
    I_AIR_FIRE,
    I_DEFENCELESS,
    I_DESTROYER,
    I_IN_BATTLE,
    I_OTHER,
    I_OTHER_FIRE,
    I_SUBS,
    I_SUBS_FIRE,
    I_TRANSPORTS,
    NO_LIMIT,
    NO_RANK,
    NO_THRESHOLD,
    POLICY_FIRST_CHANCE,
    POLICY_NEVER,
    POLICY_TABLE,
    R_RANK,
    RT_ACTIVE,
    RT_AFTER,
    RT_ONLY_AIR,
    RT_STRAFE,
    RT_WHEN_LEFT,
    RU_A_POLICY,
    RU_A_STRIKE,
    RU_AIR_ALWAYS,
    RU_D_POLICY,
    RU_D_STRIKE,
    RU_LONE_RETREAT,
    RU_STRIKE_RETURN,
    RU_SUBMERGE,
    S_AIR,
    S_HAS_LAND,
    S_INFO,
    S_MAY_RETREAT,
    S_OTHER,
    S_ROW_A,
    S_ROW_N,
    S_ROW_S,
    S_STRIDE_A,
    S_STRIDE_S,
    S_SUBMERGE,
    S_SUBS,
    S_UNITS,
    STALEMATE,
    STRIKE_ALWAYS,
    STRIKE_NEVER,
    SUBMERGE_BEFORE_FIRE,
    SUBMERGE_NEVER,
)

_FIRES = I_SUBS_FIRE | I_AIR_FIRE | I_OTHER_FIRE
# Numba compiles a function once per combination of literal arguments, so a call passing True
# (or 0) and another passing a variable would compile the callee, and all it calls, twice.
# Kernels pass constants read from these arrays instead: values, not literals.
VALUES = np.arange(8, dtype=np.int64)
FLAGS = np.array([False, True])


@kernel(refs=False)
def can_hit(x_info, y_info, air_always):
    """Whether a side with state flags x_info can score a hit on anything a side with state
    flags y_info has in the battle (sub hits never land on aircraft; aircraft hit subs only
    with a destroyer on their side, or always where the edition says so)."""
    if x_info & I_SUBS_FIRE and y_info & (I_SUBS | I_OTHER):
        return True
    if x_info & I_AIR_FIRE:
        if y_info & (I_AIR | I_OTHER):
            return True
        if y_info & I_SUBS and (air_always or x_info & I_DESTROYER):
            return True
    return (x_info & I_OTHER_FIRE) != 0 and (y_info & I_IN_BATTLE) != 0


@kernel(refs=False)
def settle(ast, a, dst, d, air_always):
    """Between-rounds checks on the pair (a, d): units lost without dice, end, stalemate.

    A side that cannot hit anything loses its defenceless units (transports; AAA left alone)
    if the enemy can fire at all.  Returns (outcome or CONTINUE, a, d), the states moved past
    the defenceless units lost.
    """
    a_info = ast[a, S_INFO]
    d_info = dst[d, S_INFO]
    a_hit = can_hit(a_info, d_info, air_always)
    d_hit = can_hit(d_info, a_info, air_always)
    a_lose = (a_info & I_DEFENCELESS and not a_hit and d_info & I_IN_BATTLE
              and d_info & _FIRES)
    d_lose = (d_info & I_DEFENCELESS and not d_hit and a_info & I_IN_BATTLE
              and a_info & _FIRES)
    if a_lose or d_lose:
        if a_lose:
            a += ast[a, S_OTHER]
            a_info = ast[a, S_INFO]
        if d_lose:
            d += dst[d, S_OTHER]
            d_info = dst[d, S_INFO]
        a_hit = can_hit(a_info, d_info, air_always)
        d_hit = can_hit(d_info, a_info, air_always)
    if not a_info & I_IN_BATTLE:
        # (subs it submerged earlier are out of the battle, and its other units are lost: a
        # defeat, as TripleA ends it; a submerge that takes its last units out of the battle
        # ends it as a withdrawal at the submerge step: withdrew)
        return (DEFENDER_WIN if d_info & I_IN_BATTLE else DRAW), a, d
    if not d_info & I_IN_BATTLE:
        return ATTACKER_WIN, a, d
    if not a_hit and not d_hit:
        return STALEMATE, a, d
    return CONTINUE, a, d


@kernel(inline=True)
def casualty_state(yst, y, x_sub, x_air, x_other):
    """Side y's state after x_sub, x_air and x_other casualties (steps) in its three loss
    categories (flat index: one casualty in n is a step of 1, in s and a the state's strides)."""
    return y + x_sub * yst[y, S_STRIDE_S] + x_air * yst[y, S_STRIDE_A] + x_other


@kernel(refs=False)
def assign(yst, yr, y, h_sub, h_air, h_gen, air_on_subs):
    """Side y's state after taking the hits it received, by its order of losses.

    As many hits land as the targeting rules allow; within that, the lexicographically first
    set in the side's order of losses (a transversal matroid, so the greedy is exact: take the
    next casualty in order while the set stays matchable).  Sub hits (also shore bombardment)
    may land on subs and other units, air hits on aircraft and other units (and subs when
    air_on_subs), general hits on anything.  Hall's condition for x_sub, x_air, x_other
    casualties of the categories: a set with another unit in it, or with subs and aircraft,
    may take any hit, so it holds while there are no more casualties than hits and the subs
    and the aircraft each stay within the hits that may land on them: two caps.
    """
    total = h_sub + h_air + h_gen
    if total == 0:
        return y
    subs_left = yst[y, S_SUBS]
    air_left = yst[y, S_AIR]
    other_left = yst[y, S_OTHER]
    if subs_left == 0 and air_left == 0:  # every hit may take the next other unit
        return y + min(total, other_left)
    cap_sub = min(subs_left, h_gen + h_sub + (h_air if air_on_subs else 0))
    cap_air = min(air_left, h_gen + h_air)
    row_s, row_a, row_n = yst[y, S_ROW_S], yst[y, S_ROW_A], yst[y, S_ROW_N]
    x_sub = 0
    x_air = 0
    x_other = 0
    for _ in range(total):
        rank_s = yr[row_s + x_sub, R_RANK] if x_sub < cap_sub else NO_RANK
        rank_a = yr[row_a + x_air, R_RANK] if x_air < cap_air else NO_RANK
        rank_n = yr[row_n + x_other, R_RANK] if x_other < other_left else NO_RANK
        if rank_s < rank_a and rank_s < rank_n:
            x_sub += 1
        elif rank_a < rank_n:
            x_air += 1
        elif rank_n < NO_RANK:
            x_other += 1
        else:
            break
    return casualty_state(yst, y, x_sub, x_air, x_other)


@kernel(refs=False)
def withdrew(ast, a, a2):
    """Whether the attacker's submerge step (its state a before, a2 after) took the last of
    its units in the battle out of it: the battle ends there as the attacker's withdrawal
    (RETREAT; docs/rules.md: its submarines all submerged and nothing else was left).  Its
    other units lost after its subs submerged are a defeat or a draw (settle), as TripleA
    ends a battle with no attacking unit left in it."""
    return a2 != a and (ast[a2, S_INFO] & I_IN_BATTLE) == 0


@kernel(inline=True)
def submerges_before_fire(rules, rounds_played):
    """Whether the submerge decisions come before this round's fire, after rounds_played rounds:
    every round where the edition submerges before firing, from the second round on where it
    submerges at the end of a round (the decision at the end of one is taken at the start of
    the next), never where submarines may not submerge."""
    timing = rules[RU_SUBMERGE]
    return timing == SUBMERGE_BEFORE_FIRE or (timing != SUBMERGE_NEVER and rounds_played > 0)


@kernel(refs=False)
def submerge_step(ast, a, dst, d, rules, choices, first):
    """Submerge decisions at the start of a round, attacker first, then defender (knowing the
    attacker's): never while an enemy destroyer is present.  A side of POLICY_TABLE submerges
    as choices says (layout.C_* bits; first: the battle's first round start, where no retreat
    was offered).  Returns the new states."""
    shift = C_FIRST if first else 0
    a2 = a
    says = False
    if rules[RU_A_POLICY] == POLICY_TABLE:
        says = ((choices[a, d] >> shift) & C_A_SUBMERGES) != 0
    if _wants_submerge(ast, a, rules[RU_A_POLICY], dst[d, S_INFO] & I_DESTROYER, says):
        a2 = a + ast[a, S_SUBMERGE]
    if rules[RU_D_POLICY] == POLICY_TABLE:
        bit = C_D_SUBMERGES if a2 == a else C_DA_SUBMERGES
        says = ((choices[a2, d] >> shift) & bit) != 0
    if _wants_submerge(dst, d, rules[RU_D_POLICY], ast[a, S_INFO] & I_DESTROYER, says):
        d += dst[d, S_SUBMERGE]
    return a2, d


@kernel(refs=False)
def _wants_submerge(xst, x, policy, enemy_destroyer, says):
    if policy == POLICY_NEVER or enemy_destroyer or xst[x, S_SUBMERGE] == 0:
        return False
    if policy == POLICY_TABLE:
        return says
    return policy == POLICY_FIRST_CHANCE or (xst[x, S_AIR] == 0 and xst[x, S_OTHER] == 0)


@kernel(refs=False)
def lone_transports(ast, a, rules):
    """The attacker has only transports in the battle and must retreat after one volley."""
    return (rules[RU_LONE_RETREAT] == 1 and ast[a, S_SUBS] == 0 and ast[a, S_AIR] == 0
            and (ast[a, S_INFO] & I_TRANSPORTS) != 0)


@kernel(refs=False)
def strikes(ast, a, dst, d, rules):
    """Whether each side's submarines fire in the opening step this round."""
    return (_strikes(rules[RU_A_STRIKE], ast[a, S_SUBS], dst[d, S_INFO] & I_DESTROYER),
            _strikes(rules[RU_D_STRIKE], dst[d, S_SUBS], ast[a, S_INFO] & I_DESTROYER))


@kernel(refs=False)
def _strikes(mode, subs, enemy_destroyer):
    if mode == STRIKE_NEVER or subs == 0:
        return False
    return mode == STRIKE_ALWAYS or not enemy_destroyer


@kernel(refs=False)
def fires_back(xst, x, rules):
    """The side's strike casualties fire in general fire (Revised: a side with a destroyer)."""
    return rules[RU_STRIKE_RETURN] == 1 and (xst[x, S_INFO] & I_DESTROYER) != 0


@kernel(refs=False)
def air_on_subs(xst, x, rules):
    """The side's aircraft may hit submarines this round."""
    return rules[RU_AIR_ALWAYS] == 1 or (xst[x, S_INFO] & I_DESTROYER) != 0


@kernel(refs=False)
def should_retreat(a, d, rounds, retreat, ast, dst):
    """Whether the attacker withdraws at the end of a round in the state pair (a, d).

    rounds: rounds fought so far; retreat: layout.RetreatTables, its policy (RT_* columns,
    kernels/layout.py), its win-probability threshold `below` against win_value[a, d], the
    attacker's chance if it fights on, and its air-loss threshold `air_above` against
    air_value[a, d], the chance that fighting on with no further retreat loses every aircraft
    (where the attacker has an aircraft left, has_air[a]).
    """
    policy = retreat.policy
    if policy[RT_ACTIVE] == 0 or ast[a, S_MAY_RETREAT] == 0:
        return False
    if policy[RT_AFTER] > 0 and rounds >= policy[RT_AFTER]:
        return True
    if policy[RT_WHEN_LEFT] != NO_LIMIT and ast[a, S_UNITS] <= policy[RT_WHEN_LEFT]:
        return True
    if policy[RT_ONLY_AIR] == 1 and ast[a, S_HAS_LAND] == 0:
        return True
    if policy[RT_STRAFE] != NO_LIMIT and dst[d, S_UNITS] <= policy[RT_STRAFE]:
        return True
    if (retreat.air_above != NO_THRESHOLD and retreat.has_air[a] == 1
            and retreat.air_value[a, d] > retreat.air_above):
        return True
    return retreat.below != NO_THRESHOLD and retreat.win_value[a, d] < retreat.below


@kernel(refs=False)
def takes(outcome, a, ast):
    return outcome == ATTACKER_WIN and ast[a, S_HAS_LAND] == 1


@kernel(refs=False)
def in_battle(xst, x):
    return (xst[x, S_INFO] & I_IN_BATTLE) != 0


@kernel(refs=False)
def fire_groups(s_strength, a_strength, n_strength, y_info, air_subs):
    """Low luck: a side's general fire as groups of units firing at the same enemy units,
    each group's strength rolled as one (sure hits per full die, one die for the rest).

    Strengths of the side's subs, aircraft and other units; y_info: the enemy's state flags;
    air_subs: its aircraft may hit subs.  Returns the strengths of the groups whose hits are
    sub hits, air hits and general hits.  Subs always roll on their own: they are first-strike
    units, which fire in a step of their own even when an enemy destroyer cancels the surprise
    strike (TripleA's OffensiveFirstStrike / DefensiveFirstStrike, state REGULAR), whatever the
    enemy has present.  Aircraft join the general group when they may hit every enemy unit
    present (TripleA's target groups).
    """
    present = y_info & I_IN_BATTLE
    air_targets = present & (I_AIR | I_OTHER | (I_SUBS if air_subs else 0))
    if air_targets == present:
        n_strength += a_strength
        a_strength = 0
    return s_strength, a_strength, n_strength
