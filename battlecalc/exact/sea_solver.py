"""Exact solver for sea battles, on the same rule functions as the Monte Carlo kernel.

Both sides' flat states only grow, so state pairs are swept in lexicographic order; the only
cycle ("nothing changes this round") is summed in closed form.  Round 1 is played once
explicitly first, because Revised subs may not submerge before it.
"""

import numpy as np
from numba import njit

from ..kernels.common import (
    ATTACKER_WIN,
    CONTINUE,
    R_ACTIVE,
    R_AFTER,
    RETREAT,
    should_retreat,
)
from ..kernels.sea import (
    AIR_ALWAYS,
    AIR_TOP,
    CAT_AIR,
    CAT_SHIP,
    CAT_SUB,
    LONE_RETREAT,
    MODE,
    MODE_UNLESS_DESTROYER,
    SHIP_DESTROYER,
    SHIP_TOP,
    SUB_TOP,
    SUBMERGE,
    SUBMERGE_BEFORE_FIRE,
    SUBMERGE_NEVER,
    assign,
    firing_state,
    flat,
    in_battle,
    lone_transports,
    settle_sea,
    strikes_first,
    submerge_step,
    subs_in_battle,
    unflat,
)


@njit(cache=True)
def _add(where, states, probs, count, f, p):
    """Accumulate probability p on flat state f in a small sparse list; returns the count."""
    i = where[f]
    if i < 0:
        where[f] = count
        states[count] = f
        probs[count] = p
        return count + 1
    probs[i] += p
    return count


@njit(cache=True)
def _clear(where, states, count):
    for i in range(count):
        where[states[i]] = -1


@njit(cache=True)
def _strike_dist(firer, f_pmf, f_s, fires, target, t_s, t_a, t_n, where, states, probs):
    """Law of the target's state after the firer's subs strike (sub hits only)."""
    count = 0
    if not fires:
        return _add(where, states, probs, count, flat(target, t_s, t_a, t_n), 1.0)
    for h in range(firer[SUB_TOP, f_s] + 1):
        p = f_pmf[CAT_SUB, f_s, h]
        if p == 0.0:
            continue
        s2, a2, n2 = assign(target, t_s, t_a, t_n, h, 0, 0, False)
        count = _add(where, states, probs, count, flat(target, s2, a2, n2), p)
    return count


@njit(cache=True)
def _general_dist(firer, f_pmf, f_s, f_a, f_n, subs_fire, air_on_subs, target, t_s, t_a, t_n,
                  where, states, probs):
    """Law of the target's state after the firer's general fire (sub, air and other hits)."""
    count = 0
    sub_top = 0
    if subs_fire and subs_in_battle(firer, f_s) > 0:
        sub_top = firer[SUB_TOP, f_s]
    air_top = firer[AIR_TOP, f_a]
    ship_top = firer[SHIP_TOP, f_n]
    for hs in range(sub_top + 1):
        ps = f_pmf[CAT_SUB, f_s, hs] if sub_top > 0 else 1.0
        if ps == 0.0:
            continue
        for ha in range(air_top + 1):
            pa = ps * f_pmf[CAT_AIR, f_a, ha]
            if pa == 0.0:
                continue
            for hg in range(ship_top + 1):
                p = pa * f_pmf[CAT_SHIP, f_n, hg]
                if p == 0.0:
                    continue
                s2, a2, n2 = assign(target, t_s, t_a, t_n, hs, ha, hg, air_on_subs)
                count = _add(where, states, probs, count, flat(target, s2, a2, n2), p)
    return count


@njit(cache=True)
def _round(att, a_pmf, a_s, a_a, a_n, dfn, d_pmf, d_s, d_a, d_n, rules, w, mass, self_f_a,
           self_f_d, scratch_a, scratch_d, eps, outcomes, a_final, d_final, joint_final, totals,
           dry, value):
    """Play one round from the given state pair with weight w.

    dry=True: only return the probability that the round leaves the pair unchanged.
    value of shape (Fa, Fd) (gathering): return the sum over the other next pairs of
    P(next pair) * value[next pair] (0 for a lone-transport retreat).  Otherwise add
    w * P(next pair) to mass (skipping the unchanged pair and anything below eps, whose mass
    is counted as pruned), record lone-transport retreats as terminal, and return the mass
    kept.
    """
    gather = value.shape[0] > 0
    wa1, sa1, pa1, wa2, sa2, pa2 = scratch_a
    wd1, sd1, pd1, wd2, sd2, pd2 = scratch_d
    air_always = rules[AIR_ALWAYS] == 1
    lone = rules[LONE_RETREAT] == 1 and lone_transports(att, a_s, a_a, a_n)
    v3 = rules[MODE] == MODE_UNLESS_DESTROYER
    a_strike, d_strike = strikes_first(att, a_s, a_n, dfn, d_s, d_n, rules)
    n_d1 = _strike_dist(att, a_pmf, a_s, a_strike, dfn, d_s, d_a, d_n, wd1, sd1, pd1)
    n_a1 = _strike_dist(dfn, d_pmf, d_s, d_strike, att, a_s, a_a, a_n, wa1, sa1, pa1)
    stay = 0.0
    kept = 0.0
    for i in range(n_a1):
        a1s, a1a, a1n = unflat(att, sa1[i])
        for j in range(n_d1):
            p1 = pa1[i] * pd1[j]
            if dry and (sa1[i] != self_f_a or sd1[j] != self_f_d):
                continue
            if not dry and not gather and w * p1 <= eps:
                continue
            d1s, d1a, d1n = unflat(dfn, sd1[j])
            fa_s, fa_a, fa_n = firing_state(att, a_s, a_a, a_n, a1s, a1a, a1n, rules)
            fd_s, fd_a, fd_n = firing_state(dfn, d_s, d_a, d_n, d1s, d1a, d1n, rules)
            a_air_subs = air_always or att[SHIP_DESTROYER, fa_n]
            d_air_subs = air_always or dfn[SHIP_DESTROYER, fd_n]
            n_d2 = _general_dist(att, a_pmf, fa_s, fa_a, fa_n, v3 and not a_strike, a_air_subs,
                                 dfn, d1s, d1a, d1n, wd2, sd2, pd2)
            n_a2 = _general_dist(dfn, d_pmf, fd_s, fd_a, fd_n, v3 and not d_strike, d_air_subs,
                                 att, a1s, a1a, a1n, wa2, sa2, pa2)
            for k in range(n_a2):
                a2 = sa2[k]
                a2s, a2a, a2n = unflat(att, a2)
                attacker_left = in_battle(att, a2s, a2a, a2n)
                for m in range(n_d2):
                    d2 = sd2[m]
                    p = p1 * pa2[k] * pd2[m]
                    if a2 == self_f_a and d2 == self_f_d and not lone:
                        stay += p
                        continue
                    if dry:
                        continue
                    if gather:
                        if not (lone and attacker_left):
                            kept += p * value[a2, d2]
                        continue
                    moved = w * p
                    if moved <= eps:
                        continue
                    kept += moved
                    if lone and attacker_left:
                        outcomes[RETREAT] += moved
                        a_final[a2] += moved
                        d_final[d2] += moved
                        if joint_final.shape[0] > 0:
                            joint_final[a2, d2] += moved
                    else:
                        mass[a2, d2] += moved
            _clear(wd2, sd2, n_d2)
            _clear(wa2, sa2, n_a2)
    _clear(wd1, sd1, n_d1)
    _clear(wa1, sa1, n_a1)
    if dry:
        return stay
    return kept


@njit(cache=True)
def _finish(outcome, m, af, df, outcomes, a_final, d_final, joint_final):
    outcomes[outcome] += m
    a_final[af] += m
    d_final[df] += m
    if joint_final.shape[0] > 0:
        joint_final[af, df] += m


@njit(cache=True)
def _enter(att, af, dfn, df, rules, rounds_played, retreat, a_units, d_units, a_may, below,
           win_value):
    """What happens to probability arriving at the start of a round in the pair (af, df).

    Returns (kind, af, df, outcome): kind 0 = a round is played from (af, df); 1 = the mass
    moves on to the returned later pair (transports lost without dice, subs submerged);
    2 = the battle ends there with `outcome` (attacker retreats included).
    """
    a_s, a_a, a_n0 = unflat(att, af)
    d_s, d_a, d_n0 = unflat(dfn, df)
    outcome, a_n, d_n = settle_sea(att, a_s, a_a, a_n0, dfn, d_s, d_a, d_n0, rules)
    if a_n != a_n0 or d_n != d_n0:
        return 1, flat(att, a_s, a_a, a_n), flat(dfn, d_s, d_a, d_n), outcome
    if outcome != CONTINUE:
        return 2, af, df, outcome
    if rounds_played > 0 and retreat[R_ACTIVE] == 1 and should_retreat(
            af, df, rounds_played, retreat, below, a_units, d_units, a_may, a_may, win_value):
        return 2, af, df, RETREAT
    timing = rules[SUBMERGE]
    if timing == SUBMERGE_BEFORE_FIRE or (timing != SUBMERGE_NEVER and rounds_played > 0):
        a_s2, d_s2 = submerge_step(att, a_s, a_a, a_n, dfn, d_s, d_a, d_n, rules)
        if a_s2 != a_s or d_s2 != d_s:
            return 1, flat(att, a_s2, a_a, a_n), flat(dfn, d_s2, d_a, d_n), outcome
    return 0, af, df, outcome


@njit(cache=True)
def solve_sea(att, a_pmf, dfn, d_pmf, rules, retreat, a_units, d_units, a_may, below,
              win_value, mass, scratch_a, scratch_d, eps, outcomes, a_final, d_final,
              joint_final, totals):
    """Exact law of a sea battle.

    att/dfn: side ints, a_pmf/d_pmf: their pmf tables (kernels/sea.py); retreat: the
    attacker's retreat vector (kernels.common.should_retreat) with a_units[Fa] / d_units[Fd]
    units in the battle per state, a_may[Fa] all True (no amphibious or aircraft-only
    conditions at sea), below and win_value[Fa, Fd] (`sea_win_values`, for --retreat-below);
    mass[Fa, Fd] zeroed work array;
    scratch_*: six arrays per side (int64 index maps filled with -1, int64 state lists,
    float64 probability lists, twice); eps: transitions moving less probability are skipped.
    Outputs: outcomes[5], a_final[Fa], d_final[Fd], joint_final[Fa, Fd] (0 x 0 to skip),
    totals[3] = expected rounds, pruned mass, 0.

    The first max(1, retreat after R) rounds are played one by one (Revised subs may not
    submerge before round 1, and a retreat policy may depend on the round); then the rest is
    swept once, the "nothing changes" self-loop summed in closed form.
    """
    n_a = mass.shape[0]
    n_d = mass.shape[1]
    no_value = np.zeros((0, 0))  # _round: spreading, not gathering
    mass[0, 0] = 1.0
    explicit = 1
    if retreat[R_ACTIVE] == 1:
        explicit = max(explicit, retreat[R_AFTER])
    rounds_played = 0
    while rounds_played < explicit:
        after = np.zeros((n_a, n_d))
        for af in range(n_a):
            for df in range(n_d):
                m = mass[af, df]
                if m == 0.0:
                    continue
                kind, af2, df2, outcome = _enter(att, af, dfn, df, rules, rounds_played,
                                                 retreat, a_units, d_units, a_may, below,
                                                 win_value)
                if kind == 1:
                    mass[af2, df2] += m
                    continue
                if kind == 2:
                    _finish(outcome, m, af, df, outcomes, a_final, d_final, joint_final)
                    continue
                a_s, a_a, a_n = unflat(att, af)
                d_s, d_a, d_n = unflat(dfn, df)
                totals[0] += m
                kept = _round(att, a_pmf, a_s, a_a, a_n, dfn, d_pmf, d_s, d_a, d_n, rules, m,
                              after, -1, -1, scratch_a, scratch_d, eps, outcomes, a_final,
                              d_final, joint_final, totals, False, no_value)
                totals[1] += m - kept
        mass[:, :] = after
        rounds_played += 1
    for af in range(n_a):
        for df in range(n_d):
            m = mass[af, df]
            if m == 0.0:
                continue
            kind, af2, df2, outcome = _enter(att, af, dfn, df, rules, rounds_played, retreat,
                                             a_units, d_units, a_may, below, win_value)
            if kind == 1:
                mass[af2, df2] += m
                continue
            if kind == 2:
                _finish(outcome, m, af, df, outcomes, a_final, d_final, joint_final)
                continue
            a_s, a_a, a_n = unflat(att, af)
            d_s, d_a, d_n = unflat(dfn, df)
            stay = _round(att, a_pmf, a_s, a_a, a_n, dfn, d_pmf, d_s, d_a, d_n, rules, 0.0,
                          mass, af, df, scratch_a, scratch_d, eps, outcomes, a_final, d_final,
                          joint_final, totals, True, no_value)
            w = m / (1.0 - stay)
            totals[0] += w
            kept = _round(att, a_pmf, a_s, a_a, a_n, dfn, d_pmf, d_s, d_a, d_n, rules, w,
                          mass, af, df, scratch_a, scratch_d, eps, outcomes, a_final, d_final,
                          joint_final, totals, False, no_value)
            totals[1] += m - kept



def scratch_for(side_states: int):
    """Scratch arrays for one side (see solve_sea)."""
    return (
        np.full(side_states, -1, dtype=np.int64), np.zeros(side_states, dtype=np.int64),
        np.zeros(side_states), np.full(side_states, -1, dtype=np.int64),
        np.zeros(side_states, dtype=np.int64), np.zeros(side_states),
    )



@njit(cache=True)
def sea_win_values(att, a_pmf, dfn, d_pmf, rules, retreat, a_units, d_units, a_may, below,
                   win_value, scratch_a, scratch_d):
    """Fill win_value[af, df]: the probability that the attacker wins if it fights on from
    the end-of-round pair (af, df), itself retreating later as the policy says (the policy
    must not depend on the round).  Swept backwards, so every successor is known first."""
    n_a, n_d = win_value.shape
    value = np.zeros((n_a, n_d))  # after the retreat decision at (af, df)
    no_value = np.zeros((0, 0))
    unused = np.zeros(1)
    no_threshold = -1.0
    for af in range(n_a - 1, -1, -1):
        for df in range(n_d - 1, -1, -1):
            kind, af2, df2, outcome = _enter(att, af, dfn, df, rules, 1, retreat, a_units,
                                             d_units, a_may, no_threshold, win_value)
            if kind == 2:
                v = 1.0 if outcome == ATTACKER_WIN else 0.0
                win_value[af, df] = v
                value[af, df] = v
                continue
            if kind == 1:
                fight_on = value[af2, df2]
            else:
                a_s, a_a, a_n = unflat(att, af)
                d_s, d_a, d_n = unflat(dfn, df)
                stay = _round(att, a_pmf, a_s, a_a, a_n, dfn, d_pmf, d_s, d_a, d_n, rules,
                              0.0, value, af, df, scratch_a, scratch_d, 0.0, unused, unused,
                              unused, no_value, unused, True, no_value)
                gathered = _round(att, a_pmf, a_s, a_a, a_n, dfn, d_pmf, d_s, d_a, d_n, rules,
                                  1.0, value, af, df, scratch_a, scratch_d, 0.0, unused,
                                  unused, unused, no_value, unused, False, value)
                fight_on = gathered / (1.0 - stay)
            win_value[af, df] = fight_on
            value[af, df] = 0.0 if (below >= 0.0 and fight_on < below) else fight_on
