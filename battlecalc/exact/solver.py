"""Exact solver kernel.

A side's state only moves forward (casualty steps are never undone), so the states of one
attacker profile x the defender's states can be processed in order of (attacker steps,
defender steps): all of a state's predecessors come before it.  The only cycle is the
self-loop "neither side scores a hit", handled by dividing by (1 - q).
"""

import numpy as np
from numba import njit, prange

from ..kernels.common import (
    ATTACKER_WIN,
    CONTINUE,
    R_ACTIVE,
    R_AFTER,
    RETREAT,
    settle,
    should_retreat,
)


@njit(cache=True)
def _spread(mass, k, d, length, d_end, w, a_row, a_cum_row, a_lo, a_hi, d_row, d_lo, d_hi,
            eps):
    """Add w * P(attacker scores ha) * P(defender scores hd) to mass[k + hd, d + ha].

    Rows by defender hits, a contiguous (vectorisable) run over the attacker's kept hit counts
    [a_lo, a_hi] in each row; attacker hits past the defender's last state all land on d_end,
    summed from the running sums a_cum_row.  Rows of weight <= eps are skipped.  Returns the
    probability moved; the (0, 0) term lands on mass[k, d] itself, which the caller never
    reads again, and is not counted as moved.
    """
    split = d_end - d  # from this many attacker hits on, the defender is wiped out
    top = min(a_hi, split - 1)
    tail = 0.0
    if a_hi >= split:
        start = max(a_lo, split)
        tail = a_cum_row[a_hi] - (a_cum_row[start - 1] if start > 0 else 0.0)
    row_mass = a_cum_row[a_hi] - (a_cum_row[a_lo - 1] if a_lo > 0 else 0.0)
    kept = 0.0
    for hd in range(d_lo, d_hi + 1):
        wd = w * d_row[hd]
        if wd <= eps:
            continue
        row = mass[min(k + hd, length)]
        for ha in range(a_lo, top + 1):
            row[d + ha] += wd * a_row[ha]
        row[d_end] += wd * tail
        kept += wd * row_mass
        if hd == 0 and a_lo == 0:
            kept -= wd * a_row[0]  # "nobody hits": stays, not moved
    return kept


@njit(cache=True)
def _bombarded_first_round(prob, offset, length, d_end, a_pmf, a_lo, a_hi, a_can_hit, a_alive,
                           a_defenceless, d_pmf, d_lo, d_hi, d_can_hit, d_alive,
                           d_defenceless, bombard_pmf, land_prefix, mass, totals, eps):
    """Round 1 of a profile when bombardment hits join the attacker's fire (casualties fire
    back): played explicitly, since later rounds from the same state have no bombardment."""
    outcome, a2, d2 = settle(offset, 0, offset + length, d_end, a_alive, a_can_hit,
                             a_defenceless, d_alive, d_can_hit, d_defenceless)
    if outcome != CONTINUE or a2 != offset or d2 != 0:
        mass[0, 0] += prob
        return
    totals[0] += prob
    kept = 0.0
    for ha in range(a_lo[offset], a_hi[offset] + 1):
        for hb in range(bombard_pmf.shape[0]):
            wab = prob * a_pmf[offset, ha] * bombard_pmf[hb]
            if wab <= eps:
                continue
            dn = min(ha + min(hb, land_prefix), d_end)
            for hd in range(d_lo[0], d_hi[0] + 1):
                moved = wab * d_pmf[0, hd]
                if moved <= eps:
                    continue
                kept += moved
                mass[min(hd, length), dn] += moved
    totals[1] += prob - kept


@njit(parallel=True, cache=True)
def solve(a_profile_prob, a_offset, a_length, a_pmf, a_cum, a_lo, a_hi, a_can_hit, a_alive,
          a_defenceless, a_has_land,
          d_pmf, d_lo, d_hi, d_can_hit, d_alive, d_defenceless, d_length,
          bombard_pmf, bombard_mode, land_prefix,
          retreat, below, a_units_left, d_units_left, a_may_retreat, win_value,
          remainder_start, a_profile_of, transfer,
          outcomes, a_final, d_final, joint_final, totals, rounds_hist, eps, state_eps):
    """Propagate probability mass from each attacker profile's start to the end states.

    *_pmf[S, H+1]: hit distributions per flat state; *_lo/*_hi[S]: the hit counts whose
    probability is kept (entries outside are pruned and their mass reported); a_cum: running
    sums of a_pmf.  Shore bombardment (see kernels.montecarlo.simulate_chunks): bombard_pmf[B]
    law of its hits, bombard_mode, land_prefix.  Retreat: kernels.common.should_retreat's
    arguments; with a retreat policy the first max(AFTER, 1) rounds are played round by round,
    since the policy may depend on the round and never applies before round 1.  Outputs:
    outcomes[5] probabilities, a_final[Sa] / d_final[Sd] probabilities of the final states,
    joint_final[Sa, Sd] (may be 0x0 to skip the joint distribution), totals[3] = expected
    rounds, pruned mass, probability of taking the territory; rounds_hist[R+1]: with R > 0
    the first R rounds are played one by one and rounds_hist[r] gets the probability that the
    battle lasts r rounds (rounds_hist[R]: R or more).  eps: a row of transitions that
    would move less than eps probability is skipped; state_eps: a non-final state holding less
    probability is not played on (both counted as pruned).
    """
    n_profiles = a_profile_prob.shape[0]
    outcomes_p = np.zeros((n_profiles, outcomes.shape[0]))
    d_final_p = np.zeros((n_profiles, d_final.shape[0]))
    totals_p = np.zeros((n_profiles, totals.shape[0]))
    rounds_p = np.zeros((n_profiles, rounds_hist.shape[0]))
    # profiles are independent once round-1 AA fire is decided: one per thread
    no_init = np.zeros(0)
    # phase 2 (partial retreats of amphibious assaults): profiles of probability 0 start from
    # the mass that phase 1 sent them
    for phase in range(2):
        for p in prange(n_profiles):
            if (a_profile_prob[p] > 0.0) != (phase == 0):
                continue
            init = no_init if phase == 0 else transfer[p]
            if phase == 1 and not init.any():
                continue
            _solve_profile(p, a_profile_prob, a_offset, a_length, a_pmf, a_cum, a_lo, a_hi,
                           a_can_hit, a_alive, a_defenceless, a_has_land, d_pmf, d_lo, d_hi,
                           d_can_hit, d_alive, d_defenceless, d_length, bombard_pmf,
                           bombard_mode, land_prefix, retreat, below, a_units_left,
                           d_units_left, a_may_retreat, win_value, remainder_start,
                           a_profile_of, transfer, init, outcomes_p[p], a_final, d_final_p[p],
                           joint_final, totals_p[p], rounds_p[p], eps, state_eps)
    for p in range(n_profiles):  # fixed order: the same sums whatever the thread count
        outcomes += outcomes_p[p]
        d_final += d_final_p[p]
        totals += totals_p[p]
        rounds_hist += rounds_p[p]


@njit(cache=True)
def solve_serial(a_profile_prob, a_offset, a_length, a_pmf, a_cum, a_lo, a_hi, a_can_hit,
                 a_alive, a_defenceless, a_has_land,
                 d_pmf, d_lo, d_hi, d_can_hit, d_alive, d_defenceless, d_length,
                 bombard_pmf, bombard_mode, land_prefix,
                 retreat, below, a_units_left, d_units_left, a_may_retreat, win_value,
                 remainder_start, a_profile_of, transfer,
                 outcomes, a_final, d_final, joint_final, totals, rounds_hist, eps, state_eps):
    """`solve` on one thread: no parallel region to open (cheaper for one profile or
    little work, and not held up when the other cores are busy).  A twin rather than
    njit(solve.py_func): two dispatchers of one function share numba's cache entry."""
    n_profiles = a_profile_prob.shape[0]
    outcomes_p = np.zeros((n_profiles, outcomes.shape[0]))
    d_final_p = np.zeros((n_profiles, d_final.shape[0]))
    totals_p = np.zeros((n_profiles, totals.shape[0]))
    rounds_p = np.zeros((n_profiles, rounds_hist.shape[0]))
    # profiles are independent once round-1 AA fire is decided: one per thread
    no_init = np.zeros(0)
    # phase 2 (partial retreats of amphibious assaults): profiles of probability 0 start from
    # the mass that phase 1 sent them
    for phase in range(2):
        for p in range(n_profiles):
            if (a_profile_prob[p] > 0.0) != (phase == 0):
                continue
            init = no_init if phase == 0 else transfer[p]
            if phase == 1 and not init.any():
                continue
            _solve_profile(p, a_profile_prob, a_offset, a_length, a_pmf, a_cum, a_lo, a_hi,
                           a_can_hit, a_alive, a_defenceless, a_has_land, d_pmf, d_lo, d_hi,
                           d_can_hit, d_alive, d_defenceless, d_length, bombard_pmf,
                           bombard_mode, land_prefix, retreat, below, a_units_left,
                           d_units_left, a_may_retreat, win_value, remainder_start,
                           a_profile_of, transfer, init, outcomes_p[p], a_final, d_final_p[p],
                           joint_final, totals_p[p], rounds_p[p], eps, state_eps)
    for p in range(n_profiles):  # fixed order: the same sums whatever the thread count
        outcomes += outcomes_p[p]
        d_final += d_final_p[p]
        totals += totals_p[p]
        rounds_hist += rounds_p[p]



@njit(cache=True)
def _finish(outcome, m, a, d, a_has_land, outcomes, a_final, d_final, joint_final, totals,
            rounds_hist, rounds):
    """Record probability m of the battle ending with `outcome` in the state pair (a, d) after
    `rounds` rounds (the last bin of rounds_hist takes that many or more)."""
    outcomes[outcome] += m
    rounds_hist[min(rounds, rounds_hist.shape[0] - 1)] += m
    a_final[a] += m
    d_final[d] += m
    if joint_final.shape[0] > 0:
        joint_final[a, d] += m
    if outcome == ATTACKER_WIN and a_has_land[a]:
        totals[2] += m


@njit(cache=True)
def _withdraw(m, a, d, remainder_start, a_profile_of, transfer, a_has_land, outcomes, a_final,
              d_final, joint_final, totals, rounds_hist, rounds):
    """The attacker retreats in (a, d): a full retreat ends the battle; a partial one (landed
    units stay) sends the mass to the start of the stayers' profile, solved in phase 2."""
    start = remainder_start[a]
    if start >= 0:
        transfer[a_profile_of[start], d] += m
    else:
        _finish(RETREAT, m, a, d, a_has_land, outcomes, a_final, d_final, joint_final, totals,
                rounds_hist, rounds)


@njit(cache=True)
def _solve_profile(p, a_profile_prob, a_offset, a_length, a_pmf, a_cum, a_lo, a_hi, a_can_hit,
                   a_alive, a_defenceless, a_has_land, d_pmf, d_lo, d_hi, d_can_hit, d_alive,
                   d_defenceless, d_length, bombard_pmf, bombard_mode, land_prefix,
                   retreat, below, a_units_left, d_units_left, a_may_retreat, win_value,
                   remainder_start, a_profile_of, transfer, init_mass,
                   outcomes, a_final, d_final, joint_final, totals, rounds_hist, eps,
                   state_eps):
    """One attacker profile of `solve`; writes a_final / joint_final rows of its own states."""
    d_end = d_length
    n_d = d_length + 1
    offset = a_offset[p]
    length = a_length[p]
    a_end = offset + length
    mass = np.zeros((length + 1, n_d))
    prob = a_profile_prob[p]
    rounds_played = 0
    retreating = retreat[R_ACTIVE] == 1
    if init_mass.shape[0] > 0:
        # the units that stayed after a partial retreat, at the end of some round: no more
        # retreats, nothing round-dependent left
        mass[0, :] = init_mass
        retreating = False
        rounds_played = rounds_hist.shape[0]
    elif bombard_mode == 1:
        # bombardment casualties removed before anyone fires
        for hb in range(bombard_pmf.shape[0]):
            mass[0, min(hb, land_prefix)] += prob * bombard_pmf[hb]
    elif bombard_mode == 2:
        _bombarded_first_round(prob, offset, length, d_end, a_pmf, a_lo, a_hi, a_can_hit,
                               a_alive, a_defenceless, d_pmf, d_lo, d_hi, d_can_hit,
                               d_alive, d_defenceless, bombard_pmf, land_prefix,
                               mass, totals, eps)
        rounds_played = 1
    else:
        mass[0, 0] = prob
    # round by round while the policy depends on the round, and for the law of the rounds
    explicit = rounds_hist.shape[0] - 1
    if retreating:
        explicit = max(explicit, retreat[R_AFTER], 1)
    if explicit > 0 and init_mass.shape[0] == 0:
        while rounds_played < explicit:
            after = np.zeros((length + 1, n_d))
            for k in range(length + 1):
                a = offset + k
                for d in range(n_d):
                    m = mass[k, d]
                    if m == 0.0:
                        continue
                    outcome, a2, d2 = settle(a, d, a_end, d_end, a_alive, a_can_hit,
                                             a_defenceless, d_alive, d_can_hit, d_defenceless)
                    if a2 != a or d2 != d:
                        mass[a2 - offset, d2] += m
                        continue
                    if outcome != CONTINUE:
                        _finish(outcome, m, a, d, a_has_land, outcomes, a_final, d_final,
                                joint_final, totals, rounds_hist, rounds_played)
                        continue
                    if rounds_played > 0 and should_retreat(
                            a, d, rounds_played, retreat, below, a_units_left, d_units_left,
                            a_may_retreat, a_has_land, win_value):
                        _withdraw(m, a, d, remainder_start, a_profile_of, transfer, a_has_land,
                                  outcomes, a_final, d_final, joint_final, totals,
                                  rounds_hist, rounds_played)
                        continue
                    if m < state_eps:
                        totals[1] += m
                        continue
                    totals[0] += m
                    kept = _spread(after, k, d, length, d_end, m, a_pmf[a], a_cum[a], a_lo[a],
                                   a_hi[a], d_pmf[d], d_lo[d], d_hi[d], eps)
                    if m * d_pmf[d, 0] > eps:
                        kept += m * d_pmf[d, 0] * a_pmf[a, 0]  # "nobody hits" moved too
                    totals[1] += m - kept
            mass = after
            rounds_played += 1
            if not mass.any():
                break
    for k in range(length + 1):
        a = offset + k
        for d in range(n_d):
            m = mass[k, d]
            if m == 0.0:
                continue
            outcome, a2, d2 = settle(a, d, a_end, d_end, a_alive, a_can_hit,
                                     a_defenceless, d_alive, d_can_hit, d_defenceless)
            if a2 != a or d2 != d:
                # units lost without dice: the mass goes on from a later state
                mass[a2 - offset, d2] += m
                continue
            if outcome != CONTINUE:
                _finish(outcome, m, a, d, a_has_land, outcomes, a_final, d_final,
                        joint_final, totals, rounds_hist, rounds_played)
                continue
            if retreating and should_retreat(a, d, rounds_played, retreat, below,
                                             a_units_left, d_units_left, a_may_retreat,
                                             a_has_land, win_value):
                _withdraw(m, a, d, remainder_start, a_profile_of, transfer, a_has_land,
                          outcomes, a_final, d_final, joint_final, totals, rounds_hist,
                          rounds_played)
                continue
            if m < state_eps:
                # a state this unlikely is not worth a round; its mass is reported
                totals[1] += m
                continue
            stay = a_pmf[a, 0] * d_pmf[d, 0]
            w = m / (1.0 - stay)
            totals[0] += w
            kept = _spread(mass, k, d, length, d_end, w, a_pmf[a], a_cum[a], a_lo[a], a_hi[a],
                           d_pmf[d], d_lo[d], d_hi[d], eps)
            totals[1] += m - kept


@njit(cache=True)
def win_values(a_offset, a_length, a_pmf, a_lo, a_hi, a_can_hit, a_alive, a_defenceless,
               a_has_land, d_pmf, d_lo, d_hi, d_can_hit, d_alive, d_defenceless, d_length,
               retreat, below, a_units_left, d_units_left, a_may_retreat, win_value,
               remainder_start):
    """Fill win_value[a, d]: the probability that the attacker wins if it fights on from the
    end-of-round state pair (a, d), itself retreating later as the policy says (the policy
    must not depend on the round; remainder_start: see compile.with_partial_retreats).  Swept
    backwards: every successor is known first."""
    d_end = d_length
    value = np.zeros(win_value.shape)  # value at (a, d) after the retreat decision there
    # backwards over profiles too: a partial retreat continues in a later profile
    for p in range(a_offset.shape[0] - 1, -1, -1):
        offset = a_offset[p]
        length = a_length[p]
        a_end = offset + length
        for k in range(length, -1, -1):
            a = offset + k
            for d in range(d_end, -1, -1):
                outcome, a2, d2 = settle(a, d, a_end, d_end, a_alive, a_can_hit,
                                         a_defenceless, d_alive, d_can_hit, d_defenceless)
                if a2 != a or d2 != d:
                    win_value[a, d] = value[a2, d2]
                    value[a, d] = value[a2, d2]
                    continue
                if outcome != CONTINUE:
                    v = 1.0 if outcome == ATTACKER_WIN else 0.0
                    win_value[a, d] = v
                    value[a, d] = v
                    continue
                total = 0.0
                for hd in range(d_lo[d], d_hi[d] + 1):
                    pd = d_pmf[d, hd]
                    row = offset + min(k + hd, length)
                    for ha in range(a_lo[a], a_hi[a] + 1):
                        if ha == 0 and hd == 0:
                            continue
                        total += pd * a_pmf[a, ha] * value[row, min(d + ha, d_end)]
                v = total / (1.0 - a_pmf[a, 0] * d_pmf[d, 0])
                win_value[a, d] = v
                if should_retreat(a, d, 0, retreat, below, a_units_left, d_units_left,
                                  a_may_retreat, a_has_land, win_value):
                    # a full retreat wins nothing; after a partial one the stayers fight on
                    start = remainder_start[a]
                    v = value[start, d] if start >= 0 else 0.0
                value[a, d] = v
