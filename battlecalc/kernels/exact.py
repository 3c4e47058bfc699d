"""Exact solver: propagate probability through the compiled tables.

A side's state only moves forward (casualty steps are never undone, submerging and units lost
without dice move to later states), so within one attacker block the state pairs can be
swept in order (attacker state, defender state): every predecessor of a pair comes before it.
The only cycle is "nothing changes this round", summed in closed form by dividing by
(1 - its probability).  The first rounds are played one at a time where anything depends on
the round (round-1 bombardment, submerging at the end of a round, a retreat after round R, the
law of the number of rounds); then one sweep finishes the battle.  Attacker blocks (one per
outcome of round-1 AA fire) are independent and may be solved in parallel; blocks of the units
that stay after a partial amphibious retreat start from the mass the first blocks send them.
On land a block mostly reaches states of block 0 (the same units) after a few casualties, or at
once where aircraft are its first casualties: such blocks are solved together, in one table
where each of those states is played once (merged_walks).  The closed sweep of two single walks
(land; sea battles without submarines: RU_SIMPLE, compile._simple) plays a row of pairs (one
attacker state) at a time: the attacker's hit law is the same along the row (_sweep_walks).
The general (sea) closed sweep plays a round where subs strike in two phases (_play_phased):
the strikes move each pair's mass into a table of the pairs after the strikes, and general
fire is played once from each pair of that table, not once per strike outcome of every pair.

Pruning: hit counts less likely than compile.PRUNE_EPS are skipped (rows R_LO..R_HI),
transitions moving less than `eps` probability are skipped, and states holding less than
`state_eps` are not played on; a big battle (PRUNE_PAIRS state pairs or more) is also pruned
within a budget (PRUNE_BUDGET, shared out among its blocks): states below PRUNE_STATE_EPS,
and tails of the hit laws of up to PRUNE_TAIL_EPS a round (land fast path).  All of it is
reported as pruned mass.
"""

from __future__ import annotations

import numpy as np

from ..errors import BattleInputError
from ..results import FinalLaw
from . import jit
from .common import (
    ATTACKER_WIN,
    B_KIND,
    B_OFFSET,
    B_RADIX_A,
    B_RADIX_N,
    B_RADIX_S,
    BLOCK_START,
    BLOCK_STAYERS,
    CONTINUE,
    FULL_RETREAT,
    N_OUTCOMES,
    NO_RANK,
    NO_STATE,
    R_HI,
    R_LO,
    R_RANK,
    R_STRENGTH,
    R_TOP,
    RETREAT,
    RT_ACTIVE,
    RT_AFTER,
    RU_AIR_ALWAYS,
    RU_BOMBARD,
    RU_DIE,
    RU_LOW_LUCK,
    RU_SIMPLE,
    S_AIR,
    S_BLOCK,
    S_HAS_LAND,
    S_INFO,
    S_OTHER,
    S_PLACE,
    S_ROW_A,
    S_ROW_N,
    S_ROW_S,
    S_SUBS,
)
from .jit import kernel
from .rules import (
    FLAGS,
    VALUES,
    air_on_subs,
    assign,
    casualty_state,
    fire_groups,
    fires_back,
    in_battle,
    lone_transports,
    settle,
    should_retreat,
    strikes,
    submerge_step,
    submerges_before_fire,
)
from .tables import (
    NO_MERGE,
    TOTAL_COLS,
    TOTAL_FULL,
    TOTAL_PRUNED,
    TOTAL_ROUNDS,
    TOTAL_TAKES,
    TOTAL_WORK,
    ExactBattle,
    ExactOut,
    ExactSide,
)

TRANSITION_EPS = 1e-18  # transitions moving less probability are skipped (mass reported)
STATE_EPS = 1e-16  # states holding less probability are not played on (mass reported)
# Big battles: their mass lives on a narrow band of states; within a budget of PRUNE_BUDGET
# (probability, reported as pruned) states below PRUNE_STATE_EPS are not played on and each
# round leaves out up to PRUNE_TAIL_EPS in the tails of the hit laws (land fast path).
PRUNING = True  # False: exact to TRANSITION_EPS / STATE_EPS at every size (tests compare)
PRUNE_PAIRS = 200_000  # state pairs from which a battle is pruned within the budget
PRUNE_BUDGET = 1e-10
PRUNE_STATE_EPS = 1e-13
PRUNE_TAIL_EPS = 1e-15
MOVE, END, PLAY = 0, 1, 2  # what _enter decides
SPREAD, GATHER = 0, 1  # what _transition does


@kernel(refs=False)
def _block_size(blocks, b):
    return blocks[b, B_RADIX_S] * blocks[b, B_RADIX_A] * blocks[b, B_RADIX_N]


@kernel(refs=False)
def _enter(ast, dst, rules, retreat, a, d, rounds_played, check_retreat):
    """What happens to probability arriving at the start of a round in the pair (a, d).

    Returns (MOVE, a2, d2, _): the mass moves on to a later pair (units lost without dice,
    subs submerged); (END, a, d, outcome) the battle ends there (RETREAT: the attacker
    withdraws; only if check_retreat); (PLAY, a, d, _) a round is played from (a, d).
    """
    outcome, a2, d2 = settle(ast, a, dst, d, rules[RU_AIR_ALWAYS] == 1)
    if a2 != a or d2 != d:
        return MOVE, a2, d2, outcome
    if outcome != CONTINUE:
        return END, a, d, outcome
    if check_retreat and rounds_played > 0 and retreat.policy[RT_ACTIVE] == 1 and should_retreat(
            a, d, rounds_played, retreat, ast, dst):
        return END, a, d, RETREAT
    if submerges_before_fire(rules, rounds_played):
        a2, d2 = submerge_step(ast, a, dst, d, rules)
        if a2 != a or d2 != d:
            return MOVE, a2, d2, outcome
    return PLAY, a, d, outcome


# The small kernels called per hit count or list entry of the general round (_add, _clear,
# _hit_chance, _assign_step, _assign_counts, _same_fire) are inlined: a compiled kernel call
# takes a reference on each array it is handed and drops it on return, two atomic operations
# an array (perf on the sea rows: NRT_incref / NRT_decref a quarter of the time).  _fire
# itself stays a call: inlining its four calls would double the first compile (14 s to 28 s)
# for ~10%.  The kernels called per state pair (_enter, _fire, _play_phased, _play, ...) and
# the sweeps that call them are compiled without reference counting (jit.kernel refs=False:
# they make no array and return none; _solve_block holds every array they are handed): on
# sea 98, 149,000 atomic reference counts a solve, 45% of its time in perf, down to 249.
# _play_phased is inlined into the sweep that calls it: numba hands a called kernel each
# array as its fields on the stack (a side, ExactSide, as four arrays: 36 words), and perf
# put four fifths of _sweep_round's time on those pushes.  (Inlining _enter and
# _spread_after_strikes as well measured alike on the sea rows and lengthened the first
# compile, in one measurement by 3-4 s: they stay calls.)
@kernel(inline=True)
def _add(where, states, probs, count, f, p):
    """Accumulate probability p on flat state f in a small sparse list; returns the count."""
    i = where[f]
    if i == NO_STATE:
        where[f] = count
        states[count] = f
        probs[count] = p
        return count + 1
    probs[i] += p
    return count


@kernel(inline=True)
def _clear(where, states, count):
    for i in range(count):
        where[states[i]] = NO_STATE


# The work arrays of _transition (_scratch): one int and one float array, so that each call
# down to it takes two references, not four.  Int rows: W_A.. the attacker's sparse lists
# (index map and states, two levels), W_D.. the defender's, W_MEMO.. the fire-list memo (per
# side and defender state: tag, start, length), W_META (attacker state, generation, fill of
# each side), W_KEEP.. the kept lists' states (KEEP_ROWS rows a side); float rows: F_A, F_D
# the lists' probabilities, F_KEEP.. the kept lists' probabilities.
W_A, W_D, W_MEMO, W_META, W_KEEP = 0, 4, 8, 14, 15
F_A, F_D, F_KEEP = 0, 2, 4
KEEP_ROWS = 16

# A compact mass table (ExactBattle.table_rows > 0: a big sea battle, whose probability keeps
# to a few hundred of its hundred thousand states a side) is the tuple (grid, maps): each state
# gets its row (attacker states of the block) or column (defender states) of grid when it first
# gets probability; maps[M_ROWS, k], maps[M_COLS, d] (NO_STATE: none yet), maps[M_FILL, ..]:
# FILL_ROWS, FILL_COLS given so far, CAP_ROWS, CAP_COLS the grid's (one more of each: the sink
# of a full table), FULL (1: out of rows, 2: out of columns, 4: past ExactBattle.work_limit),
# BLOCK_SIZE and N_D (the states a side), WORK (the work so far: successor terms spread, and
# cells scanned or zeroed, SCAN_CELLS of them a term).  A dense table is the array itself,
# indexed by the states.  The kernels that take a table are compiled for each kind (numba's
# isinstance is decided while compiling): the dense code is as it was.
M_ROWS, M_COLS, M_FILL = 0, 1, 2
SCAN_CELLS = 2  # cells scanned or zeroed that cost about one successor term (measured)
FILL_ROWS, FILL_COLS, CAP_ROWS, CAP_COLS, FULL, BLOCK_SIZE, N_D, WORK = range(8)  # by axis


@kernel(inline=True)
def _grid(mass):
    """The array of a mass table."""
    if isinstance(mass, tuple):
        return mass[0]
    else:
        return mass


@kernel(inline=True)
def _slot(maps, axis, i):
    """The grid row (axis M_ROWS: state i of the attacker's block) or column (M_COLS:
    defender state i) of a compact table, given at its first use; the sink row or column
    once the table has no more (FULL: 1 rows, 2 columns)."""
    slot = maps[axis, i]
    if slot == NO_STATE:
        slot = maps[M_FILL, FILL_ROWS + axis]
        if slot == maps[M_FILL, CAP_ROWS + axis]:
            maps[M_FILL, FULL] |= 1 << axis
            return slot
        maps[M_FILL, FILL_ROWS + axis] = slot + 1
        maps[axis, i] = slot
    return slot


@kernel(inline=True)
def _put(mass, k, d, q):
    """Add probability q to the pair (state k of the attacker's block, defender state d)."""
    if isinstance(mass, tuple):
        grid, maps = mass
        grid[_slot(maps, M_ROWS, k), _slot(maps, M_COLS, d)] += q
    else:
        mass[k, d] += q


@kernel(inline=True)
def _count_work(mass, terms):
    """Count `terms` successor terms spread into a compact table (its work)."""
    if isinstance(mass, tuple):
        mass[1][M_FILL, WORK] += terms


@kernel
def _compact_table(size, n_d, rows, cols):
    """A compact mass table (see M_ROWS) for a block of `size` attacker states and n_d
    defender states, of at most rows x cols states, none given yet."""
    maps = np.empty((3, max(size, n_d, WORK + 1)), dtype=np.int64)
    for k in range(size):
        maps[M_ROWS, k] = NO_STATE
    for d in range(n_d):
        maps[M_COLS, d] = NO_STATE
    for i in range(WORK + 1):
        maps[M_FILL, i] = 0
    maps[M_FILL, CAP_ROWS], maps[M_FILL, CAP_COLS] = rows, cols
    maps[M_FILL, BLOCK_SIZE], maps[M_FILL, N_D] = size, n_d
    return np.zeros((rows + 1, cols + 1)), maps


@kernel(inline=True)
def _table_size(mass, axis):
    """The states a mass table is of: the attacker's block (axis M_ROWS) or the defender
    (M_COLS)."""
    if isinstance(mass, tuple):
        return mass[1][M_FILL, BLOCK_SIZE + axis]
    else:
        return mass.shape[axis]


@kernel(inline=True)
def _table_place(mass, axis, i):
    """The row (axis M_ROWS) or column (M_COLS) of state i in a mass table (NO_STATE: a
    compact table's state without one)."""
    if isinstance(mass, tuple):
        return mass[1][axis, i]
    else:
        return i


@kernel(inline=True)
def _stopped(mass, work_limit):
    """Whether a compact table's sweep must stop: full, or (marked so now) past work_limit
    successor terms (0: no limit)."""
    if isinstance(mass, tuple):
        fill = mass[1][M_FILL]
        if work_limit > 0 and fill[WORK] > work_limit:
            fill[FULL] |= 4
        return fill[FULL] != 0
    else:
        return False


@kernel(inline=True)
def _like(mass, empty):
    """A fresh table of the kind and size of `mass` (compact: the same maps), or of no pairs
    where empty."""
    if isinstance(mass, tuple):
        grid, maps = mass
        return np.zeros((0, 0) if empty else grid.shape), maps
    else:
        return np.zeros((0, 0) if empty else mass.shape)


@kernel(inline=True)
def _recall(ws, fs, side, key, tag, where, states, probs):
    """The list kept for `key` on `side` of the fire-list memo (_keep) into the sparse list
    (where, states, probs); returns its length, or -1 if none is kept under `tag`."""
    if ws[W_MEMO + 3 * side, key] != tag:
        return -1
    start, count = ws[W_MEMO + 3 * side + 1, key], ws[W_MEMO + 3 * side + 2, key]
    n = ws.shape[1]
    row, col = start // n, start % n
    for i in range(count):
        f = ws[row, col + i]
        where[f] = i
        states[i] = f
        probs[i] = fs[row - W_KEEP + F_KEEP, col + i]
    return count


@kernel(inline=True)
def _keep(ws, fs, side, key, tag, states, probs, count):
    """Keep a sparse list (states, probs, count) for `key` on `side` of the fire-list memo, if
    the side's rows have room left for this attacker state (a list never straddles rows)."""
    n = ws.shape[1]
    row, col = W_KEEP + side * KEEP_ROWS + ws[W_META, 2 + side] // n, ws[W_META, 2 + side] % n
    if col + count > n:
        row, col = row + 1, 0
    if row >= W_KEEP + (side + 1) * KEEP_ROWS or count > n:
        return
    for i in range(count):
        ws[row, col + i] = states[i]
        fs[row - W_KEEP + F_KEEP, col + i] = probs[i]
    ws[W_MEMO + 3 * side, key] = tag
    ws[W_MEMO + 3 * side + 1, key] = row * n + col
    ws[W_MEMO + 3 * side + 2, key] = count
    ws[W_META, 2 + side] = (row - W_KEEP - side * KEEP_ROWS) * n + col + count


@kernel(refs=False)
def _fire(xst, xr, xpmf, x, subs_fire, others_fire, air_subs, extra_pmf, yst, yr, y, rules,
          where, states, probs):
    """Law of side y's state after side x (in state x) fires once: its subs (if subs_fire)
    and its other units (if others_fire), plus extra_pmf hits at non-air units (shore
    bombardment; [1.0] when none).  With low-luck dice, general fire goes in groups
    (kernels/rules.fire_groups).  Hits of a kind beyond what y has for them to land on take
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
                scratch, eps, out, rounds):
    """One round from the pair (a, d) in the general round model; returns (result, stay, w).

    stay: the probability that the round changes nothing.  mode SPREAD: add w * P(next pair)
    to mass[a2 - a_base, d2], skipping moves of eps or less; closed: the "nothing changes" part
    is left out and w = m / (1 - stay) (the closed-form sweep), else w = m and everything moves
    (a round played on its own); a lone-transport retreat is recorded as an outcome; result:
    the mass moved.  GATHER: result = the sum over the next pairs but (a, d) itself of
    P(pair) * value[pair] (0 for a lone-transport retreat).  bombard_pmf: hits joining the
    attacker's fire at non-air units (`one` = [1.0] when none).  scratch: sparse lists, two
    levels per side; out: the outputs of `_finish`, rounds: the round being played.  A, D:
    each side's tables.ExactSide.  (The kernels called for each state pair take the arrays
    they need, not the battle's tables.ExactBattle: numba passes a NamedTuple as all of its
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
def _finish(outcome, m, a, d, rounds, ast, out):
    """Record probability m of the battle ending with `outcome` in the pair (a, d) after
    `rounds` rounds into out (tables.ExactOut)."""
    out.outcomes[outcome] += m
    out.a_final[a] += m
    out.d_final[d] += m
    if out.joint.shape[0] > 0:
        out.joint[a, d] += m
    rounds_hist = out.rounds_hist
    rounds_hist[min(rounds, rounds_hist.shape[0] - 1)] += m
    if outcome == ATTACKER_WIN and ast[a, S_HAS_LAND] == 1:
        out.totals[TOTAL_TAKES] += m




@kernel(refs=False)
def _kept_range(cum_row, lo, hi, allow):
    """The hit counts lo'..hi' of lo..hi that are played when each tail of the law (running
    sums cum_row) may leave out at most `allow` probability."""
    base = cum_row[lo - 1] if lo > 0 else 0.0
    while lo < hi and cum_row[lo] - base <= allow:
        lo += 1
    top = cum_row[hi]
    while hi > lo and top - cum_row[hi - 1] <= allow:
        hi -= 1
    return lo, hi


@kernel(refs=False)
def _play(A, D, rules, a, d, bombard, one, m, mass, a_base, merge, closed, scratch, eps, tail,
          out, rounds):
    """Spread one round from (a, d), holding mass m, into mass (rows: attacker state - a_base;
    merge: see _spread_walk, land fast path only).
    closed: the closed-form sweep: the "nothing changes" part stays out and the rest moves
    with weight w = m / (1 - its probability); else the round is played on its own (w = m).
    tail: probability the round may leave out in the tails of both sides' hit laws (land fast
    path; 0: none).  Returns (mass moved, w)."""
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
    moved, _, w = _transition(A, D, rules, a, d, bombard, one, VALUES[SPREAD], m, mass, a_base,
                              closed, _grid(mass), scratch, eps, out, rounds)
    return moved, w


@kernel(refs=False)
def _fight_on(A, D, rules, a, d, one, value, scratch, out):
    """The attacker's chance to win if a round is fought from (a, d): the value of every pair
    it may lead to, (a, d) itself summed in closed form."""
    ast, ar, apmf = A.states, A.rows, A.pmf
    dst, dr, dpmf = D.states, D.rows, D.pmf
    if rules[RU_SIMPLE] == 0:
        total, stay, _ = _transition(A, D, rules, a, d, one, one, VALUES[GATHER], 0.0, value,
                                     VALUES[0], FLAGS[1], value, scratch, 0.0, out, VALUES[0])
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


@kernel
def _scratch(n_a, n_d):
    """Work arrays of _transition (see W_A): sparse lists, two levels a side (index maps,
    NO_STATE: not listed), and the fire-list memo."""
    n = max(n_a, n_d, 4)
    # only the maps, the memo and its meta are read before written: the rest is left as it
    # comes (a land battle of many AA blocks uses none of it, and zeroing it all cost them)
    ws = np.empty((W_KEEP + 2 * KEEP_ROWS, n), dtype=np.int64)
    for row in range(W_KEEP):
        for i in range(n):
            ws[row, i] = NO_STATE
    ws[W_META, 1] = 0
    return ws, np.empty((F_KEEP + 2 * KEEP_ROWS, n))


@kernel(refs=False)
def _withdraw_or_finish(outcome, m, a, d, rounds, ast, remainder, out):
    """The battle ends in (a, d); a partial retreat (remainder[a] not FULL_RETREAT) instead
    sends the mass to the start of the stayers' block (out.transfer), solved afterwards."""
    if outcome == RETREAT and remainder[a] != FULL_RETREAT:
        out.transfer[ast[remainder[a], S_BLOCK], d] += m
    else:
        _finish(outcome, m, a, d, rounds, ast, out)


@kernel
def _solve_block(b, phase, battle, out, explicit):
    """Solve attacker block b of a battle (tables.ExactBattle) into out (tables.ExactOut) if
    it belongs to `phase` (0: blocks a battle starts in; 1: blocks of the units that stay
    after a partial retreat); the first `explicit` rounds are played one at a time.  b = -1
    (a battle with battle.merge): every block at once, in one table of the attacker's states
    (each block's start row holding its probability: _solve_merged)."""
    ab, transfer = battle.blocks, out.transfer
    ast, dst = battle.att.states, battle.dfn.states
    if b >= 0 and ((ab[b, B_KIND] == BLOCK_STAYERS) != (phase == 1) or (
            phase == 1 and not transfer[b].any())):
        return
    n_d = dst.shape[0]
    size = ast.shape[0] if b < 0 else _block_size(ab, b)
    # the general round's work arrays; the fast path (_play) uses none of them, the closed
    # sweep of two walks (_sweep_walks) arrays of its own, as big and as many
    general = battle.rules[RU_SIMPLE] == 0 or (battle.rules[RU_BOMBARD] == 1
                                               and battle.bombard_pmf.shape[0] > 1)
    if general:
        scratch = _scratch(ast.shape[0], n_d)
    else:
        scratch = (np.empty((2, n_d), dtype=np.int64), np.empty((3, n_d)))
    _solve_tables(b, phase, battle, out, explicit, np.zeros((size, n_d)), scratch, general)


@kernel(nogil=True)
def _solve_compact(battle, stacks, explicit):
    """Solve a battle of one attacker block, the general round and no partial retreat in a
    compact mass table of battle.table_rows x battle.table_cols (see M_ROWS) into row 0 of
    the stacks, with its FULL and WORK in TOTAL_FULL, TOTAL_WORK.  (A kernel of its own: a
    dense solve never compiles the compact table's kernels.)"""
    out = _out(stacks, VALUES[0])
    n_a, n_d = battle.att.states.shape[0], battle.dfn.states.shape[0]
    mass = _compact_table(_block_size(battle.blocks, 0), n_d, battle.table_rows,
                          battle.table_cols)
    _solve_tables(VALUES[0], VALUES[0], battle, out, explicit, mass, _scratch(n_a, n_d),
                  FLAGS[1])
    maps = mass[1]
    out.totals[TOTAL_FULL] = maps[M_FILL, FULL]
    out.totals[TOTAL_WORK] = maps[M_FILL, WORK]


@kernel
def _solve_tables(b, phase, battle, out, explicit, mass, scratch, general):
    """_solve_block's solve of block b in the mass table `mass` (zeros: dense, or compact; see
    M_ROWS), with the work arrays scratch (general: the general round's)."""
    ab, transfer = battle.blocks, out.transfer
    merge = battle.merge
    base = 0 if b < 0 else ab[b, B_OFFSET]
    rounds_hist = out.rounds_hist
    n_d = battle.dfn.states.shape[0]
    one = battle.one
    first_round = battle.bombard_pmf if battle.rules[RU_BOMBARD] == 1 else one
    rounds_played = 0
    check_retreat = True
    # (element by element: an array assignment brings numba's shape-error formatting, seconds
    # of compiling)
    start = 0.0  # the block's starting probability
    if b < 0:
        for s in range(ab.shape[0]):
            first = ab[s, B_OFFSET]
            for d in range(n_d):
                _put(mass, merge[first], d, battle.a_start[first] * battle.d_start[d])
        for d in range(n_d):
            start += _grid(mass)[0, d]
    for d in range(n_d if b >= 0 else 0):
        p = transfer[b, d] if phase == 1 else battle.a_start[base] * battle.d_start[d]
        start += p
        if p != 0.0:
            _put(mass, 0, d, p)
    if phase == 1:
        # the units that stayed after a partial retreat, at the end of some round: no more
        # retreats, nothing round-dependent left
        check_retreat = False
        rounds_played = rounds_hist.shape[0]
        explicit = 0
    # the block's share of the pruning budget: the shares of all blocks of both phases add up
    # to at most battle.budget, whatever the threads
    budget = battle.budget * (start + (1.0 if b < 0 else 1.0 / ab.shape[0])) / 4.0
    spent = np.zeros(1)
    # (the table now: `mass` itself is never assigned, so that numba tells its kind apart)
    table = mass
    while rounds_played < explicit:
        after = _like(mass, False)
        _count_work(mass, _grid(after).size // SCAN_CELLS)  # (a fresh table, zeroed)
        _sweep_round(battle, table, after, base, rounds_played, FLAGS[1], FLAGS[0],
                     first_round if rounds_played == 0 else one, out, scratch, spent, budget,
                     b < 0, _like(mass, True))
        table = after
        rounds_played += 1
    # every later round alike: solved in one sweep, each state's "nothing changes" part in
    # closed form, mass moving onwards within the table itself
    if isinstance(mass, tuple):
        walks = False
    else:
        walks = battle.rules[RU_SIMPLE] != 0 and battle.budget == 0.0 and battle.row_sweep
        if walks:
            _sweep_walks(battle, table, base, rounds_played, check_retreat, out, b < 0,
                         scratch)
    if not walks:
        # (the table after the strikes, where the general round may be played in two phases)
        inter = _like(mass, not (general and battle.phased and b >= 0))
        _sweep_round(battle, table, table, base, rounds_played, check_retreat, FLAGS[1], one,
                     out, scratch, spent, budget, b < 0, inter)


@kernel(refs=False)
def _sweep_walks(battle, mass, base, rounds_played, check_retreat, out, merged, scratch):
    """_sweep_round's closed-form sweep for the fast path (two single walks: land, or sea
    without submarines) with no pruning budget, an attacker state (a row of mass) at a time:
    the rounds from each pair (a, d) of the row are first played as far as the row itself (the
    defender's 0 hits: the pairs after (a, d) in the row must have all of their probability
    before their turn), then every later row at once: for each defender hit count hd, the
    weights u[d] of the row's pairs spread by the attacker's hit law (the same for the whole
    row) onto the row a + hd, one long run over d per attacker hit count (instead of short
    runs over the hit counts per pair: the same sums, other order).  Skipped as in _play /
    _spread_walk: hit counts outside each state's kept range and moves of battle.eps or less.
    scratch: work arrays, int[2, n_d] and float[3, n_d] (_solve_block's, for this sweep)."""
    A, D, rules, retreat = battle.att, battle.dfn, battle.rules, battle.retreat
    ast, dst, remainder = A.states, D.states, retreat.remainder
    apmf, acum, ar = A.pmf, A.cdf, A.rows
    dpmf, dcum, dr = D.pmf, D.cdf, D.rows
    eps, state_eps = battle.eps, battle.state_eps
    totals = out.totals
    merge = battle.merge if merged else battle.merge[:0]
    n_d = mass.shape[1]
    d_end = dst[0, S_OTHER]  # the defender's last state (one walk)
    # each defender state's kept hit counts (as _play keeps them with no tail to leave out),
    # found the first time a pair of it is played (-1: not yet; a battle over at once, a sea
    # battle against transports only, finds none)
    d_kept, work = scratch
    d_lo, d_hi = d_kept[0], d_kept[1]
    for d in range(n_d):
        d_lo[d] = d_hi[d] = -1
    w_row = work[0]  # w of each pair of the row played (0: not played)
    u = work[1]  # (u and tail: written for the row's played range before they are read)
    tail = work[2]  # the attacker's hits from d on that wipe the defender out
    a_row, a_cum = apmf[base], acum[base]
    a_lo = a_hi = 0
    row_mass = 0.0
    for i in range(battle.sweep.shape[0] if merged else mass.shape[0]):
        k = battle.sweep[i] if merged else i
        a = base + k
        ready = False  # the row's hit law and kept range, read at its first pair played
        length = a + ast[a, S_OTHER] - base
        own = mass[k]
        first, last, hd_top = n_d, -1, 0
        played = kept = 0.0
        for d in range(n_d):
            w_row[d] = 0.0
            m = own[d]
            if m == 0.0:
                continue
            kind, a2, d2, outcome = _enter(ast, dst, rules, retreat, a, d, rounds_played,
                                           check_retreat)
            if kind == MOVE:
                mass[merge[a2] if merged else a2 - base, d2] += m
                continue
            if kind == END:
                _withdraw_or_finish(outcome, m, a, d, rounds_played, ast, remainder, out)
                continue
            if m < state_eps:
                totals[TOTAL_PRUNED] += m  # a state this unlikely is not worth a round
                continue
            if not ready:
                a_row, a_cum = apmf[a], acum[a]
                a_lo, a_hi = _kept_range(a_cum, ar[a, R_LO], ar[a, R_HI], 0.0)
                row_mass = a_cum[a_hi] - (a_cum[a_lo - 1] if a_lo > 0 else 0.0)
                ready = True
            if d_lo[d] < 0:
                d_lo[d], d_hi[d] = _kept_range(dcum[d], dr[d, R_LO], dr[d, R_HI], 0.0)
            w = m / (1.0 - a_row[0] * dpmf[d, 0])
            totals[TOTAL_ROUNDS] += w
            played += m
            w_row[d] = w
            first, last, hd_top = min(first, d), d, max(hd_top, d_hi[d])
            if d_lo[d] == 0:  # the defender scores nothing: the rest of this row
                wd = w * dpmf[d, 0]
                if wd > eps:
                    top = min(a_hi, d_end - d - 1)
                    for ha in range(max(a_lo, 1), top + 1):
                        own[d + ha] += wd * a_row[ha]
                    if a_hi >= d_end - d:
                        start = max(a_lo, d_end - d)
                        own[d_end] += wd * (a_cum[a_hi] - (a_cum[start - 1] if start > 0
                                                            else 0.0))
                    kept += wd * (row_mass - (a_row[0] if a_lo == 0 else 0.0))
        if last < 0:
            continue
        for d in range(first, last + 1):
            start = max(a_lo, d_end - d)
            tail[d] = (a_cum[a_hi] - (a_cum[start - 1] if start > 0 else 0.0)
                       if start <= a_hi else 0.0)
        for hd in range(1, hd_top + 1):
            r = min(k + hd, length)
            target = mass[merge[r] if merged else r]
            total = spill = 0.0
            for d in range(first, last + 1):
                wd = w_row[d] * dpmf[d, hd] if d_lo[d] <= hd <= d_hi[d] else 0.0
                wd = wd if wd > eps else 0.0
                u[d] = wd
                total += wd
                spill += wd * tail[d]
            if total == 0.0:
                continue
            # the pairs that move with hd defender hits, lo..hi (as plain Python, the runs
            # over the others would double a big battle's time)
            lo, hi = first, last
            while u[lo] == 0.0:
                lo += 1
            while u[hi] == 0.0:
                hi -= 1
            kept += total * row_mass
            target[d_end] += spill
            for ha in range(a_lo, a_hi + 1):
                p = a_row[ha]
                # the pairs whose ha hits leave a defender: d + ha < d_end
                stop = min(hi + 1, d_end - ha)
                if stop <= lo:
                    break
                run = target[lo + ha:stop + ha]
                weights = u[lo:stop]
                for j in range(run.shape[0]):
                    run[j] += p * weights[j]
        totals[TOTAL_PRUNED] += played - kept


@kernel(refs=False)
def _sweep_round(battle, mass, target, base, rounds_played, check_retreat, closed, dice, out,
                 scratch, spent, budget, merged, inter):
    """Play one round from every state of a block (mass rows: attacker state - base) into
    target; states that end the battle are finished, states that only move (losses without
    dice, submerging) pass their mass on within `mass`.  dice: the extra first-round pmf
    (bombardment) or battle.one; closed: see _play.  Pruning: states below battle.state_eps
    are dropped, and within the block's budget (probability; spent[0] so far, all pruning
    counted) states below battle.prune_eps and tails of hit laws of up to battle.tail_eps a
    state (_play).  merged: the table of every block at once (base 0): its rows battle.sweep,
    in that order, state a's probability in row battle.merge[a].  inter: the table of pairs
    after the strikes of the closed sweep's two-phase rounds (_play_phased; 0 x 0: none).
    A compact table (see M_ROWS) is swept in the same order; one that fills up, or whose work
    passes battle.work_limit, stops the sweep (its FULL says so)."""
    A, D, rules, retreat, one = battle.att, battle.dfn, battle.rules, battle.retreat, battle.one
    ast, dst, remainder = A.states, D.states, retreat.remainder
    eps, state_eps, prune_eps, tail_eps = (battle.eps, battle.state_eps, battle.prune_eps,
                                           battle.tail_eps)
    totals = out.totals
    merge = battle.merge if merged else battle.merge[:0]
    grid, igrid = _grid(mass), _grid(inter)
    two = igrid.shape[0] > 0 and closed and not merged and dice.shape[0] == 1
    for i in range(battle.sweep.shape[0] if merged else _table_size(mass, M_ROWS)):
        k = battle.sweep[i] if merged else i
        r = _table_place(mass, M_ROWS, k)
        if r == NO_STATE:
            continue
        if _stopped(mass, battle.work_limit):
            return  # the compact table is full (the driver solves again with a bigger one),
            # or its work passed the limit
        _count_work(mass, _table_size(mass, M_COLS) // SCAN_CELLS)  # (the row's scan)
        for d in range(_table_size(mass, M_COLS)):
            c = _table_place(mass, M_COLS, d)
            if c == NO_STATE:
                continue
            m = grid[r, c]
            im = igrid[r, c] if two else 0.0
            if m == 0.0 and im == 0.0:
                continue
            kind, a2, d2, outcome = _enter(ast, dst, rules, retreat, base + k, d, rounds_played,
                                           check_retreat)
            # a pair this unlikely is not worth a round, within the budget (once it is spent,
            # such a pair is played as any other)
            drop = m + im < prune_eps and spent[0] + m + im <= budget
            if (two and kind == PLAY and m + im >= state_eps and not drop
                    and _phased(ast, dst, base + k, d, rules)):
                kept, w = _play_phased(A, D, rules, base + k, d, one, m, im, mass, inter, base,
                                       scratch, eps)
                totals[TOTAL_ROUNDS] += w
                totals[TOTAL_PRUNED] += m - kept
                spent[0] += m - kept
                continue
            if im != 0.0 and kind == PLAY and drop:
                # its own mass m and the mass im that earlier pairs' strikes left it for
                # general fire are dropped together
                totals[TOTAL_PRUNED] += m + im
                spent[0] += m + im
                continue
            if im != 0.0:
                # general fire after the strikes of earlier pairs, then the pair as it is
                kept = _spread_after_strikes(A, D, rules, base + k, d, one, im, mass, base,
                                             scratch, eps)
                totals[TOTAL_PRUNED] += im - kept
                spent[0] += im - kept
                m = grid[r, c]
                if m == 0.0:
                    continue
            if kind == MOVE:
                # units lost without dice, subs submerged
                _put(mass, merge[a2] if merged else a2 - base, d2, m)
            elif kind == END:
                _withdraw_or_finish(outcome, m, base + k, d, rounds_played, ast, remainder, out)
            elif m < state_eps or (m < prune_eps and spent[0] + m <= budget):
                totals[TOTAL_PRUNED] += m  # a state this unlikely is not worth a round
                spent[0] += m
            else:
                tail = min(tail_eps, budget - spent[0])
                kept, w = _play(A, D, rules, base + k, d, dice, one, m, target, base, merge,
                                closed, scratch, eps, tail, out, rounds_played + 1)
                totals[TOTAL_ROUNDS] += w
                totals[TOTAL_PRUNED] += m - kept
                spent[0] += m - kept


@kernel
def _out(stacks, i):
    """The outputs (tables.ExactOut) of block row i of the per-block stacks (outcomes, d_final,
    totals, rounds_hist; a_final, joint and transfer shared: blocks write only their own
    states)."""
    return ExactOut(stacks.outcomes[i], stacks.a_final, stacks.d_final[i], stacks.joint,
                    stacks.totals[i], stacks.rounds_hist[i], stacks.transfer)


@kernel(nogil=True)
def _solve_blocks(first, last, phase, battle, stacks, explicit):
    """Solve attacker blocks first..last-1 of one phase (see _solve_block), block b writing
    row b of the stacks, or row 0 when they have one row.  A battle with battle.sweep (its
    blocks merged: exact._merged_blocks): every block at once, into row 0, by the call that
    has block 0 of phase 0 (the driver makes one call)."""
    if battle.sweep.shape[0] > 0:
        if first == 0 and last > 0 and phase == 0:
            _solve_block(VALUES[0] - 1, phase, battle, _out(stacks, VALUES[0]), explicit)
        return
    for b in range(first, last):
        _solve_block(b, phase, battle, _out(stacks, b if stacks.outcomes.shape[0] > 1 else 0),
                     explicit)


@kernel(nogil=True)
def _win_values(battle, out, value, scratch, a_first, a_last):
    """Fill battle.retreat.win_value[a, d] for attacker states a_last-1 down to a_first: the
    probability that the attacker wins if it fights on from the end-of-round pair (a, d),
    itself retreating later as the policy says (the policy must not depend on the round).
    Swept backwards, so every successor is known first: the driver calls this for
    consecutive ranges, from the top, with the same value[n_a, n_d] (at (a, d) after the
    retreat decision there) and scratch (_scratch) throughout."""
    A, D, rules, retreat, one = battle.att, battle.dfn, battle.rules, battle.retreat, battle.one
    ast, dst = A.states, D.states
    win_value, remainder = retreat.win_value, retreat.remainder
    n_d = win_value.shape[1]
    for a in range(a_last - 1, a_first - 1, -1):
        for d in range(n_d - 1, -1, -1):
            kind, a2, d2, outcome = _enter(ast, dst, rules, retreat, a, d, VALUES[1], FLAGS[0])
            if kind == END:
                fight = 1.0 if outcome == ATTACKER_WIN else 0.0
            elif kind == MOVE:
                fight = value[a2, d2]
            else:
                fight = _fight_on(A, D, rules, a, d, one, value, scratch, out)
            win_value[a, d] = fight
            value[a, d] = fight
            if kind != END and should_retreat(a, d, 1, retreat, ast, dst):
                # a full retreat wins nothing; after a partial one the stayers fight on
                value[a, d] = value[remainder[a], d] if remainder[a] != FULL_RETREAT else 0.0


# ---------------------------------------------------------------------------------------------
# Drivers

PARALLEL_SECONDS = 0.01  # above this, attacker blocks are solved on several threads
PYTHON_SLOWDOWN = 300  # plain Python against compiled kernels, roughly
JOINT_LIMIT = 4_000_000  # keep the joint final law (for the TUV-swing law) below this
CALL_SECONDS = 0.25  # kernel calls of about this (estimated), so Ctrl-C ends the work soon
SHORT_SECONDS = 0.02  # solves estimated below this run in the calling thread (jit.call)


def _block_range(first, last, solve_blocks, offset, phase, *args):
    """solve_blocks over blocks offset+first .. offset+last-1 (jit.threads splits first..last)."""
    solve_blocks(offset + first, offset + last, phase, *args)


def _battle(compiled, settings: tuple[float, ...] | None = None, merge=None,
            table: tuple[int, int] = (0, 0), work_limit: int = 0) -> ExactBattle:
    """The compiled battle as the exact kernels take it (settings: _settings of its size;
    merge: (merge, sweep) of _merged_blocks, or None: block by block; table: the compact mass
    table's rows and columns, (0, 0): dense; work_limit: ExactBattle's)."""
    att, dfn = compiled.attacker, compiled.defender
    if settings is None:
        settings = _settings(att.n_states * dfn.n_states)
    return ExactBattle(ExactSide(att.states, att.rows, att.pmf, att.cdf),
                       ExactSide(dfn.states, dfn.rows, dfn.pmf, dfn.cdf), att.blocks,
                       compiled.rules, att.start, dfn.start, compiled.bombardment.pmf,
                       np.ones(1), compiled.retreat_tables(), *settings,
                       *(merge or (NO_MERGE, NO_MERGE)), ROW_SWEEP, TWO_PHASE, *table,
                       work_limit)


COMPACT_PAIRS = 4_000_000  # a general-round battle of more state pairs gets a compact table
TABLE_START = 1024  # a compact table's first rows and columns (each x 4 when they run out)
TABLE_CELLS = 64_000_000  # and its most cells (beyond that: too big to solve exactly)
WORK_RATE = 400_000_000  # a compact table's solve's work a second, about (idle 2-core machine)


class TooBigToSolve(BattleInputError):
    """A compact table's solve passed its work limit (ExactSolve's max_seconds) or its
    biggest table (TABLE_CELLS): `auto` takes Monte Carlo instead."""


def compact_table(compiled) -> tuple[int, int]:
    """The first size (rows, columns) of the compact mass table of a battle solved with one
    (a general-round battle of one attacker block, no bombardment, no partial retreat, of
    more than COMPACT_PAIRS state pairs: its mass keeps to a few hundred states a side), or
    (0, 0): dense."""
    att, dfn = compiled.attacker, compiled.defender
    if (compiled.rules[RU_SIMPLE] or compiled.rules[RU_BOMBARD] or len(att.blocks) != 1
            or compiled.has_partial_retreat or att.n_states * dfn.n_states <= COMPACT_PAIRS):
        return 0, 0
    return min(att.n_states, TABLE_START), min(dfn.n_states, TABLE_START)


def _grown_table(compiled, table: tuple[int, int], full: int) -> tuple[int, int]:
    """The compact table after one that ran out of rows (full & 1) or columns (full & 2):
    four times as many of those; TooBigToSolve where that passes TABLE_CELLS."""
    rows, cols = table
    if full & 1:
        rows = min(compiled.attacker.n_states, 4 * rows)
    if full & 2:
        cols = min(compiled.defender.n_states, 4 * cols)
    if rows * cols > TABLE_CELLS or (rows, cols) == table:
        raise TooBigToSolve(
            f"battle too large to solve exactly (its probability spreads over more than "
            f"{TABLE_CELLS:,} state pairs); use --method mc for Monte Carlo")
    return rows, cols


MERGE_BLOCKS = True  # False: attacker blocks are always solved one by one (tests compare)
ROW_SWEEP = True  # False: the land fast path's closed sweep a pair at a time (tests compare)
TWO_PHASE = True  # False: no general round in two phases (_play_phased; tests compare)
MERGE_SHARE = 0.5  # a battle solved block by block on threads is merged below this share


_MIX = np.random.default_rng(19).integers(1, 2**62, size=256)  # merged_walks' column hash


def merged_walks(side) -> tuple[np.ndarray, np.ndarray] | None:
    """(merge, sweep) of a side of several blocks of single walks (land, after round-1 AA
    fire): merge[a] is a itself or the state of block 0 that a equals (the same units, fire,
    columns and everything after it: block b, its aircraft shot down, often reaches a state
    of block 0 after a few casualties, or at once when its casualties are aircraft first);
    sweep, the states that are their own, most casualty steps left first (so every state
    comes after each state that can reach it).  None: nothing merges, or not such a side.
    compile.Side.merged_walks keeps it with the side."""
    blocks, st = side.blocks, side.states
    if (len(blocks) < 2 or (blocks[:, B_KIND] != BLOCK_START).any()
            or (blocks[:, B_RADIX_S] != 1).any() or (blocks[:, B_RADIX_A] != 1).any()):
        return None
    rows = st[:, S_ROW_N]
    same = np.ones(st.shape[1], dtype=bool)
    # (not compared: where the state lies in its own block's table and rows)
    same[list(S_PLACE)] = False
    # (nor the rank of the next casualty: it only orders one category against another)
    ints = np.hstack([st[:, same], side.survivors, side.rows[rows][:, [R_TOP, R_LO, R_HI,
                                                                        R_STRENGTH]]])
    # each state's twin: the state of block 0 with the same columns, units and fire (found
    # by a hash of the columns, then compared in full: a clash only merges less)
    n, n_0 = len(st), int(blocks[0, B_RADIX_N])
    code = ints @ _MIX[:ints.shape[1]]
    order = np.argsort(code[:n_0])
    at = np.minimum(np.searchsorted(code[:n_0], code, sorter=order), n_0 - 1)
    twin = order[at]
    found = ((code[twin] == code) & (ints[twin] == ints).all(axis=1)
             & (side.pmf[rows[twin]] == side.pmf[rows]).all(axis=1)
             & (side.cdf[rows[twin]] == side.cdf[rows]).all(axis=1))
    # a state of block 1 or later is merged if it and every later state of its block have
    # twins, each the twin's successor's predecessor (the last: block 0's last state)
    last = np.zeros(n, dtype=bool)
    last[blocks[:, B_OFFSET] + blocks[:, B_RADIX_N] - 1] = True
    ok = found & np.where(last, twin == n_0 - 1, np.append(twin[1:] == twin[:-1] + 1, False))
    ok[:n_0] = False
    fails = np.cumsum(~ok[::-1])[::-1]  # states not ok from each state to the very last
    end = np.repeat(blocks[:, B_OFFSET] + blocks[:, B_RADIX_N], blocks[:, B_RADIX_N])
    after = np.append(fails, 0)[end]
    merge = np.where(fails == after, twin, np.arange(n, dtype=np.int64))
    merge[:n_0] = np.arange(n_0)
    own = np.flatnonzero(merge == np.arange(n))
    if len(own) == n:
        return None
    return merge, own[np.argsort(-st[own, S_OTHER], kind="stable")]


def _merged_blocks(compiled, seconds: float) -> tuple[np.ndarray, np.ndarray] | None:
    """The attacker's merged_walks where the exact solve may use them: the land fast path
    with no bombardment and no partial retreat (a retreat decides by a state's units, the
    same in its twin), and either the merged table is at most MERGE_SHARE of the blocks'
    states or the blocks would not be solved on threads anyway (so the choice never depends
    on the thread count)."""
    rules, att = compiled.rules, compiled.attacker
    if (not MERGE_BLOCKS or not rules[RU_SIMPLE] or rules[RU_BOMBARD] or len(att.blocks) < 2
            or compiled.has_partial_retreat):
        return None
    merge = att.merged_walks
    if merge is None or (len(merge[1]) > MERGE_SHARE * att.n_states
                         and seconds > PARALLEL_SECONDS):
        return None
    return merge


def _settings(pairs: int) -> tuple[float, ...]:
    """The thresholds of tables.ExactBattle (eps, state_eps, prune_eps, tail_eps, budget) for
    a battle of `pairs` state pairs, from this module's constants as they are now: pruning
    within PRUNE_BUDGET for a battle of PRUNE_PAIRS state pairs or more (PRUNING switches it
    off), none below (their answers stay exact to about 1e-15)."""
    if PRUNING and pairs >= PRUNE_PAIRS:
        return TRANSITION_EPS, STATE_EPS, PRUNE_STATE_EPS, PRUNE_TAIL_EPS, PRUNE_BUDGET
    return TRANSITION_EPS, STATE_EPS, 0.0, 0.0, 0.0


def _solve_settings(pairs: int) -> tuple:
    """What an ExactSolve's prepared battle depends on besides the battle: _settings, and
    whether blocks are merged and the land sweep goes a row at a time."""
    return _settings(pairs), MERGE_BLOCKS, ROW_SWEEP, TWO_PHASE


def seconds_estimate(compiled) -> float:
    """Rough seconds of an exact solve with compiled kernels on two cores: state pairs times
    their cost a round (land: the rectangle of both sides' hit counts; the general round: both
    sides' hit combinations, each one assignment, and their product), times the share of the
    pairs a big battle reaches (_band_share).  Calibrated on land and sea battles of 20 to 300
    units a side (benchmarks/bench_big.py's, one machine); meant for choosing a method,
    within a factor of a few.  Attacker blocks solved in one table (_merged_blocks): that
    share of the blocks' states."""
    att, dfn = compiled.attacker, compiled.defender
    pairs = att.n_states * dfn.n_states
    band = _band_share(pairs / len(att.blocks))
    mean_a, mean_d = att.mean_hit_combinations, dfn.mean_hit_combinations
    if not compiled.rules[RU_SIMPLE]:
        return pairs * band * (1e-7 + 4e-9 * (mean_a + mean_d) + 2e-10 * mean_a * mean_d)
    seconds = pairs * band * (1e-7 + 2e-10 * mean_a * mean_d)
    merge = _merged_blocks(compiled, seconds)
    return seconds if merge is None else seconds * len(merge[1]) / att.n_states


BAND_PAIRS = 8000  # state pairs of a block beyond which a battle's mass keeps to a band
BAND_FLOOR = 0.08  # the least share (fitted: 1000 v 900 land, one block of 900,000 pairs)


def _band_share(block_pairs: float) -> float:
    """The share of a block's state pairs the solve plays on: all of a small block, less of a
    big one, whose mass keeps to a band around the likely course of the battle (fitted:
    (BAND_PAIRS / pairs) ** 0.85, at least BAND_FLOOR)."""
    return min(1.0, max(BAND_FLOOR, (BAND_PAIRS / max(block_pairs, 1.0)) ** 0.85))


_python_seconds = [0.0]  # estimated time this process has spent in plain-Python solves


def _kernels(seconds: float, progress=None):
    """This module with its kernels compiled, unless the solve is small enough for Python.

    A process that keeps solving (a planner, a sweep, a server) compiles once its
    plain-Python solves add up to about half a second: loading the compiled kernels costs
    about that much once, and each solve is then a few hundred times faster.
    """
    python_seconds = seconds * PYTHON_SLOWDOWN
    if not jit.is_compiled() and _python_seconds[0] + python_seconds >= 0.5:
        jit.compiled()
        jit.compiling_notice(globals()["_solve_blocks"], progress)
    elif not jit.is_compiled():
        _python_seconds[0] += python_seconds
    return globals()


def win_values_seconds(compiled) -> float:
    """Rough seconds of fill_win_values (one thread, compiled kernels): unlike the solve, it
    plays a round from every state pair, reachable or not, and sums every successor (land:
    the rectangle of both sides' hit counts; the general round: each pair's successors
    gathered one by one).  Calibrated like seconds_estimate, on land and sea battles of 4 to
    630,000 state pairs (benchmarks/bench_engine.py's machine), within a factor of about 2."""
    att, dfn = compiled.attacker, compiled.defender
    pairs = att.n_states * dfn.n_states
    if compiled.rules[RU_SIMPLE]:
        return pairs * (2e-7 + 1.8e-9 * att.mean_hit_combinations * dfn.mean_hit_combinations)
    return pairs * (1e-6 + 1e-7 * (att.mean_hit_combinations + dfn.mean_hit_combinations))


WIN_VALUE_CALL_SECONDS = 0.1  # work per kernel call of fill_win_values: how often it reports


def fill_win_values(compiled, seconds: float, progress=None) -> None:
    """Fill compiled.retreat.win_value (--retreat-below): the per-state win probabilities.

    seconds: win_values_seconds(compiled).  The table is filled a range of attacker states at
    a time (about WIN_VALUE_CALL_SECONDS each), progress(done, total, "retreat-below table")
    counting state pairs after each, so a caller's progress hook can stop it by raising."""
    retreat = compiled.retreat
    k = _kernels(seconds, progress)
    n_a, n_d = retreat.win_value.shape
    total = n_a * n_d
    if progress is not None:
        progress(0, total, "retreat-below table")
    value = np.zeros((n_a, n_d))
    scratch = k["_scratch"](n_a, n_d)
    out = k["_out"](_stacks(n_a, n_d, len(compiled.attacker.blocks), False, 1, 1), 0)
    battle = _battle(compiled)
    slowdown = 1 if jit.is_compiled() else PYTHON_SLOWDOWN
    step = max(1, int(n_a * WIN_VALUE_CALL_SECONDS / max(seconds * slowdown, 1e-9)))
    for a_last in range(n_a, 0, -step):
        a_first = max(0, a_last - step)
        jit.call(k["_win_values"], battle, out, value, scratch, a_first, a_last,
                 short=seconds < SHORT_SECONDS)
        if progress is not None:
            progress((n_a - a_first) * n_d, total, "retreat-below table")


def _stacks(n_a: int, n_d: int, n_blocks: int, joint: bool, rounds_bins: int,
            rows: int) -> ExactOut:
    """Fresh outputs (zeros) of a solve of n_a x n_d states writing `rows` rows of per-block
    stacks (joint: with the joint final law)."""
    return _outputs(_shapes(n_a, n_d, n_blocks, joint, rounds_bins, rows))


def _shapes(n_a: int, n_d: int, n_blocks: int, joint: bool, rounds_bins: int,
            rows: int) -> tuple:
    """The shapes of the arrays of _stacks, in the order of tables.ExactOut."""
    return ((rows, N_OUTCOMES), n_a, (rows, n_d), (n_a, n_d) if joint else (0, 0),
            (rows, TOTAL_COLS), (rows, rounds_bins), (n_blocks, n_d))


def _outputs(shapes: tuple) -> ExactOut:
    """Fresh outputs (zeros) of the shapes of _shapes."""
    outcomes, a_final, d_final, joint, totals, rounds_hist, transfer = shapes
    zeros = np.zeros
    return ExactOut._make((zeros(outcomes), zeros(a_final), zeros(d_final), zeros(joint),
                           zeros(totals), zeros(rounds_hist), zeros(transfer)))


class ExactSolve:
    """run_exact's work on one compiled battle, prepared once: the kernels' view of the battle
    (tables.ExactBattle), the sizes of the outputs, the estimate, and for a solve that is
    `kept` (solved again later: a kept plan, battlecalc.api), after its first short solve by
    compiled kernels, the compiled kernel itself (jit.overload): each later solve (again)
    costs the kernel and its fresh outputs, about 0.5 us of Python on a tiny battle besides
    their 1 us of np.zeros (the FinalLaw, law_of, where the caller needs it).  Nothing is kept
    between solves but read-only tables: every solve writes new outputs, and threads may share
    one ExactSolve (but for one of a compact table, which grows its table in place: api makes
    one for each solve)."""

    __slots__ = ("compiled", "rounds_bins", "seconds", "explicit", "pairs", "joint", "n_a",
                 "n_d", "n_blocks", "shapes", "phases", "settings", "battle", "merged", "entry",
                 "kept", "table", "work", "work_limit")

    def __init__(self, compiled, rounds_bins: int = 1, seconds: float | None = None,
                 kept: bool = False, max_seconds: float | None = None):
        att, dfn = compiled.attacker, compiled.defender
        self.compiled, self.rounds_bins = compiled, rounds_bins
        self.seconds = seconds_estimate(compiled) if seconds is None else seconds
        retreat = compiled.retreat_tables()
        self.explicit = max(rounds_bins - 1, int(retreat.policy[RT_AFTER]), 1)
        self.n_a, self.n_d = att.n_states, dfn.n_states
        self.pairs = self.n_a * self.n_d
        self.joint = self.pairs <= JOINT_LIMIT
        self.n_blocks = len(att.blocks)
        self.shapes = _shapes(self.n_a, self.n_d, self.n_blocks, self.joint, rounds_bins, 1)
        # blocks the battle starts in, then (where a partial retreat may leave units behind)
        # the blocks of the stayers
        self.phases = range(2 if compiled.has_partial_retreat else 1)
        self.settings = self.battle = self.entry = None
        self.merged = False  # its attacker blocks solved in one table (_merged_blocks)
        self.kept = kept  # solved again later: worth finding the compiled kernel for
        self.table = compact_table(compiled)  # grown where a solve fills it up
        # a compact table's solve stops (TooBigToSolve) past about max_seconds of work
        self.work_limit = (0 if not self.table[0] or max_seconds is None
                           else int(max_seconds * WORK_RATE))
        self.work = 0  # successor terms spread by the last solve (compact tables only)

    def again(self) -> ExactOut | None:
        """The outputs (one row) of a kept solve solved again by the compiled kernel, called
        straight, or None where run must solve it (not solved so yet, or the module's
        settings changed since): law_of(outputs) is run's FinalLaw."""
        entry = self.entry
        if not entry or _solve_settings(self.pairs) != self.settings:
            return None
        n_blocks, battle, explicit = self.n_blocks, self.battle, self.explicit
        stacks = _outputs(self.shapes)
        for phase in self.phases:
            entry(0, n_blocks, phase, battle, stacks, explicit)
        return stacks

    def law_of(self, stacks: ExactOut) -> FinalLaw:
        """The FinalLaw of the outputs of again."""
        return self._law(stacks, False)

    def run(self, progress=None, spent: int = 0) -> FinalLaw:
        """Solve the battle (progress as for run_exact; spent: the work of this solve's
        earlier tries on smaller compact tables)."""
        if progress is None:
            stacks = self.again()
            if stacks is not None:  # solved by the compiled kernel already: the same again
                return self._law(stacks, False)
        n_blocks, seconds = self.n_blocks, self.seconds
        k = _kernels(seconds, progress)
        if progress is not None:
            progress(0, 0, "exact solve")
        settings = _solve_settings(self.pairs)
        if settings != self.settings:  # the first solve, or the module's settings changed
            merge = _merged_blocks(self.compiled, seconds)
            self.battle = _battle(self.compiled, settings[0], merge, self.table,
                                  self.work_limit)
            self.settings, self.entry, self.merged = settings, None, merge is not None
        elif self.table[0] and not spent:  # a new solve: the whole work limit again
            self.battle = self.battle._replace(work_limit=self.work_limit)
        compiled_kernels = jit.is_compiled()
        # (merged blocks: all of them in one call, by _solve_blocks)
        parallel = (compiled_kernels and n_blocks > 1 and seconds > PARALLEL_SECONDS
                    and not self.merged)
        stacks = _stacks(self.n_a, self.n_d, n_blocks, self.joint, self.rounds_bins,
                         n_blocks if parallel else 1)
        args = (self.battle, stacks, self.explicit)
        short = seconds < SHORT_SECONDS
        if self.table[0]:  # a compact table: one block, one phase
            jit.call(k["_solve_compact"], self.battle, stacks, self.explicit, short=short)
        for phase in () if self.table[0] else self.phases:
            if parallel:  # groups of blocks of about CALL_SECONDS a call (one block: one call)
                group = max(1, int(CALL_SECONDS * n_blocks / seconds)) * jit.thread_count()
                for first in range(0, n_blocks, group):
                    jit.threads(_block_range, min(group, n_blocks - first), k["_solve_blocks"],
                                first, phase, *args)
            else:
                jit.call(k["_solve_blocks"], 0, n_blocks, phase, *args, short=short)
        if (self.kept and short and not parallel and compiled_kernels and self.entry is None
                and not self.table[0]):
            # solved in this thread by the compiled kernel: from the next solve on, that
            # kernel is called straight, without the dispatcher's typing of every array (the
            # dispatcher all the same where jit.overload finds none)
            self.entry = jit.overload(k["_solve_blocks"], (0, n_blocks, 0, *args)) or False
        if self.table[0]:  # (a dense solve writes neither: no reductions for it)
            # (a solve on a grown table counts on from the work its smaller tables did)
            self.work = spent + int(stacks.totals[:, TOTAL_WORK].sum())
            full = int(stacks.totals[:, TOTAL_FULL].max())
            if full & 4:
                raise TooBigToSolve(
                    f"battle too large to solve exactly (its solve passed {self.work_limit:,} "
                    "successor terms, about "
                    f"{self.work_limit / WORK_RATE:.2g} s of work); use --method mc for Monte "
                    "Carlo")
            if full:  # the compact table ran out of rows or columns: again, with a bigger one
                self.table = _grown_table(self.compiled, self.table, full)
                left = max(1, self.work_limit - self.work) if self.work_limit else 0
                self.battle = self.battle._replace(table_rows=self.table[0],
                                                   table_cols=self.table[1], work_limit=left)
                return self.run(progress, self.work)
        return self._law(stacks, parallel)

    def _law(self, stacks: ExactOut, summed: bool) -> FinalLaw:
        """The FinalLaw of a solve's outputs: per-block rows (summed) added in a fixed order,
        the same sums whatever the thread count; one row taken as it is."""
        outcomes, a_final, d_final, joint_law, totals, rounds_hist, _ = stacks
        if summed:
            outcomes, d_final, totals = (x.sum(axis=0) for x in (outcomes, d_final, totals))
            rounds_hist = rounds_hist.sum(axis=0) if self.rounds_bins > 1 else None
        else:
            outcomes, d_final, totals = outcomes[0], d_final[0], totals[0]
            rounds_hist = rounds_hist[0] if self.rounds_bins > 1 else None
        att, dfn = self.compiled.attacker, self.compiled.defender
        # the TUV-swing law from the joint law when first read (FinalLaw.of_joint)
        return FinalLaw.of_joint(
            joint_law if self.joint else None, att.ipc_lost, dfn.ipc_lost,
            total=1.0, trials=None, outcomes=outcomes, takes=totals[TOTAL_TAKES],
            a_final=a_final, d_final=d_final, mean_rounds=float(totals[TOTAL_ROUNDS]),
            rounds_hist=rounds_hist, pruned=max(0.0, float(totals[TOTAL_PRUNED])))


def run_exact(compiled, rounds_bins: int = 1, seconds: float | None = None,
              progress=None) -> FinalLaw:
    """Exact outcome probabilities and final-state laws of a compiled battle.

    rounds_bins > 1: also the law of the number of rounds (the first rounds_bins - 1 rounds are
    then played one by one, which costs more than the closed-form sweep).  progress(done,
    total, what) hears of compiling and of the solve.  (ExactSolve: the same, for a battle
    solved more than once.)
    """
    return ExactSolve(compiled, rounds_bins, seconds).run(progress)
