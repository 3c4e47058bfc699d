"""Independent, slow, obviously-correct reference for STRATEGIC BOMBING RAIDS.

This module is deliberately self-contained: it does NOT import anything from
the ``battlecalc`` package (nor from the other references).  It hard-codes its
own unit tables and follows the raid rules step by step, so that the fast
implementation can be tested against it.  Readability is preferred over speed.

It provides two functions:

* ``exact_raid(edition, attacker, defender=None, *, target_value=None,
  facility=None, aa=False, attacker_tech=(), defender_tech=(),
  dice="standard", attacker_ool=None)`` -- the exact result in
  ``fractions.Fraction``, by enumerating every outcome of each step (air
  battle, AA fire, damage dice);
* ``simulate_raid(edition, attacker, defender=None, *, trials, seed, ...same
  options...)`` -- a die-by-die Monte Carlo simulation with
  ``random.Random(seed)`` and one ``rng.randint`` per die.

Both return a dict with the keys

* ``damage_distribution`` -- dict damage -> probability (exact: Fraction;
  simulation: relative frequency), the law of the IPC damage dealt;
* ``expected_damage``;
* ``attacker_ipc_loss`` -- bombers and escorts lost, at cost;
* ``defender_ipc_loss`` -- interceptors lost, at cost;
* ``tuv_swing`` -- defender_ipc_loss - attacker_ipc_loss (units only; the
  damage is reported separately);
* ``attacker_survivors`` / ``defender_survivors`` -- dict unit -> expected
  count left, for every unit named in the input;
* ``bombers_over_target`` -- expected number of bombers that roll damage.

Units and costs
===============

    edition    attacker units (cost)                                 defender units
    classic    bomber (15)                                           -
    revised    bomber (15)                                           -
    aa50       bomber (12)                                           -
    1942-2e    bomber (12)                                           -
    1940-2e    bomber (12, strategic), tactical_bomber (11),         fighter (10, interceptors)
               fighter (10, escorts)

Fighters are refused (ValueError) in every edition but 1940-2e (no air battle:
the optional 1942-2e air battle is not modelled).  A raid needs at least one
bomber (strategic or tactical).

The steps
=========

1. **Air battle** (1940-2e only, and only if the defender has interceptors):
   one round.  Every escort fighter, strategic bomber and tactical bomber
   rolls one die at 1 (a fighter with ``jets``: 2); every interceptor rolls one
   die at 1 (``jets``: 2).  Heavy bombers do not change the air battle (one die
   each).  Both sides fire simultaneously; the attacker's hits fall on
   interceptors, the defender's on escorts and bombers, which the attacker
   chooses by its order of losses (default: cheapest first -- fighter 10,
   tactical_bomber 11, bomber 12; ``attacker_ool`` changes it).  Escorts then
   leave: they are survivors and do nothing more.
2. **AA fire** at every bomber left, one die each, hit on 1 (2 with ``radar``
   in the defender's technologies; aa50, 1942-2e, 1940-2e):

   * classic, revised, aa50: only if ``aa=True`` (the territory has an AA
     gun);
   * 1942-2e, 1940-2e: always (the facility's built-in AA; ``aa`` is
     ignored; AAA units never fire at raids).

   The hits take bombers in the attacker's order of losses restricted to
   bombers (only 1940-2e has two bomber types; in revised and aa50 the AA
   dice fall on their own bombers, which is the same thing for one type).
3. **Damage**, one roll per bomber left:

   * classic: 1d6 (``heavy_bombers``: 3d6 added); no cap at all;
   * revised: 1d6 (``heavy_bombers``: 2d6 added), **each bomber's damage capped
     at ``target_value``**; no total cap;
   * aa50, 1942-2e: 1d6 (``heavy_bombers``: the best of 2 dice;
     ``lhtr_heavy_bombers``: the best of 2 dice + 1); the **total capped at
     2 x ``target_value``**;
   * 1940-2e: strategic bomber 1d6 + 2 (``heavy_bombers``: the best of 2 dice
     + 2), tactical bomber 1d6 (bases only); the **total capped at the
     facility's maximum damage**: 20 for ``facility="major"``, 6 for
     ``"minor"``, ``"airbase"``, ``"navalbase"``.  Tactical bombers may not
     raid an industrial complex (ValueError).  The facility starts
     undamaged.

   The defender's treasury is not modelled (no cap by IPCs on hand).

``target_value`` (the territory's production value, an int >= 0) is required
in revised, aa50 and 1942-2e, and ignored in classic and 1940-2e;
``facility`` is required in 1940-2e and refused elsewhere.

Low luck (``dice="low_luck"``)
==============================

Following TripleA's Low Luck:

* air battle: each side's fire is one group: strength = the sum of its
  units' values; strength // 6 sure hits and one die for the remainder (a
  hit with probability remainder / 6);
* AA fire: strength = bombers fired at x AA value, the same rule;
* damage: every d6 of the damage roll becomes a 2-sided die plus 2, i.e. 3
  or 4 with probability 1/2 each (TripleA's "Low Luck for Bombing and
  Territory Damage": a die of 6 sides has its luck reduced by 2/3: 1d2 + 2);
  bonuses (+2, +1) and caps apply after.

Orders of losses
================

``attacker_ool``: None or ``"cheapest"`` (the default above), a comma list of
units to lose first (``"bomber,fighter"``), or TripleA's notation
(``"*^fighter;1^bomber"``: sections claimed from the right, as in
tests/reference.py); unnamed units follow in the default order.
"""

from __future__ import annotations

import random
from fractions import Fraction
from math import comb

# ---------------------------------------------------------------------------
# Hard-coded rules data
# ---------------------------------------------------------------------------

CLASSIC = "classic"
REVISED = "revised"
AA50 = "aa50"
E1942 = "1942-2e"
E1940 = "1940-2e"
EDITIONS = (CLASSIC, REVISED, AA50, E1942, E1940)

# Fixed order of the count tuples (attacker): the default order of losses too.
ATTACKER_UNITS = ("fighter", "tactical_bomber", "bomber")
BOMBERS = ("tactical_bomber", "bomber")

COST = {
    CLASSIC: {"bomber": 15},
    REVISED: {"bomber": 15},
    AA50: {"bomber": 12},
    E1942: {"bomber": 12},
    E1940: {"fighter": 10, "tactical_bomber": 11, "bomber": 12},
}
INTERCEPTOR_COST = 10  # 1940-2e fighter

FACILITY_CAP = {"major": 20, "minor": 6, "airbase": 6, "navalbase": 6}
BASES = ("airbase", "navalbase")

TECHS = {
    CLASSIC: {"heavy_bombers", "jets", "super_subs"},
    REVISED: {"heavy_bombers", "jets", "super_subs", "combined_bombardment"},
    AA50: {"heavy_bombers", "lhtr_heavy_bombers", "jets", "super_subs", "radar",
           "improved_artillery"},
    E1942: {"heavy_bombers", "lhtr_heavy_bombers", "jets", "super_subs", "radar",
            "improved_artillery"},
    E1940: {"heavy_bombers", "jets", "super_subs", "radar", "improved_artillery"},
}

STANDARD = "standard"
LOW_LUCK = "low_luck"

SIXTH = Fraction(1, 6)


# ---------------------------------------------------------------------------
# Input checks and small rule helpers
# ---------------------------------------------------------------------------

class _Raid:
    """Everything fixed about one raid.  Read-only after __init__."""

    def __init__(self, edition, attacker, defender, *, target_value, facility, aa,
                 attacker_tech, defender_tech, dice, attacker_ool):
        if edition not in EDITIONS:
            raise ValueError(f"unknown edition {edition!r}; expected one of {EDITIONS}")
        self.edition = edition
        defender = defender or {}
        for name, n in {**attacker, **defender}.items():
            if not isinstance(n, int) or isinstance(n, bool) or n < 0:
                raise ValueError(f"bad count {n!r} for unit {name!r}")
        for name in attacker:
            if name not in COST[edition]:
                if name == "fighter":
                    raise ValueError(f"no air battle in {edition}: fighters cannot escort")
                raise ValueError(f"unit {name!r} cannot raid in {edition}")
        for name in defender:
            if name != "fighter" or edition != E1940:
                raise ValueError(f"the defender of a raid in {edition} has no {name!r}")
        self.att0 = tuple(attacker.get(u, 0) for u in ATTACKER_UNITS)
        self.interceptors0 = defender.get("fighter", 0)
        self.att_names = list(attacker)
        self.dfn_names = list(defender)
        if sum(attacker.get(u, 0) for u in BOMBERS) == 0:
            raise ValueError("a raid needs at least one bomber")

        self.techs = (self._techs(attacker_tech), self._techs(defender_tech))
        if dice not in (STANDARD, LOW_LUCK):
            raise ValueError(f"unknown dice {dice!r}")
        self.dice = dice

        if edition in (REVISED, AA50, E1942):
            if isinstance(target_value, bool) or not isinstance(target_value, int) \
                    or target_value < 0:
                raise ValueError(f"{edition} raids need target_value, an int >= 0")
        self.target_value = target_value
        if edition == E1940:
            if facility not in FACILITY_CAP:
                raise ValueError(f"1940-2e raids need facility, one of {sorted(FACILITY_CAP)}")
            if attacker.get("tactical_bomber", 0) and facility not in BASES:
                raise ValueError("tactical bombers raid air and naval bases only")
        elif facility is not None:
            raise ValueError(f"facility is a 1940-2e option, not {edition}")
        self.facility = facility
        self.aa_fires = bool(aa) if edition in (CLASSIC, REVISED, AA50) else True
        self.aa_value = 2 if "radar" in self.techs[1] else 1
        self.sequence = _attacker_sequence(attacker_ool, self.att0)

    def _techs(self, names):
        if isinstance(names, str):
            names = [names]
        for name in names or ():
            if name not in TECHS[self.edition]:
                raise ValueError(f"technology {name!r} does not exist in {self.edition}")
        return frozenset(names or ())

    # -- the air battle -------------------------------------------------------

    def air_values(self, att):
        """Die values of the attacker's units in the air battle (one die each)."""
        fighter = 2 if "jets" in self.techs[0] else 1
        values = []
        for u, n in zip(ATTACKER_UNITS, att, strict=True):
            values += [fighter if u == "fighter" else 1] * n
        return values

    def interceptor_value(self):
        return 2 if "jets" in self.techs[1] else 1

    # -- damage ----------------------------------------------------------------

    def damage_dice(self, unit):
        """(number of d6, combine "sum" or "best", bonus) of one bomber's damage roll."""
        heavy = "heavy_bombers" in self.techs[0]
        lhtr = "lhtr_heavy_bombers" in self.techs[0]
        if self.edition == CLASSIC:
            return (3 if heavy else 1), "sum", 0
        if self.edition == REVISED:
            return (2 if heavy else 1), "sum", 0
        if self.edition in (AA50, E1942):
            if lhtr:
                return 2, "best", 1
            return (2 if heavy else 1), "best", 0
        if unit == "tactical_bomber":
            return 1, "sum", 0
        return (2 if heavy else 1), "best", 2

    def per_bomber_cap(self):
        return self.target_value if self.edition == REVISED else None

    def total_cap(self):
        if self.edition in (AA50, E1942):
            return 2 * self.target_value
        if self.edition == E1940:
            return FACILITY_CAP[self.facility]
        return None

    def die_faces(self):
        """The faces of one damage d6: 1..6, or 3..4 in low luck (1d2 + 2)."""
        return (3, 4) if self.dice == LOW_LUCK else (1, 2, 3, 4, 5, 6)


def _parse_ool(spec):
    """None (default order) or a tuple of (count or None for '*', unit) sections."""
    if spec is None or spec.strip().lower() == "cheapest":
        return None
    text = spec.strip().lower()
    sections = []
    if "^" in text or ";" in text:
        for part in (p.strip() for p in text.split(";")):
            if not part:
                continue
            count, _, unit = part.partition("^")
            if count.strip() == "*":
                sections.append((None, unit.strip()))
            elif count.strip().isdigit():
                sections.append((int(count), unit.strip()))
            else:
                raise ValueError(f"bad order-of-losses section {part!r}")
    else:
        sections = [(None, p.strip()) for p in text.split(",") if p.strip()]
    for _, unit in sections:
        if unit not in ATTACKER_UNITS:
            raise ValueError(f"unknown unit {unit!r} in order of losses {spec!r}")
    if not sections:
        raise ValueError(f"empty order of losses {spec!r}")
    return tuple(sections)


def _attacker_sequence(spec, att0):
    """The attacker's casualties in order, one name per unit of the start force.

    Sections claim their counts from the right; unclaimed units follow in the
    default order (fighter, tactical_bomber, bomber: cheapest first).  As
    units are lost, the sequence is walked from its first unit still alive:
    hits take the first units of it that are still present.
    """
    left = dict(zip(ATTACKER_UNITS, att0, strict=True))
    sections = _parse_ool(spec) or ()
    claims = [0] * len(sections)
    for i in reversed(range(len(sections))):
        n, unit = sections[i]
        claims[i] = left[unit] if n is None else min(n, left[unit])
        left[unit] -= claims[i]
    sequence = [unit for (_, unit), k in zip(sections, claims, strict=True) for _ in range(k)]
    return tuple(sequence + [u for u in ATTACKER_UNITS for _ in range(left[u])])


def _lose(raid, att, hits, eligible=ATTACKER_UNITS):
    """Remove `hits` units of `att` (counts in ATTACKER_UNITS order), the first
    eligible ones of the sequence that are still present; extra hits are lost.

    The sequence lists the start force; a unit of the sequence is "present"
    while fewer of its type have been lost than the sequence holds before it.
    """
    lost = dict.fromkeys(ATTACKER_UNITS, 0)
    for u, n0 in zip(ATTACKER_UNITS, raid.att0, strict=True):
        lost[u] = n0 - att[ATTACKER_UNITS.index(u)]
    seen = dict.fromkeys(ATTACKER_UNITS, 0)
    new = list(att)
    for u in raid.sequence:
        if hits == 0:
            break
        seen[u] += 1
        if seen[u] <= lost[u] or u not in eligible:
            continue  # already lost earlier, or not hittable here
        new[ATTACKER_UNITS.index(u)] -= 1
        hits -= 1
    return tuple(new)


def _bombers_left(att):
    return sum(n for u, n in zip(ATTACKER_UNITS, att, strict=True) if u in BOMBERS)


# ---------------------------------------------------------------------------
# Exact laws
# ---------------------------------------------------------------------------

def _binomial(n, p):
    return {k: comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)}


def _low_luck_law(strength, cap):
    sure, remainder = divmod(strength, 6)
    law = {}
    for hits, p in ((sure, 1 - Fraction(remainder, 6)), (sure + 1, Fraction(remainder, 6))):
        if p:
            law[min(hits, cap)] = law.get(min(hits, cap), 0) + p
    return law


def _hits_law(raid, values, cap):
    """Law of the hits of one die per entry of `values` (die values), capped."""
    if raid.dice == LOW_LUCK:
        return _low_luck_law(sum(values), cap)
    law = {0: Fraction(1)}
    for v in values:
        new = {}
        for h, p in law.items():
            for hit, q in ((0, 1 - Fraction(v, 6)), (1, Fraction(v, 6))):
                if q:
                    key = min(h + hit, cap)
                    new[key] = new.get(key, 0) + p * q
        law = new
    return law


def _convolve(a, b):
    out = {}
    for x, p in a.items():
        for y, q in b.items():
            out[x + y] = out.get(x + y, 0) + p * q
    return out


def _bomber_damage_law(raid, unit):
    """Law of one bomber's damage (before the total cap)."""
    dice, combine, bonus = raid.damage_dice(unit)
    faces = raid.die_faces()
    die = {f: Fraction(1, len(faces)) for f in faces}
    law = {0: Fraction(1)} if combine == "sum" else {}
    if combine == "sum":
        for _ in range(dice):
            law = _convolve(law, die)
    else:
        for roll in _all_rolls(faces, dice):
            best = max(roll)
            law[best] = law.get(best, 0) + Fraction(1, len(faces) ** dice)
    law = {d + bonus: p for d, p in law.items()}
    return _capped(law, raid.per_bomber_cap())


def _capped(law, cap):
    """The law of min(X, cap) for X with law `law` (cap None: no cap)."""
    if cap is None:
        return law
    capped = {}
    for d, p in law.items():
        capped[min(d, cap)] = capped.get(min(d, cap), 0) + p
    return capped


def _all_rolls(faces, dice):
    rolls = [()]
    for _ in range(dice):
        rolls = [r + (f,) for r in rolls for f in faces]
    return rolls


def _damage_law(raid, att):
    """Law of the raid's damage from the bombers in `att` (total cap applied)."""
    law = {0: Fraction(1)}
    for u, n in zip(ATTACKER_UNITS, att, strict=True):
        if u in BOMBERS:
            for _ in range(n):
                law = _convolve(law, _bomber_damage_law(raid, u))
    return _capped(law, raid.total_cap())


def _air_battle_law(raid):
    """Law of (attacker counts, interceptors left) after the air battle."""
    att, icp = raid.att0, raid.interceptors0
    if icp == 0:
        return {(att, icp): Fraction(1)}
    att_hits = _hits_law(raid, raid.air_values(att), icp)
    dfn_hits = _hits_law(raid, [raid.interceptor_value()] * icp, sum(att))
    law = {}
    for ha, pa in att_hits.items():
        for hd, pd in dfn_hits.items():
            key = (_lose(raid, att, hd), icp - ha)
            law[key] = law.get(key, 0) + pa * pd
    return law


def _aa_law(raid, att):
    """Law of the attacker counts after AA fire at its bombers."""
    n = _bombers_left(att)
    if not raid.aa_fires or n == 0:
        return {att: Fraction(1)}
    if raid.dice == LOW_LUCK:
        hits = _low_luck_law(n * raid.aa_value, n)
    else:
        hits = _binomial(n, Fraction(raid.aa_value, 6))
    law = {}
    for h, p in hits.items():
        key = _lose(raid, att, h, BOMBERS)
        law[key] = law.get(key, 0) + p
    return law


def _summary(raid, outcomes):
    """Means from a list of (probability, final attacker counts, interceptors
    left, bombers over the target, damage law given that)."""
    damage = {}
    att_surv = dict.fromkeys(ATTACKER_UNITS, Fraction(0))
    icp_left = Fraction(0)
    over = Fraction(0)
    for p, att, icp, n_over, law in outcomes:
        for d, q in law.items():
            damage[d] = damage.get(d, 0) + p * q
        for u, n in zip(ATTACKER_UNITS, att, strict=True):
            att_surv[u] += p * n
        icp_left += p * icp
        over += p * n_over
    att_loss = sum(COST[raid.edition][u] * (n0 - att_surv[u])
                   for u, n0 in zip(ATTACKER_UNITS, raid.att0, strict=True) if n0)
    dfn_loss = INTERCEPTOR_COST * (raid.interceptors0 - icp_left)
    damage = {d: p for d, p in sorted(damage.items()) if p}
    return {
        "damage_distribution": damage,
        "expected_damage": sum(d * p for d, p in damage.items()),
        "attacker_ipc_loss": Fraction(att_loss),
        "defender_ipc_loss": Fraction(dfn_loss),
        "tuv_swing": Fraction(dfn_loss - att_loss),
        "attacker_survivors": {u: att_surv[u] for u in raid.att_names},
        "defender_survivors": {u: icp_left for u in raid.dfn_names},
        "bombers_over_target": over,
    }


def exact_raid(edition, attacker, defender=None, *, target_value=None, facility=None,
               aa=False, attacker_tech=(), defender_tech=(), dice=STANDARD,
               attacker_ool=None):
    """Exact raid result (see the module docstring for the keys)."""
    raid = _Raid(edition, attacker, defender, target_value=target_value, facility=facility,
                 aa=aa, attacker_tech=attacker_tech, defender_tech=defender_tech, dice=dice,
                 attacker_ool=attacker_ool)
    outcomes = []
    for (att1, icp), p1 in _air_battle_law(raid).items():
        for att2, p2 in _aa_law(raid, att1).items():
            outcomes.append((p1 * p2, att2, icp, _bombers_left(att2), _damage_law(raid, att2)))
    return _summary(raid, outcomes)


# ---------------------------------------------------------------------------
# Die-by-die simulation
# ---------------------------------------------------------------------------

def _roll_hits(rng, raid, values):
    """One die per entry of `values` (low luck: their sum, one die for the rest)."""
    if raid.dice == LOW_LUCK:
        sure, remainder = divmod(sum(values), 6)
        return sure + (remainder > 0 and rng.randint(1, 6) <= remainder)
    return sum(rng.randint(1, 6) <= v for v in values)


def _roll_damage(rng, raid, unit):
    dice, combine, bonus = raid.damage_dice(unit)
    rolls = []
    for _ in range(dice):
        if raid.dice == LOW_LUCK:
            rolls.append(rng.randint(1, 2) + 2)
        else:
            rolls.append(rng.randint(1, 6))
    damage = (sum(rolls) if combine == "sum" else max(rolls)) + bonus
    cap = raid.per_bomber_cap()
    return damage if cap is None else min(damage, cap)


def _simulate_one(rng, raid):
    att, icp = raid.att0, raid.interceptors0
    if icp:
        att_hits = _roll_hits(rng, raid, raid.air_values(att))
        dfn_hits = _roll_hits(rng, raid, [raid.interceptor_value()] * icp)
        att, icp = _lose(raid, att, dfn_hits), max(0, icp - att_hits)
    n = _bombers_left(att)
    if raid.aa_fires and n:
        att = _lose(raid, att, _roll_hits(rng, raid, [raid.aa_value] * n), BOMBERS)
    damage = 0
    for u, k in zip(ATTACKER_UNITS, att, strict=True):
        if u in BOMBERS:
            damage += sum(_roll_damage(rng, raid, u) for _ in range(k))
    cap = raid.total_cap()
    if cap is not None:
        damage = min(damage, cap)
    return att, icp, _bombers_left(att), damage


def simulate_raid(edition, attacker, defender=None, *, trials, seed, target_value=None,
                  facility=None, aa=False, attacker_tech=(), defender_tech=(), dice=STANDARD,
                  attacker_ool=None):
    """Monte Carlo raid: the keys of exact_raid, as floats (frequencies and means)."""
    raid = _Raid(edition, attacker, defender, target_value=target_value, facility=facility,
                 aa=aa, attacker_tech=attacker_tech, defender_tech=defender_tech, dice=dice,
                 attacker_ool=attacker_ool)
    if trials <= 0:
        raise ValueError("trials must be positive")
    rng = random.Random(seed)
    outcomes = []
    for _ in range(trials):
        att, icp, n_over, damage = _simulate_one(rng, raid)
        outcomes.append((Fraction(1, trials), att, icp, n_over, {damage: Fraction(1)}))
    result = _summary(raid, outcomes)
    return {k: ({u: float(x) for u, x in v.items()} if isinstance(v, dict) else float(v))
            for k, v in result.items()}


if __name__ == "__main__":
    examples = [
        ("revised", {"bomber": 1}, None, {"target_value": 2, "aa": True}),
        ("1940-2e", {"fighter": 1, "bomber": 1}, {"fighter": 1}, {"facility": "major"}),
        ("aa50", {"bomber": 3}, None, {"target_value": 3, "aa": True,
                                       "attacker_tech": ("heavy_bombers",)}),
        ("classic", {"bomber": 2}, None, {"aa": True, "dice": "low_luck"}),
    ]
    for edition, att, dfn, opts in examples:
        ex = exact_raid(edition, att, dfn, **opts)
        mc = simulate_raid(edition, att, dfn, trials=20000, seed=1, **opts)
        print(f"{edition}: {att} v {dfn} {opts}")
        for key in ("expected_damage", "attacker_ipc_loss", "defender_ipc_loss",
                    "bombers_over_target"):
            print(f"  {key:20s} exact {float(ex[key]):8.4f} ({ex[key]})  mc {mc[key]:8.4f}")
