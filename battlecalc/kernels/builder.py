"""The side-table builder, compiled: a side's tables (compile.Side) from its blocks' forces in one
kernel call, the same arrays, to the last bit, as compile.py's Python builder makes
(tests/kernels/test_builder.py holds them equal).  compile.build_side drives it
(compile._built_side) once the kernels are compiled; before that, and for what it does not
take (see compile.py), the Python builder builds.

What the Python builder does with dicts and tuples, a force at a time, this does over count
vectors in the edition's unit order, a block at a time: the casualty steps of a block's force
(orders.casualty_steps, presets cheapest and weakest, sections, keep_land, aa_last,
transports last; other orders come as given steps), its casualty walks (one per loss
category: s submarines, a aircraft, n the others), the dice of each walk's force
(dice.force_dice, supports included), their hit laws, the states (every sum of one row of
each category's part), the rows, the padded pmf and cdf, survivors and IPC lost, and the
side's blocks laid end to end.

Hit laws come from a bank (compile._LawBank): the law of each distinct set of dice (a count
per dice slot: hit value clamped to the die, and best-of), computed by dice.hit_distribution
(numpy's sums: a law is the same bits however its force was reached) and kept with its top
count, its highest count above solver.Limits.hit_eps and its low-luck strength.  A kernel finds a
force's law by its dice in the bank's hash table; where some are not there yet, it answers
LAWS_MISSING with their dice, the driver adds their laws and calls again.

Unit table int64[U, UNIT_COLS] (compile._unit_table, per edition, technologies and role):
the U_* columns below.  Supports int64[K, SUP_COLS] and their targets int64[K, T] (-1
padded): the attacker's (none on defence).  An order int64[ORDER_COLS] and its sections
int64[N, 2] (the unit lost, as casualty_steps names it, and its count, -1: all).
"""

from __future__ import annotations

import numpy as np

from . import layout
from .jit import kernel
from .layout import (
    BLOCK_COLS,
    BLOCK_START,
    BLOCK_STAYERS,
    I_DEFENCELESS,
    I_DESTROYER,
    I_SUBMERGED,
    I_SUBS,
    I_SUBS_FIRE,
    I_TRANSPORTS,
    NO_RANK,
    R_HI,
    R_LO,
    R_RANK,
    R_STRENGTH,
    R_TOP,
    ROW_COLS,
    S_BLOCK,
    S_HAS_LAND,
    S_INFO,
    S_IPC,
    S_OTHER,
    S_ROW_A,
    S_ROW_N,
    S_ROW_S,
    S_S,
    S_STRIDE_A,
    S_STRIDE_S,
    S_SUBMERGE,
    S_SUBS,
    S_UNITS,
    STATE_COLS,
)

# unit table columns: can be a casualty, hit points, damaged form (-1: none), cost, land, air,
# submarine, AA gun, lost last (a defenceless transport), anti-sub, defenceless, transport, fires
# in the role (not an attacker that cannot attack), combat value and dice in the role, best die
(U_CASUALTY, U_HP, U_DAMAGED, U_COST, U_LAND, U_AIR, U_SUB, U_AA, U_LAST, U_ANTI_SUB,
 U_DEFENCELESS, U_TRANSPORT, U_FIRES, U_VALUE, U_DICE, U_BEST) = range(16)
UNIT_COLS = 16
SUP_GIVER, SUP_BONUS, SUP_COUNT, SUP_TARGETS = range(4)  # supports: giver, bonus, count, targets
SUP_COLS = 4
# order: keep_land, aa_last, sections; steps given (1: casualty steps come in the given arrays)
O_KEEP_LAND, O_AA_LAST, O_SECTIONS, O_GIVEN = range(4)
ORDER_COLS = 4
# side: subs split, aircraft split, submerge, die size, dice slots per hit value (best-of
# kinds), most states, most table cells
(SD_SPLIT_S, SD_SPLIT_A, SD_SUBMERGE, SD_DIE, SD_KINDS, SD_MAX_STATES, SD_MAX_CELLS) = range(7)
SIDE_COLS = 7
# the bank's law columns: top count, highest count above hit_eps, low-luck strength, length,
# first entry in the bank's pmf
L_TOP, L_HI, L_STRENGTH, L_LEN, L_AT = range(5)
LAW_COLS = 5
BUILT, LAWS_MISSING, TOO_LARGE = 0, 1, 2  # what build_side answers
DAMAGE, KILL = 1, 0  # a casualty step's kind
HASH_MULT = 1000003
CAT_S, CAT_A, CAT_N = 0, 1, 2
# a category's columns and bits follow one another in the order s, a, n (compile.py's
# ROW_COLUMN ...): the column or bit of category c is the s one's, plus c (shifted by c)
assert (S_S + 1, S_S + 2, S_ROW_S + 1, S_ROW_S + 2, S_SUBS + 1, S_SUBS + 2) == (
    layout.S_A, layout.S_N, S_ROW_A, S_ROW_N, layout.S_AIR, layout.S_OTHER)
assert (I_SUBS << 1, I_SUBS << 2, I_SUBS_FIRE << 1, I_SUBS_FIRE << 2) == (
    layout.I_AIR, layout.I_OTHER, layout.I_AIR_FIRE, layout.I_OTHER_FIRE)


@kernel(inline=True)
def _category(units, u, split_s, split_a):
    if split_s and units[u, U_SUB]:
        return CAT_S
    if split_a and units[u, U_AIR]:
        return CAT_A
    return CAT_N


@kernel(inline=True)
def _add_dice(out, value, count, per_unit, best, die, kind_slot, kinds):
    """dice.add_dice into a slot vector (the hit value clamped to the die): the dice added."""
    if value <= 0 or count <= 0:
        return 0
    if best and per_unit > 1:
        b, n = per_unit, count
    else:
        b, n = 1, count * per_unit
    out[(min(value, die) - 1) * kinds + kind_slot[b]] += n
    return n


@kernel
def force_dice(units, sup, sup_targets, force, die, kind_slot, kinds, out, boosted, bonus,
               taken):
    """dice.force_dice of a force (counts by unit) as dice slot counts into out; boosted,
    bonus, taken: scratch of U.  Returns the number of dice."""
    for i in range(out.shape[0]):
        out[i] = 0
    for u in range(force.shape[0]):
        boosted[u] = bonus[u] = taken[u] = 0
    for k in range(sup.shape[0]):  # dice.supported_counts
        capacity = force[sup[k, SUP_GIVER]] * sup[k, SUP_COUNT]
        for j in range(sup[k, SUP_TARGETS]):
            t = sup_targets[k, j]
            given = min(force[t] - taken[t], capacity)
            if given > 0:
                taken[t] += given
                capacity -= given
                boosted[t] += given
                bonus[t] = max(bonus[t], sup[k, SUP_BONUS])
    n_dice = 0
    for u in range(force.shape[0]):
        n = force[u]
        if n == 0 or not units[u, U_FIRES]:
            continue
        value, per_unit, best = units[u, U_VALUE], units[u, U_DICE], units[u, U_BEST]
        n_dice += _add_dice(out, value + bonus[u], boosted[u], per_unit, best, die, kind_slot,
                            kinds)
        n_dice += _add_dice(out, value, n - boosted[u], per_unit, best, die, kind_slot, kinds)
    return n_dice


@kernel
def casualty_steps(units, by_rank, order, sections, force, step_unit, step_kind):
    """orders.casualty_steps of a force (presets cheapest and weakest: by_rank, the units in
    the preset's base order) into step_unit / step_kind (DAMAGE, KILL); the number of
    steps."""
    n_units = force.shape[0]
    kills = np.zeros(n_units, dtype=np.int64)
    for u in range(n_units):
        if force[u] > 0 and units[u, U_CASUALTY]:
            kills[u] = force[u]
    present = np.zeros(n_units, dtype=np.bool_)
    for u in range(n_units):
        present[u] = kills[u] > 0
    n = 0
    # free hits: every healthy multi-hit unit is damaged before anything is killed
    for i in range(by_rank.shape[0]):
        u = by_rank[i]
        if not present[u] or units[u, U_HP] <= 1:
            continue
        for _ in range(kills[u] * (units[u, U_HP] - 1)):
            step_unit[n] = u
            step_kind[n] = DAMAGE
            n += 1
        form = units[u, U_DAMAGED]
        if form >= 0:
            kills[form] += kills[u]
            kills[u] = 0
    # named sections: counts claimed from the right, units taken from the left
    n_sections = order[O_SECTIONS]
    left = np.empty(n_units, dtype=np.int64)
    for u in range(n_units):
        left[u] = kills[u]
    claims = np.zeros(n_sections, dtype=np.int64)
    for i in range(n_sections - 1, -1, -1):
        u, count = sections[i, 0], sections[i, 1]
        available = left[u]
        take = available if count < 0 else min(count, available)
        claims[i] = take
        left[u] = available - take
    total = 0
    for u in range(n_units):
        total += kills[u]
    seq = np.empty(total, dtype=np.int64)
    k = 0
    for i in range(n_sections):
        for _ in range(claims[i]):
            seq[k] = sections[i, 0]
            k += 1
    first_rest = k
    for i in range(by_rank.shape[0]):
        u = by_rank[i]
        for _ in range(left[u]):
            seq[k] = u
            k += 1
    if order[O_AA_LAST]:  # AAA the order does not place itself go last instead of first
        _last(units, seq, first_rest, k, U_AA)
    keep = order[O_KEEP_LAND]
    if keep > 0:
        last_air = -1
        for i in range(k):
            if units[seq[i], U_AIR]:
                last_air = i
        if last_air >= 0:
            kept = np.zeros(k, dtype=np.bool_)
            found = 0
            for i in range(k - 1, -1, -1):
                if found < keep and units[seq[i], U_LAND]:
                    kept[i] = True
                    found += 1
            moved = np.empty(k, dtype=np.int64)
            rest = np.empty(k, dtype=np.int64)
            n_moved = n_rest = 0
            for i in range(k):
                if kept[i] and i < last_air:
                    moved[n_moved] = seq[i]
                    n_moved += 1
                else:
                    rest[n_rest] = seq[i]
                    n_rest += 1
            insert_at = 0
            for i in range(n_rest):
                if units[rest[i], U_AIR]:
                    insert_at = i + 1
            j = 0
            for i in range(insert_at):
                seq[j] = rest[i]
                j += 1
            for i in range(n_moved):
                seq[j] = moved[i]
                j += 1
            for i in range(insert_at, n_rest):
                seq[j] = rest[i]
                j += 1
    # transports the rules choose last stay last whatever the order says
    _last(units, seq, 0, k, U_LAST)
    for i in range(k):
        step_unit[n] = seq[i]
        step_kind[n] = KILL
        n += 1
    return n


@kernel(inline=True)
def _last(units, seq, first, end, column):
    """The units of seq[first:end] with the column set moved to its end, the others' order
    kept (a stable partition)."""
    out = np.empty(end - first, dtype=np.int64)
    j = 0
    for i in range(first, end):
        if not units[seq[i], column]:
            out[j] = seq[i]
            j += 1
    for i in range(first, end):
        if units[seq[i], column]:
            out[j] = seq[i]
            j += 1
    for i in range(end - first):
        seq[first + i] = out[i]


@kernel(inline=True)
def _hash(vector):
    h = 0
    for i in range(vector.shape[0]):
        h = h * HASH_MULT + vector[i]
    return h


@kernel
def find_law(keys, values, vector):
    """The bank's law of a dice vector, or -1 (keys[H, S] and values[H]: its hash table, H a
    power of 2, -1 where empty)."""
    mask = keys.shape[0] - 1
    at = _hash(vector) & mask
    while True:
        law = values[at]
        if law < 0:
            return -1
        same = True
        for i in range(vector.shape[0]):
            if keys[at, i] != vector[i]:
                same = False
                break
        if same:
            return law
        at = (at + 1) & mask


@kernel
def insert_laws(keys, values, vectors, laws):
    """Put laws[i] in the hash table under vectors[i] (room assumed: at most half full)."""
    mask = keys.shape[0] - 1
    for i in range(vectors.shape[0]):
        at = _hash(vectors[i]) & mask
        while values[at] >= 0:
            at = (at + 1) & mask
        for j in range(vectors.shape[1]):
            keys[at, j] = vectors[i, j]
        values[at] = laws[i]


@kernel
def law_columns(pmf, eps):
    """(top, hi) of a hit law: its largest count of positive probability (0 if none) and its
    largest count above eps (0 if none), as compile._fire_law reads them."""
    top = pmf.shape[0] - 1
    while top > 0 and not pmf[top] > 0.0:
        top -= 1
    hi = pmf.shape[0] - 1
    while hi > 0 and not pmf[hi] > eps:
        hi -= 1
    return top, hi


@kernel(inline=True)
def _steps_of(units, force, cat_of, c):
    """Casualty steps of category c in a force: count x hit points of its casualty units."""
    n = 0
    for u in range(force.shape[0]):
        if force[u] > 0 and units[u, U_CASUALTY] and cat_of[u] == c:
            n += force[u] * units[u, U_HP]
    return n


@kernel
def build_side(units, sup, sup_targets, by_rank, order, sections, side, kind_slot, forces,
               extra, probs, given_units, given_kinds, keys, values, laws, bank_pmf):
    """A side's tables from its blocks: forces[B, U], extra[B, U + 2] (each block's
    withdrawn survivor counts, IPC lost before it and 1 for a stayers' block), probs[B] (the
    probability of starting in each), and where order[O_GIVEN] their casualty steps
    given_units / given_kinds[B, T].  Returns (status, a, b, blocks, states, rows, pmf, cdf,
    start, survivors, ipc_lost): BUILT, the sum of hit_combinations (a) and the tables;
    LAWS_MISSING and in place of blocks the dice vectors [M, S] the bank has no law of yet;
    TOO_LARGE and the states (a) and table cells (b) the side would have
    (compile._check_size)."""
    n_blocks, n_units = forces.shape[0], forces.shape[1]
    split_s, split_a = side[SD_SPLIT_S], side[SD_SPLIT_A]
    die, kinds = side[SD_DIE], side[SD_KINDS]
    n_slots = die * kinds
    cat_of = np.empty(n_units, dtype=np.int64)
    for u in range(n_units):
        cat_of[u] = _category(units, u, split_s, split_a)
    vector = np.zeros(n_slots, dtype=np.int64)
    boosted = np.zeros(n_units, dtype=np.int64)
    bonus = np.zeros(n_units, dtype=np.int64)
    taken = np.zeros(n_units, dtype=np.int64)
    # the size check (compile._check_size): states and hit probabilities of every block
    steps = np.zeros((n_blocks, 3), dtype=np.int64)
    total_states = total_cells = 0
    for b in range(n_blocks):
        for c in range(3):
            steps[b, c] = _steps_of(units, forces[b], cat_of, c)
        n_dice = force_dice(units, sup, sup_targets, forces[b], die, kind_slot, kinds, vector,
                            boosted, bonus, taken)
        s = steps[b, CAT_S]
        total_states += ((s + 1) * (2 if side[SD_SUBMERGE] and s else 1)
                         * (steps[b, CAT_A] + 1) * (steps[b, CAT_N] + 1))
        total_cells += (steps[b, 0] + steps[b, 1] + steps[b, 2] + 3) * (n_dice + 1)
    no_int = np.zeros((0, 0), dtype=np.int64)
    no_float = np.zeros((0, 0))
    if total_states > side[SD_MAX_STATES] or total_cells > side[SD_MAX_CELLS]:
        return (TOO_LARGE, total_states, total_cells, no_int, no_int, no_int, no_float,
                no_float, np.zeros(0), no_int, np.zeros(0, dtype=np.int64))
    # walk rows: for each block, each category, each step k (0..steps): the category's force
    # after k of its steps: its law, survivors, units, land units, IPC lost, the rank of its
    # next casualty, its I_DESTROYER / I_DEFENCELESS / I_TRANSPORTS flags
    walk_at = np.zeros((n_blocks, 3), dtype=np.int64)
    n_walk = 0
    for b in range(n_blocks):
        for c in range(3):
            walk_at[b, c] = n_walk
            n_walk += steps[b, c] + 1
    w_law = np.empty(n_walk, dtype=np.int64)
    w_vec = np.zeros((n_walk, n_units), dtype=np.int64)
    w_units = np.zeros(n_walk, dtype=np.int64)
    w_land = np.zeros(n_walk, dtype=np.int64)
    w_ipc = np.zeros(n_walk, dtype=np.int64)
    w_rank = np.empty(n_walk, dtype=np.int64)
    w_flags = np.zeros(n_walk, dtype=np.int64)
    missing = np.zeros((n_walk, n_slots), dtype=np.int64)
    n_missing = 0
    most_steps = 0
    for b in range(n_blocks):
        most_steps = max(most_steps, steps[b, 0] + steps[b, 1] + steps[b, 2])
    step_unit = np.empty(most_steps, dtype=np.int64)
    step_kind = np.empty(most_steps, dtype=np.int64)
    current = np.zeros((3, n_units), dtype=np.int64)
    k_of = np.zeros(3, dtype=np.int64)
    totals = np.zeros(3, dtype=np.int64)
    lands = np.zeros(3, dtype=np.int64)
    lost = np.zeros(3, dtype=np.int64)
    for b in range(n_blocks):
        force = forces[b]
        if order[O_GIVEN]:
            n_steps = steps[b, 0] + steps[b, 1] + steps[b, 2]
            for t in range(n_steps):
                step_unit[t] = given_units[b, t]
                step_kind[t] = given_kinds[b, t]
        else:
            n_steps = casualty_steps(units, by_rank, order, sections, force, step_unit,
                                     step_kind)
        for c in range(3):
            totals[c] = lands[c] = lost[c] = 0
            for u in range(n_units):
                current[c, u] = 0
        for u in range(n_units):
            if force[u] > 0 and units[u, U_CASUALTY]:
                c = cat_of[u]
                current[c, u] = force[u]
                totals[c] += force[u]
                lands[c] += force[u] * units[u, U_LAND]
        for c in range(3):
            k_of[c] = 0
            w = walk_at[b, c]
            for u in range(n_units):
                w_vec[w, u] = current[c, u]
            w_units[w] = totals[c]
            w_land[w] = lands[c]
        for rank in range(n_steps):
            u = step_unit[rank]
            c = cat_of[u]
            w_rank[walk_at[b, c] + k_of[c]] = rank
            if step_kind[rank] == DAMAGE:
                form = units[u, U_DAMAGED]
                if form >= 0 and form != u:
                    current[c, u] -= 1
                    current[c, form] += 1
                    lands[c] += units[form, U_LAND] - units[u, U_LAND]
            else:
                current[c, u] -= 1
                totals[c] -= 1
                lands[c] -= units[u, U_LAND]
                lost[c] += units[u, U_COST]
            k_of[c] += 1
            w = walk_at[b, c] + k_of[c]
            for v in range(n_units):
                w_vec[w, v] = current[c, v]
            w_units[w] = totals[c]
            w_land[w] = lands[c]
            w_ipc[w] = lost[c]
        for c in range(3):
            w_rank[walk_at[b, c] + steps[b, c]] = NO_RANK
        # the laws of the walks' forces, and their flags
        for c in range(3):
            for k in range(steps[b, c] + 1):
                w = walk_at[b, c] + k
                force_dice(units, sup, sup_targets, w_vec[w], die, kind_slot, kinds, vector,
                           boosted, bonus, taken)
                law = find_law(keys, values, vector)
                w_law[w] = law
                if law < 0:
                    new = True
                    for m in range(n_missing):
                        same = True
                        for i in range(n_slots):
                            if missing[m, i] != vector[i]:
                                same = False
                                break
                        if same:
                            new = False
                            break
                    if new:
                        for i in range(n_slots):
                            missing[n_missing, i] = vector[i]
                        n_missing += 1
                anti_sub, defenceless, transports, any_unit = False, True, True, False
                for u in range(n_units):
                    if w_vec[w, u] > 0:
                        any_unit = True
                        anti_sub |= units[u, U_ANTI_SUB] != 0
                        defenceless &= units[u, U_DEFENCELESS] != 0
                        transports &= units[u, U_TRANSPORT] != 0
                w_flags[w] = ((I_DESTROYER if anti_sub else 0)
                              | (I_DEFENCELESS if defenceless and any_unit else 0)
                              | (I_TRANSPORTS if transports and any_unit else 0))
    if n_missing:
        return (LAWS_MISSING, n_missing, 0, missing[:n_missing].copy(), no_int, no_int,
                no_float, no_float, np.zeros(0), no_int, np.zeros(0, dtype=np.int64))
    # the side's rows: every block's n rows, then each block's s and a rows
    width = 1
    for w in range(n_walk):
        width = max(width, laws[w_law[w], L_LEN])
    n_at = np.zeros(n_blocks, dtype=np.int64)
    sa_at = np.zeros(n_blocks, dtype=np.int64)
    at = 0
    for b in range(n_blocks):
        n_at[b] = at
        at += steps[b, CAT_N] + 1
    for b in range(n_blocks):
        sa_at[b] = at
        at += steps[b, CAT_S] + 1 + steps[b, CAT_A] + 1
    n_rows = at
    rows = np.zeros((n_rows, ROW_COLS), dtype=np.int64)
    pmf = np.zeros((n_rows, width))
    cdf = np.ones((n_rows, width))
    for b in range(n_blocks):
        for c in range(3):
            if c == CAT_N:
                first = n_at[b]
            elif c == CAT_S:
                first = sa_at[b]
            else:
                first = sa_at[b] + steps[b, CAT_S] + 1
            for k in range(steps[b, c] + 1):
                w = walk_at[b, c] + k
                r = first + k
                law = w_law[w]
                top = laws[law, L_TOP]
                rows[r, R_TOP] = top
                rows[r, R_RANK] = w_rank[w]
                rows[r, R_HI] = laws[law, L_HI]
                rows[r, R_STRENGTH] = laws[law, L_STRENGTH]
                start = laws[law, L_AT]
                total = 0.0
                for h in range(laws[law, L_LEN]):
                    p = bank_pmf[start + h]
                    pmf[r, h] = p
                    if h < top:  # (running sums, as itertools.accumulate and np.cumsum)
                        total += p
                        cdf[r, h] = total
    # the states: block by block, every sum of one row of each category's part, in flat
    # order (s, a, n)
    radix = np.zeros((n_blocks, 3), dtype=np.int64)
    n_states = 0
    for b in range(n_blocks):
        radix[b, CAT_S] = (steps[b, CAT_S] + 1) * (2 if side[SD_SUBMERGE] and steps[b, CAT_S]
                                                   else 1)
        radix[b, CAT_A] = steps[b, CAT_A] + 1
        radix[b, CAT_N] = steps[b, CAT_N] + 1
        n_states += radix[b, 0] * radix[b, 1] * radix[b, 2]
    blocks = np.zeros((n_blocks, BLOCK_COLS), dtype=np.int64)
    states = np.zeros((n_states, STATE_COLS), dtype=np.int64)
    survivors = np.zeros((n_states, n_units), dtype=np.int64)
    start = np.zeros(n_states)
    part = np.zeros((3, max(1, most_steps * 2 + 2), STATE_COLS), dtype=np.int64)
    base = np.zeros(3, dtype=np.int64)
    part_k = np.zeros((3, max(1, most_steps * 2 + 2)), dtype=np.int64)
    offset = 0
    for b in range(n_blocks):
        n_sub = steps[b, CAT_S]
        copies = 2 if side[SD_SUBMERGE] and n_sub else 1
        base[CAT_S] = steps[b, CAT_N] + 1  # (each category's first row in the block)
        base[CAT_A] = steps[b, CAT_N] + 1 + n_sub + 1
        base[CAT_N] = 0
        first_used = -1
        for c in range(3):
            if radix[b, c] > 1:
                first_used = c
                break
        if first_used < 0:
            first_used = CAT_N
        for c in range(3):
            size = radix[b, c]
            for s in range(size):
                for j in range(STATE_COLS):
                    part[c, s, j] = 0
            used = size > 1 or c == first_used
            n_c = steps[b, c]
            surfacing = (n_sub + 1) * radix[b, 1] * radix[b, 2] if c == CAT_S and copies == 2 \
                else 0
            for s in range(size):
                k = s % (n_c + 1)
                part_k[c, s] = k
                if not used:
                    continue
                w = walk_at[b, c] + k
                top = laws[w_law[w], L_TOP]
                submerged = s > n_c
                in_battle = 0 if submerged else n_c - s
                here, fire = I_SUBS << c, I_SUBS_FIRE << c  # (I_AIR.., I_OTHER.. follow)
                bits = (here | (fire if top > 0 else 0)) if in_battle > 0 else 0
                if c == CAT_S:
                    bits |= I_SUBMERGED if submerged else 0
                else:
                    bits |= fire if top > 0 else 0
                    if c == CAT_N:
                        bits |= w_flags[w]
                row = part[c, s]  # (the S_*, S_ROW_* and left columns go s, a, n)
                row[S_S + c] = s
                row[S_ROW_S + c] = k + base[c]
                row[S_SUBS + c] = in_battle
                row[S_INFO] = bits
                row[S_IPC] = w_ipc[w]
                if not submerged:
                    row[S_UNITS] = w_units[w]
                    row[S_HAS_LAND] = 1 if w_land[w] > 0 else 0
                    if s < n_sub:
                        row[S_SUBMERGE] = surfacing
                if c == first_used:  # (once in each state: what the block has alike)
                    row[S_STRIDE_S] = radix[b, 1] * radix[b, 2]
                    row[S_STRIDE_A] = radix[b, 2]
                    for other in range(3):
                        if radix[b, other] <= 1 and other != c:
                            row[S_ROW_S + other] = base[other]
        # the block's place in the side
        shift_n = n_at[b]
        shift_sa = sa_at[b] - (steps[b, CAT_N] + 1)
        blocks[b, 0] = offset
        blocks[b, 1] = radix[b, 0]
        blocks[b, 2] = radix[b, 1]
        blocks[b, 3] = radix[b, 2]
        blocks[b, 4] = BLOCK_STAYERS if extra[b, n_units + 1] else BLOCK_START
        start[offset] = probs[b]
        ws, wa, wn = walk_at[b, CAT_S], walk_at[b, CAT_A], walk_at[b, CAT_N]
        f = offset
        for i_s in range(radix[b, 0]):
            for i_a in range(radix[b, 1]):
                for i_n in range(radix[b, 2]):
                    row = states[f]
                    for j in range(STATE_COLS):
                        row[j] = part[0, i_s, j] + part[1, i_a, j] + part[2, i_n, j]
                    row[S_HAS_LAND] = 1 if row[S_HAS_LAND] > 0 else 0
                    row[S_BLOCK] = b
                    row[S_ROW_N] += shift_n
                    row[S_ROW_S] += shift_sa
                    row[S_ROW_A] += shift_sa
                    row[S_IPC] += extra[b, n_units]
                    vs = w_vec[ws + part_k[0, i_s]]
                    va = w_vec[wa + part_k[1, i_a]]
                    vn = w_vec[wn + part_k[2, i_n]]
                    for u in range(n_units):
                        survivors[f, u] = vs[u] + va[u] + vn[u] + extra[b, u]
                    f += 1
        offset = f
    ipc_lost = states[:, S_IPC].copy()
    return (BUILT, hit_combinations(states, rows), 0, blocks, states, rows, pmf, cdf, start,
            survivors, ipc_lost)


@kernel
def hit_combinations(states, rows):
    """The sum over a side's states of the hit combinations its fire has in one round
    (compile.Side.mean_hit_combinations: the product of the widths of its categories' hit
    ranges, subs' only where it has some), or -1 where the sum might not be exact as a
    float (past 2**52: there the order of the sums would matter)."""
    total = 0
    for f in range(states.shape[0]):
        st = states[f]
        width_a = rows[st[S_ROW_A], R_HI] - rows[st[S_ROW_A], R_LO] + 1
        width_n = rows[st[S_ROW_N], R_HI] - rows[st[S_ROW_N], R_LO] + 1
        product = width_a * width_n
        if st[S_SUBS] > 0:
            product *= rows[st[S_ROW_S], R_HI] - rows[st[S_ROW_S], R_LO] + 1
        if product > 1 << 32:
            return -1
        total += product
        if total > 1 << 52:
            return -1
    return total


@kernel
def merged_walks(blocks, states, survivors, rows, pmf, cdf, mix, compared):
    """solver.tables.merged_walks of a side of several blocks of single walks: (1, merge,
    sweep), or (0, ...) where nothing merges, or (-1, ...) where the numpy path must say
    (two states of block 0 whose hash codes are equal: there its searchsorted might pick the
    other one).  A state's twin is the state of block 0 with the same columns (compared:
    the state columns that say what a state holds), survivors and fire: in block 0, a single
    walk, the one with as many units left in the battle (S_OTHER), if its code, columns,
    survivors, rows' R_TOP, R_LO, R_HI, R_STRENGTH and hit laws are the same (mix: the
    code's weights, as merged_walks hashes)."""
    n, n_0 = states.shape[0], blocks[0, 3]
    n_units = survivors.shape[1]
    none = np.zeros(0, dtype=np.int64)
    code = np.zeros(n_0, dtype=np.uint64)
    for f in range(n_0):
        code[f] = _code(states, survivors, rows, mix, compared, f)
    if _repeats(code):
        return -1, none, none
    twin = np.zeros(n, dtype=np.int64)
    ok = np.zeros(n, dtype=np.bool_)
    last = np.zeros(n, dtype=np.bool_)
    for b in range(blocks.shape[0]):
        last[blocks[b, 0] + blocks[b, 3] - 1] = True
    found = np.zeros(n, dtype=np.bool_)
    for f in range(n):
        t = n_0 - 1 - states[f, S_OTHER]
        if t < 0 or t >= n_0:
            continue
        twin[f] = t
        if f < n_0 or _code(states, survivors, rows, mix, compared, f) != code[t]:
            continue
        same = True
        for j in range(states.shape[1]):
            if compared[j] and states[f, j] != states[t, j]:
                same = False
        for u in range(n_units):
            if survivors[f, u] != survivors[t, u]:
                same = False
        rf, rt = states[f, S_ROW_N], states[t, S_ROW_N]
        for j in (R_TOP, R_LO, R_HI, R_STRENGTH):
            if rows[rf, j] != rows[rt, j]:
                same = False
        for h in range(pmf.shape[1]):
            if pmf[rf, h] != pmf[rt, h] or cdf[rf, h] != cdf[rt, h]:
                same = False
        found[f] = same
    # a state of block 1 or later is merged if it and every later state of its block have
    # twins, each the twin's successor's predecessor (the last: block 0's last state)
    for f in range(n_0, n):
        if last[f]:
            ok[f] = found[f] and twin[f] == n_0 - 1
        else:
            ok[f] = found[f] and twin[f + 1] == twin[f] + 1
    merge = np.arange(n)
    own = 0
    for b in range(blocks.shape[0]):
        first, end = blocks[b, 0], blocks[b, 0] + blocks[b, 3]
        tail = True  # every state from f to the block's end is ok
        for f in range(end - 1, first - 1, -1):
            tail = tail and ok[f]
            if tail:
                merge[f] = twin[f]
    for f in range(n):
        if merge[f] == f:
            own += 1
    if own == n:
        return 0, none, none
    # the states that are their own, most casualty steps left first (a stable sort)
    most = 0
    for f in range(n):
        most = max(most, states[f, S_OTHER])
    at = np.zeros(most + 2, dtype=np.int64)
    for f in range(n):
        if merge[f] == f:
            at[most - states[f, S_OTHER] + 1] += 1
    for v in range(1, most + 2):
        at[v] += at[v - 1]
    sweep = np.zeros(own, dtype=np.int64)
    for f in range(n):
        if merge[f] == f:
            v = most - states[f, S_OTHER]
            sweep[at[v]] = f
            at[v] += 1
    return 1, merge, sweep


@kernel
def _repeats(code):
    """Whether two of the codes are equal: an open-addressed table of at least twice as many
    slots as codes, each code's slot its high bits (merged_walks' codes are sums of products
    by random weights: their high bits are mixed); np.sort cost a second of compiling."""
    bits = 1
    while (1 << bits) < 2 * code.shape[0]:
        bits += 1
    size = 1 << bits
    slots = np.zeros(size, dtype=np.uint64)
    used = np.zeros(size, dtype=np.bool_)
    shift = np.uint64(64 - bits)
    for f in range(code.shape[0]):
        h = np.int64(code[f] >> shift)
        while used[h]:
            if slots[h] == code[f]:
                return True
            h = (h + 1) & (size - 1)
        used[h] = True
        slots[h] = code[f]
    return False


@kernel(inline=True)
def _code(states, survivors, rows, mix, compared, f):
    """merged_walks' hash of state f: its compared columns, survivors and row's R_TOP, R_LO,
    R_HI, R_STRENGTH, each times its weight, summed (mod 2**64)."""
    total = np.uint64(0)
    k = 0
    for j in range(states.shape[1]):
        if compared[j]:
            total += np.uint64(states[f, j]) * np.uint64(mix[k])
            k += 1
    for u in range(survivors.shape[1]):
        total += np.uint64(survivors[f, u]) * np.uint64(mix[k])
        k += 1
    r = states[f, S_ROW_N]
    for j in (R_TOP, R_LO, R_HI, R_STRENGTH):
        total += np.uint64(rows[r, j]) * np.uint64(mix[k])
        k += 1
    return total
