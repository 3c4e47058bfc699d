"""Strategic bombing raids: the damage bombers deal to a territory's industry, a battle kind on
the same engine (docs/editions.md section 5; every edition difference is data: the rule flags
``raid_aa``, ``raid_damage_cap`` and ``air_battle``, the unit fields ``raid_dice``,
``raid_best_die``, ``raid_bonus``, ``raid_targets``, ``air_attack`` and ``air_defense``, and the
edition's ``[facilities]``).

    >>> import battlecalc
    >>> r = battlecalc.raid("revised", "1 bomber", target_value=2, aa=True)
    >>> round(r.expected_damage * 36, 9)  # (5/6)(11/6)
    55.0

A raid has three steps:

1. **Air battle** (``air_battle``, only when there are interceptors): one round of an ordinary
   battle on the engine, :func:`battlecalc.simulate` on the edition with every unit's values
   replaced by its air-battle values (``air_attack`` / ``air_defense``, one die each, no
   support), the attacker retreating after round 1.  Escorts that survive leave.
2. **AA fire** (``raid_aa``): one die per bomber left at the AA unit's ``aa_value`` (radar
   included), from the territory's gun when the raid says there is one, or from the facility's
   built-in AA always.  Hits take bombers in the attacker's order of losses.
3. **Damage**: each bomber left rolls its ``raid_dice`` (summed, or the best one), adds its
   ``raid_bonus``, and ``raid_damage_cap`` caps each bomber's damage at the territory's
   production value, the total at twice that value or at the facility's ``max_damage``.

Every loss follows one casualty sequence, the attacker's order of losses over its whole force:
the air battle takes a prefix of it (the engine's casualty walk), AA fire the next bombers of
it.  So the bombers over the target are always the sequence's bombers less the first m of them,
and the law of the damage is a mixture over m of the laws of those suffixes, each one
convolution from the next.

Exact: the air battle's exact law from the engine, AA by :func:`battlecalc.dice.hit_distribution`,
the damage by convolution.  Monte Carlo: the air battle by the engine's Monte Carlo kernel (the
raid's seed), then AA fire and damage die by die with numpy, in fixed chunks of trials, chunk c
drawing from ``SeedSequence(seed, spawn_key=(RAID_STREAM, c))``: the same seed gives the same
numbers whatever the number of threads.  The air battle is one round, so the two sides' losses
in it are independent; the standard error of the TUV swing adds the two sides' variances.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from .army import format_army
from .dice import convolve, hit_distribution
from .die_law import DieLaw
from .errors import BattleInputError, BattleInputWarning, collected_warnings, quoted
from .orders import LossOrder, casualty_steps, parse_loss_order
from .results import LOW_LUCK_LINE, Z95, ResultViews, _frame
from .rules import Ruleset, load_rules
from .solver.law import weighted_sum
from .spec import (
    DEFAULT_TRIALS,
    DICE_MODELS,
    Army,
    Order,
    Techs,
    army_counts,
    check_choice,
    check_die_law,
    check_flag,
    check_int,
    check_techs,
    make_run,
)

RAID_STREAM = 0x52414944  # "RAID": first spawn-key word of the Monte Carlo AA and damage streams
CHUNK_DRAWS = 1 << 22  # dice a Monte Carlo chunk draws at most (memory), whatever the force
MAX_CHUNK_TRIALS = 1 << 18
MAX_TARGET_VALUE = 1000

PERCENTILES = (10, 50, 90)
TABLE_LAW_VALUES = 40  # the table lists the damage law when it has at most this many values


# ---------------------------------------------------------------------------------------------
# The checked raid


@dataclass(frozen=True)
class RaidSpec:
    """A checked raid: armies as {unit: count} in the edition's unit order, each side's rules
    with its technologies, the attacker's casualty sequence (its order of losses over its whole
    force), the target and what fires at the bombers."""

    rules: Ruleset
    attacker_rules: Ruleset
    defender_rules: Ruleset
    attacker: dict[str, int]
    defender: dict[str, int]
    attacker_tech: tuple[str, ...]
    defender_tech: tuple[str, ...]
    target_value: int | None
    facility: str | None
    aa_fires: bool
    aa_value: int  # hit value of the AA dice (0: no AA fire)
    order: LossOrder
    sequence: tuple[str, ...]
    dice: str
    bomber_cap: int | None  # each bomber's damage at most this
    total_cap: int | None  # the raid's damage at most this
    notes: tuple[str, ...] = ()  # inputs given but ignored by this edition
    # a raid that starts where it stands (a save in progress): its AA fire rolled already,
    # with this many hits on the bombers not yet taken (None: the AA fire is to come)
    aa_rolled: int | None = None
    start_step: str = "start"

    @property
    def bombers(self) -> tuple[str, ...]:
        """The sequence's bombers, in order."""
        return tuple(n for n in self.sequence if self.attacker_rules.units[n].raid_dice)


def raid_units(ruleset: Ruleset) -> tuple[list[str], list[str], list[str]]:
    """(bombers, escorts, interceptors) of an edition: units that bomb, units that may escort
    them and units that may intercept (the last two only with an air battle)."""
    units = ruleset.units.values()
    bombers = [u.name for u in units if u.raid_dice and u.hp == 1]
    if not ruleset.flags["air_battle"]:
        return bombers, [], []
    escorts = [u.name for u in units if not u.raid_dice and u.air_attack and u.hp == 1]
    interceptors = [u.name for u in units if u.air_defense and u.hp == 1]
    return bombers, escorts, interceptors


def _check_attacker(ruleset: Ruleset, army: dict[str, int]) -> None:
    bombers, escorts, _ = raid_units(ruleset)
    for name in army:
        if name in bombers or name in escorts:
            continue
        unit = ruleset.units[name]
        if unit.is_air and not ruleset.flags["air_battle"]:
            raise BattleInputError(
                f"no air battle in {ruleset.id}: {name} cannot escort a raid (raiders: "
                f"{', '.join(bombers) or 'none'})")
        allowed = ", ".join(bombers) + (f"; escorts: {', '.join(escorts)}" if escorts else "")
        raise BattleInputError(
            f"{name} cannot take part in a raid in {ruleset.id} (bombers: {allowed})")
    if not any(army.get(n) for n in bombers):
        raise BattleInputError(
            f"a raid needs at least one bomber (in {ruleset.id}: {', '.join(bombers) or 'none'})")


def _check_defender(ruleset: Ruleset, army: dict[str, int]) -> None:
    _, _, interceptors = raid_units(ruleset)
    for name in army:
        if name in interceptors:
            continue
        unit = ruleset.units[name]
        if unit.is_aa:
            how = {"territory_gun": "say so with aa=True (--aa) instead",
                   "built_in": "the target's built-in AA fires instead",
                   "none": "no AA fires at raids there"}[ruleset.flags["raid_aa"]]
            raise BattleInputError(
                f"{name} does not defend against raids in {ruleset.id}: {how}")
        if not ruleset.flags["air_battle"]:
            raise BattleInputError(
                f"no air battle in {ruleset.id}: {name} cannot intercept a raid (a raid's "
                "defender has no units there)")
        raise BattleInputError(
            f"{name} cannot intercept a raid in {ruleset.id} (interceptors: "
            f"{', '.join(interceptors) or 'none'})")


def _check_target(ruleset: Ruleset, a_rules: Ruleset, army: dict[str, int], target_value: Any,
                  facility: Any) -> tuple[int | None, str | None, int | None, int | None, list]:
    """(target value, facility, cap per bomber, total cap, notes)."""
    notes = []
    cap_rule = ruleset.flags["raid_damage_cap"]
    needs_value = cap_rule in ("target_value_per_bomber", "twice_target_value")
    if target_value is None:
        if needs_value:
            raise BattleInputError(
                f"a raid in {ruleset.id} needs the target's production value (target_value, "
                "--target-value): it caps the damage")
    else:
        target_value = check_int("target value", target_value, 0, MAX_TARGET_VALUE)
        if not needs_value:
            notes.append(f"the target value is ignored in {ruleset.id}: no damage cap depends "
                         "on it")
            target_value = None
    facilities = ruleset.facilities
    if facilities:
        if facility is None:
            raise BattleInputError(
                f"a raid in {ruleset.id} needs a facility to bomb (facility, --facility): "
                f"{', '.join(facilities)}")
        if not isinstance(facility, str):  # a list or a mapping is no key (unhashable)
            raise BattleInputError(
                f"facility must be the name of a facility (text): one of "
                f"{', '.join(facilities)}, got {quoted(facility)}")
        key = facility.strip().lower()
        if key not in facilities:
            raise BattleInputError(
                f"unknown facility {quoted(facility)} in {ruleset.id}; known: "
                f"{', '.join(facilities)}")
        facility = key
        for name in army:
            targets = a_rules.units[name].raid_targets
            if targets and facility not in targets:
                raise BattleInputError(
                    f"{name} raids only {', '.join(targets)} in {ruleset.id}, not {facility}")
    elif facility is not None:
        raise BattleInputError(
            f"{ruleset.id} has no facilities to choose from: facility (--facility) applies to "
            "editions with facilities (1940-2e)")
    bomber_cap = target_value if cap_rule == "target_value_per_bomber" else None
    total_cap = {"twice_target_value": None if target_value is None else 2 * target_value,
                 "facility": facilities[facility].max_damage if facility else None}.get(cap_rule)
    return target_value, facility, bomber_cap, total_cap, notes


RAID_STEPS = ("start", "air_battle", "aa_fire", "aa_casualties", "bombing")
_AIR_STEPS = ("air_defender_fire", "air_casualties")  # an air battle under way: refused


def _check_raid_start(step: Any, hits: Any, a_army: dict[str, int], d_army: dict[str, int],
                      bombers: int) -> tuple[str, int | None]:
    """(the step, the AA hits rolled or None) of a raid that starts where it stands:
    "start" / "air_battle" (nothing fought yet), "aa_fire" (the air battle over: the bombers
    standing, no interceptors), "aa_casualties" (AA rolled, hits_on_attacker hits on the
    bombers to take), "bombing" (AA over, its casualties removed)."""
    if isinstance(step, str) and step.strip().replace("-", "_") in _AIR_STEPS:
        raise BattleInputError(
            f"start_step {step.strip()}: a raid's air battle under way is not solved from where "
            "it stands; solve it from the start of the raid")
    step = check_choice("start_step", step.strip().replace("-", "_")
                        if isinstance(step, str) else step, RAID_STEPS)
    hits = check_int("hits_on_attacker", hits, 0, 1000)
    if hits and step != "aa_casualties":
        raise BattleInputError(f"hits_on_attacker at start_step {step}: a raid has them only "
                               "at aa_casualties (the AA's hits on the bombers)")
    if step in ("aa_fire", "aa_casualties", "bombing") and d_army:
        raise BattleInputError(f"start_step {step}: the air battle is over; give the bombers "
                               "standing and no interceptors")
    if step == "aa_casualties" and hits > bombers:
        raise BattleInputError(f"hits_on_attacker {hits}: the AA hits one bomber a die, and "
                               f"{bombers} bombers fly")
    return step, hits if step == "aa_casualties" else 0 if step == "bombing" else None


def make_raid(rules: str | Ruleset, attacker: Army, defender: Army = None,
              target_value: int | None = None, facility: str | None = None, aa: bool = False,
              attacker_tech: Techs = None, defender_tech: Techs = None,
              attacker_ool: Order = None, dice: str = "standard", start_step: str = "start",
              hits_on_attacker: int = 0, die_law: Any = None) -> RaidSpec:
    """Check every input of a raid; BattleInputError with a clear message if it is not one.
    start_step, hits_on_attacker: where a raid in progress stands (_check_raid_start);
    die_law: a biased die (spec.check_die_law), for every die of the raid (air battle, AA,
    damage)."""
    ruleset = load_rules(rules)
    if ruleset.model != "dice":
        raise BattleInputError(f"{ruleset.id} has no strategic bombing raids "
                               f"(model {ruleset.model!r})")
    if die_law is not None:
        law_dice = dice.strip().lower().replace("-", "_") if isinstance(dice, str) else dice
        ruleset = ruleset.with_die_law(check_die_law(die_law, ruleset, law_dice))
    a_tech = check_techs(attacker_tech, "attacker")
    d_tech = check_techs(defender_tech, "defender")
    a_rules, d_rules = ruleset.with_techs(a_tech), ruleset.with_techs(d_tech)
    a_army = army_counts(attacker, ruleset, "attacker")
    d_army = army_counts(defender, ruleset, "defender")
    _check_attacker(a_rules, a_army)
    _check_defender(d_rules, d_army)
    target_value, facility, bomber_cap, total_cap, notes = _check_target(
        ruleset, a_rules, a_army, target_value, facility)
    aa = check_flag("aa", aa)
    mode = ruleset.flags["raid_aa"]
    aa_fires = mode == "built_in" or (mode == "territory_gun" and aa)
    if aa and mode != "territory_gun":
        notes.append(f"aa is ignored in {ruleset.id}: "
                     + ("the target's built-in AA fires at every raid" if mode == "built_in"
                        else "no AA fires at raids"))
    aa_value = max((u.aa_value for u in d_rules.units.values()), default=0) if aa_fires else 0
    if isinstance(dice, str):
        dice = dice.strip().lower().replace("-", "_")
    dice = check_choice("dice", dice, DICE_MODELS)
    air_rules = air_battle_rules(ruleset.fair).with_die_law(ruleset.die_law)
    order = parse_loss_order(attacker_ool, air_rules, "attack")
    steps = casualty_steps(a_army, air_rules.with_techs(a_tech).units, order, ())
    bombers = sum(1 for name, _ in steps if a_rules.units[name].raid_dice)
    step, rolled = _check_raid_start(start_step, hits_on_attacker, a_army, d_army, bombers)
    return RaidSpec(ruleset, a_rules, d_rules, a_army, d_army, a_tech, d_tech, target_value,
                    facility, aa_fires, aa_value, order, tuple(name for name, _ in steps), dice,
                    bomber_cap, total_cap, tuple(notes), rolled, step)


@functools.lru_cache(maxsize=64)
def air_battle_rules(ruleset: Ruleset) -> Ruleset:
    """The edition as its raids' air battle sees it: every unit fires one die at its
    air_attack / air_defense (technologies that change those change these), no AA, no support,
    no special abilities."""
    plain = {"attack_dice": 1, "defense_dice": 1, "best_die": False, "can_attack": True,
             "aa_value": 0, "aa_shots": 0, "defenceless": False, "submarine": False,
             "anti_sub": False, "transport": False, "bombard": 0}
    units = {name: dataclasses.replace(unit, attack=unit.air_attack, defense=unit.air_defense,
                                       **plain)
             for name, unit in ruleset.units.items()}
    techs = {}
    for name, tech in ruleset.techs.items():
        changes = {unit: {new: fields_[old] for old, new in (("air_attack", "attack"),
                                                             ("air_defense", "defense"))
                          if old in fields_}
                   for unit, fields_ in tech.changes.items()}
        techs[name] = dataclasses.replace(tech, changes=MappingProxyType(changes),
                                          support_changes=MappingProxyType({}))
    # raid_aa "none": no AA in the air battle (and none of its units has an aa_value)
    return dataclasses.replace(ruleset, name=f"{ruleset.name}, raid air battle",
                               units=MappingProxyType(units), techs=MappingProxyType(techs),
                               supports=(),
                               flags=MappingProxyType({**ruleset.flags, "raid_aa": "none"}))


# ---------------------------------------------------------------------------------------------
# The casualty walk and the laws


@dataclass(frozen=True)
class _Walk:
    """What losing a prefix of the casualty sequence means.  k = units lost in the air battle
    (0..N), m = bombers lost in all (0..NB): survivors and IPC lost after (k, m) are
    `escorts_left[k] + bombers_left[m]` and `escort_ipc[k] + bomber_ipc[m]`."""

    units: tuple[str, ...]  # the attacker's unit types
    bombers_before: np.ndarray  # [N+1] bombers among the first k casualties
    escorts_left: np.ndarray  # [N+1, U] non-bombers left after k casualties
    bombers_left: np.ndarray  # [NB+1, U] bombers left after m bomber losses
    escort_ipc: np.ndarray  # [N+1]
    bomber_ipc: np.ndarray  # [NB+1]
    prefix_of: dict  # survivor counts (tuple over units) after k casualties -> k


def _walk(spec: RaidSpec) -> _Walk:
    units = tuple(spec.attacker)
    rules = spec.attacker_rules.units
    col = {name: i for i, name in enumerate(units)}
    start = np.array([spec.attacker[n] for n in units], dtype=np.int64)
    is_bomber = {n: rules[n].raid_dice > 0 for n in units}
    n, bombers = len(spec.sequence), spec.bombers
    escorts_left = np.zeros((n + 1, len(units)), dtype=np.int64)
    bombers_left = np.zeros((len(bombers) + 1, len(units)), dtype=np.int64)
    escorts_left[0] = np.where([not is_bomber[u] for u in units], start, 0)
    bombers_left[0] = start - escorts_left[0]
    bombers_before = np.zeros(n + 1, dtype=np.int64)
    escort_ipc = np.zeros(n + 1, dtype=np.int64)
    prefix_of = {tuple(start.tolist()): 0}
    left = start.copy()
    for k, name in enumerate(spec.sequence, start=1):
        escorts_left[k] = escorts_left[k - 1]
        bombers_before[k] = bombers_before[k - 1] + is_bomber[name]
        escort_ipc[k] = escort_ipc[k - 1]
        if not is_bomber[name]:
            escorts_left[k, col[name]] -= 1
            escort_ipc[k] += rules[name].cost
        left[col[name]] -= 1
        prefix_of[tuple(left.tolist())] = k
    bomber_ipc = np.zeros(len(bombers) + 1, dtype=np.int64)
    for m, name in enumerate(bombers, start=1):
        bombers_left[m] = bombers_left[m - 1]
        bombers_left[m, col[name]] -= 1
        bomber_ipc[m] = bomber_ipc[m - 1] + rules[name].cost
    return _Walk(units, bombers_before, escorts_left, bombers_left, escort_ipc, bomber_ipc,
                 prefix_of)


def damage_die(die_size, dice: str) -> np.ndarray:
    """Law of one damage die over 0..die_size: uniform on 1..die_size, or with low luck
    (TripleA's "Low Luck for Bombing": a die's luck cut to a third) uniform on
    die_size // 3 + 1 .. die_size // 3 + (die_size + 1) // 3 (a d6: 3 or 4); a biased die
    (a DieLaw, Ruleset.die) shows face k with its chance (each rounded once)."""
    if isinstance(die_size, DieLaw):
        whole = die_size.whole
        return np.array([0.0, *(w / whole for w in die_size.weights)])
    law = np.zeros(die_size + 1)
    if dice == "low_luck":
        low = die_size // 3
        sides = (die_size + 1) // 3
        law[low + 1: low + sides + 1] = 1.0 / sides
    else:
        law[1:] = 1.0 / die_size
    return law


def _capped(law: np.ndarray, cap: int | None) -> np.ndarray:
    """The law of min(X, cap)."""
    if cap is None or len(law) <= cap + 1:
        return law
    out = law[: cap + 1].copy()
    out[cap] += law[cap + 1:].sum()
    return out


def bomber_damage_law(unit, die_size, dice: str, cap: int | None) -> np.ndarray:
    """Law of one bomber's damage: its raid_dice summed or the best one, plus raid_bonus,
    at most `cap`."""
    die = damage_die(die_size, dice)
    if unit.raid_best_die:
        # P(best <= x) = P(one die <= x)^k, by products (numpy's power differs by CPU)
        one, cdf = np.cumsum(die), np.ones(len(die))
        for _ in range(unit.raid_dice):
            cdf *= one
        law = np.diff(cdf, prepend=0.0)
    else:
        law = np.ones(1)
        for _ in range(unit.raid_dice):
            law = convolve(law, die)
    law = np.concatenate([np.zeros(unit.raid_bonus), law])
    return _capped(law, cap)


def _suffix_mixture(spec: RaidSpec, weights: np.ndarray) -> np.ndarray:
    """Law of the raid's damage when the first m bombers of the sequence are lost with
    probability weights[m]: sum over m of weights[m] x (law of the damage of the bombers left),
    the laws built from the last bomber backwards, one convolution each."""
    units = spec.attacker_rules.units
    per_bomber = {name: bomber_damage_law(units[name], spec.rules.die, spec.dice,
                                          spec.bomber_cap)
                  for name in set(spec.bombers)}
    law = np.ones(1)  # no bomber left
    total = np.zeros(1)
    for m in range(len(spec.bombers), -1, -1):
        if m < len(spec.bombers):
            law = _capped(convolve(law, per_bomber[spec.bombers[m]]), spec.total_cap)
        if weights[m] > 0:
            if len(total) < len(law):
                total = np.concatenate([total, np.zeros(len(law) - len(total))])
            total[: len(law)] += weights[m] * law
    return total


def _aa_law(spec: RaidSpec, bombers: int) -> np.ndarray:
    """Law of the AA hits on `bombers` bombers (at most one each; rolled already: that
    many)."""
    if spec.aa_rolled is not None:
        return np.eye(1, min(spec.aa_rolled, bombers) + 1, min(spec.aa_rolled, bombers))[0]
    if not spec.aa_fires or bombers == 0:
        return np.ones(1)
    law = hit_distribution({(spec.aa_value, 1): bombers}, spec.rules.die, spec.dice)
    return _capped(np.asarray(law), bombers)


# ---------------------------------------------------------------------------------------------
# The air battle on the engine


@dataclass(frozen=True)
class _AirBattle:
    """The air battle's outcome: the law (exact) or counts (Monte Carlo) of k, the units the
    attacker lost, and the defender's side of the result."""

    method: str
    seed: int | None
    k_weights: np.ndarray  # [N+1]: probabilities, or trial counts
    defender_survivors: dict[str, float]
    defender_ipc_loss: float
    defender_ipc_stderr: float


def _air_battle(spec: RaidSpec, walk: _Walk, method: str, trials: int, seed: int | None,
                progress) -> _AirBattle | None:
    """One round of battle between the whole attacking force and the interceptors, on the
    engine (None: no interceptors, no air battle)."""
    if not spec.defender:
        return None
    from .api import simulate  # the engine (numba) only when there is an air battle

    # a raid technology may change nothing in the air battle: its warnings are dropped (a
    # collector of their own, where a caller collects them: errors.collected_warnings)
    with warnings.catch_warnings(), collected_warnings():
        warnings.simplefilter("ignore", BattleInputWarning)
        result = simulate(
            rules=air_battle_rules(spec.rules.fair), die_law=spec.rules.die_law,
            attacker=spec.attacker, defender=spec.defender,
            method=method, trials=trials, seed=seed, attacker_tech=list(spec.attacker_tech),
            defender_tech=list(spec.defender_tech), attacker_ool=spec.order.text,
            retreat_after=1, progress=progress, dice=spec.dice)
    law = result.attacker_law
    columns = [law.units.index(u) if u in law.units else None for u in walk.units]
    weights = np.zeros(len(walk.bombers_before))
    n = 1.0 if result.method == "exact" else float(result.trials)
    for row, p in zip(law.survivors, law.probability, strict=True):
        counts = tuple(0 if c is None else int(row[c]) for c in columns)
        weights[walk.prefix_of[counts]] += p * n
    if result.method != "exact":
        weights = np.rint(weights)
    return _AirBattle(result.method, result.seed, weights, dict(result.defender_survivors),
                      result.defender_ipc_loss, result.stderr["defender_ipc_loss"])


# ---------------------------------------------------------------------------------------------
# Exact and Monte Carlo


def _exact(spec: RaidSpec, walk: _Walk, k_law: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(joint[k, m], damage law): the exact law of (air-battle losses, bombers lost in all),
    and of the damage."""
    n_bombers = len(spec.bombers)
    joint = np.zeros((len(k_law), n_bombers + 1))
    for k, p in enumerate(k_law):
        if p <= 0.0:
            continue
        before = int(walk.bombers_before[k])
        aa = _aa_law(spec, n_bombers - before)
        joint[k, before: before + len(aa)] += p * aa
    return joint, _suffix_mixture(spec, joint.sum(axis=0))


def _max_damage(spec: RaidSpec) -> int:
    units = spec.attacker_rules.units
    each = [units[n].raid_dice * spec.rules.die_size + units[n].raid_bonus for n in spec.bombers]
    if spec.bomber_cap is not None:
        each = [min(d, spec.bomber_cap) for d in each]
    total = sum(each)
    return total if spec.total_cap is None else min(total, spec.total_cap)


def _monte_carlo(spec: RaidSpec, walk: _Walk, k_counts: np.ndarray, trials: int, seed: int,
                 progress) -> tuple[np.ndarray, np.ndarray]:
    """(joint[k, m], damage histogram) as trial counts: AA fire and damage rolled die by die
    for every trial, trials taken in the air battle's outcomes (k ascending), in fixed chunks
    with one random stream each (module docstring)."""
    units = spec.attacker_rules.units
    bombers = spec.bombers
    n_bombers, die = len(bombers), spec.rules.die_size
    most_dice = max(units[n].raid_dice for n in bombers)
    chunk = int(min(MAX_CHUNK_TRIALS, max(1, CHUNK_DRAWS // (n_bombers * (most_dice + 1)))))
    cumulative = np.cumsum(k_counts.astype(np.int64))
    joint = np.zeros((len(k_counts), n_bombers + 1), dtype=np.int64)
    histogram = np.zeros(_max_damage(spec) + 1, dtype=np.int64)
    kinds = {name: np.flatnonzero([b == name for b in bombers]) for name in dict.fromkeys(bombers)}
    low, sides = die // 3, (die + 1) // 3  # a low-luck damage die: low + 1 .. low + sides
    law = spec.rules.die_law
    if law is not None and not law.fair:  # faces drawn by their whole weights, exactly
        edges = np.cumsum(law.weights)

        def roll(rng, shape):
            return np.searchsorted(edges, rng.integers(0, law.whole, shape), side="right") + 1
    else:  # (the fair die, however given: the same draws)
        def roll(rng, shape):
            return rng.integers(1, die + 1, shape)
    for c, first in enumerate(range(0, trials, chunk)):
        size = min(chunk, trials - first)
        rng = np.random.Generator(np.random.PCG64(
            np.random.SeedSequence(seed, spawn_key=(RAID_STREAM, c))))
        k = np.searchsorted(cumulative, np.arange(first, first + size), side="right")
        lost = walk.bombers_before[k]
        if spec.aa_rolled is not None:  # rolled already: its hits
            lost = np.minimum(lost + spec.aa_rolled, n_bombers)
        elif spec.aa_fires:
            if spec.dice == "low_luck":  # strength // die sure hits, one die for the rest
                sure, rest = np.divmod((n_bombers - lost) * spec.aa_value, die)
                hits = sure + (rng.integers(1, die + 1, size) <= rest)
            else:  # one die at each bomber left
                dice = roll(rng, (size, n_bombers))
                hits = ((dice <= spec.aa_value)
                        & (np.arange(n_bombers) >= lost[:, None])).sum(axis=1)
            lost = np.minimum(lost + hits, n_bombers)
        damage = np.zeros(size, dtype=np.int64)
        for name, columns in kinds.items():
            unit = units[name]
            if spec.dice == "low_luck":
                rolls = rng.integers(low + 1, low + sides + 1, (size, len(columns), unit.raid_dice))
            else:
                rolls = roll(rng, (size, len(columns), unit.raid_dice))
            each = (rolls.max(axis=2) if unit.raid_best_die else rolls.sum(axis=2)) \
                + unit.raid_bonus
            if spec.bomber_cap is not None:
                each = np.minimum(each, spec.bomber_cap)
            damage += (each * (columns[None, :] >= lost[:, None])).sum(axis=1)
        if spec.total_cap is not None:
            damage = np.minimum(damage, spec.total_cap)
        joint += np.bincount(k * (n_bombers + 1) + lost,
                             minlength=joint.size).reshape(joint.shape)
        histogram += np.bincount(damage, minlength=len(histogram))
        if progress is not None:
            progress(first + size, trials, "AA fire and damage")
    return joint, histogram


# ---------------------------------------------------------------------------------------------
# The result


def _mean_se(values: np.ndarray, weights: np.ndarray, n: float | None) -> tuple[float, float]:
    """Mean of `values` under `weights` (probabilities, or counts out of n trials) and the
    standard error of a Monte Carlo mean (0 when exact)."""
    total = float(weights.sum())
    mean = float((weights * values).sum() / total)
    if n is None:
        return mean, 0.0
    second = float((weights * values.astype(np.float64) ** 2).sum() / total)
    return mean, math.sqrt(max(second - mean * mean, 0.0) / n)


@dataclass
class RaidResult(ResultViews):
    """A strategic bombing raid: the law of the damage and what each side loses.

    `expected_damage` is the mean IPC damage dealt; `attacker_ipc_loss` the bombers and escorts
    lost (at cost), `defender_ipc_loss` the interceptors lost; `tuv_swing` the defender's loss
    minus the attacker's (units only: the damage is not in it); `bombers_over_target` the mean
    number of bombers that roll damage; survivors are mean counts.  For Monte Carlo results
    `stderr` holds the standard error of each mean and `ci95` its 95% interval (mean ± 1.96
    standard errors); exact results have zeros and zero-width intervals.  The damage law is
    `damage_distribution` (a DataFrame: damage, probability), in the JSON as
    ``damage_distribution`` ({damage: probability}).
    """

    attacker_tech: tuple[str, ...]
    defender_tech: tuple[str, ...]
    target_value: int | None
    facility: str | None
    aa_fires: bool
    attacker_ool: str
    dice: str
    expected_damage: float
    attacker_ipc_loss: float
    defender_ipc_loss: float
    tuv_swing: float
    bombers_over_target: float
    attacker_survivors: dict[str, float]
    defender_survivors: dict[str, float]
    damage_percentiles: dict[str, int]
    stderr: dict[str, float]
    ci95: dict[str, tuple[float, float]]
    elapsed_s: float
    damage_law: tuple[np.ndarray, np.ndarray] = field(default=(), repr=False)
    attacker_units: tuple[str, ...] = field(default=(), repr=False)  # CSV survivor columns
    defender_units: tuple[str, ...] = field(default=(), repr=False)
    aa_value: int = field(default=0, repr=False)
    bomber_cap: int | None = field(default=None, repr=False)
    total_cap: int | None = field(default=None, repr=False)
    notes: tuple[str, ...] = field(default=(), repr=False)
    target: str = field(default="a territory", repr=False)  # the target, in words
    aa_source: str = field(default="", repr=False)  # who fires AA, in words
    die_law: str | None = field(default=None, repr=False)  # a biased die (DieLaw.text)

    damage_distribution = functools.cached_property(
        lambda self: _frame({"damage": self.damage_law[0], "probability": self.damage_law[1]}))

    def to_dict(self) -> dict[str, Any]:
        """Plain-data view (the JSON object of `--format json`)."""
        values, probability = self.damage_law
        return {**super().to_dict(), **({"die_law": self.die_law} if self.die_law else {}),
                "damage_distribution": {
            int(d): float(p) for d, p in zip(values, probability, strict=True)}}

    def _spread(self, key: str, value: Any, row: dict[str, Any]) -> None:
        """Survivor columns for every unit of the edition that may be on that side of a raid
        (so rows of one edition share a header); the damage law is left to the JSON."""
        if key in ("attacker_survivors", "defender_survivors"):
            for unit in (self.attacker_units if key.startswith("a") else self.defender_units):
                row[f"{key}.{unit}"] = value.get(unit, 0.0)
        elif key == "damage_distribution":
            return
        else:
            super()._spread(key, value, row)

    def _frames(self) -> dict[str, Any]:
        return {"damage": lambda: self.damage_distribution}

    def _target_lines(self) -> list[str]:
        """The target, its damage cap and the AA fire."""
        if self.total_cap is not None:
            why = "" if self.facility else " (twice the production value)"
            cap = f"{self.total_cap} in all{why}"
        elif self.bomber_cap is not None:
            cap = f"{self.bomber_cap} per bomber (the production value)"
        else:
            cap = "none"
        aa = "none" if not self.aa_fires else f"{self.aa_source}, hits on {self.aa_value}"
        return [f"damage cap  {cap}", f"AA fire     {aa}"]

    def table(self) -> str:
        """The human-readable report of `--format table`."""
        head = f"{self.rules}: {self.attacker}  raiding  {self.target}"
        if self.defender_survivors:
            head += f", intercepted by {self.defender}"
        if self.attacker_tech or self.defender_tech:
            head += (f"   (tech: attacker {','.join(self.attacker_tech) or '-'}, "
                     f"defender {','.join(self.defender_tech) or '-'})")
        lines = [head, *self._target_lines()]
        if self.attacker_ool != "cheapest":
            lines.append(f"attacker order of losses: {self.attacker_ool}")
        if self.dice != "standard":
            lines.append(LOW_LUCK_LINE)
        if self.die_law:
            lines.append(f"biased die: faces 1, 2, ... come up with chances "
                         f"{self.die_law.replace(',', ', ')}")
        lines += [self._method_line(), ""]
        percentiles = "/".join(str(v) for v in self.damage_percentiles.values())
        lines.append(f"damage     {self.expected_damage:.3f}{self._pm('expected_damage')} IPC "
                     f"on average   (percentiles 10/50/90: {percentiles})")
        lines.append(f"bombers over the target  {self.bombers_over_target:.3f}"
                     f"{self._pm('bombers_over_target')} on average")
        lines += ["", f"{'survivors (mean)':<22}{'attacker':>10}{'defender':>10}",
                  *self._survivor_lines(10), ""]
        lines.append(f"IPC lost   attacker {self.attacker_ipc_loss:.3f}"
                     f"{self._pm('attacker_ipc_loss')}   defender {self.defender_ipc_loss:.3f}"
                     f"{self._pm('defender_ipc_loss')}")
        lines.append(f"TUV swing  {self.tuv_swing:+.3f}{self._pm('tuv_swing')}   (units only: "
                     "defender's loss minus attacker's; the damage is not in it)")
        values, probability = self.damage_law
        if len(values) <= TABLE_LAW_VALUES:
            lines += ["", "damage law"]
            entries = [f"{d:>4}: {p:6.2%}" for d, p in zip(values, probability, strict=True)]
            for i in range(0, len(entries), 6):
                lines.append("  " + "   ".join(entries[i: i + 6]))
        else:
            lines += ["", "damage law: --format csv --distribution damage"]
        return "\n".join(lines)


def _percentiles(values: np.ndarray, probability: np.ndarray) -> dict[str, int]:
    cumulative = np.cumsum(probability) / probability.sum()
    return {f"p{q}": int(values[np.argmax(cumulative >= q / 100 - 1e-12)]) for q in PERCENTILES}


def _build(spec: RaidSpec, walk: _Walk, air: _AirBattle | None, joint: np.ndarray,
           damage: np.ndarray, method: str, trials: int | None, seed: int | None,
           started: float) -> RaidResult:
    exact = method == "exact"
    n = None if exact else float(trials)
    values = np.arange(len(damage))
    expected_damage, damage_se = _mean_se(values, damage, n)
    ipc = walk.escort_ipc[:, None] + walk.bomber_ipc[None, :]
    attacker_loss, attacker_se = _mean_se(ipc, joint, n)
    over = np.broadcast_to(len(spec.bombers) - np.arange(joint.shape[1]), joint.shape)
    over_mean, over_se = _mean_se(over, joint, n)
    probability = joint / joint.sum()
    k_law, m_law = probability.sum(axis=1), probability.sum(axis=0)
    survivors = (weighted_sum(k_law, walk.escorts_left)
                 + weighted_sum(m_law, walk.bombers_left))
    if air is None:
        d_survivors, d_loss, d_se = {}, 0.0, 0.0
    else:
        d_survivors, d_loss, d_se = (air.defender_survivors, air.defender_ipc_loss,
                                     0.0 if exact else air.defender_ipc_stderr)
    stderr = {"expected_damage": damage_se, "attacker_ipc_loss": attacker_se,
              "defender_ipc_loss": d_se, "tuv_swing": math.hypot(attacker_se, d_se),
              "bombers_over_target": over_se}
    means = {"expected_damage": expected_damage, "attacker_ipc_loss": attacker_loss,
             "defender_ipc_loss": d_loss, "tuv_swing": d_loss - attacker_loss,
             "bombers_over_target": over_mean}
    ci95 = {key: (mean - Z95 * stderr[key], mean + Z95 * stderr[key])
            for key, mean in means.items()}
    law = damage / damage.sum()
    keep = law > 0
    bombers, escorts, interceptors = raid_units(spec.rules)
    return RaidResult(
        spec.rules.id, method, trials, seed, format_army(spec.attacker),
        format_army(spec.defender), spec.attacker_tech, spec.defender_tech, spec.target_value,
        spec.facility, spec.aa_fires, spec.order.text, spec.dice, **means,
        attacker_survivors={u: float(s) for u, s in zip(walk.units, survivors, strict=True)},
        defender_survivors=d_survivors, damage_percentiles=_percentiles(values, law),
        stderr=stderr, ci95=ci95, elapsed_s=time.perf_counter() - started,
        damage_law=(values[keep], law[keep]),
        attacker_units=tuple(u for u in spec.rules.units if u in bombers or u in escorts),
        defender_units=tuple(u for u in spec.rules.units if u in interceptors),
        aa_value=spec.aa_value, bomber_cap=spec.bomber_cap, total_cap=spec.total_cap,
        notes=spec.notes, target=_target_text(spec),
        aa_source={"territory_gun": "the territory's AA gun",
                   "built_in": "built-in AA"}.get(spec.rules.flags["raid_aa"], ""),
        die_law=None if spec.rules.die_law is None else spec.rules.die_law.text())


def _target_text(spec: RaidSpec) -> str:
    if spec.facility:
        what = spec.rules.facilities[spec.facility].description or spec.facility
        return f"{'an' if what[0] in 'aeiou' else 'a'} {what}"
    if spec.target_value is not None:
        return f"a territory of production value {spec.target_value}"
    return "a territory"


def raid(
    rules: str | Ruleset = "revised",
    attacker: Army = None,
    defender: Army = None,
    target_value: int | None = None,
    facility: str | None = None,
    aa: bool = False,
    trials: int = DEFAULT_TRIALS,
    seed: int | None = None,
    method: str = "auto",
    attacker_tech: Techs = None,
    defender_tech: Techs = None,
    attacker_ool: Order = None,
    dice: str = "standard",
    progress: Callable[..., None] | None = None,
    start_step: str = "start",
    hits_on_attacker: int = 0,
    die_law: Any = None,
) -> RaidResult:
    """A strategic bombing raid (module docstring; docs/editions.md section 5).

    rules: an edition id, a Ruleset or the path of an edition file; attacker: bombers (and,
    where the edition has an air battle, escorts), army notation or {unit: count}; defender:
    interceptors (editions with an air battle only); target_value: the territory's production
    value (required where the damage cap depends on it); facility: what is bombed, in editions
    with facilities (1940-2e: major, minor, airbase, navalbase); aa: the territory has an AA gun
    (editions whose gun fires at raids; elsewhere the target's built-in AA fires, or none);
    attacker_tech / defender_tech, attacker_ool, method, trials, seed and progress as for
    :func:`battlecalc.simulate`; dice: "standard" or "low_luck"; die_law: a biased die, as
    for simulate (every die of the raid: air battle, AA, damage).  `method="auto"` solves
    exactly (a raid is always small enough) unless the air battle's engine run says otherwise.
    start_step, hits_on_attacker: a raid in progress (a TripleA save): "aa_fire" (the air
    battle over), "aa_casualties" (AA rolled, hits_on_attacker hits on the bombers to take),
    "bombing" (the AA's casualties removed); the attacker is then the bombers standing, and
    losses count from there.
    """
    started = time.perf_counter()
    run = make_run(method, trials, seed, progress)
    spec = make_raid(rules, attacker, defender, target_value, facility, aa, attacker_tech,
                     defender_tech, attacker_ool, dice, start_step, hits_on_attacker, die_law)
    walk = _walk(spec)
    air = _air_battle(spec, walk, run.method, run.trials, run.seed, run.progress)
    method = air.method if air else ("mc" if run.method == "mc" else "exact")
    k_weights = air.k_weights if air else np.eye(1, len(walk.bombers_before))[0]
    if method == "exact":
        joint, damage = _exact(spec, walk, k_weights)
        return _build(spec, walk, air, joint, damage, "exact", None, None, started)
    seed = air.seed if air else run.mc_seed()
    if air is None:
        k_weights = k_weights * run.trials
    joint, damage = _monte_carlo(spec, walk, k_weights, run.trials, seed, run.progress)
    return _build(spec, walk, air, joint, damage, "mc", run.trials, seed, started)


__all__ = ["RaidResult", "RaidSpec", "make_raid", "raid", "raid_units"]
