"""The planning problem of a turn (issue 44): what the player to move can attack, with what,
and how each battle is solved (:class:`Theatre`, built by :func:`theatre_of`).

* **The units** (:class:`Supply`): the player's classes of land and air units (part 1's
  :class:`~battlecalc.turn.reach.UnitClass`: territory, TripleA type, movement left) that may
  attack at least one land territory, less the units ``--keep`` holds back.  Sea units,
  transports' cargo and the classes part 1 does not model are left out (named in the notes).
* **The fronts** (:class:`Front`): every land territory some class may attack, and every
  territory where a land battle of the player is pending (its committed units always fight
  there).  A front's defenders are every unit of a player at war with the mover, as one side,
  in the edition's names; factories, harbours and airfields are not defenders (AA guns are).
  Its value is its ``production`` (or the value the caller gives), counted when it is taken.
  Sea zones are left aside: sea battles are not planned in this version.
* **The battles**: the edition the game maps to (``battlecalc game``'s), Low Luck where the
  save plays it, each side's technologies as ``battlecalc game`` gives them (the mover's to
  the attacker, the defending nations' to the defender).

A force is a tuple of counts over :attr:`Theatre.types` (TripleA's unit types of the player
that may attack); its army, in the edition's names, is what :meth:`Theatre.army` gives.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..errors import BattleInputError, quoted
from .board import TurnInputError

# pending battles that are no land battle (a raid is not one: its bombers stay committed to it)
NOT_LAND_BATTLES = frozenset({"BOMBING_RAID", "AIR_RAID", "AIR_BATTLE"})
MAX_TERRITORY_VALUE = 10_000  # an IPC value per territory (real ones: at most a few dozen)


@dataclass(frozen=True)
class Supply:
    """A class of the player's units that may attack: `count` units of TripleA type
    `unit_type` (the edition's `unit`) in `territory` with `movement_left`, and the fronts
    each may attack (part 1's Target: movement, route, landing, escort)."""

    index: int
    key: str
    territory: str
    unit_type: str
    unit: str
    count: int
    movement_left: int
    kind: str  # "land" or "air"
    targets: dict  # front -> battlecalc.turn.reach.Target


@dataclass(frozen=True)
class Front:
    """A land territory the plan may attack (or where the player's land battle is pending)."""

    name: str
    owner: str
    production: int
    value: float  # counted, times P(take), when taken (production unless the caller says)
    defender: dict  # {edition unit: n}: the units of every player at war with the mover
    defender_types: dict  # {(owner, TripleA type): n} of the defenders, for the output
    defender_nations: tuple
    defender_tech: tuple
    committed: dict  # {edition unit: n} already sent into its pending land battle
    committed_types: dict  # {TripleA type: n} of the committed units
    supply: tuple  # per Theatre.types: how many units of that type could go
    escorted: bool = False  # some class reaches it only with an escort (receivesAbility)

    @property
    def pending(self) -> bool:
        """A land battle of the player is pending here: it is fought whatever the plan."""
        return bool(self.committed)

    @property
    def empty(self) -> bool:
        """No defender: a land unit takes it without a battle."""
        return not self.defender

    def forces(self) -> int:
        """How many forces may be sent (the empty one included): the product of each type's
        count plus one."""
        n = 1
        for s in self.supply:
            n *= s + 1
        return n


@dataclass
class Theatre:
    """A player's planning problem (module documentation)."""

    save: object  # battlecalc.turn.TurnSave
    reach: object  # battlecalc.turn.reach.Reach
    ruleset: object  # battlecalc.rules.Ruleset
    types: tuple  # TripleA unit types that may attack, in the order forces count them
    units: tuple  # the edition's name of each type
    land: tuple  # per type: a land unit (takes territory)
    costs: tuple  # per type: the edition's cost
    supplies: tuple  # Supply
    fronts: dict  # name -> Front, in the map's order
    dice: str  # "standard" or "low_luck"
    attacker_tech: tuple
    notes: list = field(default_factory=list)
    kept: dict = field(default_factory=dict)  # (territory, TripleA type) -> units kept home

    @property
    def board(self):
        return self.reach.board

    @property
    def player(self) -> str:
        return self.reach.board.player

    def army(self, front: Front, force: tuple) -> dict:
        """The attacking army (edition names) of `force` sent to `front`, its committed units
        included, in the edition's unit order."""
        counts = Counter(front.committed)
        for unit, n in zip(self.units, force, strict=True):
            if n:
                counts[unit] += n
        return {u: counts[u] for u in self.ruleset.units if counts.get(u)}

    def has_land(self, front: Front, force: tuple) -> bool:
        """Whether the army has a land unit (only land units take territory)."""
        if any(n and land for n, land in zip(force, self.land, strict=True)):
            return True
        return any(self.ruleset.units[u].domain == "land" and self.ruleset.units[
            u].can_be_casualty for u in front.committed)

    def battle_options(self, front: Front) -> dict:
        """simulate's options of a battle on `front` (besides the armies)."""
        options = {"rules": self.ruleset.id, "method": "exact"}
        if self.dice != "standard":
            options["dice"] = self.dice
        if self.attacker_tech:
            options["attacker_tech"] = list(self.attacker_tech)
        if front.defender_tech:
            options["defender_tech"] = list(front.defender_tech)
        return options


# ---------------------------------------------------------------- building it


def parse_keep(keep) -> dict:
    """--keep: "3 infantry@Russia" (several comma-separated, or a list of them) ->
    {(territory, unit name as given): count}."""
    if keep is None:
        return {}
    items = [keep] if isinstance(keep, str) else keep
    if isinstance(items, Mapping) or not isinstance(items, Iterable):
        raise BattleInputError(f"keep: expected \"N UNIT@TERRITORY\" texts, got {quoted(keep)}")
    found: dict = {}
    for item in items:
        if not isinstance(item, str):
            raise BattleInputError(f"keep: expected \"N UNIT@TERRITORY\", got {quoted(item)}")
        for part in item.split(","):
            part = part.strip()
            if not part:
                continue
            m = re.fullmatch(r"(\d+)\s*([^@]+?)\s*@\s*(.+)", part)
            if m is None:
                raise BattleInputError(f"keep: expected \"N UNIT@TERRITORY\" (such as \"3 "
                                       f"infantry@Russia\"), got {quoted(part)}")
            n = int(m.group(1))
            if not 1 <= n <= 100_000:
                raise BattleInputError(f"keep: expected 1 or more units, got {quoted(part)}")
            key = (m.group(3).strip(), m.group(2).strip())
            found[key] = found.get(key, 0) + n
    return found


def parse_territories(value, label: str) -> tuple | None:
    """--only / --exclude: "T1,T2" or a list of names -> a tuple of names (None: not given)."""
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else value
    if isinstance(items, Mapping) or not isinstance(items, Iterable):
        raise BattleInputError(f"{label}: expected territory names, got {quoted(value)}")
    names = []
    for item in items:
        if not isinstance(item, str):
            raise BattleInputError(f"{label}: expected territory names, got {quoted(item)}")
        if item.strip():
            names.append(item.strip())
    return tuple(names)


def read_territory_values(value) -> dict:
    """--territory-values: a JSON file (or a mapping) {territory: IPC counted when taken}."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        import json
        import os

        if not isinstance(value, str | os.PathLike):
            raise BattleInputError(f"territory_values: expected a {{territory: IPC}} mapping "
                                   f"or the path of a JSON file, got {quoted(value)}")
        try:
            with open(value, encoding="utf-8") as handle:
                text = handle.read(1 << 20)
        except OSError as exc:
            raise BattleInputError(f"territory_values: cannot read {quoted(str(value))}: "
                                   f"{exc.strerror or exc}") from None
        try:
            value = json.loads(text)
        except ValueError as exc:
            raise BattleInputError(f"territory_values: {quoted(str(value))} is not JSON "
                                   f"({exc})") from None
        if not isinstance(value, dict):
            raise BattleInputError("territory_values: expected a JSON object {territory: "
                                   "IPC}")
    found = {}
    for name, ipc in value.items():
        if not isinstance(name, str) or isinstance(ipc, bool) or not isinstance(
                ipc, int | float) or not -MAX_TERRITORY_VALUE <= ipc <= MAX_TERRITORY_VALUE:
            raise BattleInputError(f"territory_values: expected {{territory: IPC}} with IPC "
                                   f"within ±{MAX_TERRITORY_VALUE:,}, got {quoted(name)}: "
                                   f"{quoted(ipc)}")
        found[name] = float(ipc)
    return found


def edition_of_save(data) -> object:
    """The edition a save's game maps to (battlecalc game's), as a Ruleset."""
    from ..rules import load_rules
    from ..triplea.game import EDITIONS_BY_GAME

    try:
        edition = EDITIONS_BY_GAME[data.game]
    except KeyError:
        raise TurnInputError(
            f"the TripleA game {data.game!r} maps to no edition of battlecalc (known: "
            f"{', '.join(sorted(EDITIONS_BY_GAME))}): its battles cannot be solved") from None
    return load_rules(edition)


def techs_of(nations: Iterable[str], data, ruleset) -> tuple:
    """The technologies of these nations that the edition plays (battlecalc game's)."""
    from ..triplea.game import _techs

    return tuple(_techs(list(nations), data, ruleset))


def theatre_of(turn_save, player: str | None = None, *, territory_values=None, only=None,
               exclude=None, keep=None) -> Theatre:
    """The planning problem of `player` (default: the player to move) in a TurnSave."""
    from ..triplea.game import edition_unit
    from .loading import reach as reach_of_save

    data = turn_save.save
    ruleset = edition_of_save(data)
    reach = reach_of_save(turn_save, player)
    board = reach.board
    values = read_territory_values(territory_values)
    for name in values:
        if name not in board.territories:
            raise BattleInputError(f"territory_values: no territory {quoted(name)} in this save")
    only_names = parse_territories(only, "only")
    exclude_names = parse_territories(exclude, "exclude") or ()
    for label, names in (("only", only_names or ()), ("exclude", exclude_names)):
        for name in names:
            if name not in board.territories:
                raise BattleInputError(f"{label}: no territory {quoted(name)} in this save")
            if board.territories[name].water:
                raise BattleInputError(f"{label}: {name} is a sea zone: sea battles are not "
                                       "planned in this version")
    notes: list[str] = []
    kept = _kept(parse_keep(keep), reach, ruleset)
    left_home = dict(kept)

    def unit_name(type_name: str, hits: int = 0) -> str | None:
        return edition_unit(type_name, hits, ruleset)

    # the player's pending land battles and their committed units
    committed: dict = defaultdict(Counter)
    committed_types: dict = defaultdict(Counter)
    for battle in board.battles:
        if battle.attacker != board.player or battle.battle_type in NOT_LAND_BATTLES \
                or board.territories[battle.territory].water:
            continue
        for u in board.territories[battle.territory].units:
            if u.key in battle.attacking and u.owner == board.player:
                name = unit_name(u.type, u.hits)
                if name is not None:
                    committed[battle.territory][name] += 1
                    committed_types[battle.territory][u.type] += 1

    def allowed(name: str) -> bool:
        return (only_names is None or name in only_names) and name not in exclude_names

    # the classes that may attack a land territory
    raw = []
    for c in reach.classes:
        uc = c.unit_class
        if c.unsupported is not None or uc.committed or not c.targets:
            continue
        # (sea zones hold sea battles: not planned in this version)
        targets = {t: x for t, x in c.targets.items()
                   if not board.territories[t].water and allowed(t)}
        if not targets:
            continue
        try:
            unit = unit_name(uc.unit_type)
        except BattleInputError as exc:
            notes.append(f"{uc.key}: not planned: {exc}")
            continue
        if unit is None:
            continue
        count = uc.count - left_home.pop((uc.territory, uc.unit_type, uc.key), 0)
        if count > 0:
            raw.append((uc, unit, count, targets))
    for (territory, type_name, _), n in left_home.items():
        notes.append(f"keep: {n} {type_name} in {territory} could not attack anyway")
    types = tuple(dict.fromkeys(uc.unit_type for uc, *_ in sorted(
        raw, key=lambda item: (list(ruleset.units).index(item[1]), item[0].unit_type))))
    units = tuple(unit_name(t) for t in types)
    supplies = tuple(Supply(i, uc.key, uc.territory, uc.unit_type, unit, count,
                            uc.movement_left, uc.kind, targets)
                     for i, (uc, unit, count, targets) in enumerate(raw))
    # the fronts
    names = [n for n in board.territories if any(n in s.targets for s in supplies)
             or n in committed]
    fronts = {}
    for name in names:
        if name not in committed and not allowed(name):
            continue
        if name in committed and not allowed(name):
            notes.append(f"{name}: its pending battle is fought whatever --only and --exclude "
                         "say (its units are committed)")
        t = board.territories[name]
        defender: Counter = Counter()
        defender_types: Counter = Counter()
        nations: list[str] = []
        try:
            for u in t.units:
                if u.owner == board.player or not board.enemy_unit(u):
                    continue
                unit = unit_name(u.type, u.hits)
                if unit is None:
                    continue  # a factory, harbour or airfield: no defender
                defender[unit] += 1
                defender_types[(u.owner, u.type)] += 1
                if u.owner not in nations:
                    nations.append(u.owner)
        except BattleInputError as exc:
            notes.append(f"{name}: not planned: {exc}")
            continue
        supply = tuple(sum(s.count for s in supplies if s.unit_type == kind and name in s.targets)
                       for kind in types)
        fronts[name] = Front(
            name=name, owner=t.owner, production=t.production,
            value=values.get(name, float(t.production)),
            defender={u: defender[u] for u in ruleset.units if defender.get(u)},
            defender_types=dict(defender_types), defender_nations=tuple(nations),
            defender_tech=techs_of(nations, data, ruleset),
            committed={u: committed[name][u] for u in ruleset.units if committed[name].get(u)},
            committed_types=dict(committed_types[name]), supply=supply,
            escorted=any(s.targets[name].escort for s in supplies if name in s.targets))
    for name in only_names or ():
        if name not in fronts:
            notes.append(f"only: {name} is no territory the {board.player} can attack")
    return Theatre(
        save=turn_save, reach=reach, ruleset=ruleset, types=types, units=units,
        land=tuple(ruleset.units[u].domain == "land" for u in units),
        costs=tuple(ruleset.units[u].cost for u in units), supplies=supplies, fronts=fronts,
        dice="low_luck" if data.properties.get("Low Luck") else "standard",
        attacker_tech=techs_of([board.player], data, ruleset), notes=notes,
        kept=_totals(kept))


def _totals(kept: dict) -> dict:
    totals: dict = defaultdict(int)
    for (territory, kind, _), n in kept.items():
        totals[(territory, kind)] += n
    return dict(totals)


def _kept(wanted: dict, reach, ruleset) -> dict:
    """--keep's counts per class: {(territory, TripleA type, class key): units kept}, the
    classes with the least movement left first (the units that could do least)."""
    from ..triplea.game import edition_unit

    board = reach.board
    kept: dict = {}
    for (territory, name), n in wanted.items():
        if territory not in board.territories:
            raise BattleInputError(f"keep: no territory {quoted(territory)} in this save")
        mine = [c for c in reach.classes if c.unit_class.territory == territory
                and not c.unit_class.committed and c.unsupported is None]
        kinds = {c.unit_class.unit_type for c in mine}
        chosen = None
        for kind in sorted(kinds):
            try:
                edition = edition_unit(kind, 0, ruleset)
            except BattleInputError:
                edition = None
            if name == kind or name.lower() == kind.lower() or (
                    edition is not None and ruleset.aliases.get(name.lower()) == edition):
                chosen = kind
                break
        if chosen is None:
            have = ", ".join(sorted(kinds)) or "none that may move"
            raise BattleInputError(f"keep: the {board.player} have no {name} in {territory} "
                                   f"(their units there: {have})")
        classes = sorted((c for c in mine if c.unit_class.unit_type == chosen),
                         key=lambda c: (c.unit_class.movement_left, c.unit_class.key))
        total = sum(c.unit_class.count for c in classes)
        if n > total:
            raise BattleInputError(f"keep: {n} {chosen} in {territory}, and the "
                                   f"{board.player} have {total} there")
        for c in classes:
            take = min(n, c.unit_class.count)
            if take:
                kept[(territory, chosen, c.unit_class.key)] = take
                n -= take
    return kept
