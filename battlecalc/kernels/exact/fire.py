"""The exact solver's rounds from one state pair: the fire laws of a side (_fire), one round of
the general model (_transition, _play_phased, _spread_after_strikes), the land fast path's
walk (_spread_walk) and the round played from a pair (_play, _fight_on).  njit code only."""

from __future__ import annotations

from ..jit import kernel
from ..layout import (
    NO_RANK,
    NO_STATE,
    R_HI,
    R_LO,
    R_RANK,
    R_STRENGTH,
    RETREAT,
    RU_DIE,
    RU_LOW_LUCK,
    RU_SIMPLE,
    S_AIR,
    S_INFO,
    S_IPC,
    S_OTHER,
    S_ROW_A,
    S_ROW_N,
    S_ROW_S,
    S_SUBS,
)
from ..round_model import (
    FLAGS,
    VALUES,
    air_on_subs,
    assign,
    casualty_state,
    fire_groups,
    fires_back,
    in_battle,
    lone_transports,
    strikes,
)
from .pairs import (
    F_A,
    F_D,
    GATHER,
    SPREAD,
    W_A,
    W_D,
    W_META,
    _add,
    _clear,
    _count_work,
    _finish,
    _grid,
    _keep,
    _kept_range,
    _put,
    _recall,
)


@kernel(refs=False)
def _fire(xst, xr, xpmf, x, subs_fire, others_fire, air_subs, extra_pmf, yst, yr, y, rules,
          where, states, probs):
    """Law of side y's state after side x (in state x) fires once: its subs (if subs_fire)
    and its other units (if others_fire), plus extra_pmf hits at non-air units (shore
    bombardment; [1.0] when none).  With low-luck dice, general fire goes in groups
    (kernels/round_model.fire_groups).  Hits of a kind beyond what y has for them to land on take
    what they can take whatever their number: those counts are one term, of their summed
    probability.  Fills the sparse list (where, states, probs);
    returns its length."""
    count = 0
    s_row, a_row, n_row = xst[x, S_ROW_S], xst[x, S_ROW_A], xst[x, S_ROW_N]
    subs_fire = subs_fire and xst[x, S_SUBS] > 0
    if others_fire and rules[RU_LOW_LUCK] == 1:
        die = rules[RU_DIE]
        gs, ga, gn = fire_groups(xr[s_row, R_STRENGTH] if subs_fire else 0,
                                 xr[a_row, R_STRENGTH], xr[n_row, R_STRENGTH], yst[y, S_INFO],
                                 air_subs)
        for ks in range(2 if gs % die else 1):
            ps = _low_luck_chance(gs, die, ks)
            for hb in range(extra_pmf.shape[0]):
                for ka in range(2 if ga % die else 1):
                    pa = ps * extra_pmf[hb] * _low_luck_chance(ga, die, ka)
                    for kn in range(2 if gn % die else 1):
                        p = pa * _low_luck_chance(gn, die, kn)
                        if p > 0.0:
                            count = _add(where, states, probs, count, assign(
                                yst, yr, y, gs // die + ks + hb, ga // die + ka, gn // die + kn,
                                air_subs), p)
        return count
    s_lo = s_hi = a_lo = a_hi = n_lo = n_hi = 0
    if subs_fire:
        s_lo, s_hi = xr[s_row, R_LO], xr[s_row, R_HI]
    if others_fire:
        a_lo, a_hi = xr[a_row, R_LO], xr[a_row, R_HI]
        n_lo, n_hi = xr[n_row, R_LO], xr[n_row, R_HI]
    other_left = yst[y, S_OTHER]
    only_other = yst[y, S_SUBS] == 0 and yst[y, S_AIR] == 0  # each hit: the next other unit
    # the last hit count of each kind that may still change the outcome (rules.assign: with
    # this many, every unit such hits may land on is taken); the counts above add to it
    subs_left, air_left = yst[y, S_SUBS], yst[y, S_AIR]
    s_last = max(s_lo, min(s_hi, subs_left + other_left))
    a_last = max(a_lo, min(a_hi, air_left + other_left + (subs_left if air_subs else 0)))
    n_last = max(n_lo, min(n_hi, subs_left + air_left + other_left))
    if (a_last > a_lo and (air_subs or subs_left == 0) and s_last == s_lo
            and extra_pmf.shape[0] == 1):
        return _fire_air_general(xpmf, s_row, s_lo, s_hi, a_row, a_lo, a_hi, a_last, n_row,
                                 n_lo, n_hi, n_last, extra_pmf[0], yst, yr, y, air_subs,
                                 only_other, where, states, probs)
    # one more hit of any kind adds one casualty to the set rules.assign chooses
    # (_assign_step): each hit count after the first of its run costs one greedy step, sub
    # hits (hs, then bombardment's hb on top) as much as air and general hits
    xs = (0, 0, 0) if only_other else _assign_counts(yst, yr, y, s_lo, a_lo, n_lo, air_subs)
    # the summed tails (a_last, n_last) once, not once per outer hit count
    a_tail = _hit_chance(xpmf, a_row, a_last, a_hi, a_last)
    n_tail = _hit_chance(xpmf, n_row, n_last, n_hi, n_last)
    for hs in range(s_lo, s_last + 1):
        ps = _hit_chance(xpmf, s_row, hs, s_hi, s_last)
        if hs > s_lo and not only_other:
            xs = _assign_step(yst, yr, y, xs[0], xs[1], xs[2], hs, a_lo, n_lo, air_subs)
        xb = xs
        for hb in range(extra_pmf.shape[0]):
            pb = ps * extra_pmf[hb]
            h_sub = hs + hb
            if hb > 0 and not only_other:
                xb = _assign_step(yst, yr, y, xb[0], xb[1], xb[2], h_sub, a_lo, n_lo, air_subs)
            xa = xb
            for ha in range(a_lo, a_last + 1):
                pa = pb * (a_tail if ha == a_last else _hit_chance(xpmf, a_row, ha, a_hi, a_last))
                if ha > a_lo and not only_other:
                    xa = _assign_step(yst, yr, y, xa[0], xa[1], xa[2], h_sub, ha, n_lo, air_subs)
                x = xa
                for hg in range(n_lo, n_last + 1):
                    p = pa * (n_tail if hg == n_last else _hit_chance(xpmf, n_row, hg, n_hi,
                                                                       n_last))
                    if only_other:
                        y2 = y + min(h_sub + ha + hg, other_left)
                    else:
                        if hg > n_lo:
                            x = _assign_step(yst, yr, y, x[0], x[1], x[2], h_sub, ha, hg,
                                             air_subs)
                        y2 = casualty_state(yst, y, x[0], x[1], x[2])
                    if p > 0.0:
                        count = _add(where, states, probs, count, y2, p)
    return count


@kernel(inline=True)
def _fire_air_general(xpmf, s_row, hs, s_hi, a_row, a_lo, a_hi, a_last, n_row, n_lo, n_hi,
                      n_last, pb, yst, yr, y, air_subs, only_other, where, states, probs):
    """_fire's double run over air hits ha and general hits hg where an air hit may land on
    whatever a general hit may (side y has no subs, or x's aircraft may hit them) and one sub
    hit count hs, no bombardment: the casualties of (hs, ha, hg) are then those of hs sub
    hits and ha + hg general hits (rules.assign's two caps are the same), one greedy walk
    over t = ha + hg, each step one more casualty until y has none left (t_cap on; where y
    has other units only, the next of them, as _fire takes them).  The
    probability of each (ha, hg), the same product as _fire's, is added straight to the
    entry of t (t_cap and beyond: one entry) in _fire's order, so every entry is the same
    sum and the list the same order (t ascending, as _fire first meets them) as _fire's,
    without a greedy step and an index-map look-up per (ha, hg).  Returns the length."""
    ps = _hit_chance(xpmf, s_row, hs, s_hi, hs)
    t_lo, t_hi = a_lo + n_lo, a_last + n_last
    x = (0, 0, 0) if only_other else _assign_counts(yst, yr, y, hs, 0, t_lo, air_subs)
    count = 0
    t_cap = t_hi
    last = NO_STATE
    other_left = yst[y, S_OTHER]
    for t in range(t_lo, t_hi + 1):
        if only_other:
            y2 = y + min(hs + t, other_left)
        else:
            if t > t_lo:
                x = _assign_step(yst, yr, y, x[0], x[1], x[2], hs, 0, t, air_subs)
            y2 = casualty_state(yst, y, x[0], x[1], x[2])
        if y2 == last:  # nothing left for more hits to take
            t_cap = t - 1
            break
        states[count] = y2
        probs[count] = 0.0
        count += 1
        last = y2
    pb = ps * pb
    a_tail = _hit_chance(xpmf, a_row, a_last, a_hi, a_last)  # (the summed tails once)
    n_tail = _hit_chance(xpmf, n_row, n_last, n_hi, n_last)
    for ha in range(a_lo, a_last + 1):
        pa = pb * (a_tail if ha == a_last else _hit_chance(xpmf, a_row, ha, a_hi, a_last))
        for hg in range(n_lo, n_last + 1):
            p = pa * (n_tail if hg == n_last else _hit_chance(xpmf, n_row, hg, n_hi, n_last))
            if p > 0.0:
                probs[min(ha + hg, t_cap) - t_lo] += p
    # (an entry no positive term reached is left out, as _fire leaves it)
    kept = 0
    for i in range(count):
        if probs[i] > 0.0:
            states[kept] = states[i]
            probs[kept] = probs[i]
            where[states[kept]] = kept
            kept += 1
    return kept


@kernel(inline=True)
def _hit_chance(pmf, row, h, hi, last):
    """P(h hits) of a category step's law (pmf[row]; 1 where it never hits: hi 0), or
    P(h..hi hits) for h = last < hi (summed, not a difference of running sums: no
    cancellation).  (The table and its row, not the row as an array: each array view made
    costs two atomic reference counts, a quarter of the sea rows' time when made per hit
    count.)"""
    if hi == 0:
        return 1.0
    if h < last or last == hi:
        return pmf[row, h]
    total = 0.0
    for k in range(hi, h - 1, -1):  # smallest first
        total += pmf[row, k]
    return total


@kernel(inline=True)
def _assign_counts(yst, yr, y, h_sub, h_air, h_gen, air_subs):
    """rules.assign as casualty counts (subs, aircraft, others) of side y's state y: the
    hits added one at a time (_assign_step), sub hits, then air hits, then general hits."""
    x_sub = x_air = x_other = 0
    for k in range(1, h_sub + 1):
        x_sub, x_air, x_other = _assign_step(yst, yr, y, x_sub, x_air, x_other, k, 0, 0,
                                             air_subs)
    for k in range(1, h_air + 1):
        x_sub, x_air, x_other = _assign_step(yst, yr, y, x_sub, x_air, x_other, h_sub, k, 0,
                                             air_subs)
    for k in range(1, h_gen + 1):
        x_sub, x_air, x_other = _assign_step(yst, yr, y, x_sub, x_air, x_other, h_sub, h_air,
                                             k, air_subs)
    return x_sub, x_air, x_other


@kernel(inline=True)
def _assign_step(yst, yr, y, x_sub, x_air, x_other, h_sub, h_air, h_gen, air_subs):
    """One more casualty of the greedy of rules.assign: (x_sub, x_air, x_other) already
    chosen, the caps those of h_sub, h_air, h_gen hits.  The set rules.assign picks for k + 1
    hits is the one for k hits and one more unit, whichever hit count grows: of the three
    categories' next units allowed under the new caps, the first in the order of losses (the
    two caps grow by at most one each, and both new units could come before the last one
    chosen only with more casualties than the hits allow).  Returns the new counts."""
    cap_sub = min(yst[y, S_SUBS], h_gen + h_sub + (h_air if air_subs else 0))
    cap_air = min(yst[y, S_AIR], h_gen + h_air)
    rank_s = yr[yst[y, S_ROW_S] + x_sub, R_RANK] if x_sub < cap_sub else NO_RANK
    rank_a = yr[yst[y, S_ROW_A] + x_air, R_RANK] if x_air < cap_air else NO_RANK
    rank_n = yr[yst[y, S_ROW_N] + x_other, R_RANK] if x_other < yst[y, S_OTHER] else NO_RANK
    if rank_s < rank_a and rank_s < rank_n:
        return x_sub + 1, x_air, x_other
    if rank_a < rank_n:
        return x_sub, x_air + 1, x_other
    if rank_n < NO_RANK:
        return x_sub, x_air, x_other + 1
    return x_sub, x_air, x_other


@kernel(inline=True)
def _same_fire(xst, xr, xpmf, x1, x2, subs_fire, rules):
    """Whether side x's general fire (_fire with others_fire) is the same from its states x1
    and x2: the same hit laws of the categories that fire and the same targets for its
    aircraft (x1 NO_STATE: no)."""
    if x1 == x2:
        return True
    if x1 == NO_STATE or air_on_subs(xst, x1, rules) != air_on_subs(xst, x2, rules):
        return False
    subs1 = subs_fire and xst[x1, S_SUBS] > 0
    if subs1 != (subs_fire and xst[x2, S_SUBS] > 0):
        return False
    for col in range(S_ROW_S if subs1 else S_ROW_A, S_ROW_N + 1):
        r1, r2 = xst[x1, col], xst[x2, col]
        if r1 == r2:
            continue
        if (xr[r1, R_LO] != xr[r2, R_LO] or xr[r1, R_HI] != xr[r2, R_HI]
                or xr[r1, R_STRENGTH] != xr[r2, R_STRENGTH]):
            return False
        for h in range(xr[r1, R_LO], xr[r1, R_HI] + 1):
            if xpmf[r1, h] != xpmf[r2, h]:
                return False
    return True


@kernel(refs=False)
def _low_luck_chance(strength, die, extra):
    """Chance that a low-luck group of this strength scores strength // die + extra hits."""
    chance = (strength % die) / die
    return chance if extra == 1 else 1.0 - chance


@kernel(refs=False)
def _transition(A, D, rules, a, d, bombard_pmf, one, mode, m, mass, a_base, closed, value,
                scratch, eps, out, rounds, coef):
    """One round from the pair (a, d) in the general round model; returns (result, stay, w).

    stay: the probability that the round changes nothing.  mode SPREAD: add w * P(next pair)
    to mass[a2 - a_base, d2], skipping moves of eps or less; closed: the "nothing changes" part
    is left out and w = m / (1 - stay) (the closed-form sweep), else w = m and everything moves
    (a round played on its own); a lone-transport retreat is recorded as an outcome; result:
    the mass moved.  GATHER: result = the sum over the next pairs but (a, d) itself of
    P(pair) * value[pair], a lone-transport retreat counted as coef[0] x the TUV swing it ends
    with (the optimal retreat's objective, kernels/exact/sweep._end_value; coef of another
    length than 3: 0, as --retreat-below's chance of winning counts it).  bombard_pmf: hits
    joining the
    attacker's fire at non-air units (`one` = [1.0] when none).  scratch: sparse lists, two
    levels per side; out: the outputs of `_finish`, rounds: the round being played.  A, D:
    each side's layout.ExactSide.  (The kernels called for each state pair take the arrays
    they need, not the battle's layout.ExactBattle: numba passes a NamedTuple as all of its
    fields, and handing the whole battle down to every pair made the solver 10-30% slower.)
    """
    ast, ar, apmf = A.states, A.rows, A.pmf
    dst, dr, dpmf = D.states, D.rows, D.pmf
    ws, fs = scratch
    wa, pa, wd, pd = ws[W_A:W_A + 4], fs[F_A:F_A + 2], ws[W_D:W_D + 4], fs[F_D:F_D + 2]
    lone = lone_transports(ast, a, rules)
    a_strike, d_strike = strikes(ast, a, dst, d, rules)
    a_back, d_back = fires_back(ast, a, rules), fires_back(dst, d, rules)
    n_a1, n_d1 = _strike_lists(A, D, rules, a, d, a_strike, d_strike, one, wa, pa, wd, pd)
    # the strike outcome in which nothing happens first: after it, the chance that the round
    # changes nothing is known (and with it w) before anything else is spread
    first = (wa[0, a] * n_d1 + wd[0, d] if wa[0, a] != NO_STATE and wd[0, d] != NO_STATE
             else NO_STATE)
    stay = 0.0
    w = m
    result = 0.0
    n_a2 = n_d2 = 0
    last_a1 = last_d1 = last_fa = last_fd = NO_STATE  # what the lists at level 2 are of
    # the memo of general-fire lists, for this attacker state a: the attacker's fire from a
    # at defender state d1 (side 0) and the defender's from d1 at a (side 1) depend on d1 and
    # on whether each side struck, not on the pair, so a list built where a strike spread
    # the defender over several d1 is kept, for the pairs of a whose strikes reach d1 too
    if ws[W_META, 0] != a:
        ws[W_META, 0] = a
        ws[W_META, 1] += 1  # a new generation: every kept list is stale
        ws[W_META, 2] = ws[W_META, 3] = 0
    tag_a = 2 * ws[W_META, 1] + (1 if a_strike else 0)
    tag_d = 2 * ws[W_META, 1] + (1 if d_strike else 0)
    # (only while a has subs: without them no strike spreads the defender, nothing is kept)
    memo = ast[a, S_SUBS] > 0
    keep = memo and n_d1 > 1
    memo_a = memo and bombard_pmf.shape[0] == 1
    for t in range(-1, n_a1 * n_d1):
        if t == first or (t < 0 and first < 0):
            continue
        i, j = (first // n_d1, first % n_d1) if t < 0 else (t // n_d1, t % n_d1)
        a1 = wa[1, i]
        d1 = wd[1, j]
        p1 = pa[0, i] * pd[0, j]
        if t >= 0 and mode == SPREAD and w * p1 <= eps:
            continue
        # who fires in general fire: those left after the strikes, or all of them
        fa = a if a_back else a1
        fd = d if d_back else d1
        # each side's general fire, unless the previous strike outcome left the same target
        # under the same fire (e.g. strike hits on units that do not fire): its list stands
        if d1 != last_d1 or not _same_fire(ast, ar, apmf, last_fa, fa, not a_strike, rules):
            recall = memo_a and fa == a  # kept by the target, the attacker's fire fixed
            n_d2 = _general_fire(ast, ar, apmf, fa, not a_strike, bombard_pmf, dst, dr, d1, rules,
                                 wd, pd, n_d2, ws, fs, 0, d1, tag_a, recall, keep and recall)
            last_d1, last_fa = d1, fa
        if a1 != last_a1 or not _same_fire(dst, dr, dpmf, last_fd, fd, not d_strike, rules):
            recall = memo and a1 == a  # kept by the defender's firing state, the target fixed
            n_a2 = _general_fire(dst, dr, dpmf, fd, not d_strike, one, ast, ar, a1, rules,
                                 wa, pa, n_a2, ws, fs, 1, fd, tag_d, recall, keep and recall)
            last_a1, last_fd = a1, fd
        if (t < 0 and wa[2, a] != NO_STATE and wd[2, d] != NO_STATE
                and not (lone and in_battle(ast, a))):
            stay = p1 * pa[1, wa[2, a]] * pd[1, wd[2, d]]
            if closed and mode == SPREAD:
                w = m / (1.0 - stay)
        # (the lists and rows indexed in place, not as row views; measured alike on the sea
        # rows, as the compiler drops those views' references itself)
        for k in range(n_a2):
            a2 = wa[3, k]
            retreats = lone and in_battle(ast, a2)
            # (a, d) itself is left out of the closed form; only a2 == a can reach it
            skip = d if closed and a2 == a and not retreats else NO_STATE
            if mode == GATHER:
                if not retreats:
                    pk = p1 * pa[1, k]
                    for n in range(n_d2):
                        d2 = wd[3, n]
                        if d2 != skip:
                            result += pk * pd[1, n] * value[a2, d2]
                elif coef.shape[0] == 3 and coef[0] != 0.0:
                    # the transports withdraw after their volley: the battle ends there
                    pk = p1 * pa[1, k] * coef[0]
                    for n in range(n_d2):
                        result += pk * pd[1, n] * (dst[wd[3, n], S_IPC] - ast[a2, S_IPC])
                continue
            wk = w * p1 * pa[1, k]
            if retreats:
                for n in range(n_d2):
                    q = wk * pd[1, n]
                    if q > eps:
                        result += q
                        _finish(VALUES[RETREAT], q, a2, wd[3, n], rounds, ast, out)
                continue
            result = _spread_row(mass, a2 - a_base, wk, pd[1], wd[3], n_d2, skip, eps, result)
    _clear(wd[2], wd[3], n_d2)
    _clear(wa[2], wa[3], n_a2)
    _clear(wd[0], wd[1], n_d1)
    _clear(wa[0], wa[1], n_a1)
    return result, stay, w


@kernel(inline=True)
def _general_fire(xst, xr, xpmf, x, x_subs_fire, extra_pmf, yst, yr, y, rules, wy, py, count,
                  ws, fs, side, key, tag, recall, keep):
    """Side y's states after side x's general fire from state x (x_subs_fire: x's subs fire in
    it, not having struck) into the second sparse list of y's work rows (wy[2], wy[3], py[1];
    count, its length now, cleared first): the list the fire-list memo keeps for `key` on
    `side` where recall, else built by _fire (extra_pmf: bombardment, or one) and kept there
    where keep.  Returns its length."""
    _clear(wy[2], wy[3], count)
    count = -1
    if recall:
        count = _recall(ws, fs, side, key, tag, wy[2], wy[3], py[1])
    if count < 0:
        count = _fire(xst, xr, xpmf, x, x_subs_fire, FLAGS[1], air_on_subs(xst, x, rules),
                      extra_pmf, yst, yr, y, rules, wy[2], wy[3], py[1])
        if keep:
            _keep(ws, fs, side, key, tag, wy[3], py[1], count)
    return count


@kernel(inline=True)
def _spread_row(mass, r, w, probs, states, count, skip, eps, moved):
    """Spread mass w of attacker row r (state r of the block) over the defender's first
    `count` next states (states, their chances probs), terms of at most eps and the state skip
    left out; returns moved plus what was spread, added a term at a time."""
    for n in range(count):
        q = w * probs[n]
        d2 = states[n]
        if q > eps and d2 != skip:
            moved += q
            _put(mass, r, d2, q)
    _count_work(mass, count)
    return moved


@kernel(inline=True)
def _phased(ast, dst, a, d, rules):
    """Whether the closed sweep may play the round from (a, d) in two phases (_play_phased):
    general rules, the attacker not down to lone transports, and no strike casualties firing
    back (general fire then depends on the pair after the strikes alone)."""
    return (rules[RU_SIMPLE] == 0 and not lone_transports(ast, a, rules)
            and not fires_back(ast, a, rules) and not fires_back(dst, d, rules))


@kernel(inline=True)
def _strike_lists(A, D, rules, a, d, a_strike, d_strike, one, wa, pa, wd, pd):
    """The opening strikes from the pair (a, d) into each side's first sparse list (wa[0],
    wa[1], pa[0] for the attacker's states, wd.., pd.. for the defender's): a side that does
    not strike leaves the other where it is, surely, without a kernel call.  Returns (n_a1,
    n_d1), the lists' lengths."""
    no, yes = FLAGS[0], FLAGS[1]
    if a_strike:
        n_d1 = _fire(A.states, A.rows, A.pmf, a, yes, no, no, one, D.states, D.rows, d, rules,
                     wd[0], wd[1], pd[0])
    else:
        n_d1 = _add(wd[0], wd[1], pd[0], 0, d, 1.0)
    if d_strike:
        n_a1 = _fire(D.states, D.rows, D.pmf, d, yes, no, no, one, A.states, A.rows, a, rules,
                     wa[0], wa[1], pa[0])
    else:
        n_a1 = _add(wa[0], wa[1], pa[0], 0, a, 1.0)
    return n_a1, n_d1


@kernel(inline=True)
def _general_lists(A, D, rules, a, d, a_strike, d_strike, one, scratch):
    """Both sides' general fire from the pair (a, d) after the strikes (subs that struck at
    (a, d) do not fire again: a_strike, d_strike are those of the pair, rules.strikes, the
    same as those of any pair whose strikes lead to it): the defender's next states in
    scratch's second defender list, the attacker's in its second attacker list; returns
    (n_a2, n_d2, P(neither changes))."""
    ast, ar, apmf = A.states, A.rows, A.pmf
    dst, dr, dpmf = D.states, D.rows, D.pmf
    ws, fs = scratch
    wa, pa, wd, pd = ws[W_A:W_A + 4], fs[F_A:F_A + 2], ws[W_D:W_D + 4], fs[F_D:F_D + 2]
    yes = FLAGS[1]
    n_d2 = _fire(ast, ar, apmf, a, not a_strike, yes, air_on_subs(ast, a, rules), one, dst, dr,
                 d, rules, wd[2], wd[3], pd[1])
    n_a2 = _fire(dst, dr, dpmf, d, not d_strike, yes, air_on_subs(dst, d, rules), one, ast, ar,
                 a, rules, wa[2], wa[3], pa[1])
    g0 = 0.0
    if wa[2, a] != NO_STATE and wd[2, d] != NO_STATE:
        g0 = pa[1, wa[2, a]] * pd[1, wd[2, d]]
    return n_a2, n_d2, g0


@kernel(inline=True)
def _spread_general(scratch, n_a2, n_d2, total, a, d, skip_self, mass, a_base, eps):
    """Spread `total` over the product of the general-fire lists (_general_lists) into mass,
    (a, d) itself left out if skip_self; clears the lists; returns the mass moved."""
    ws, fs = scratch
    wa, pa, wd, pd = ws[W_A:W_A + 4], fs[F_A:F_A + 2], ws[W_D:W_D + 4], fs[F_D:F_D + 2]
    moved = 0.0
    for k in range(n_a2):
        a2 = wa[3, k]
        skip = d if skip_self and a2 == a else NO_STATE
        moved = _spread_row(mass, a2 - a_base, total * pa[1, k], pd[1], wd[3], n_d2, skip, eps,
                            moved)
    _clear(wd[2], wd[3], n_d2)
    _clear(wa[2], wa[3], n_a2)
    return moved


@kernel(inline=True, refs=False)
def _play_phased(A, D, rules, a, d, one, m, im, mass, inter, a_base, scratch, eps):
    """The closed sweep's round from (a, d) in two phases, where the strikes spread either
    side: the strikes move the pair's mass into the table of pairs after the strikes (inter,
    rows as mass), and general fire is played once from each pair of that table (its mass im
    from every pair whose strikes lead to it, all of them before (a, d) in the sweep), not once
    per strike outcome of every pair.  With s0, g0 the chances that the strikes, general fire
    change nothing, the pair's mass x (every round fought from it) solves x = m + (im + x s0)
    g0.  Returns (mass moved less im: m less what eps dropped, x)."""
    ast, dst = A.states, D.states
    ws, fs = scratch
    wa, pa, wd, pd = ws[W_A:W_A + 4], fs[F_A:F_A + 2], ws[W_D:W_D + 4], fs[F_D:F_D + 2]
    a_strike, d_strike = strikes(ast, a, dst, d, rules)
    n_a1, n_d1 = _strike_lists(A, D, rules, a, d, a_strike, d_strike, one, wa, pa, wd, pd)
    s0 = 0.0
    if wa[0, a] != NO_STATE and wd[0, d] != NO_STATE:
        s0 = pa[0, wa[0, a]] * pd[0, wd[0, d]]
    n_a2, n_d2, g0 = _general_lists(A, D, rules, a, d, a_strike, d_strike, one, scratch)
    x = (m + im * g0) / (1.0 - s0 * g0)
    moved = 0.0
    for i in range(n_a1):
        a1 = wa[1, i]
        wi = x * pa[0, i]
        r = a1 - a_base
        for j in range(n_d1):
            q = wi * pd[0, j]
            d1 = wd[1, j]
            if q > eps and (a1 != a or d1 != d):
                moved += q
                _put(inter, r, d1, q)
        _count_work(inter, n_d1)
    moved += _spread_general(scratch, n_a2, n_d2, im + x * s0, a, d, True, mass, a_base, eps)
    _clear(wd[0], wd[1], n_d1)
    _clear(wa[0], wa[1], n_a1)
    return moved - im, x


@kernel(refs=False)
def _spread_after_strikes(A, D, rules, a, d, one, im, mass, a_base, scratch, eps):
    """General fire from the pair (a, d) of the table after the strikes (_play_phased) where
    the pair itself is not played in two phases (it ends the battle, or moves without dice, or
    is played the one-phase way): all of im spread into mass, (a, d) itself included.
    Returns the mass moved."""
    a_strike, d_strike = strikes(A.states, a, D.states, d, rules)
    n_a2, n_d2, _ = _general_lists(A, D, rules, a, d, a_strike, d_strike, one, scratch)
    return _spread_general(scratch, n_a2, n_d2, im, a, d, False, mass, a_base, eps)


@kernel(refs=False)
def _spread_walk(mass, k, d, length, d_end, w, a_row, a_cum_row, a_lo, a_hi, d_row, d_lo, d_hi,
                 eps, include_stay, merge):
    """Two single walks: add w * P(attacker scores ha) * P(defender scores hd) to
    mass[k + hd, d + ha] (capped at the walks' ends; attacker hits past the defender's last
    state are summed from the running sums a_cum_row).  Rows by defender hits, a contiguous
    (vectorisable) run over the attacker's kept hit counts in each; rows of weight <= eps are
    skipped.  The "nobody hits" term lands on mass[k, d] itself and is counted as moved only
    with include_stay.  merge (ExactBattle.merge, or empty): row k + hd is merge[k + hd]'s
    (the table of every block at once, from row 0).  Returns the probability moved."""
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
        r = min(k + hd, length)
        row = mass[merge[r] if merge.shape[0] > 0 else r]
        # slices, so that the loop index is known non-negative and the loop vectorises
        target = row[d + a_lo:d + top + 1]
        source = a_row[a_lo:top + 1]
        for j in range(source.shape[0]):
            target[j] += wd * source[j]
        row[d_end] += wd * tail
        kept += wd * row_mass
        if hd == 0 and a_lo == 0 and not include_stay:
            kept -= wd * a_row[0]
    return kept


@kernel(refs=False)
def _play(A, D, rules, a, d, bombard, one, m, mass, a_base, merge, closed, scratch, eps, tail,
          out, rounds, general_round):
    """Spread one round from (a, d), holding mass m, into mass (rows: attacker state - a_base;
    merge: see _spread_walk, land fast path only).
    closed: the closed-form sweep: the "nothing changes" part stays out and the rest moves
    with weight w = m / (1 - its probability); else the round is played on its own (w = m).
    tail: probability the round may leave out in the tails of both sides' hit laws (land fast
    path; 0: none).  general_round None: the battle plays two single walks only (the walk
    is all numba compiles; see sweep._solve_block).  Returns (mass moved, w)."""
    ast, ar, apmf, acum = A
    dst, dr, dpmf, dcum = D
    if isinstance(mass, tuple):
        pass  # (a compact table: general rounds only)
    else:
        if rules[RU_SIMPLE] != 0 and bombard.shape[0] == 1:
            w = m / (1.0 - apmf[a, 0] * dpmf[d, 0]) if closed else m
            # four tails, each within a quarter (tail 0: only hit counts of no probability go)
            allow = max(tail, 0.0) / (4.0 * w)
            a_lo, a_hi = _kept_range(acum[a], ar[a, R_LO], ar[a, R_HI], allow)
            d_lo, d_hi = _kept_range(dcum[d], dr[d, R_LO], dr[d, R_HI], allow)
            return _spread_walk(mass, a - a_base, d, a + ast[a, S_OTHER] - a_base,
                                d + dst[d, S_OTHER], w, apmf[a], acum[a], a_lo, a_hi,
                                dpmf[d], d_lo, d_hi, eps, not closed, merge), w
    if general_round is None:
        return 0.0, 0.0  # (never: such a battle's rounds are walks, spread above)
    moved, _, w = _transition(A, D, rules, a, d, bombard, one, VALUES[SPREAD], m, mass, a_base,
                              closed, _grid(mass), scratch, eps, out, rounds, one)
    return moved, w


@kernel(refs=False)
def _fight_on(A, D, rules, a, d, one, value, scratch, out, coef):
    """The value of fighting a round from (a, d): the value of every pair it may lead to,
    (a, d) itself summed in closed form (value: the attacker's chance to win from each pair,
    or the optimal retreat's objective; coef: how a lone-transport retreat counts, see
    _transition)."""
    ast, ar, apmf = A.states, A.rows, A.pmf
    dst, dr, dpmf = D.states, D.rows, D.pmf
    if rules[RU_SIMPLE] == 0:
        total, stay, _ = _transition(A, D, rules, a, d, one, one, VALUES[GATHER], 0.0, value,
                                     VALUES[0], FLAGS[1], value, scratch, 0.0, out, VALUES[0],
                                     coef)
        return total / (1.0 - stay)
    a_end = a + ast[a, S_OTHER]
    d_end = d + dst[d, S_OTHER]
    total = 0.0
    for hd in range(dr[d, R_LO], dr[d, R_HI] + 1):
        row = min(a + hd, a_end)
        for ha in range(ar[a, R_LO], ar[a, R_HI] + 1):
            if ha > 0 or hd > 0:
                total += dpmf[d, hd] * apmf[a, ha] * value[row, min(d + ha, d_end)]
    return total / (1.0 - apmf[a, 0] * dpmf[d, 0])
