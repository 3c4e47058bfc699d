"""The exact solver's state pairs: entering a pair at the start of a round (_enter), the sparse
lists and the fire-list memo of the general round (_scratch), the dense or compact mass table
(_grid, _put, _compact_table, ...) and finishing a pair (_finish).  njit code only (see
kernels/exact/__init__.py for the method)."""

from __future__ import annotations

import numpy as np

from ..jit import kernel
from ..layout import (
    ATTACKER_WIN,
    B_RADIX_A,
    B_RADIX_N,
    B_RADIX_S,
    CONTINUE,
    FULL_RETREAT,
    NO_STATE,
    POLICY_TABLE,
    RETREAT,
    RT_ACTIVE,
    RU_A_POLICY,
    RU_AIR_ALWAYS,
    RU_D_POLICY,
    S_BLOCK,
    S_HAS_LAND,
    TOTAL_TAKES,
    ExactOut,
)
from ..round_model import (
    settle,
    should_retreat,
    submerge_step,
    submerges_before_fire,
    withdrew,
)

# what _enter decides; PLAY_FROM: a round from the pair it returns, with no decision there (a
# side submerged as its table says: the round this boundary plays, not the pair's own)
MOVE, END, PLAY, PLAY_FROM = 0, 1, 2, 3
SPREAD, GATHER = 0, 1  # what _transition does


@kernel(refs=False)
def _block_size(blocks, b):
    return blocks[b, B_RADIX_S] * blocks[b, B_RADIX_A] * blocks[b, B_RADIX_N]


@kernel(refs=False)
def _enter(ast, dst, rules, retreat, a, d, rounds_played, check_retreat):
    """What happens to probability arriving at the start of a round in the pair (a, d).

    Returns (MOVE, a2, d2, _): the mass moves on to a later pair (units lost without dice,
    subs submerged); (END, a2, d2, outcome) the battle ends in (a2, d2): (a, d) itself, or
    where the attacker's subs submerge with nothing else of it in the battle (RETREAT: the
    attacker withdraws, by its retreat policy only if check_retreat, or by submerging);
    (PLAY, a, d, _) a round is played from (a, d);
    (PLAY_FROM, a2, d2, _) where a side submerges as its table says (POLICY_TABLE) and the
    pair it leads to goes on: this round is played from (a2, d2), with no decision there.
    """
    air_always = rules[RU_AIR_ALWAYS] == 1
    outcome, a2, d2 = settle(ast, a, dst, d, air_always)
    if a2 != a or d2 != d:
        return MOVE, a2, d2, outcome
    if outcome != CONTINUE:
        return END, a, d, outcome
    decided = check_retreat and rounds_played > 0
    if decided and retreat.policy[RT_ACTIVE] == 1 and should_retreat(
            a, d, rounds_played, retreat, ast, dst):
        return END, a, d, RETREAT
    if submerges_before_fire(rules, rounds_played):
        a2, d2 = submerge_step(ast, a, dst, d, rules, retreat.choices, not decided)
        if withdrew(ast, a, a2):  # its subs were all it had in the battle: it ends there
            return END, a2, d2, RETREAT
        if a2 != a or d2 != d:
            if rules[RU_A_POLICY] == POLICY_TABLE or rules[RU_D_POLICY] == POLICY_TABLE:
                after, a3, d3 = settle(ast, a2, dst, d2, air_always)
                if after == CONTINUE and a3 == a2 and d3 == d2:
                    return PLAY_FROM, a2, d2, outcome
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
def _finish(outcome, m, a, d, rounds, ast, out):
    """Record probability m of the battle ending with `outcome` in the pair (a, d) after
    `rounds` rounds into out (layout.ExactOut)."""
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
def _out(stacks, i):
    """The outputs (layout.ExactOut) of block row i of the per-block stacks (outcomes, d_final,
    totals, rounds_hist; a_final, joint and transfer shared: blocks write only their own
    states)."""
    return ExactOut(stacks.outcomes[i], stacks.a_final, stacks.d_final[i], stacks.joint,
                    stacks.totals[i], stacks.rounds_hist[i], stacks.transfer)
