"""Compile a validated battle into the flat per-state tables both solvers share.

The central idea: with a fixed order of losses, a side's whole future is a sequence of
casualty steps, so its state is "how many hits it has absorbed" (an index into that
sequence).  For every state we precompute the distribution of hits the remaining force
scores in one round of fire.  The exact solver propagates probability through these tables;
the Monte Carlo kernel samples them with one uniform per side and round.  One piece of code
(this module) turns the rules into numbers, so the two methods cannot drift apart.

Round-1 AA fire changes *which* aircraft the attacker has before any loss is taken, so the
attacker has one casualty sequence ("profile") per distinct AA outcome, each with its
probability.  Flat state index = profile offset + casualty steps taken.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass, field

import numpy as np

from .errors import BattleInputError
from .orders import LossOrder, casualty_steps, default_loss_order  # noqa: F401
from .rules import Ruleset, Unit

# Largest table the compiler builds (states x possible hit counts), to keep memory sane.
MAX_TABLE_CELLS = 40_000_000


@dataclass(frozen=True)
class SideTables:
    """Per-state tables of one side.  S = flat states, H = most hits in one round, U = unit types.

    profile_prob[P]   probability that the side starts the first round in profile p
    offset[P]         flat index of profile p's state 0 (no casualty steps taken)
    length[P]         casualty steps in profile p; state offset+length = nothing left
    pmf[S, H+1]       probability of scoring h hits in one round of general fire
    cdf[S, H+1]       running sum of pmf, last used entry forced to exactly 1
    max_hits[S]       largest h with pmf > 0
    can_hit[S]        the force can score a hit at all
    alive[S]          the side still has a unit that counts
    defenceless[S]    everything left is defenceless (lost without dice if the enemy can hit)
    has_land[S]       a land unit is left (needed to take a territory)
    ipc_lost[S]       IPC value of the units lost, in IPC
    survivors[S, U]   units of each type left
    """

    profile_prob: np.ndarray
    offset: np.ndarray
    length: np.ndarray
    pmf: np.ndarray
    cdf: np.ndarray
    max_hits: np.ndarray
    can_hit: np.ndarray
    alive: np.ndarray
    defenceless: np.ndarray
    has_land: np.ndarray
    ipc_lost: np.ndarray
    survivors: np.ndarray
    unit_names: tuple[str, ...] = field(default=())

    @property
    def n_states(self) -> int:
        return int(self.pmf.shape[0])


@dataclass(frozen=True)
class Bombardment:
    """Round-1 shore bombardment of an amphibious assault.

    pmf[B]: law of the number of hits; mode 0 none, 1 before round 1 without return fire
    (Revised), 2 with the attacker's round-1 fire, casualties fire back (1942 2E);
    land_prefix: the defender's casualty steps that are land units (its first ones);
    fired / unused: the ships that bombard and those beyond the one-per-landing-unit limit.
    """

    pmf: np.ndarray
    mode: int
    land_prefix: int
    fired: dict[str, int]
    unused: dict[str, int]


NO_BOMBARDMENT = Bombardment(np.ones(1), 0, 0, {}, {})


@dataclass(frozen=True)
class RetreatTables:
    """The attacker's retreat policy as kernel arrays (kernels.common.should_retreat).

    vector int64[5]; below: win-probability threshold (negative: none); a_units_left[Sa],
    d_units_left[Sd]: units left that count; a_may_retreat[Sa]: the attacker may retreat (all
    or part of what it has left); win_value[Sa, Sd]: win probability if fighting on (1 x 1
    when not needed); remainder_start[Sa]: where a partial retreat goes on (-1: a full one).
    """

    vector: np.ndarray
    below: float
    a_units_left: np.ndarray
    d_units_left: np.ndarray
    a_may_retreat: np.ndarray
    win_value: np.ndarray
    remainder_start: np.ndarray


def no_retreat(n_a: int, n_d: int) -> RetreatTables:
    return RetreatTables(np.array([0, 0, -1, 0, -1], dtype=np.int64), -1.0,
                         np.zeros(n_a, dtype=np.int64), np.zeros(n_d, dtype=np.int64),
                         np.zeros(n_a, dtype=np.bool_), np.zeros((1, 1)),
                         np.full(n_a, -1, dtype=np.int64))


@dataclass(frozen=True)
class CompiledBattle:
    attacker: SideTables
    defender: SideTables
    is_land_battle: bool
    bombardment: Bombardment = NO_BOMBARDMENT
    retreat: RetreatTables | None = None

    def retreat_tables(self) -> RetreatTables:
        return self.retreat or no_retreat(self.attacker.n_states, self.defender.n_states)


# ---------------------------------------------------------------------------------------------
# Probability helpers


@functools.lru_cache(maxsize=4096)
def binomial_pmf(n: int, p: float) -> np.ndarray:
    """pmf of Binomial(n, p) as an array of length n+1 (exact to float rounding); cached,
    so the returned array is shared: do not modify it."""
    if n == 0 or p <= 0.0:
        out = np.zeros(n + 1)
        out[0] = 1.0
        return out
    if p >= 1.0:
        out = np.zeros(n + 1)
        out[n] = 1.0
        return out
    k = np.arange(n + 1)
    if n <= 200:
        combs = np.array([float(math.comb(n, i)) for i in range(n + 1)])
        with np.errstate(under="ignore"):
            out = combs * np.power(p, k) * np.power(1.0 - p, n - k)
    else:
        # log C(n, k) as a running sum of log((n - i + 1) / i): O(n), relative error ~1e-12
        log_comb = np.concatenate(
            ([0.0], np.cumsum(np.log(np.arange(n, 0, -1.0)) - np.log(np.arange(1.0, n + 1))))
        )
        with np.errstate(under="ignore"):
            out = np.exp(log_comb + k * math.log(p) + (n - k) * math.log1p(-p))
        out /= out.sum()  # the running sum's rounding, ~1e-13, taken out of the total
    out.flags.writeable = False
    return out


def hits_pmf(dice_by_chance: dict[float, int]) -> np.ndarray:
    """Distribution of total hits from independent dice grouped by their hit chance."""
    return _hits_pmf(tuple(sorted((c, n) for c, n in dice_by_chance.items() if n and c > 0)))


@functools.lru_cache(maxsize=65536)
def _hits_pmf(groups: tuple[tuple[float, int], ...]) -> np.ndarray:
    pmf = np.ones(1)
    for chance, dice in groups:
        pmf = np.convolve(pmf, binomial_pmf(dice, chance))
    pmf.flags.writeable = False
    return pmf


# ---------------------------------------------------------------------------------------------
# Forces and orders of losses


def dice_by_chance(force: dict[str, int], units: dict[str, Unit], role: str) -> dict[float, int]:
    """Dice the force rolls in one round of general fire, grouped by hit chance.

    Attack support (artillery -> infantry) is counted from the units present, 1:1 per
    support_count, and is attack-only.
    """
    support_capacity: dict[str, int] = {}
    support_bonus: dict[str, int] = {}
    if role == "attack":
        for name, n in force.items():
            unit = units[name]
            if unit.support_target and unit.support_count and n:
                target = unit.support_target
                support_capacity[target] = support_capacity.get(target, 0) + n * unit.support_count
                support_bonus[target] = max(support_bonus.get(target, 0), unit.support_bonus)
    dice: dict[float, int] = {}

    def add(value: int, count: int, dice_per_unit: int, best_die: bool) -> None:
        value = min(value, 6)
        if value <= 0 or count <= 0:
            return
        chance = value / 6.0
        if best_die and dice_per_unit > 1:
            chance = 1.0 - (1.0 - chance) ** dice_per_unit
            dice_per_unit = 1
        dice[chance] = dice.get(chance, 0) + count * dice_per_unit

    for name, n in force.items():
        unit = units[name]
        if not n:
            continue
        if role == "attack":
            if not unit.can_attack:
                continue
            supported = min(n, support_capacity.get(name, 0))
            bonus = support_bonus.get(name, 0)
            add(unit.attack + bonus, supported, unit.attack_dice, unit.best_die)
            add(unit.attack, n - supported, unit.attack_dice, unit.best_die)
        else:
            add(unit.defense, n, 1, False)
    return dice


# ---------------------------------------------------------------------------------------------
# Tables


@dataclass
class _StateRow:
    pmf: np.ndarray
    alive: bool
    defenceless: bool
    has_land: bool
    ipc_lost: int
    survivors: list[int]


def _state_rows(force: dict[str, int], units: dict[str, Unit], role: str, order: LossOrder):
    """Rows for every state of one casualty sequence, from 0 steps to everything lost."""
    steps = casualty_steps(force, units, order)
    names = list(units)
    current = {name: force.get(name, 0) for name in names}
    ipc_lost = 0
    rows = []
    for step in range(len(steps) + 1):
        if step:
            name, kind = steps[step - 1]
            unit = units[name]
            current[name] -= 1
            if kind == "damage":
                current[unit.damaged_form or name] += 1
            else:
                ipc_lost += unit.cost
        counted = [n for n in current if current[n] and units[n].can_be_casualty]
        rows.append(
            _StateRow(
                pmf=hits_pmf(dice_by_chance(current, units, role)),
                alive=bool(counted),
                defenceless=bool(counted) and all(units[n].defenceless for n in counted),
                has_land=any(units[n].is_land and units[n].can_be_casualty for n in counted),
                ipc_lost=ipc_lost,
                survivors=[current[n] if units[n].can_be_casualty else 0 for n in names],
            )
        )
    return rows


def build_side_tables(
    profiles: list[tuple[float, dict[str, int]]],
    units: dict[str, Unit],
    role: str,
    order: LossOrder,
    base_ipc: dict[tuple, int] | None = None,
    extras: list[tuple[int, list[int]]] | None = None,
) -> SideTables:
    """Tables for one side from its profiles: (probability, force after round-1 removals).

    `base_ipc` maps a profile's force (as a sorted tuple) to IPC already lost before its
    casualty sequence starts (aircraft shot down by AA).  `extras`, one per profile: IPC lost
    before the profile starts and units that survive outside its fight (a partial retreat).
    """
    all_rows: list[_StateRow] = []
    offsets, lengths, probs = [], [], []
    for i, (prob, force) in enumerate(profiles):
        rows = _state_rows(force, units, role, order)
        already = (base_ipc or {}).get(tuple(sorted(force.items())), 0)
        withdrawn = None
        if extras is not None:
            already, withdrawn = extras[i]
        for row in rows:
            row.ipc_lost += already
            if withdrawn is not None:
                row.survivors = [a + b for a, b in zip(row.survivors, withdrawn, strict=True)]
        offsets.append(len(all_rows))
        lengths.append(len(rows) - 1)
        probs.append(prob)
        all_rows.extend(rows)
    width = max(len(r.pmf) for r in all_rows)
    if len(all_rows) * width > MAX_TABLE_CELLS:
        raise BattleInputError(
            f"battle too large to compile ({len(all_rows)} states x {width} hit counts); "
            "use fewer units"
        )
    pmf = np.zeros((len(all_rows), width))
    for i, row in enumerate(all_rows):
        pmf[i, : len(row.pmf)] = row.pmf
    max_hits = np.array([int(np.flatnonzero(r.pmf > 0)[-1]) for r in all_rows], dtype=np.int64)
    cdf = np.cumsum(pmf, axis=1)
    for i, top in enumerate(max_hits):
        cdf[i, top:] = 1.0  # sampling can never run past the last possible hit count
    return SideTables(
        profile_prob=np.array(probs, dtype=np.float64),
        offset=np.array(offsets, dtype=np.int64),
        length=np.array(lengths, dtype=np.int64),
        pmf=pmf,
        cdf=cdf,
        max_hits=max_hits,
        can_hit=max_hits > 0,
        alive=np.array([r.alive for r in all_rows], dtype=np.bool_),
        defenceless=np.array([r.defenceless for r in all_rows], dtype=np.bool_),
        has_land=np.array([r.has_land for r in all_rows], dtype=np.bool_),
        ipc_lost=np.array([r.ipc_lost for r in all_rows], dtype=np.int64),
        survivors=np.array([r.survivors for r in all_rows], dtype=np.int64).reshape(
            len(all_rows), len(units)
        ),
        unit_names=tuple(units),
    )


def with_partial_retreats(tables: CompiledBattle, attacker_rules: Ruleset, order: LossOrder,
                          may_withdraw: np.ndarray) -> tuple[CompiledBattle, np.ndarray]:
    """Add a profile for every attacker state from which a retreat is partial.

    may_withdraw[Sa, U]: how many units of each type may withdraw at each attacker state (the
    rest fight on).  A retreat at state a where some but not all units may withdraw sends the
    battle on in a new profile: the units that stay, with the withdrawn ones as survivors and
    the IPC already lost carried along.  Returns the tables (attacker profiles appended with
    probability 0) and remainder_start[Sa] (flat start of that profile; -1 for a full retreat,
    -2 when nothing may withdraw).
    """
    att = tables.attacker
    units = dict(attacker_rules.units)
    names = list(att.unit_names)
    n_main = att.n_states
    remainder_start = np.full(n_main, -1, dtype=np.int64)
    profiles: list[tuple[float, dict[str, int]]] = []
    extras: list[tuple[int, list[int]]] = []
    starts: list[int] = []
    for a in range(n_main):
        left = att.survivors[a]
        leaving = np.minimum(may_withdraw[a], left)
        staying = left - leaving
        if not att.alive[a] or not staying.any():
            continue  # nothing left, or a full retreat
        if not leaving.any():
            remainder_start[a] = -2
            continue
        force = {names[i]: int(c) for i, c in enumerate(staying) if c}
        profiles.append((0.0, force))
        extras.append((int(att.ipc_lost[a]), [int(c) for c in leaving]))
        starts.append(a)
    if not profiles:
        return tables, remainder_start
    original = [(float(p), {names[i]: int(c) for i, c in enumerate(att.survivors[o]) if c})
                for p, o in zip(att.profile_prob, att.offset, strict=True)]
    base = [(int(att.ipc_lost[o]), [0] * len(names)) for o in att.offset]
    merged = build_side_tables(original + profiles, units, "attack", order,
                               extras=base + extras)
    for k, a in enumerate(starts):
        remainder_start[a] = merged.offset[len(original) + k]
    return dataclasses.replace(tables, attacker=merged), remainder_start


def aa_profiles(
    attacker: dict[str, int],
    defender: dict[str, int],
    attacker_units: dict[str, Unit],
    defender_units: dict[str, Unit],
    flags,
    attacker_order: LossOrder,
) -> list[tuple[float, dict[str, int]]]:
    """The attacker's possible forces after round-1 AA fire, with their probabilities.

    Dice: one per attacking aircraft (`aa_dice = per_aircraft`) or min(aa_shots x guns,
    aircraft) (`per_gun`); each hits on the gun's aa_value.  Losses: the attacker's order of
    losses restricted to aircraft (`aa_casualties = attacker_chooses`), or each die at its
    own aircraft, i.e. a uniformly random set of the aircraft shot at (`own_aircraft`).
    """
    guns = {n: c for n, c in defender.items() if c and defender_units[n].is_aa}
    aircraft = {n: c for n, c in attacker.items() if c and attacker_units[n].is_air}
    if not guns or not aircraft:
        return [(1.0, dict(attacker))]
    n_aircraft = sum(aircraft.values())
    hit_value = max(defender_units[n].aa_value for n in guns)
    if flags["aa_dice"] == "per_aircraft":
        n_dice = n_aircraft
    else:
        n_dice = min(n_aircraft, sum(c * defender_units[n].aa_shots for n, c in guns.items()))
    hit_chances = binomial_pmf(n_dice, hit_value / 6.0)

    outcomes: dict[tuple, float] = {}
    # the attacker's own order of losses, restricted to aircraft
    air_order = [n for n, kind in casualty_steps(attacker, attacker_units, attacker_order)
                 if kind == "kill" and n in aircraft]
    for hits, p_hits in enumerate(hit_chances):
        if p_hits == 0.0:
            continue
        if flags["aa_casualties"] == "attacker_chooses":
            lost: dict[str, int] = {}
            for name in air_order[:hits]:
                lost[name] = lost.get(name, 0) + 1
            outcomes[tuple(sorted(lost.items()))] = (
                outcomes.get(tuple(sorted(lost.items())), 0.0) + p_hits
            )
        else:
            # the `hits` aircraft lost are a uniformly random subset of all aircraft
            # (multivariate hypergeometric over types)
            names = list(aircraft)
            total = math.comb(n_aircraft, hits)
            for lost_counts in _compositions(hits, [aircraft[n] for n in names]):
                pairs = list(zip(names, lost_counts, strict=True))
                ways = math.prod(math.comb(aircraft[n], k) for n, k in pairs)
                key = tuple(sorted(pairs))
                outcomes[key] = outcomes.get(key, 0.0) + p_hits * ways / total
    profiles = []
    for key, prob in outcomes.items():
        lost = dict(key)
        force = {n: c - lost.get(n, 0) for n, c in attacker.items()}
        profiles.append((prob, force))
    return profiles


def _compositions(total: int, caps: list[int]):
    """All ways to write `total` as a sum of len(caps) parts with 0 <= part_i <= caps[i]."""
    if not caps:
        if total == 0:
            yield ()
        return
    for first in range(min(total, caps[0]) + 1):
        for rest in _compositions(total - first, caps[1:]):
            yield (first, *rest)


def compile_tables(
    attacker: dict[str, int],
    defender: dict[str, int],
    attacker_rules: Ruleset,
    defender_rules: Ruleset,
    is_land_battle: bool,
    attacker_order: LossOrder | None = None,
    defender_order: LossOrder | None = None,
    bombard: dict[str, int] | None = None,
    landing_units: int = 0,
) -> CompiledBattle:
    """Both sides' tables for a validated battle (see the module docstring)."""
    a_units, d_units = dict(attacker_rules.units), dict(defender_rules.units)
    a_order = attacker_order or LossOrder("attack")
    d_order = defender_order or LossOrder("defense")
    profiles = [(1.0, dict(attacker))]
    if is_land_battle:
        profiles = aa_profiles(attacker, defender, a_units, d_units, attacker_rules.flags, a_order)
    base_ipc = {}
    for _, force in profiles:
        base_ipc[tuple(sorted(force.items()))] = sum(
            (attacker[n] - force[n]) * a_units[n].cost for n in attacker
        )
    attacker_tables = build_side_tables(profiles, a_units, "attack", a_order, base_ipc)
    defender_tables = build_side_tables([(1.0, dict(defender))], d_units, "defense", d_order)
    bombardment = NO_BOMBARDMENT
    if bombard:
        bombardment = compile_bombardment(bombard, landing_units, a_units, attacker_rules.flags,
                                          defender, d_units, d_order)
    return CompiledBattle(attacker_tables, defender_tables, is_land_battle, bombardment)


def compile_bombardment(bombard: dict[str, int], landing_units: int, a_units: dict[str, Unit],
                        flags, defender: dict[str, int], d_units: dict[str, Unit],
                        d_order: LossOrder) -> Bombardment:
    """Which ships fire (strongest first where one ship per landing unit is the limit), the
    law of their hits, and how many of the defender's first casualty steps are land units."""
    ships = sorted(((a_units[n].bombard, n) for n, c in bombard.items() for _ in range(c)),
                   reverse=True)
    if flags["bombard_per_landing_unit"]:
        firing, idle = ships[:landing_units], ships[landing_units:]
    else:
        firing, idle = ships, []
    fired: dict[str, int] = {}
    unused: dict[str, int] = {}
    dice: dict[float, int] = {}
    for value, name in firing:
        fired[name] = fired.get(name, 0) + 1
        dice[value / 6.0] = dice.get(value / 6.0, 0) + 1
    for _, name in idle:
        unused[name] = unused.get(name, 0) + 1
    steps = casualty_steps(defender, d_units, d_order)
    land_prefix = 0
    while land_prefix < len(steps) and d_units[steps[land_prefix][0]].is_land:
        land_prefix += 1
    if any(d_units[name].is_land for name, _ in steps[land_prefix:]):
        raise BattleInputError(
            "bombardment hits only land units: the defender's order of losses must take its "
            "land units before its aircraft"
        )
    mode = 2 if flags["bombard_return_fire"] else 1
    return Bombardment(hits_pmf(dice), mode, land_prefix, fired, unused)
