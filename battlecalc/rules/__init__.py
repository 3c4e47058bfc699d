"""Editions as data: one TOML file per edition, validated into frozen dataclasses.

Raw TOML -> :func:`validate` (every error at once, each with a path) -> :class:`Ruleset`.
Defaults live in the schema below; an edition file states only what differs.  Adding an
edition means adding a file here; the kernels never look at edition ids.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..errors import BattleInputError, quoted

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
    "sub_first_strike": (
        ("always", "unless_enemy_destroyer", "attacker_only"),
        "unless_enemy_destroyer",
        "when a side's submarines fire in the opening step (sea battles)",
    ),
    "air_hits_subs": (
        ("always", "with_own_destroyer"),
        "with_own_destroyer",
        "whether aircraft may hit submarines without a destroyer on their side",
    ),
    "submerge_timing": (
        ("end_of_round", "before_fire", "never"),
        "before_fire",
        "when submarines may submerge (never while an enemy destroyer is present)",
    ),
    "lone_attacking_transports": (
        ("one_volley_then_retreat", "destroyed"),
        "destroyed",
        "what happens to an attacking force left with transports only",
    ),
    "bombard_return_fire": (
        (True, False),
        True,
        "whether shore-bombardment casualties fire back in round 1",
    ),
    "bombard_per_landing_unit": (
        (True, False),
        True,
        "at most one bombarding ship per land unit landed from transports",
    ),
    "amphibious_retreat": (
        ("none", "air_only", "air_and_overland"),
        "air_and_overland",
        "which attackers of an amphibious assault may retreat",
    ),
    "formula_flips": (
        ("A2", "A1"),
        "A2",
        "formula model only (rules reference 9.3 item 9): A2: a loss point removes a piece "
        "flipped in an earlier exchange, else flips a face-up piece; A1: a piece flipped "
        "earlier in the same exchange may also be removed",
    ),
}
MODELS = ("dice", "formula")

# Unit fields: name -> (type check, default).  `None` default means required.
_REQUIRED = object()


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
    # dice rolled per unit on attack; with best_die only the best one counts (max 1 hit)
    "attack_dice": (_is_int(1, 3), 1),
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
    # support given on attack: support_bonus to support_count units of type support_target
    "support_target": (_is_name_or_empty, ""),
    "support_bonus": (_is_int(0, 6), 0),
    "support_count": (_is_int(0, 10), 0),
    # sea abilities (used by sea battles)
    "submarine": (_is_bool, False),
    "anti_sub": (_is_bool, False),
    "transport": (_is_bool, False),
    "carrier_capacity": (_is_int(0, 4), 0),
    "bombard": (_is_int(0, 6), 0),
    "damaged_form": (_is_name_or_empty, ""),
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
    best_die: bool = False
    can_attack: bool = True
    can_be_casualty: bool = True
    aa_value: int = 0
    aa_shots: int = 0
    defenceless: bool = False
    loss_rank: int = 0
    support_target: str = ""
    support_bonus: int = 0
    support_count: int = 0
    submarine: bool = False
    anti_sub: bool = False
    transport: bool = False
    carrier_capacity: int = 0
    bombard: int = 0
    damaged_form: str = ""

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


@dataclass(frozen=True)
class Tech:
    name: str
    description: str
    changes: MappingProxyType  # unit name -> {field: value}


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

    def unit(self, name: str) -> Unit:
        return self.units[name]

    @property
    def supports(self) -> tuple:
        """Attack support rules (giver, targets, bonus, count, kind) of the unit table."""
        from ..dice import unit_supports

        return unit_supports(self.units)

    def with_techs(self, techs: tuple[str, ...] | list[str]) -> Ruleset:
        """The same edition with the given technologies applied to its unit table (one object
        per edition and set of technologies, so compiled tables can be cached by it)."""
        key = tuple(techs)
        if not key:
            return self
        cache = self.__dict__.setdefault("_with_techs", {})
        if key not in cache:
            cache[key] = self._apply_techs(key)
        return cache[key]

    def _apply_techs(self, techs: tuple[str, ...]) -> Ruleset:
        units = dict(self.units)
        for tech_name in techs:
            if tech_name not in self.techs:
                raise BattleInputError(
                    f"unknown technology {quoted(tech_name)} for {self.id}; "
                    f"known: {', '.join(self.techs) or 'none'}"
                )
            for unit_name, overrides in self.techs[tech_name].changes.items():
                units[unit_name] = dataclasses.replace(units[unit_name], **overrides)
        return dataclasses.replace(self, units=MappingProxyType(units))


class RulesFileError(BattleInputError):
    """An edition file that does not validate; the message lists every problem with a path."""


def validate(raw: dict[str, Any], source: str) -> Ruleset:
    """Check a parsed edition file and build its Ruleset; raise with every error at once."""
    errors: list[str] = []
    edition_id = raw.get("id")
    prefix = edition_id if isinstance(edition_id, str) and edition_id else source

    known_top = {"format", "id", "name", "description", "model", "formula", "rules", "units",
                 "tech"}
    for key in raw:
        if key not in known_top:
            errors.append(f"{prefix}.{key}: unknown key")
    if raw.get("format") != FORMAT_VERSION:
        errors.append(f"{prefix}.format: expected {FORMAT_VERSION}, got {raw.get('format')!r}")
    for key in ("id", "name"):
        if not isinstance(raw.get(key), str) or not raw.get(key):
            errors.append(f"{prefix}.{key}: expected a non-empty string")

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

    units: dict[str, Unit] = {}
    raw_units = raw.get("units", {})
    if not isinstance(raw_units, dict) or not raw_units:
        errors.append(f"{prefix}.units: expected a table of units")
        raw_units = {}
    for unit_name, spec in raw_units.items():
        path = f"{prefix}.units.{unit_name}"
        if not isinstance(spec, dict):
            errors.append(f"{path}: expected a table")
            continue
        values: dict[str, Any] = {}
        for key, value in spec.items():
            if key not in UNIT_FIELDS:
                errors.append(f"{path}.{key}: unknown key")
                continue
            problem = UNIT_FIELDS[key][0](value)
            if problem:
                errors.append(f"{path}.{key}: {problem}")
            else:
                values[key] = value
        for key, (_, default) in UNIT_FIELDS.items():
            if key in values:
                continue
            if default is _REQUIRED:
                if key not in spec:
                    errors.append(f"{path}.{key}: missing")
            else:
                values[key] = default
        if all(key in values for key in UNIT_FIELDS):
            values["aliases"] = tuple(a.lower() for a in values["aliases"])
            units[unit_name] = Unit(name=unit_name, **values)

    for unit in units.values():
        for ref_field in ("support_target", "damaged_form"):
            ref = getattr(unit, ref_field)
            if ref and ref not in raw_units:
                errors.append(f"{prefix}.units.{unit.name}.{ref_field}: unknown unit {ref!r}")

    aliases: dict[str, str] = {}
    for unit in units.values():
        for alias in (unit.name, *unit.aliases):
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
    for tech_name, spec in raw_techs.items():
        path = f"{prefix}.tech.{tech_name}"
        if not isinstance(spec, dict):
            errors.append(f"{path}: expected a table")
            continue
        description = spec.get("description", "")
        changes: dict[str, dict[str, Any]] = {}
        for unit_name, overrides in spec.items():
            if unit_name == "description":
                continue
            if unit_name not in raw_units:
                errors.append(f"{path}.{unit_name}: unknown unit")
                continue
            if unit_name not in units:  # the unit itself is invalid; already reported
                continue
            if not isinstance(overrides, dict):
                errors.append(f"{path}.{unit_name}: expected a table of unit fields")
                continue
            for key, value in overrides.items():
                if key not in UNIT_FIELDS or key == "aliases":
                    errors.append(f"{path}.{unit_name}.{key}: unknown key")
                elif problem := UNIT_FIELDS[key][0](value):
                    errors.append(f"{path}.{unit_name}.{key}: {problem}")
            changes[unit_name] = dict(overrides)
        techs[tech_name] = Tech(tech_name, description, MappingProxyType(changes))

    model = raw.get("model", "dice")
    formula = None
    if model not in MODELS:
        allowed = ", ".join(repr(m) for m in MODELS)
        errors.append(f"{prefix}.model: expected one of {allowed}, got {model!r}")
    elif model == "formula":
        from ..formula.schema import validate_formula  # lazy: battlecalc.formula imports rules

        if "formula" not in raw:
            errors.append(f'{prefix}.formula: missing (required with model = "formula")')
        else:
            formula = validate_formula(raw["formula"], prefix, units, errors)
    elif "formula" in raw:
        errors.append(f'{prefix}.formula: only allowed with model = "formula"')

    if errors:
        raise RulesFileError("invalid rules file:\n  " + "\n  ".join(errors))
    return Ruleset(
        id=raw["id"],
        name=raw["name"],
        description=raw.get("description", ""),
        units=MappingProxyType(units),
        flags=MappingProxyType(flags),
        techs=MappingProxyType(techs),
        aliases=MappingProxyType(aliases),
        model=model,
        formula=formula,
    )


def _edition_files() -> dict[str, Any]:
    return {entry.name.removesuffix(".toml"): entry for entry in resources.files(__name__).iterdir()
            if entry.name.endswith(".toml")}


def list_editions() -> list[str]:
    """Ids of the shipped editions, sorted (from the file names: a broken file is reported
    only when its edition is loaded)."""
    return sorted(_edition_files())


_CACHE: dict[str, Ruleset] = {}


def _parse(read, name: str) -> Ruleset:
    """Read, parse and validate one edition file; RulesFileError naming the file otherwise."""
    try:
        return validate(tomllib.loads(read()), name)
    except RulesFileError as exc:
        raise RulesFileError(f"{name}: {exc}") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError) as exc:
        why = {FileNotFoundError: "no such file", UnicodeDecodeError: "not UTF-8 text",
               RecursionError: "not valid TOML: nested too deeply",
               tomllib.TOMLDecodeError: f"not valid TOML: {exc}"}.get(type(exc))
        raise RulesFileError(f"{name}: {why or exc.strerror}") from None


def load_rules(edition: str | os.PathLike | Ruleset) -> Ruleset:
    """The validated Ruleset of a shipped edition id (e.g. ``"revised"``, ``"1942-2e"``), of an
    edition file (an ``os.PathLike``, or a str naming an existing file or ending in .toml), or
    a Ruleset itself."""
    if isinstance(edition, Ruleset):
        return edition
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
    return _parse(lambda: Path(path).read_bytes().decode("utf-8"), os.fspath(path))
