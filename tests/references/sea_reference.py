"""Independent, slow, obviously-correct reference for SEA-battle odds.

This module is deliberately self-contained: it does NOT import anything from
the ``battlecalc`` package.  It hard-codes its own unit stats and follows the
rules step by step, so that the fast implementation can be tested against it.
Readability is preferred over speed everywhere.  (The land-battle reference
is ``tests/reference.py``; this file follows the same style.)

It provides two functions:

* ``exact_sea(edition, attacker, defender, *, attacker_submerge, defender_submerge,
  attacker_super_subs, defender_super_subs, attacker_tech, defender_tech, dice)``
  -- the exact result, computed with ``fractions.Fraction`` by recursion with
  memoisation over battle states.
* ``simulate_sea(edition, attacker, defender, *, trials, seed, ...same options...)``
  -- a die-by-die Monte Carlo simulation using ``random.Random(seed)`` and
  ``rng.randint(1, 6)`` for every single die.  Its round loop is written
  separately from the exact solver's transition functions (they share only the
  small rule helpers: casualty choice, targeting, end checks, submerging), so
  the two cross-check each other's bookkeeping.

Rules implemented (sea battles only)
====================================

Editions: ``"revised"`` and ``"1942-2e"`` (described first), and
``"classic"``, ``"aa50"``, ``"1940-2e"`` (described at the end, by their
differences).

Unit stats (cost, attack, defence)::

    unit                 revised      1942-2e
    battleship           24, 4, 4     20, 4, 4
    damaged_battleship   24, 4, 4     20, 4, 4
    cruiser              -            12, 3, 3
    destroyer            12, 3, 3     8, 2, 2
    carrier              16, 1, 3     14, 1, 2
    transport            8, 0, 1      7, 0, 0
    submarine            8, 2, 2      6, 2, 1
    fighter              10, 3, 4     10, 3, 4
    bomber               15, 4, 1     12, 4, 1

* A battleship takes two hits: the first damages it (it becomes a
  damaged_battleship, same stats), the second sinks it.  A damaged battleship
  may be given in the input.
* super_subs (per side): submarine ATTACK 3 (defence unchanged, so
  ``defender_super_subs`` changes nothing).
* A die with value v hits on a d6 roll <= v (probability v/6); value 0 never
  hits (and is not rolled).
* "Air" = fighter, bomber; "sea units" = all others; "surface" = sea units
  that are not submarines.

Targeting.  Every hit has a kind, given by the unit that rolled it:

* sub hits (rolled by submarines) may hit sea units only (subs and transports
  included), never air;
* air hits (rolled by fighters / bombers) may hit air and surface units, and
  submarines: revised always; 1942-2e only if the FIRING side has a destroyer
  among its units at the moment it fires;
* general hits (rolled by surface ships) may hit anything.

Casualty choice (by the owner of the units hit).  The side's order of losses
(OOL) is a list of casualty slots:

1. the damage slot of every healthy battleship;
2. every other unit, by cost ascending, ties by the lower combat value in the
   side's role (attack value when attacking, defence when defending), then by
   the fixed ``UNITS`` order (never needed with the stats above);
3. the kill slots: one per damaged battleship and one per healthy battleship
   (the latter only usable if that battleship's damage slot is taken in the
   same choice);
4. 1942-2e only: transports (after everything, damaged battleships included).
   In revised transports are ordinary units of step 2 (cost 8, value 0/1, so
   they come first of all after the damage slots).

Given the hits received (a multiset of hit kinds), the owner walks down the
OOL and takes each slot if the slots taken so far plus this one can still be
matched to distinct hits that are allowed to hit them (bipartite matching by
augmenting paths).  Matchable slot sets form a (transversal) matroid, so this
greedy choice lands the largest possible number of hits and is the
lexicographically first such set in the OOL.  Hits that cannot be matched are
lost.

A side is "in the battle" if it has a unit that has neither submerged nor been
lost.  End checks (both editions), on the units in the battle:

* neither side in: "draw";
* only the defender in: "defender_win" (subs the attacker submerged earlier are
  not in the battle: the attacker has lost what it had in it);
* only the attacker in: "attacker_win" (submerged defender subs are not units
  left, but they are survivors);
* both in, but neither side can hit any unit of the other (a unit "can hit" a
  target if its value in its role is > 0 and its hit kind may hit the target,
  the air-vs-sub destroyer rule included): "stalemate";
* otherwise the battle goes on.

Submerge policies (per side): "never" (default), "when-only-subs-left" (when
every unit the side still has in the battle is a sub), "first-chance"
(whenever allowed).  A side may submerge only if it has subs in the battle and
the opposing side has no destroyer; then all its subs leave the battle at once
(they survive, are not losses, fire no more).  The attacker decides first,
then the defender (the order cannot matter: submerging never changes who has a
destroyer).  Where the attacker's subs submerge and nothing else of it is left
in the battle, it withdraws: the battle ends there as "retreat" (its subs
survive), whatever the defender does (issue 42: TripleA ends a battle with no
attacking unit left in it as the defender's win, so a defeat or a draw after the
attacker's subs submerged earlier is one, not a retreat).

1942-2e
-------
Before round 1 and after every round:

a. defenceless transports: for each side X with transports in the battle, if
   no unit of X can hit any enemy unit, and at least one enemy unit has a value
   > 0 in its role, all of X's transports are lost (they are losses);
b. end checks (including the stalemate check), see above.

A round:

1. submerge decisions (attacker, then defender).  If afterwards the end checks
   (including the stalemate check -- an interpretation, see below) end the
   battle, it ends here and this round is not counted;
2. surprise strike: each side's subs fire iff the opposing side has no
   destroyer; both sides' strikes are simultaneous (sub hits); each side
   chooses and removes its casualties at once;
3. general fire, both sides simultaneously, with the units present after
   step 2, except the subs that struck in step 2.  Subs firing here score sub
   hits; air scores air hits (subs hittable iff the firing side has a destroyer
   after step 2); surface ships score general hits.  Each side chooses its
   casualties for all the hits it received in this step;
4. casualties are removed (battleships damaged).

Revised
-------
Before round 1 and after every round: end checks (with the stalemate check).
No defenceless-transport rule.

Lone attacking transports: if at the start of a round the attacker's units in
the battle are only transports (at least one), that round is fought (they roll
nothing) and then, if any of them survives, the battle ends with outcome
"retreat" (they count as survivors).

A round:

1. opening fire: every submarine of BOTH sides fires (sub hits),
   simultaneously.  Each side chooses casualties for the sub hits it received.
   A side WITHOUT a destroyer (at the start of the round) removes them at once;
   a side WITH a destroyer keeps them for this round: they fire in step 2 and
   are removed at the end of the round (they cannot be chosen again);
2. general fire: each side fires with all its non-submarine units present
   (its opening-fire casualties included if it has a destroyer).  Subs do not
   fire here.  Air may hit subs.  Each side chooses casualties among its units
   not already chosen this round (a battleship damaged in step 1 is now a
   damaged battleship: its kill slot is in the kill-slot block);
3. all casualties are removed;
4. (lone-transport rule, then) end checks with the stalemate check;
5. submerge decisions (end of round): attacker, then defender.

Reported results
----------------

* attacker_win, defender_win, draw, stalemate, retreat -- probabilities;
* mean_rounds -- expected number of rounds that reached the surprise strike
  (1942-2e) / the opening fire (revised); a battle decided before any round
  has 0 rounds;
* attacker_ipc_loss / defender_ipc_loss -- expected cost of the units
  destroyed (a battleship that ends damaged costs nothing; a sunk one costs
  its full cost once; submerged subs are not lost);
* tuv_swing = defender_ipc_loss - attacker_ipc_loss;
* attacker_survivors / defender_survivors -- dict unit -> expected count left
  at the end (submerged subs included), for every unit name of the input plus
  "damaged_battleship" if the side had a battleship (or named
  damaged_battleship); a battleship damaged during the battle is counted as a
  damaged_battleship.

Interpretations taken where the brief was open
----------------------------------------------

* 1942-2e: after the submerge decisions, the full end checks INCLUDING the
  stalemate check are applied (e.g. fighter + sub attacking a lone sub with
  "first-chance" submerging: after the attacker's sub leaves, the fighter and
  the defending sub cannot hit each other -> stalemate, with 0 rounds for that
  round).  The defenceless-transport rule is NOT applied there (only between
  rounds).
* super_subs affects the attack value only.
* Submerging requires at least one sub in the battle; the attacker's withdrawal
  by submerging (the retreat outcome) means at least one sub submerged at that
  decision and nothing else of the attacker left in the battle.
* "damaged_battleship" is reported when the input has battleship > 0 or
  names damaged_battleship (a key "battleship": 0 alone does not add it).
* Revised: the destroyer that decides whether opening-fire casualties stay
  for general fire is the one the side has at the start of the round (even
  if it is itself chosen as an opening-fire casualty).
* 1942-2e: the destroyer checks for surprise strikes and submerging use the
  units in the battle at that step; the air-vs-sub check uses the firing
  side's units after step 2.  (A side whose enemy's subs strike has no
  destroyer, so a surprise strike can never remove the destroyer that would
  let its air hit subs.)
* The stalemate check and the defenceless-transport check look only at
  units in the battle (submerged subs are out of it).

New editions, technologies and low luck
=======================================

docs/editions.md is the prose version, with the sources and every choice.
The editions use three sea models (``MODEL``): "revised"; "v3" (1942-2e,
aa50, 1940-2e: everything written above for 1942-2e); "classic".

Unit stats (cost, attack, defence) of the new editions::

    unit                 classic      aa50         1940-2e
    battleship           24, 4, 4     20, 4, 4     20, 4, 4   (classic: one hit)
    damaged_battleship   -            20, 4, 4     20, 4, 4
    cruiser              -            12, 3, 3     12, 3, 3
    destroyer            12, 3, 3 (*) 8, 2, 2      8, 2, 2
    carrier              18, 1, 3     14, 1, 2     16, 0, 2   (1940-2e: two hits)
    damaged_carrier      -            -            16, 0, 2
    transport            8, 0, 1      7, 0, 0      7, 0, 0
    submarine            8, 2, 2      6, 2, 1      6, 2, 1
    fighter              12, 3, 4     10, 3, 4     10, 3, 4
    tactical_bomber      -            -            11, 3, 3
    bomber               15, 4, 1     12, 4, 1     12, 4, 1

(*) classic's optional destroyer, simply available.  Tactical bombers are
air units; on attack each fighter pairs with one tactical bomber, which then
attacks at 4 (1940-2e; never more than +1).

Two-hit units (``TWO_HIT``): battleships (not in classic) and 1940-2e
carriers; a damaged carrier fights at full value, as a damaged battleship.
The order of losses becomes: the damage slots of every healthy two-hit unit
(cheapest type first: carriers 16 before battleships 20), the ordinary units
(cost, value, UNITS order), the kill slots type by type (cheapest type
first; within a type already-damaged units, then those damaged in this
choice), V3 transports last.  "damaged_carrier" is reported when the input
has a carrier (as "damaged_battleship" for a battleship).

Classic, a round:

1. sneak attack: if the attacker has subs and the defender has no destroyer
   (at the start of the round), the attacker's subs fire (sub hits: sea units
   only); the defender chooses and removes its casualties at once;
2. general fire, simultaneous: the attacker with every other unit (and its
   subs too if they did not sneak-attack: sub hits), the defender with every
   unit left after step 1, its subs included (sub hits, never air).  Air may
   always hit subs;
3. all casualties removed; then the revised lone-transport rule (an attacker
   with only transports at the start of the round fights it and, if any
   transport is left, the battle ends as "retreat") and the end checks.

No submerging in classic (a submerge policy other than "never" raises
ValueError); transports are ordinary 0/1 units; no defenceless-transport
rule.

Technologies (``attacker_tech`` / ``defender_tech``, names as in
tests/reference.py; the old ``*_super_subs`` switches add super_subs):
super_subs (sub attack 3), jets (classic, revised: fighter defence +1; V3:
fighter attack +1), heavy_bombers (attacking bombers: classic 3 dice each
able to hit, revised 2 dice each able to hit, V3 best of 2),
lhtr_heavy_bombers (aa50, 1942-2e: best of 2 on attack and defence); radar,
improved_artillery, combined_bombardment are accepted and change nothing at
sea.

Low luck (``dice="low_luck"``): in every fire step (surprise strike / opening
fire / sneak attack, general fire) a side's firing units are grouped by the
set of enemy units present that they may hit (TripleA's target groups): sub
hits never air; air hits not subs where the V3 destroyer rule forbids it;
everything else anything.  Each group sums its strength (value; k x value
for k dice that may each hit; min(value + k - 1, 6) for best-of-k) and
scores strength // 6 sure hits plus one die for the remainder.  Submarines
always fire as a group of their own, whatever the enemy has (TripleA rolls
first-strike units in their own step even when a destroyer cancels the
surprise strike); air and ships with the same target set fire as one group
(e.g. when the enemy has no submarines); a kind with no target does not
fire.

Biased dice (``die_law``, exact only, standard dice only): six Fractions p_1
.. p_6 in [0, 1] summing to 1, face k shown with probability p_k; a die of
value v hits with probability p_1 + ... + p_v, best-of-k with 1 - (1 -
that)**k.  Every face's probability must be positive here (a unit of value
v > 0 always has a chance to hit, as the fair die gives it).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from math import comb

# ---------------------------------------------------------------------------
# Hard-coded rules data
# ---------------------------------------------------------------------------

REVISED = "revised"
E1942 = "1942-2e"
CLASSIC = "classic"
AA50 = "aa50"
E1940 = "1940-2e"
EDITIONS = (REVISED, E1942, CLASSIC, AA50, E1940)

# The three sea-combat models (see the module docstring).
MODEL = {REVISED: "revised", CLASSIC: "classic", E1942: "v3", AA50: "v3", E1940: "v3"}

# Fixed order used for the count tuples that describe a side.
UNITS = (
    "battleship",
    "damaged_battleship",
    "cruiser",
    "destroyer",
    "carrier",
    "damaged_carrier",
    "transport",
    "submarine",
    "fighter",
    "tactical_bomber",
    "bomber",
)
AIR = ("fighter", "tactical_bomber", "bomber")
BATTLESHIPS = ("battleship", "damaged_battleship")

# (cost, attack, defence), before technologies and pairing.
STATS = {
    REVISED: {
        "battleship": (24, 4, 4),
        "damaged_battleship": (24, 4, 4),
        "destroyer": (12, 3, 3),
        "carrier": (16, 1, 3),
        "transport": (8, 0, 1),
        "submarine": (8, 2, 2),
        "fighter": (10, 3, 4),
        "bomber": (15, 4, 1),
    },
    E1942: {
        "battleship": (20, 4, 4),
        "damaged_battleship": (20, 4, 4),
        "cruiser": (12, 3, 3),
        "destroyer": (8, 2, 2),
        "carrier": (14, 1, 2),
        "transport": (7, 0, 0),
        "submarine": (6, 2, 1),
        "fighter": (10, 3, 4),
        "bomber": (12, 4, 1),
    },
    CLASSIC: {
        "battleship": (24, 4, 4),  # one hit
        "destroyer": (12, 3, 3),  # optional unit ("Use Destroyers and Artillery")
        "carrier": (18, 1, 3),
        "transport": (8, 0, 1),
        "submarine": (8, 2, 2),
        "fighter": (12, 3, 4),
        "bomber": (15, 4, 1),
    },
    E1940: {
        "battleship": (20, 4, 4),
        "damaged_battleship": (20, 4, 4),
        "cruiser": (12, 3, 3),
        "destroyer": (8, 2, 2),
        "carrier": (16, 0, 2),  # two hits
        "damaged_carrier": (16, 0, 2),
        "transport": (7, 0, 0),
        "submarine": (6, 2, 1),
        "fighter": (10, 3, 4),
        "tactical_bomber": (11, 3, 3),
        "bomber": (12, 4, 1),
    },
}
STATS[AA50] = dict(STATS[E1942])  # AA50's sea units are 1942 2E's (reference 6.2)

# Two-hit units of each edition: healthy form -> damaged form.
TWO_HIT = {
    REVISED: {"battleship": "damaged_battleship"},
    E1942: {"battleship": "damaged_battleship"},
    CLASSIC: {},
    AA50: {"battleship": "damaged_battleship"},
    E1940: {"battleship": "damaged_battleship", "carrier": "damaged_carrier"},
}

# Technologies each edition has (the same lists as tests/reference.py; those
# that change nothing at sea -- radar, improved_artillery,
# combined_bombardment -- are accepted and ignored).
TECHS = ("heavy_bombers", "lhtr_heavy_bombers", "jets", "super_subs", "radar",
         "improved_artillery", "combined_bombardment")
_V3_TECHS = frozenset({"heavy_bombers", "lhtr_heavy_bombers", "jets", "super_subs", "radar",
                       "improved_artillery"})
EDITION_TECHS = {
    REVISED: frozenset({"heavy_bombers", "jets", "super_subs", "combined_bombardment"}),
    E1942: _V3_TECHS,
    CLASSIC: frozenset({"heavy_bombers", "jets", "super_subs"}),
    AA50: _V3_TECHS,
    E1940: _V3_TECHS - {"lhtr_heavy_bombers"},
}
# Heavy bombers on attack: (dice per bomber, only the best die counts).
HEAVY_BOMBERS = {REVISED: (2, False), CLASSIC: (3, False), E1942: (2, True), AA50: (2, True),
                 E1940: (2, True)}
# Jets: fighter defence +1 (classic, revised) or fighter attack +1 (the others).
JETS_DEFENCE = (CLASSIC, REVISED)

ATTACK = "attack"
DEFENCE = "defence"

# Sides are indexed 0 (attacker) and 1 (defender) everywhere.
A, D = 0, 1
ROLE = (ATTACK, DEFENCE)

OUTCOMES = ("attacker_win", "defender_win", "draw", "stalemate", "retreat")
POLICIES = ("never", "when-only-subs-left", "first-chance")

STANDARD = "standard"
LOW_LUCK = "low_luck"
DICE = (STANDARD, LOW_LUCK)

SUB_HIT = "sub"
AIR_HIT = "air"
GENERAL_HIT = "general"
HIT_KINDS = (SUB_HIT, AIR_HIT, GENERAL_HIT)  # hit tuples are (sub, air, general)
NO_HITS = (0, 0, 0)


@dataclass(frozen=True)
class Setup:
    """Everything about a battle that is not its changing state."""

    edition: str
    techs: tuple  # (attacker's, defender's) frozensets of technology names
    policy: tuple  # (attacker, defender)
    dice: str = STANDARD
    faces: tuple | None = None  # a die law: the six Fractions of faces 1..6 (None: fair)


# A battle state is a pair (units, submerged):
#   units     = (attacker counts, defender counts), each a tuple in UNITS order,
#               holding only the units still IN the battle;
#   submerged = (attacker subs submerged so far, defender subs submerged so far).
# "The attacker ever submerged subs" is exactly submerged[A] > 0, so the state
# captures everything the rest of the battle depends on.


# ---------------------------------------------------------------------------
# Small rule helpers (shared by the exact solver and the simulation)
# ---------------------------------------------------------------------------

def _check_edition(edition):
    if edition not in EDITIONS:
        raise ValueError(f"unknown edition {edition!r}; expected one of {EDITIONS}")


def _check_policy(policy):
    if policy not in POLICIES:
        raise ValueError(f"unknown submerge policy {policy!r}; expected one of {POLICIES}")


def _to_counts(edition, side):
    """dict unit -> count  ==>  tuple of counts in UNITS order."""
    for name, n in side.items():
        if name not in STATS[edition]:
            raise ValueError(f"unknown unit {name!r} for edition {edition!r}")
        if not isinstance(n, int) or n < 0:
            raise ValueError(f"bad count {n!r} for unit {name!r}")
    return tuple(side.get(name, 0) for name in UNITS)


def _idx(unit):
    return UNITS.index(unit)


def _count(counts, unit):
    return counts[_idx(unit)]


def _has(counts, unit):
    return _count(counts, unit) > 0


def _with_count(counts, unit, n):
    assert n >= 0
    new = list(counts)
    new[_idx(unit)] = n
    return tuple(new)


def _add(counts, unit, delta):
    return _with_count(counts, unit, _count(counts, unit) + delta)


def _in_battle(counts):
    return sum(counts) > 0


def _is_air(unit):
    return unit in AIR


def _is_sub(unit):
    return unit == "submarine"


def _is_surface(unit):
    return not _is_air(unit) and not _is_sub(unit)


def _cost(edition, unit):
    return STATS[edition][unit][0]


def _value(setup, side, unit):
    """Die value of one unit of `side` (its role fixes attack / defence), before
    pairing."""
    _, attack, defence = STATS[setup.edition][unit]
    techs = setup.techs[side]
    if unit == "submarine" and "super_subs" in techs:
        attack = 3
    if unit == "fighter" and "jets" in techs:
        if setup.edition in JETS_DEFENCE:
            defence += 1
        else:
            attack += 1
    return attack if ROLE[side] == ATTACK else defence


def _bomber_dice(setup, side):
    """(dice per bomber, best die only) for `side`'s bombers."""
    techs = setup.techs[side]
    if "lhtr_heavy_bombers" in techs:
        return 2, True  # attack and defence, best die counts
    if ROLE[side] == ATTACK and "heavy_bombers" in techs:
        return HEAVY_BOMBERS[setup.edition]
    return 1, False


def _hit_kind(unit):
    if _is_sub(unit):
        return SUB_HIT
    if _is_air(unit):
        return AIR_HIT
    return GENERAL_HIT


def _air_may_hit_subs(edition, firing_counts):
    """Revised, classic: always.  V3 editions: iff the firing side has a destroyer."""
    return MODEL[edition] != "v3" or _has(firing_counts, "destroyer")


def _may_hit(kind, target, air_may_hit_subs):
    """May a hit of this kind hit a unit of type `target`?"""
    if kind == SUB_HIT:
        return _is_sub(target) or _is_surface(target)  # sea units, never air
    if kind == AIR_HIT:
        return _is_air(target) or _is_surface(target) or (_is_sub(target) and air_may_hit_subs)
    return True  # general hits may hit anything


def _can_hit(setup, side, units):
    """Can some unit of `side` (in the battle) hit some unit of the enemy?"""
    mine, theirs = units[side], units[1 - side]
    air_subs = _air_may_hit_subs(setup.edition, mine)
    for shooter in UNITS:
        if not _has(mine, shooter) or _value(setup, side, shooter) <= 0:
            continue
        for target in UNITS:
            if _has(theirs, target) and _may_hit(_hit_kind(shooter), target, air_subs):
                return True
    return False


def _has_positive_value(setup, side, counts):
    return any(_has(counts, u) and _value(setup, side, u) > 0 for u in UNITS)


def _end_check(setup, state):
    """Outcome name if the battle is over in this state, else None.  (An attacker whose
    subs submerged earlier and whose other units are gone since has lost: "defender_win" or
    "draw"; its withdrawal by submerging is decided at the submerge decisions:
    _withdrew_by_submerging.)"""
    units, submerged = state
    att_in = _in_battle(units[A])
    dfn_in = _in_battle(units[D])
    if not att_in and not dfn_in:
        return "draw"
    if not att_in:
        return "defender_win"
    if not dfn_in:
        return "attacker_win"
    if not _can_hit(setup, A, units) and not _can_hit(setup, D, units):
        return "stalemate"
    return None


def _defenceless_transports(setup, state):
    """V3 editions: transports of a side that cannot hit anything, facing an
    enemy that can roll a hit, are lost.  (Revised, classic: no such rule.)"""
    if MODEL[setup.edition] != "v3":
        return state
    units, submerged = state
    new_units = list(units)
    for side in (A, D):
        enemy = 1 - side
        if (
            _has(units[side], "transport")
            and not _can_hit(setup, side, units)
            and _has_positive_value(setup, enemy, units[enemy])
        ):
            new_units[side] = _with_count(units[side], "transport", 0)
    return (tuple(new_units), submerged)


def _wants_to_submerge(policy, mine, enemy):
    if not _has(mine, "submarine") or _has(enemy, "destroyer"):
        return False  # nothing to submerge, or not allowed
    if policy == "first-chance":
        return True
    if policy == "when-only-subs-left":
        return all(_count(mine, u) == 0 for u in UNITS if u != "submarine")
    return False  # "never"


def _submerge(setup, state):
    """Submerge decisions: attacker first, then defender."""
    units, submerged = state
    units, submerged = list(units), list(submerged)
    for side in (A, D):
        if _wants_to_submerge(setup.policy[side], units[side], units[1 - side]):
            submerged[side] += _count(units[side], "submarine")
            units[side] = _with_count(units[side], "submarine", 0)
    return (tuple(units), tuple(submerged))


def _withdrew_by_submerging(before, after):
    """The attacker's subs submerged at these decisions (`before` -> `after`) and nothing
    else of it is in the battle: it withdraws, the battle ends as "retreat" there."""
    return after[1][A] > before[1][A] and not _in_battle(after[0][A])


def _lone_attacking_transports(state):
    """Revised, classic: the attacker's units in the battle are only transports."""
    att = state[0][A]
    return _has(att, "transport") and all(
        _count(att, u) == 0 for u in UNITS if u != "transport"
    )


def _without_subs(counts):
    return _with_count(counts, "submarine", 0)


def _only_subs(counts):
    return tuple(n if u == "submarine" else 0 for u, n in zip(UNITS, counts, strict=True))


# ---------------------------------------------------------------------------
# Casualty choice
# ---------------------------------------------------------------------------

DAMAGE = "damage"  # the damage slot of a healthy two-hit unit
UNIT = "unit"  # an ordinary unit
KILL = "kill"  # the kill slot of a damaged two-hit unit
KILL_NEW = "kill_new"  # the kill slot of a healthy two-hit unit (needs its damage slot)


def _order_of_losses(setup, side, counts):
    """The side's casualty slots in order: list of (slot kind, unit hit).

    DAMAGE slots carry the healthy type, KILL slots the damaged type,
    KILL_NEW slots the healthy type.  Two-hit types (and their damaged forms)
    are taken cheapest first: 1940-2e carriers (16) before battleships (20).
    """
    edition = setup.edition
    two_hit = TWO_HIT[edition]
    v3 = MODEL[edition] == "v3"

    def key(u):
        return (_cost(edition, u), _value(setup, side, u), UNITS.index(u))

    healthy_types = sorted(two_hit, key=key)
    slots = []
    for u in healthy_types:
        slots += [(DAMAGE, u)] * _count(counts, u)

    middle = [
        u for u in STATS[edition]
        if u not in two_hit and u not in two_hit.values() and not (v3 and u == "transport")
    ]
    for u in sorted(middle, key=key):
        slots += [(UNIT, u)] * _count(counts, u)

    for u in healthy_types:
        slots += [(KILL, two_hit[u])] * _count(counts, two_hit[u])
        slots += [(KILL_NEW, u)] * _count(counts, u)
    if v3:
        slots += [(UNIT, "transport")] * _count(counts, "transport")
    return slots


def _matchable(targets, hit_list, air_may_hit_subs):
    """Can every unit in `targets` get its own hit from `hit_list`?

    Plain bipartite matching by augmenting paths (Kuhn's algorithm).
    """
    hit_owner = [None] * len(hit_list)  # hit j -> index of the target it is matched to

    def assign(i, seen):
        for j, kind in enumerate(hit_list):
            if j in seen or not _may_hit(kind, targets[i], air_may_hit_subs):
                continue
            seen.add(j)
            if hit_owner[j] is None or assign(hit_owner[j], seen):
                hit_owner[j] = i
                return True
        return False

    for i in range(len(targets)):
        if not assign(i, set()):
            return False
    return True


def _apply_slots(edition, counts, slots):
    """Counts after losing the given slots (DAMAGE slots come first in any OOL
    prefix, so a KILL_NEW slot always finds its just-damaged unit)."""
    two_hit = TWO_HIT[edition]
    for kind, unit in slots:
        if kind == DAMAGE:
            counts = _add(_add(counts, unit, -1), two_hit[unit], +1)
        elif kind == KILL:
            counts = _add(counts, unit, -1)
        elif kind == KILL_NEW:
            counts = _add(counts, two_hit[unit], -1)
        else:
            counts = _add(counts, unit, -1)
    return counts


@cache
def _take_casualties(setup, side, counts, hits, air_may_hit_subs):
    """The owner's choice: counts of `side` after taking `hits` = (sub, air, general).

    `air_may_hit_subs` belongs to the side that fired the hits.
    """
    hit_list = [kind for kind, n in zip(HIT_KINDS, hits, strict=True) for _ in range(n)]
    taken = []
    damage_taken = {}
    kill_new_taken = {}
    for slot in _order_of_losses(setup, side, counts):
        kind, unit = slot
        if kind == KILL_NEW and kill_new_taken.get(unit, 0) >= damage_taken.get(unit, 0):
            continue  # its damage slot was not taken
        if _matchable([u for _, u in taken] + [unit], hit_list, air_may_hit_subs):
            taken.append(slot)
            if kind == DAMAGE:
                damage_taken[unit] = damage_taken.get(unit, 0) + 1
            if kind == KILL_NEW:
                kill_new_taken[unit] = kill_new_taken.get(unit, 0) + 1
    return _apply_slots(setup.edition, counts, taken)


def _slot_count(edition, counts):
    """Number of casualty slots (a healthy two-hit unit has two)."""
    return sum(counts) + sum(_count(counts, u) for u in TWO_HIT[edition])


# ---------------------------------------------------------------------------
# Results helpers
# ---------------------------------------------------------------------------

def _final_counts(state, side):
    """Units of `side` left at the end: in the battle plus submerged subs."""
    units, submerged = state
    return _add(units[side], "submarine", submerged[side])


def _reported_names(edition, side_input):
    names = list(side_input)
    for healthy, damaged in TWO_HIT[edition].items():
        if side_input.get(healthy, 0) > 0 and damaged not in names:
            names.append(damaged)
    return names


def _ipc_loss(edition, start, end):
    """Cost of the units destroyed.  A two-hit unit's two forms cost the same,
    so start - end over both forms counts each sunk unit once and a merely
    damaged one not at all."""
    return sum(_cost(edition, u) * (start[_idx(u)] - end[_idx(u)])
               for u in UNITS if u in STATS[edition])


def _techs_of(edition, names, legacy=()):
    if isinstance(names, str):
        names = [names]
    techs = set()
    for name in names or ():
        if name not in TECHS:
            raise ValueError(f"unknown technology {name!r}; expected one of {TECHS}")
        if name not in EDITION_TECHS[edition]:
            raise ValueError(f"technology {name!r} does not exist in {edition}")
        techs.add(name)
    techs.update(legacy)
    return frozenset(techs)


def _make_setup(edition, attacker_submerge, defender_submerge,
                attacker_super_subs, defender_super_subs,
                attacker_tech=(), defender_tech=(), dice=STANDARD, die_law=None):
    _check_edition(edition)
    faces = None
    if die_law is not None:
        faces = tuple(Fraction(p) for p in die_law)
        if len(faces) != 6 or any(not 0 < p <= 1 for p in faces) or sum(faces) != 1 \
                or dice != STANDARD:
            raise ValueError(f"a die law is six positive probabilities summing to 1 "
                             f"(standard dice), not {die_law!r}")
    _check_policy(attacker_submerge)
    _check_policy(defender_submerge)
    if MODEL[edition] == "classic" and (attacker_submerge, defender_submerge) != ("never",
                                                                                  "never"):
        raise ValueError("classic has no submerging; submerge policies must be 'never'")
    if dice not in DICE:
        raise ValueError(f"unknown dice {dice!r}; expected one of {DICE}")
    return Setup(
        edition=edition,
        techs=(_techs_of(edition, attacker_tech, ["super_subs"] if attacker_super_subs else []),
               _techs_of(edition, defender_tech, ["super_subs"] if defender_super_subs else [])),
        policy=(attacker_submerge, defender_submerge),
        dice=dice,
        faces=faces,
    )


# ---------------------------------------------------------------------------
# Fire: who rolls what, and at which targets
# ---------------------------------------------------------------------------

def _fire_units(setup, side, counts):
    """The units of `counts` that roll, as (unit, units, die value, dice per
    unit, best die only).  1940-2e: on attack each fighter pairs with one
    tactical bomber, which then rolls at 4 (never more than +1)."""
    entries = []
    pairs_left = 0
    if ROLE[side] == ATTACK and "tactical_bomber" in STATS[setup.edition]:
        pairs_left = _count(counts, "fighter")
    for u in UNITS:
        n = _count(counts, u)
        if n == 0:
            continue
        v = _value(setup, side, u)
        if u == "tactical_bomber" and ROLE[side] == ATTACK:
            paired = min(n, pairs_left)
            pairs_left -= paired
            entries += [(u, paired, v + 1, 1, False), (u, n - paired, v, 1, False)]
        elif u == "bomber":
            dice, best = _bomber_dice(setup, side)
            entries.append((u, n, v, dice, best))
        else:
            entries.append((u, n, v, 1, False))
    return [e for e in entries if e[1] > 0 and e[2] > 0]  # value 0: never hits


def _unit_power(value, dice, best):
    """Low-luck strength of one unit (TripleA's power): its value, k x value for
    k dice that may each hit, min(value + k - 1, 6) for best-of-k."""
    if dice == 1:
        return value
    if best:
        return min(value + dice - 1, 6)
    return dice * value


def _group_by_targets(strength, enemy, air_may_hit_subs):
    """Low luck: the hit kinds of one fire step as TripleA's firing groups.
    `strength` is indexed like HIT_KINDS.  Returns [(kind index, summed
    strength)]; kinds with nothing to hit are dropped.

    Submarines are first-strike units: TripleA rolls them in a fire step of
    their own every time they fire, so their strength is always a group
    alone.  Air and general hits are grouped by the set of enemy units present
    that they may hit (TripleA's target groups); a merged group's hits are
    general hits (both kinds hit the same units there)."""
    groups = []
    by_targets = {}
    for k, kind in enumerate(HIT_KINDS):
        if strength[k] == 0:
            continue
        targets = frozenset(u for u in UNITS
                            if _has(enemy, u) and _may_hit(kind, u, air_may_hit_subs))
        if not targets:
            continue
        if kind == SUB_HIT:
            groups.append((k, strength[k]))
        else:
            by_targets.setdefault(targets, []).append(k)
    groups += [(max(kinds), sum(strength[k] for k in kinds)) for kinds in by_targets.values()]
    return groups


# ---------------------------------------------------------------------------
# Exact solver
# ---------------------------------------------------------------------------

def _binomial(n, p):
    """Exact Binomial(n, p) distribution as dict k -> Fraction."""
    return {k: comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)}


def _fire_groups(setup, side, counts):
    """List of (hit kind, number of dice, hit probability) for these units.

    A best-of-k bomber is one "die" with hit probability 1 - (1 - v/6)**k;
    a bomber whose k dice may each hit is k dice."""
    groups = []
    for u, n, v, dice, best in _fire_units(setup, side, counts):
        kind = HIT_KINDS.index(_hit_kind(u))
        p = Fraction(v, 6) if setup.faces is None else sum(setup.faces[:v], Fraction(0))
        if dice > 1 and best:
            groups.append((kind, n, 1 - (1 - p) ** dice))
        else:
            groups.append((kind, n * dice, p))
    return groups


def _hits_distribution(groups, cap):
    """Distribution of hit tuples (sub, air, general): dict tuple -> Fraction.

    Each component is capped at `cap` (the number of casualty slots of the
    target side): more hits of one kind than there are slots can never change
    the owner's choice, so lumping them is exact.
    """
    dist = {NO_HITS: Fraction(1)}
    for kind, n, p in groups:
        new = {}
        for hits, ph in dist.items():
            for k, pk in _binomial(n, p).items():
                h = list(hits)
                h[kind] = min(h[kind] + k, cap)
                h = tuple(h)
                new[h] = new.get(h, 0) + ph * pk
        dist = new
    return {h: p for h, p in dist.items() if p != 0}


def _low_luck_distribution(groups, cap):
    """Low luck: each group (kind index, strength) scores strength // 6 sure
    hits plus one die for the remainder; groups are independent."""
    dist = {NO_HITS: Fraction(1)}
    for kind, strength in groups:
        sure, remainder = divmod(strength, 6)
        new = {}
        for hits, ph in dist.items():
            for extra, pe in ((0, 1 - Fraction(remainder, 6)), (1, Fraction(remainder, 6))):
                if pe == 0:
                    continue
                h = list(hits)
                h[kind] = min(h[kind] + sure + extra, cap)
                h = tuple(h)
                new[h] = new.get(h, 0) + ph * pe
        dist = new
    return dist


def _fire_law(setup, side, firing, enemy, air_may_hit_subs, cap):
    """Law of the hit tuple scored by `firing` (units of `side`) at `enemy`."""
    if setup.dice == LOW_LUCK:
        strength = [0, 0, 0]
        for u, n, v, dice, best in _fire_units(setup, side, firing):
            strength[HIT_KINDS.index(_hit_kind(u))] += n * _unit_power(v, dice, best)
        return _low_luck_distribution(_group_by_targets(strength, enemy, air_may_hit_subs), cap)
    return _hits_distribution(_fire_groups(setup, side, firing), cap)


def _round_v3_exact(setup, state):
    """V3 editions (1942-2e, aa50, 1940-2e): distribution of the state after
    steps 2-4 of a round.

    `state` is the state after the submerge decisions (battle still on).
    """
    units, submerged = state
    edition = setup.edition
    # Step 2: surprise strike (subs fire iff the enemy has no destroyer).
    strikes = [_has(units[s], "submarine") and not _has(units[1 - s], "destroyer") for s in (A, D)]
    strike_dist = []
    for s in (A, D):
        if strikes[s]:
            strike_dist.append(_fire_law(setup, s, _only_subs(units[s]), units[1 - s],
                                         _air_may_hit_subs(edition, units[s]),
                                         _slot_count(edition, units[1 - s])))
        else:
            strike_dist.append({NO_HITS: Fraction(1)})

    result = {}
    for hits_a, p_a in strike_dist[A].items():
        for hits_d, p_d in strike_dist[D].items():
            after2 = (
                _take_casualties(setup, A, units[A], hits_d,
                                 _air_may_hit_subs(edition, units[D])),
                _take_casualties(setup, D, units[D], hits_a,
                                 _air_may_hit_subs(edition, units[A])),
            )
            # Step 3: general fire with the units present after step 2,
            # except the subs that struck in step 2.
            general_dist = []
            air_subs = []
            for s in (A, D):
                firing = _without_subs(after2[s]) if strikes[s] else after2[s]
                air_subs.append(_air_may_hit_subs(edition, after2[s]))
                general_dist.append(_fire_law(setup, s, firing, after2[1 - s], air_subs[s],
                                              _slot_count(edition, after2[1 - s])))
            for g_a, q_a in general_dist[A].items():
                for g_d, q_d in general_dist[D].items():
                    # Step 4: both sides take and remove their casualties.
                    new_att = _take_casualties(setup, A, after2[A], g_d, air_subs[D])
                    new_dfn = _take_casualties(setup, D, after2[D], g_a, air_subs[A])
                    key = ((new_att, new_dfn), submerged)
                    result[key] = result.get(key, 0) + p_a * p_d * q_a * q_d
    return result


def _round_revised_exact(setup, state):
    """Revised: distribution of the state after steps 1-3 of a round."""
    units, submerged = state
    edition = setup.edition
    has_destroyer = [_has(units[s], "destroyer") for s in (A, D)]
    # Step 1: opening fire of every submarine.
    open_dist = [
        _fire_law(setup, s, _only_subs(units[s]), units[1 - s], True,
                  _slot_count(edition, units[1 - s]))
        for s in (A, D)
    ]
    result = {}
    for hits_a, p_a in open_dist[A].items():
        for hits_d, p_d in open_dist[D].items():
            # Units not chosen as opening-fire casualties (targets for step 2).
            after_open = (
                _take_casualties(setup, A, units[A], hits_d, True),
                _take_casualties(setup, D, units[D], hits_a, True),
            )
            # Step 2: general fire by non-submarines; a side with a destroyer
            # still fires with its opening-fire casualties.
            general_dist = []
            for s in (A, D):
                firing = units[s] if has_destroyer[s] else after_open[s]
                general_dist.append(_fire_law(setup, s, _without_subs(firing),
                                              after_open[1 - s], True,
                                              _slot_count(edition, after_open[1 - s])))
            for g_a, q_a in general_dist[A].items():
                for g_d, q_d in general_dist[D].items():
                    # Step 3: remove all casualties.
                    new_att = _take_casualties(setup, A, after_open[A], g_d, True)
                    new_dfn = _take_casualties(setup, D, after_open[D], g_a, True)
                    key = ((new_att, new_dfn), submerged)
                    result[key] = result.get(key, 0) + p_a * p_d * q_a * q_d
    return result


def _round_classic_exact(setup, state):
    """Classic: distribution of the state after steps 1-3 of a round."""
    (att, dfn), submerged = state
    edition = setup.edition
    # Step 1: the attacker's subs sneak-attack unless the defender has a destroyer.
    sneak = _has(att, "submarine") and not _has(dfn, "destroyer")
    if sneak:
        sneak_dist = _fire_law(setup, A, _only_subs(att), dfn, True, _slot_count(edition, dfn))
    else:
        sneak_dist = {NO_HITS: Fraction(1)}
    result = {}
    for hits_s, p_s in sneak_dist.items():
        dfn1 = _take_casualties(setup, D, dfn, hits_s, True)  # removed at once
        # Step 2: general fire; the attacker's subs that sneak-attacked do not
        # fire again; the defender's subs fire here (sub hits).
        att_firing = _without_subs(att) if sneak else att
        g_att = _fire_law(setup, A, att_firing, dfn1, True, _slot_count(edition, dfn1))
        g_dfn = _fire_law(setup, D, dfn1, att, True, _slot_count(edition, att))
        for g_a, q_a in g_att.items():
            for g_d, q_d in g_dfn.items():
                # Step 3: remove all casualties.
                new_att = _take_casualties(setup, A, att, g_d, True)
                new_dfn = _take_casualties(setup, D, dfn1, g_a, True)
                key = ((new_att, new_dfn), submerged)
                result[key] = result.get(key, 0) + p_s * q_a * q_d
    return result


def exact_sea(edition, attacker, defender, *, attacker_submerge="never",
              defender_submerge="never", attacker_super_subs=False,
              defender_super_subs=False, attacker_tech=(), defender_tech=(),
              dice=STANDARD, die_law=None):
    """Exact sea-battle result with Fraction arithmetic.

    Returns a dict with keys attacker_win, defender_win, draw, stalemate,
    retreat, attacker_ipc_loss, defender_ipc_loss, tuv_swing, mean_rounds
    (Fractions) and attacker_survivors / defender_survivors (dict unit ->
    Fraction expected count left).  `attacker_tech` / `defender_tech`: the
    sides' technologies; `dice`: "standard" or "low_luck".
    """
    setup = _make_setup(edition, attacker_submerge, defender_submerge,
                        attacker_super_subs, defender_super_subs,
                        attacker_tech, defender_tech, dice, die_law)
    att0 = _to_counts(edition, attacker)
    dfn0 = _to_counts(edition, defender)
    n = len(UNITS)

    # A "value vector" holds the expectations, from a given state onwards, of:
    #   [0..5)          indicators of OUTCOMES
    #   [5]             number of rounds still to be fought
    #   [6..6+n)        final attacker counts (UNITS order, submerged subs included)
    #   [6+n..6+2n)     final defender counts
    ROUNDS = len(OUTCOMES)
    size = ROUNDS + 1 + 2 * n
    memo = {}

    def terminal_vector(outcome, state):
        vec = [Fraction(0)] * size
        vec[OUTCOMES.index(outcome)] = Fraction(1)
        att_final = _final_counts(state, A)
        dfn_final = _final_counts(state, D)
        for i in range(n):
            vec[ROUNDS + 1 + i] = Fraction(att_final[i])
            vec[ROUNDS + 1 + n + i] = Fraction(dfn_final[i])
        return vec

    def combine(weighted, q):
        """(sum of p * vector + one round) / (1 - q), q = P(self-loop)."""
        if q == 1:
            raise AssertionError("non-terminal state cannot change; rules bug")
        acc = [Fraction(0)] * size
        for p, vec in weighted:
            for i in range(size):
                acc[i] += p * vec[i]
        acc[ROUNDS] += 1  # the round fought now (repeated while self-looping)
        return [x / (1 - q) for x in acc]

    def value_v3(state):
        # (a) defenceless transports
        checked = _defenceless_transports(setup, state)
        if checked != state:
            return value(checked)
        # (b), (c) end checks and stalemate
        outcome = _end_check(setup, state)
        if outcome is not None:
            return terminal_vector(outcome, state)
        # 1. submerge decisions; the battle may end here (round not counted)
        after_submerge = _submerge(setup, state)
        outcome = ("retreat" if _withdrew_by_submerging(state, after_submerge)
                   else _end_check(setup, after_submerge))
        if outcome is not None:
            return terminal_vector(outcome, after_submerge)
        # 2.-4. the round; the next state's checks are applied by value()
        trans = _round_v3_exact(setup, after_submerge)
        q = trans.pop(state, Fraction(0))  # P(nothing changes at all)
        return combine([(p, value(s)) for s, p in trans.items()], q)

    def value_revised_or_classic(state):
        outcome = _end_check(setup, state)
        if outcome is not None:
            return terminal_vector(outcome, state)
        lone = _lone_attacking_transports(state)
        weighted = []
        q = Fraction(0)
        round_exact = _round_revised_exact if model == "revised" else _round_classic_exact
        for after, p in round_exact(setup, state).items():
            if lone and _has(after[0][A], "transport"):
                weighted.append((p, terminal_vector("retreat", after)))
                continue
            # 4. end checks
            outcome = _end_check(setup, after)
            if outcome is not None:
                weighted.append((p, terminal_vector(outcome, after)))
                continue
            # 5. submerge at the end of the round (revised; never in classic)
            nxt = _submerge(setup, after)
            if _withdrew_by_submerging(after, nxt):
                weighted.append((p, terminal_vector("retreat", nxt)))
            elif nxt == state:
                q += p  # nothing changed at all
            else:
                weighted.append((p, value(nxt)))
        return combine(weighted, q)

    model = MODEL[edition]

    def value(state):
        if state not in memo:
            if model == "v3":
                memo[state] = value_v3(state)
            else:
                memo[state] = value_revised_or_classic(state)
        return memo[state]

    total = value(((att0, dfn0), (0, 0)))

    att_final = tuple(total[ROUNDS + 1 + i] for i in range(n))
    dfn_final = tuple(total[ROUNDS + 1 + n + i] for i in range(n))
    att_loss = Fraction(_ipc_loss(edition, att0, att_final))
    dfn_loss = Fraction(_ipc_loss(edition, dfn0, dfn_final))
    result = {name: total[i] for i, name in enumerate(OUTCOMES)}
    result.update({
        "attacker_ipc_loss": att_loss,
        "defender_ipc_loss": dfn_loss,
        "tuv_swing": dfn_loss - att_loss,
        "mean_rounds": total[ROUNDS],
        "attacker_survivors": {u: att_final[_idx(u)]
                               for u in _reported_names(edition, attacker)},
        "defender_survivors": {u: dfn_final[_idx(u)]
                               for u in _reported_names(edition, defender)},
    })
    return result


# ---------------------------------------------------------------------------
# Die-by-die Monte Carlo simulation
# ---------------------------------------------------------------------------

def _roll(rng, setup, side, counts, enemy, air_may_hit_subs):
    """Roll the fire of the units in `counts` (of `side`) at `enemy`; return
    the hits as (sub, air, general).

    Standard dice: one die per unit (k dice for a k-dice bomber: every hit
    counts, or for best-of-k whether any hit); value 0 is not rolled.  Low
    luck: the strengths are summed per hit kind, grouped by targets, and one
    die is rolled per group for the remainder.  Pairing (1940-2e: each
    attacking fighter lifts one tactical bomber to 4) is counted here unit by
    unit, separately from `_fire_units`.
    """
    hits = [0, 0, 0]
    strength = [0, 0, 0]
    paired_left = 0
    if ROLE[side] == ATTACK and "tactical_bomber" in STATS[setup.edition]:
        paired_left = _count(counts, "fighter")
    for u in UNITS:
        if not _has(counts, u):
            continue
        kind = HIT_KINDS.index(_hit_kind(u))
        dice, best = _bomber_dice(setup, side) if u == "bomber" else (1, False)
        for _ in range(_count(counts, u)):
            v = _value(setup, side, u)
            if u == "tactical_bomber" and paired_left > 0:
                paired_left -= 1
                v += 1
            if v <= 0:
                continue  # value 0: never hits, not rolled
            if setup.dice == LOW_LUCK:
                strength[kind] += v if dice == 1 else (min(v + dice - 1, 6) if best else dice * v)
                continue
            rolled = [rng.randint(1, 6) <= v for _ in range(dice)]
            hits[kind] += any(rolled) if best else sum(rolled)
    if setup.dice == LOW_LUCK:
        for kind, total in _group_by_targets(strength, enemy, air_may_hit_subs):
            sure, remainder = divmod(total, 6)
            hits[kind] += sure + (remainder > 0 and rng.randint(1, 6) <= remainder)
    return tuple(int(h) for h in hits)


def _simulate_one_v3(rng, setup, state):
    """Fight one battle of a V3 edition; return (outcome, final state, rounds)."""
    edition = setup.edition
    rounds = 0
    while True:
        # Between rounds (and before round 1).
        state = _defenceless_transports(setup, state)
        outcome = _end_check(setup, state)
        if outcome is not None:
            return outcome, state, rounds
        # 1. submerge decisions
        before, state = state, _submerge(setup, state)
        outcome = ("retreat" if _withdrew_by_submerging(before, state)
                   else _end_check(setup, state))
        if outcome is not None:
            return outcome, state, rounds
        rounds += 1
        (att, dfn), submerged = state
        # 2. surprise strike
        att_strikes = _has(att, "submarine") and not _has(dfn, "destroyer")
        dfn_strikes = _has(dfn, "submarine") and not _has(att, "destroyer")
        att_air_subs = _air_may_hit_subs(edition, att)
        dfn_air_subs = _air_may_hit_subs(edition, dfn)
        att_hits = (_roll(rng, setup, A, _only_subs(att), dfn, att_air_subs)
                    if att_strikes else NO_HITS)
        dfn_hits = (_roll(rng, setup, D, _only_subs(dfn), att, dfn_air_subs)
                    if dfn_strikes else NO_HITS)
        att2 = _take_casualties(setup, A, att, dfn_hits, dfn_air_subs)
        dfn2 = _take_casualties(setup, D, dfn, att_hits, att_air_subs)
        # 3. general fire (subs that struck do not fire again)
        att_air_subs = _air_may_hit_subs(edition, att2)
        dfn_air_subs = _air_may_hit_subs(edition, dfn2)
        att_hits = _roll(rng, setup, A, _without_subs(att2) if att_strikes else att2, dfn2,
                         att_air_subs)
        dfn_hits = _roll(rng, setup, D, _without_subs(dfn2) if dfn_strikes else dfn2, att2,
                         dfn_air_subs)
        # 4. casualties
        att3 = _take_casualties(setup, A, att2, dfn_hits, dfn_air_subs)
        dfn3 = _take_casualties(setup, D, dfn2, att_hits, att_air_subs)
        state = ((att3, dfn3), submerged)


def _simulate_one_revised(rng, setup, state):
    """Fight one revised battle; return (outcome, final state, rounds)."""
    rounds = 0
    while True:
        outcome = _end_check(setup, state)
        if outcome is not None:
            return outcome, state, rounds
        lone = _lone_attacking_transports(state)
        rounds += 1
        (att, dfn), submerged = state
        # 1. opening fire of all subs
        att_hits = _roll(rng, setup, A, _only_subs(att), dfn, True)
        dfn_hits = _roll(rng, setup, D, _only_subs(dfn), att, True)
        att_open = _take_casualties(setup, A, att, dfn_hits, True)
        dfn_open = _take_casualties(setup, D, dfn, att_hits, True)
        # 2. general fire; with a destroyer the opening casualties fire too
        att_firing = att if _has(att, "destroyer") else att_open
        dfn_firing = dfn if _has(dfn, "destroyer") else dfn_open
        att_hits = _roll(rng, setup, A, _without_subs(att_firing), dfn_open, True)
        dfn_hits = _roll(rng, setup, D, _without_subs(dfn_firing), att_open, True)
        # 3. remove all casualties
        att3 = _take_casualties(setup, A, att_open, dfn_hits, True)
        dfn3 = _take_casualties(setup, D, dfn_open, att_hits, True)
        state = ((att3, dfn3), submerged)
        if lone and _has(att3, "transport"):
            return "retreat", state, rounds
        # 4. end checks
        outcome = _end_check(setup, state)
        if outcome is not None:
            return outcome, state, rounds
        # 5. submerge
        before, state = state, _submerge(setup, state)
        if _withdrew_by_submerging(before, state):
            return "retreat", state, rounds


def _simulate_one_classic(rng, setup, state):
    """Fight one classic battle; return (outcome, final state, rounds)."""
    rounds = 0
    while True:
        outcome = _end_check(setup, state)
        if outcome is not None:
            return outcome, state, rounds
        lone = _lone_attacking_transports(state)
        rounds += 1
        (att, dfn), submerged = state
        # 1. sneak attack of the attacker's subs, unless the defender has a destroyer
        sneak = _has(att, "submarine") and not _has(dfn, "destroyer")
        if sneak:
            dfn = _take_casualties(setup, D, dfn, _roll(rng, setup, A, _only_subs(att), dfn, True),
                                   True)
        # 2. general fire: everybody else, the defender's subs included
        att_hits = _roll(rng, setup, A, _without_subs(att) if sneak else att, dfn, True)
        dfn_hits = _roll(rng, setup, D, dfn, att, True)
        # 3. remove all casualties
        att3 = _take_casualties(setup, A, att, dfn_hits, True)
        dfn3 = _take_casualties(setup, D, dfn, att_hits, True)
        state = ((att3, dfn3), submerged)
        if lone and _has(att3, "transport"):
            return "retreat", state, rounds
        # (the end checks come at the top of the loop)


def simulate_sea(edition, attacker, defender, *, trials, seed,
                 attacker_submerge="never", defender_submerge="never",
                 attacker_super_subs=False, defender_super_subs=False,
                 attacker_tech=(), defender_tech=(), dice=STANDARD):
    """Monte Carlo sea battle: same keys as exact_sea, as floats (means)."""
    setup = _make_setup(edition, attacker_submerge, defender_submerge,
                        attacker_super_subs, defender_super_subs,
                        attacker_tech, defender_tech, dice)
    att0 = _to_counts(edition, attacker)
    dfn0 = _to_counts(edition, defender)
    if trials <= 0:
        raise ValueError("trials must be positive")
    rng = random.Random(seed)
    simulate_one = {"v3": _simulate_one_v3, "revised": _simulate_one_revised,
                    "classic": _simulate_one_classic}[MODEL[edition]]

    tally = {k: 0 for k in OUTCOMES}
    rounds_total = 0
    att_loss_total = 0
    dfn_loss_total = 0
    att_names = _reported_names(edition, attacker)
    dfn_names = _reported_names(edition, defender)
    att_surv = {k: 0 for k in att_names}
    dfn_surv = {k: 0 for k in dfn_names}
    for _ in range(trials):
        outcome, state, rounds = simulate_one(rng, setup, ((att0, dfn0), (0, 0)))
        tally[outcome] += 1
        rounds_total += rounds
        att_end = _final_counts(state, A)
        dfn_end = _final_counts(state, D)
        att_loss_total += _ipc_loss(edition, att0, att_end)
        dfn_loss_total += _ipc_loss(edition, dfn0, dfn_end)
        for k in att_names:
            att_surv[k] += _count(att_end, k)
        for k in dfn_names:
            dfn_surv[k] += _count(dfn_end, k)

    result = {k: tally[k] / trials for k in OUTCOMES}
    result.update({
        "attacker_ipc_loss": att_loss_total / trials,
        "defender_ipc_loss": dfn_loss_total / trials,
        "tuv_swing": (dfn_loss_total - att_loss_total) / trials,
        "mean_rounds": rounds_total / trials,
        "attacker_survivors": {k: v / trials for k, v in att_surv.items()},
        "defender_survivors": {k: v / trials for k, v in dfn_surv.items()},
    })
    return result


# ---------------------------------------------------------------------------
# Examples
# ---------------------------------------------------------------------------

if __name__ == "__main__":
    examples = [
        ("1942-2e", {"bomber": 1}, {"battleship": 1}, {}),
        ("1942-2e", {"submarine": 2}, {"fighter": 1, "destroyer": 1}, {}),
        ("1942-2e", {"destroyer": 1}, {"transport": 1}, {}),
        ("revised", {"submarine": 2}, {"destroyer": 1, "transport": 1}, {}),
        ("revised", {"transport": 1}, {"destroyer": 1}, {}),
        ("1942-2e", {"submarine": 2, "fighter": 1}, {"carrier": 1},
         {"attacker_submerge": "when-only-subs-left"}),
    ]
    for edition, att, dfn, opts in examples:
        ex = exact_sea(edition, att, dfn, **opts)
        mc = simulate_sea(edition, att, dfn, trials=20000, seed=1, **opts)
        print(f"{edition}: {att} vs {dfn} {opts}")
        for key in (*OUTCOMES, "attacker_ipc_loss", "defender_ipc_loss", "tuv_swing",
                    "mean_rounds"):
            print(f"  {key:18s} exact {float(ex[key]):9.5f} ({ex[key]})  mc {mc[key]:9.5f}")
        print("  attacker_survivors", {k: float(v) for k, v in ex["attacker_survivors"].items()})
        print("  defender_survivors", {k: float(v) for k, v in ex["defender_survivors"].items()})
