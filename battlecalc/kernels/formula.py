"""Kernels of the formula combat model (seed-002 fan game, rules reference §9).

The rule code lives here once and is used by both solvers: :func:`loss_row` (the loss-table
row of a difference), :func:`side_value` (a side's combat value), :func:`apply_losses` (loss
points -> flips and removals) and :func:`row_counts` (how many of the die x die outcomes give
each row).  The exact solver (``battlecalc.formula.engine``) calls them from Python; the
Monte Carlo kernel :func:`simulate_chunks` calls them per exchange.

Conventions: a side's piece types are indexed in that side's order of losses (index 0 is
flipped and removed first); ``face_up[t]`` / ``flipped[t]`` are piece counts; values and
differences are in formula points; loss-table losses are already multiplied by the loss
multiplier.  Each chunk of Monte Carlo trials has its own splitmix64 stream seeded by the
caller from numpy's SeedSequence, and every aggregate is an integer, so one seed gives the
same numbers whatever the number of threads.
"""

import numpy as np

from .jit import kernel
from .layout import ATTACKER_WIN, DEFENDER_WIN, DRAW, STALEMATE
from .montecarlo import next_uniform


@kernel
def loss_row(diff, row_min):
    """Loss-table row of an attack - defence difference (points).

    row_min[R-1]: strictly decreasing lower bounds of rows 0..R-2; row R-1 takes every lower
    difference.  Returns the row index 0..R-1.
    """
    row = 0
    n_bounded = row_min.shape[0]
    while row < n_bounded and diff < row_min[row]:
        row += 1
    return row


@kernel
def side_value(roll, bonus, face_up, base):
    """Combat value in points: (roll + bonus) x face-up pieces + sum of base[t] x face_up[t].

    roll: the side's die; bonus: its military-level bonus; face_up[T], base[T]: face-up
    pieces and per-type base value in the side's role.  Counter points and hatred are added
    by the caller (attacker only).
    """
    pieces = 0
    extra = 0
    for t in range(face_up.shape[0]):
        pieces += face_up[t]
        extra += base[t] * face_up[t]
    return (roll + bonus) * pieces + extra


@kernel
def _remove_flipped(flipped):
    for t in range(flipped.shape[0]):
        if flipped[t] > 0:
            flipped[t] -= 1
            return


@kernel
def _flip_face_up(face_up, flipped):
    for t in range(face_up.shape[0]):
        if face_up[t] > 0:
            face_up[t] -= 1
            flipped[t] += 1
            return


@kernel
def apply_losses(face_up, flipped, points, same_exchange_removal):
    """Apply `points` loss points to one side, in place, one point at a time.

    face_up[T], flipped[T]: piece counts in the side's order of losses (the first type with a
    piece is the one flipped or removed).  same_exchange_removal=False is reading A2 (rules
    reference 9.3 item 9): a point removes a piece flipped in an EARLIER exchange, else flips
    a face-up piece, else (nothing face-up left) removes a piece flipped in this exchange.
    True is reading A1: a point removes any flipped piece, including one flipped by an
    earlier point of this exchange, else flips a face-up piece.  Points beyond the side's
    last piece are lost.
    """
    n_types = face_up.shape[0]
    earlier = 0  # pieces flipped in earlier exchanges (all in `flipped` until A2 flips one)
    for t in range(n_types):
        earlier += flipped[t]
    for _ in range(points):
        any_face_up = False
        any_flipped = False
        for t in range(n_types):
            any_face_up = any_face_up or face_up[t] > 0
            any_flipped = any_flipped or flipped[t] > 0
        if same_exchange_removal:
            if any_flipped:
                _remove_flipped(flipped)
            elif any_face_up:
                _flip_face_up(face_up, flipped)
        elif earlier > 0:
            # no piece has been flipped yet this exchange, so every flipped piece is earlier
            _remove_flipped(flipped)
            earlier -= 1
        elif any_face_up:
            _flip_face_up(face_up, flipped)
        elif any_flipped:
            _remove_flipped(flipped)


@kernel
def row_counts(die, a_bonus, a_extra, a_face_up, a_base, d_bonus, d_face_up, d_base, row_min,
               counts):
    """Fill counts[R] with the number of the die x die (attacker, defender) rolls per row.

    a_extra: counter points + hatred, added to the attacker's final value.
    """
    for i in range(counts.shape[0]):
        counts[i] = 0
    for ra in range(1, die + 1):
        attack = side_value(ra, a_bonus, a_face_up, a_base) + a_extra
        for rd in range(1, die + 1):
            defence = side_value(rd, d_bonus, d_face_up, d_base)
            counts[loss_row(attack - defence, row_min)] += 1


@kernel
def outcome_code(a_face_up_left, d_face_up_left):
    """Outcome once exchanges stop: who still has face-up pieces (STALEMATE = undecided)."""
    if a_face_up_left > 0 and d_face_up_left > 0:
        return STALEMATE
    if a_face_up_left > 0:
        return ATTACKER_WIN
    if d_face_up_left > 0:
        return DEFENDER_WIN
    return DRAW


@kernel(nogil=True)
def simulate_chunks(first, last, seeds, chunk_trials, die, max_exchanges, same_exchange_removal,
                    row_min, row_att, row_def,
                    a_bonus, a_extra, a_base, a_face_up0, a_flipped0,
                    d_bonus, d_base, d_face_up0, d_flipped0,
                    outcomes, exchanges_hist, a_points_hist, d_points_hist,
                    a_face_up_sum, a_flipped_sum, d_face_up_sum, d_flipped_sum,
                    a_left_sq, d_left_sq):
    """Simulate chunks first..last-1 of formula battles; chunk c writes only to row c.

    seeds[C] uint64 stream seeds, chunk_trials[C] trials per chunk.  A battle runs exchanges
    while both sides have a face-up piece, at most max_exchanges.  row_att[R] / row_def[R]:
    loss points of each loss-table row (multiplier applied).  Per side: bonus (level bonus),
    base[T] (base values in its role), face_up0[T] / flipped0[T] (starting pieces), all in
    that side's order of losses; a_extra = counter points + hatred.  Outputs (counts over
    trials): outcomes[C, 5], exchanges_hist[C, max_exchanges + 1], *_points_hist[C, P] (total
    loss points; the last bin collects anything larger), *_face_up_sum[C, T] and
    *_flipped_sum[C, T] (pieces left), *_left_sq[C, 2] (sums of squares of the face-up and
    flipped totals left).
    """
    n_types_a = a_face_up0.shape[0]
    n_types_d = d_face_up0.shape[0]
    a_top = a_points_hist.shape[1] - 1
    d_top = d_points_hist.shape[1] - 1
    for c in range(first, last):
        state = seeds[c]
        a_face_up = np.empty(n_types_a, dtype=np.int64)
        a_flipped = np.empty(n_types_a, dtype=np.int64)
        d_face_up = np.empty(n_types_d, dtype=np.int64)
        d_flipped = np.empty(n_types_d, dtype=np.int64)
        for _ in range(chunk_trials[c]):
            for t in range(n_types_a):  # (element by element: see kernels/exact.py)
                a_face_up[t] = a_face_up0[t]
                a_flipped[t] = a_flipped0[t]
            for t in range(n_types_d):
                d_face_up[t] = d_face_up0[t]
                d_flipped[t] = d_flipped0[t]
            a_points = 0
            d_points = 0
            exchanges = 0
            while exchanges < max_exchanges and a_face_up.sum() > 0 and d_face_up.sum() > 0:
                ua, state = next_uniform(state)
                ud, state = next_uniform(state)
                ra = 1 + int(ua * die)
                rd = 1 + int(ud * die)
                attack = side_value(ra, a_bonus, a_face_up, a_base) + a_extra
                defence = side_value(rd, d_bonus, d_face_up, d_base)
                row = loss_row(attack - defence, row_min)
                # simultaneous: both values were computed before either side's losses
                apply_losses(a_face_up, a_flipped, row_att[row], same_exchange_removal)
                apply_losses(d_face_up, d_flipped, row_def[row], same_exchange_removal)
                a_points += row_att[row]
                d_points += row_def[row]
                exchanges += 1
            a_up = a_face_up.sum()
            a_fl = a_flipped.sum()
            d_up = d_face_up.sum()
            d_fl = d_flipped.sum()
            outcomes[c, outcome_code(a_up, d_up)] += 1
            exchanges_hist[c, exchanges] += 1
            a_points_hist[c, min(a_points, a_top)] += 1
            d_points_hist[c, min(d_points, d_top)] += 1
            for t in range(n_types_a):
                a_face_up_sum[c, t] += a_face_up[t]
                a_flipped_sum[c, t] += a_flipped[t]
            for t in range(n_types_d):
                d_face_up_sum[c, t] += d_face_up[t]
                d_flipped_sum[c, t] += d_flipped[t]
            a_left_sq[c, 0] += a_up * a_up
            a_left_sq[c, 1] += a_fl * a_fl
            d_left_sq[c, 0] += d_up * d_up
            d_left_sq[c, 1] += d_fl * d_fl
