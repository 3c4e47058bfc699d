"""Pieces shared by the Monte Carlo kernel and the exact solver."""

from numba import njit

# Outcome codes; the order is the order of the counts arrays the kernels fill.
ATTACKER_WIN = 0
DEFENDER_WIN = 1
DRAW = 2
STALEMATE = 3
RETREAT = 4
N_OUTCOMES = 5
CONTINUE = -1


@njit(cache=True)
def settle(a, d, a_end, d_end, a_alive, a_can_hit, a_defenceless,
           d_alive, d_can_hit, d_defenceless):
    """Apply the between-rounds checks to the state pair (a, d) and say whether it is over.

    a, d: flat state indices of attacker and defender; a_end, d_end: their 'nothing left'
    states.  The other arguments are the per-state boolean tables of each side.  A side left
    with defenceless units only loses them when the enemy still has units that can hit.
    Returns (outcome code or CONTINUE, a, d) with a, d moved to 'nothing left' where units
    were lost without dice.
    """
    if d_alive[d] and d_defenceless[d] and a_alive[a] and a_can_hit[a]:
        d = d_end
    if a_alive[a] and a_defenceless[a] and d_alive[d] and d_can_hit[d]:
        a = a_end
    attacker_left = a_alive[a]
    defender_left = d_alive[d]
    if not attacker_left and not defender_left:
        return DRAW, a, d
    if not defender_left:
        return ATTACKER_WIN, a, d
    if not attacker_left:
        return DEFENDER_WIN, a, d
    if not a_can_hit[a] and not d_can_hit[d]:
        return STALEMATE, a, d
    return CONTINUE, a, d


# Retreat policy vector (int64[5]): ACTIVE (0/1), AFTER (retreat after this round; 0 = no),
# WHEN_LEFT (retreat with this many attacking units or fewer; -1 = no), ONLY_AIR (0/1: retreat
# once no land unit is left), STRAFE (retreat once the defender has this many units or fewer;
# -1 = no).  A probability threshold comes separately (below < 0: no).
R_ACTIVE, R_AFTER, R_WHEN_LEFT, R_ONLY_AIR, R_STRAFE = 0, 1, 2, 3, 4


@njit(cache=True)
def should_retreat(a, d, rounds, retreat, below, a_units_left, d_units_left, a_may_retreat,
                   a_has_land, win_value):
    """Whether the attacker withdraws at the end of a round in the state pair (a, d).

    rounds: rounds fought so far; a_units_left[a], d_units_left[d]: units left that count;
    a_may_retreat[a]: everything the attacker has left may retreat (amphibious landing units
    never do); win_value[a, d]: probability that the attacker wins if it fights on (used when
    below >= 0).
    """
    if retreat[R_ACTIVE] == 0 or not a_may_retreat[a]:
        return False
    if retreat[R_AFTER] > 0 and rounds >= retreat[R_AFTER]:
        return True
    if retreat[R_WHEN_LEFT] >= 0 and a_units_left[a] <= retreat[R_WHEN_LEFT]:
        return True
    if retreat[R_ONLY_AIR] == 1 and not a_has_land[a]:
        return True
    if retreat[R_STRAFE] >= 0 and d_units_left[d] <= retreat[R_STRAFE]:
        return True
    if below >= 0.0 and win_value[a, d] < below:
        return True
    return False
