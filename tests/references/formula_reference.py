"""Slow, obviously-correct reference for the formula combat model (rules reference §9).

Written from the rules text, without importing battlecalc: pieces are individual objects
that remember when they were flipped, losses are applied one point at a time exactly as in
the §9.2 pseudo-code, and probabilities are exact fractions.

Conventions it shares with the engine only through the rules text and docs/formula.md:
* each side rolls one d6; value = (roll + bonus(level)) x face-up pieces + the sum of the base
  values of its face-up pieces; the attacker adds counter points and 1 for hatred;
* loss points come from the §9.2 table, times the loss multiplier;
* A2: a point removes a piece flipped in an earlier exchange, else flips a face-up piece,
  else removes a piece flipped in this exchange; A1: a point removes any flipped piece, else
  flips a face-up piece; points with no piece left do nothing;
* within a side the piece flipped or removed is of the type with the lowest base value in the
  side's role, ties in the order army, air, navy;
* exchanges run while both sides have a face-up piece, at most `exchanges` of them (or
  `cap` for "until-done"); the outcome is read from who still has face-up pieces.
"""

from __future__ import annotations

import random
from collections import Counter
from fractions import Fraction
from functools import cache

TYPES = ("army", "air", "navy")
DIE = 6


def bonus(level):
    """+1 at military levels 3, 6 and 9."""
    return sum(1 for threshold in (3, 6, 9) if level >= threshold)


def loss_points(diff):
    """(attacker loses, defender loses) for attack - defence, the table of §9.2."""
    if diff >= 6:
        return 0, 5
    if diff >= 4:
        return 1, 4
    if diff >= 2:
        return 1, 2
    if diff >= -1:
        return 3, 3
    if diff >= -3:
        return 2, 1
    if diff >= -5:
        return 4, 1
    return 5, 0


class Piece:
    def __init__(self, kind, flipped_in):
        self.kind = kind
        self.flipped_in = flipped_in  # None: face-up; 0: flipped before the battle; k: exchange k

    @property
    def face_up(self):
        return self.flipped_in is None


def make_pieces(army):
    """army: {"army": 3, "army_flipped": 1, ...} -> list of Piece."""
    pieces = []
    for name, count in army.items():
        kind = name.removesuffix("_flipped")
        assert kind in TYPES, name
        for _ in range(count):
            pieces.append(Piece(kind, 0 if name.endswith("_flipped") else None))
    return pieces


def loss_order(base):
    """Types in the order their pieces are flipped and removed: lowest base value first."""
    return sorted(TYPES, key=lambda kind: (base.get(kind, 0), TYPES.index(kind)))


def first_of(candidates, order):
    return min(candidates, key=lambda piece: order.index(piece.kind))


def apply_losses(pieces, points, rule, exchange, order):
    """Apply loss points one at a time (the §9.2 apply_losses, readings A1 and A2)."""
    for _ in range(points):
        flipped = [p for p in pieces if not p.face_up]
        face_up = [p for p in pieces if p.face_up]
        if rule == "A2":
            earlier = [p for p in flipped if p.flipped_in < exchange]
            if earlier:
                pieces.remove(first_of(earlier, order))
            elif face_up:
                first_of(face_up, order).flipped_in = exchange
            elif flipped:
                pieces.remove(first_of(flipped, order))
        else:  # A1
            if flipped:
                pieces.remove(first_of(flipped, order))
            elif face_up:
                first_of(face_up, order).flipped_in = exchange


def value(pieces, roll, level, base):
    face_up = [p for p in pieces if p.face_up]
    return (roll + bonus(level)) * len(face_up) + sum(base.get(p.kind, 0) for p in face_up)


def counts(pieces):
    """Canonical, hashable description of a side: (face-up per type, flipped per type)."""
    return (tuple(sum(1 for p in pieces if p.kind == k and p.face_up) for k in TYPES),
            tuple(sum(1 for p in pieces if p.kind == k and not p.face_up) for k in TYPES))


def from_counts(state):
    face_up, flipped = state
    pieces = []
    for kind, n in zip(TYPES, face_up, strict=True):
        pieces += [Piece(kind, None) for _ in range(n)]
    for kind, n in zip(TYPES, flipped, strict=True):
        pieces += [Piece(kind, 0) for _ in range(n)]
    return pieces


def exchange(att, dfn, ra, rd, opts, number):
    """One exchange on piece lists (changed in place); returns the loss points."""
    attack = value(att, ra, opts["attacker_level"], opts["attack_base"]) + opts["counter"]
    attack += 1 if opts["hatred"] else 0
    defence = value(dfn, rd, opts["defender_level"], opts["defence_base"])
    la, ld = loss_points(attack - defence)
    la *= opts["loss_multiplier"]
    ld *= opts["loss_multiplier"]
    apply_losses(att, la, opts["flips"], number, loss_order(opts["attack_base"]))
    apply_losses(dfn, ld, opts["flips"], number, loss_order(opts["defence_base"]))
    return la, ld


def outcome(att_state, def_state):
    a_left = sum(att_state[0])
    d_left = sum(def_state[0])
    if a_left and d_left:
        return "stalemate"
    if a_left:
        return "attacker_win"
    if d_left:
        return "defender_win"
    return "draw"


def options(attacker_level=1, defender_level=1, counter=0, hatred=False, loss_multiplier=1,
            exchanges=1, cap=100, flips="A2", attack_base=None, defence_base=None):
    return {
        "attacker_level": attacker_level, "defender_level": defender_level,
        "counter": counter, "hatred": hatred, "loss_multiplier": loss_multiplier,
        "max_exchanges": cap if exchanges == "until-done" else exchanges, "flips": flips,
        "attack_base": dict(attack_base or {}), "defence_base": dict(defence_base or {}),
    }


def exact(attacker, defender, **kwargs):
    """Exact law with fractions: {(outcome, a_points, d_points, exchanges, a_state, d_state):
    probability}, enumerating the 36 rolls of every exchange."""
    opts = options(**kwargs)

    @cache
    def law(a_state, d_state, done):
        # distribution of (final states, points from here, exchanges from here)
        if done == opts["max_exchanges"] or not sum(a_state[0]) or not sum(d_state[0]):
            return {(a_state, d_state, 0, 0, 0): Fraction(1)}
        result = Counter()
        for ra in range(1, DIE + 1):
            for rd in range(1, DIE + 1):
                att, dfn = from_counts(a_state), from_counts(d_state)
                la, ld = exchange(att, dfn, ra, rd, opts, done + 1)
                for (fa, fd, pa, pd, n), p in law(counts(att), counts(dfn), done + 1).items():
                    result[(fa, fd, pa + la, pd + ld, n + 1)] += p * Fraction(1, DIE * DIE)
        return dict(result)

    start = law(counts(make_pieces(attacker)), counts(make_pieces(defender)), 0)
    return {(outcome(fa, fd), pa, pd, n, fa, fd): p for (fa, fd, pa, pd, n), p in start.items()}


def simulate(attacker, defender, trials, seed, **kwargs):
    """Die-by-die simulation: the same keys as :func:`exact`, with frequencies."""
    opts = options(**kwargs)
    rng = random.Random(seed)
    tally = Counter()
    for _ in range(trials):
        att, dfn = make_pieces(attacker), make_pieces(defender)
        pa = pd = n = 0
        while (n < opts["max_exchanges"] and any(p.face_up for p in att)
               and any(p.face_up for p in dfn)):
            n += 1
            la, ld = exchange(att, dfn, rng.randint(1, DIE), rng.randint(1, DIE), opts, n)
            pa += la
            pd += ld
        fa, fd = counts(att), counts(dfn)
        tally[(outcome(fa, fd), pa, pd, n, fa, fd)] += 1
    return {key: Fraction(c, trials) for key, c in tally.items()}


def summary(law):
    """The numbers the engine reports, from a law of :func:`exact` or :func:`simulate`."""
    out = {key: Fraction(0) for key in ("attacker_win", "defender_win", "draw", "stalemate")}
    a_points, d_points, n_exchanges = Counter(), Counter(), Counter()
    survivors = {"attacker": Counter(), "defender": Counter()}
    for (result, pa, pd, n, fa, fd), p in law.items():
        out[result] += p
        a_points[pa] += p
        d_points[pd] += p
        n_exchanges[n] += p
        for side, state in (("attacker", fa), ("defender", fd)):
            for kind, up, down in zip(TYPES, state[0], state[1], strict=True):
                survivors[side][kind] += p * up
                survivors[side][kind + "_flipped"] += p * down
    out["attacker_loss_points"] = sum(k * p for k, p in a_points.items())
    out["defender_loss_points"] = sum(k * p for k, p in d_points.items())
    out["attacker_loss_points_distribution"] = {k: p for k, p in a_points.items() if p}
    out["defender_loss_points_distribution"] = {k: p for k, p in d_points.items() if p}
    out["mean_exchanges"] = sum(k * p for k, p in n_exchanges.items())
    out["exchanges_distribution"] = {k: p for k, p in n_exchanges.items() if p}
    out["attacker_survivors"] = dict(survivors["attacker"])
    out["defender_survivors"] = dict(survivors["defender"])
    return out
