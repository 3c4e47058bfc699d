"""The exact solver's fire step (kernels.exact.fire._fire): the law of side y's state after
side x fires, as a list of (state, probability) in the order first met.

Checked against a plain reference written here: every combination of hit counts (sub hits,
bombardment, air hits, general hits) in _fire's order, each one's casualties by
round_model.assign from scratch (not _fire's greedy steps, nor the single walk over ha + hg
that fire._fire_air_general takes where air hits land wherever general hits do), the probability
the same product, summed per state in the order met.  The lists must be equal to the last
bit: the same states in the same order, the same sums (the solver's answers rest on it being
the same sum in the same order).  General fire with and without the subs (and with
bombardment's hits), and the subs' opening strike alone, from every state pair of both sides
of random sea battles of five editions, and battles chosen for the walk: aircraft with
destroyers against subs, and aircraft against a side without subs when subs make the
aircraft a category of their own.

The incremental hit assignment of the general fire (fire._assign_counts / _assign_step) is
checked against round_model.assign on every state of small random sides, and hits beyond
their targets against the same hits capped (what _fire sums into one term)."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
from battles import SEA_EDITIONS, random_army, sea_units
from helpers import compiled_tables
from tiers import sampled

from battlecalc.kernels import jit, round_model
from battlecalc.kernels import layout as c
from battlecalc.kernels.exact import fire
from battlecalc.kernels.layout import (
    NO_STATE,
    R_HI,
    R_LO,
    S_AIR,
    S_OTHER,
    S_ROW_A,
    S_ROW_N,
    S_ROW_S,
    S_SUBS,
)

CHOSEN = [
    dict(rules="1942-2e", attacker="3 bomber, 4 destroyer, 2 carrier",
         defender="2 transport, 2 cruiser, 3 submarine, 1 carrier"),
    dict(rules="1942-2e", attacker="2 submarine, 3 fighter, 1 carrier",
         defender="2 cruiser, 1 carrier, 2 fighter"),
    dict(rules="revised", attacker="2 fighter, 1 destroyer, 1 battleship",
         defender="2 submarine, 1 destroyer, 1 fighter"),
    dict(rules="aa50", attacker="2 bomber, 2 destroyer",
         defender="2 submarine, 2 transport, 1 cruiser"),
    dict(rules="1942-2e", attacker="8 submarine, 2 carrier",
         defender="6 transport, 3 cruiser, 2 carrier, 2 fighter"),
]


def _plain(function):
    return getattr(function, "py_func", function)


def _random(seed: int, count: int) -> list[dict]:
    rng = random.Random(seed)
    battles = []
    for i in range(count):
        edition = SEA_EDITIONS[i % len(SEA_EDITIONS)]
        units = sea_units(edition)
        battles.append(dict(rules=edition, attacker=random_army(rng, units, rng.randint(1, 5)),
                            defender=random_army(rng, units, rng.randint(1, 5))))
    return battles


BATTLES = CHOSEN + _random(19, 20)
BOMBARD = np.array([0.5, 0.3, 0.2])  # a law of 0-2 bombardment hits (its sub hits run on)


def _chance(pmf, row, h, hi, last):
    """_hit_chance's law: P(h hits), the tail summed at the last count that matters."""
    if hi == 0:
        return 1.0
    if h < last or last == hi:
        return pmf[row, h]
    total = 0.0
    for k in range(hi, h - 1, -1):
        total += pmf[row, k]
    return total


def _reference(xst, xr, xpmf, x, subs_fire, air_subs, extra, yst, yr, y, others_fire=True):
    """The law of y's state after x's fire (general fire, its subs too where subs_fire; the
    subs' opening strike alone without others_fire), as _fire's loops meet the hit counts,
    each count's casualties by round_model.assign."""
    assign = _plain(round_model.assign)
    subs_fire = subs_fire and xst[x, S_SUBS] > 0
    s_row, a_row, n_row = xst[x, S_ROW_S], xst[x, S_ROW_A], xst[x, S_ROW_N]
    s_lo, s_hi = (xr[s_row, R_LO], xr[s_row, R_HI]) if subs_fire else (0, 0)
    a_lo, a_hi = (xr[a_row, R_LO], xr[a_row, R_HI]) if others_fire else (0, 0)
    n_lo, n_hi = (xr[n_row, R_LO], xr[n_row, R_HI]) if others_fire else (0, 0)
    subs, air, other = yst[y, S_SUBS], yst[y, S_AIR], yst[y, S_OTHER]
    s_last = max(s_lo, min(s_hi, subs + other))
    a_last = max(a_lo, min(a_hi, air + other + (subs if air_subs else 0)))
    n_last = max(n_lo, min(n_hi, subs + air + other))
    law: dict[int, float] = {}
    for hs in range(s_lo, s_last + 1):
        ps = _chance(xpmf, s_row, hs, s_hi, s_last)
        for hb in range(extra.shape[0]):
            pb = ps * extra[hb]
            for ha in range(a_lo, a_last + 1):
                pa = pb * _chance(xpmf, a_row, ha, a_hi, a_last)
                for hg in range(n_lo, n_last + 1):
                    p = pa * _chance(xpmf, n_row, hg, n_hi, n_last)
                    if p > 0.0:
                        y2 = assign(yst, yr, y, hs + hb, ha, hg, air_subs)
                        law[y2] = law[y2] + p if y2 in law else p
    return list(law), list(law.values())


# the chosen battles, and every fourth random one, in the quick tier (the rest: the slow tier)
@pytest.mark.parametrize("i", [*range(len(CHOSEN)),
                               *sampled([(i,) for i in range(len(CHOSEN), len(BATTLES))], 4)])
def test_fire_lists_equal_the_reference_to_the_last_bit(i):
    jit.compiled()  # the compiled _fire (plain Python under BATTLECALC_PLAIN_KERNELS=1)
    compiled = compiled_tables(dict(BATTLES[i], sea=True))
    round_rules = compiled.rules
    one = np.ones(1)
    sides = [(compiled.attacker, compiled.defender), (compiled.defender, compiled.attacker)]
    walks = 0
    for fx, fy in sides:
        xst, xr, xpmf = fx.states, fx.rows, fx.pmf
        yst, yr = fy.states, fy.rows
        n_y = len(yst)
        where = np.full(n_y, NO_STATE, dtype=np.int64)
        states = np.zeros(n_y, dtype=np.int64)
        probs = np.zeros(n_y)
        for x in range(len(xst)):
            air_subs = bool(_plain(round_model.air_on_subs)(xst, x, round_rules))
            for y in range(n_y):
                # general fire without and with the subs, the subs' strike alone (its hits
                # on anything but aircraft: air_subs off, as _strike_lists fires it), and
                # general fire with bombardment's extra hits (at anything but aircraft)
                for subs_fire, others_fire, extra in ((False, True, one), (True, True, one),
                                                      (True, False, one),
                                                      (True, True, BOMBARD)):
                    air_hits_subs = air_subs and others_fire
                    count = fire._fire(xst, xr, xpmf, x, subs_fire, others_fire,
                                       air_hits_subs, extra, yst, yr, y, round_rules, where,
                                       states, probs)
                    want_states, want_probs = _reference(xst, xr, xpmf, x, subs_fire,
                                                         air_hits_subs, extra, yst, yr, y,
                                                         others_fire)
                    assert states[:count].tolist() == want_states, (x, y, subs_fire)
                    assert probs[:count].tolist() == want_probs, (x, y, subs_fire)
                    assert all(where[s] == k for k, s in enumerate(want_states))
                    a_row = xst[x, S_ROW_A]
                    walks += (others_fire and xr[a_row, R_HI] > xr[a_row, R_LO]
                              and (air_subs or yst[y, S_SUBS] == 0))
                    where[states[:count]] = NO_STATE
    if i < len(CHOSEN):
        assert walks > 0  # the battles chosen for it reach the walk over ha + hg


# --- the incremental hit assignment -----------------------------------------------------------


def _side(cats: list[int]):
    """A side whose order of losses is the categories `cats` (0 subs, 1 air, 2 others), as the
    rows (ranks) and a function from casualties taken (s, a, n) to its one-state table."""
    ranks = {0: [], 1: [], 2: []}
    for rank, cat in enumerate(cats):
        ranks[cat].append(rank)
    rows, first = [], {}
    for cat in (2, 0, 1):
        first[cat] = len(rows)
        for rank in ranks[cat] + [c.NO_RANK]:
            row = [0] * c.ROW_COLS
            row[c.R_RANK] = rank
            rows.append(row)

    def state(xs, xa, xn):
        st = np.zeros((1, c.STATE_COLS), dtype=np.int64)
        st[0, c.S_SUBS] = len(ranks[0]) - xs
        st[0, c.S_AIR] = len(ranks[1]) - xa
        st[0, c.S_OTHER] = len(ranks[2]) - xn
        st[0, c.S_ROW_S], st[0, c.S_ROW_A], st[0, c.S_ROW_N] = (
            first[0] + xs, first[1] + xa, first[2] + xn)
        st[0, c.S_STRIDE_S], st[0, c.S_STRIDE_A] = 100, 10
        return st

    return np.array(rows, dtype=np.int64), state, [len(ranks[k]) for k in range(3)]


def _random_side_states(seed: int):
    """(casualty categories, rows, state, units left per category) of every state of 40
    random sides of up to 3 subs, 3 aircraft and 3 others."""
    generator = random.Random(seed)
    for _ in range(40):
        cats = [0] * generator.randint(0, 3) + [1] * generator.randint(0, 3) + [2] * \
            generator.randint(0, 3)
        generator.shuffle(cats)
        rows, state, (n_s, n_a, n_n) = _side(cats)
        for xs, xa, xn in itertools.product(range(n_s + 1), range(n_a + 1), range(n_n + 1)):
            yield cats, rows, state(xs, xa, xn), (n_s - xs, n_a - xa, n_n - xn)


def test_incremental_assignment_equals_round_model_assign():
    checked = 0
    for cats, rows, st, left in _random_side_states(7):
        for hs, ha, hg, air_subs in itertools.product(range(3), range(3), range(4),
                                                      (False, True)):
            want = round_model.assign(st, rows, 0, hs, ha, hg, air_subs)
            got = fire._assign_counts(st, rows, 0, hs, ha, hg, air_subs)
            assert got[0] * 100 + got[1] * 10 + got[2] == want, (cats, left, hs, ha, hg,
                                                                  air_subs)
            checked += 1
    assert checked > 10_000


@pytest.mark.slow
def test_hits_beyond_their_targets_change_nothing():
    # fire._fire sums the hit counts of a kind past what the enemy has for them to land on
    # into one term: round_model.assign must give the same state for all of them
    for _, rows, st, (s, a, n) in _random_side_states(11):
        for hs, ha, hg, air_subs in itertools.product(range(8), range(8), range(8),
                                                      (False, True)):
            last = (s + n, a + n + (s if air_subs else 0), s + a + n)
            capped = (min(hs, last[0]), min(ha, last[1]), min(hg, last[2]))
            assert (round_model.assign(st, rows, 0, hs, ha, hg, air_subs)
                    == round_model.assign(st, rows, 0, *capped, air_subs))
