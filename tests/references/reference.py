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
``combined_bombardment`` (see "Amphibious assaults" below), the policy
keywords ``attacker_ool``, ``defender_ool``, ``keep_land``, ``aa_last``,
``retreat_after``, ``retreat_when_left``, ``retreat_when_only_air``, ``strafe``
and ``retreat_below`` (see "Orders of losses and retreat" below), and
``attacker_tech``, ``defender_tech`` and ``dice`` (see "New editions,
technologies and low luck" at the end); their defaults give the standard
behaviour described first.

Rules implemented (land battles only)
=====================================

Editions: ``"revised"`` and ``"1942-2e"`` (described first), and
``"classic"``, ``"aa50"``, ``"1940-2e"`` (described at the end, by their
differences).

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

* attacker_win, defender_win, draw, stalemate, retreat -- probabilities
  (they sum to 1; retreat is 0 without a retreat option);
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
  the two dicts are merged by unit name (``attacker`` may be empty).  Landing
  units cannot retreat (partial retreats, see below).  Landing units are reported among the
  attacker's survivors and IPC losses like any attacker.
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

Orders of losses and retreat
============================

A side's order of losses is a SEQUENCE with one entry per unit that can be a
casualty, resolved against the units present each time casualties are chosen
(this agrees with resolving it once and walking along it).  A side hit h
times loses the first h units of its sequence.

``attacker_ool`` / ``defender_ool`` (default None):

* None or ``"cheapest"`` -- the default order above.
* ``"weakest"`` -- lowest combat value in the side's role first (base values:
  supported infantry still counts as 1; jets apply), ties by lower cost, then
  by the default order.  Every key starts with a rank, so a 1942-2e defending
  aa stays first (or last with ``aa_last``).
* a comma list ``"bomber,tank"`` -- all bombers, then all tanks, then every
  other unit in the default order.  Same as ``"*^bomber;*^tank"``.
* TripleA notation ``"*^infantry;*^fighter;1^infantry"`` -- sections (N^unit
  or *^unit) taken left to right; their counts are resolved from the RIGHT:
  the rightmost section claims min(N, available) units of its type, the next
  section to its left up to its N of what is left, ``*`` all that is left of
  that type; the sequence is the sections left to right with their claimed
  counts, then every unclaimed unit in the default order.
* names are case-insensitive; an unknown unit name (and ``"smart"``, which is
  not modelled) raises ValueError.  Naming a revised aa does nothing (it is
  never a casualty).

``keep_land`` (attacker, int, default 0): the last N land units (not aircraft)
of the attacker's sequence are lost only after every aircraft: those of them
that come before the last aircraft move, in their order, to right after it.

``aa_last`` (defender, default False): a 1942-2e defending aa moves from the
front to the end of the default order (rank +1 instead of -1), so it is lost
last in the default / weakest orders and wherever a comma list or TripleA
order leaves it unnamed; an aa named explicitly in the list stays where it is
named.  No effect in revised (the AA gun is never a casualty).

Restricted hits follow the same sequences restricted to the units they may
hit: 1942-2e AA losses are the first aircraft of the attacker's sequence;
bombard hits are the first land units of the defender's sequence; the 1942-2e
round-1 choice with bombardment takes, among the largest coverable sets, the
one whose units (each type at the first positions of that type in the
sequence) have the lexicographically smallest sorted positions.

Retreat (attacker; default: never).  Checked at the END of every general round
(never before round 1) once the end-of-round rules have been applied, and only
if the battle is not over.  The attacker retreats when any of the given
conditions holds:

* ``retreat_after`` R -- R rounds have been fought (R = 0 acts like 1);
* ``retreat_when_left`` N -- the attacker has N or fewer units left (units
  that count, i.e. not a revised aa);
* ``retreat_when_only_air`` -- the attacker has no land unit left (no unit that
  counts and is not an aircraft);
* ``strafe`` N -- the defender has N or fewer units that count left (a revised
  aa gun does not count);
* ``retreat_below`` P (Fraction, float or int; a float is taken at its exact
  value) -- the exact probability that the attacker eventually wins if it
  fights on from this end-of-round state, itself following the same policy at
  every later end of round, is below P.  Fighting on from a state and rolling
  no hit at all leads back to the same state, where the attacker is taken to
  make the same choice (fight on) again;
* ``retreat_air_loss`` X (exact only: ``exact_land``; a Fraction, float or int,
  a float taken at its exact value) -- the attacker has an aircraft (fighter,
  bomber) left and the exact probability that the battle, fought on from this
  end-of-round state with NO retreat at all from here on, ends with none of
  its aircraft left is above X.  That probability depends on the two armies
  only (``_ExactSolver.air_loss``: the battle's end states valued 1 without
  aircraft, 0 with; the rounds in which nobody hits summed as a geometric
  series).

Partial retreats (only with landing units).  Which of the attacker's units
may retreat: 1942-2e -- aircraft and overland (``attacker``) units, not the
landed units; revised -- aircraft only (no land unit of an amphibious assault
retreats).  Casualties of a type are counted as taken from its LANDED units
first: of a type with n left and o overland at the start, min(n, o) are
overland and max(0, n - o) landed.  When a condition holds:

* every unit the attacker has left (that counts) may retreat -> full retreat
  (outcome "retreat", below);
* none of them may -> nothing happens, the battle goes on, and the conditions
  are checked again at the end of the next round;
* otherwise -> PARTIAL retreat: the units that may retreat withdraw (they are
  survivors, never losses) and the others fight on alone; from then on no
  further retreat is possible.  The outcome is decided by that continuing
  fight (attacker_win / defender_win / draw / stalemate, takes_territory =
  attacker_win with an infantry/artillery/tank of the remaining units left);
  the withdrawn units do not count as units left for those end-of-battle
  checks, but are counted in attacker_survivors.  The remaining units keep
  the attacker's order of losses (resolved against what is left).

With retreat_below, the probability compared with P is that of winning when
fighting on WITHOUT retreating now (following the policy later); the value of
a state in which the attacker has decided to retreat is 0 for a full retreat
and, for a partial retreat, the probability that the remaining units win
alone.  The other conditions (retreat_when_left counts all the attacker's
units still fighting) trigger a partial retreat in the same way.

Outcome "retreat": the attacker's remaining units are survivors (not losses,
no territory taken), the defender keeps what it has, mean_rounds counts the
rounds fought.  In the exact solver a state is (attacker counts, defender
counts, rounds so far, withdrawn counts -- None before any partial retreat),
the rounds capped at max(R, 1) (at 1 without retreat_after): past that cap the
policy no longer depends on the round, and the round in which nobody hits is
summed up as a geometric series.  The simulation rolls every die as before; a
retreat_below decision asks the exact solver for the probability.

New editions, technologies and low luck
=======================================

The rules in which the editions differ are the ``RULES`` table (one
``EditionRules`` per edition); nothing else branches on an edition id.
docs/editions.md is the prose version, with the sources and every choice.

Unit stats (cost, attack, defence) of the new editions::

    unit             classic      aa50         1940-2e
    infantry         3, 1, 2      3, 1, 2      3, 1, 2
    mech_infantry    -            -            4, 1, 2
    artillery        4, 2, 2 (*)  4, 2, 2      4, 2, 2
    tank             5, 3, 2      5, 3, 3      6, 3, 3
    fighter          12, 3, 4     10, 3, 4     10, 3, 4
    tactical_bomber  -            -            11, 3, 3
    bomber           15, 4, 1     12, 4, 1     12, 4, 1
    aa               5, 0, 0      6, 0, 0      5, 0, 0

(*) classic's optional artillery, simply available.  A unit the edition does
not have raises ValueError.  Aircraft = fighter, tactical_bomber, bomber;
units that can take territory and land from transports = infantry,
mech_infantry, artillery, tank; bombard hits may strike those and an AAA.

* classic: AA gun -- one die per attacking aircraft at 1, round 1; the
  attacker chooses the losses (its order of losses restricted to aircraft);
  never a casualty nor a unit left (as the revised gun).  Bombardment by
  battleships at 4, every ship fires (no limit), rolled in round 1 with the
  general fire, casualties fire back (the 1942-2e mechanism).  No retreat at
  all from an amphibious assault (a retreat condition changes nothing there).
* aa50: AA gun as revised (one die rolled at each aircraft), ``radar``: hits
  on 2.  Bombardment, bombard limit and partial amphibious retreat as 1942-2e.
* 1940-2e: AAA as 1942-2e (``radar``: 2).  Artillery supports infantry or
  mechanized infantry.  On attack each fighter or tank pairs with one
  tactical bomber, which attacks at 4 (never more than +1; tactical bombers
  with no partner attack at 3; no pairing on defence).  Bombardment, limit
  and retreat as 1942-2e.
* Default order of losses: as before (AAA first on defence in 1942-2e and
  1940-2e; cheapest first, ties by the lower value in the role, then by the
  UNITS order: infantry, mech_infantry, artillery, tank, fighter,
  tactical_bomber, bomber).  Support and pairing are not considered.

Technologies: ``attacker_tech`` / ``defender_tech`` list each side's (names
from TECHS; one the edition does not have raises ValueError).  The old
switches ``heavy_bombers`` and ``jets`` give the technology to both sides
(each changes only one role, so that is the old meaning) and
``combined_bombardment`` to the attacker (ignored outside revised, as before).

* heavy_bombers, attacking bombers: classic 3 dice each able to hit; revised
  2 dice each able to hit; aa50, 1942-2e, 1940-2e 2 dice, best counts (8/9
  at 4).  lhtr_heavy_bombers (aa50, 1942-2e): best of 2 on attack AND defence
  (11/36 at 1).
* jets: classic, revised fighter defence +1 (5); aa50, 1942-2e, 1940-2e
  fighter attack +1 (4).
* improved_artillery (aa50, 1942-2e, 1940-2e): each artillery supports two.
* radar (aa50, 1942-2e, 1940-2e, defender): AA / AAA hit on 2.
* combined_bombardment (revised): destroyers bombard at 3.
* super_subs: accepted, no effect on land.

Low luck (``dice="low_luck"``; TripleA's Low Luck): every fire step sums the
strength of its firing units and scores strength // 6 sure hits plus one
die for the remainder (a hit with probability remainder / 6).  A unit's
strength: its die value with support/pairing; k dice that may each hit:
k x value; best-of-k: min(value + k - 1, 6) (TripleA's power).  The fire
steps on land: each side's general fire (one group: every land-battle unit
may hit every enemy unit), the bombardment (its own group), the AA fire
(strength = dice x AA value, dice = aircraft fired at, or min(3 x AAA,
aircraft)).  AA casualties where the attacker does not choose (revised,
aa50): each aircraft type is cut into groups of 6 // value aircraft; each
full group takes one sure hit; the other hits fall uniformly at random on
the leftover aircraft of all types (TripleA's LowLuckTargetGroups).

Biased dice
===========

``die_law`` (exact only: ``exact_land``; standard dice only): six Fractions
(or anything Fraction takes), p_1 .. p_6, each in [0, 1], summing to 1: a
die shows face k with probability p_k.  Every die of the battle is that die
(general fire, AA fire, bombardment): a die of value v hits with probability
p_1 + ... + p_v (value 0: never), a best-of-k unit with 1 - (1 - that)**k.
A unit whose hit probability is 0 cannot hit, so a battle where neither
side can is a stalemate.  Nothing else changes.  None: the fair die, 1/6
each.
"""

from __future__ import annotations

import itertools
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

# Fixed order used for the count tuples that describe a side.  It is also the
# last tie-break of the default order of losses (Decision 10: infantry,
# mechanized infantry, artillery, tank, ...).
UNITS = ("infantry", "mech_infantry", "artillery", "tank", "fighter", "tactical_bomber",
         "bomber", "aa")
AIRCRAFT = ("fighter", "tactical_bomber", "bomber")
TERRITORY_TAKERS = ("infantry", "mech_infantry", "artillery", "tank")

# (cost, attack, defence), before technologies and support.
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
    CLASSIC: {
        "infantry": (3, 1, 2),
        "artillery": (4, 2, 2),  # optional unit ("Use Destroyers and Artillery")
        "tank": (5, 3, 2),
        "fighter": (12, 3, 4),
        "bomber": (15, 4, 1),
        "aa": (5, 0, 0),
    },
    AA50: {
        "infantry": (3, 1, 2),
        "artillery": (4, 2, 2),
        "tank": (5, 3, 3),
        "fighter": (10, 3, 4),
        "bomber": (12, 4, 1),
        "aa": (6, 0, 0),
    },
    E1940: {
        "infantry": (3, 1, 2),
        "mech_infantry": (4, 1, 2),
        "artillery": (4, 2, 2),
        "tank": (6, 3, 3),
        "fighter": (10, 3, 4),
        "tactical_bomber": (11, 3, 3),
        "bomber": (12, 4, 1),
        "aa": (5, 0, 0),
    },
}

# AA fire before round 1 (the three forms the editions use):
AA_PER_PLANE = "per_plane"  # one die rolled at each aircraft; losses fall where the dice fall
AA_ATTACKER_CHOOSES = "one_die_per_plane_attacker_chooses"  # one die per aircraft, attacker picks
AA_THREE_PER_GUN = "min_3_per_gun_attacker_chooses"  # min(3 x AAA, aircraft) dice, attacker picks

# Bombardment timing.
BOMBARD_OPENING = "opening_fire"  # before round 1, casualties removed before they fire
BOMBARD_ROUND1 = "round_1_return_fire"  # rolled in round 1, casualties fire back

# Which attacker units may retreat from an amphibious assault.
RETREAT_AIR = "air"
RETREAT_AIR_AND_OVERLAND = "air_and_overland"
RETREAT_NONE = "none"

TECHS = ("heavy_bombers", "lhtr_heavy_bombers", "jets", "super_subs", "radar",
         "improved_artillery", "combined_bombardment")

STANDARD = "standard"
LOW_LUCK = "low_luck"
DICE = (STANDARD, LOW_LUCK)


@dataclass(frozen=True)
class EditionRules:
    """The land-battle rules in which the editions differ (see the module docstring)."""

    aa: str  # one of the AA_* forms
    aa_is_unit: bool  # AAA: a 0/0 casualty that counts as a unit (else: never either)
    bombard: str  # BOMBARD_OPENING or BOMBARD_ROUND1
    bombard_values: dict  # ship -> bombard value
    bombard_limit: bool  # at most one firing ship per landing unit
    amphibious_retreat: str  # RETREAT_*
    supported: tuple  # unit types artillery supports (+1 on attack)
    tac_pairing: bool  # a fighter or a tank pairs with one tactical bomber (+1 on attack)
    heavy_bombers: tuple  # (dice per attacking bomber, only the best die counts)
    jets: str  # "defence" (fighter defence +1) or "attack" (fighter attack +1)
    techs: frozenset  # technologies this edition has


_V3_TECHS = frozenset({"heavy_bombers", "lhtr_heavy_bombers", "jets", "super_subs", "radar",
                       "improved_artillery"})
RULES = {
    REVISED: EditionRules(
        aa=AA_PER_PLANE, aa_is_unit=False, bombard=BOMBARD_OPENING,
        bombard_values={"battleship": 4}, bombard_limit=False,
        amphibious_retreat=RETREAT_AIR, supported=("infantry",), tac_pairing=False,
        heavy_bombers=(2, False), jets="defence",
        techs=frozenset({"heavy_bombers", "jets", "super_subs", "combined_bombardment"})),
    E1942: EditionRules(
        aa=AA_THREE_PER_GUN, aa_is_unit=True, bombard=BOMBARD_ROUND1,
        bombard_values={"battleship": 4, "cruiser": 3}, bombard_limit=True,
        amphibious_retreat=RETREAT_AIR_AND_OVERLAND, supported=("infantry",),
        tac_pairing=False, heavy_bombers=(2, True), jets="attack", techs=_V3_TECHS),
    CLASSIC: EditionRules(
        aa=AA_ATTACKER_CHOOSES, aa_is_unit=False, bombard=BOMBARD_ROUND1,
        bombard_values={"battleship": 4}, bombard_limit=False,
        amphibious_retreat=RETREAT_NONE, supported=("infantry",), tac_pairing=False,
        heavy_bombers=(3, False), jets="defence",
        techs=frozenset({"heavy_bombers", "jets", "super_subs"})),
    AA50: EditionRules(
        aa=AA_PER_PLANE, aa_is_unit=False, bombard=BOMBARD_ROUND1,
        bombard_values={"battleship": 4, "cruiser": 3}, bombard_limit=True,
        amphibious_retreat=RETREAT_AIR_AND_OVERLAND, supported=("infantry",),
        tac_pairing=False, heavy_bombers=(2, True), jets="attack", techs=_V3_TECHS),
    E1940: EditionRules(
        aa=AA_THREE_PER_GUN, aa_is_unit=True, bombard=BOMBARD_ROUND1,
        bombard_values={"battleship": 4, "cruiser": 3}, bombard_limit=True,
        amphibious_retreat=RETREAT_AIR_AND_OVERLAND,
        supported=("infantry", "mech_infantry"), tac_pairing=True, heavy_bombers=(2, True),
        jets="attack", techs=_V3_TECHS - {"lhtr_heavy_bombers"}),
}

# Amphibious assaults: units that may land from transports, defending units
# that bombard hits may strike (an AA gun that is not a unit is excluded
# separately, since it is never a casualty), and the bombard values.
LANDING_UNITS = ("infantry", "mech_infantry", "artillery", "tank")
BOMBARD_TARGETS = ("infantry", "mech_infantry", "artillery", "tank", "aa")
BOMBARD_VALUES = {edition: rules.bombard_values for edition, rules in RULES.items()}
COMBINED_BOMBARDMENT_VALUES = {"destroyer": 3}  # revised technology only

ATTACK = "attack"
DEFENCE = "defence"

OUTCOMES = ("attacker_win", "defender_win", "draw", "stalemate")

SIXTH = Fraction(1, 6)


def _hit_chance(value, faces=None):
    """The chance that one die hits on `value` or less: value/6 on the fair die; with a die
    law (`faces`: the six Fractions of faces 1..6, see "Biased dice" below) the summed chance
    of the faces 1..value."""
    if faces is None:
        return Fraction(value, 6)
    return sum(faces[:max(value, 0)], Fraction(0))


def _die_law(die_law, dice):
    """A die law as six Fractions (each in [0, 1], summing to 1), or None (the fair die)."""
    if die_law is None:
        return None
    faces = tuple(Fraction(p) for p in die_law)
    if len(faces) != 6 or any(not 0 <= p <= 1 for p in faces) or sum(faces) != 1:
        raise ValueError(f"a die law is six probabilities in [0, 1] summing to 1, not {die_law!r}")
    if dice != STANDARD:
        raise ValueError("a die law is for standard dice only")
    return faces


# ---------------------------------------------------------------------------
# Small rule helpers (shared by the exact solver and the simulation)
# ---------------------------------------------------------------------------

def _check_edition(edition):
    if edition not in EDITIONS:
        raise ValueError(f"unknown edition {edition!r}; expected one of {EDITIONS}")


def _to_counts(side, edition=None):
    """dict unit -> count  ==>  tuple of counts in UNITS order."""
    for name, n in side.items():
        if name not in UNITS:
            raise ValueError(f"unknown unit {name!r}")
        if edition is not None and name not in STATS[edition]:
            raise ValueError(f"unit {name!r} does not exist in {edition}")
        if not isinstance(n, int) or n < 0:
            raise ValueError(f"bad count {n!r} for unit {name!r}")
    return tuple(side.get(name, 0) for name in UNITS)


def _idx(name):
    return UNITS.index(name)


def _cost(edition, unit):
    return STATS[edition][unit][0]


def _techs_of(edition, names, legacy=()):
    """Validate a side's technologies; return them as a frozenset.

    `legacy` are the old per-battle switches (heavy_bombers, jets,
    combined_bombardment) that are on; they are kept where the edition has
    them and ignored elsewhere (combined_bombardment in 1942-2e, as before).
    """
    if isinstance(names, str):
        names = [names]
    techs = set()
    for name in names or ():
        if name not in TECHS:
            raise ValueError(f"unknown technology {name!r}; expected one of {TECHS}")
        if name not in RULES[edition].techs:
            raise ValueError(f"technology {name!r} does not exist in {edition}")
        techs.add(name)
    techs.update(t for t in legacy if t in RULES[edition].techs)
    return frozenset(techs)


def _value(edition, unit, role, techs):
    """Combat value (die value) of one unit in the given role, without support."""
    _, attack, defence = STATS[edition][unit]
    if "jets" in techs and unit == "fighter":
        if RULES[edition].jets == "defence":
            defence += 1
        else:
            attack += 1
    return attack if role == ATTACK else defence


def _bomber_dice(edition, role, techs):
    """(dice per bomber, best die only) in this role."""
    if "lhtr_heavy_bombers" in techs:
        return 2, True  # attack and defence, best die counts
    if role == ATTACK and "heavy_bombers" in techs:
        return RULES[edition].heavy_bombers
    return 1, False


def _is_casualty(edition, unit):
    """Can this unit be taken as a loss?  (An AA gun that is not a unit never is.)"""
    return unit != "aa" or RULES[edition].aa_is_unit


def _counts_as_unit(edition, unit):
    """Does this unit count as 'a unit left'?  (An AA gun that is not a unit never does.)"""
    return unit != "aa" or RULES[edition].aa_is_unit


def _has_units(edition, counts):
    return any(counts[_idx(u)] > 0 for u in UNITS if _counts_as_unit(edition, u))


def _aa_only_rule(edition, att, dfn):
    """AAA editions: a defender left with only AAA loses it if the attacker has units."""
    if not RULES[edition].aa_is_unit:
        return dfn
    i = _idx("aa")
    only_aa = dfn[i] > 0 and all(dfn[j] == 0 for j in range(len(UNITS)) if j != i)
    if only_aa and _has_units(edition, att):
        new = list(dfn)
        new[i] = 0
        return tuple(new)
    return dfn


def _fire_profile(edition, role, counts, techs):
    """One side's general fire as a list of (units, die value, dice per unit, best only).

    "best only": the unit rolls that many dice and scores at most one hit
    (it hits if any die hits); otherwise every die may hit.  Support: each
    artillery (two with improved_artillery) gives +1 to one supported unit on
    attack; each fighter or tank gives +1 to one tactical bomber on attack
    (1940-2e), never more than +1.
    """
    rules = RULES[edition]
    support_left = 0
    pairs_left = 0
    if role == ATTACK:
        per_artillery = 2 if "improved_artillery" in techs else 1
        support_left = counts[_idx("artillery")] * per_artillery
        if rules.tac_pairing:
            pairs_left = counts[_idx("fighter")] + counts[_idx("tank")]
    profile = []
    for u in UNITS:
        n = counts[_idx(u)]
        if n == 0:
            continue
        if u == "aa" and not rules.aa_is_unit:
            continue  # AA guns never roll in general combat
        v = _value(edition, u, role, techs)
        if role == ATTACK and u in rules.supported:
            supported = min(n, support_left)
            support_left -= supported
            profile += [(supported, v + 1, 1, False), (n - supported, v, 1, False)]
        elif role == ATTACK and u == "tactical_bomber" and rules.tac_pairing:
            paired = min(n, pairs_left)
            pairs_left -= paired
            profile += [(paired, v + 1, 1, False), (n - paired, v, 1, False)]
        elif u == "bomber":
            dice, best = _bomber_dice(edition, role, techs)
            profile.append((n, v, dice, best))
        else:
            profile.append((n, v, 1, False))
    return [entry for entry in profile if entry[0] > 0]


def _dice_groups(edition, role, counts, techs, faces=None):
    """List of (number_of_dice, hit_probability) for one side's general fire.

    Each "die" here scores at most one hit.  A best-of-k unit (1942-2e style
    heavy bombers) is combined into one "die" with hit probability
    1 - (1 - v/6)**k; a unit whose k dice may each hit is k dice.  (With a
    die law `faces`, v/6 is the chance of the faces 1..v.)
    """
    groups = []
    for n, v, dice, best in _fire_profile(edition, role, counts, techs):
        if dice > 1 and best:
            miss = 1 - _hit_chance(v, faces)
            groups.append((n, 1 - miss**dice))
        else:
            groups.append((n * dice, _hit_chance(v, faces)))
    return [(n, p) for n, p in groups if n > 0]


def _unit_power(value, dice, best):
    """Low-luck strength of one unit (TripleA's power): its value, k x value for
    k dice that may each hit, min(value + k - 1, 6) for best-of-k."""
    if value <= 0:
        return 0
    if dice == 1:
        return value
    if best:
        return min(value + dice - 1, 6)
    return dice * value


def _low_luck_strength(edition, role, counts, techs):
    return sum(n * _unit_power(v, dice, best)
               for n, v, dice, best in _fire_profile(edition, role, counts, techs))


def _can_hit(edition, role, counts, techs, faces=None):
    return any(v > 0 and _hit_chance(v, faces) > 0
               for _, v, _, _ in _fire_profile(edition, role, counts, techs))


def _classify(edition, att, dfn, techs, faces=None):
    """Return the outcome name if the battle is over in this state, else None.

    `techs` maps ATTACK / DEFENCE to the sides' technologies; `faces`: a die
    law (a unit whose faces 1..v have no chance cannot hit).
    """
    att_has = _has_units(edition, att)
    dfn_has = _has_units(edition, dfn)
    if not att_has and not dfn_has:
        return "draw"
    if att_has and not dfn_has:
        return "attacker_win"
    if dfn_has and not att_has:
        return "defender_win"
    if not _can_hit(edition, ATTACK, att, techs[ATTACK], faces) and not _can_hit(
        edition, DEFENCE, dfn, techs[DEFENCE], faces
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
        if _is_casualty(edition, u) and u in STATS[edition]:
            i = _idx(u)
            loss += _cost(edition, u) * (start[i] - end[i])
    return loss


def _aa_value(edition, dfn_techs):
    """AA hit number: 1, 2 with radar."""
    return 2 if "radar" in dfn_techs else 1


# ---------------------------------------------------------------------------
# Amphibious-assault helpers (shared by the exact solver and the simulation)
# ---------------------------------------------------------------------------

def _landing_counts(landing, edition=None):
    """Validate `landing` and return it as a count tuple in UNITS order."""
    landing = landing or {}
    for name in landing:
        if name not in LANDING_UNITS:
            raise ValueError(
                f"{name!r} cannot land from a transport; expected one of {LANDING_UNITS}"
            )
    return _to_counts(landing, edition)


def _merge_counts(a, b):
    return tuple(x + y for x, y in zip(a, b, strict=True))


def _bombard_values_of(edition, combined_bombardment):
    values = dict(BOMBARD_VALUES[edition])
    if edition == REVISED and combined_bombardment:
        values.update(COMBINED_BOMBARDMENT_VALUES)
    return values


def _firing_ships(edition, bombard, n_landing, combined_bombardment):
    """Validate `bombard`; return the die values of the ships that actually fire.

    One entry per firing ship, strongest first.  Editions with the limit
    (1942-2e, aa50, 1940-2e): at most one ship per landing unit fires (the
    strongest ones).  revised, classic: all of them fire.
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
    if RULES[edition].bombard_limit:
        ships = ships[:n_landing]
    return ships


def _bombard_groups(ships, faces=None):
    """Dice groups (number_of_dice, hit_probability) of the firing ships."""
    return [(ships.count(v), _hit_chance(v, faces)) for v in sorted(set(ships), reverse=True)]


# ---------------------------------------------------------------------------
# Orders of losses and retreat policies (shared by the exact solver and the
# simulation)
# ---------------------------------------------------------------------------

def _parse_ool(spec):
    """Parse an order-of-losses option.

    Returns None (the default "cheapest" order), the string "weakest", or a
    tuple of sections (n, unit) where n is an int, or None for "all" (``*``).
    A comma list "bomber,tank" is the same as "*^bomber;*^tank".
    """
    if spec is None:
        return None
    if not isinstance(spec, str):
        raise ValueError(f"order of losses must be a string or None, not {spec!r}")
    text = spec.strip().lower()
    if text == "cheapest":
        return None
    if text == "weakest":
        return "weakest"
    sections = []
    if "^" in text or ";" in text:  # TripleA notation
        for part in text.split(";"):
            part = part.strip()
            if not part:
                continue
            if part.count("^") != 1:
                raise ValueError(f"bad order-of-losses section {part!r}; expected N^unit or *^unit")
            count, unit = (x.strip() for x in part.split("^"))
            if count == "*":
                n = None
            elif count.isdigit():
                n = int(count)
            else:
                raise ValueError(f"bad count {count!r} in order-of-losses section {part!r}")
            sections.append((n, unit))
    else:  # comma list
        sections = [(None, part.strip()) for part in text.split(",") if part.strip()]
    if not sections:
        raise ValueError(f"empty order of losses {spec!r}")
    for _, unit in sections:
        if unit not in UNITS:
            raise ValueError(
                f"unknown unit {unit!r} in order of losses {spec!r}; expected "
                f"'cheapest', 'weakest', a comma list or N^unit;... with units from {UNITS}"
            )
    return tuple(sections)


def _base_type_order(edition, role, techs, weakest=False, aa_last=False):
    """Unit types that can be casualties, in the preset order.

    Every key starts with a rank: -1 for a defending AAA (1942-2e, 1940-2e;
    lost first), +1 for it instead with ``aa_last`` (lost last), 0 for
    everything else.  cheapest: (rank, cost, value, UNITS position).
    weakest: (rank, value, cost, cheapest position).
    """
    candidates = [u for u in UNITS if _is_casualty(edition, u) and u in STATS[edition]]

    def rank(u):
        if RULES[edition].aa_is_unit and role == DEFENCE and u == "aa":
            return 1 if aa_last else -1
        return 0

    cheapest = sorted(candidates, key=lambda u: (
        rank(u), _cost(edition, u), _value(edition, u, role, techs), UNITS.index(u)))
    if not weakest:
        return cheapest
    return sorted(candidates, key=lambda u: (
        rank(u), _value(edition, u, role, techs), _cost(edition, u), cheapest.index(u)))


def _keep_land_last(sequence, n):
    """Move the last `n` land units of `sequence` that come before its last
    aircraft to right after that aircraft (keeping their relative order)."""
    air = [i for i, u in enumerate(sequence) if u in AIRCRAFT]
    land = [i for i, u in enumerate(sequence) if u not in AIRCRAFT]
    if n <= 0 or not air or not land:
        return list(sequence)
    last_air = air[-1]
    moved = [i for i in land[-n:] if i < last_air]
    head = [u for i, u in enumerate(sequence[: last_air + 1]) if i not in moved]
    return head + [sequence[i] for i in moved] + list(sequence[last_air + 1:])


@cache
def _loss_sequence(edition, role, techs, counts, ool=None, keep_land=0, aa_last=False):
    """The side's casualties in the order they are taken: one name per unit.

    Resolved against the units present (`counts`):

    * sections (comma list / TripleA notation) claim their counts from the
      RIGHT: the rightmost section takes min(N, available) of its type (``*``:
      all that is available), then the next one to its left from what is
      left, and so on; the sequence is the sections left to right with their
      claimed counts, then every unclaimed unit in the default order;
    * "weakest" / default: all units in the preset type order;
    * keep_land (attacker): see `_keep_land_last`.
    """
    base = _base_type_order(edition, role, techs, weakest=(ool == "weakest"), aa_last=aa_last)
    left = {u: counts[_idx(u)] for u in base}
    claimed = []
    if isinstance(ool, tuple):
        claims = [0] * len(ool)
        for i in reversed(range(len(ool))):
            n, unit = ool[i]
            available = left.get(unit, 0)  # an AA gun that is not a unit is never a casualty
            take = available if n is None else min(n, available)
            claims[i] = take
            if unit in left:
                left[unit] -= take
        for (_, unit), take in zip(ool, claims, strict=True):
            claimed += [unit] * take
    sequence = claimed + [u for u in base for _ in range(left[u])]
    if keep_land:
        sequence = _keep_land_last(sequence, keep_land)
    return tuple(sequence)


def _take_first(counts, hits, sequence, eligible=None):
    """Remove the first `hits` units of `sequence` (only those in `eligible`,
    if given); extra hits are wasted."""
    new = list(counts)
    for u in sequence:
        if hits == 0:
            break
        if eligible is not None and u not in eligible:
            continue
        new[_idx(u)] -= 1
        hits -= 1
    return tuple(new)


@cache
def _round1_casualties_in_sequence(dfn, general_hits, bombard_hits, sequence):
    """Round 1 with bombardment: the defender's state after general and bombard hits.

    Brute force over every possible set of casualties (a count per type): the
    set must be coverable by the hits, each casualty by its own hit (every
    chosen non-land unit needs a general hit; the chosen land units take the
    bombard hits plus the general hits left over); among the largest
    coverable sets (as many hits as possible land) one is taken as follows.
    A set of casualties (a count per unit type) sits at the positions of the
    first units of each type in `sequence`; among the largest coverable sets
    the one whose sorted positions are lexicographically smallest is taken.
    """
    types = [u for u in UNITS if u in sequence]
    positions = {u: [i for i, v in enumerate(sequence) if v == u] for u in types}
    best_key, best_choice = None, None
    for choice in itertools.product(*(range(len(positions[u]) + 1) for u in types)):
        n_land = sum(c for u, c in zip(types, choice, strict=True) if u in BOMBARD_TARGETS)
        n_other = sum(c for u, c in zip(types, choice, strict=True) if u not in BOMBARD_TARGETS)
        if n_other > general_hits:
            continue
        if n_land > bombard_hits + (general_hits - n_other):
            continue
        taken = tuple(sorted(p for u, c in zip(types, choice, strict=True)
                             for p in positions[u][:c]))
        key = (-len(taken), taken)
        if best_key is None or key < best_key:
            best_key, best_choice = key, choice
    new = list(dfn)
    for u, c in zip(types, best_choice, strict=True):
        new[_idx(u)] -= c
    return tuple(new)


def _check_count_option(name, value, allow_none=True):
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a non-negative int{' or None' if allow_none else ''}, "
                         f"not {value!r}")


def _land_units_left(edition, counts):
    """Number of units left that count and are not aircraft."""
    return sum(counts[_idx(u)] for u in UNITS
               if u not in AIRCRAFT and _counts_as_unit(edition, u))


def _units_left(edition, counts):
    return sum(counts[_idx(u)] for u in UNITS if _counts_as_unit(edition, u))


class _Setup:
    """Everything that fixes how one battle is fought: the start state, the
    orders of losses and the retreat policy.  Read-only after __init__."""

    def __init__(self, edition, attacker, defender, *, heavy_bombers, jets, landing, bombard,
                 combined_bombardment, attacker_ool, defender_ool, keep_land, aa_last,
                 retreat_after, retreat_when_left, retreat_when_only_air, strafe,
                 retreat_below, attacker_tech=(), defender_tech=(), dice=STANDARD,
                 retreat_air_loss=None, die_law=None):
        _check_edition(edition)
        self.edition = edition
        self.faces = _die_law(die_law, dice)
        # The old switches apply to both sides: each changes only the role it
        # is about (heavy bombers attack, revised jets defence, ...).
        legacy = [name for name, on in (("heavy_bombers", heavy_bombers), ("jets", jets))
                  if on]
        att_legacy = legacy + (["combined_bombardment"] if combined_bombardment else [])
        self.techs = {ATTACK: _techs_of(edition, attacker_tech, att_legacy),
                      DEFENCE: _techs_of(edition, defender_tech, legacy)}
        if dice not in DICE:
            raise ValueError(f"unknown dice {dice!r}; expected one of {DICE}")
        self.dice = dice
        self.landing0 = _landing_counts(landing, edition)
        self.overland0 = _to_counts(attacker, edition)
        self.att0 = _merge_counts(self.overland0, self.landing0)
        self.dfn0 = _to_counts(defender, edition)
        self.amphibious = sum(self.landing0) > 0
        self.ships = tuple(_firing_ships(
            edition, bombard, sum(self.landing0),
            "combined_bombardment" in self.techs[ATTACK]))
        self.att_names = {**dict.fromkeys(attacker), **dict.fromkeys(landing or {})}
        self.dfn_names = dict.fromkeys(defender)

        self.att_ool = _parse_ool(attacker_ool)
        self.dfn_ool = _parse_ool(defender_ool)
        _check_count_option("keep_land", keep_land, allow_none=False)
        self.keep_land = keep_land
        self.aa_last = bool(aa_last)

        for name, value in (("retreat_after", retreat_after),
                            ("retreat_when_left", retreat_when_left), ("strafe", strafe)):
            _check_count_option(name, value)
        self.retreat_after = retreat_after
        self.retreat_when_left = retreat_when_left
        self.retreat_when_only_air = bool(retreat_when_only_air)
        self.strafe = strafe
        if retreat_below is not None:
            if isinstance(retreat_below, bool) or not isinstance(retreat_below,
                                                                 (int, float, Fraction)):
                raise ValueError(f"retreat_below must be a number or None, not {retreat_below!r}")
            if retreat_below != retreat_below:  # NaN
                raise ValueError("retreat_below must not be NaN")
            retreat_below = Fraction(retreat_below)  # exact, also for a float
        self.retreat_below = retreat_below
        if retreat_air_loss is not None:
            if isinstance(retreat_air_loss, bool) or not isinstance(retreat_air_loss,
                                                                    (int, float, Fraction)):
                raise ValueError(f"retreat_air_loss must be a number or None, not "
                                 f"{retreat_air_loss!r}")
            retreat_air_loss = Fraction(retreat_air_loss)  # exact, also for a float
        self.retreat_air_loss = retreat_air_loss
        # Rounds fought only matter up to `last_round_key`: 0 (no round yet:
        # never retreat) versus >= 1, and with retreat_after R also whether R
        # rounds have been fought (retreat_after 0 acts like 1).
        self.last_round_key = max(retreat_after, 1) if retreat_after is not None else 1

    # -- orders of losses --------------------------------------------------

    def att_sequence(self, att):
        return _loss_sequence(self.edition, ATTACK, self.techs[ATTACK], att, self.att_ool,
                              self.keep_land, False)

    def dfn_sequence(self, dfn):
        return _loss_sequence(self.edition, DEFENCE, self.techs[DEFENCE], dfn, self.dfn_ool,
                              0, self.aa_last)

    def lose_att(self, att, hits, eligible=None):
        return _take_first(att, hits, self.att_sequence(att), eligible)

    def lose_dfn(self, dfn, hits, eligible=None):
        return _take_first(dfn, hits, self.dfn_sequence(dfn), eligible)

    def lose_air(self, att, hits):
        """AA losses the attacker chooses: the first aircraft in its sequence."""
        return self.lose_att(att, hits, AIRCRAFT)

    def lose_to_bombard(self, dfn, hits):
        """Bombard hits: the first land units in the defender's sequence."""
        return self.lose_dfn(dfn, hits, BOMBARD_TARGETS)

    def att_removable(self, att):
        return len(self.att_sequence(att))

    def dfn_removable(self, dfn, eligible=None):
        return sum(1 for u in self.dfn_sequence(dfn) if eligible is None or u in eligible)

    def round1_dfn(self, dfn, general_hits, bombard_hits):
        return _round1_casualties_in_sequence(dfn, general_hits, bombard_hits,
                                              self.dfn_sequence(dfn))

    # -- fire ----------------------------------------------------------------

    def classify(self, att, dfn):
        return _classify(self.edition, att, dfn, self.techs, self.faces)

    def hit_law(self, role, counts, cap):
        """Law of the hits of one side's general fire (hits >= cap lumped at cap)."""
        techs = self.techs[role]
        if self.dice == LOW_LUCK:
            return _low_luck_law(_low_luck_strength(self.edition, role, counts, techs), cap)
        return _hit_distribution(_dice_groups(self.edition, role, counts, techs, self.faces),
                                 cap)

    def bombard_law(self, cap):
        """Law of the bombardment hits (hits >= cap lumped at cap)."""
        if self.dice == LOW_LUCK:
            return _low_luck_law(sum(self.ships), cap)
        return _hit_distribution(_bombard_groups(list(self.ships), self.faces), cap)

    # -- retreat -----------------------------------------------------------

    def round_key(self, rounds):
        return min(rounds, self.last_round_key)

    def retreat_split(self, att):
        """Split the attacker's units into (stay, go): those that may NOT retreat
        and those that may.

        Without landing units every unit may retreat.  In an amphibious
        assault: 1942-2e, aa50, 1940-2e -- aircraft and overland units may
        retreat, landed units may not; casualties of a type are counted as
        taken from its landed units first, so of a type with `n` left,
        min(n, overland count) are overland and the rest are landed.
        revised -- only aircraft may retreat.  classic -- nothing may retreat.
        """
        if not self.amphibious:
            return tuple(0 for _ in UNITS), att
        mode = RULES[self.edition].amphibious_retreat
        go = []
        for i, u in enumerate(UNITS):
            if mode == RETREAT_NONE:
                go.append(0)
            elif u in AIRCRAFT:
                go.append(att[i])
            elif mode == RETREAT_AIR_AND_OVERLAND:
                go.append(min(att[i], self.overland0[i]))
            else:
                go.append(0)
        go = tuple(go)
        stay = tuple(a - g for a, g in zip(att, go, strict=True))
        return stay, go

    def retreat_triggered(self, att, dfn, rounds):
        """Every retreat condition except retreat_below."""
        if self.retreat_after is not None and rounds >= self.retreat_after:
            return True
        if self.retreat_when_left is not None and \
                _units_left(self.edition, att) <= self.retreat_when_left:
            return True
        if self.retreat_when_only_air and _land_units_left(self.edition, att) == 0:
            return True
        if self.strafe is not None and _units_left(self.edition, dfn) <= self.strafe:
            return True
        return False

    def retreats(self, att, dfn, rounds, win_if_fighting_on, air_loss_if_fighting_on=None):
        """Does the attacker retreat at the end of round `rounds` (>= 1) in a
        state where the battle is not over (and no partial retreat has taken
        place yet)?  `win_if_fighting_on()` gives the exact probability that
        it wins if it fights on without retreating now (asked only when
        retreat_below decides); `air_loss_if_fighting_on()` the exact
        probability that fighting on with no retreat at all loses every
        aircraft (asked only when retreat_air_loss decides).

        Returns None (no retreat: none of its units may retreat, or no
        condition holds) or (stay, go) from `retreat_split`: `go` withdraws;
        `stay` has no unit that counts for a full retreat, else it fights on
        alone (partial retreat).
        """
        if rounds < 1:
            return None
        stay, go = self.retreat_split(att)
        if not _has_units(self.edition, go):
            return None  # nothing may retreat: fight on, check again next round
        if self.retreat_triggered(att, dfn, rounds):
            return stay, go
        if (self.retreat_air_loss is not None
                and any(att[_idx(u)] for u in AIRCRAFT)
                and air_loss_if_fighting_on() > self.retreat_air_loss):
            return stay, go
        if self.retreat_below is not None and win_if_fighting_on() < self.retreat_below:
            return stay, go
        return None


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


def _low_luck_law(strength, cap):
    """Low-luck hits of one fire step of total strength `strength`: strength // 6
    sure hits, plus one die for the remainder (a hit with probability
    remainder / 6); hits >= cap lumped at cap."""
    sure, remainder = divmod(strength, 6)
    law = {}
    for hits, p in ((sure, 1 - Fraction(remainder, 6)), (sure + 1, Fraction(remainder, 6))):
        if p != 0:
            law[min(hits, cap)] = law.get(min(hits, cap), 0) + p
    return law


def _aa_hits_law(dice, value, dice_mode, faces=None):
    """Law of the AA hits of `dice` dice hitting on `value` or less."""
    if dice_mode == LOW_LUCK:
        return _low_luck_law(dice * value, dice)
    return _binomial(dice, _hit_chance(value, faces))


def _per_plane_low_luck_groups(air, value):
    """TripleA's low-luck AA casualties when the attacker does not choose.

    `air`: dict aircraft type -> count.  Each type is cut into groups of
    6 // value aircraft (when value divides 6); every full group is one
    guaranteed hit on that type; the aircraft left over from each type form
    the remainder pool.  Returns (guaranteed losses per type, remainder per type).
    """
    size = 6 // value if 6 % value == 0 else 0
    if size == 0:
        return {u: 0 for u in air}, dict(air)
    return {u: n // size for u, n in air.items()}, {u: n % size for u, n in air.items()}


def _aa_fire_distribution(setup, att, dfn):
    """Distribution over attacker states after round-1 AA fire: dict state -> Fraction.

    * per plane (revised, aa50): standard dice -- one die per aircraft, aimed
      at that aircraft: each type's losses are Binomial(count, value/6),
      independently.  Low luck -- strength = aircraft x value; its hits fall
      first as guaranteed hits on full groups of 6 // value aircraft of one
      type, the rest uniformly at random among the leftover aircraft
      (multivariate hypergeometric);
    * attacker chooses (classic: one die per aircraft; 1942-2e, 1940-2e:
      min(3 x AAA, aircraft) dice): the hits take the first aircraft of the
      attacker's order of losses (`setup.lose_air`).
    """
    edition = setup.edition
    n_aa = dfn[_idx("aa")]
    n_air = sum(att[_idx(u)] for u in AIRCRAFT)
    if n_aa == 0 or n_air == 0:
        return {att: Fraction(1)}
    value = _aa_value(edition, setup.techs[DEFENCE])
    mode = RULES[edition].aa
    result = {}

    def add(state, p):
        result[state] = result.get(state, 0) + p

    if mode == AA_PER_PLANE and setup.dice == STANDARD:
        # one die per aircraft, aimed at that aircraft
        laws = [(u, _binomial(att[_idx(u)], _hit_chance(value, setup.faces)))
                for u in AIRCRAFT]
        for combo in itertools.product(*(law.items() for _, law in laws)):
            new = list(att)
            p = Fraction(1)
            for (u, _), (lost, pl) in zip(laws, combo, strict=True):
                new[_idx(u)] -= lost
                p *= pl
            add(tuple(new), p)
    elif mode == AA_PER_PLANE:
        air = {u: att[_idx(u)] for u in AIRCRAFT}
        guaranteed, remainder = _per_plane_low_luck_groups(air, value)
        pool = sum(remainder.values())
        for hits, ph in _aa_hits_law(n_air, value, LOW_LUCK).items():
            extra = hits - sum(guaranteed.values())
            assert extra >= 0
            base = [att[i] - guaranteed.get(u, 0) for i, u in enumerate(UNITS)]
            if extra >= pool:
                add(tuple(b - remainder.get(u, 0) for b, u in zip(base, UNITS, strict=True)), ph)
                continue
            for split in itertools.product(*(range(remainder[u] + 1) for u in AIRCRAFT)):
                if sum(split) != extra:
                    continue
                ways = 1
                new = list(base)
                for u, k in zip(AIRCRAFT, split, strict=True):
                    ways *= comb(remainder[u], k)
                    new[_idx(u)] -= k
                add(tuple(new), ph * Fraction(ways, comb(pool, extra)))
    else:
        dice = n_air if mode == AA_ATTACKER_CHOOSES else min(3 * n_aa, n_air)
        for hits, ph in _aa_hits_law(dice, value, setup.dice, setup.faces).items():
            add(setup.lose_air(att, hits), ph)
    return result


# A "value vector" holds the expectations, from a given state onwards, of:
#   [0..5)  indicators of ALL_OUTCOMES
#   [5]     takes_territory
#   [6]     number of general rounds still to be fought
#   [7..7+n)      final attacker counts (UNITS order)
#   [7+n..7+2n)   final defender counts (UNITS order)
ALL_OUTCOMES = (*OUTCOMES, "retreat")
WIN = ALL_OUTCOMES.index("attacker_win")
TAKES = len(ALL_OUTCOMES)
ROUNDS = TAKES + 1
ATT_AT = ROUNDS + 1
DFN_AT = ATT_AT + len(UNITS)
VECTOR_SIZE = DFN_AT + len(UNITS)


class _ExactSolver:
    """Recursion with memoisation over battle states.

    node(att, dfn, rounds): the value vector of a state reached at the end of
    round `rounds` (0: before round 1) -- the battle may be over, the attacker
    may retreat, or another round is fought.
    fight(att, dfn, rounds): the value vector of fighting round rounds + 1 from
    that state (and then following the policy).

    Only round_key(rounds) matters (see _Setup.last_round_key).  When a round
    in which nobody hits leads back to the same key, the self-loop is summed
    up as a geometric series (divide by 1 - q): the attacker that chose to
    fight on in a state makes the same choice in the same state again.
    """

    def __init__(self, setup):
        self.s = setup
        self.node_memo = {}
        self.fight_memo = {}
        self.air_memo = {}

    def air_loss(self, att, dfn):
        """The probability that the battle fought on from the end-of-round state
        (att, dfn), with no retreat at all, ends with none of the attacker's
        aircraft left (retreat_air_loss)."""
        key = (att, dfn)
        if key in self.air_memo:
            return self.air_memo[key]
        if self.s.classify(att, dfn) is not None:  # over: are the aircraft gone?
            value = Fraction(1 if not any(att[_idx(u)] for u in AIRCRAFT) else 0)
        else:
            trans = self.round_transitions(att, dfn)
            q = trans.pop((att, dfn), Fraction(0))  # nobody hits: the same state again
            value = sum((p * self.air_loss(a2, d2) for (a2, d2), p in trans.items()),
                        Fraction(0)) / (1 - q)
        self.air_memo[key] = value
        return value

    def terminal_vector(self, outcome, att, dfn, withdrawn=None):
        """`att`: the attacker's units still fighting (they decide takes_territory);
        `withdrawn`: units that left in a partial retreat (survivors too)."""
        vec = [Fraction(0)] * VECTOR_SIZE
        vec[ALL_OUTCOMES.index(outcome)] = Fraction(1)
        if outcome == "attacker_win" and _takes_territory(att):
            vec[TAKES] = Fraction(1)
        final_att = att if withdrawn is None else _merge_counts(att, withdrawn)
        for i in range(len(UNITS)):
            vec[ATT_AT + i] = Fraction(final_att[i])
            vec[DFN_AT + i] = Fraction(dfn[i])
        return vec

    def round_transitions(self, att, dfn):
        """Distribution of (att', dfn') after one general round (incl. the AAA rule)."""
        s = self.s
        att_hits = s.hit_law(ATTACK, att, s.dfn_removable(dfn))
        dfn_hits = s.hit_law(DEFENCE, dfn, s.att_removable(att))
        trans = {}
        for ha, pa in att_hits.items():
            for hd, pd in dfn_hits.items():
                new_dfn = s.lose_dfn(dfn, ha)
                new_att = s.lose_att(att, hd)
                new_dfn = _aa_only_rule(s.edition, new_att, new_dfn)
                key = (new_att, new_dfn)
                trans[key] = trans.get(key, 0) + pa * pd
        return trans

    def node(self, att, dfn, rounds, withdrawn=None):
        """`withdrawn`: None before any retreat; after a partial retreat, the
        counts of the units that withdrew (no further retreat is possible)."""
        s = self.s
        key = (att, dfn, s.round_key(rounds), withdrawn)
        if key in self.node_memo:
            return self.node_memo[key]
        outcome = s.classify(att, dfn)
        split = None
        if outcome is None and withdrawn is None:
            split = s.retreats(att, dfn, rounds, lambda: self.fight(att, dfn, rounds)[WIN],
                               lambda: self.air_loss(att, dfn))
        if outcome is not None:
            vec = self.terminal_vector(outcome, att, dfn, withdrawn)
        elif split is not None and not _has_units(s.edition, split[0]):
            vec = self.terminal_vector("retreat", att, dfn)  # full retreat
        elif split is not None:
            stay, go = split  # partial retreat: `stay` fights on alone
            vec = self.node(stay, dfn, rounds, go)
        else:
            vec = self.fight(att, dfn, rounds, withdrawn)
        self.node_memo[key] = vec
        return vec

    def fight(self, att, dfn, rounds, withdrawn=None):
        s = self.s
        key = (att, dfn, s.round_key(rounds), withdrawn)
        if key in self.fight_memo:
            return self.fight_memo[key]
        trans = self.round_transitions(att, dfn)
        q = Fraction(0)
        if s.round_key(rounds + 1) == s.round_key(rounds):
            q = trans.pop((att, dfn), Fraction(0))  # P(nothing changes this round)
            if q == 1:
                raise AssertionError("non-terminal state cannot change; rules bug")
        acc = [Fraction(0)] * VECTOR_SIZE
        for (a2, d2), p in trans.items():
            sub = self.node(a2, d2, rounds + 1, withdrawn)
            for i in range(VECTOR_SIZE):
                acc[i] += p * sub[i]
        acc[ROUNDS] += 1  # the round being fought now (repeated while self-looping)
        vec = [x / (1 - q) for x in acc]
        self.fight_memo[key] = vec
        return vec

    def first_round_with_bombardment(self, att, dfn):
        """Bombardment with return fire (every edition but revised): value from
        the start of round 1, bombard dice rolled in round 1.

        Round 1 differs from later rounds only by the bombard dice and the
        round-1 casualty rule; from the end of round 1 on, `node` takes over.
        """
        s = self.s
        outcome = s.classify(att, dfn)
        if outcome is not None:
            return self.terminal_vector(outcome, att, dfn)
        general_hits = s.hit_law(ATTACK, att, s.dfn_removable(dfn))
        bombard_hits = s.bombard_law(s.dfn_removable(dfn, BOMBARD_TARGETS))
        dfn_hits = s.hit_law(DEFENCE, dfn, s.att_removable(att))
        acc = [Fraction(0)] * VECTOR_SIZE
        for hg, pg in general_hits.items():
            for hb, pb in bombard_hits.items():
                new_dfn = s.round1_dfn(dfn, hg, hb)
                for hd, pd in dfn_hits.items():
                    new_att = s.lose_att(att, hd)
                    sub = self.node(new_att, _aa_only_rule(s.edition, new_att, new_dfn), 1)
                    for i in range(VECTOR_SIZE):
                        acc[i] += pg * pb * pd * sub[i]
        acc[ROUNDS] += 1  # round 1 itself
        return acc

    def opening_bombardment(self, dfn):
        """revised: distribution of defender states after the opening bombardment."""
        s = self.s
        if not s.ships:
            return {dfn: Fraction(1)}
        result = {}
        for hits, p in s.bombard_law(s.dfn_removable(dfn, BOMBARD_TARGETS)).items():
            new = s.lose_to_bombard(dfn, hits)
            result[new] = result.get(new, 0) + p
        return result

    def total(self):
        """Round-1 AA fire (revised: together with the opening bombardment), then
        the pre-round AAA rule, then the battle proper (other editions: round 1
        with bombardment)."""
        s = self.s
        opening = RULES[s.edition].bombard == BOMBARD_OPENING
        total = [Fraction(0)] * VECTOR_SIZE
        for att1, p in _aa_fire_distribution(s, s.att0, s.dfn0).items():
            if opening:
                after_bombardment = self.opening_bombardment(s.dfn0)
            else:
                after_bombardment = {s.dfn0: Fraction(1)}
            for dfn_b, pb in after_bombardment.items():
                dfn1 = _aa_only_rule(s.edition, att1, dfn_b)
                if not opening and s.ships:
                    sub = self.first_round_with_bombardment(att1, dfn1)
                else:
                    sub = self.node(att1, dfn1, 0)
                for i in range(VECTOR_SIZE):
                    total[i] += p * pb * sub[i]
        return total


def exact_land(edition, attacker, defender, *, heavy_bombers=False, jets=False,
               landing=None, bombard=None, combined_bombardment=False,
               attacker_ool=None, defender_ool=None, keep_land=0, aa_last=False,
               retreat_after=None, retreat_when_left=None, retreat_when_only_air=False,
               strafe=None, retreat_below=None, attacker_tech=(), defender_tech=(),
               dice=STANDARD, retreat_air_loss=None, die_law=None):
    """Exact land-battle result with Fraction arithmetic.

    Returns a dict with keys attacker_win, defender_win, draw, stalemate,
    retreat, takes_territory, attacker_ipc_loss, defender_ipc_loss, tuv_swing,
    mean_rounds (Fractions) and attacker_survivors / defender_survivors
    (dict unit -> Fraction expected count left).

    `landing` / `bombard` / `combined_bombardment`: amphibious assault (see the
    module docstring).  Landing units are merged into the attacker.
    The order-of-losses and retreat options are described in the module
    docstring ("Orders of losses and retreat"); their defaults give the
    standard rules (and retreat 0).  `attacker_tech` / `defender_tech`: the
    sides' technologies (names from TECHS that the edition has); `dice`:
    "standard" or "low_luck" (see "New editions, technologies and low luck");
    `die_law`: a biased die (see "Biased dice").
    """
    setup = _Setup(edition, attacker, defender, heavy_bombers=heavy_bombers, jets=jets,
                   landing=landing, bombard=bombard, combined_bombardment=combined_bombardment,
                   attacker_ool=attacker_ool, defender_ool=defender_ool, keep_land=keep_land,
                   aa_last=aa_last, retreat_after=retreat_after,
                   retreat_when_left=retreat_when_left,
                   retreat_when_only_air=retreat_when_only_air, strafe=strafe,
                   retreat_below=retreat_below, attacker_tech=attacker_tech,
                   defender_tech=defender_tech, dice=dice,
                   retreat_air_loss=retreat_air_loss, die_law=die_law)
    total = _ExactSolver(setup).total()
    n = len(UNITS)
    att_final = tuple(total[ATT_AT + i] for i in range(n))
    dfn_final = tuple(total[DFN_AT + i] for i in range(n))
    att_loss = _ipc_loss(edition, setup.att0, att_final)
    dfn_loss = _ipc_loss(edition, setup.dfn0, dfn_final)
    result = {name: total[i] for i, name in enumerate(ALL_OUTCOMES)}
    result.update({
        "takes_territory": total[TAKES],
        "attacker_ipc_loss": Fraction(att_loss),
        "defender_ipc_loss": Fraction(dfn_loss),
        "tuv_swing": Fraction(dfn_loss - att_loss),
        "mean_rounds": total[ROUNDS],
        "attacker_survivors": {
            k: Fraction(v)
            for k, v in _reported_survivors(edition, att_final, setup.att_names).items()
        },
        "defender_survivors": {
            k: Fraction(v) for k, v in _reported_survivors(edition, dfn_final, defender).items()
        },
    })
    return result


# ---------------------------------------------------------------------------
# Die-by-die Monte Carlo simulation
# ---------------------------------------------------------------------------

def _roll_low_luck(rng, strength):
    """Low luck: strength // 6 sure hits, one die for the remainder."""
    sure, remainder = divmod(strength, 6)
    if remainder:
        sure += rng.randint(1, 6) <= remainder
    return int(sure)


def _roll_hits(rng, setup, role, counts):
    """Roll every die of one side's general fire; return the number of hits.

    Standard dice: one die per unit (k dice for a k-dice bomber, of which
    every hit counts, or only whether any hit for a best-of-k bomber).  Low
    luck: the units' strengths are summed and `_roll_low_luck` rolls.  Support
    and pairing are counted here unit by unit, separately from `_fire_profile`.
    """
    edition, techs = setup.edition, setup.techs[role]
    rules = RULES[edition]
    supported_left = 0
    paired_left = 0
    if role == ATTACK:
        supported_left = counts[_idx("artillery")] * (2 if "improved_artillery" in techs else 1)
        if rules.tac_pairing:
            paired_left = counts[_idx("fighter")] + counts[_idx("tank")]
    hits = 0
    strength = 0
    for u in UNITS:
        if u == "aa" and not rules.aa_is_unit:
            continue  # AA guns never roll in general combat
        if counts[_idx(u)] == 0:
            continue
        v = _value(edition, u, role, techs)
        dice, best = _bomber_dice(edition, role, techs) if u == "bomber" else (1, False)
        for _ in range(counts[_idx(u)]):
            value = v
            if role == ATTACK and u in rules.supported and supported_left > 0:
                supported_left -= 1
                value = v + 1
            elif role == ATTACK and u == "tactical_bomber" and paired_left > 0:
                paired_left -= 1
                value = v + 1
            if setup.dice == LOW_LUCK:
                if value > 0:
                    strength += value if dice == 1 else (
                        min(value + dice - 1, 6) if best else dice * value)
                continue
            rolled = [rng.randint(1, 6) <= value for _ in range(dice)]
            hits += any(rolled) if best else sum(rolled)
    if setup.dice == LOW_LUCK:
        return _roll_low_luck(rng, strength)
    return int(hits)


def _simulate_aa_fire(rng, setup, att, dfn):
    """Round-1 AA fire, die by die (see `_aa_fire_distribution`)."""
    edition = setup.edition
    n_aa = dfn[_idx("aa")]
    n_air = sum(att[_idx(u)] for u in AIRCRAFT)
    if n_aa == 0 or n_air == 0:
        return att
    value = _aa_value(edition, setup.techs[DEFENCE])
    mode = RULES[edition].aa
    new = list(att)
    if mode == AA_PER_PLANE and setup.dice == STANDARD:
        for u in AIRCRAFT:
            i = _idx(u)
            for _ in range(att[i]):
                if rng.randint(1, 6) <= value:
                    new[i] -= 1
        return tuple(new)
    if mode == AA_PER_PLANE:
        hits = _roll_low_luck(rng, n_air * value)
        size = 6 // value if 6 % value == 0 else 0
        pool = []
        for u in AIRCRAFT:
            n = att[_idx(u)]
            sure = n // size if size else 0
            new[_idx(u)] -= sure
            hits -= sure
            pool += [u] * (n - sure * size if size else n)
        for u in rng.sample(pool, min(hits, len(pool))):
            new[_idx(u)] -= 1
        return tuple(new)
    dice = n_air if mode == AA_ATTACKER_CHOOSES else min(3 * n_aa, n_air)
    if setup.dice == LOW_LUCK:
        hits = _roll_low_luck(rng, dice * value)
    else:
        hits = sum(1 for _ in range(dice) if rng.randint(1, 6) <= value)
    return setup.lose_air(att, hits)


def _roll_bombard_hits(rng, ships, dice=STANDARD):
    """One die per firing ship (low luck: their summed strength); return the hits."""
    if dice == LOW_LUCK:
        return _roll_low_luck(rng, sum(ships))
    return sum(1 for v in ships if rng.randint(1, 6) <= v)


def _simulate_one(rng, setup, solver=None):
    """Fight one battle; return (outcome, final att, final dfn, rounds, takes).

    The final att includes units that withdrew in a partial retreat; `takes`
    (takes_territory) is decided by the units still fighting at the end.

    `solver` (an _ExactSolver for the same setup) is needed only for a
    retreat_below decision, which asks for the exact probability that the
    attacker wins if it fights on.
    """
    edition = setup.edition
    ships = setup.ships
    opening = RULES[edition].bombard == BOMBARD_OPENING
    att, dfn = setup.att0, setup.dfn0
    att = _simulate_aa_fire(rng, setup, att, dfn)
    if opening and ships:
        # opening fire: bombard casualties are removed before they can fire
        dfn = setup.lose_to_bombard(dfn, _roll_bombard_hits(rng, ships, setup.dice))
    dfn = _aa_only_rule(edition, att, dfn)
    rounds = 0
    withdrawn = None  # units that left in a partial retreat
    while True:
        outcome = setup.classify(att, dfn)
        if outcome is not None:
            takes = outcome == "attacker_win" and _takes_territory(att)
            final = att if withdrawn is None else _merge_counts(att, withdrawn)
            return outcome, final, dfn, rounds, takes
        if withdrawn is None:
            split = setup.retreats(att, dfn, rounds,
                                   lambda a=att, d=dfn, r=rounds: solver.fight(a, d, r)[WIN])
            if split is not None:
                stay, go = split
                if not _has_units(edition, stay):
                    return "retreat", att, dfn, rounds, False  # full retreat
                att, withdrawn = stay, go  # partial retreat: `stay` fights on alone
                continue
        rounds += 1
        att_hits = _roll_hits(rng, setup, ATTACK, att)
        dfn_hits = _roll_hits(rng, setup, DEFENCE, dfn)
        if not opening and ships and rounds == 1:
            bombard_hits = _roll_bombard_hits(rng, ships, setup.dice)
            new_dfn = setup.round1_dfn(dfn, att_hits, bombard_hits)
        else:
            new_dfn = setup.lose_dfn(dfn, att_hits)
        new_att = setup.lose_att(att, dfn_hits)
        att, dfn = new_att, _aa_only_rule(edition, new_att, new_dfn)


def simulate_land(edition, attacker, defender, *, trials, seed,
                  heavy_bombers=False, jets=False,
                  landing=None, bombard=None, combined_bombardment=False,
                  attacker_ool=None, defender_ool=None, keep_land=0, aa_last=False,
                  retreat_after=None, retreat_when_left=None, retreat_when_only_air=False,
                  strafe=None, retreat_below=None, attacker_tech=(), defender_tech=(),
                  dice=STANDARD):
    """Monte Carlo land battle: same keys as exact_land, as floats (means).

    A retreat_below decision uses the exact probability (from the exact
    solver); everything else is rolled die by die.
    """
    setup = _Setup(edition, attacker, defender, heavy_bombers=heavy_bombers, jets=jets,
                   landing=landing, bombard=bombard, combined_bombardment=combined_bombardment,
                   attacker_ool=attacker_ool, defender_ool=defender_ool, keep_land=keep_land,
                   aa_last=aa_last, retreat_after=retreat_after,
                   retreat_when_left=retreat_when_left,
                   retreat_when_only_air=retreat_when_only_air, strafe=strafe,
                   retreat_below=retreat_below, attacker_tech=attacker_tech,
                   defender_tech=defender_tech, dice=dice)
    att0, dfn0, att_names = setup.att0, setup.dfn0, setup.att_names
    if trials <= 0:
        raise ValueError("trials must be positive")
    solver = _ExactSolver(setup) if setup.retreat_below is not None else None
    rng = random.Random(seed)

    tally = {k: 0 for k in ALL_OUTCOMES}
    takes = 0
    rounds_total = 0
    att_loss_total = 0
    dfn_loss_total = 0
    att_surv = {k: 0 for k in att_names}
    dfn_surv = {k: 0 for k in defender}
    for _ in range(trials):
        outcome, att, dfn, rounds, took = _simulate_one(rng, setup, solver)
        tally[outcome] += 1
        takes += took
        rounds_total += rounds
        att_loss_total += _ipc_loss(edition, att0, att)
        dfn_loss_total += _ipc_loss(edition, dfn0, dfn)
        for k, v in _reported_survivors(edition, att, att_names).items():
            att_surv[k] += v
        for k, v in _reported_survivors(edition, dfn, defender).items():
            dfn_surv[k] += v

    result = {k: tally[k] / trials for k in ALL_OUTCOMES}
    result.update({
        "takes_territory": takes / trials,
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
