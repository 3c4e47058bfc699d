"""Exact solver kernel.

A side's state only moves forward (casualty steps are never undone), so the states of one
attacker profile x the defender's states can be processed in order of (attacker steps,
defender steps): all of a state's predecessors come before it.  The only cycle is the
self-loop "neither side scores a hit", handled by dividing by (1 - q).
"""

import numpy as np
from numba import njit

from ..kernels.common import ATTACKER_WIN, CONTINUE, settle


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


@njit(cache=True)
def solve(a_profile_prob, a_offset, a_length, a_pmf, a_lo, a_hi, a_can_hit, a_alive,
          a_defenceless, a_has_land,
          d_pmf, d_lo, d_hi, d_can_hit, d_alive, d_defenceless, d_length,
          bombard_pmf, bombard_mode, land_prefix,
          outcomes, a_final, d_final, joint_final, totals, eps):
    """Propagate probability mass from each attacker profile's start to the end states.

    *_pmf[S, H+1]: hit distributions per flat state; *_lo/*_hi[S]: the hit counts whose
    probability is kept (entries outside are pruned and their mass reported).  Outputs:
    outcomes[5] probabilities, a_final[Sa] / d_final[Sd] probabilities of the final states,
    joint_final[Sa, Sd] (may be 0x0 to skip the joint distribution), totals[3] = expected
    rounds, pruned mass, probability of taking the territory.  Shore bombardment (see
    kernels.montecarlo.simulate_chunks): bombard_pmf[B] law of its hits, bombard_mode,
    land_prefix.  eps: a transition that
    would move less than eps probability is skipped (its mass is counted as pruned).
    """
    d_end = d_length
    n_d = d_length + 1
    keep_joint = joint_final.shape[0] > 0
    max_len = 0
    for p in range(a_length.shape[0]):
        max_len = max(max_len, a_length[p])
    mass = np.zeros((max_len + 1, n_d))
    for p in range(a_profile_prob.shape[0]):
        offset = a_offset[p]
        length = a_length[p]
        a_end = offset + length
        mass[: length + 1, :] = 0.0
        prob = a_profile_prob[p]
        if bombard_mode == 1:
            # bombardment casualties removed before anyone fires
            for hb in range(bombard_pmf.shape[0]):
                mass[0, min(hb, land_prefix)] += prob * bombard_pmf[hb]
        elif bombard_mode == 2:
            _bombarded_first_round(prob, offset, length, d_end, a_pmf, a_lo, a_hi, a_can_hit,
                                   a_alive, a_defenceless, d_pmf, d_lo, d_hi, d_can_hit,
                                   d_alive, d_defenceless, bombard_pmf, land_prefix,
                                   mass, totals, eps)
        else:
            mass[0, 0] = prob
        for k in range(length + 1):
            a = offset + k
            for d in range(n_d):
                m = mass[k, d]
                if m == 0.0:
                    continue
                outcome, a2, d2 = settle(a, d, a_end, d_end, a_alive, a_can_hit,
                                         a_defenceless, d_alive, d_can_hit, d_defenceless)
                if outcome != CONTINUE:
                    if a2 != a or d2 != d:
                        # units lost without dice: the mass ends in a later state
                        mass[a2 - offset, d2] += m
                        continue
                    outcomes[outcome] += m
                    a_final[a] += m
                    d_final[d] += m
                    if keep_joint:
                        joint_final[a, d] += m
                    if outcome == ATTACKER_WIN and a_has_land[a]:
                        totals[2] += m
                    continue
                stay = a_pmf[a, 0] * d_pmf[d, 0]
                w = m / (1.0 - stay)
                totals[0] += w
                kept = 0.0
                for ha in range(a_lo[a], a_hi[a] + 1):
                    wa = w * a_pmf[a, ha]
                    if wa <= eps:
                        continue
                    dn = min(d + ha, d_end)
                    for hd in range(d_lo[d], d_hi[d] + 1):
                        if ha == 0 and hd == 0:
                            continue
                        moved = wa * d_pmf[d, hd]
                        if moved <= eps:
                            continue
                        kept += moved
                        mass[min(k + hd, length), dn] += moved
                totals[1] += m - kept
