"""Independent, slow, obviously-correct reference for battles that START WHERE THEY STAND.

A battle read from a save in progress is not a fresh battle: rounds have been fought (what
fires in round 1 only -- AA / AAA fire, shore bombardment and its round-1 casualty rule --
fires no more), and inside a round some fire steps are done, some hits are rolled but not yet
assigned, some units are chosen as casualties but still fire back ("waiting to die" in
TripleA).  This module solves such a battle exactly, with ``fractions.Fraction``, from the
position it stands at.

Like ``tests/reference.py``, ``tests/sea_reference.py`` and ``tests/raid_reference.py`` it
imports nothing of the ``battlecalc`` package.  It is built ON those three references: their
rules, unit tables, orders of losses, hit laws and retreat policies are used as they are (they
are the project's rules), and their exact solvers take over wherever a battle is back at the
end of a whole round (the land solver's ``node``; at sea and in raids this module has its own
short recursion over whole rounds, written from the references' round descriptions, so that
``start_round=1`` is a real check of the bookkeeping against ``exact_sea``).  What is new
here, and written step by step, is the rest of a round from a position inside it.

Functions
=========

* ``exact_land_from(edition, attacker, defender, *, start_round=1, position=None, landing,
  bombard, ...every keyword of reference.exact_land...)``
* ``exact_sea_from(edition, attacker, defender, *, start_round=1, position=None,
  ...every keyword of sea_reference.exact_sea...)``
* ``exact_raid_from(edition, attacker, defender=None, *, position=None,
  ...every keyword of raid_reference.exact_raid...)``

  return the dicts of ``exact_land`` / ``exact_sea`` / ``exact_raid`` (same keys, Fractions);
  with ``start_round=1`` and no position they are equal (``==``) to them.

* ``simulate_land_from``, ``simulate_sea_from``, ``simulate_raid_from`` (same arguments plus
  ``trials`` and ``seed``): die-by-die Monte Carlo from the same positions, with
  ``random.Random(seed)`` and one ``rng.randint(1, 6)`` per die, written separately from the
  exact step functions (they share the references' small rule helpers only).

The units given
===============

``attacker`` / ``defender`` (and ``landing`` on land) are the units STANDING at the position:
in the battle, not yet chosen as casualties.  Units chosen as casualties and not yet removed
are given in the position (``attacker_waiting`` / ``defender_waiting``); they are certain
losses.  IPC losses and survivors are counted from the position: the start force is standing +
waiting (+ submerged subs at sea); losses before the position are not in the result (the
caller adds what it knows).  ``attacker_survivors`` / ``defender_survivors`` name every unit
given standing or waiting.

A damaged battleship / carrier is given as ``damaged_battleship`` / ``damaged_carrier`` (a
unit damaged earlier in this very round too: its damage is already applied, as TripleA applies
it when the casualty is chosen).

Rounds
======

``start_round=N`` (N >= 1): the battle starts at the beginning of round N, that is just after
the attacker's decision at the end of round N - 1 to fight on.  It is the same as
``position=Position(round=N, step="start")``.

* From round 2 on, nothing that fires in round 1 only fires: no AA / AAA fire, no bombardment,
  no 1942-style joint round-1 casualty choice (the ships and the ``bombard`` keyword are
  ignored).  Landed units stay landed units: they still may not retreat.  At sea no rule
  depends on the round: round N is fought as round 1 would be.
* ``mean_rounds`` counts rounds from round 1: the expected number of the last round fought,
  i.e. the N - 1 rounds before the start plus the rounds fought from it (a position inside a
  round counts that round as fought; a battle already over at the start of round N has
  ``mean_rounds`` N - 1).  ``start_round=1`` gives today's value.
* Retreat (land) counts rounds from round 1 too: ``retreat_after=R`` retreats at the end of
  the first round >= max(R, 1) that the battle still has, so with ``start_round=N > R`` the
  attacker fights round N and retreats at its end (the end of round N is the first retreat
  point left; it never retreats before fighting the round it starts in -- that decision was
  taken at the end of round N - 1).  The other retreat conditions are checked at the end of
  every round from round N on, as always.

Positions
=========

``Position(round=1, step="start", hits_on_attacker=0, hits_on_defender=0, bombard_hits=0,
attacker_waiting={}, defender_waiting={}, attacker_submerged=0, defender_submerged=0,
lone_transports=None, fired={})``.  ``step`` names what happens next; hits are "rolled, not
assigned".

``fired`` (land and sea, at "attacker_fire" / "defender_fire" only): units of the side whose
general fire it is that have ALREADY rolled in it (TripleA rolls a side's fire in groups --
at sea its subs without a surprise strike, its air that cannot hit subs, the rest -- and
chooses each group's casualties before the next group rolls).  Only the other units roll; the
hits of the fired ones are the pending hits on the enemy (``hits_on_defender`` at
"attacker_fire", ``hits_on_attacker`` at "defender_fire"), or the casualties already chosen
(the enemy's waiting units).  On land a fire under way skips the pre-round check.

Land (``exact_land_from``), the steps of a round in order::

    "aa_fire"             round 1: the defender's AA / AAA is to fire (same as "start")
    "aa_casualties"       round 1: AA fired, hits_on_attacker = its hits, not yet taken
    "bombard_fire"        round 1: AA done; the bombardment is to fire
    "bombard_casualties"  round 1: bombardment fired, hits_on_defender = its hits
    "attacker_fire"       the attacker's general fire is to come (round N >= 2: "start")
    "defender_fire"       the attacker fired: hits_on_defender = its hits not yet assigned,
                          and/or defender_waiting = the casualties already chosen; the
                          defender's fire is to come (its casualties fire back)
    "general_casualties"  both fired: hits_on_attacker = the defender's hits, not yet taken
                          (defender_waiting: the defender's chosen casualties)
    "end_of_round"        every casualty of the round chosen: removal, the AAA-only rule, the
                          end checks and the attacker's retreat decision are to come

* AA casualties (pending ``k``): the edition's rule.  classic, 1942-2e, 1940-2e: the attacker
  chooses (its order of losses restricted to aircraft).  revised, aa50 (TripleA "Choose AA
  Casualties" off): the k aircraft lost are a uniformly random k-subset of the aircraft (the
  law of "one die rolled at each aircraft" given k hits; TripleA rolls die i at aircraft i, so
  a reader that knows which dice hit gives those aircraft as ``attacker_waiting``); low luck:
  TripleA's groups (each full group of 6 // value aircraft of one type one sure hit, the rest
  uniformly among the leftover aircraft), as in reference.py.  A k that low luck cannot roll
  raises ValueError.
* Bombardment casualties (pending ``k``): revised (no return fire) -- the defender takes them
  now in its order of losses restricted to land units and they are removed before any other
  fire.  Return-fire editions (classic, aa50, 1942-2e, 1940-2e) -- the project's round-1 rule
  (reference.py: the defender chooses the round-1 casualties for the bombard and the general
  hits together, as many hits landing as possible): the k hits are carried to the attacker's
  general fire as ``bombard_hits`` and assigned jointly with its hits.  A position whose
  bombard casualties are already chosen (TripleA chooses them at once) gives them as
  ``defender_waiting`` (they fire back in round 1; revised: they do not, they are removed
  before the general fire).
* ``bombard_hits`` (pending bombard hits of a return-fire edition) may stand at
  "attacker_fire" and "defender_fire" of round 1 only.
* ``attacker_waiting`` on land never fires (AA casualties are removed before the general
  fire; the attacker's general casualties are chosen after it fired).
* ``defender_waiting`` fires in the defender's general fire of this round.
* The pre-round check (the AAA-only rule, then "is the battle over / a stalemate") is made at
  "attacker_fire" on the units in the battle at the start of the round (standing + waiting);
  in return-fire editions with bombarding ships also at "bombard_fire", before the
  bombardment, as reference.py does (the two agree).

Sea (``exact_sea_from``), the steps of a round in order::

    "start"               round start (1942-2e/aa50/1940-2e: defenceless transports, end
                          checks, submerge decisions; revised/classic: end checks)
    "attacker_strike"     the attacker's surprise strike (V3) / opening fire (revised) /
                          sneak attack (classic) is to roll (nothing happens if it has none)
    "defender_strike"     the defender's is to roll (V3, revised); hits_on_defender = the
                          attacker's strike hits not yet assigned, or defender_waiting = the
                          casualties chosen: they still fire in this strike (simultaneous)
    "strike_casualties"   both strikes rolled: hits_on_attacker / hits_on_defender pending
    "attacker_fire"       strike casualties chosen: they are removed now (V3, classic; revised:
                          kept as waiting and firing in the general fire by a side that has a
                          destroyer, removed by the others); the general fire is to come
    "defender_fire"       the attacker's general fire rolled: hits_on_defender pending and/or
                          defender_waiting chosen
    "general_casualties"  both general fires rolled: hits_on_attacker / hits_on_defender
    "end_of_round"        all chosen: removal, then (revised/classic) the lone-transport rule,
                          end checks and (revised) the end-of-round submerge decisions

  Sea hits have kinds: ``hits_on_*`` is an int (strike steps: sub hits; general steps:
  general hits that may hit anything) or a (sub, air, general) tuple as in sea_reference.
  Pending hits are assigned as the sea reference does (the owner's order of losses with
  maximal matching; all of a phase's pending hits on a side at once), with the air-vs-sub
  rule of the side that fired them (its destroyer among its standing and waiting units).
  Whether a side's subs struck this round (and so fire no more in the general fire) is read
  from the units in the battle (standing + waiting): a surprise strike never removes the
  destroyer that would have prevented it, so this is what it was at the start of the round.
  ``attacker_submerged`` / ``defender_submerged``: subs already submerged (survivors; the
  attacker's make an eliminated attacker a "retreat").  ``lone_transports`` (revised,
  classic): whether the attacker's units at the start of this round were transports only
  (default: read from its standing + waiting units; give it after a strike took the
  attacker's last non-transport unit).

Raid (``exact_raid_from``)::

    "air_battle"          1940-2e with interceptors: the air battle is to come ("start")
    "air_defender_fire"   the escorts and bombers fired: hits_on_defender pending (the
                          defender's fighters are alike: min(k, interceptors) are lost) or
                          defender_waiting chosen; the interceptors' fire is to come (all of
                          them fire)
    "air_casualties"      both fired: hits_on_attacker pending (the attacker's order of losses)
    "aa_fire"             the AA (built-in AA in 1942-2e / 1940-2e) is to fire at the bombers
                          ("start" where there is no air battle)
    "aa_casualties"       AA fired: hits_on_attacker = its hits, not yet taken (bombers in the
                          attacker's order of losses restricted to bombers)
    "bombing"             the bombers left roll damage (attacker_waiting: bombers shot and not
                          yet removed)

The TripleA steps at which a save can stand, per edition, and the position each maps to are
in ``docs/in-progress.md``.

A partial amphibious retreat made before the position is given by the units still
fighting: the landed ones as ``landing`` (they may not retreat, so none retreats again).

Refused (ValueError naming the step): a round-1-only step in round >= 2; hits pending at a
step that has none; ``bombard_hits`` in revised or after round 1; ``fired`` outside a general
fire, or more units than the side has; units waiting at a sea "start"; "defender_strike" in
classic; ``lone_transports`` outside revised / classic; air-battle steps outside 1940-2e or
without interceptors; AA steps of a raid where no AA fires; a raid round other than 1; a
low-luck AA hit count that low luck cannot roll.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from fractions import Fraction
from math import comb

import raid_reference as rr
import reference as lr
import sea_reference as sr

# ---------------------------------------------------------------------------
# Positions
# ---------------------------------------------------------------------------

LAND_STEPS = ("aa_fire", "aa_casualties", "bombard_fire", "bombard_casualties",
              "attacker_fire", "defender_fire", "general_casualties", "end_of_round")
ROUND_1_ONLY = ("aa_fire", "aa_casualties", "bombard_fire", "bombard_casualties")
SEA_STEPS = ("start", "attacker_strike", "defender_strike", "strike_casualties",
             "attacker_fire", "defender_fire", "general_casualties", "end_of_round")
RAID_STEPS = ("air_battle", "air_defender_fire", "air_casualties", "aa_fire", "aa_casualties",
              "bombing")


@dataclass(frozen=True)
class Position:
    """Where a battle stands (see the module docstring)."""

    round: int = 1
    step: str = "start"
    hits_on_attacker: int | tuple = 0
    hits_on_defender: int | tuple = 0
    bombard_hits: int = 0
    attacker_waiting: dict = field(default_factory=dict)
    defender_waiting: dict = field(default_factory=dict)
    attacker_submerged: int = 0
    defender_submerged: int = 0
    lone_transports: bool | None = None
    fired: dict = field(default_factory=dict)


def _position(start_round, position):
    if position is None:
        if isinstance(start_round, bool) or not isinstance(start_round, int) or start_round < 1:
            raise ValueError(f"start_round must be an int >= 1, not {start_round!r}")
        return Position(round=start_round)
    if not isinstance(position, Position):
        raise ValueError(f"position must be a Position, not {position!r}")
    if start_round not in (1, position.round):
        raise ValueError(f"start_round {start_round} and position round {position.round} "
                         "disagree; give the round in the position only")
    r = position.round
    if isinstance(r, bool) or not isinstance(r, int) or r < 1:
        raise ValueError(f"position round must be an int >= 1, not {r!r}")
    for name in ("bombard_hits", "attacker_submerged", "defender_submerged"):
        value = getattr(position, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"position {name} must be an int >= 0, not {value!r}")
    return position


def _pending_int(name, value, step):
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} at step {step!r} must be an int >= 0, not {value!r}")
    return value


def _only_at(position, name, steps):
    """A pending value `name` may stand only at `steps`."""
    value = getattr(position, name)
    if value not in (0, (0, 0, 0), None) and position.step not in steps:
        raise ValueError(f"{name} given at step {position.step!r}: there are no such hits "
                         f"pending there (only at {', '.join(steps)})")


def _fired_check(pos, firing_side_units, counts_of):
    """`fired` (the units of the side whose fire step it is that already rolled in it): only
    at "attacker_fire" / "defender_fire", and only units that side has."""
    if not pos.fired:
        return None
    if pos.step not in ("attacker_fire", "defender_fire"):
        raise ValueError(f"fired given at step {pos.step!r}: units that already rolled are "
                         "given only inside a general fire ('attacker_fire', 'defender_fire')")
    fired = counts_of(pos.fired)
    if any(f > n for f, n in zip(fired, firing_side_units, strict=True)):
        raise ValueError(f"fired {pos.fired} at step {pos.step!r}: more units than the firing "
                         "side has (standing + waiting)")
    return fired


def _plus(a, b):
    return tuple(x + y for x, y in zip(a, b, strict=True))


def _minus(a, b):
    out = tuple(x - y for x, y in zip(a, b, strict=True))
    assert min(out) >= 0
    return out


def _mix(weighted, size):
    """sum of p * vector over (p, vector)."""
    acc = [Fraction(0)] * size
    for p, vec in weighted:
        for i in range(size):
            acc[i] += p * vec[i]
    return acc


def _law_add(law, key, p):
    law[key] = law.get(key, 0) + p


# ---------------------------------------------------------------------------
# Land
# ---------------------------------------------------------------------------

def _aa_hits_law(setup, att, dfn):
    """Law of the round-1 AA hits (dice x value: one die per aircraft, or min(3 x AAA,
    aircraft) dice), or None when no AA fires (no AA or no aircraft)."""
    n_aa = dfn[lr._idx("aa")]
    n_air = sum(att[lr._idx(u)] for u in lr.AIRCRAFT)
    if n_aa == 0 or n_air == 0:
        return None
    value = lr._aa_value(setup.edition, setup.techs[lr.DEFENCE])
    dice = min(3 * n_aa, n_air) if lr.RULES[setup.edition].aa == lr.AA_THREE_PER_GUN else n_air
    if setup.dice == lr.LOW_LUCK:
        return lr._low_luck_law(dice * value, dice)
    return lr._binomial(dice, Fraction(value, 6))


def _aa_casualty_law(setup, att, hits):
    """Law of the attacker's units after `hits` AA hits are taken (see the docstring)."""
    edition = setup.edition
    n_air = sum(att[lr._idx(u)] for u in lr.AIRCRAFT)
    hits = min(hits, n_air)
    if lr.RULES[edition].aa != lr.AA_PER_PLANE:
        return {setup.lose_air(att, hits): Fraction(1)}  # the attacker chooses
    air = {u: att[lr._idx(u)] for u in lr.AIRCRAFT}
    pool = dict(air)
    base = list(att)
    if setup.dice == lr.LOW_LUCK:
        value = lr._aa_value(edition, setup.techs[lr.DEFENCE])
        if hits not in lr._low_luck_law(n_air * value, n_air):
            raise ValueError(f"low luck cannot roll {hits} AA hits on {n_air} aircraft "
                             f"(hit on {value})")
        sure, pool = lr._per_plane_low_luck_groups(air, value)
        for u, n in sure.items():
            base[lr._idx(u)] -= n
        hits -= sum(sure.values())
    # a uniformly random `hits`-subset of the aircraft in `pool`
    size = sum(pool.values())
    hits = min(hits, size)
    law = {}
    types = [u for u in lr.AIRCRAFT if pool[u]]

    def split(i, left):
        if i == len(types):
            if left == 0:
                yield ()
            return
        for k in range(min(left, pool[types[i]]) + 1):
            for rest in split(i + 1, left - k):
                yield (k, *rest)

    for ks in split(0, hits):
        ways = 1
        new = list(base)
        for u, k in zip(types, ks, strict=True):
            ways *= comb(pool[u], k)
            new[lr._idx(u)] -= k
        _law_add(law, tuple(new), Fraction(ways, comb(size, hits)))
    return law


class _LandFrom:
    """The rest of a land round, step by step, from a position; `node` of reference.py's
    exact solver takes over at the end of the round.

    Every method returns reference.py's value vector (outcomes, takes_territory, rounds,
    final counts); its rounds entry counts the general rounds STARTED in it (the caller
    adds the rounds before the position)."""

    def __init__(self, setup):
        self.s = setup
        self.solver = lr._ExactSolver(setup)
        rules = lr.RULES[setup.edition]
        self.opening = rules.bombard == lr.BOMBARD_OPENING  # revised: no return fire

    def mix(self, weighted):
        return _mix(weighted, lr.VECTOR_SIZE)

    def pre_round_check(self, att, dfn, dfn_wait):
        """AAA-only rule and end checks on the units in the battle at the start of a
        round: (outcome or None, dfn, dfn_wait)."""
        s = self.s
        both = _plus(dfn, dfn_wait)
        ruled = lr._aa_only_rule(s.edition, att, both)
        if ruled != both:  # only AAA left: they are lost, standing or waiting
            aa = lr._idx("aa")
            dfn = tuple(0 if i == aa else n for i, n in enumerate(dfn))
            dfn_wait = tuple(0 if i == aa else n for i, n in enumerate(dfn_wait))
        return s.classify(att, _plus(dfn, dfn_wait)), dfn, dfn_wait

    # -- round 1 only ----------------------------------------------------------------

    def aa_fire(self, att, dfn, dfn_wait):
        law = _aa_hits_law(self.s, att, _plus(dfn, dfn_wait))
        if law is None:
            return self.bombard_fire(att, dfn, dfn_wait)
        return self.mix((p, self.aa_casualties(att, dfn, dfn_wait, k)) for k, p in law.items())

    def aa_casualties(self, att, dfn, dfn_wait, hits):
        return self.mix((p, self.bombard_fire(att2, dfn, dfn_wait))
                        for att2, p in _aa_casualty_law(self.s, att, hits).items())

    def bombard_fire(self, att, dfn, dfn_wait):
        s = self.s
        if not s.ships:
            return self.attacker_fire(1, att, dfn, dfn_wait, 0)
        if not self.opening:  # reference.py checks before rolling the round-1 bombardment
            outcome, dfn, dfn_wait = self.pre_round_check(att, dfn, dfn_wait)
            if outcome is not None:
                return self.solver.terminal_vector(outcome, att, dfn)
        law = s.bombard_law(s.dfn_removable(dfn, lr.BOMBARD_TARGETS))
        return self.mix((p, self.bombard_casualties(att, dfn, dfn_wait, k))
                        for k, p in law.items())

    def bombard_casualties(self, att, dfn, dfn_wait, hits):
        if self.opening:  # removed at once, they never fire
            return self.attacker_fire(1, att, self.s.lose_to_bombard(dfn, hits), dfn_wait, 0)
        return self.attacker_fire(1, att, dfn, dfn_wait, hits)

    # -- every round -----------------------------------------------------------------

    def attacker_fire(self, r, att, dfn, dfn_wait, bombard_hits, fired=None, pending=0):
        """`fired`: attacker units that already rolled in this fire (their hits `pending`):
        the round is under way, no pre-round check."""
        s = self.s
        if fired is None:
            outcome, dfn, dfn_wait = self.pre_round_check(att, dfn, dfn_wait)
            if outcome is not None:
                return self.solver.terminal_vector(outcome, att, dfn)
        firing = att if fired is None else _minus(att, fired)
        law = s.hit_law(lr.ATTACK, firing, s.dfn_removable(dfn))
        vec = self.mix((p, self.defender_fire(r, att, dfn, dfn_wait, pending + h, bombard_hits))
                       for h, p in law.items())
        vec[lr.ROUNDS] += 1  # this round is fought
        return vec

    def defender_fire(self, r, att, dfn, dfn_wait, hits, bombard_hits, fired=None, pending=0):
        """`fired`: defender units that already rolled in this fire (their hits `pending`)."""
        s = self.s
        if bombard_hits:
            chosen = s.round1_dfn(dfn, hits, bombard_hits)  # the joint round-1 choice
        else:
            chosen = s.lose_dfn(dfn, hits)
        dfn_wait = _plus(dfn_wait, _minus(dfn, chosen))
        dfn = chosen
        firing = _plus(dfn, dfn_wait)  # its casualties fire back
        if fired is not None:
            firing = _minus(firing, fired)
        law = s.hit_law(lr.DEFENCE, firing, s.att_removable(att))
        return self.mix((p, self.general_casualties(r, att, dfn, pending + h))
                        for h, p in law.items())

    def general_casualties(self, r, att, dfn, hits):
        return self.end_of_round(r, self.s.lose_att(att, hits), dfn)

    def end_of_round(self, r, att, dfn):
        """Casualties removed: the AAA-only rule, then reference.py's node (end checks,
        retreat, the next rounds)."""
        dfn = lr._aa_only_rule(self.s.edition, att, dfn)
        return self.solver.node(att, dfn, r)

    def from_position(self, pos, att, dfn, dfn_wait, fired=None):
        step, r = pos.step, pos.round
        if step == "aa_fire":
            return self.aa_fire(att, dfn, dfn_wait)
        if step == "aa_casualties":
            return self.aa_casualties(att, dfn, dfn_wait, pos.hits_on_attacker)
        if step == "bombard_fire":
            return self.bombard_fire(att, dfn, dfn_wait)
        if step == "bombard_casualties":
            return self.bombard_casualties(att, dfn, dfn_wait, pos.hits_on_defender)
        if step == "attacker_fire":
            if r == 1 and self.opening:  # revised bombard casualties never fire back
                dfn_wait = tuple(0 for _ in dfn_wait)
            if fired is not None:
                return self.attacker_fire(r, att, dfn, dfn_wait, pos.bombard_hits, fired,
                                          pos.hits_on_defender)
            return self.attacker_fire(r, att, dfn, dfn_wait, pos.bombard_hits)
        if step == "defender_fire":
            if fired is not None:
                return self.defender_fire(r, att, dfn, dfn_wait, pos.hits_on_defender,
                                          pos.bombard_hits, fired, pos.hits_on_attacker)
            return self.defender_fire(r, att, dfn, dfn_wait, pos.hits_on_defender,
                                      pos.bombard_hits)
        if step == "general_casualties":
            return self.general_casualties(r, att, dfn, pos.hits_on_attacker)
        return self.end_of_round(r, att, dfn)


def _land_step(pos, edition, has_ships):
    """Validate a land position; return it with "start" resolved."""
    step = pos.step
    if step == "start":
        step = "aa_fire" if pos.round == 1 else "attacker_fire"
        pos = replace(pos, step=step)
    if step not in LAND_STEPS:
        raise ValueError(f"unknown land step {step!r}; expected one of {('start',) + LAND_STEPS}")
    if pos.round > 1 and step in ROUND_1_ONLY:
        raise ValueError(f"step {step!r} in round {pos.round}: AA fire and bombardment happen "
                         "in round 1 only")
    fire_steps = ("attacker_fire", "defender_fire") if pos.fired else ()
    _only_at(pos, "hits_on_attacker", ("aa_casualties", "general_casualties")
             + fire_steps[1:])
    _only_at(pos, "hits_on_defender", ("bombard_casualties", "defender_fire") + fire_steps[:1])
    _only_at(pos, "bombard_hits", ("attacker_fire", "defender_fire"))
    for name in ("hits_on_attacker", "hits_on_defender"):
        _pending_int(name, getattr(pos, name), step)
    if pos.bombard_hits and (pos.round > 1 or
                             lr.RULES[edition].bombard == lr.BOMBARD_OPENING):
        raise ValueError(f"bombard_hits at step {step!r} of round {pos.round}: pending "
                         "bombardment hits are carried into the general fire only in round 1 "
                         "of an edition whose bombardment casualties fire back (not revised)")
    fresh = step == "aa_fire" or (step == "attacker_fire" and pos.round > 1 and not pos.fired)
    if fresh and (pos.attacker_waiting or pos.defender_waiting):
        raise ValueError(f"units waiting to die at step {step!r} of round {pos.round}: a round "
                         "starts with none")
    if step == "bombard_casualties" and not has_ships:
        raise ValueError("step 'bombard_casualties' without bombarding ships")
    if pos.attacker_submerged or pos.defender_submerged or pos.lone_transports is not None:
        raise ValueError("submerged subs and lone transports are sea positions")
    return pos


def _land_setup(edition, attacker, defender, pos, options):
    landing = options.pop("landing", None)
    bombard = options.pop("bombard", None)
    if pos.round > 1 or pos.step not in ROUND_1_ONLY:
        bombard = None  # the ships fired in round 1 (or never): they do nothing any more
    setup = lr._Setup(edition, attacker, defender, landing=landing, bombard=bombard,
                      **_land_defaults(options))
    return setup, landing


def _land_defaults(options):
    defaults = dict(heavy_bombers=False, jets=False, combined_bombardment=False,
                    attacker_ool=None, defender_ool=None, keep_land=0, aa_last=False,
                    retreat_after=None, retreat_when_left=None, retreat_when_only_air=False,
                    strafe=None, retreat_below=None, attacker_tech=(), defender_tech=(),
                    dice=lr.STANDARD)
    unknown = set(options) - set(defaults)
    if unknown:
        raise TypeError(f"unknown keyword(s) {sorted(unknown)}")
    return {**defaults, **options}


def exact_land_from(edition, attacker, defender, *, start_round=1, position=None, **options):
    """Exact land battle from where it stands (see the module docstring); the keys of
    reference.exact_land."""
    pos = _position(start_round, position)
    lr._check_edition(edition)
    pos = _land_step(pos, edition, bool(options.get("bombard")))
    setup, landing = _land_setup(edition, attacker, defender, pos, dict(options))
    att_wait = lr._to_counts(pos.attacker_waiting, edition)
    dfn_wait = lr._to_counts(pos.defender_waiting, edition)
    fired = _fired_check(pos, setup.att0 if pos.step == "attacker_fire" else
                         _plus(setup.dfn0, dfn_wait), lambda d: lr._to_counts(d, edition))
    vec = _LandFrom(setup).from_position(pos, setup.att0, setup.dfn0, dfn_wait, fired)
    rounds_before = pos.round - 1 if pos.step in LAND_STEPS[:5] else pos.round
    return _land_result(edition, setup, att_wait, dfn_wait, vec, rounds_before,
                        {**setup.att_names, **dict.fromkeys(pos.attacker_waiting)},
                        {**setup.dfn_names, **dict.fromkeys(pos.defender_waiting)})


def _land_result(edition, setup, att_wait, dfn_wait, vec, rounds_before, att_names,
                 dfn_names):
    n = len(lr.UNITS)
    att_start = _plus(setup.att0, att_wait)
    dfn_start = _plus(setup.dfn0, dfn_wait)
    att_final = tuple(vec[lr.ATT_AT + i] for i in range(n))
    dfn_final = tuple(vec[lr.DFN_AT + i] for i in range(n))
    att_loss = Fraction(lr._ipc_loss(edition, att_start, att_final))
    dfn_loss = Fraction(lr._ipc_loss(edition, dfn_start, dfn_final))
    result = {name: vec[i] for i, name in enumerate(lr.ALL_OUTCOMES)}
    result.update({
        "takes_territory": vec[lr.TAKES],
        "attacker_ipc_loss": att_loss,
        "defender_ipc_loss": dfn_loss,
        "tuv_swing": dfn_loss - att_loss,
        "mean_rounds": rounds_before + vec[lr.ROUNDS],
        "attacker_survivors": {k: Fraction(v) for k, v in
                               lr._reported_survivors(edition, att_final, att_names).items()},
        "defender_survivors": {k: Fraction(v) for k, v in
                               lr._reported_survivors(edition, dfn_final, dfn_names).items()},
    })
    return result


# ---------------------------------------------------------------------------
# Sea
# ---------------------------------------------------------------------------

SEA_NO_HITS = sr.NO_HITS


def _sea_hits(name, value, step, strike):
    """Pending sea hits as a (sub, air, general) tuple; an int is sub hits in a strike
    step, general hits otherwise."""
    if isinstance(value, tuple):
        if len(value) != 3 or any(isinstance(v, bool) or not isinstance(v, int) or v < 0
                                  for v in value):
            raise ValueError(f"{name} at step {step!r} must be an int or a (sub, air, general) "
                             f"tuple of ints >= 0, not {value!r}")
        return value
    n = _pending_int(name, value, step)
    return (n, 0, 0) if strike else (0, 0, n)


def _killed(edition, before, after):
    """The units a casualty choice took (they wait to die), by hull: a two-hit unit sunk is
    counted in its healthy form (both forms fire alike and cost the same)."""
    two_hit = sr.TWO_HIT[edition]
    killed = []
    for i, u in enumerate(sr.UNITS):
        if u in two_hit:
            d = sr._idx(two_hit[u])
            killed.append(before[i] + before[d] - after[i] - after[d])
        elif u in two_hit.values():
            killed.append(0)
        else:
            killed.append(before[i] - after[i])
    return tuple(killed)


class _SeaFrom:
    """Whole rounds (a recursion over round-start states, as exact_sea's) and the rest of a
    round from a position, step by step.

    Value vectors: [0..5) OUTCOMES, [5] rounds, then final attacker and defender counts
    (submerged subs included) -- exact_sea's layout."""

    def __init__(self, setup):
        self.setup = setup
        self.edition = setup.edition
        self.model = sr.MODEL[setup.edition]
        self.n = len(sr.UNITS)
        self.size = len(sr.OUTCOMES) + 1 + 2 * self.n
        self.rounds = len(sr.OUTCOMES)
        self.memo = {}

    def terminal(self, outcome, state):
        vec = [Fraction(0)] * self.size
        vec[sr.OUTCOMES.index(outcome)] = Fraction(1)
        for side in (sr.A, sr.D):
            final = sr._final_counts(state, side)
            for i in range(self.n):
                vec[self.rounds + 1 + side * self.n + i] = Fraction(final[i])
        return vec

    # -- fire of one round ------------------------------------------------------------

    def strikes(self, all_a, all_d):
        """Does each side's subs strike this round (read from the units in the battle)?"""
        if self.model == "revised":  # every sub fires in the opening fire
            return (sr._has(all_a, "submarine"), sr._has(all_d, "submarine"))
        att = sr._has(all_a, "submarine") and not sr._has(all_d, "destroyer")
        if self.model == "classic":  # the attacker's sneak attack only
            return (att, False)
        return (att, sr._has(all_d, "submarine") and not sr._has(all_a, "destroyer"))

    def general_firing(self, side, units, struck):
        """The units of `side` (standing + waiting) that roll in the general fire."""
        if self.model == "revised" or struck:
            return sr._without_subs(units)
        return units

    def round_law(self, step, units, waiting, pending, submerged, fired=None):
        """Law of the state at the end of the round (casualties removed) from `step`.

        units / waiting / pending: (attacker, defender) pairs of standing counts, waiting
        counts and pending hit tuples; `fired`: units of the side firing at `step` that
        already rolled in it (a position only)."""
        setup, edition = self.setup, self.edition
        everyone = (_plus(units[0], waiting[0]), _plus(units[1], waiting[1]))
        struck = self.strikes(*everyone)
        law = {}

        def fire(side, firing, then):
            """Roll `firing` (of `side`) at the enemy's standing units; continue `then`."""
            enemy = 1 - side
            air = sr._air_may_hit_subs(edition, everyone[side])
            hit_law = sr._fire_law(setup, side, firing, units[enemy], air,
                                   sr._slot_count(edition, units[enemy]))
            for hits, p in hit_law.items():
                new = list(pending)
                new[enemy] = _plus(pending[enemy], hits)
                for state, q in self.round_law(then, units, waiting, tuple(new),
                                               submerged).items():
                    _law_add(law, state, p * q)
            return law

        def choose():
            """Both sides take their pending hits (the enemy's air-vs-sub rule)."""
            chosen = []
            for side in (sr.A, sr.D):
                air = sr._air_may_hit_subs(edition, everyone[1 - side])
                chosen.append(sr._take_casualties(setup, side, units[side], pending[side], air))
            return tuple(chosen)

        if step == "attacker_strike":
            if struck[sr.A]:
                return fire(sr.A, sr._only_subs(everyone[sr.A]), "defender_strike")
            step = "defender_strike"
        if step == "defender_strike":
            if struck[sr.D]:
                return fire(sr.D, sr._only_subs(everyone[sr.D]), "strike_casualties")
            step = "strike_casualties"
        if step == "strike_casualties":
            chosen = choose()
            waiting = tuple(_plus(waiting[side], _killed(edition, units[side], chosen[side]))
                            for side in (sr.A, sr.D))
            return self.round_law("attacker_fire", chosen, self.strike_removal(chosen, waiting),
                                  (SEA_NO_HITS, SEA_NO_HITS), submerged)
        if step in ("attacker_fire", "defender_fire"):
            side = sr.A if step == "attacker_fire" else sr.D
            firing = self.general_firing(side, everyone[side], struck[side])
            if fired is not None:
                firing = _minus(firing, fired)
            return fire(side, firing,
                        "defender_fire" if side == sr.A else "general_casualties")
        assert step == "general_casualties", step
        return {(choose(), submerged): Fraction(1)}

    def strike_removal(self, units, waiting):
        """The end of the strike phase: strike casualties leave (revised: a side that has a
        destroyer keeps them, firing in the general fire, until the end of the round)."""
        kept = []
        for side in (sr.A, sr.D):
            keep = self.model == "revised" and sr._has(_plus(units[side], waiting[side]),
                                                       "destroyer")
            kept.append(waiting[side] if keep else tuple(0 for _ in waiting[side]))
        return tuple(kept)

    # -- whole rounds ------------------------------------------------------------------

    def combine(self, weighted, q):
        if q == 1:
            raise AssertionError("non-terminal state cannot change; rules bug")
        acc = _mix(weighted, self.size)
        acc[self.rounds] += 1  # the round fought now (repeated while self-looping)
        return [x / (1 - q) for x in acc]

    def full_round(self, state):
        units, submerged = state
        no = tuple(0 for _ in sr.UNITS)
        return self.round_law("attacker_strike", units, (no, no), (SEA_NO_HITS, SEA_NO_HITS),
                              submerged)

    def start(self, state):
        """Value of a state at the start of a round."""
        if state not in self.memo:
            self.memo[state] = (self.start_v3(state) if self.model == "v3"
                                else self.start_revised_or_classic(state))
        return self.memo[state]

    def start_v3(self, state):
        checked = sr._defenceless_transports(self.setup, state)
        if checked != state:
            return self.start(checked)
        outcome = sr._end_check(self.setup, state)
        if outcome is not None:
            return self.terminal(outcome, state)
        after = sr._submerge(self.setup, state)
        outcome = ("retreat" if sr._withdrew_by_submerging(state, after)
                   else sr._end_check(self.setup, after))
        if outcome is not None:  # ends at the submerge decisions: this round not counted
            return self.terminal(outcome, after)
        law = self.full_round(after)
        q = law.pop(state, Fraction(0))
        return self.combine([(p, self.start(s)) for s, p in law.items()], q)

    def start_revised_or_classic(self, state):
        outcome = sr._end_check(self.setup, state)
        if outcome is not None:
            return self.terminal(outcome, state)
        lone = sr._lone_attacking_transports(state)
        weighted, q = [], Fraction(0)
        for after, p in self.full_round(state).items():
            done = self.round_over(after, lone)
            if isinstance(done, list):
                weighted.append((p, done))
            elif done == state:
                q += p  # nothing changed at all
            else:
                weighted.append((p, self.start(done)))
        return self.combine(weighted, q)

    def round_over(self, after, lone):
        """Revised / classic end of a round: a value vector if the battle ends here, else
        the state the next round starts from (after the end-of-round submerge)."""
        if lone and sr._has(after[0][sr.A], "transport"):
            return self.terminal("retreat", after)
        outcome = sr._end_check(self.setup, after)
        if outcome is not None:
            return self.terminal(outcome, after)
        nxt = sr._submerge(self.setup, after)
        if sr._withdrew_by_submerging(after, nxt):
            return self.terminal("retreat", nxt)
        return nxt

    def end_of_round(self, after, lone):
        """Value of a state whose round has just ended (casualties removed)."""
        if self.model == "v3":
            return self.start(after)
        done = self.round_over(after, lone)
        return done if isinstance(done, list) else self.start(done)

    def from_position(self, pos, units, waiting, pending, submerged, lone, fired=None):
        if pos.step == "start":
            return self.start((units, submerged))
        if pos.step == "end_of_round":
            return self.end_of_round((units, submerged), lone)
        if pos.step == "attacker_fire":  # strike casualties not yet removed leave now
            waiting = self.strike_removal(units, waiting)
        law = self.round_law(pos.step, units, waiting, pending, submerged, fired)
        return _mix([(p, self.end_of_round(s, lone)) for s, p in law.items()], self.size)


def _sea_position(pos, edition, units, waiting):
    """Validate a sea position; return (pending hit tuples, lone-transport flag)."""
    step = pos.step
    if step not in SEA_STEPS:
        raise ValueError(f"unknown sea step {step!r}; expected one of {SEA_STEPS}")
    model = sr.MODEL[edition]
    if step == "defender_strike" and model == "classic":
        raise ValueError("step 'defender_strike' in classic: defending subs have no sneak "
                         "attack (they fire with the other defenders)")
    fire_steps = ("attacker_fire", "defender_fire") if pos.fired else ()
    _only_at(pos, "hits_on_attacker", ("strike_casualties", "general_casualties")
             + fire_steps[1:])
    _only_at(pos, "hits_on_defender", ("defender_strike", "strike_casualties",
                                       "defender_fire", "general_casualties") + fire_steps[:1])
    if pos.bombard_hits:
        raise ValueError("bombard_hits is a land position")
    if step == "start" and (any(sum(w) for w in waiting)):
        raise ValueError("units waiting to die at step 'start': a round starts with none")
    strike = step in ("defender_strike", "strike_casualties")
    pending = (_sea_hits("hits_on_attacker", pos.hits_on_attacker, step, strike),
               _sea_hits("hits_on_defender", pos.hits_on_defender, step, strike))
    lone = pos.lone_transports
    if lone is None:
        everyone = _plus(units[0], waiting[0])
        lone = sr._lone_attacking_transports(((everyone, units[1]), (0, 0)))
    if model == "v3" and pos.lone_transports is not None:
        raise ValueError("lone_transports is a revised / classic rule")
    return pending, bool(lone)


def _sea_fired(pos, edition, units, waiting):
    side = 0 if pos.step == "attacker_fire" else 1
    return _fired_check(pos, _plus(units[side], waiting[side]),
                        lambda d: sr._to_counts(edition, d))


def exact_sea_from(edition, attacker, defender, *, start_round=1, position=None,
                   attacker_submerge="never", defender_submerge="never",
                   attacker_super_subs=False, defender_super_subs=False,
                   attacker_tech=(), defender_tech=(), dice=sr.STANDARD):
    """Exact sea battle from where it stands (see the module docstring); the keys of
    sea_reference.exact_sea."""
    pos = _position(start_round, position)
    setup = sr._make_setup(edition, attacker_submerge, defender_submerge,
                           attacker_super_subs, defender_super_subs,
                           attacker_tech, defender_tech, dice)
    units = (sr._to_counts(edition, attacker), sr._to_counts(edition, defender))
    waiting = (sr._to_counts(edition, pos.attacker_waiting),
               sr._to_counts(edition, pos.defender_waiting))
    pending, lone = _sea_position(pos, edition, units, waiting)
    submerged = (pos.attacker_submerged, pos.defender_submerged)
    fired = _sea_fired(pos, edition, units, waiting)
    solver = _SeaFrom(setup)
    vec = solver.from_position(pos, units, waiting, pending, submerged, lone, fired)
    rounds_before = pos.round - 1 if pos.step == "start" else pos.round
    n = len(sr.UNITS)
    start = [sr._add(_plus(units[s], waiting[s]), "submarine", submerged[s]) for s in (0, 1)]
    final = [tuple(vec[solver.rounds + 1 + s * n + i] for i in range(n)) for s in (0, 1)]
    att_loss = Fraction(sr._ipc_loss(edition, start[0], final[0]))
    dfn_loss = Fraction(sr._ipc_loss(edition, start[1], final[1]))
    att_names = sr._reported_names(edition, {**attacker, **pos.attacker_waiting})
    dfn_names = sr._reported_names(edition, {**defender, **pos.defender_waiting})
    result = {name: vec[i] for i, name in enumerate(sr.OUTCOMES)}
    result.update({
        "attacker_ipc_loss": att_loss,
        "defender_ipc_loss": dfn_loss,
        "tuv_swing": dfn_loss - att_loss,
        "mean_rounds": rounds_before + vec[solver.rounds],
        "attacker_survivors": {u: final[0][sr._idx(u)] for u in att_names},
        "defender_survivors": {u: final[1][sr._idx(u)] for u in dfn_names},
    })
    return result


# ---------------------------------------------------------------------------
# Raids
# ---------------------------------------------------------------------------

def _raid_outcomes(raid, step, att, icp, icp_waiting, pending_att, pending_dfn):
    """The raid's outcomes from `step`: a list of (probability, attacker counts, interceptors
    left, bombers over the target, damage law), as raid_reference._summary takes them.

    att: the attacker's standing counts (ATTACKER_UNITS order); icp / icp_waiting: the
    interceptors standing / chosen as casualties (they still fire in the air battle)."""
    if step == "air_battle":
        law = rr._hits_law(raid, raid.air_values(att), icp)
        return [(p * q, *rest) for hits, p in law.items()
                for q, *rest in _raid_outcomes(raid, "air_defender_fire", att, icp,
                                               icp_waiting, 0, hits)]
    if step == "air_defender_fire":
        lost = min(pending_dfn, icp)  # the defender's fighters are alike
        icp, icp_waiting = icp - lost, icp_waiting + lost
        law = rr._hits_law(raid, [raid.interceptor_value()] * (icp + icp_waiting), sum(att))
        return [(p * q, *rest) for hits, p in law.items()
                for q, *rest in _raid_outcomes(raid, "air_casualties", att, icp, icp_waiting,
                                               hits, 0)]
    if step == "air_casualties":
        return _raid_outcomes(raid, "aa_fire", rr._lose(raid, att, pending_att), icp, 0, 0, 0)
    if step == "aa_fire":
        n = rr._bombers_left(att)
        if not raid.aa_fires or n == 0:
            return _raid_outcomes(raid, "bombing", att, icp, 0, 0, 0)
        if raid.dice == rr.LOW_LUCK:
            law = rr._low_luck_law(n * raid.aa_value, n)
        else:
            law = rr._binomial(n, Fraction(raid.aa_value, 6))
        return [(p * q, *rest) for hits, p in law.items()
                for q, *rest in _raid_outcomes(raid, "aa_casualties", att, icp, 0, hits, 0)]
    if step == "aa_casualties":
        return _raid_outcomes(raid, "bombing", rr._lose(raid, att, pending_att, rr.BOMBERS),
                              icp, 0, 0, 0)
    assert step == "bombing", step
    return [(Fraction(1), att, icp, rr._bombers_left(att), rr._damage_law(raid, att))]


def _raid_setup(edition, attacker, defender, pos, options):
    """Validate a raid position; return (raid over the units at the position, standing
    attacker counts, standing interceptors, step)."""
    step = pos.step
    if step == "start":
        step = "air_battle" if edition == rr.E1940 and (defender or {}).get("fighter", 0) + \
            pos.defender_waiting.get("fighter", 0) else "aa_fire"
    if step not in RAID_STEPS:
        raise ValueError(f"unknown raid step {step!r}; expected one of {('start',) + RAID_STEPS}")
    if pos.round != 1:
        raise ValueError(f"a raid has one round, not round {pos.round}")
    _only_at(replace(pos, step=step), "hits_on_attacker", ("air_casualties", "aa_casualties"))
    _only_at(replace(pos, step=step), "hits_on_defender", ("air_defender_fire",
                                                           "air_casualties"))
    for name in ("hits_on_attacker", "hits_on_defender"):
        _pending_int(name, getattr(pos, name), step)
    if pos.bombard_hits or pos.attacker_submerged or pos.defender_submerged or \
            pos.lone_transports is not None or pos.fired:
        raise ValueError("bombard_hits, submerged subs, lone transports and fired are not "
                         "raid positions")
    everyone = {u: attacker.get(u, 0) + pos.attacker_waiting.get(u, 0)
                for u in {**attacker, **pos.attacker_waiting}}
    interceptors = {u: (defender or {}).get(u, 0) + pos.defender_waiting.get(u, 0)
                    for u in {**(defender or {}), **pos.defender_waiting}}
    raid = rr._Raid(edition, everyone, interceptors or None, **options)
    att = tuple(attacker.get(u, 0) for u in rr.ATTACKER_UNITS)
    for name in pos.attacker_waiting:
        if name not in rr.ATTACKER_UNITS:
            raise ValueError(f"unit {name!r} cannot raid in {edition}")
    icp = (defender or {}).get("fighter", 0)
    if step.startswith("air_") and (edition != rr.E1940 or raid.interceptors0 == 0):
        raise ValueError(f"step {step!r}: an air battle is fought only in 1940-2e raids with "
                         "interceptors")
    if step == "aa_casualties" and not raid.aa_fires:
        raise ValueError(f"step 'aa_casualties' in a {edition} raid without AA fire")
    return raid, att, icp, step


def exact_raid_from(edition, attacker, defender=None, *, position=None, target_value=None,
                    facility=None, aa=False, attacker_tech=(), defender_tech=(),
                    dice=rr.STANDARD, attacker_ool=None):
    """Exact raid from where it stands (see the module docstring); the keys of
    raid_reference.exact_raid."""
    pos = _position(1, position)
    options = dict(target_value=target_value, facility=facility, aa=aa,
                   attacker_tech=attacker_tech, defender_tech=defender_tech, dice=dice,
                   attacker_ool=attacker_ool)
    raid, att, icp, step = _raid_setup(edition, attacker, defender, pos, options)
    icp_waiting = pos.defender_waiting.get("fighter", 0)
    outcomes = _raid_outcomes(raid, step, att, icp, icp_waiting, pos.hits_on_attacker,
                              pos.hits_on_defender)
    return rr._summary(raid, outcomes)


# ---------------------------------------------------------------------------
# Die-by-die simulations from a position
# ---------------------------------------------------------------------------

def _sample_aa_casualties(rng, setup, att, hits):
    """Take `hits` AA hits: the attacker's choice, or random aircraft (low luck: TripleA's
    groups first)."""
    n_air = sum(att[lr._idx(u)] for u in lr.AIRCRAFT)
    hits = min(hits, n_air)
    if lr.RULES[setup.edition].aa != lr.AA_PER_PLANE:
        return setup.lose_air(att, hits)
    new = list(att)
    left = {u: att[lr._idx(u)] for u in lr.AIRCRAFT}
    if setup.dice == lr.LOW_LUCK:
        value = lr._aa_value(setup.edition, setup.techs[lr.DEFENCE])
        if hits not in lr._low_luck_law(n_air * value, n_air):
            raise ValueError(f"low luck cannot roll {hits} AA hits on {n_air} aircraft")
        size = 6 // value if 6 % value == 0 else 0
        for u in lr.AIRCRAFT:
            sure = left[u] // size if size else 0
            new[lr._idx(u)] -= sure
            left[u] -= sure * size if size else 0
            hits -= sure
    pool = [u for u in lr.AIRCRAFT for _ in range(left[u])]
    for u in rng.sample(pool, min(hits, len(pool))):
        new[lr._idx(u)] -= 1
    return tuple(new)


def _simulate_land_one(rng, setup, pos, solver, fired=None):
    """Fight one land battle from `pos`, die by die; return (outcome, final attacker,
    final defender, the last round fought, takes_territory).  `fired`: the units of the
    side firing at pos.step that rolled already (their hits are pos's pending hits)."""
    s = setup
    zero = tuple(0 for _ in lr.UNITS)
    opening = lr.RULES[s.edition].bombard == lr.BOMBARD_OPENING
    step, r = pos.step, pos.round
    att, dfn = s.att0, s.dfn0
    dfn_wait = lr._to_counts(pos.defender_waiting, s.edition)
    hits_a, hits_d, bombard_hits = pos.hits_on_attacker, pos.hits_on_defender, pos.bombard_hits
    withdrawn = None

    def over(outcome, rounds):
        final = att if withdrawn is None else _plus(att, withdrawn)
        return (outcome, final, dfn, rounds,
                outcome == "attacker_win" and lr._takes_territory(att))

    def check(att, dfn, dfn_wait):
        both = _plus(dfn, dfn_wait)
        if lr._aa_only_rule(s.edition, att, both) != both:
            aa = lr._idx("aa")
            dfn = tuple(0 if i == aa else n for i, n in enumerate(dfn))
            dfn_wait = tuple(0 if i == aa else n for i, n in enumerate(dfn_wait))
        return s.classify(att, _plus(dfn, dfn_wait)), dfn, dfn_wait

    if step == "aa_fire":
        att, step = lr._simulate_aa_fire(rng, s, att, _plus(dfn, dfn_wait)), "bombard_fire"
    if step == "aa_casualties":
        att, step = _sample_aa_casualties(rng, s, att, hits_a), "bombard_fire"
    if step == "bombard_fire":
        step = "attacker_fire"
        if s.ships:
            if not opening:
                outcome, dfn, dfn_wait = check(att, dfn, dfn_wait)
                if outcome is not None:
                    return over(outcome, 0)
            hits_d, step = lr._roll_bombard_hits(rng, s.ships, s.dice), "bombard_casualties"
    if step == "bombard_casualties":
        if opening:
            dfn = s.lose_to_bombard(dfn, hits_d)
        else:
            bombard_hits = hits_d
        step = "attacker_fire"
    if step == "attacker_fire" and r == 1 and opening:
        dfn_wait = zero
    while True:
        if step == "attacker_fire":
            if fired is None:
                outcome, dfn, dfn_wait = check(att, dfn, dfn_wait)
                if outcome is not None:
                    return over(outcome, r - 1)
                hits_d = lr._roll_hits(rng, s, lr.ATTACK, att)
            else:  # the round is under way: the rest of the attacker's fire
                hits_d += lr._roll_hits(rng, s, lr.ATTACK, _minus(att, fired))
                fired = None
            step = "defender_fire"
        if step == "defender_fire":
            if bombard_hits:
                chosen = s.round1_dfn(dfn, hits_d, bombard_hits)
            else:
                chosen = s.lose_dfn(dfn, hits_d)
            dfn_wait, dfn, bombard_hits = _plus(dfn_wait, _minus(dfn, chosen)), chosen, 0
            if fired is None:
                hits_a = lr._roll_hits(rng, s, lr.DEFENCE, _plus(dfn, dfn_wait))
            else:
                hits_a += lr._roll_hits(rng, s, lr.DEFENCE, _minus(_plus(dfn, dfn_wait), fired))
                fired = None
            step = "general_casualties"
        if step == "general_casualties":
            att = s.lose_att(att, hits_a)
        dfn_wait = zero  # the end of round r: casualties removed
        dfn = lr._aa_only_rule(s.edition, att, dfn)
        while True:
            outcome = s.classify(att, dfn)
            if outcome is not None:
                return over(outcome, r)
            if withdrawn is None:
                split = s.retreats(att, dfn, r,
                                   lambda a=att, d=dfn, k=r: solver.fight(a, d, k)[lr.WIN])
                if split is not None:
                    stay, go = split
                    if not lr._has_units(s.edition, stay):
                        return over("retreat", r)
                    att, withdrawn = stay, go  # a partial retreat: `stay` fights on alone
                    continue
            break
        r, step = r + 1, "attacker_fire"


def simulate_land_from(edition, attacker, defender, *, trials, seed, start_round=1,
                       position=None, **options):
    """Monte Carlo land battle from where it stands: the keys of exact_land_from, as
    floats (means)."""
    pos = _position(start_round, position)
    lr._check_edition(edition)
    pos = _land_step(pos, edition, bool(options.get("bombard")))
    setup, _ = _land_setup(edition, attacker, defender, pos, dict(options))
    if trials <= 0:
        raise ValueError("trials must be positive")
    att_wait = lr._to_counts(pos.attacker_waiting, edition)
    dfn_wait = lr._to_counts(pos.defender_waiting, edition)
    fired = _fired_check(pos, setup.att0 if pos.step == "attacker_fire" else
                         _plus(setup.dfn0, dfn_wait), lambda d: lr._to_counts(d, edition))
    solver = lr._ExactSolver(setup)
    rng = random.Random(seed)
    n = len(lr.UNITS)
    vec = [0] * lr.VECTOR_SIZE
    for _ in range(trials):
        outcome, att, dfn, rounds, takes = _simulate_land_one(rng, setup, pos, solver, fired)
        vec[lr.ALL_OUTCOMES.index(outcome)] += 1
        vec[lr.TAKES] += takes
        vec[lr.ROUNDS] += rounds
        for i in range(n):
            vec[lr.ATT_AT + i] += att[i]
            vec[lr.DFN_AT + i] += dfn[i]
    vec = [Fraction(x, trials) for x in vec]
    result = _land_result(edition, setup, att_wait, dfn_wait, vec, 0,
                          {**setup.att_names, **dict.fromkeys(pos.attacker_waiting)},
                          {**setup.dfn_names, **dict.fromkeys(pos.defender_waiting)})
    return _floats(result)


def _floats(result):
    return {k: ({u: float(x) for u, x in v.items()} if isinstance(v, dict) else float(v))
            for k, v in result.items()}


def _simulate_sea_one(rng, setup, pos, units, waiting, pending, submerged, lone,
                      fired=None):
    """Fight one sea battle from `pos`, die by die; return (outcome, final state, the last
    round fought)."""
    edition, model = setup.edition, sr.MODEL[setup.edition]
    zero = tuple(0 for _ in sr.UNITS)
    (att, dfn), (att_w, dfn_w), (hits_a, hits_d) = units, waiting, pending
    step, r = pos.step, pos.round
    struck = None
    if step == "attacker_fire":  # strike casualties not yet removed leave now
        if not (model == "revised" and sr._has(_plus(att, att_w), "destroyer")):
            att_w = zero
        if not (model == "revised" and sr._has(_plus(dfn, dfn_w), "destroyer")):
            dfn_w = zero
    while True:
        if step == "start":
            state = ((att, dfn), submerged)
            if model == "v3":
                state = sr._defenceless_transports(setup, state)
                outcome = sr._end_check(setup, state)
                if outcome is not None:
                    return outcome, state, r - 1
                before, state = state, sr._submerge(setup, state)
                if sr._withdrew_by_submerging(before, state):
                    return "retreat", state, r - 1
            outcome = sr._end_check(setup, state)
            if outcome is not None:
                return outcome, state, r - 1
            lone = model != "v3" and sr._lone_attacking_transports(state)
            (att, dfn), submerged = state
            att_w = dfn_w = zero
            hits_a = hits_d = sr.NO_HITS
            step, struck = "attacker_strike", None
        if struck is None:  # who strikes: from the units in the battle at the first step
            everyone_a, everyone_d = _plus(att, att_w), _plus(dfn, dfn_w)
            subs_a, subs_d = sr._has(everyone_a, "submarine"), sr._has(everyone_d, "submarine")
            if model == "revised":
                struck = (subs_a, subs_d)
            else:
                struck = (subs_a and not sr._has(everyone_d, "destroyer"),
                          model == "v3" and subs_d and not sr._has(everyone_a, "destroyer"))
        everyone_a, everyone_d = _plus(att, att_w), _plus(dfn, dfn_w)
        air_a = sr._air_may_hit_subs(edition, everyone_a)
        air_d = sr._air_may_hit_subs(edition, everyone_d)
        if step == "attacker_strike":
            if struck[0]:
                hits_d = _plus(hits_d, sr._roll(rng, setup, sr.A, sr._only_subs(everyone_a),
                                                dfn, air_a))
            step = "defender_strike"
        if step == "defender_strike":
            if struck[1]:
                hits_a = _plus(hits_a, sr._roll(rng, setup, sr.D, sr._only_subs(everyone_d),
                                                att, air_d))
            step = "strike_casualties"
        if step == "strike_casualties":
            att2 = sr._take_casualties(setup, sr.A, att, hits_a, air_d)
            dfn2 = sr._take_casualties(setup, sr.D, dfn, hits_d, air_a)
            keep_a = model == "revised" and sr._has(everyone_a, "destroyer")
            keep_d = model == "revised" and sr._has(everyone_d, "destroyer")
            att_w = _plus(att_w, _killed(edition, att, att2)) if keep_a else zero
            dfn_w = _plus(dfn_w, _killed(edition, dfn, dfn2)) if keep_d else zero
            att, dfn, hits_a, hits_d = att2, dfn2, sr.NO_HITS, sr.NO_HITS
            everyone_a, everyone_d = _plus(att, att_w), _plus(dfn, dfn_w)
            air_a = sr._air_may_hit_subs(edition, everyone_a)
            air_d = sr._air_may_hit_subs(edition, everyone_d)
            step = "attacker_fire"
        if step == "attacker_fire":
            firing = everyone_a
            if model == "revised" or struck[0]:
                firing = sr._without_subs(firing)
            if fired is not None:  # the rest of a fire under way
                firing, fired = _minus(firing, fired), None
            hits_d = _plus(hits_d, sr._roll(rng, setup, sr.A, firing, dfn, air_a))
            step = "defender_fire"
        if step == "defender_fire":
            firing = everyone_d
            if model == "revised" or struck[1]:
                firing = sr._without_subs(firing)
            if fired is not None:
                firing, fired = _minus(firing, fired), None
            hits_a = _plus(hits_a, sr._roll(rng, setup, sr.D, firing, att, air_d))
            step = "general_casualties"
        if step == "general_casualties":
            att = sr._take_casualties(setup, sr.A, att, hits_a, air_d)
            dfn = sr._take_casualties(setup, sr.D, dfn, hits_d, air_a)
        state = ((att, dfn), submerged)  # the end of round r
        if model != "v3":
            if lone and sr._has(att, "transport"):
                return "retreat", state, r
            outcome = sr._end_check(setup, state)
            if outcome is not None:
                return outcome, state, r
            after = sr._submerge(setup, state)
            if sr._withdrew_by_submerging(state, after):
                return "retreat", after, r
            (att, dfn), submerged = after
        r, step = r + 1, "start"


def simulate_sea_from(edition, attacker, defender, *, trials, seed, start_round=1,
                      position=None, attacker_submerge="never", defender_submerge="never",
                      attacker_super_subs=False, defender_super_subs=False,
                      attacker_tech=(), defender_tech=(), dice=sr.STANDARD):
    """Monte Carlo sea battle from where it stands: the keys of exact_sea_from, as floats."""
    pos = _position(start_round, position)
    setup = sr._make_setup(edition, attacker_submerge, defender_submerge,
                           attacker_super_subs, defender_super_subs,
                           attacker_tech, defender_tech, dice)
    units = (sr._to_counts(edition, attacker), sr._to_counts(edition, defender))
    waiting = (sr._to_counts(edition, pos.attacker_waiting),
               sr._to_counts(edition, pos.defender_waiting))
    pending, lone = _sea_position(pos, edition, units, waiting)
    fired = _sea_fired(pos, edition, units, waiting)
    submerged = (pos.attacker_submerged, pos.defender_submerged)
    if trials <= 0:
        raise ValueError("trials must be positive")
    rng = random.Random(seed)
    start = [sr._add(_plus(units[s], waiting[s]), "submarine", submerged[s]) for s in (0, 1)]
    names = [sr._reported_names(edition, {**attacker, **pos.attacker_waiting}),
             sr._reported_names(edition, {**defender, **pos.defender_waiting})]
    tally = dict.fromkeys(sr.OUTCOMES, 0)
    rounds = 0
    loss = [0, 0]
    survivors = [dict.fromkeys(names[0], 0), dict.fromkeys(names[1], 0)]
    for _ in range(trials):
        outcome, state, last = _simulate_sea_one(rng, setup, pos, units, waiting, pending,
                                                 submerged, lone, fired)
        tally[outcome] += 1
        rounds += last
        for s in (0, 1):
            final = sr._final_counts(state, s)
            loss[s] += sr._ipc_loss(edition, start[s], final)
            for u in names[s]:
                survivors[s][u] += sr._count(final, u)
    result = {k: v / trials for k, v in tally.items()}
    result.update({
        "attacker_ipc_loss": loss[0] / trials,
        "defender_ipc_loss": loss[1] / trials,
        "tuv_swing": (loss[1] - loss[0]) / trials,
        "mean_rounds": rounds / trials,
        "attacker_survivors": {u: v / trials for u, v in survivors[0].items()},
        "defender_survivors": {u: v / trials for u, v in survivors[1].items()},
    })
    return result


def _simulate_raid_one(rng, raid, step, att, icp, icp_waiting, hits_a, hits_d):
    """One raid from `step`, die by die: (attacker counts, interceptors left, bombers over
    the target, damage)."""
    if step == "air_battle":
        hits_d, step = rr._roll_hits(rng, raid, raid.air_values(att)), "air_defender_fire"
    if step == "air_defender_fire":
        lost = min(hits_d, icp)
        icp, icp_waiting = icp - lost, icp_waiting + lost
        hits_a = rr._roll_hits(rng, raid, [raid.interceptor_value()] * (icp + icp_waiting))
        step = "air_casualties"
    if step == "air_casualties":
        att, step = rr._lose(raid, att, hits_a), "aa_fire"
    if step == "aa_fire":
        n = rr._bombers_left(att)
        step = "bombing"
        if raid.aa_fires and n:
            hits_a, step = rr._roll_hits(rng, raid, [raid.aa_value] * n), "aa_casualties"
    if step == "aa_casualties":
        att = rr._lose(raid, att, hits_a, rr.BOMBERS)
    damage = 0
    for u, k in zip(rr.ATTACKER_UNITS, att, strict=True):
        if u in rr.BOMBERS:
            damage += sum(rr._roll_damage(rng, raid, u) for _ in range(k))
    cap = raid.total_cap()
    return att, icp, rr._bombers_left(att), damage if cap is None else min(damage, cap)


def simulate_raid_from(edition, attacker, defender=None, *, trials, seed, position=None,
                       target_value=None, facility=None, aa=False, attacker_tech=(),
                       defender_tech=(), dice=rr.STANDARD, attacker_ool=None):
    """Monte Carlo raid from where it stands: the keys of exact_raid_from, as floats."""
    pos = _position(1, position)
    options = dict(target_value=target_value, facility=facility, aa=aa,
                   attacker_tech=attacker_tech, defender_tech=defender_tech, dice=dice,
                   attacker_ool=attacker_ool)
    raid, att, icp, step = _raid_setup(edition, attacker, defender, pos, options)
    if trials <= 0:
        raise ValueError("trials must be positive")
    rng = random.Random(seed)
    outcomes = []
    for _ in range(trials):
        a, i, over, damage = _simulate_raid_one(rng, raid, step, att, icp,
                                                pos.defender_waiting.get("fighter", 0),
                                                pos.hits_on_attacker, pos.hits_on_defender)
        outcomes.append((Fraction(1, trials), a, i, over, {damage: Fraction(1)}))
    return _floats(rr._summary(raid, outcomes))
