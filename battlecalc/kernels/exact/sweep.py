"""The exact solver's sweeps: a block's solve in a dense or compact table (_solve_block,
_solve_compact, _solve_tables), the closed sweeps (_sweep_walks, _sweep_round), the entries over
blocks (_solve_blocks; _solve_walk_blocks, for two single walks only), the backward sweep of
--retreat-below's table (_win_values) and that of the optimal retreat (_decide_values).  njit
code only."""

from __future__ import annotations

import numpy as np

from ..jit import kernel
from ..layout import (
    ATTACKER_WIN,
    B_KIND,
    B_OFFSET,
    BLOCK_STAYERS,
    C_A_DECIDES,
    C_A_SUBMERGES,
    C_D_DECIDES,
    C_DA_DECIDES,
    C_FIRST,
    CONTINUE,
    FULL_RETREAT,
    I_DESTROYER,
    NO_STATE,
    POLICY_NEVER,
    POLICY_TABLE,
    R_HI,
    R_LO,
    RETREAT,
    RT_ACTIVE,
    RU_A_POLICY,
    RU_AIR_ALWAYS,
    RU_BOMBARD,
    RU_D_POLICY,
    RU_SIMPLE,
    S_HAS_LAND,
    S_INFO,
    S_IPC,
    S_MAY_RETREAT,
    S_OTHER,
    S_SUBMERGE,
    TOTAL_FULL,
    TOTAL_PRUNED,
    TOTAL_ROUNDS,
    TOTAL_WORK,
)
from ..round_model import (
    FLAGS,
    VALUES,
    lone_transports,
    settle,
    should_retreat,
    submerge_step,
    submerges_before_fire,
    withdrew,
)
from .fire import (
    _fight_on,
    _phased,
    _play,
    _play_phased,
    _spread_after_strikes,
    _transition,
)
from .pairs import (
    END,
    FULL,
    GATHER,
    M_COLS,
    M_FILL,
    M_ROWS,
    MOVE,
    PLAY,
    PLAY_FROM,
    SCAN_CELLS,
    WORK,
    _block_size,
    _compact_table,
    _count_work,
    _enter,
    _grid,
    _kept_range,
    _like,
    _out,
    _put,
    _scratch,
    _stopped,
    _table_place,
    _table_size,
    _withdraw_or_finish,
)


# (inlined into the entry kernels: a call of its own takes a reference to every array of the
# battle and the outputs on the way in, an atomic increment and decrement each, about 0.6 us
# of a tiny kept battle's 8)
@kernel(inline=True)
def _solve_block(b, phase, battle, out, explicit, general_round):
    """Solve attacker block b of a battle (layout.ExactBattle) into out (layout.ExactOut) if
    it belongs to `phase` (0: blocks a battle starts in; 1: blocks of the units that stay
    after a partial retreat); the first `explicit` rounds are played one at a time.  b = -1
    (a battle with battle.merge): every block at once, in one table of the attacker's states
    (each block's start row holding its probability: _solve_merged).  general_round:
    FLAGS[1] where the battle may play the general round, None where it plays two single
    walks only (_solve_walk_blocks: numba prunes every branch on `general_round is not
    None` while compiling for a None, so it compiles none of the general round)."""
    ab, transfer = battle.blocks, out.transfer
    ast, dst = battle.att.states, battle.dfn.states
    if b >= 0 and ((ab[b, B_KIND] == BLOCK_STAYERS) != (phase == 1) or (
            phase == 1 and not transfer[b].any())):
        return
    n_d = dst.shape[0]
    size = ast.shape[0] if b < 0 else _block_size(ab, b)
    # the general round's work arrays; the fast path (_play) uses none of them, the closed
    # sweep of two walks (_sweep_walks) arrays of its own (_walk_scratch, of the same types:
    # _solve_tables and what it calls are compiled once for both), its only ones where no round
    # is general, and besides the general round's where round 1 bombards
    general = battle.rules[RU_SIMPLE] == 0 or (battle.rules[RU_BOMBARD] == 1
                                               and battle.bombard_pmf.shape[0] > 1)
    if general_round is not None and general:
        scratch = walk_scratch = _scratch(ast.shape[0], n_d)
        if battle.rules[RU_SIMPLE] != 0:  # round 1 bombards, then the rows may be swept
            walk_scratch = _walk_scratch(n_d, battle.dfn.pmf.shape[1])
    else:
        scratch = walk_scratch = _walk_scratch(n_d, battle.dfn.pmf.shape[1])
    mass = np.zeros((size, n_d))
    tables = _tables(mass, 0 if phase == 1 else explicit - battle.start_rounds,
                     general and battle.phased and b >= 0 and not _walks(battle))
    _solve_tables(b, phase, battle, out, explicit, mass, tables, scratch, walk_scratch,
                  general, general_round)


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
    scratch = _scratch(n_a, n_d)
    _solve_tables(VALUES[0], VALUES[0], battle, out, explicit, mass,
                  _tables(mass, explicit - battle.start_rounds, battle.phased), scratch,
                  scratch, FLAGS[1], FLAGS[1])
    maps = mass[1]
    out.totals[TOTAL_FULL] = maps[M_FILL, FULL]
    out.totals[TOTAL_WORK] = maps[M_FILL, WORK]


@kernel(inline=True)
def _walks(battle):
    """Whether _solve_tables sweeps a dense table's rounds after those played one at a time
    by _sweep_walks (two single walks, no pruning budget)."""
    return battle.rules[RU_SIMPLE] != 0 and battle.budget == 0.0 and battle.row_sweep


@kernel
def _tables(mass, rounds, phased):
    """The tables and the work array that _solve_tables plays in (it makes none: see its
    comment), made as it made them before: two tables like `mass` for the `rounds` played
    one at a time (each where that many are), one of no pairs, the table after the strikes
    of the general round's last sweep (where it is `phased`: in two phases), and the pruning
    budget spent.  (Not inlined: its callers inlining it four times cost 30 s of compiling.)"""
    empty = _like(mass, True)
    return (_like(mass, False) if rounds >= 1 else empty,
            _like(mass, False) if rounds >= 2 else empty, empty,
            _like(mass, False) if phased else empty, np.zeros(1))


@kernel(inline=True)
def _zeroed(mass):
    """Zero every pair of a table of the rounds played one at a time, to be used again (as
    np.zeros would give it: +0.0)."""
    grid = _grid(mass)
    for i in range(grid.shape[0]):
        for j in range(grid.shape[1]):
            grid[i, j] = 0.0


# (refs=False: every array it plays in comes from its caller, the tables from _tables; a call
# that took a reference to every array of the battle, the outputs and the tables cost about
# 0.4 us of a tiny kept battle's kernel call of 3.5)
@kernel(refs=False)
def _solve_tables(b, phase, battle, out, explicit, mass, tables, scratch, walk_scratch,
                  general, general_round):
    """_solve_block's solve of block b in the mass table `mass` (zeros: dense, or compact; see
    M_ROWS), with the tables of _tables, the work arrays scratch (general: the general
    round's) and walk_scratch (_sweep_walks', where it sweeps the table: _walk_scratch's);
    general_round: see _solve_block."""
    ab, transfer = battle.blocks, out.transfer
    merge = battle.merge
    base = 0 if b < 0 else ab[b, B_OFFSET]
    rounds_hist = out.rounds_hist
    n_d = battle.dfn.states.shape[0]
    one = battle.one
    first_round = battle.bombard_pmf if battle.rules[RU_BOMBARD] == 1 else one
    rounds_played = battle.start_rounds  # (rounds fought before the battle starts here)
    check_retreat = True
    a_start, d_start = battle.a_start, battle.d_start
    # (element by element: an array assignment brings numba's shape-error formatting, seconds
    # of compiling)
    start = 0.0  # the block's starting probability
    if b < 0:
        # every state a battle starts in (each block's first; any state where a battle starts
        # where it stands), in its row of the table of every block
        for a in range(battle.att.states.shape[0]):
            if a_start[a] != 0.0:
                for d in range(n_d):
                    _put(mass, merge[a], d, a_start[a] * d_start[d])
        for d in range(n_d):
            start += _grid(mass)[0, d]
    elif phase == 1:
        for d in range(n_d):
            p = transfer[b, d]
            start += p
            if p != 0.0:
                _put(mass, 0, d, p)
    else:
        for k in range(_table_size(mass, M_ROWS)):
            q = a_start[base + k]
            if k > 0 and q == 0.0:
                continue  # (a battle starts in a block's first state, but where it stands)
            for d in range(n_d):
                p = q * d_start[d]
                start += p
                if p != 0.0:
                    _put(mass, k, d, p)
    if phase == 1:
        # the units that stayed after a partial retreat, at the end of some round: no more
        # retreats, nothing round-dependent left
        check_retreat = False
        rounds_played = rounds_hist.shape[0]
        explicit = 0
    # the block's share of the pruning budget: the shares of all blocks of both phases add up
    # to at most battle.budget, whatever the threads
    budget = battle.budget * (start + (1.0 if b < 0 else 1.0 / ab.shape[0])) / 4.0
    after, spare, empty, inter, spent = tables
    # (the table now: `mass` itself is never assigned, so that numba tells its kind apart)
    table = mass
    played = 0
    while rounds_played < explicit:
        if played >= 2:
            _zeroed(after)  # (the table of two rounds back: its mass has moved on)
        _count_work(mass, _grid(after).size // SCAN_CELLS)  # (a table zeroed)
        _sweep_round(battle, table, after, base, rounds_played, FLAGS[1], FLAGS[0],
                     first_round if rounds_played == 0 else one, out, scratch, spent, budget,
                     b < 0, empty, general_round)
        table = after
        after, spare = spare, after
        rounds_played += 1
        played += 1
    # every later round alike: solved in one sweep, each state's "nothing changes" part in
    # closed form, mass moving onwards within the table itself
    if isinstance(mass, tuple):
        walks = False
    else:
        walks = _walks(battle)
        if walks:
            _sweep_walks(battle, table, base, rounds_played, check_retreat, out, b < 0,
                         walk_scratch)
    if not walks:
        # (the table after the strikes, where the general round may be played in two phases)
        _sweep_round(battle, table, table, base, rounds_played, check_retreat, FLAGS[1], one,
                     out, scratch, spent, budget, b < 0, inter, general_round)


# _sweep_walks' work arrays (_walk_scratch): rows of the float array, each n_d + WALK_PAD long:
# the row's pair weights w, the tails (attacker hits from d on that wipe the defender out), then
# for each defender hit count hd (up to the law's width + 3: hit counts are taken four at a time)
# its weights u[hd] (d at WALK_OFF + d, zeros either side of the pairs that move), then the
# defender's hit laws by hit count (dpmf transposed, each state's kept hit counts only: P(hd
# hits from d) at [hd, d], 0 outside d's kept range; a state's column written when a pair of it
# is first played).  The int array: each defender state's kept hit counts (lo, hi).
WALK_W, WALK_TAIL, WALK_U = 0, 1, 2
WALK_OFF, WALK_PAD = 4, 8


@kernel(inline=True)
def _walk_scratch(n_d, width):
    """_sweep_walks' work arrays for n_d defender states and hit laws `width` wide: int64[2,
    n_d], float64[WALK_U + 2 (width + 3), n_d + WALK_PAD] (the types of _scratch's)."""
    return (np.empty((2, n_d), dtype=np.int64),
            np.empty((WALK_U + 2 * (width + 3), n_d + WALK_PAD)))


@kernel(refs=False)
def _sweep_walks(battle, mass, base, rounds_played, check_retreat, out, merged, scratch):
    """_sweep_round's closed-form sweep for the fast path (two single walks: land, or sea
    without submarines) with no pruning budget, an attacker state (a row of mass) at a time:
    the rounds from each pair (a, d) of the row are first played as far as the row itself (the
    defender's 0 hits: the pairs after (a, d) in the row must have all of their probability
    before their turn), then every later row: for each defender hit count hd, the weights u[d]
    of the row's pairs spread by the attacker's hit law (the same for the whole row) onto the
    row a + hd.  Skipped as in _play / _spread_walk: hit counts outside each state's kept range
    and moves of battle.eps or less.  scratch: _walk_scratch's arrays.

    The sums are those of a sweep a pair at a time, each cell's terms added in the same order
    (attacker hits ha ascending, per defender hit count; the wipe-out cell's, the pruned mass
    and the sums of each hit count's weights in order of d): only the loops are arranged for
    the machine.  The cells a + hd, c (c < the defender's last state) take their terms four
    attacker hit counts at a time, one pass over the cells the four reach, each cell's four
    terms added in order within the pass (a cell read and written once per four terms; the
    loop over cells vectorises); the weights of four defender hit counts are summed in one
    loop over d (four independent chains of additions).  Cells a pass reaches beyond a hit
    count's reach, and pairs inside lo..hi that do not move, take products with zero weights:
    +0.0, which leaves a sum of probabilities as it is (as plain Python, the runs over the
    pairs that do not move would double a big battle's time: each hit count's runs cover
    lo..hi only)."""
    A, D, rules, retreat = battle.att, battle.dfn, battle.rules, battle.retreat
    ast, dst, remainder = A.states, D.states, retreat.remainder
    apmf, acum, ar = A.pmf, A.cdf, A.rows
    dpmf, dcum, dr = D.pmf, D.cdf, D.rows
    eps, state_eps = battle.eps, battle.state_eps
    totals = out.totals
    # the attacker's retreat decisions, from the end of the first round the battle fights
    check = check_retreat and rounds_played >= battle.retreat_from
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
    w_row = work[WALK_W]  # w of each pair of the row played (0: not played)
    tail = work[WALK_TAIL]  # (written for the row's played range before it is read)
    n_hd = dpmf.shape[1] + 3  # hit counts 0 .. n_hd - 1 (four at a time, past the last)
    weights = work[WALK_U:WALK_U + n_hd]
    laws = work[WALK_U + n_hd:WALK_U + 2 * n_hd]
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
                                           check)
            if kind == MOVE:
                mass[merge[a2] if merged else a2 - base, d2] += m
                continue
            if kind == END:  # (in (a2, d2): a withdrawal by submerging ends past (a, d))
                _withdraw_or_finish(outcome, m, a2, d2, rounds_played, ast, remainder, out)
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
                for hd in range(n_hd):
                    laws[hd, d] = 0.0
                for hd in range(d_lo[d], d_hi[d] + 1):
                    laws[hd, d] = dpmf[d, hd]
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
        for hd0 in range(1, hd_top + 1, 4):
            # the weights of four defender hit counts, each summed over d in order (total:
            # what moves; spill: what wipes the defender out), four chains side by side
            u0, u1, u2, u3 = (weights[hd0], weights[hd0 + 1], weights[hd0 + 2],
                              weights[hd0 + 3])
            p0, p1, p2, p3 = laws[hd0], laws[hd0 + 1], laws[hd0 + 2], laws[hd0 + 3]
            t0 = t1 = t2 = t3 = s0 = s1 = s2 = s3 = 0.0
            for d in range(first, last + 1):
                w = w_row[d]
                tl = tail[d]
                x = w * p0[d]
                x = x if x > eps else 0.0
                u0[WALK_OFF + d] = x
                t0 += x
                s0 += x * tl
                x = w * p1[d]
                x = x if x > eps else 0.0
                u1[WALK_OFF + d] = x
                t1 += x
                s1 += x * tl
                x = w * p2[d]
                x = x if x > eps else 0.0
                u2[WALK_OFF + d] = x
                t2 += x
                s2 += x * tl
                x = w * p3[d]
                x = x if x > eps else 0.0
                u3[WALK_OFF + d] = x
                t3 += x
                s3 += x * tl
            for g in range(4):
                hd = hd0 + g
                if hd > hd_top:
                    break
                total = t0 if g == 0 else t1 if g == 1 else t2 if g == 2 else t3
                if total == 0.0:
                    continue
                spill = s0 if g == 0 else s1 if g == 1 else s2 if g == 2 else s3
                u = weights[hd]
                # the pairs that move with hd defender hits, lo..hi, and zeros either side
                # as far as the passes read
                lo, hi = first, last
                while u[WALK_OFF + lo] == 0.0:
                    lo += 1
                while u[WALK_OFF + hi] == 0.0:
                    hi -= 1
                for d in range(WALK_OFF + lo - 3, WALK_OFF + lo):
                    u[d] = 0.0
                for d in range(WALK_OFF + hi + 1, WALK_OFF + hi + 4):
                    u[d] = 0.0
                r = min(k + hd, length)
                target = mass[merge[r] if merged else r]
                kept += total * row_mass
                target[d_end] += spill
                # attacker hits ha..ha+3 at once onto the cells lo + ha .. hi + ha + 3 (those
                # below d_end: the pairs whose hits leave a defender): cell c takes
                # a_row[ha + t] * u[c - ha - t], t = 0..3, in turn
                top = min(a_hi, d_end - 1 - lo)
                x0 = u[WALK_OFF + lo:]
                x1 = u[WALK_OFF + lo - 1:]
                x2 = u[WALK_OFF + lo - 2:]
                x3 = u[WALK_OFF + lo - 3:]
                for ha in range(a_lo, top + 1, 4):
                    q0 = a_row[ha]
                    q1 = a_row[ha + 1] if ha + 1 <= top else 0.0
                    q2 = a_row[ha + 2] if ha + 2 <= top else 0.0
                    q3 = a_row[ha + 3] if ha + 3 <= top else 0.0
                    run = target[lo + ha:min(hi + ha + 3, d_end - 1) + 1]
                    for j in range(run.shape[0]):
                        run[j] = (((run[j] + q0 * x0[j]) + q1 * x1[j]) + q2 * x2[j]) + q3 * x3[j]
        totals[TOTAL_PRUNED] += played - kept


@kernel(refs=False)
def _sweep_round(battle, mass, target, base, rounds_played, check_retreat, closed, dice, out,
                 scratch, spent, budget, merged, inter, general_round):
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
    passes battle.work_limit, stops the sweep (its FULL says so).  general_round: see
    _solve_block (None: two single walks, whose `inter` is empty: no two-phase rounds)."""
    A, D, rules, retreat, one = battle.att, battle.dfn, battle.rules, battle.retreat, battle.one
    ast, dst, remainder = A.states, D.states, retreat.remainder
    eps, state_eps, prune_eps, tail_eps = (battle.eps, battle.state_eps, battle.prune_eps,
                                           battle.tail_eps)
    totals = out.totals
    # the attacker's retreat decisions, from the end of the first round the battle fights
    check = check_retreat and rounds_played >= battle.retreat_from
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
                                           check)
            # a pair this unlikely is not worth a round, within the budget (once it is spent,
            # such a pair is played as any other)
            drop = m + im < prune_eps and spent[0] + m + im <= budget
            if (general_round is not None and two and kind == PLAY and m + im >= state_eps
                    and not drop and _phased(ast, dst, base + k, d, rules)):
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
            if general_round is not None and im != 0.0:
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
            elif kind == PLAY_FROM and m >= state_eps:
                # subs submerged as a table says: this round from the pair they lead to, on its
                # own (what it leaves unchanged meets that pair's own decisions, later)
                kept, w = _play(A, D, rules, a2, d2, dice, one, m, target, base, merge,
                                FLAGS[0], scratch, eps, 0.0, out, rounds_played + 1,
                                general_round)
                totals[TOTAL_ROUNDS] += w
                totals[TOTAL_PRUNED] += m - kept
                spent[0] += m - kept
            elif kind == END:  # (in (a2, d2): a withdrawal by submerging ends past (a, d))
                _withdraw_or_finish(outcome, m, a2, d2, rounds_played, ast, remainder, out)
            elif m < state_eps or (m < prune_eps and spent[0] + m <= budget):
                totals[TOTAL_PRUNED] += m  # a state this unlikely is not worth a round
                spent[0] += m
            else:
                tail = min(tail_eps, budget - spent[0])
                kept, w = _play(A, D, rules, base + k, d, dice, one, m, target, base, merge,
                                closed, scratch, eps, tail, out, rounds_played + 1,
                                general_round)
                totals[TOTAL_ROUNDS] += w
                totals[TOTAL_PRUNED] += m - kept
                spent[0] += m - kept


@kernel(nogil=True)
def _solve_blocks(first, last, phase, battle, stacks, explicit):
    """Solve attacker blocks first..last-1 of one phase (see _solve_block), block b writing
    row b of the stacks, or row 0 when they have one row.  A battle with battle.sweep (its
    blocks merged: exact._merged_blocks): every block at once, into row 0, by the call that
    has block 0 of phase 0 (the driver makes one call)."""
    _solve_each_block(first, last, phase, battle, stacks, explicit, FLAGS[1])


@kernel(nogil=True)
def _solve_walk_blocks(first, last, phase, battle, stacks, explicit):
    """_solve_blocks for a battle of two single walks (land, or sea without submarines; no
    bombardment of more than one hit count): numba compiles none of the general round for it
    (a fresh cache: the README's land example 55 -> 12 s of CPU)."""
    _solve_each_block(first, last, phase, battle, stacks, explicit, None)


@kernel(inline=True)
def _solve_each_block(first, last, phase, battle, stacks, explicit, general_round):
    """_solve_blocks' blocks, each solved by _solve_block with general_round."""
    if battle.sweep.shape[0] > 0:
        if first == 0 and last > 0 and phase == 0:
            _solve_block(VALUES[0] - 1, phase, battle, _out(stacks, VALUES[0]), explicit,
                         general_round)
        return
    for b in range(first, last):
        _solve_block(b, phase, battle, _out(stacks, b if stacks.outcomes.shape[0] > 1 else 0),
                     explicit, general_round)


@kernel(nogil=True)
def _win_values(battle, out, value, scratch, a_first, a_last, air):
    """Fill battle.retreat.win_value[a, d] for attacker states a_last-1 down to a_first: the
    probability that the attacker wins if it fights on from the end-of-round pair (a, d),
    itself retreating later as the policy says (the policy must not depend on the round).
    Swept backwards, so every successor is known first: the driver calls this for
    consecutive ranges, from the top, with the same value[n_a, n_d] (at (a, d) after the
    retreat decision there) and scratch (_scratch) throughout.

    air: fill battle.retreat.air_value[a, d] instead (--retreat-air-loss): the probability
    that fighting on from (a, d) with no further retreat ends with every aircraft of the
    attacker lost; the same sweep with another value at the battle's end (1.0 where the
    attacker has no aircraft left, retreat.has_air, else 0.0) and no retreat on the way.  (A
    state without aircraft is 1.0 whatever follows: aircraft lost stay lost, and a lone
    transports' retreat, which _fight_on counts 0, leaves from such a state only.)"""
    A, D, rules, retreat, one = battle.att, battle.dfn, battle.rules, battle.retreat, battle.one
    ast, dst = A.states, D.states
    remainder = retreat.remainder
    table = retreat.air_value if air else retreat.win_value
    n_d = table.shape[1]
    for a in range(a_last - 1, a_first - 1, -1):
        lost = air and retreat.has_air[a] == 0
        for d in range(n_d - 1, -1, -1):
            if lost:
                table[a, d] = value[a, d] = 1.0
                continue
            kind, a2, d2, outcome = _enter(ast, dst, rules, retreat, a, d, VALUES[1], FLAGS[0])
            if kind == END:
                fight = 1.0 if outcome == ATTACKER_WIN and not air else 0.0
            elif kind == MOVE:
                fight = value[a2, d2]
            else:
                fight = _fight_on(A, D, rules, a, d, one, value, scratch, out, one)
            table[a, d] = fight
            value[a, d] = fight
            if not air and kind != END and should_retreat(a, d, 1, retreat, ast, dst):
                # a full retreat wins nothing; after a partial one the stayers fight on
                value[a, d] = value[remainder[a], d] if remainder[a] != FULL_RETREAT else 0.0


@kernel(inline=True)
def _end_value(outcome, a, d, ast, dst, coef):
    """The objective's value of a battle that ends with `outcome` in the pair (a, d):
    coef[0] x the TUV swing (the defender's IPC lost less the attacker's) + coef[1] if the
    attacker wins + coef[2] if it wins with a land unit left (takes the territory)."""
    end = coef[0] * (dst[d, S_IPC] - ast[a, S_IPC])
    if outcome == ATTACKER_WIN:
        end += coef[1]
        if ast[a, S_HAS_LAND] == 1:
            end += coef[2]
    return end


@kernel(refs=False)
def _after_submerging(A, D, rules, one, a, d, a2, d2, first, value, coef, scratch, out):
    """The value of the round a boundary at (a, d) plays once the submerge choices lead to
    (a2, d2), where a side submerges as a table says (no decision again this boundary, as
    _enter's PLAY_FROM): nothing moved, the round from (a, d) (closed form; first, the
    battle's first round start: on its own, what it leaves unchanged meeting (a, d)'s own
    boundary); else units lost without dice after the submerge, or an end, as _enter takes
    them (MOVE), or the round from (a2, d2) on its own."""
    ast, dst = A.states, D.states
    if a2 == a and d2 == d:
        if first:
            total, _, _ = _transition(A, D, rules, a, d, one, one,
                                      VALUES[GATHER], 0.0, value, VALUES[0], FLAGS[0], value,
                                      scratch, 0.0, out, VALUES[0], coef)
            return total
        return _fight_on(A, D, rules, a, d, one, value, scratch, out, coef)
    if withdrew(ast, a, a2):  # its subs were all it had in the battle: it ends there
        return _end_value(RETREAT, a2, d2, ast, dst, coef)
    outcome, a3, d3 = settle(ast, a2, dst, d2, rules[RU_AIR_ALWAYS] == 1)
    if a3 != a2 or d3 != d2:
        return value[a3, d3]
    if outcome != CONTINUE:
        return _end_value(outcome, a2, d2, ast, dst, coef)
    total, _, _ = _transition(A, D, rules, a2, d2, one, one,
                              VALUES[GATHER], 0.0, value, VALUES[0], FLAGS[0], value, scratch,
                              0.0, out, VALUES[0], coef)
    return total


@kernel(refs=False)
def _submerge_choices(A, D, rules, one, a, d, first, value, choices, coef, tolerance,
                      scratch, out):
    """The value of a boundary at (a, d) once the attacker presses on: the attacker's submerge
    choice, then the defender's knowing it, each a side's own (POLICY_TABLE: the best for it,
    the attacker maximising the objective, the defender minimising it, submerging only where
    that is better by more than tolerance; recorded in choices, layout.C_* bits, shifted by
    C_FIRST where first) or its fixed policy's; then _after_submerging."""
    ast, dst = A.states, D.states
    shift = C_FIRST if first else 0
    a_table = rules[RU_A_POLICY] == POLICY_TABLE
    d_table = rules[RU_D_POLICY] == POLICY_TABLE
    a_may = (ast[a, S_SUBMERGE] != 0 and (dst[d, S_INFO] & I_DESTROYER) == 0
             and rules[RU_A_POLICY] != POLICY_NEVER)
    d_may = (dst[d, S_SUBMERGE] != 0 and (ast[a, S_INFO] & I_DESTROYER) == 0
             and rules[RU_D_POLICY] != POLICY_NEVER)
    best = 0.0
    for attacker_submerges in range(2):
        if attacker_submerges == 1 and not a_may:
            break
        a2 = a + ast[a, S_SUBMERGE] if attacker_submerges == 1 else a
        if not a_table and a_may:
            fixed, _ = submerge_step(ast, a, dst, d, rules, choices, first)
            if fixed != a2:
                continue  # the attacker's fixed policy does otherwise
        # the defender, knowing the attacker's choice
        stay = _after_submerging(A, D, rules, one, a, d, a2, d, first, value, coef, scratch,
                                 out)
        here = stay
        if d_may:
            d2 = d + dst[d, S_SUBMERGE]
            if d_table:
                down = _after_submerging(A, D, rules, one, a, d, a2, d2, first, value, coef,
                                         scratch, out)
                bit = C_D_DECIDES if a2 == a else C_DA_DECIDES
                choices[a2, d] |= bit << shift
                if down < stay - tolerance:
                    choices[a2, d] |= (bit << 1) << shift
                    here = down
            else:
                _, fixed = submerge_step(ast, a2, dst, d, rules, choices, first)
                if fixed != d:
                    here = _after_submerging(A, D, rules, one, a, d, a2, fixed, first, value,
                                             coef, scratch, out)
        if attacker_submerges == 0:
            best = here
        elif a_table:
            choices[a, d] |= C_A_DECIDES << shift
            if here > best + tolerance:
                choices[a, d] |= C_A_SUBMERGES << shift
                best = here
        else:
            best = here  # the fixed policy submerges
    return best


@kernel(nogil=True)
def _decide_values(battle, out, value, press, other, choices, coef, tolerance, scratch,
                   a_first, a_last):
    """The optimal decisions by backward induction, for attacker states a_last-1 down to
    a_first (the driver calls it for consecutive ranges from the top, with the same arrays
    throughout, as _win_values): value[a, d], the objective's expected value (coef, see
    _end_value) from the pair (a, d) where a round's end enters it (after a round: retreats
    are decided there), each side deciding as it is best; press[a, d] where the attacker may
    retreat, 1.0 to press on or 0.0 to retreat (elsewhere as it comes, 2.0: the retreat
    tables' win_value with threshold 0.5 is then this policy, round_model.should_retreat),
    and other[a, d] there the value of the option not taken; choices, the submerge choices of
    a side that submerges optimally (_submerge_choices).  As _enter takes a pair: units lost
    without dice first (no decision: the pair they leave decides), end checks, the attacker's
    retreat, then the submerge choices and the round.  The attacker retreats where it may
    (S_MAY_RETREAT; not where the lone-transport rule makes its transports take a volley
    first) and stopping is worth more than fighting on by more than `tolerance`, or, sides
    submerging by fixed policies, where fighting on submerges into a pair where it retreats
    (the same value: _enter enters that pair again, and a retreat is decided once a round,
    before the submerges).  Fighting on from a pair that does not change is summed in closed
    form on the assumption that the same choices are made there again, which is exact: with
    X that value, each choice made by comparing with X is the fixed point's
    (tests/references/decision_reference.py's docstring)."""
    A, D, rules, retreat, one = battle.att, battle.dfn, battle.rules, battle.retreat, battle.one
    ast, dst = A.states, D.states
    remainder = retreat.remainder
    n_d = value.shape[1]
    air_always = rules[RU_AIR_ALWAYS] == 1
    may = retreat.policy[RT_ACTIVE] == 1
    submerges = submerges_before_fire(rules, VALUES[1])
    tables = rules[RU_A_POLICY] == POLICY_TABLE or rules[RU_D_POLICY] == POLICY_TABLE
    for a in range(a_last - 1, a_first - 1, -1):
        decides = may and ast[a, S_MAY_RETREAT] == 1 and not lone_transports(ast, a, rules)
        for d in range(n_d - 1, -1, -1):
            outcome, a1, d1 = settle(ast, a, dst, d, air_always)
            if a1 != a or d1 != d:
                value[a, d] = value[a1, d1]  # units lost without dice: decided where it goes
                continue
            if outcome != CONTINUE:
                value[a, d] = _end_value(outcome, a, d, ast, dst, coef)
                continue
            then_retreats = False
            if submerges and tables:
                fight = _submerge_choices(A, D, rules, one, a, d, FLAGS[0], value, choices,
                                          coef, tolerance, scratch, out)
            else:
                a2, d2 = a, d
                if submerges:
                    a2, d2 = submerge_step(ast, a, dst, d, rules, choices, FLAGS[0])
                if withdrew(ast, a, a2):  # (by submerging: the battle ends there)
                    fight = _end_value(RETREAT, a2, d2, ast, dst, coef)
                elif a2 != a or d2 != d:
                    fight = value[a2, d2]
                    then_retreats = press[a2, d2] == 0.0
                else:
                    fight = _fight_on(A, D, rules, a, d, one, value, scratch, out, coef)
            value[a, d] = fight
            if decides:
                stay = remainder[a]
                stop = (_end_value(RETREAT, a, d, ast, dst, coef) if stay == FULL_RETREAT
                        else value[stay, d])
                if stop > fight + tolerance or (then_retreats and stop >= fight - tolerance):
                    press[a, d] = 0.0
                    value[a, d] = stop
                    other[a, d] = fight
                else:
                    press[a, d] = 1.0
                    other[a, d] = stop


@kernel
def _decide_first(battle, out, value, choices, coef, tolerance, scratch, a, d):
    """The submerge choices at a battle's first round start in the pair (a, d) (where no
    retreat was offered: the round on its own, what it leaves unchanged meeting the pair's
    own boundary, value), after _decide_values has filled value; shifted by C_FIRST in
    choices.  Returns the value of the start (a, d)."""
    return _submerge_choices(battle.att, battle.dfn, battle.rules, battle.one, a, d,
                             FLAGS[1], value, choices, coef, tolerance, scratch, out)
