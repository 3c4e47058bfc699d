"""What a TripleA save holds of movement (issue 41): read from the same object stream, within
the same parsing budget, as :mod:`battlecalc.triplea.save` reads the battles.

:func:`read_movement` reads, for :mod:`battlecalc.turn`:

* per unit (TripleA's ``Unit``): its type, owner, ``alreadyMoved`` (a BigDecimal),
  ``bonusMovement``, ``hits``, ``unitDamage``, ``transportedBy``, ``submerged``,
  ``wasInCombat``;
* per unit type (``UnitAttachment``): ``movement``, ``isAir``, ``isSea``, ``canBlitz``,
  ``isInfrastructure``, ``canNotMoveDuringCombatMove``, ``givesMovement``,
  ``carrierCapacity``/``carrierCost``, ``isKamikaze``, ``isSuicideOnAttack``, ``fuelCost`` and
  ``fuelFlatCost``, ``canBeDamaged``/``maxOperationalDamage``, the land and air transport
  fields, ``receivesAbilityWhenWith``, ``requiresUnitsToMove``, ``movementLimit`` and
  ``attackingLimit``;
* per territory: its owner, water, units and ``TerritoryAttachment`` (``production``,
  ``capital``, ``isImpassable``, ``airBase``, ``originalOwner``, ``territoryEffect``) and its
  ``CanalAttachment``\\ s; the map's connections;
* the relationships (``RelationshipTypeAttachment``: the archetype and the movement flags, as
  written: ``default``, ``true`` or ``false``), the players (PUs, ``TechAttachment``, the
  ``rulesAttachment``'s movement restriction, the ``PlayerAttachment``'s stacking limits), the
  technology frontier's advances with their ``TechAbilityAttachment`` (``movementBonus``,
  ``unitAbilitiesGained``, ``airborneForces``), the advances the technology delegate has still
  to activate, the territory effects, the triggers;
* the game sequence (every step: name, player, delegate class, ``displayName``, properties,
  run counts) and where it stands;
* the battle delegate's ``BattleTracker``: this turn's ``conquered``, ``blitzed`` and
  ``foughtBattles`` territories and the pending battles with their attacking units; the move
  delegate's ``needToInitialize`` (false once a move step has started).

The fields and their meaning were read from TripleA's sources (Unit, UnitAttachment,
TerritoryAttachment, CanalAttachment, RelationshipTypeAttachment, TechAttachment,
TechAbilityAttachment, AbstractPlayerRulesAttachment, PlayerAttachment, TriggerAttachment,
GameStep, BattleTracker, MoveDelegate); no code of TripleA is used.  A field of the wrong type
is one :class:`~battlecalc.triplea.save.SaveFormatError` line naming its path.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from fractions import Fraction

from ..errors import quoted
from .save import (
    MAX_STREAM_BYTES,
    SaveFormatError,
    _class_name,
    _javaobj,
    _objects,
    _Reader,
    _table,
)

NO_LIMIT = 2**31 - 1  # Integer.MAX_VALUE: TripleA's "no stacking limit" (an AA gun's default)
GROUP_KEYWORDS = frozenset({"controlled", "controlledNoWater", "original", "originalNoWater",
                            "all", "map", "enemy"})  # getListedTerritories stops at these


@dataclass(frozen=True)
class MovingUnit:
    """One unit as movement sees it; `key` tells it apart from the other units of the save."""

    key: int
    type: str
    owner: str
    already_moved: Fraction = Fraction(0)
    bonus_movement: int = 0
    hits: int = 0
    unit_damage: int = 0
    transported: bool = False  # transportedBy is set: carried by a transport or a carrier
    submerged: bool = False
    was_in_combat: bool = False


@dataclass(frozen=True)
class UnitTypeMovement:
    """A unit type's UnitAttachment fields that movement reads."""

    name: str
    movement: int = 0
    is_air: bool = False
    is_sea: bool = False
    can_blitz: bool = False
    infrastructure: bool = False
    not_in_combat_move: bool = False  # canNotMoveDuringCombatMove
    gives_movement: dict = field(default_factory=dict)  # unit type -> bonus (givesMovement)
    carrier_capacity: int = -1
    carrier_cost: int = -1
    kamikaze: bool = False
    suicide_on_attack: bool = False
    fuel_cost: dict = field(default_factory=dict)  # resource -> amount per movement
    fuel_flat_cost: dict = field(default_factory=dict)
    can_be_damaged: bool = False
    max_operational_damage: int = -1
    land_transport: bool = False
    land_transportable: bool = False
    air_transport: bool = False
    air_transportable: bool = False
    transport_capacity: int = -1
    transport_cost: int = -1
    receives_ability: tuple = ()  # (ability, unit type) of receivesAbilityWhenWith
    requires_units_to_move: tuple = ()  # tuple of alternatives, each a tuple of unit types
    movement_limit: int | None = None  # movementLimit's count (None: no limit)
    attacking_limit: int | None = None


@dataclass(frozen=True)
class TerritoryMovement:
    name: str
    water: bool
    owner: str
    units: tuple[MovingUnit, ...]
    production: int = 0
    capital: str | None = None
    impassable: bool = False
    air_base: bool = False  # TerritoryAttachment.airBase (TripleA's "AAP" air bases)
    original_owner: str | None = None
    effects: tuple[str, ...] = ()  # TerritoryEffect names


@dataclass(frozen=True)
class Relationship:
    """A RelationshipTypeAttachment: the archetype (war, allied, neutral) and the movement
    flags as the map writes them ("default", "true" or "false"), resolved as TripleA does."""

    name: str
    archetype: str = "war"
    land_over: str = "default"  # canMoveLandUnitsOverOwnedLand
    air_over: str = "default"  # canMoveAirUnitsOverOwnedLand
    land_air: str = "default"  # canLandAirUnitsOnOwnedLand
    take_over: str = "default"  # canTakeOverOwnedTerritory
    into_combat: str = "default"  # canMoveIntoDuringCombatMove
    canals: str = "default"  # canMoveThroughCanals

    @property
    def war(self) -> bool:
        return self.archetype == "war"

    @property
    def allied(self) -> bool:
        return self.archetype == "allied"

    def _flag(self, value: str, default: bool) -> bool:
        return default if value == "default" else value == "true"

    def can_move_land_over(self) -> bool:  # War: true, Allied: true, Neutral: false
        return self._flag(self.land_over, self.war or self.allied)

    def can_move_air_over(self) -> bool:
        return self._flag(self.air_over, self.war or self.allied)

    def can_land_air(self) -> bool:
        return self._flag(self.land_air, self.allied)

    def can_take_over(self) -> bool:
        return self._flag(self.take_over, self.war)

    def can_move_into_during_combat_move(self) -> bool:  # no archetype changes it
        return self.into_combat in ("default", "true")

    def can_move_through_canals(self) -> bool:
        return self._flag(self.canals, self.allied)


@dataclass(frozen=True)
class Step:
    name: str
    player: str | None
    delegate: str  # the delegate's class (MoveDelegate, BattleDelegate, ...); its name if unknown
    display: str | None = None
    properties: dict = field(default_factory=dict)
    run_count: int = 0
    max_run_count: int = -1


@dataclass(frozen=True)
class Canal:
    name: str
    zone: str  # the sea zone the attachment is on (a canal joins two)
    land_territories: tuple[str, ...]
    excluded: frozenset | None  # unit types that pass freely; None: TripleA's default, all air
    no_combat_move: bool = False  # canNotMoveThroughDuringCombatMove


@dataclass(frozen=True)
class Advance:
    """A technology of the frontier: what holding it means (its TechAttachment property, or the
    generic tech's name) and its TechAbilityAttachment's movement parts."""

    name: str
    property: str | None  # the TechAttachment field of a predefined advance; None: generic
    movement_bonus: dict = field(default_factory=dict)  # unit type -> bonus
    abilities: dict = field(default_factory=dict)  # unit type -> frozenset of abilities
    airborne_forces: bool = False


@dataclass(frozen=True)
class Player:
    name: str
    pus: int = 0
    tech_flags: frozenset = frozenset()  # TechAttachment's true booleans (longRangeAir, ...)
    generic_techs: frozenset = frozenset()  # generic techs held
    pending_advances: tuple[str, ...] = ()  # bought, to be activated (technology delegate)
    restriction_type: str | None = None  # rulesAttachment.movementRestrictionType
    restriction: tuple[str, ...] | None = None  # movementRestrictionTerritories
    stacking_limits: bool = False  # PlayerAttachment movementLimit / attackingLimit set
    units_held: tuple[str, ...] = ()  # unit types bought, not yet placed

    def holds(self, advance: Advance) -> bool:
        if advance.property is not None:
            return advance.property in self.tech_flags
        return advance.name in self.generic_techs


@dataclass(frozen=True)
class Trigger:
    name: str
    player: str
    when: tuple[tuple[str, str], ...]  # (before|after, step name)
    uses: int
    kinds: frozenset  # which changes it makes (placement, playerProperty, ...)
    relationship_changes: tuple[str, ...] = ()  # "p1:p2:old:new"


@dataclass(frozen=True)
class PendingBattle:
    territory: str
    battle_type: str
    attacker: str | None
    attacking: frozenset  # keys of the attacking units


@dataclass(frozen=True)
class MovementSave:
    game: str
    round: int
    step_index: int
    steps: tuple[Step, ...]
    players: tuple[str, ...]  # the game's players (the null player, "Neutral", is none)
    territories: dict  # name -> TerritoryMovement, in the map's order
    neighbors: dict  # name -> tuple of names
    unit_types: dict  # name -> UnitTypeMovement
    relationships: dict  # frozenset({p1, p2}) (one name: a player with itself) -> Relationship
    properties: dict
    player_info: dict  # name -> Player
    advances: tuple[Advance, ...] = ()
    canals: tuple[Canal, ...] = ()
    territory_effects: dict = field(default_factory=dict)  # name -> features on movement
    triggers: tuple[Trigger, ...] = ()
    conquered: frozenset = frozenset()
    blitzed: frozenset = frozenset()
    fought: frozenset = frozenset()
    battles: tuple[PendingBattle, ...] = ()
    move_started: bool = False  # the move delegate has started its step (needToInitialize off)
    step_started: bool = True  # the save's step has fired its "before" triggers

    @property
    def step(self) -> Step:
        return self.steps[self.step_index]


# ---------------------------------------------------------------- reading


def read_movement(path, max_inflated: int | None = None) -> MovementSave:
    """The movement of the save at `path` (BattleInputError for anything that is not a
    readable TripleA save), read within the save reader's budget."""
    objects = _objects(path, MAX_STREAM_BYTES if max_inflated is None else max_inflated)
    return movement_of_objects(objects, path)


def movement_of_objects(objects: list, path) -> MovementSave:
    """The movement read from a save's object stream (`save._objects(path)`)."""
    _, beans = _javaobj()
    reader = _Reader(beans)
    try:
        return _movement(reader, objects)
    except SaveFormatError as exc:
        raise SaveFormatError(f"{path}: {exc}") from None
    except RecursionError:
        raise SaveFormatError(f"{path}: not a TripleA save this version of battlecalc reads "
                              "(objects nested too deeply)") from None
    except (AttributeError, TypeError, ValueError, KeyError, IndexError, struct.error) as exc:
        raise SaveFormatError(f"{path}: not a TripleA save this version of battlecalc reads "
                              f"({type(exc).__name__})") from None


class _Movement:
    """Field readers on top of save._Reader for the values movement reads."""

    def __init__(self, reader: _Reader):
        self.r = reader
        self.beans = reader.beans

    def text_or_none(self, value) -> str | None:
        if value is None:
            return None
        if isinstance(value, str | self.beans.JavaString):
            return str(value)
        raise self.r.error(f"expected text, found {self.r.describe(value)}")

    def texts(self, value, name: str) -> tuple[str, ...] | None:
        """A String[] or a list of strings (None for null)."""
        if value is None:
            return None
        if not isinstance(value, list | tuple) and not isinstance(value, self.beans.JavaInstance):
            raise self.r.error(f"expected a list of texts, found {self.r.describe(value)}", name)
        found = []
        for item in (value if isinstance(value, list | tuple) else self.r.elements(value)):
            if not isinstance(item, str | self.beans.JavaString):
                raise self.r.error(f"expected text, found {self.r.describe(item)}", name)
            found.append(str(item))
        return tuple(found)

    def integer(self, obj, name: str, default: int) -> int:
        value = self.r.opt(obj, name, default)
        value = getattr(value, "value", value)  # java.lang.Integer
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.r.error(f"expected a whole number, found {self.r.describe(value)}", name)
        return value

    def int_map(self, obj, name: str, kind: str) -> dict:
        """{name: count} of an IntegerMap field keyed by named objects (unit types, resources)."""
        value = self.r.opt(obj, name)
        if value is None:
            return {}
        with self.r.at(name):
            values = self.r.opt(value, "mapValues")
            if values is None:
                return {}
            if not isinstance(values, dict):
                raise self.r.error(f"expected a map, found {self.r.describe(values)}",
                                   "mapValues")
            found = {}
            for key, count in values.items():
                count = getattr(count, "value", count)
                if isinstance(count, bool) or not isinstance(count, int):
                    raise self.r.error(f"expected a whole number, found "
                                       f"{self.r.describe(count)}", "mapValues")
                found[self.r.name_of(key, kind, null=False)] = count
            return found

    def decimal(self, value, name: str) -> Fraction:
        """A java.math.BigDecimal: its intVal (a BigInteger: signum and magnitude, big-endian
        bytes) over 10 ** scale."""
        with self.r.at(name):
            self.r.instance(value, "BigDecimal")
            scale = self.r.number(value, "scale")
            big = self.r.instance(self.r.get(value, "intVal"), "BigInteger")
            with self.r.at("intVal"):
                signum = self.r.number(big, "signum")
                magnitude = self.r.get(big, "magnitude")
                if not isinstance(magnitude, list | tuple) or not all(
                        isinstance(b, int) and not isinstance(b, bool) and -128 <= b < 256
                        for b in magnitude):
                    raise self.r.error("expected an array of bytes", "magnitude")
                if signum not in (-1, 0, 1) or abs(scale) > 64 or len(magnitude) > 64:
                    raise self.r.error(f"not a number this reader takes (signum {signum}, "
                                       f"scale {scale}, {len(magnitude)} bytes)")
                count = int.from_bytes(bytes(b & 0xFF for b in magnitude), "big")
            return Fraction(signum * count) / Fraction(10) ** scale if scale >= 0 else \
                Fraction(signum * count * 10 ** -scale)


def _movement(reader: _Reader, objects: list) -> MovementSave:
    m = _Movement(reader)
    game_data = next((o for o in objects
                      if _class_name(o) == "games.strategy.engine.data.GameData"), None)
    if game_data is None:
        raise SaveFormatError("not a TripleA save: no GameData in the stream")
    delegates, states = _delegates(reader, objects)
    with reader.at("GameData"):
        game = reader.text(game_data, "gameName")
        with reader.at("playerList", "players"):
            players = _players(m, reader.get(game_data, "playerList", "players"),
                               states.get("TechnologyDelegate"))
        with reader.at("sequence"):
            steps, index, round_ = _sequence(m, reader.get(game_data, "sequence"), delegates)
        with reader.at("unitTypeList", "unitTypes"):
            unit_types = _unit_types(m, game_data)
        keys: dict[int, int] = {}  # id() of a Unit object -> its key
        territories, canals = {}, []
        with reader.at("map", "territories"):
            for part, territory in reader.each(reader.get(game_data, "map", "territories"),
                                               "Territory"):
                record, found = _territory(m, territory, keys, part)
                territories[record.name] = record
                canals.extend(found)
        with reader.at("map", "connections"):
            neighbors = {}
            for territory, near in _table(reader, reader.get(game_data, "map"),
                                          "connections").items():
                name = reader.name_of(territory, "Territory", null=False)
                with reader.at(f"[{quoted(name)}]"):
                    neighbors[name] = tuple(sorted(reader.name_of(t, "Territory", null=False)
                                                   for t in reader.elements(near)))
        with reader.at("relationships", "relationships"):
            relationships = _relationships(m, game_data)
        with reader.at("properties"):
            from .save import _properties

            properties = _properties(reader, reader.get(game_data, "properties"))
        with reader.at("technologyFrontier", "techs"):
            advances = _advances(m, reader.opt(game_data, "technologyFrontier"))
        with reader.at("territoryEffectList"):
            effects = _territory_effects(m, reader.opt(game_data, "territoryEffectList"))
        with reader.at("playerList", "players"):
            triggers = _triggers(m, reader.get(game_data, "playerList", "players"))
    for name in neighbors:
        if name not in territories:
            raise reader.error(f"{quoted(name)} has neighbours but is not a territory of the map")
    conquered = blitzed = fought = frozenset()
    battles: list[PendingBattle] = []
    tracker_state = states.get("BattleDelegate")
    if tracker_state is not None:
        with reader.at("BattleExtendedDelegateState", "battleTracker"):
            tracker = reader.get(tracker_state, "battleTracker")
            conquered, blitzed, fought = (_territory_set(m, tracker, name) for name in
                                          ("conquered", "blitzed", "foughtBattles"))
            for part, battle in reader.each(reader.get(tracker, "pendingBattles")):
                with reader.at("pendingBattles", part):
                    battles.append(_pending_battle(m, battle, keys))
    move_state = states.get("MoveDelegate")
    move_started = False
    if move_state is not None:
        with reader.at("MoveExtendedDelegateState"):
            move_started = not reader.flag(move_state, "needToInitialize") and \
                reader.opt(move_state, "needToInitialize") is not None
    step_started = _step_started(reader, delegates, objects, steps[index])
    for place in (*conquered, *blitzed, *fought, *(b.territory for b in battles)):
        if place not in territories:
            raise reader.error(f"the battle tracker names {quoted(place)}, no territory of "
                               "the map")
    return MovementSave(
        game=game, round=round_, step_index=index, steps=steps, players=tuple(players),
        territories=territories, neighbors=neighbors, unit_types=unit_types,
        relationships=relationships, properties=properties, player_info=players,
        advances=advances, canals=tuple(canals), territory_effects=effects,
        triggers=triggers, conquered=conquered, blitzed=blitzed, fought=fought,
        battles=tuple(sorted(battles, key=lambda b: (b.territory, b.battle_type))),
        move_started=move_started, step_started=step_started)


def _step_started(reader: _Reader, delegates: dict, objects: list, step: Step) -> bool:
    """Whether the save's step has run its delegate's start (BaseTripleADelegate's
    startBaseStepsFinished, in the state's chain of superStates): its "before" triggers fired."""
    texts = str | reader.beans.JavaString
    for i, item in enumerate(objects):
        if isinstance(item, texts) and str(item) == "<DelegateStart>" and i + 5 < len(objects) \
                and isinstance(objects[i + 3], texts) \
                and str(objects[i + 3]).rsplit(".", 1)[-1] == step.delegate:
            state = objects[i + 5]
            for _ in range(8):
                if not isinstance(state, reader.beans.JavaInstance):
                    break
                value = reader.opt(state, "startBaseStepsFinished")
                if isinstance(value, bool):
                    return value
                state = reader.opt(state, "superState")
    return True


def _delegates(reader: _Reader, objects: list) -> tuple[dict, dict]:
    """({delegate name: class simple name}, {class simple name: its state}) from the stream's
    delegate records: "<DelegateStart>", name, display name, class, "<DelegateData>", state."""
    texts = str | reader.beans.JavaString
    classes, states = {}, {}
    for i, item in enumerate(objects):
        if isinstance(item, texts) and str(item) == "<DelegateStart>" and i + 5 < len(objects):
            name, java_class = objects[i + 1], objects[i + 3]
            if isinstance(name, texts) and isinstance(java_class, texts):
                simple = str(java_class).rsplit(".", 1)[-1]
                classes[str(name)] = simple
                state = objects[i + 5]
                if isinstance(state, reader.beans.JavaInstance) and simple not in states:
                    states[simple] = state
    return classes, states


def _properties_table(m: _Movement, value) -> dict:
    """A java.util.Properties: its custom data holds the entries, key then value."""
    if value is None:
        return {}
    texts = str | m.beans.JavaString
    items = [item for data in (getattr(value, "annotations", None) or {}).values()
             for item in data if isinstance(item, texts)]
    return {str(k): str(v) for k, v in zip(items[::2], items[1::2], strict=False)}


def _sequence(m: _Movement, sequence, delegates: dict) -> tuple[tuple[Step, ...], int, int]:
    r = m.r
    steps = []
    for part, step in r.each(r.get(sequence, "steps"), "GameStep"):
        with r.at("steps", part):
            delegate = m.text_or_none(r.opt(step, "delegateName"))
            if delegate is None:  # older saves held the delegate itself
                delegate = r.name_of(r.opt(step, "delegate")) or ""
            with r.at("properties"):
                properties = _properties_table(m, r.opt(step, "properties"))
            with r.at("player"):
                player = r.name_of(r.opt(step, "player"), "GamePlayer")
            steps.append(Step(
                name=r.text(step, "name"), player=player,
                delegate=delegates.get(delegate, delegate),
                display=r.optional_text(step, "displayName"), properties=properties,
                run_count=m.integer(step, "runCount", 0),
                max_run_count=m.integer(step, "maxRunCount", -1)))
    index = r.number(sequence, "currentIndex")
    if not 0 <= index < len(steps):
        raise r.error(f"step {index} of {len(steps)}: out of the sequence", "currentIndex")
    return tuple(steps), index, r.number(sequence, "round")


def _unit_types(m: _Movement, game_data) -> dict:
    r = m.r
    types = r.opt(r.opt(game_data, "unitTypeList"), "unitTypes") or {}
    if not isinstance(types, dict):
        raise r.error(f"expected a map, found {r.describe(types)}")
    found = {}
    for name, unit_type in types.items():
        with r.at(f"[{quoted(str(name))}]", "attachments", "['unitAttachment']"):
            attachment = r.instance(_table(r, unit_type, "attachments").get("unitAttachment"),
                                    "UnitAttachment", null=True)
            if attachment is None:
                found[str(name)] = UnitTypeMovement(str(name))
                continue
            found[str(name)] = _unit_type(m, str(name), attachment)
    return found


def _limit(m: _Movement, attachment, name: str) -> int | None:
    """A stacking limit (a Tuple of a count and a kind), its count; None where unset."""
    value = m.r.opt(attachment, name)
    if value is None:
        return None
    with m.r.at(name):
        count = m.r.opt(value, "first")
        count = getattr(count, "value", count)
        if isinstance(count, bool) or not isinstance(count, int):
            raise m.r.error(f"expected a whole number, found {m.r.describe(count)}", "first")
    return count


def _unit_type(m: _Movement, name: str, a) -> UnitTypeMovement:
    r = m.r
    receives = []
    for item in m.texts(r.opt(a, "receivesAbilityWhenWith"), "receivesAbilityWhenWith") or ():
        parts = item.split(":")
        if len(parts) != 2:
            raise r.error(f"expected ABILITY:UNIT, found {quoted(item)}",
                          "receivesAbilityWhenWith")
        receives.append((parts[0], parts[1]))
    requires = []
    for part, option in r.each(r.opt(a, "requiresUnitsToMove")):
        with r.at("requiresUnitsToMove", part):
            if not isinstance(option, list | tuple):
                raise r.error(f"expected a list of unit types, found {r.describe(option)}")
            requires.append(m.texts(list(option), "requiresUnitsToMove") or ())
    return UnitTypeMovement(
        name=name, movement=m.integer(a, "movement", 0), is_air=r.flag(a, "isAir"),
        is_sea=r.flag(a, "isSea"), can_blitz=r.flag(a, "canBlitz"),
        infrastructure=r.flag(a, "isInfrastructure"),
        not_in_combat_move=r.flag(a, "canNotMoveDuringCombatMove"),
        gives_movement=m.int_map(a, "givesMovement", "UnitType"),
        carrier_capacity=m.integer(a, "carrierCapacity", -1),
        carrier_cost=m.integer(a, "carrierCost", -1),
        kamikaze=r.flag(a, "isKamikaze"), suicide_on_attack=r.flag(a, "isSuicideOnAttack"),
        fuel_cost=m.int_map(a, "fuelCost", "Resource"),
        fuel_flat_cost=m.int_map(a, "fuelFlatCost", "Resource"),
        can_be_damaged=r.flag(a, "canBeDamaged"),
        max_operational_damage=m.integer(a, "maxOperationalDamage", -1),
        land_transport=r.flag(a, "isLandTransport"),
        land_transportable=r.flag(a, "isLandTransportable"),
        air_transport=r.flag(a, "isAirTransport"),
        air_transportable=r.flag(a, "isAirTransportable"),
        transport_capacity=m.integer(a, "transportCapacity", -1),
        transport_cost=m.integer(a, "transportCost", -1),
        receives_ability=tuple(receives), requires_units_to_move=tuple(requires),
        movement_limit=_limit(m, a, "movementLimit"),
        attacking_limit=_limit(m, a, "attackingLimit"))


def _unit(m: _Movement, obj, keys: dict) -> MovingUnit:
    r = m.r
    r.instance(obj, "Unit")
    with r.at("type"):
        unit_type = r.name_of(r.get(obj, "type"), "UnitType", null=False)
    with r.at("owner"):
        owner = r.name_of(r.get(obj, "owner"), "GamePlayer", null=False)
    moved = r.opt(obj, "alreadyMoved")
    already = Fraction(0) if moved is None else m.decimal(moved, "alreadyMoved")
    key = keys.setdefault(id(obj), len(keys))
    return MovingUnit(
        key=key, type=unit_type, owner=owner, already_moved=already,
        bonus_movement=m.integer(obj, "bonusMovement", 0), hits=m.integer(obj, "hits", 0),
        unit_damage=m.integer(obj, "unitDamage", 0),
        transported=r.opt(obj, "transportedBy") is not None,
        submerged=r.flag(obj, "submerged"), was_in_combat=r.flag(obj, "wasInCombat"))


def _territory(m: _Movement, territory, keys: dict, part: str
               ) -> tuple[TerritoryMovement, list[Canal]]:
    r = m.r
    with r.at(part):
        name = r.text(territory, "name")
    canals = []
    with r.at(f"{part} ({quoted(name)})"):
        attachments = _table(r, territory, "attachments")
        with r.at("attachments", "['territoryAttachment']"):
            ta = r.instance(attachments.get("territoryAttachment"), "TerritoryAttachment",
                            null=True)
            effects = []
            for part, effect in r.each(r.opt(ta, "territoryEffect")):
                with r.at("territoryEffect", part):
                    effects.append(r.name_of(effect, "TerritoryEffect", null=False))
            with r.at("originalOwner"):
                original = r.name_of(r.opt(ta, "originalOwner"), "GamePlayer")
            capital = m.text_or_none(r.opt(ta, "capital"))
        for attachment_name, attachment in attachments.items():
            if not str(attachment_name).startswith("canalAttachment"):
                continue
            with r.at("attachments", f"[{quoted(str(attachment_name))}]"):
                r.instance(attachment, "CanalAttachment")
                lands = []
                for part, land in r.each(r.opt(attachment, "landTerritories")):
                    with r.at("landTerritories", part):
                        lands.append(r.name_of(land, "Territory", null=False))
                excluded = r.opt(attachment, "excludedUnits")
                excluded_types = None
                if excluded is not None:
                    excluded_types = []
                    for part, unit_type in r.each(excluded):
                        with r.at("excludedUnits", part):
                            excluded_types.append(r.name_of(unit_type, "UnitType", null=False))
                canals.append(Canal(
                    name=r.text(attachment, "canalName"), zone=name,
                    land_territories=tuple(sorted(lands)),
                    excluded=None if excluded_types is None else frozenset(excluded_types),
                    no_combat_move=r.flag(attachment, "canNotMoveThroughDuringCombatMove")))
        with r.at("owner"):
            owner = r.name_of(r.get(territory, "owner"), "GamePlayer", null=False)
        units = []
        with r.at("unitCollection", "units"):
            for part, unit in r.each(r.get(territory, "unitCollection", "units")):
                with r.at(part):
                    units.append(_unit(m, unit, keys))
        record = TerritoryMovement(
            name=name, water=r.flag(territory, "water"), owner=owner, units=tuple(units),
            production=m.integer(ta, "production", 0) if ta is not None else 0,
            capital=capital, impassable=r.flag(ta, "isImpassable"),
            air_base=r.flag(ta, "airBase"), original_owner=original, effects=tuple(effects))
    return record, canals


def _relationships(m: _Movement, game_data) -> dict:
    r = m.r
    tracker = r.opt(game_data, "relationships")
    found = {}
    for key, relationship in _table(r, tracker, "relationships").items():
        with r.at("[...]"):
            p1 = r.name_of(r.get(key, "player1"), "GamePlayer", null=False)
            p2 = r.name_of(r.get(key, "player2"), "GamePlayer", null=False)
        with r.at(f"[{quoted(p1)}-{quoted(p2)}]", "relationshipType"):
            kind = r.instance(r.get(relationship, "relationshipType"), "RelationshipType")
            with r.at("attachments", "['relationshipTypeAttachment']"):
                a = r.instance(_table(r, kind, "attachments").get("relationshipTypeAttachment"),
                               "RelationshipTypeAttachment")

                def flag(name: str, a=a) -> str:
                    value = m.text_or_none(r.opt(a, name)) or "default"
                    if value not in ("default", "true", "false"):
                        raise r.error(f"expected default, true or false, found {quoted(value)}",
                                      name)
                    return value

                archetype = m.text_or_none(r.opt(a, "archeType")) or "war"
                if archetype not in ("war", "allied", "neutral"):
                    raise r.error(f"expected war, allied or neutral, found {quoted(archetype)}",
                                  "archeType")
                found[frozenset((p1, p2))] = Relationship(
                    name=r.text(kind, "name"), archetype=archetype,
                    land_over=flag("canMoveLandUnitsOverOwnedLand"),
                    air_over=flag("canMoveAirUnitsOverOwnedLand"),
                    land_air=flag("canLandAirUnitsOnOwnedLand"),
                    take_over=flag("canTakeOverOwnedTerritory"),
                    into_combat=flag("canMoveIntoDuringCombatMove"),
                    canals=flag("canMoveThroughCanals"))
    return found


# the TechAttachment booleans and the advances they stand for
TECH_FLAGS = ("heavyBomber", "longRangeAir", "jetPower", "rocket", "industrialTechnology",
              "superSub", "destroyerBombard", "improvedArtillerySupport", "paratroopers",
              "increasedFactoryProduction", "warBonds", "mechanizedInfantry", "aaRadar",
              "shipyards")
ADVANCE_PROPERTIES = {  # predefined advance class -> its TechAttachment property
    "SuperSubsAdvance": "superSub", "JetPowerAdvance": "jetPower",
    "ImprovedShipyardsAdvance": "shipyards", "AaRadarAdvance": "aaRadar",
    "LongRangeAircraftAdvance": "longRangeAir", "HeavyBomberAdvance": "heavyBomber",
    "ImprovedArtillerySupportAdvance": "improvedArtillerySupport", "RocketsAdvance": "rocket",
    "ParatroopersAdvance": "paratroopers",
    "IncreasedFactoryProductionAdvance": "increasedFactoryProduction",
    "WarBondsAdvance": "warBonds", "MechanizedInfantryAdvance": "mechanizedInfantry",
    "IndustrialTechnologyAdvance": "industrialTechnology",
    "DestroyerBombardTechAdvance": "destroyerBombard"}


def _advance_property(m: _Movement, advance) -> str | None:
    """The TechAttachment property an advance is held by (None: a generic tech, held by its
    name in genericTech); a GenericTechAdvance wrapping a predefined one is held as that."""
    short = _class_name(advance).rsplit(".", 1)[-1]
    if short in ADVANCE_PROPERTIES:
        return ADVANCE_PROPERTIES[short]
    if short == "GenericTechAdvance":
        inner = m.r.opt(advance, "advance")
        if inner is not None:
            with m.r.at("advance"):
                return _advance_property(m, inner) or "?"
        return None
    raise m.r.error(f"an advance of the class {short}, which this reader does not know")


def _advances(m: _Movement, frontier) -> tuple[Advance, ...]:
    r = m.r
    found = []
    for part, advance in r.each(r.opt(frontier, "techs")):
        with r.at(part):
            name = r.text(advance, "name")
            prop = _advance_property(m, advance)
            with r.at("attachments", "['techAbilityAttachment']"):
                a = _table(r, advance, "attachments").get("techAbilityAttachment")
                abilities = {}
                for unit_type, gained in _table(r, a, "unitAbilitiesGained").items():
                    type_name = r.name_of(unit_type, "UnitType", null=False)
                    with r.at("unitAbilitiesGained", f"[{quoted(type_name)}]"):
                        abilities[type_name] = frozenset(
                            m.texts(r.elements(gained), "unitAbilitiesGained") or ())
                found.append(Advance(
                    name=name, property=prop,
                    movement_bonus=m.int_map(a, "movementBonus", "UnitType")
                    if a is not None else {},
                    abilities=abilities, airborne_forces=r.flag(a, "airborneForces")))
    return tuple(found)


def _territory_effects(m: _Movement, effects) -> dict:
    """{effect: the parts of it that touch movement (movementCostModifier, noBlitz,
    unitsNotAllowed), as a tuple of names}."""
    r = m.r
    if effects is None:
        return {}
    if not isinstance(effects, dict):
        raise r.error(f"expected a map, found {r.describe(effects)}")
    found = {}
    for name, effect in effects.items():
        with r.at(f"[{quoted(str(name))}]", "attachments", "['territoryEffectAttachment']"):
            a = _table(r, effect, "attachments").get("territoryEffectAttachment")
            parts = []
            if m.int_map(a, "movementCostModifier", "UnitType") if a is not None else {}:
                parts.append("movementCostModifier")
            for list_field in ("noBlitz", "unitsNotAllowed"):
                if r.elements(r.opt(a, list_field)):
                    parts.append(list_field)
            found[str(name)] = tuple(parts)
    return found


def _players(m: _Movement, players, tech_state) -> dict:
    r = m.r
    pending: dict[str, list[str]] = {}
    if tech_state is not None:
        with r.at("TechnologyExtendedDelegateState", "techs"):
            for player, advances in _table(r, tech_state, "techs").items():
                name = r.name_of(player, "GamePlayer", null=False)
                pending[name] = [r.text(a, "name") for a in r.elements(advances)]
    found = {}
    for part, player in r.each(players, "GamePlayer"):
        with r.at(part):
            name = r.text(player, "name")
            attachments = _table(r, player, "attachments")
            with r.at("attachments", "['techAttachment']"):
                ta = r.instance(attachments.get("techAttachment"), "TechAttachment", null=True)
                flags = frozenset(f for f in TECH_FLAGS if r.flag(ta, f))
                generic = frozenset(str(k) for k, v in _table(r, ta, "genericTech").items()
                                    if getattr(v, "value", v) is True)
            restriction_type = restriction = None
            with r.at("attachments", "['rulesAttachment']"):
                ra = attachments.get("rulesAttachment")
                if ra is not None:
                    r.instance(ra, "RulesAttachment")
                    restriction_type = m.text_or_none(r.opt(ra, "movementRestrictionType"))
                    restriction = m.texts(r.opt(ra, "movementRestrictionTerritories"),
                                          "movementRestrictionTerritories")
            with r.at("attachments", "['playerAttachment']"):
                pa = attachments.get("playerAttachment")
                limits = pa is not None and any(
                    r.elements(r.opt(pa, f)) for f in ("movementLimit", "attackingLimit"))
            with r.at("resources", "resources"):
                resources = m.int_map(r.opt(player, "resources"), "resources", "Resource")
            held = []
            with r.at("unitsHeld", "units"):
                for unit_part, unit in r.each(r.opt(r.opt(player, "unitsHeld"), "units")):
                    with r.at(unit_part, "type"):
                        held.append(r.name_of(r.get(unit, "type"), "UnitType", null=False))
            found[name] = Player(
                name=name, pus=resources.get("PUs", 0), tech_flags=flags,
                generic_techs=generic, pending_advances=tuple(pending.get(name, ())),
                restriction_type=restriction_type, restriction=restriction,
                stacking_limits=bool(limits), units_held=tuple(held))
    return found


TRIGGER_KINDS = {  # TriggerAttachment fields whose change a trigger makes, when set
    "placement": "placement", "removeUnits": "removeUnits",
    "changeOwnership": "changeOwnership", "relationshipChange": "relationshipChange",
    "playerProperty": "playerProperty", "territoryProperty": "territoryProperty",
    "unitProperty": "unitProperty", "relationshipTypeProperty": "relationshipTypeProperty",
    "territoryEffectProperty": "territoryEffectProperty", "tech": "tech",
    "availableTech": "availableTech", "purchase": "purchase", "support": "support",
    "frontier": "frontier", "resource": "resource", "victory": "victory",
    "activateTrigger": "activateTrigger"}


def _triggers(m: _Movement, players) -> tuple[Trigger, ...]:
    r = m.r
    found = []
    for part, player in r.each(players, "GamePlayer"):
        with r.at(part):
            owner = r.text(player, "name")
            for attachment_name, attachment in _table(r, player, "attachments").items():
                if not _class_name(attachment).endswith(".TriggerAttachment"):
                    continue
                with r.at("attachments", f"[{quoted(str(attachment_name))}]"):
                    when = []
                    for when_part, item in r.each(r.opt(attachment, "when")):
                        with r.at("when", when_part):
                            when.append((r.text(item, "first"), r.text(item, "second")))
                    kinds = set()
                    for java_name, kind in TRIGGER_KINDS.items():
                        value = r.opt(attachment, java_name)
                        if value is None or value is False or value == "":
                            continue
                        if isinstance(value, dict) and not value:
                            continue
                        if isinstance(value, r.beans.JavaInstance) and not isinstance(
                                value, dict | list) and not r.elements(value) \
                                and not isinstance(value, str | r.beans.JavaString):
                            values = r.opt(value, "mapValues")
                            if not values:
                                continue
                        if isinstance(value, list | tuple) and not value:
                            continue
                        kinds.add(kind)
                    changes = m.texts(r.opt(attachment, "relationshipChange"),
                                      "relationshipChange") or ()
                    found.append(Trigger(
                        name=str(attachment_name), player=owner, when=tuple(when),
                        uses=m.integer(attachment, "uses", -1), kinds=frozenset(kinds),
                        relationship_changes=changes))
    return tuple(found)


def _territory_set(m: _Movement, tracker, name: str) -> frozenset:
    places = set()
    for part, territory in m.r.each(m.r.opt(tracker, name)):
        with m.r.at(name, part):
            places.add(m.r.name_of(territory, "Territory", null=False))
    return frozenset(places)


def _pending_battle(m: _Movement, battle, keys: dict) -> PendingBattle:
    r = m.r
    with r.at("battleSite"):
        site = r.name_of(r.get(battle, "battleSite"), "Territory", null=False)
    with r.at("battleType"):
        kind = r.opt(battle, "battleType")
        kind = str(getattr(kind, "value", kind) or "NORMAL")
    with r.at("attacker"):
        attacker = r.name_of(r.opt(battle, "attacker"), "GamePlayer")
    attacking = set()
    for part, unit in r.each(r.opt(battle, "attackingUnits")):
        with r.at("attackingUnits", part):
            r.instance(unit, "Unit")
            if id(unit) in keys:
                attacking.add(keys[id(unit)])
    return PendingBattle(territory=site, battle_type=kind, attacker=attacker,
                         attacking=frozenset(attacking))
