"""Sea-battle rules as small numba functions, shared by the Monte Carlo kernel and the exact
solver, plus the Monte Carlo kernel itself.

A side is passed as two arrays built by battlecalc.sea.side_arrays (few arrays, because
numba passes every array argument by value and these functions are called in the hot loop):

  ints[10, M] int64, rows: META (nS, LA, LN in columns 0..2), SUB_TOP, AIR_TOP, SHIP_TOP
      (largest hit count, by steps taken in the category), SUB_RANK, AIR_RANK, SHIP_RANK
      (position in the order of losses of the category's next casualty), SHIP_DESTROYER,
      SHIP_DEFENCELESS, SHIP_ALL_TRANSPORTS (0/1 by ship steps taken);
  table[3, M, W] float64: per category (CAT_SUB, CAT_AIR, CAT_SHIP) and steps taken, the
      hit distribution (pmf, exact solver) or its running sum (cdf, Monte Carlo).

A side's state is (si, a, n): si = subs lost while in the battle (0..nS) or nS+1+s once the
remaining subs submerged; a, n = steps taken in the aircraft and ship categories.

Rules arrive as int64[6]: MODE (0: every sub fires in an opening step every round and a side
with a destroyer lets its sub-hit casualties fire back, Revised; 1: a side's subs strike first
only if the enemy has no destroyer, 1942 2E), AIR_ALWAYS (1: aircraft may always hit subs),
SUBMERGE (0: end of round, 1: before firing, 2: never), LONE_RETREAT (1: an attacker left with
transports only takes one volley, then retreats), ATT_POLICY, DEF_POLICY (submerge policy:
0 never, 1 when only subs are left, 2 at the first chance).
"""

import numpy as np
from numba import njit, prange

from .common import (
    ATTACKER_WIN,
    CONTINUE,
    DEFENDER_WIN,
    DRAW,
    RETREAT,
    STALEMATE,
    should_retreat,
)
from .montecarlo import _next_uniform, record_trial

META, SUB_TOP, AIR_TOP, SHIP_TOP, SUB_RANK, AIR_RANK, SHIP_RANK = 0, 1, 2, 3, 4, 5, 6
SHIP_DESTROYER, SHIP_DEFENCELESS, SHIP_ALL_TRANSPORTS = 7, 8, 9
CAT_SUB, CAT_AIR, CAT_SHIP = 0, 1, 2

MODE, AIR_ALWAYS, SUBMERGE, LONE_RETREAT, ATT_POLICY, DEF_POLICY = 0, 1, 2, 3, 4, 5
MODE_ALWAYS, MODE_UNLESS_DESTROYER = 0, 1
SUBMERGE_END_OF_ROUND, SUBMERGE_BEFORE_FIRE, SUBMERGE_NEVER = 0, 1, 2
POLICY_NEVER, POLICY_ONLY_SUBS, POLICY_FIRST_CHANCE = 0, 1, 2

_NONE = np.iinfo(np.int64).max


@njit(cache=True)
def flat(side, si, a, n):
    return (si * (side[META, 1] + 1) + a) * (side[META, 2] + 1) + n


@njit(cache=True)
def unflat(side, f):
    n = f % (side[META, 2] + 1)
    rest = f // (side[META, 2] + 1)
    return rest // (side[META, 1] + 1), rest % (side[META, 1] + 1), n


@njit(cache=True)
def subs_in_battle(side, si):
    """Number of the side's subs still in the battle (0 once they submerged)."""
    n_sub = side[META, 0]
    if si > n_sub:
        return 0
    return n_sub - si


@njit(cache=True)
def in_battle(side, si, a, n):
    return subs_in_battle(side, si) > 0 or a < side[META, 1] or n < side[META, 2]


@njit(cache=True)
def submerged(side, si):
    return si > side[META, 0]


@njit(cache=True)
def can_hit(x, xs, xa, xn, y, ys, ya, yn, air_always):
    """Whether side x, in state (xs, xa, xn), can score a hit on anything y has in the battle."""
    y_subs = subs_in_battle(y, ys) > 0
    y_air = ya < y[META, 1]
    y_ships = yn < y[META, 2]
    if subs_in_battle(x, xs) > 0 and x[SUB_TOP, xs] > 0 and (y_subs or y_ships):
        return True
    if x[AIR_TOP, xa] > 0:
        if y_air or y_ships:
            return True
        if y_subs and (air_always or x[SHIP_DESTROYER, xn]):
            return True
    if x[SHIP_TOP, xn] > 0 and (y_subs or y_air or y_ships):
        return True
    return False


@njit(cache=True)
def _feasible(x_sub, x_air, x_ship, h_sub, h_air, h_gen, air_on_subs):
    """Hall's condition: the chosen casualties per category can each take a distinct hit.

    Sub hits may land on subs and ships, air hits on aircraft and ships (and subs when
    air_on_subs), other hits on anything.
    """
    for mask in range(1, 8):
        has_s = (mask & 1) != 0
        has_a = (mask & 2) != 0
        has_n = (mask & 4) != 0
        demand = 0
        if has_s:
            demand += x_sub
        if has_a:
            demand += x_air
        if has_n:
            demand += x_ship
        supply = h_gen
        if has_s or has_n:
            supply += h_sub
        if has_a or has_n or (has_s and air_on_subs):
            supply += h_air
        if demand > supply:
            return False
    return True


@njit(cache=True)
def assign(y, ys, ya, yn, h_sub, h_air, h_gen, air_on_subs):
    """Casualties of side y for the hits it received, by its order of losses.

    As many hits land as the targeting rules allow; within that, the lexicographically first
    set in the side's order of losses (a transversal matroid, so the greedy is exact: take the
    next casualty in order if the set stays matchable; a category that cannot take one more
    cannot take any).  Returns y's new (si, a, n).
    """
    total = h_sub + h_air + h_gen
    if total == 0:
        return ys, ya, yn
    n_air = y[META, 1]
    n_ship = y[META, 2]
    subs_left = subs_in_battle(y, ys)
    x_sub = 0
    x_air = 0
    x_ship = 0
    blocked_sub = subs_left == 0
    blocked_air = ya >= n_air
    blocked_ship = yn >= n_ship
    # every hit may land anywhere left: no matching check needed
    free = (h_sub == 0 or blocked_air) and (h_air == 0 or air_on_subs or blocked_sub)
    while x_sub + x_air + x_ship < total:
        best = -1
        best_rank = _NONE
        if not blocked_sub and x_sub < subs_left:
            rank = y[SUB_RANK, ys + x_sub]
            if rank < best_rank:
                best, best_rank = 0, rank
        if not blocked_air and ya + x_air < n_air:
            rank = y[AIR_RANK, ya + x_air]
            if rank < best_rank:
                best, best_rank = 1, rank
        if not blocked_ship and yn + x_ship < n_ship:
            rank = y[SHIP_RANK, yn + x_ship]
            if rank < best_rank:
                best, best_rank = 2, rank
        if best < 0:
            break
        if best == 0:
            if free or _feasible(x_sub + 1, x_air, x_ship, h_sub, h_air, h_gen, air_on_subs):
                x_sub += 1
            else:
                blocked_sub = True
        elif best == 1:
            if free or _feasible(x_sub, x_air + 1, x_ship, h_sub, h_air, h_gen, air_on_subs):
                x_air += 1
            else:
                blocked_air = True
        else:
            if free or _feasible(x_sub, x_air, x_ship + 1, h_sub, h_air, h_gen, air_on_subs):
                x_ship += 1
            else:
                blocked_ship = True
    return ys + x_sub, ya + x_air, yn + x_ship


@njit(cache=True)
def wants_submerge(x, xs, xa, xn, policy, enemy_destroyer):
    """Whether side x submerges all its subs now (never while an enemy destroyer is present)."""
    if policy == POLICY_NEVER or enemy_destroyer or subs_in_battle(x, xs) == 0:
        return False
    if policy == POLICY_FIRST_CHANCE:
        return True
    return xa >= x[META, 1] and xn >= x[META, 2]


@njit(cache=True)
def do_submerge(x, xs):
    return x[META, 0] + 1 + xs


@njit(cache=True)
def submerge_step(att, a_s, a_a, a_n, dfn, d_s, d_a, d_n, rules):
    """Submerge decisions at the start of a round: attacker first, then defender."""
    if wants_submerge(att, a_s, a_a, a_n, rules[ATT_POLICY], dfn[SHIP_DESTROYER, d_n]):
        a_s = do_submerge(att, a_s)
    if wants_submerge(dfn, d_s, d_a, d_n, rules[DEF_POLICY], att[SHIP_DESTROYER, a_n]):
        d_s = do_submerge(dfn, d_s)
    return a_s, d_s


@njit(cache=True)
def settle_sea(att, a_s, a_a, a_n, dfn, d_s, d_a, d_n, rules):
    """Between-rounds checks: defenceless transports, end of battle, stalemate.

    Returns (outcome or CONTINUE, a_n, d_n) with transports removed where lost without dice.
    """
    air_always = rules[AIR_ALWAYS] == 1
    a_hit = can_hit(att, a_s, a_a, a_n, dfn, d_s, d_a, d_n, air_always)
    d_hit = can_hit(dfn, d_s, d_a, d_n, att, a_s, a_a, a_n, air_always)
    # a side that cannot hit anything loses its defenceless transports if the enemy can
    # hit ships at all (every unit with a value can target a ship)
    a_lose = att[SHIP_DEFENCELESS, a_n] and not a_hit and in_battle(dfn, d_s, d_a, d_n) and (
        _any_fire(dfn, d_s, d_a, d_n))
    d_lose = dfn[SHIP_DEFENCELESS, d_n] and not d_hit and in_battle(att, a_s, a_a, a_n) and (
        _any_fire(att, a_s, a_a, a_n))
    if a_lose:
        a_n = att[META, 2]
    if d_lose:
        d_n = dfn[META, 2]
    a_in = in_battle(att, a_s, a_a, a_n)
    d_in = in_battle(dfn, d_s, d_a, d_n)
    if not a_in:
        if submerged(att, a_s):
            return RETREAT, a_n, d_n
        if d_in:
            return DEFENDER_WIN, a_n, d_n
        return DRAW, a_n, d_n
    if not d_in:
        return ATTACKER_WIN, a_n, d_n
    if a_lose or d_lose:
        a_hit = can_hit(att, a_s, a_a, a_n, dfn, d_s, d_a, d_n, air_always)
        d_hit = can_hit(dfn, d_s, d_a, d_n, att, a_s, a_a, a_n, air_always)
    if not a_hit and not d_hit:
        return STALEMATE, a_n, d_n
    return CONTINUE, a_n, d_n


@njit(cache=True)
def _any_fire(x, xs, xa, xn):
    return ((subs_in_battle(x, xs) > 0 and x[SUB_TOP, xs] > 0) or x[AIR_TOP, xa] > 0
            or x[SHIP_TOP, xn] > 0)


@njit(cache=True)
def lone_transports(att, a_s, a_a, a_n):
    """The attacker has only transports in the battle (Revised: one volley, then retreat)."""
    return subs_in_battle(att, a_s) == 0 and a_a >= att[META, 1] and att[SHIP_ALL_TRANSPORTS, a_n]


@njit(cache=True)
def strikes_first(att, a_s, a_n, dfn, d_s, d_n, rules):
    """Whether each side's submarines fire in the opening step this round: always (Revised),
    or only when the enemy has no destroyer (1942 2E)."""
    a_strike = subs_in_battle(att, a_s) > 0
    d_strike = subs_in_battle(dfn, d_s) > 0
    if rules[MODE] == MODE_UNLESS_DESTROYER:
        a_strike = a_strike and not dfn[SHIP_DESTROYER, d_n]
        d_strike = d_strike and not att[SHIP_DESTROYER, a_n]
    return a_strike, d_strike


@njit(cache=True)
def firing_state(x, xs, xa, xn, x1s, x1a, x1n, rules):
    """The side's units that take part in general fire, as a state: those left after the
    opening step, or in Revised, for a side with a destroyer, also its sub-hit casualties."""
    if rules[MODE] == MODE_ALWAYS and x[SHIP_DESTROYER, xn]:
        return xs, xa, xn
    return x1s, x1a, x1n


@njit(cache=True)
def _sample(cdf, category, row, top, state):
    """Hits of one category of a side: cdf[category, row] sampled with one uniform."""
    if top == 0:
        return 0
    u = _next_uniform(state)
    lo = 0
    hi = top
    while lo < hi:
        mid = (lo + hi) >> 1
        if u < cdf[category, row, mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


@njit(cache=True)
def _play_trial(att, a_cdf, dfn, d_cdf, rules, retreat, a_units, d_units, a_may, below,
                win_value, state):
    """One sea battle; returns (outcome, attacker flat state, defender flat state, rounds)."""
    a_s = 0
    a_a = 0
    a_n = 0
    d_s = 0
    d_a = 0
    d_n = 0
    rounds = 0
    air_always = rules[AIR_ALWAYS] == 1
    outcome, a_n, d_n = settle_sea(att, a_s, a_a, a_n, dfn, d_s, d_a, d_n, rules)
    while outcome == CONTINUE:
        timing = rules[SUBMERGE]
        if timing == SUBMERGE_BEFORE_FIRE or (timing == SUBMERGE_END_OF_ROUND and rounds > 0):
            a_s, d_s = submerge_step(att, a_s, a_a, a_n, dfn, d_s, d_a, d_n, rules)
            outcome, a_n, d_n = settle_sea(att, a_s, a_a, a_n, dfn, d_s, d_a, d_n, rules)
            if outcome != CONTINUE:
                break
        rounds += 1
        lone = rules[LONE_RETREAT] == 1 and lone_transports(att, a_s, a_a, a_n)
        a_strike, d_strike = strikes_first(att, a_s, a_n, dfn, d_s, d_n, rules)
        h_ad = _sample(a_cdf, CAT_SUB, a_s, att[SUB_TOP, a_s], state) if a_strike else 0
        h_da = _sample(d_cdf, CAT_SUB, d_s, dfn[SUB_TOP, d_s], state) if d_strike else 0
        d1s, d1a, d1n = assign(dfn, d_s, d_a, d_n, h_ad, 0, 0, False)
        a1s, a1a, a1n = assign(att, a_s, a_a, a_n, h_da, 0, 0, False)
        fa_s, fa_a, fa_n = firing_state(att, a_s, a_a, a_n, a1s, a1a, a1n, rules)
        fd_s, fd_a, fd_n = firing_state(dfn, d_s, d_a, d_n, d1s, d1a, d1n, rules)
        # 1942 2E subs that did not strike fire with everyone (still at ships only); Revised
        # subs fire in the opening step only
        v3 = rules[MODE] == MODE_UNLESS_DESTROYER
        a_subs_fire = v3 and not a_strike
        d_subs_fire = v3 and not d_strike
        hs_a = 0
        if a_subs_fire and subs_in_battle(att, fa_s) > 0:
            hs_a = _sample(a_cdf, CAT_SUB, fa_s, att[SUB_TOP, fa_s], state)
        ha_a = _sample(a_cdf, CAT_AIR, fa_a, att[AIR_TOP, fa_a], state)
        hg_a = _sample(a_cdf, CAT_SHIP, fa_n, att[SHIP_TOP, fa_n], state)
        hs_d = 0
        if d_subs_fire and subs_in_battle(dfn, fd_s) > 0:
            hs_d = _sample(d_cdf, CAT_SUB, fd_s, dfn[SUB_TOP, fd_s], state)
        ha_d = _sample(d_cdf, CAT_AIR, fd_a, dfn[AIR_TOP, fd_a], state)
        hg_d = _sample(d_cdf, CAT_SHIP, fd_n, dfn[SHIP_TOP, fd_n], state)
        a_air_subs = air_always or att[SHIP_DESTROYER, fa_n]
        d_air_subs = air_always or dfn[SHIP_DESTROYER, fd_n]
        d_s, d_a, d_n = assign(dfn, d1s, d1a, d1n, hs_a, ha_a, hg_a, a_air_subs)
        a_s, a_a, a_n = assign(att, a1s, a1a, a1n, hs_d, ha_d, hg_d, d_air_subs)
        if lone and in_battle(att, a_s, a_a, a_n):
            outcome = RETREAT
            break
        outcome, a_n, d_n = settle_sea(att, a_s, a_a, a_n, dfn, d_s, d_a, d_n, rules)
        if outcome == CONTINUE and retreat[0] == 1:
            a = flat(att, a_s, a_a, a_n)
            d = flat(dfn, d_s, d_a, d_n)
            if should_retreat(a, d, rounds, retreat, below, a_units, d_units, a_may, a_may,
                              win_value):
                outcome = RETREAT
    return outcome, flat(att, a_s, a_a, a_n), flat(dfn, d_s, d_a, d_n), rounds


@njit(parallel=True, cache=True)
def simulate_sea_chunks(seeds, chunk_trials, att, a_cdf, dfn, d_cdf, rules, retreat, a_units,
                        d_units, a_may, below, win_value, a_ipc, d_ipc,
                        outcomes, a_final, d_final, rounds_hist, rounds_sum,
                        swing_sum, swing_sq_sum):
    """Monte Carlo sea battles, chunk c writing only row c of each output.

    seeds[C] uint64 stream seeds, chunk_trials[C] trials per chunk; att/dfn side ints and
    a_cdf/d_cdf their cdf tables (module docstring); retreat, a_units, d_units, a_may, below,
    win_value: the attacker's retreat policy (see exact.sea_solver.solve_sea); rules
    int64[6] (module docstring); a_ipc/d_ipc[F] IPC lost per flat state.  Outputs as in
    kernels.montecarlo.simulate_chunks.
    """
    for c in prange(seeds.shape[0]):
        state = np.empty(1, dtype=np.uint64)
        state[0] = seeds[c]
        for _ in range(chunk_trials[c]):
            outcome, a, d, rounds = _play_trial(att, a_cdf, dfn, d_cdf, rules, retreat, a_units,
                                                d_units, a_may, below, win_value, state)
            record_trial(c, outcome, a, d, rounds, a_ipc, d_ipc, outcomes, a_final, d_final,
                         rounds_hist, rounds_sum, swing_sum, swing_sq_sum)

