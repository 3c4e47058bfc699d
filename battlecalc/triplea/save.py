"""Read a TripleA save (``.tsvg``): gzip over a Java object stream, parsed by javaobj-py3.

The stream holds ``org.triplea.util.Version`` (the engine that wrote it), then
``games.strategy.engine.data.GameData``, then each delegate's state.  This module turns the
few parts battlecalc needs into plain dataclasses (:class:`SaveData`): the game's name, the
round, the step and the player to move, every territory's units (type, owner, hits), the rule
switches (``properties``), each nation's technologies, the alliances, and the battles the
battle delegate's ``BattleTracker`` holds (``pendingBattles``), with where a battle in progress
stands (its round, its execution stack, the dice of a fire step already rolled).

What the fields mean was read from TripleA's sources (GameData, Territory, Unit, GameSequence,
BattleTracker, MustFightBattle, Fire, DiceRoll, Die, TechAttachment); no code of TripleA is used.

Everything that goes wrong (not gzip, not a Java stream, truncated, a field of another TripleA
version) becomes one :class:`~battlecalc.errors.BattleInputError` line.
"""

from __future__ import annotations

import io
import logging
import struct
import zlib
from collections import Counter
from dataclasses import dataclass, field

from ..errors import BattleInputError
from ..files import read_input

MAX_SAVE_BYTES = 64 * 1024 * 1024  # compressed; a save is a few hundred kB
MAX_STREAM_BYTES = 512 * 1024 * 1024  # decompressed: a gzip bomb stops here
INSTALL_HINT = "pip install 'battlecalc[triplea]'"

# TechAttachment fields that change combat -> battlecalc's technology ids
TECH_FIELDS = {
    "heavyBomber": "heavy_bombers",
    "jetPower": "jets",
    "superSub": "super_subs",
    "aaRadar": "radar",
    "improvedArtillerySupport": "improved_artillery",
    "destroyerBombard": "combined_bombardment",
}


class SaveFormatError(BattleInputError):
    """A file that is not a TripleA save this reader understands."""


@dataclass(frozen=True)
class UnitRecord:
    """One unit of the save: its TripleA type name, owner (None: no owner) and hits taken."""

    type: str
    owner: str | None
    hits: int = 0


@dataclass(frozen=True)
class TerritoryRecord:
    name: str
    owner: str | None
    water: bool
    units: tuple[UnitRecord, ...]
    production: int = 0  # the territory attachment's production value (a raid's cap)


@dataclass(frozen=True)
class FireState:
    """A fire step of a battle in progress (docs/in-progress.md): who fires, what kind of
    fire, how far it went (phase "roll": its dice to roll; "select": rolled, `hits` hits, the
    casualties to choose; "mark": chosen, `killed`), read from TripleA 2.0-2.4's Fire, FireAa
    and raid steps or 2.5's RollDiceStep, SelectCasualties and MarkCasualties."""

    defending: bool  # the defender fires
    firing_nation: str | None
    hits: int
    dice: int
    next_step: str  # TripleA's name of the step to come ("Germans select casualties")
    kind: str = "general"  # general, aa, bombard, strike, air (air v non subs), raid_aa, bombing
    phase: str = "select"  # roll, select, mark
    killed: tuple[UnitRecord, ...] = ()  # the casualties chosen ("mark")
    step: str = ""  # the class of TripleA's step object (named in messages)


@dataclass(frozen=True)
class BattleRecord:
    """A battle of the BattleTracker (pending or in progress)."""

    territory: str
    battle_type: str  # TripleA's BattleType: NORMAL, BOMBING_RAID, AIR_BATTLE, AIR_RAID
    attacker: str | None
    defender: str | None
    attacking: tuple[UnitRecord, ...]
    defending: tuple[UnitRecord, ...]
    bombarding: tuple[UnitRecord, ...] = ()
    landing: tuple[UnitRecord, ...] = ()  # amphibiousLandAttackers
    amphibious: bool = False
    round: int = 1
    started: bool = False  # its execution stack holds steps: the battle is being fought
    killed: tuple[UnitRecord, ...] = ()
    attacking_waiting_to_die: tuple[UnitRecord, ...] = ()
    defending_waiting_to_die: tuple[UnitRecord, ...] = ()
    steps: tuple[str, ...] = ()  # the round's step names (stepStrings)
    fire: FireState | None = None


@dataclass(frozen=True)
class SaveData:
    game: str
    engine_version: str
    round: int
    step: str
    step_display: str | None
    player: str | None
    territories: tuple[TerritoryRecord, ...]
    battles: tuple[BattleRecord, ...]
    properties: dict = field(default_factory=dict)
    techs: dict = field(default_factory=dict)  # nation -> tuple of battlecalc tech ids
    alliances: dict = field(default_factory=dict)  # nation -> tuple of alliance names


# ---------------------------------------------------------------- the Java object graph


def _javaobj():
    try:
        import javaobj.v2 as javaobj
        from javaobj.v2 import beans
    except ImportError:
        raise BattleInputError(
            f"reading TripleA saves needs the javaobj-py3 package: {INSTALL_HINT}") from None
    logging.getLogger("javaobj").setLevel(logging.CRITICAL)  # it logs every odd class
    return javaobj, beans


def _class_name(obj) -> str:
    desc = getattr(obj, "classdesc", None)
    return str(getattr(desc, "name", type(obj).__name__))


class _Reader:
    """Field access on javaobj's objects; a missing or mistyped field is a SaveFormatError
    that names it (a save of another TripleA version)."""

    def __init__(self, beans):
        self.beans = beans
        self._fields: dict[int, dict] = {}

    def fields(self, obj) -> dict:
        if not isinstance(obj, self.beans.JavaInstance):
            raise SaveFormatError(f"not a TripleA save this version of battlecalc reads: "
                                  f"expected an object, found {type(obj).__name__}")
        key = id(obj)
        if key not in self._fields:
            values = {}
            for _, by_field in obj.field_data.items():
                for desc, value in by_field.items():
                    values[str(desc.name)] = value
            self._fields[key] = values
        return self._fields[key]

    def get(self, obj, *path: str):
        for name in path:
            values = self.fields(obj)
            if name not in values:
                raise SaveFormatError(
                    f"not a TripleA save this version of battlecalc reads: "
                    f"{_class_name(obj).rsplit('.', 1)[-1]} has no field {name!r}")
            obj = values[name]
        return obj

    def opt(self, obj, name: str, default=None):
        if not isinstance(obj, self.beans.JavaInstance):
            return default
        return self.fields(obj).get(name, default)

    def text(self, obj, *path: str) -> str:
        value = self.get(obj, *path) if path else obj
        if isinstance(value, str | self.beans.JavaString):
            return str(value)
        raise SaveFormatError(f"not a TripleA save this version of battlecalc reads: "
                              f"{'.'.join(path) or 'a name'} is not text")

    def number(self, obj, *path: str) -> int:
        value = self.get(obj, *path)
        if isinstance(value, bool) or not isinstance(value, int):
            raise SaveFormatError(f"not a TripleA save this version of battlecalc reads: "
                                  f"{'.'.join(path)} is not a number")
        return value

    def flag(self, obj, name: str) -> bool:
        value = self.opt(obj, name, False)
        return bool(value) if isinstance(value, bool) else False

    def elements(self, obj) -> list:
        """The elements of a Java collection as javaobj gives it: lists and maps it converts,
        sets and deques it leaves as objects whose custom data holds the elements."""
        if obj is None:
            return []
        if isinstance(obj, dict):
            return list(obj.values())
        if isinstance(obj, list | tuple):
            return list(obj)
        if isinstance(obj, self.beans.JavaInstance):
            values = self.fields(obj)
            for inner in ("c", "list", "m"):  # Collections$Unmodifiable*, synchronized ones
                if inner in values:
                    return self.elements(values[inner])
            found = []
            for data in (obj.annotations or {}).values():
                found.extend(a for a in data if isinstance(a, self.beans.JavaInstance))
            return found
        raise SaveFormatError(f"not a TripleA save this version of battlecalc reads: "
                              f"expected a collection, found {type(obj).__name__}")

    def name_of(self, obj) -> str | None:
        """The name of a GamePlayer, Territory or UnitType (None for no object)."""
        return None if obj is None else self.text(obj, "name")

    def unit(self, obj) -> UnitRecord:
        hits = self.opt(obj, "hits", 0)
        return UnitRecord(self.name_of(self.get(obj, "type")),
                          self.name_of(self.get(obj, "owner")),
                          hits if isinstance(hits, int) and not isinstance(hits, bool) else 0)

    def units(self, obj) -> tuple[UnitRecord, ...]:
        return tuple(self.unit(u) for u in self.elements(obj))


# ---------------------------------------------------------------- the file


def _stream(path, max_inflated: int = MAX_STREAM_BYTES) -> bytes:
    """The decompressed object stream of the save at `path`, refused past `max_inflated`
    bytes (a gzip bomb stops there)."""
    raw = read_input(path, MAX_SAVE_BYTES, "a TripleA save", SaveFormatError)
    if raw[:2] != b"\x1f\x8b":
        raise SaveFormatError(f"{path} is not a TripleA save (.tsvg): not gzip data")
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        data = inflater.decompress(raw, max_inflated)
    except zlib.error as exc:
        raise SaveFormatError(f"{path} is a damaged TripleA save: gzip data corrupt ({exc})"
                              ) from None
    if inflater.unconsumed_tail:
        raise SaveFormatError(f"{path} is not a TripleA save: over "
                              f"{max_inflated >> 20} MiB decompressed")
    if not inflater.eof:
        raise SaveFormatError(f"{path} is a truncated TripleA save: the gzip data ends early")
    return data


def _objects(path, max_inflated: int = MAX_STREAM_BYTES) -> list:
    data = _stream(path, max_inflated)
    if data[:2] != b"\xac\xed":
        raise SaveFormatError(f"{path} is not a TripleA save: no Java object stream inside")
    javaobj, _ = _javaobj()
    try:
        objects = javaobj.load(io.BytesIO(data))
    except RecursionError:
        raise SaveFormatError(f"{path} is a damaged TripleA save: objects nested too deeply"
                              ) from None
    except Exception as exc:  # javaobj raises whatever the damaged bytes lead it to
        reason = " ".join(str(exc).split())[:80] or type(exc).__name__
        raise SaveFormatError(f"{path} is a damaged or truncated TripleA save ({reason})"
                              ) from None
    if not isinstance(objects, list):
        objects = [objects]
    return objects


def read_save(path, max_inflated: int = MAX_STREAM_BYTES) -> SaveData:
    """Read the TripleA save at `path` (raises BattleInputError for anything else), its
    object stream at most `max_inflated` bytes once decompressed."""
    return save_of_objects(_objects(path, max_inflated), path)


def save_of_objects(objects: list, path) -> SaveData:
    """The save read from its object stream (`_objects(path)`); `path` names it in errors."""
    _, beans = _javaobj()
    reader = _Reader(beans)
    try:
        return _save_data(reader, objects, str(path))
    except SaveFormatError as exc:
        raise SaveFormatError(f"{path}: {exc}") from None
    except RecursionError:
        raise SaveFormatError(f"{path}: not a TripleA save this version of battlecalc reads "
                              "(objects nested too deeply)") from None
    except (AttributeError, TypeError, ValueError, KeyError, IndexError, struct.error) as exc:
        # a field present with an unexpected shape (another TripleA version, damaged data)
        raise SaveFormatError(f"{path}: not a TripleA save this version of battlecalc reads "
                              f"({type(exc).__name__})") from None


def _save_data(reader: _Reader, objects: list, path: str) -> SaveData:
    game_data = next((o for o in objects
                      if _class_name(o) == "games.strategy.engine.data.GameData"), None)
    if game_data is None:
        raise SaveFormatError("not a TripleA save: no GameData in the stream")
    version = objects[0] if objects else None
    engine = ".".join(str(reader.opt(version, k, "")) for k in ("major", "minor", "point"))
    sequence = reader.get(game_data, "sequence")
    steps = reader.elements(reader.get(sequence, "steps"))
    index = reader.number(sequence, "currentIndex")
    if not 0 <= index < len(steps):
        raise SaveFormatError("not a TripleA save this version of battlecalc reads: the "
                              "current step is out of the sequence")
    step = steps[index]
    display = reader.opt(step, "displayName")
    territories = tuple(_territory(reader, t) for t in
                        reader.elements(reader.get(game_data, "map", "territories")))
    battles = []
    for state in objects:
        if _class_name(state).endswith(".BattleExtendedDelegateState"):
            tracker = reader.get(state, "battleTracker")
            for battle in reader.elements(reader.get(tracker, "pendingBattles")):
                battles.append(_battle(reader, battle))
    battles.sort(key=lambda b: (b.territory, b.battle_type))
    return SaveData(
        game=reader.text(game_data, "gameName"),
        engine_version=engine,
        round=reader.number(sequence, "round"),
        step=reader.text(step, "name"),
        step_display=None if display is None else reader.text(display),
        player=reader.name_of(reader.opt(step, "player")),
        territories=territories,
        battles=tuple(battles),
        properties=_properties(reader, reader.get(game_data, "properties")),
        techs=_techs(reader, reader.get(game_data, "playerList", "players")),
        alliances=_alliances(reader, game_data),
    )


def _territory(reader: _Reader, territory) -> TerritoryRecord:
    attachment = (reader.opt(territory, "attachments") or {}).get("territoryAttachment")
    production = reader.opt(attachment, "production", 0)
    return TerritoryRecord(
        name=reader.text(territory, "name"),
        owner=reader.name_of(reader.get(territory, "owner")),
        water=reader.flag(territory, "water"),
        units=reader.units(reader.get(territory, "unitCollection", "units")),
        production=production if isinstance(production, int) else 0,
    )


def _enum(value) -> str:
    return str(getattr(value, "value", value))


def _battle(reader: _Reader, battle) -> BattleRecord:
    stack = reader.opt(battle, "stack")
    current = reader.opt(stack, "currentStep")
    queued = reader.elements(reader.opt(stack, "deque"))
    round_ = reader.opt(battle, "round", 1)
    return BattleRecord(
        territory=reader.name_of(reader.get(battle, "battleSite")),
        battle_type=_enum(reader.get(battle, "battleType")),
        attacker=reader.name_of(reader.get(battle, "attacker")),
        defender=reader.name_of(reader.opt(battle, "defender")),
        attacking=reader.units(reader.get(battle, "attackingUnits")),
        defending=reader.units(reader.get(battle, "defendingUnits")),
        bombarding=reader.units(reader.opt(battle, "bombardingUnits")),
        landing=reader.units(reader.opt(battle, "amphibiousLandAttackers")),
        amphibious=reader.flag(battle, "isAmphibious"),
        round=round_ if isinstance(round_, int) and not isinstance(round_, bool) else 1,
        started=current is not None or bool(queued),
        killed=reader.units(reader.opt(battle, "killed")),
        attacking_waiting_to_die=reader.units(reader.opt(battle, "attackingWaitingToDie")),
        defending_waiting_to_die=reader.units(reader.opt(battle, "defendingWaitingToDie")),
        steps=tuple(reader.text(s) for s in reader.elements(reader.opt(battle, "stepStrings"))),
        fire=_fire_state(reader, current if current is not None else
                         (queued[0] if queued else None)),
    )


_PHASES = {"1": "roll", "2": "select", "3": "mark", "4": "mark"}  # Fire$N, FireAa$N (2.0-2.4)
_NEW_PHASES = {"RollDiceStep": "roll", "SelectCasualties": "select", "MarkCasualties": "mark"}
_GROUPS = {"aa": "aa", "naval bombardment": "bombard", "first strike units": "strike",
           "air vs non subs": "air"}  # 2.5's firingGroup.displayName (else general fire)


def _fire_state(reader: _Reader, step) -> FireState | None:
    """The fire a battle in progress stands in, from its step object (None: no fire step, or
    one battlecalc does not read).  TripleA 2.0-2.4: the inner steps Fire$1 (roll), Fire$2
    (select), Fire$3 (mark) of a Fire (general, first strike, bombardment: `text` "Bombard"),
    FireAa$N of a land battle's AA, StrategicBombingRaidBattle$FireAa$N and $ConductBombing$N
    of a raid, each holding its fire as ``this$0``; 2.5: RollDiceStep, SelectCasualties,
    MarkCasualties with `side`, `firingGroup` and `fireRoundState`."""
    name = _class_name(step)
    short = name.rsplit(".", 1)[-1]
    if short in _NEW_PHASES:
        side = _enum(reader.opt(step, "side"))
        group = reader.opt(step, "firingGroup")
        label = str(reader.opt(group, "displayName") or "units").strip().lower()
        kind = _GROUPS.get(label, "general")
        state = reader.opt(step, "fireRoundState")
        dice = reader.opt(state, "dice")
        rolls, hits = _dice(reader, dice) if dice is not None else ([], 0)
        casualties = reader.opt(state, "casualties")
        killed = reader.units(reader.opt(casualties, "killed")) if casualties is not None else ()
        return FireState(defending=side == "DEFENSE", firing_nation=None, hits=hits,
                         dice=len(rolls), next_step="", kind=kind,
                         phase="roll" if dice is None else _NEW_PHASES[short],
                         killed=killed, step=short)
    fire = reader.opt(step, "this$0")
    outer = _class_name(fire)
    phase = _PHASES.get(short.rsplit("$", 1)[-1]) if "$" in short else None
    if outer.endswith("StrategicBombingRaidBattle"):  # the raid itself (ConductBombing)
        return FireState(False, None, 0, 0, "", kind="bombing", phase="roll", step=short)
    if phase is None or not outer.endswith((".Fire", "$FireAa", ".FireAa")):
        return None
    dice = reader.opt(fire, "dice")
    rolls, hits = _dice(reader, dice) if dice is not None else ([], 0)
    if outer.endswith("$FireAa"):  # a raid's AA (StrategicBombingRaidBattle$FireAa)
        kind = "raid_aa"
    elif outer.endswith(".FireAa"):
        kind = "aa"
    elif str(reader.opt(fire, "text") or "") == "Bombard":
        kind = "bombard"
    elif "first strike" in str(reader.opt(fire, "stepName") or "").lower():
        kind = "strike"
    else:
        kind = "general"
    killed = reader.units(reader.opt(fire, "killed")) if phase == "mark" else ()
    return FireState(
        defending=reader.flag(fire, "defending"),
        firing_nation=reader.name_of(reader.opt(fire, "firingPlayer")),
        hits=hits, dice=len(rolls),
        next_step=str(reader.opt(fire, "stepName") or ""), kind=kind,
        phase="roll" if dice is None and phase != "mark" else phase, killed=killed,
        step=short)


def _dice(reader: _Reader, roll) -> tuple[list[int], int]:
    """A DiceRoll's dice (each packed as value << 16 | rolledAt << 8 | type, type 1 a hit)
    and its hits, from its externalized data: int[] dice, int hits, double expectedHits."""
    rolls: list[int] = []
    block = b""
    for data in (roll.annotations or {}).values():
        for item in data:
            if isinstance(item, list | tuple):  # javaobj's JavaArray is a list
                rolls = [int(v) for v in item]
            else:
                block += block_bytes(item)
    hits = struct.unpack(">i", block[:4])[0] if len(block) >= 4 else sum(
        1 for v in rolls if v & 0xFF == 1)
    return rolls, hits


def block_bytes(item) -> bytes:
    """The bytes of a custom-data block (javaobj's BlockData, or bytes)."""
    if isinstance(item, bytes):
        return item
    data = getattr(item, "data", None)
    return data if isinstance(data, bytes) else b""


def _properties(reader: _Reader, properties) -> dict:
    """Rule switches: {name: value} for the boolean, number and text properties."""
    found = {}
    for part in ("constantProperties", "editableProperties"):
        table = reader.opt(properties, part) or {}
        for name, value in table.items():
            inner = reader.opt(value, "value", value) if isinstance(
                value, reader.beans.JavaInstance) else value
            if isinstance(inner, bool | int | float):
                found[str(name)] = inner
            elif isinstance(inner, str | reader.beans.JavaString):
                found[str(name)] = str(inner)
    return found


def _techs(reader: _Reader, players) -> dict:
    techs = {}
    for player in reader.elements(players):
        name = reader.text(player, "name")
        attachment = (reader.opt(player, "attachments") or {}).get("techAttachment")
        techs[name] = tuple(tech for field_name, tech in TECH_FIELDS.items()
                            if reader.flag(attachment, field_name))
    return techs


def _alliances(reader: _Reader, game_data) -> dict:
    """{nation: alliances}; the tracker is serialized as a multimap: per key, a count, then
    that many values."""
    proxy = reader.opt(game_data, "alliances")
    multimap = reader.opt(proxy, "alliances")
    items = []
    for data in (getattr(multimap, "annotations", None) or {}).values():
        items.extend(data)
    found: dict[str, list[str]] = {}
    player = None
    for item in items:
        if isinstance(item, reader.beans.JavaInstance):
            player = reader.name_of(item)
        elif isinstance(item, str | reader.beans.JavaString) and player is not None:
            found.setdefault(player, []).append(str(item))
    return {p: tuple(a) for p, a in found.items()}


def unit_counts(units) -> Counter:
    """{(owner, type, hits): count}."""
    return Counter((u.owner, u.type, u.hits) for u in units)
