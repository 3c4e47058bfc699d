"""Independent, slow, obviously-correct reference for land-battle odds.

This module is deliberately self-contained: it does NOT import anything from
the ``battlecalc`` package.  It hard-codes its own unit stats and follows the
rules step by step, so that the fast (numba) implementation can be tested
against it.  Readability is preferred over speed everywhere.

It provides two functions:

* ``exact_land(edition, attacker, defender, *, heavy_bombers, jets)`` -- the
  exact result, computed with ``fractions.Fraction`` by recursion with
  memoisation over battle states (remaining unit counts of both sides).
* ``simulate_land(edition, attacker, defender, *, trials, seed, heavy_bombers,
  jets)`` -- a die-by-die Monte Carlo simulation using ``random.Random(seed)``
  and ``rng.randint(1, 6)`` for every single die.

Both also take the amphibious-assault keywords ``landing``, ``bombard`` and
``combined_bombardment`` (see "Amphibious assaults" below).

Rules implemented (land battles only)
=====================================

Editions: ``"revised"`` and ``"1942-2e"``.

Unit stats (cost, attack, defence)::

    unit        revised      1942-2e
    infantry    3, 1, 2      3, 1, 2
    artillery   4, 2, 2      4, 2, 2
    tank        5, 3, 3      6, 3, 3
    fighter     10, 3, 4     10, 3, 4
    bomber      15, 4, 1     12, 4, 1
    aa          5, 0, 0      5, 0, 0

* revised ``aa`` (AA gun): never rolls in general combat, is never a casualty,
  never counts as a unit left, and is never an IPC loss; its survivors are
  reported as 0.
* 1942-2e ``aa`` (AAA): an ordinary 0/0 unit that is a casualty, counts as a
  unit, and costs 5 IPC when destroyed.
* Aircraft = fighter, bomber.  Units that can take territory = infantry,
  artillery, tank.
* A die with value v hits on a d6 roll <= v (probability v/6); value 0 never
  hits.

Support: when attacking, each artillery supports one infantry:
min(#infantry, #artillery) infantry attack at 2, the rest at 1 (counted from
the units present when the dice are rolled).

Technologies (off by default):

* heavy_bombers -- revised: each attacking bomber rolls 2 dice at 4, each die
  may hit (up to 2 hits per bomber).  1942-2e: each attacking bomber rolls 2
  dice at 4 and scores at most one hit (hit probability 1 - (2/6)**2 = 8/9).
  Bomber defence is unchanged.
* jets -- revised: fighter defence 5.  1942-2e: fighter attack 4.

Round-1 anti-aircraft fire, before anything else, only if the defender has at
least one aa and the attacker has at least one aircraft:

* revised: one die per attacking aircraft, hitting on 1, regardless of the
  number of AA guns.  Each die is rolled at its own aircraft, which is lost on
  a 1 (fighters lost ~ Binomial(#fighters, 1/6), bombers lost
  ~ Binomial(#bombers, 1/6), independently).
* 1942-2e: min(3 * #aa, #aircraft) dice hitting on 1; the attacker loses that
  many aircraft in its order of losses restricted to aircraft (fighters before
  bombers).
* AA casualties are removed before any other fire.

Order of losses (both sides): cheapest first by cost, ties broken by the
lower combat value in the side's role (attack value when attacking, defence
value when defending).  A 1942-2e defender loses its aa first of all.  A
revised aa is never a casualty.  Hits beyond the available casualties are
wasted.  This gives:

* revised attack / defence: infantry, artillery, tank, fighter, bomber;
* 1942-2e attack: infantry, artillery, tank, fighter, bomber;
* 1942-2e defence: aa, infantry, artillery, tank, fighter, bomber.

(An attacking aa is accepted as well and placed by the same cost/value rule.)

A general combat round: the attacker rolls with all its units, the defender
rolls with all its units (both as present at the start of the round, so the
defender's casualties fire back), then both sides remove their casualties
simultaneously in their order of losses.

"A side has units" means: it has at least one unit other than a revised aa
gun.  After the AA fire (before any general round -- this module applies this
check before round 1 even when no AA fire took place) and after every general
round:

1. 1942-2e only: if the defender consists only of aa units (at least one) and
   the attacker has units, those aa are destroyed (they are losses).
2. Neither side has units -> draw; only the attacker -> attacker_win; only the
   defender -> defender_win.
3. Both sides have units but neither can score a hit (every die value is 0)
   -> stalemate, the battle ends at once.
4. Otherwise another general round is fought.

Reported results:

* attacker_win, defender_win, draw, stalemate -- probabilities;
* takes_territory -- attacker_win with at least one infantry/artillery/tank
  left;
* mean_rounds -- expected number of general rounds fought (AA fire alone is
  not a round; a battle decided before the first general round has 0 rounds);
* attacker_ipc_loss / defender_ipc_loss -- expected total cost of the units
  destroyed (a revised aa gun is never lost);
* tuv_swing = defender_ipc_loss - attacker_ipc_loss;
* attacker_survivors / defender_survivors -- dict unit -> expected count left
  at the end, for every unit name given in the input (revised aa: 0).

Amphibious assaults
===================

Keywords ``landing=None``, ``bombard=None``, ``combined_bombardment=False``.

* ``landing`` -- dict of land units (infantry, artillery, tank) arriving from
  transports.  They are attackers exactly like the ``attacker`` units (they
  fight, are supported by artillery, are taken in the same order of losses);
  the two dicts are merged by unit name (``attacker`` may be empty).  Retreat
  is not modelled.  Landing units are reported among the attacker's survivors
  and IPC losses like any attacker.
* ``bombard`` -- dict of ships bombarding the territory.  Bombard values:
  revised battleship 4, destroyer 3 only with ``combined_bombardment``;
  1942-2e battleship 4, cruiser 3 (``combined_bombardment`` has no effect in
  1942-2e).  Any other ship name raises ValueError, and so does a non-empty
  ``bombard`` without any ``landing`` unit (bombardment only supports an
  amphibious assault).  The ships cannot be hit and are not part of the
  result (no survivors, no IPC).  One die per firing ship.
* Bombard hits may only hit defending LAND units: infantry, artillery, tank,
  and in 1942-2e also aa (the revised AA gun is never a casualty).  Never an
  aircraft.  If the defender has no land units left, bombard hits are lost.
* revised: every ship fires (no limit).  Bombardment is part of the opening
  fire, before round 1, at the same time as the AA fire.  Its casualties are
  taken in the defender's order of losses restricted to land units and are
  removed at once: they never fire.  Then the usual pre-round check applies
  (e.g. a defender left with nothing that counts -> attacker_win, 0 rounds).
  Bombardment is not a general round.
* 1942-2e: at most one ship per landing unit fires; when there are more ships
  the strongest fire (battleships before cruisers) and the rest do nothing.
  The bombard dice are rolled in general round 1 together with the attacker's
  general fire (only if round 1 is fought at all).  The defender takes the
  round-1 casualties so that as many hits as possible land (bombard hits on
  land units only, general hits on anything); among the largest possible sets
  of casualties it takes the lexicographically first in its order of losses.
  All round-1 casualties (bombard and general) fire back in round 1 and are
  removed at the end of round 1.  AAA that fired at aircraft may be chosen as
  bombard casualties.  Later rounds are ordinary general rounds.
* AA fire is unaffected by landing units (they are not aircraft) and by the
  bombarding ships.
"""

from __future__ import annotations

import itertools
import random
from fractions import Fraction
from functools import cache
from math import comb

# ---------------------------------------------------------------------------
# Hard-coded rules data
# ---------------------------------------------------------------------------

REVISED = "revised"
E1942 = "1942-2e"
EDITIONS = (REVISED, E1942)

# Fixed order used for the count tuples that describe a side.
UNITS = ("infantry", "artillery", "tank", "fighter", "bomber", "aa")
AIRCRAFT = ("fighter", "bomber")
TERRITORY_TAKERS = ("infantry", "artillery", "tank")

# (cost, attack, defence), before technologies.
STATS = {
    REVISED: {
        "infantry": (3, 1, 2),
        "artillery": (4, 2, 2),
        "tank": (5, 3, 3),
        "fighter": (10, 3, 4),
        "bomber": (15, 4, 1),
        "aa": (5, 0, 0),
    },
    E1942: {
        "infantry": (3, 1, 2),
        "artillery": (4, 2, 2),
        "tank": (6, 3, 3),
        "fighter": (10, 3, 4),
        "bomber": (12, 4, 1),
        "aa": (5, 0, 0),
    },
}

# Amphibious assaults: units that may land from transports, defending units
# that bombard hits may strike (the revised AA gun is excluded separately,
# since it is never a casualty), and the bombard value of each ship.
LANDING_UNITS = ("infantry", "artillery", "tank")
BOMBARD_TARGETS = ("infantry", "artillery", "tank", "aa")
BOMBARD_VALUES = {
    REVISED: {"battleship": 4},
    E1942: {"battleship": 4, "cruiser": 3},
}
COMBINED_BOMBARDMENT_VALUES = {"destroyer": 3}  # revised technology only

ATTACK = "attack"
DEFENCE = "defence"

OUTCOMES = ("attacker_win", "defender_win", "draw", "stalemate")

SIXTH = Fraction(1, 6)


# ---------------------------------------------------------------------------
# Small rule helpers (shared by the exact solver and the simulation)
# ---------------------------------------------------------------------------

def _check_edition(edition):
    if edition not in EDITIONS:
        raise ValueError(f"unknown edition {edition!r}; expected one of {EDITIONS}")


def _to_counts(side):
    """dict unit -> count  ==>  tuple of counts in UNITS order."""
    for name, n in side.items():
        if name not in UNITS:
            raise ValueError(f"unknown unit {name!r}")
        if not isinstance(n, int) or n < 0:
            raise ValueError(f"bad count {n!r} for unit {name!r}")
    return tuple(side.get(name, 0) for name in UNITS)


def _idx(name):
    return UNITS.index(name)


def _cost(edition, unit):
    return STATS[edition][unit][0]


def _value(edition, unit, role, jets):
    """Combat value (die value) of one unit in the given role."""
    _, attack, defence = STATS[edition][unit]
    if jets and unit == "fighter":
        if edition == REVISED:
            defence = 5
        else:
            attack = 4
    return attack if role == ATTACK else defence


def _is_casualty(edition, unit):
    """Can this unit be taken as a loss?  (A revised AA gun never is.)"""
    return not (edition == REVISED and unit == "aa")


def _counts_as_unit(edition, unit):
    """Does this unit count as 'a unit left'?  (A revised AA gun never does.)"""
    return not (edition == REVISED and unit == "aa")


def _has_units(edition, counts):
    return any(counts[_idx(u)] > 0 for u in UNITS if _counts_as_unit(edition, u))


def _loss_order(edition, role, jets):
    """Unit names in the order in which they are taken as casualties."""
    candidates = [u for u in UNITS if _is_casualty(edition, u)]

    def key(u):
        aa_first = 0 if (edition == E1942 and role == DEFENCE and u == "aa") else 1
        return (aa_first, _cost(edition, u), _value(edition, u, role, jets), UNITS.index(u))

    return sorted(candidates, key=key)


def _removable(counts, order):
    return sum(counts[_idx(u)] for u in order)


def _remove_casualties(counts, hits, order):
    """Remove `hits` units following `order`; extra hits are wasted."""
    new = list(counts)
    for u in order:
        if hits == 0:
            break
        i = _idx(u)
        taken = min(hits, new[i])
        new[i] -= taken
        hits -= taken
    return tuple(new)


def _aa_only_rule(edition, att, dfn):
    """1942-2e: a defender left with only AAA loses it if the attacker has units."""
    if edition != E1942:
        return dfn
    i = _idx("aa")
    only_aa = dfn[i] > 0 and all(dfn[j] == 0 for j in range(len(UNITS)) if j != i)
    if only_aa and _has_units(edition, att):
        new = list(dfn)
        new[i] = 0
        return tuple(new)
    return dfn


def _dice_groups(edition, role, counts, heavy_bombers, jets):
    """List of (number_of_dice, hit_probability) for one side's general fire.

    Each "die" here scores at most one hit.  For 1942-2e heavy bombers the
    two physical dice of a bomber are combined into one "die" with hit
    probability 1 - (2/6)**2 = 8/9.
    """
    groups = []
    for u in UNITS:
        n = counts[_idx(u)]
        if n == 0:
            continue
        if edition == REVISED and u == "aa":
            continue  # AA guns never roll in general combat
        v = _value(edition, u, role, jets)
        if role == ATTACK and u == "infantry":
            supported = min(n, counts[_idx("artillery")])
            groups.append((supported, Fraction(v + 1, 6)))
            groups.append((n - supported, Fraction(v, 6)))
        elif role == ATTACK and u == "bomber" and heavy_bombers:
            if edition == REVISED:
                groups.append((2 * n, Fraction(v, 6)))
            else:
                miss = 1 - Fraction(v, 6)
                groups.append((n, 1 - miss * miss))
        else:
            groups.append((n, Fraction(v, 6)))
    return [(n, p) for n, p in groups if n > 0]


def _can_hit(edition, role, counts, heavy_bombers, jets):
    return any(p > 0 for _, p in _dice_groups(edition, role, counts, heavy_bombers, jets))


def _classify(edition, att, dfn, heavy_bombers, jets):
    """Return the outcome name if the battle is over in this state, else None."""
    att_has = _has_units(edition, att)
    dfn_has = _has_units(edition, dfn)
    if not att_has and not dfn_has:
        return "draw"
    if att_has and not dfn_has:
        return "attacker_win"
    if dfn_has and not att_has:
        return "defender_win"
    if not _can_hit(edition, ATTACK, att, heavy_bombers, jets) and not _can_hit(
        edition, DEFENCE, dfn, heavy_bombers, jets
    ):
        return "stalemate"
    return None


def _takes_territory(att):
    return any(att[_idx(u)] > 0 for u in TERRITORY_TAKERS)


def _reported_survivors(edition, counts, names):
    result = {}
    for name in names:
        if not _counts_as_unit(edition, name):
            result[name] = 0
        else:
            result[name] = counts[_idx(name)]
    return result


def _ipc_loss(edition, start, end):
    loss = 0
    for u in UNITS:
        if _is_casualty(edition, u):
            i = _idx(u)
            loss += _cost(edition, u) * (start[i] - end[i])
    return loss


# ---------------------------------------------------------------------------
# Amphibious-assault helpers (shared by the exact solver and the simulation)
# ---------------------------------------------------------------------------

def _landing_counts(landing):
    """Validate `landing` and return it as a count tuple in UNITS order."""
    landing = landing or {}
    for name in landing:
        if name not in LANDING_UNITS:
            raise ValueError(
                f"{name!r} cannot land from a transport; expected one of {LANDING_UNITS}"
            )
    return _to_counts(landing)


def _merge_counts(a, b):
    return tuple(x + y for x, y in zip(a, b, strict=True))


def _bombard_values_of(edition, combined_bombardment):
    values = dict(BOMBARD_VALUES[edition])
    if edition == REVISED and combined_bombardment:
        values.update(COMBINED_BOMBARDMENT_VALUES)
    return values


def _firing_ships(edition, bombard, n_landing, combined_bombardment):
    """Validate `bombard`; return the die values of the ships that actually fire.

    One entry per firing ship, strongest first.  1942-2e: at most one ship per
    landing unit fires (the strongest ones).  revised: all of them fire.
    """
    bombard = bombard or {}
    values = _bombard_values_of(edition, combined_bombardment)
    for name, n in bombard.items():
        if name not in values:
            raise ValueError(
                f"{name!r} cannot bombard in {edition}; ships that can: {sorted(values)}"
            )
        if not isinstance(n, int) or n < 0:
            raise ValueError(f"bad count {n!r} for ship {name!r}")
    ships = []
    for name, n in bombard.items():
        ships.extend([values[name]] * n)
    ships.sort(reverse=True)  # strongest first
    if ships and n_landing == 0:
        raise ValueError("bombard needs landing units: ships bombard only in an amphibious assault")
    if edition == E1942:
        ships = ships[:n_landing]
    return ships


def _bombard_groups(ships):
    """Dice groups (number_of_dice, hit_probability) of the firing ships."""
    return [(ships.count(v), Fraction(v, 6)) for v in sorted(set(ships), reverse=True)]


def _bombard_order(dfn_order):
    """The defender's order of losses restricted to units bombard hits may strike."""
    return [u for u in dfn_order if u in BOMBARD_TARGETS]


@cache
def _round1_defender_casualties(dfn, general_hits, bombard_hits, dfn_order):
    """1942-2e round 1: the defender's state after general and bombard hits.

    Brute force over every possible set of casualties (a count per unit):

    * the set must be coverable by the hits, each casualty by its own hit:
      every chosen non-land unit needs a general hit, and the chosen land
      units take the bombard hits plus the general hits left over;
    * among the coverable sets the largest ones are kept (as many hits as
      possible land), and of those the lexicographically first in the order
      of losses (the sorted sequence of order positions is smallest).
    """
    order = list(dfn_order)
    best_key, best_choice = None, None
    for choice in itertools.product(*(range(dfn[_idx(u)] + 1) for u in order)):
        n_land = sum(c for u, c in zip(order, choice, strict=True) if u in BOMBARD_TARGETS)
        n_other = sum(c for u, c in zip(order, choice, strict=True) if u not in BOMBARD_TARGETS)
        if n_other > general_hits:
            continue
        if n_land > bombard_hits + (general_hits - n_other):
            continue
        sequence = tuple(pos for pos, c in enumerate(choice) for _ in range(c))
        key = (-len(sequence), sequence)
        if best_key is None or key < best_key:
            best_key, best_choice = key, choice
    new = list(dfn)
    for u, c in zip(order, best_choice, strict=True):
        new[_idx(u)] -= c
    return tuple(new)


# ---------------------------------------------------------------------------
# Exact solver
# ---------------------------------------------------------------------------

def _binomial(n, p):
    """Exact Binomial(n, p) distribution as dict k -> Fraction."""
    return {k: comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)}


def _convolve(d1, d2):
    out = {}
    for a, pa in d1.items():
        for b, pb in d2.items():
            out[a + b] = out.get(a + b, 0) + pa * pb
    return out


def _hit_distribution(groups, cap):
    """Distribution of the total number of hits, with hits >= cap lumped at cap."""
    dist = {0: Fraction(1)}
    for n, p in groups:
        dist = _convolve(dist, _binomial(n, p))
        capped = {}
        for h, ph in dist.items():
            capped[min(h, cap)] = capped.get(min(h, cap), 0) + ph
        dist = capped
    return {h: ph for h, ph in dist.items() if ph != 0}


def _aa_fire_distribution(edition, att, dfn):
    """Distribution over attacker states after round-1 AA fire: dict state -> Fraction."""
    n_aa = dfn[_idx("aa")]
    n_air = sum(att[_idx(u)] for u in AIRCRAFT)
    if n_aa == 0 or n_air == 0:
        return {att: Fraction(1)}
    result = {}
    if edition == REVISED:
        # one die per aircraft, aimed at that aircraft
        fi, bi = _idx("fighter"), _idx("bomber")
        for lost_f, pf in _binomial(att[fi], SIXTH).items():
            for lost_b, pb in _binomial(att[bi], SIXTH).items():
                new = list(att)
                new[fi] -= lost_f
                new[bi] -= lost_b
                new = tuple(new)
                result[new] = result.get(new, 0) + pf * pb
    else:
        dice = min(3 * n_aa, n_air)
        air_order = [u for u in _loss_order(edition, ATTACK, False) if u in AIRCRAFT]
        for hits, ph in _binomial(dice, SIXTH).items():
            new = _remove_casualties(att, hits, air_order)
            result[new] = result.get(new, 0) + ph
    return result


def exact_land(edition, attacker, defender, *, heavy_bombers=False, jets=False,
               landing=None, bombard=None, combined_bombardment=False):
    """Exact land-battle result with Fraction arithmetic.

    Returns a dict with keys attacker_win, defender_win, draw, stalemate,
    takes_territory, attacker_ipc_loss, defender_ipc_loss, tuv_swing,
    mean_rounds (Fractions) and attacker_survivors / defender_survivors
    (dict unit -> Fraction expected count left).

    `landing` / `bombard` / `combined_bombardment`: amphibious assault (see the
    module docstring).  Landing units are merged into the attacker.
    """
    _check_edition(edition)
    landing0 = _landing_counts(landing)
    att0 = _merge_counts(_to_counts(attacker), landing0)
    dfn0 = _to_counts(defender)
    ships = _firing_ships(edition, bombard, sum(landing0), combined_bombardment)
    bombard_groups = _bombard_groups(ships)
    att_names = {**dict.fromkeys(attacker), **dict.fromkeys(landing or {})}
    att_order = _loss_order(edition, ATTACK, jets)
    dfn_order = _loss_order(edition, DEFENCE, jets)
    bombard_order = _bombard_order(dfn_order)
    n = len(UNITS)

    # A "value vector" holds the expectations, from a given state onwards, of:
    #   [0..3]  indicators of OUTCOMES (attacker_win, defender_win, draw, stalemate)
    #   [4]     takes_territory
    #   [5]     number of general rounds still to be fought
    #   [6..6+n)      final attacker counts (UNITS order)
    #   [6+n..6+2n)   final defender counts (UNITS order)
    size = 6 + 2 * n
    memo = {}

    def terminal_vector(outcome, att, dfn):
        vec = [Fraction(0)] * size
        vec[OUTCOMES.index(outcome)] = Fraction(1)
        if outcome == "attacker_win" and _takes_territory(att):
            vec[4] = Fraction(1)
        for i in range(n):
            vec[6 + i] = Fraction(att[i])
            vec[6 + n + i] = Fraction(dfn[i])
        return vec

    def round_transitions(att, dfn):
        """Distribution of (att', dfn') after one general round (incl. the AAA rule)."""
        att_groups = _dice_groups(edition, ATTACK, att, heavy_bombers, jets)
        dfn_groups = _dice_groups(edition, DEFENCE, dfn, heavy_bombers, jets)
        att_hits = _hit_distribution(att_groups, _removable(dfn, dfn_order))
        dfn_hits = _hit_distribution(dfn_groups, _removable(att, att_order))
        trans = {}
        for ha, pa in att_hits.items():
            for hd, pd in dfn_hits.items():
                new_dfn = _remove_casualties(dfn, ha, dfn_order)
                new_att = _remove_casualties(att, hd, att_order)
                new_dfn = _aa_only_rule(edition, new_att, new_dfn)
                key = (new_att, new_dfn)
                trans[key] = trans.get(key, 0) + pa * pd
        return trans

    def value(att, dfn):
        key = (att, dfn)
        if key in memo:
            return memo[key]
        outcome = _classify(edition, att, dfn, heavy_bombers, jets)
        if outcome is not None:
            vec = terminal_vector(outcome, att, dfn)
        else:
            trans = round_transitions(att, dfn)
            q = trans.pop(key, Fraction(0))  # P(nothing changes this round)
            if q == 1:
                raise AssertionError("non-terminal state cannot change; rules bug")
            acc = [Fraction(0)] * size
            for (a2, d2), p in trans.items():
                sub = value(a2, d2)
                for i in range(size):
                    acc[i] += p * sub[i]
            acc[5] += 1  # the round being fought now (repeated while self-looping)
            vec = [x / (1 - q) for x in acc]
        memo[key] = vec
        return vec

    def first_round_with_bombardment(att, dfn):
        """1942-2e: value from the start of round 1, bombard dice rolled in round 1.

        Round 1 differs from later rounds only by the bombard dice and the
        round-1 casualty rule; from round 2 on, `value` takes over.  (A round 1
        without any hit simply leads to `value` of the same state.)
        """
        outcome = _classify(edition, att, dfn, heavy_bombers, jets)
        if outcome is not None:
            return terminal_vector(outcome, att, dfn)
        att_groups = _dice_groups(edition, ATTACK, att, heavy_bombers, jets)
        dfn_groups = _dice_groups(edition, DEFENCE, dfn, heavy_bombers, jets)
        general_hits = _hit_distribution(att_groups, _removable(dfn, dfn_order))
        bombard_hits = _hit_distribution(bombard_groups, _removable(dfn, bombard_order))
        dfn_hits = _hit_distribution(dfn_groups, _removable(att, att_order))
        acc = [Fraction(0)] * size
        for hg, pg in general_hits.items():
            for hb, pb in bombard_hits.items():
                new_dfn = _round1_defender_casualties(dfn, hg, hb, tuple(dfn_order))
                for hd, pd in dfn_hits.items():
                    new_att = _remove_casualties(att, hd, att_order)
                    sub = value(new_att, _aa_only_rule(edition, new_att, new_dfn))
                    for i in range(size):
                        acc[i] += pg * pb * pd * sub[i]
        acc[5] += 1  # round 1 itself
        return acc

    def opening_bombardment(dfn):
        """revised: distribution of defender states after the opening bombardment."""
        if not ships:
            return {dfn: Fraction(1)}
        result = {}
        for hits, p in _hit_distribution(bombard_groups, _removable(dfn, bombard_order)).items():
            new = _remove_casualties(dfn, hits, bombard_order)
            result[new] = result.get(new, 0) + p
        return result

    # Round-1 AA fire (revised: together with the opening bombardment), then the
    # pre-round AAA rule, then the battle proper (1942-2e: round 1 with bombardment).
    total = [Fraction(0)] * size
    for att1, p in _aa_fire_distribution(edition, att0, dfn0).items():
        if edition == REVISED:
            after_bombardment = opening_bombardment(dfn0)
        else:
            after_bombardment = {dfn0: Fraction(1)}
        for dfn_b, pb in after_bombardment.items():
            dfn1 = _aa_only_rule(edition, att1, dfn_b)
            if edition == E1942 and ships:
                sub = first_round_with_bombardment(att1, dfn1)
            else:
                sub = value(att1, dfn1)
            for i in range(size):
                total[i] += p * pb * sub[i]

    att_final = tuple(total[6 + i] for i in range(n))
    dfn_final = tuple(total[6 + n + i] for i in range(n))
    att_loss = _ipc_loss(edition, att0, att_final)
    dfn_loss = _ipc_loss(edition, dfn0, dfn_final)
    return {
        "attacker_win": total[0],
        "defender_win": total[1],
        "draw": total[2],
        "stalemate": total[3],
        "takes_territory": total[4],
        "attacker_ipc_loss": Fraction(att_loss),
        "defender_ipc_loss": Fraction(dfn_loss),
        "tuv_swing": Fraction(dfn_loss - att_loss),
        "mean_rounds": total[5],
        "attacker_survivors": {
            k: Fraction(v) for k, v in _reported_survivors(edition, att_final, att_names).items()
        },
        "defender_survivors": {
            k: Fraction(v) for k, v in _reported_survivors(edition, dfn_final, defender).items()
        },
    }


# ---------------------------------------------------------------------------
# Die-by-die Monte Carlo simulation
# ---------------------------------------------------------------------------

def _roll_hits(rng, edition, role, counts, heavy_bombers, jets):
    """Roll every die of one side's general fire; return the number of hits."""
    hits = 0
    supported_left = counts[_idx("artillery")] if role == ATTACK else 0
    for u in UNITS:
        if edition == REVISED and u == "aa":
            continue  # AA guns never roll in general combat
        v = _value(edition, u, role, jets)
        for _ in range(counts[_idx(u)]):
            if role == ATTACK and u == "infantry" and supported_left > 0:
                supported_left -= 1
                hits += rng.randint(1, 6) <= v + 1
            elif role == ATTACK and u == "bomber" and heavy_bombers:
                first = rng.randint(1, 6) <= v
                second = rng.randint(1, 6) <= v
                if edition == REVISED:
                    hits += first + second
                else:
                    hits += first or second
            else:
                hits += rng.randint(1, 6) <= v
    return int(hits)


def _simulate_aa_fire(rng, edition, att, dfn):
    n_aa = dfn[_idx("aa")]
    n_air = sum(att[_idx(u)] for u in AIRCRAFT)
    if n_aa == 0 or n_air == 0:
        return att
    new = list(att)
    if edition == REVISED:
        for u in AIRCRAFT:
            i = _idx(u)
            for _ in range(att[i]):
                if rng.randint(1, 6) == 1:
                    new[i] -= 1
        return tuple(new)
    dice = min(3 * n_aa, n_air)
    hits = sum(1 for _ in range(dice) if rng.randint(1, 6) == 1)
    air_order = [u for u in _loss_order(edition, ATTACK, False) if u in AIRCRAFT]
    return _remove_casualties(att, hits, air_order)


def _roll_bombard_hits(rng, ships):
    """One die per firing ship; return the number of hits."""
    return sum(1 for v in ships if rng.randint(1, 6) <= v)


def _simulate_one(rng, edition, att, dfn, att_order, dfn_order, heavy_bombers, jets,
                  ships=()):
    """Fight one battle; return (outcome, final att, final dfn, rounds)."""
    bombard_order = _bombard_order(dfn_order)
    att = _simulate_aa_fire(rng, edition, att, dfn)
    if edition == REVISED and ships:
        # opening fire: bombard casualties are removed before they can fire
        dfn = _remove_casualties(dfn, _roll_bombard_hits(rng, ships), bombard_order)
    dfn = _aa_only_rule(edition, att, dfn)
    rounds = 0
    while True:
        outcome = _classify(edition, att, dfn, heavy_bombers, jets)
        if outcome is not None:
            return outcome, att, dfn, rounds
        rounds += 1
        att_hits = _roll_hits(rng, edition, ATTACK, att, heavy_bombers, jets)
        dfn_hits = _roll_hits(rng, edition, DEFENCE, dfn, heavy_bombers, jets)
        if edition == E1942 and ships and rounds == 1:
            bombard_hits = _roll_bombard_hits(rng, ships)
            new_dfn = _round1_defender_casualties(dfn, att_hits, bombard_hits, tuple(dfn_order))
        else:
            new_dfn = _remove_casualties(dfn, att_hits, dfn_order)
        new_att = _remove_casualties(att, dfn_hits, att_order)
        att, dfn = new_att, _aa_only_rule(edition, new_att, new_dfn)


def simulate_land(edition, attacker, defender, *, trials, seed,
                  heavy_bombers=False, jets=False,
                  landing=None, bombard=None, combined_bombardment=False):
    """Monte Carlo land battle: same keys as exact_land, as floats (means)."""
    _check_edition(edition)
    landing0 = _landing_counts(landing)
    att0 = _merge_counts(_to_counts(attacker), landing0)
    dfn0 = _to_counts(defender)
    ships = tuple(_firing_ships(edition, bombard, sum(landing0), combined_bombardment))
    att_names = {**dict.fromkeys(attacker), **dict.fromkeys(landing or {})}  # reported names
    if trials <= 0:
        raise ValueError("trials must be positive")
    att_order = _loss_order(edition, ATTACK, jets)
    dfn_order = _loss_order(edition, DEFENCE, jets)
    rng = random.Random(seed)

    tally = {k: 0 for k in OUTCOMES}
    takes = 0
    rounds_total = 0
    att_loss_total = 0
    dfn_loss_total = 0
    att_surv = {k: 0 for k in att_names}
    dfn_surv = {k: 0 for k in defender}
    for _ in range(trials):
        outcome, att, dfn, rounds = _simulate_one(
            rng, edition, att0, dfn0, att_order, dfn_order, heavy_bombers, jets, ships
        )
        tally[outcome] += 1
        if outcome == "attacker_win" and _takes_territory(att):
            takes += 1
        rounds_total += rounds
        att_loss_total += _ipc_loss(edition, att0, att)
        dfn_loss_total += _ipc_loss(edition, dfn0, dfn)
        for k, v in _reported_survivors(edition, att, att_names).items():
            att_surv[k] += v
        for k, v in _reported_survivors(edition, dfn, defender).items():
            dfn_surv[k] += v

    return {
        "attacker_win": tally["attacker_win"] / trials,
        "defender_win": tally["defender_win"] / trials,
        "draw": tally["draw"] / trials,
        "stalemate": tally["stalemate"] / trials,
        "takes_territory": takes / trials,
        "attacker_ipc_loss": att_loss_total / trials,
        "defender_ipc_loss": dfn_loss_total / trials,
        "tuv_swing": (dfn_loss_total - att_loss_total) / trials,
        "mean_rounds": rounds_total / trials,
        "attacker_survivors": {k: v / trials for k, v in att_surv.items()},
        "defender_survivors": {k: v / trials for k, v in dfn_surv.items()},
    }


# ---------------------------------------------------------------------------
# Examples
# ---------------------------------------------------------------------------

if __name__ == "__main__":
    examples = [
        ("revised", {"infantry": 1}, {"infantry": 1}, {}),
        ("1942-2e", {"bomber": 1}, {"aa": 1}, {}),
        ("revised", {"fighter": 1}, {"aa": 1}, {}),
        ("revised", {"infantry": 3, "artillery": 1, "tank": 1}, {"infantry": 4, "tank": 1}, {}),
        ("1942-2e", {"fighter": 2, "bomber": 1, "infantry": 1}, {"infantry": 2, "aa": 1},
         {"heavy_bombers": True, "jets": True}),
    ]
    for edition, att, dfn, tech in examples:
        ex = exact_land(edition, att, dfn, **tech)
        mc = simulate_land(edition, att, dfn, trials=20000, seed=1, **tech)
        print(f"{edition}: {att} vs {dfn} {tech}")
        for key in ("attacker_win", "defender_win", "draw", "stalemate", "takes_territory",
                    "attacker_ipc_loss", "defender_ipc_loss", "tuv_swing", "mean_rounds"):
            print(f"  {key:18s} exact {float(ex[key]):9.5f} ({ex[key]})  mc {mc[key]:9.5f}")
        print("  attacker_survivors", {k: float(v) for k, v in ex["attacker_survivors"].items()})
        print("  defender_survivors", {k: float(v) for k, v in ex["defender_survivors"].items()})
