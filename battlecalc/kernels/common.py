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
