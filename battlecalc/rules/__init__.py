"""Editions as data: one TOML file per edition, validated into frozen dataclasses.

Raw TOML -> :func:`validate` (every error at once, each with a path) -> :class:`Ruleset`.
Defaults live in the schema below; an edition file states only what differs.  Adding an
edition means adding a file here; the kernels never look at edition ids.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
import re
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from types import MappingProxyType
from typing import Any

from ..errors import BattleInputError, quoted
from ..files import read_regular_file

FORMAT_VERSION = 1
DOMAINS = ("land", "air", "sea")

# Rule flags: name -> (allowed values, default, what it means).  Every behaviour that differs
# between editions is a named flag here (rules reference, "Decisions" and section 10).
RULE_FLAGS: dict[str, tuple[tuple[Any, ...], Any, str]] = {
    "aa_dice": (
        ("per_aircraft", "per_gun"),
        "per_aircraft",
        "per_aircraft: one AA die per attacking aircraft however many guns (Revised, AA50); "
        "per_gun: min(aa_shots x guns, aircraft) dice (1942 2E, 1940 2E)",
    ),
    "aa_casualties": (
        ("own_aircraft", "attacker_chooses"),
        "own_aircraft",
        "own_aircraft: each AA die is rolled at its own aircraft, so losses per type are "
        "binomial (Revised); attacker_chooses: the attacker takes AA hits by its order of "
        "losses restricted to aircraft (1942 2E)",
    ),
    "aa_rounds": ((1,), 1, "AA fires in the first round only"),
    "attacker_sub_first_strike": (
        ("never", "always", "unless_enemy_destroyer"),
        "never",
        "when the attacker's submarines fire in an opening step of their own, before general "
        "fire, at sea units only (subs that do not strike fire with the other units)",
    ),
    "defender_sub_first_strike": (
        ("never", "always", "unless_enemy_destroyer"),
        "never",
        "the same for the defender's submarines",
    ),
    "strike_casualties_fire_back": (
        ("never", "with_own_destroyer"),
        "never",
        "whether units sunk in the opening step still fire in general fire (Revised: a side "
        "with a destroyer)",
    ),
    "air_hits_subs": (
        ("always", "with_own_destroyer"),
        "always",
        "whether aircraft may hit submarines without a destroyer on their side",
    ),
    "submerge_timing": (
        ("end_of_round", "before_fire", "never"),
        "never",
        "when submarines may submerge (never while an enemy destroyer is present)",
    ),
    "lone_attacking_transports": (
        ("one_volley_then_retreat", "destroyed"),
        "destroyed",
        "one_volley_then_retreat: an attacking force left with transports only takes one more "
        "volley, then retreats; destroyed: no special rule (defenceless units are lost without "
        "dice when the enemy can hit them)",
    ),
    "bombard_return_fire": (
        (True, False),
        False,
        "whether shore-bombardment hits join round 1, their casualties firing back (else they "
        "are taken before round 1)",
    ),
    "bombard_per_landing_unit": (
        (True, False),
        False,
        "at most one bombarding ship per land unit landed from transports",
    ),
    "amphibious_retreat": (
        ("none", "air_only", "air_and_overland"),
        "none",
        "which attackers of an amphibious assault may retreat",
    ),
    # strategic bombing raids (battlecalc.raids; docs/editions.md section 5)
    "raid_aa": (
        ("none", "territory_gun", "built_in"),
        "none",
        "AA fire at raiding bombers, one die each at the AA unit's aa_value (radar included): "
        "none; territory_gun: only when the raid says the territory has an AA gun (Classic, "
        "Revised, AA50); built_in: always, the industrial complex's or facility's own AA "
        "(1942 2E, 1940 2E; AA units do not fire at raids)",
    ),
    "raid_damage_cap": (
        ("none", "target_value_per_bomber", "twice_target_value", "facility"),
        "none",
        "the most damage a raid deals: none (Classic); target_value_per_bomber: each bomber's "
        "damage at most the territory's production value (Revised); twice_target_value: the "
        "total at most twice that value (AA50, 1942 2E); facility: the total at most the "
        "facility's max_damage (1940 2E, [facilities])",
    ),
    "air_battle": (
        (True, False),
        False,
        "a raid opens with one round of air battle: attacking units fire at their air_attack "
        "(escorts: units with air_attack that do not bomb), interceptors (defending units with "
        "air_defense) at their air_defense (1940 2E)",
    ),
    # the defender's reactions to a sea attack, before any battle (issue 31; 1940 2E;
    # battlecalc.reactions, docs/rules.md)
    "scramble": (
        (0, 3),
        0,
        "the most aircraft (units with can_scramble) an operative air base next to an "
        "attacked sea zone may scramble into its battle (1940 2E: 3); 0: no scramble",
    ),
    "kamikaze": (
        (0, 2),
        0,
        "a kamikaze token's hit value (1940 2E: 2, a hit on 1-2): each token the defender "
        "spends strikes one of the attacker's surface warships before a sea battle in a "
        "kamikaze zone; 0: no kamikaze",
    ),
    "formula_flips": (
        ("A2", "A1"),
        "A2",
        "formula model only (rules reference 9.3 item 9): A2: a loss point removes a piece "
        "flipped in an earlier exchange, else flips a face-up piece; A1: a piece flipped "
        "earlier in the same exchange may also be removed",
    ),
}
# Combat models: "dice" (A&A dice battles, the engine) and models whose edition files carry a
# section of their own, validated by the module named here (imported only to load such a file:
# edition data knows no model's code).
MODELS = ("dice", "formula")
MODEL_SECTIONS = {"formula": "battlecalc.formula.schema"}

# Unit fields: name -> (type check, default).  `None` default means required.
_REQUIRED = object()
# A unit name or alias as army notation reads it (battlecalc.army: a letter, then letters and
# underscores, matched case-insensitively): anything else could never be typed.
_TYPEABLE = re.compile(r"[^\W\d_][^\W\d]*\Z")
# Unit fields a raid uses and a battle never reads (techs changing only these are raid techs).
RAID_FIELDS = ("raid_dice", "raid_best_die", "raid_bonus", "raid_targets", "air_attack",
               "air_defense")


def _is_int(lo: int, hi: int):
    def check(value: Any) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            return f"expected an integer {lo}..{hi}, got {value!r}"
        return None

    return check


def _is_bool(value: Any) -> str | None:
    return None if isinstance(value, bool) else f"expected true or false, got {value!r}"


def _is_str_list(value: Any) -> str | None:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        return f"expected a list of names, got {value!r}"
    return None


def _is_domain(value: Any) -> str | None:
    return None if value in DOMAINS else f"expected one of {', '.join(DOMAINS)}, got {value!r}"


def _is_name_or_empty(value: Any) -> str | None:
    return None if isinstance(value, str) else f"expected a unit name, got {value!r}"


UNIT_FIELDS: dict[str, tuple[Any, Any]] = {
    "aliases": (_is_str_list, []),
    "cost": (_is_int(0, 1000), _REQUIRED),
    "attack": (_is_int(0, 6), _REQUIRED),
    "defense": (_is_int(0, 6), _REQUIRED),
    "domain": (_is_domain, _REQUIRED),
    "hp": (_is_int(1, 3), 1),
    # dice rolled per unit on attack / defence; with best_die only the best one counts (at most
    # one hit a unit)
    "attack_dice": (_is_int(1, 3), 1),
    "defense_dice": (_is_int(1, 3), 1),
    "best_die": (_is_bool, False),
    "can_attack": (_is_bool, True),
    # can_be_casualty=false: never chosen as a casualty (Revised AA gun); such a unit does not
    # count as a unit left and is not reported among survivors
    "can_be_casualty": (_is_bool, True),
    # AA: hit value against attacking aircraft (0 = not an AA unit), shots per unit with
    # aa_dice = "per_gun"
    "aa_value": (_is_int(0, 6), 0),
    "aa_shots": (_is_int(0, 10), 0),
    # lost without dice when its side has nothing else left and the enemy can still hit
    "defenceless": (_is_bool, False),
    # order-of-losses rank: lower ranks are lost first, before cost is considered
    "loss_rank": (_is_int(-9, 9), 0),
    # sea abilities (used by sea battles)
    "submarine": (_is_bool, False),
    "anti_sub": (_is_bool, False),
    "transport": (_is_bool, False),
    "carrier_capacity": (_is_int(0, 4), 0),
    "bombard": (_is_int(0, 6), 0),
    "damaged_form": (_is_name_or_empty, ""),
    # strategic bombing raids: damage dice over the target (0: the unit does not bomb), summed
    # or the best one (raid_best_die), plus raid_bonus; raid_targets: the facilities it may
    # raid (empty: any target)
    "raid_dice": (_is_int(0, 3), 0),
    "raid_best_die": (_is_bool, False),
    "raid_bonus": (_is_int(0, 20), 0),
    "raid_targets": (_is_str_list, []),
    # die values in a raid's air battle (rule flag air_battle): as escort or bomber, as
    # interceptor (0: does not fire there, and a defender without it does not intercept)
    "air_attack": (_is_int(0, 6), 0),
    "air_defense": (_is_int(0, 6), 0),
    # may scramble from an air base into a sea battle next to it (rule flag scramble)
    "can_scramble": (_is_bool, False),
}
# [facilities.<name>]: what a raid may target where the edition has facilities (1940 2E).
FACILITY_FIELDS: dict[str, tuple[Any, Any]] = {
    "max_damage": (_is_int(0, 1000), _REQUIRED),
    "description": (lambda v: None if isinstance(v, str) else f"expected text, got {v!r}", ""),
}


@dataclass(frozen=True)
class Unit:
    """One unit type of an edition, with every capability the kernels may need."""

    name: str
    aliases: tuple[str, ...]
    cost: int
    attack: int
    defense: int
    domain: str
    hp: int = 1
    attack_dice: int = 1
    defense_dice: int = 1
    best_die: bool = False
    can_attack: bool = True
    can_be_casualty: bool = True
    aa_value: int = 0
    aa_shots: int = 0
    defenceless: bool = False
    loss_rank: int = 0
    submarine: bool = False
    anti_sub: bool = False
    transport: bool = False
    carrier_capacity: int = 0
    bombard: int = 0
    damaged_form: str = ""
    raid_dice: int = 0
    raid_best_die: bool = False
    raid_bonus: int = 0
    raid_targets: tuple[str, ...] = ()
    air_attack: int = 0
    air_defense: int = 0
    can_scramble: bool = False

    @property
    def is_air(self) -> bool:
        return self.domain == "air"

    @property
    def is_land(self) -> bool:
        return self.domain == "land"

    @property
    def is_aa(self) -> bool:
        return self.aa_value > 0

    def value(self, role: str) -> int:
        """Combat value when attacking (`role="attack"`) or defending."""
        return self.attack if role == "attack" else self.defense

    def dice(self, role: str) -> int:
        """Dice the unit rolls when attacking (`role="attack"`) or defending."""
        return self.attack_dice if role == "attack" else self.defense_dice


@dataclass(frozen=True)
class Support:
    """On attack, each `giver` present gives +`bonus` to `count` units of the `targets` (taken
    in the order listed); a unit gets at most one support bonus."""

    giver: str
    targets: tuple[str, ...]
    bonus: int = 1
    count: int = 1


SUPPORT_FIELDS: dict[str, tuple[Any, Any]] = {
    "giver": (_is_name_or_empty, _REQUIRED),
    "targets": (_is_str_list, _REQUIRED),
    "bonus": (_is_int(1, 6), 1),
    "count": (_is_int(1, 10), 1),
}


@dataclass(frozen=True)
class Facility:
    """A target of strategic bombing raids (1940 2E): the most damage a raid deals it."""

    name: str
    max_damage: int
    description: str = ""


@dataclass(frozen=True)
class Tech:
    name: str
    description: str
    changes: MappingProxyType  # unit name -> {field: value}
    support_changes: MappingProxyType = field(  # giver -> {field: value}
        default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True, eq=False)
class Ruleset:
    id: str
    name: str
    description: str
    units: MappingProxyType  # canonical name -> Unit, in file order
    flags: MappingProxyType  # flag name -> value
    techs: MappingProxyType  # tech name -> Tech
    aliases: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    model: str = "dice"  # "dice" (A&A dice battles) or "formula" (seed 002, battlecalc.formula)
    formula: MappingProxyType | None = None  # the validated [formula] table of a formula model
    die_size: int = 6
    supports: tuple[Support, ...] = ()
    facilities: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    # a biased die (battlecalc.die_law.DieLaw: the law of its die_size faces) the battle is
    # played with, None: the edition's fair die (with_die_law)
    die_law: Any = None

    def unit(self, name: str) -> Unit:
        return self.units[name]

    @property
    def die(self):
        """The die every chance to hit is computed from (battlecalc.dice.hit_ratio): the die
        law, or the edition's fair die of die_size faces."""
        return self.die_size if self.die_law is None else self.die_law

    @property
    def fair(self) -> Ruleset:
        """The same ruleset with the edition's fair die (itself where it has no die law)."""
        return self if self.die_law is None else self.__dict__["_fair"]

    def with_die_law(self, law) -> Ruleset:
        """The same edition (and technologies) played with a biased die (a DieLaw of
        die_size faces; None: the fair die): one object per ruleset and law, so compiled
        tables, which are kept by their ruleset, are kept apart for each law."""
        if law == self.die_law:
            return self
        if self.die_law is not None:  # (from the ruleset of the fair die)
            return self.__dict__["_fair"].with_die_law(law)
        cache = self.__dict__.setdefault("_with_die_law", {})
        if law not in cache:
            biased = dataclasses.replace(self, die_law=law)
            biased.__dict__["_fair"] = self
            cache[law] = biased
        return cache[law]

    def with_techs(self, techs: tuple[str, ...] | list[str]) -> Ruleset:
        """The same edition with the given technologies applied to its unit table (one object
        per edition and set of technologies, so compiled tables can be cached by it)."""
        key = tuple(techs)
        if not key:
            return self
        if self.die_law is not None:  # (the fair ruleset's, with the same die)
            return self.__dict__["_fair"].with_techs(key).with_die_law(self.die_law)
        cache = self.__dict__.setdefault("_with_techs", {})
        if key not in cache:
            cache[key] = self._apply_techs(key)
        return cache[key]

    def _apply_techs(self, techs: tuple[str, ...]) -> Ruleset:
        units = dict(self.units)
        supports = self.supports
        for tech_name in techs:
            if tech_name not in self.techs:
                raise BattleInputError(
                    f"unknown technology {quoted(tech_name)} for {self.id}; "
                    f"known: {', '.join(self.techs) or 'none'}"
                )
            tech = self.techs[tech_name]
            for unit_name, overrides in tech.changes.items():
                units[unit_name] = dataclasses.replace(units[unit_name], **overrides)
            supports = tuple(dataclasses.replace(s, **tech.support_changes.get(s.giver, {}))
                             for s in supports)
        problems = unit_problems(units, facilities=self.facilities) if len(techs) > 1 else ()
        if problems:  # each technology alone was checked when the edition was loaded
            raise BattleInputError(
                f"technologies {', '.join(techs)} of {self.id} cannot be used together: "
                f"units.{problems[0]}")
        return dataclasses.replace(self, units=MappingProxyType(units), supports=supports)


class RulesFileError(BattleInputError):
    """An edition file that does not validate; the message lists every problem with a path."""


def _fields(spec: Any, schema: dict[str, tuple[Any, Any]], path: str,
            errors: list[str]) -> dict[str, Any] | None:
    """A table checked against a field schema, defaults filled in; None if it has problems
    (each appended to errors with its path)."""
    if not isinstance(spec, dict):
        errors.append(f"{path}: expected a table")
        return None
    values: dict[str, Any] = {}
    ok = True
    for key, value in spec.items():
        if key not in schema:
            errors.append(f"{path}.{key}: unknown key")
            ok = False
        elif problem := schema[key][0](value):
            errors.append(f"{path}.{key}: {problem}")
            ok = False
        else:
            values[key] = value
    for key, (_, default) in schema.items():
        if key not in values and key not in spec:
            if default is _REQUIRED:
                errors.append(f"{path}.{key}: missing")
                ok = False
            else:
                values[key] = default
    return values if ok else None


def validate(raw: dict[str, Any], source: str) -> Ruleset:
    """Check a parsed edition file (its base merged in) and build its Ruleset; raise with every
    error at once."""
    errors: list[str] = []
    edition_id = raw.get("id")
    prefix = edition_id if isinstance(edition_id, str) and edition_id else source

    known_top = {"format", "id", "name", "description", "model", "die_size", "rules", "units",
                 "support", "tech", "base", "facilities", *MODEL_SECTIONS}
    for key in raw:
        if key not in known_top:
            errors.append(f"{prefix}.{key}: unknown key")
    if raw.get("format") != FORMAT_VERSION:
        errors.append(f"{prefix}.format: expected {FORMAT_VERSION}, got {raw.get('format')!r}")
    for key in ("id", "name"):
        if not isinstance(raw.get(key), str) or not raw.get(key):
            errors.append(f"{prefix}.{key}: expected a non-empty string")
    die_size = raw.get("die_size", 6)
    if problem := _is_int(2, 100)(die_size):
        errors.append(f"{prefix}.die_size: {problem}")

    flags: dict[str, Any] = {name: spec[1] for name, spec in RULE_FLAGS.items()}
    raw_rules = raw.get("rules", {})
    if not isinstance(raw_rules, dict):
        errors.append(f"{prefix}.rules: expected a table")
        raw_rules = {}
    for name, value in raw_rules.items():
        if name not in RULE_FLAGS:
            errors.append(f"{prefix}.rules.{name}: unknown rule flag")
        elif value not in RULE_FLAGS[name][0] or type(value) is not type(RULE_FLAGS[name][1]):
            allowed = ", ".join(repr(v) for v in RULE_FLAGS[name][0])
            errors.append(f"{prefix}.rules.{name}: expected one of {allowed}, got {value!r}")
        else:
            flags[name] = value

    facilities: dict[str, Facility] = {}
    raw_facilities = raw.get("facilities", {})
    if not isinstance(raw_facilities, dict):
        errors.append(f"{prefix}.facilities: expected a table of facilities")
        raw_facilities = {}
    for name, spec in raw_facilities.items():
        values = _fields(spec, FACILITY_FIELDS, f"{prefix}.facilities.{name}", errors)
        if values is not None:
            facilities[name] = Facility(name=name, **values)

    units: dict[str, Unit] = {}
    raw_units = raw.get("units", {})
    if not isinstance(raw_units, dict) or not raw_units:
        errors.append(f"{prefix}.units: expected a table of units")
        raw_units = {}
    for unit_name, spec in raw_units.items():
        if isinstance(spec, dict) and "base_unit" in spec:  # merged() takes it from a child
            errors.append(f"{prefix}.units.{unit_name}.base_unit: only in a file with `base =` "
                          "(it names the base's unit that this one is)")
            spec = {k: v for k, v in spec.items() if k != "base_unit"}
        values = _fields(spec, UNIT_FIELDS, f"{prefix}.units.{unit_name}", errors)
        if values is not None:
            values["aliases"] = tuple(a.lower() for a in values["aliases"])
            values["raid_targets"] = tuple(values["raid_targets"])
            units[unit_name] = Unit(name=unit_name, **values)
    for unit_name in raw_units:
        _check_name(unit_name, f"{prefix}.units.{unit_name}", "unit name", errors)
    for unit in units.values():
        for alias in unit.aliases:
            _check_name(alias, f"{prefix}.units.{unit.name}.aliases", "alias", errors)
    errors.extend(f"{prefix}.units.{problem}"
                  for problem in unit_problems(units, raw_units, raw_facilities))
    _check_raid_flags(flags, units, raw_facilities, prefix, errors)

    supports: list[Support] = []
    raw_support = raw.get("support", [])
    if not isinstance(raw_support, list):
        errors.append(f"{prefix}.support: expected a list of tables (one [[support]] each)")
        raw_support = []
    for i, spec in enumerate(raw_support):
        path = f"{prefix}.support[{i}]"
        values = _fields(spec, SUPPORT_FIELDS, path, errors)
        if values is None:
            continue
        for name in (values["giver"], *values["targets"]):
            if name not in raw_units:
                errors.append(f"{path}: unknown unit {name!r}")
        supports.append(Support(values["giver"], tuple(values["targets"]), values["bonus"],
                                values["count"]))

    aliases: dict[str, str] = {}  # every name that types a unit, lower-case -> the unit
    for unit in units.values():
        for alias in dict.fromkeys((unit.name.lower(), *unit.aliases)):
            if alias in aliases and aliases[alias] != unit.name:
                errors.append(
                    f"{prefix}.units.{unit.name}.aliases: {alias!r} already names "
                    f"{aliases[alias]!r}"
                )
            aliases[alias] = unit.name

    techs: dict[str, Tech] = {}
    raw_techs = raw.get("tech", {})
    if not isinstance(raw_techs, dict):
        errors.append(f"{prefix}.tech: expected a table")
        raw_techs = {}
    givers = {s.giver for s in supports}
    for tech_name, spec in raw_techs.items():
        path = f"{prefix}.tech.{tech_name}"
        if not isinstance(spec, dict):
            errors.append(f"{path}: expected a table")
            continue
        changes: dict[str, dict[str, Any]] = {}
        support_changes: dict[str, dict[str, Any]] = {}
        for key, overrides in spec.items():
            if key == "description":
                continue
            if key == "support":  # support.<giver> = {count = 2}
                for giver, fields_ in (overrides.items() if isinstance(overrides, dict)
                                       else [("", overrides)]):
                    if giver not in givers:
                        errors.append(f"{path}.support.{giver}: no support of that giver")
                    elif _fields(fields_, {k: (c, None) for k, (c, _) in SUPPORT_FIELDS.items()
                                           if k not in ("giver",)},
                                 f"{path}.support.{giver}", errors) is not None:
                        unknown = [t for t in fields_.get("targets", ()) if t not in raw_units]
                        if unknown:
                            errors.append(f"{path}.support.{giver}.targets: unknown unit "
                                          f"{unknown[0]!r}")
                        else:
                            support_changes[giver] = {
                                k: tuple(v) if isinstance(v, list) else v
                                for k, v in fields_.items()}
                continue
            if key not in raw_units:
                errors.append(f"{path}.{key}: unknown unit")
                continue
            if key not in units:  # the unit itself is invalid; already reported
                continue
            if _fields(overrides, {k: (c, None) for k, (c, _) in UNIT_FIELDS.items()
                                   if k != "aliases"}, f"{path}.{key}", errors) is not None:
                changes[key] = {field_: tuple(value) if isinstance(value, list) else value
                                for field_, value in overrides.items()}
        if not isinstance(spec.get("description", ""), str):
            errors.append(f"{path}.description: expected text, got {spec['description']!r}")
        changed = {name: dataclasses.replace(units[name], **fields_)
                   for name, fields_ in changes.items()}
        errors.extend(f"{path}: with it, units.{problem}"
                      for problem in unit_problems({**units, **changed}, raw_units,
                                                   raw_facilities, only=changed))
        techs[tech_name] = Tech(tech_name, str(spec.get("description", "")),
                                MappingProxyType(changes), MappingProxyType(support_changes))

    model = raw.get("model", "dice")
    sections: dict[str, Any] = {}
    if model not in MODELS:
        allowed = ", ".join(repr(m) for m in MODELS)
        errors.append(f"{prefix}.model: expected one of {allowed}, got {model!r}")
    for section, module_name in MODEL_SECTIONS.items() if model in MODELS else ():
        if section == model:
            if section not in raw:
                errors.append(f'{prefix}.{section}: missing (required with model = "{model}")')
            else:  # the model's own schema, loaded only for its editions
                module = importlib.import_module(module_name)
                sections[section] = module.validate_section(raw[section], prefix, units, errors)
        elif section in raw:
            errors.append(f'{prefix}.{section}: only allowed with model = "{section}"')

    if errors:
        raise RulesFileError("invalid rules file:\n  " + "\n  ".join(errors))
    ruleset = Ruleset(
        id=raw["id"],
        name=raw["name"],
        description=raw.get("description", ""),
        units=MappingProxyType(units),
        flags=MappingProxyType(flags),
        techs=MappingProxyType(techs),
        aliases=MappingProxyType(aliases),
        model=model,
        formula=sections.get("formula"),
        die_size=die_size,
        supports=tuple(supports),
        facilities=MappingProxyType(facilities),
    )
    ruleset.__dict__["_checked"] = True  # what check_ruleset would find: nothing
    return ruleset


def _check_name(name: str, path: str, what: str, errors: list[str]) -> None:
    """A unit name or alias must be typeable in army notation (read case-insensitively: a
    unit named ``aaGun``, as TripleA names it, is typed ``aagun`` or ``aaGun``)."""
    if not _TYPEABLE.match(name):
        errors.append(
            f"{path}: {what} {name!r} cannot be typed in an army: use letters and "
            "underscores, starting with a letter (no digits, spaces or hyphens)")


def unit_problems(units: dict[str, Unit], names: Any = None, facilities: Any = (),
                  only: dict[str, Unit] | None = None) -> list[str]:
    """What the engine cannot model in a unit table, as "<unit>.<field>: why" (each to be
    prefixed with the table's path).  names: every unit name of the file (a damaged_form may
    name a unit that failed its own checks); facilities: the raid facilities' names; only:
    check these units (a technology's changed units; the damaged forms they name are checked
    too)."""
    names = units if names is None else names
    problems = []
    for unit in (units if only is None else only).values():
        form = unit.damaged_form
        if form == unit.name:
            problems.append(f"{unit.name}.damaged_form: names the unit itself (a damaged "
                            "unit is another unit type, e.g. damaged_battleship)")
        elif form and form not in names:
            problems.append(f"{unit.name}.damaged_form: unknown unit {form!r}")
        elif form and unit.hp > 2:
            problems.append(
                f"{unit.name}.hp: {unit.hp} with a damaged_form is not modelled (a unit with a "
                "damaged form takes one hit to become it and the damaged form takes the last: "
                "hp = 2; without damaged_form a unit may take up to 3 hits)")
        elif form and unit.hp == 2 and form in units:
            damaged = units[form]
            if damaged.hp != 1:
                problems.append(f"{form}.hp: {damaged.hp}, but {form} is the damaged form of "
                                f"{unit.name} and takes its last hit: expected 1")
            if (damaged.domain, damaged.submarine) != (unit.domain, unit.submarine):
                problems.append(f"{unit.name}.damaged_form: {form!r} is not the same kind of "
                                "unit (domain and submarine must match)")
        for target in unit.raid_targets:
            if target not in facilities:
                problems.append(f"{unit.name}.raid_targets: unknown facility {target!r}")
    return problems


# Unit fields that a battle never reads in a role (raid fields never in a battle).
_NOT_READ = {"attack": {"defense", "defense_dice", "aa_value", "aa_shots", *RAID_FIELDS},
             "defense": {"attack", "attack_dice", "can_attack", "bombard", *RAID_FIELDS}}


def tech_affects(ruleset: Ruleset, tech_name: str, army: Any, role: str) -> bool:
    """Whether a technology changes anything a battle reads for a side with these units (and
    their damaged forms) in this role ("attack" or "defense"); supports act on attack."""
    teched = ruleset.with_techs((tech_name,))
    names = set(army) | {ruleset.units[n].damaged_form for n in army} - {""}
    read = [f.name for f in dataclasses.fields(Unit) if f.name not in _NOT_READ[role]]
    if any(getattr(teched.units[n], f) != getattr(ruleset.units[n], f)
           for n in names for f in read):
        return True
    return role == "attack" and any(
        new != old for new, old in zip(teched.supports, ruleset.supports, strict=True)
        if old.giver in names)


def _check_raid_flags(flags: dict[str, Any], units: dict[str, Unit], raw_facilities: dict,
                      prefix: str, errors: list[str]) -> None:
    """The raid flags need what they refer to: an AA unit, facilities."""
    if flags["raid_aa"] != "none" and units and not any(u.aa_value for u in units.values()):
        errors.append(f"{prefix}.rules.raid_aa: {flags['raid_aa']!r} needs a unit with "
                      "aa_value (its value is the AA's hit value at raids)")
    if flags["raid_damage_cap"] == "facility" and not raw_facilities:
        errors.append(f'{prefix}.rules.raid_damage_cap: "facility" needs [facilities.<name>] '
                      "tables (each with max_damage)")


def _as_raw(ruleset: Ruleset) -> dict[str, Any]:
    """A Ruleset as the parsed edition file it could come from (for :func:`check_ruleset`)."""
    def plain(value: Any) -> Any:
        return list(value) if isinstance(value, tuple) else value

    raw: dict[str, Any] = {
        "format": FORMAT_VERSION, "id": ruleset.id, "name": ruleset.name,
        "description": ruleset.description, "model": ruleset.model,
        "die_size": ruleset.die_size, "rules": dict(ruleset.flags),
        "units": {name: {f.name: plain(getattr(unit, f.name))
                         for f in dataclasses.fields(Unit) if f.name != "name"}
                  for name, unit in ruleset.units.items()},
        "support": [{f.name: plain(getattr(s, f.name)) for f in dataclasses.fields(Support)}
                    for s in ruleset.supports],
        "facilities": {name: {"max_damage": f.max_damage, "description": f.description}
                       for name, f in ruleset.facilities.items()},
        "tech": {name: {"description": tech.description,
                        **{unit: {k: plain(v) for k, v in fields_.items()}
                           for unit, fields_ in tech.changes.items()},
                        **({"support": {giver: {k: plain(v) for k, v in fields_.items()}
                                        for giver, fields_ in tech.support_changes.items()}}
                           if tech.support_changes else {})}
                 for name, tech in ruleset.techs.items()},
    }
    for name, unit in ruleset.units.items():
        if not isinstance(unit, Unit) or unit.name != name:
            raise TypeError(f"units[{name!r}] is not the Unit named {name!r}")
    if ruleset.model in MODEL_SECTIONS and ruleset.formula is not None:
        table = dict(ruleset.formula)
        table.pop("piece_types", None)
        rows = table.get("loss_table") or ()
        table["loss_table"] = [
            {**({} if i == len(rows) - 1 else {"diff_at_least": row[0]}),
             "attacker_loses": row[1], "defender_loses": row[2]} for i, row in enumerate(rows)]
        table["level_thresholds"] = list(table.get("level_thresholds", ()))
        raw[ruleset.model] = table
    return raw


def check_ruleset(ruleset: Ruleset) -> Ruleset:
    """A Ruleset built or changed in Python (not loaded from a file) checked as its edition file
    would be; BattleInputError naming every problem.  Checked once per object."""
    if ruleset.__dict__.get("_checked"):
        return ruleset
    try:
        rebuilt = validate(_as_raw(ruleset), "Ruleset")
        if dict(ruleset.aliases) != dict(rebuilt.aliases):
            raise RulesFileError("invalid rules file:\n  aliases: expected every unit's name "
                                 "and aliases (lower-case), as validate() builds them")
    except RulesFileError as exc:
        raise BattleInputError(
            f"invalid Ruleset {quoted(ruleset.id)}: "
            f"{str(exc).removeprefix('invalid rules file:').strip()}") from None
    except (AttributeError, TypeError, ValueError) as exc:
        raise BattleInputError(f"invalid Ruleset {quoted(getattr(ruleset, 'id', '?'))}: "
                               f"{exc}") from None
    ruleset.__dict__["_checked"] = True
    return ruleset


def _renames(child: dict[str, Any]) -> dict[str, str]:
    """{base unit: child unit} of the child's ``base_unit`` keys (a unit that is the base's
    unit under another name); RulesFileError for one that cannot be."""
    units = child.get("units")
    renames: dict[str, str] = {}
    for name, entry in (units.items() if isinstance(units, dict) else ()):
        if not isinstance(entry, dict) or "base_unit" not in entry:
            continue
        old = entry["base_unit"]
        if not isinstance(old, str) or not old:
            raise RulesFileError(f"units.{name}.base_unit: expected the name of a unit of the "
                                 f"base, got {old!r}")
        if old in renames:
            raise RulesFileError(f"units.{name}.base_unit: {old!r} is already the base unit "
                                 f"of {renames[old]!r}")
        if old != name:
            renames[old] = name
    return renames


def _renamed(base: dict[str, Any], renames: dict[str, str]) -> dict[str, Any]:
    """The base with its units renamed ({old: new}): the unit tables (in place, so the unit
    order is kept), and every name that refers to a unit (damaged_form, the support list,
    the technologies' unit and support tables); each old name becomes an alias."""
    units = base.get("units") if isinstance(base.get("units"), dict) else {}
    for old, new in renames.items():
        if old not in units:
            raise RulesFileError(f"units.{new}.base_unit: the base has no unit {old!r} (its "
                                 f"units: {', '.join(units)})")
        if new in units and new not in renames:
            raise RulesFileError(f"units.{new}.base_unit: the base already has a unit {new!r}")

    def name(value: Any) -> Any:
        return renames.get(value, value) if isinstance(value, str) else value

    def names(value: Any) -> Any:
        return [name(v) for v in value] if isinstance(value, list) else value

    out = dict(base)
    table = {}
    for unit, entry in units.items():
        if isinstance(entry, dict):
            entry = dict(entry)
            if "damaged_form" in entry:
                entry["damaged_form"] = name(entry["damaged_form"])
            if unit in renames:
                aliases = entry.get("aliases", [])
                entry["aliases"] = [*(aliases if isinstance(aliases, list) else []), unit]
        table[name(unit)] = entry
    out["units"] = table
    if isinstance(base.get("support"), list):
        out["support"] = [{**s, "giver": name(s.get("giver")), "targets": names(s.get("targets"))}
                          if isinstance(s, dict) else s for s in base["support"]]
    if isinstance(base.get("tech"), dict):
        techs = {}
        for tech, spec in base["tech"].items():
            if isinstance(spec, dict):
                spec = {name(key): value for key, value in spec.items()}
                if isinstance(spec.get("support"), dict):
                    spec["support"] = {
                        name(giver): {**fields_, "targets": names(fields_["targets"])}
                        if isinstance(fields_, dict) and "targets" in fields_ else fields_
                        for giver, fields_ in spec["support"].items()}
            techs[tech] = spec
        out["tech"] = techs
    return out


def merged(base: dict[str, Any], child: dict[str, Any]) -> dict[str, Any]:
    """An edition file on top of its base: the child's values win; `rules` and each unit
    are merged field by field, a technology or the support list is replaced whole.  A child
    unit with ``base_unit = "tank"`` is the base's tank under the child's name (TripleA's
    ``armour``): the base is renamed first (:func:`_renamed`), the old name an alias."""
    renames = _renames(child)
    if isinstance(child.get("units"), dict):  # base_unit is done with once the base is renamed
        child = {**child, "units": {
            unit: {k: v for k, v in entry.items() if k != "base_unit"}
            if isinstance(entry, dict) else entry for unit, entry in child["units"].items()}}
    if renames:
        base = _renamed(base, renames)
        for old, new in renames.items():  # the old name types whatever aliases the child gives
            entry = child["units"][new]
            if isinstance(entry.get("aliases"), list) and old not in entry["aliases"]:
                entry["aliases"] = [*entry["aliases"], old]
    out = {key: value for key, value in base.items() if key != "base"}
    for key, value in child.items():
        if key == "base":
            continue
        if key in ("rules", "units", "facilities", *MODEL_SECTIONS) and isinstance(value, dict) \
                and isinstance(out.get(key), dict):
            table = dict(out[key])
            for name, entry in value.items():
                if key in ("units", "facilities") and isinstance(entry, dict) \
                        and isinstance(table.get(name), dict):
                    table[name] = {**table[name], **entry}
                else:
                    table[name] = entry
            out[key] = table
        elif key == "tech" and isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = {**out[key], **value}
        else:
            out[key] = value
    return out


def _edition_files() -> dict[str, Any]:
    return {entry.name.removesuffix(".toml"): entry for entry in resources.files(__name__).iterdir()
            if entry.name.endswith(".toml")}


def list_editions() -> list[str]:
    """Ids of the shipped editions, sorted (from the file names: a broken file is reported
    only when its edition is loaded)."""
    return sorted(_edition_files())


_CACHE: dict[str, Ruleset] = {}
MAX_RULES_FILE_BYTES = 1_000_000  # edition files are a few kB; refuse to read /dev/zero
MAX_BASE_DEPTH = 8  # files on top of one another through `base =`


def _parse(read, name: str, folder: str | None = None, seen: tuple[str, ...] = ()) -> Ruleset:
    """Read, parse and validate one edition file (on top of its base); RulesFileError naming
    the file otherwise."""
    try:
        return validate(_raw(read, name, folder, seen), name)
    except RulesFileError as exc:
        raise RulesFileError(f"{name}: {exc}") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError) as exc:
        why = {FileNotFoundError: "no such file", UnicodeDecodeError: "not UTF-8 text",
               RecursionError: "not valid TOML: nested too deeply",
               tomllib.TOMLDecodeError: f"not valid TOML: {exc}"}.get(type(exc))
        raise RulesFileError(f"{name}: {why or exc.strerror}") from None


def read_rules_file(path: str | os.PathLike) -> str:
    """The text of an edition file: a regular file of at most MAX_RULES_FILE_BYTES, UTF-8.

    The one reader of every edition file named by a path (``--rules-file``, ``load_rules`` of
    a path, a ``base = "file"``).  Checked with ``os.stat`` before it is opened, so that a FIFO
    (which would block), a device (``/dev/zero``: endless) or a folder is refused unread; opened
    non-blocking and checked again on the open descriptor (the path may change in between), and
    read no further than the cap (a ``/proc`` file says 0 bytes and may hold more).
    RulesFileError (or OSError, UnicodeDecodeError) otherwise.
    """
    return read_regular_file(path, MAX_RULES_FILE_BYTES, "an edition file",
                             RulesFileError).decode("utf-8")


def _raw(read, name: str, folder: str | None, seen: tuple[str, ...]) -> dict[str, Any]:
    """A parsed edition file with its base (`base = "1942-2e"`, a shipped edition, or a file
    next to it) merged underneath.  `seen`: the bases above it (shipped ids, or the real
    paths of files), to refuse a cycle and a chain deeper than MAX_BASE_DEPTH."""
    raw = tomllib.loads(read())
    base = raw.get("base")
    if base is None:
        return raw
    if not isinstance(base, str) or not base:
        raise RulesFileError(f"base: expected an edition id or an edition file, got {base!r}")
    if len(seen) >= MAX_BASE_DEPTH:
        raise RulesFileError(f"base: more than {MAX_BASE_DEPTH} files deep")
    files = _edition_files()
    if base in files:
        if base in seen:
            raise RulesFileError(f"base: {' -> '.join((*seen, base))} is a cycle")
        base_raw = _raw(files[base].read_text, f"{base}.toml", None, (*seen, base))
    else:
        path = os.path.join(folder or ".", base)
        if not os.path.exists(path):
            raise RulesFileError(f"base: {base!r} is neither a shipped edition "
                                 f"({', '.join(sorted(files))}) nor a file")
        real = os.path.realpath(path)  # ./a.toml and a.toml are one file: one cycle
        if real in seen:
            raise RulesFileError(f"base: {base!r} is a cycle (that file is already a base)")
        try:
            text = read_rules_file(path)
        except RulesFileError as exc:
            raise RulesFileError(f"base {path}: {exc}") from None
        base_raw = _raw(lambda: text, path, os.path.dirname(path), (*seen, real))
    return merged(base_raw, raw)


def load_rules(edition: str | os.PathLike | Ruleset) -> Ruleset:
    """The validated Ruleset of a shipped edition id (e.g. ``"revised"``, ``"1942-2e"``), of an
    edition file (an ``os.PathLike``, or a str naming an existing file or ending in .toml), or
    a Ruleset itself."""
    if isinstance(edition, Ruleset):
        return check_ruleset(edition)
    if isinstance(edition, str) and edition in _CACHE:
        return _CACHE[edition]
    files = _edition_files()
    if isinstance(edition, os.PathLike) or (
            isinstance(edition, str) and edition not in files
            and (edition.endswith(".toml") or os.path.isfile(edition))):
        return load_rules_file(edition)
    if not isinstance(edition, str):
        raise BattleInputError(
            f"rules must be an edition id, a Ruleset or the path of an edition file, "
            f"got {quoted(edition)}")
    if edition not in files:
        raise BattleInputError(
            f"unknown edition {quoted(edition)}; known editions: {', '.join(sorted(files))}"
        )
    ruleset = _parse(files[edition].read_text, f"{edition}.toml")
    if ruleset.id != edition:
        raise RulesFileError(f"{edition}.toml: id is {ruleset.id!r}, expected {edition!r}")
    _CACHE[edition] = ruleset
    return ruleset


def load_rules_file(path: str | os.PathLike) -> Ruleset:
    """Load and validate an edition file from any path (for edition authors)."""
    return _parse(lambda: read_rules_file(path), os.fspath(path),
                  os.path.dirname(os.fspath(path)), (os.path.realpath(path),))
