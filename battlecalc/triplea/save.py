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

The parsing budget (:class:`ParseBudget`).  javaobj-py3 builds every value of the stream as a
Python object (about 250 bytes of Python for a 3-byte empty string) with no limit of its own, so
a small file can ask for gigabytes: 85 kB of gzip inflate to 20 million empty strings.  The
stream is therefore read within a budget, each part of it checked as javaobj reads, so that a
file past it is refused as soon as it is past, after a bounded amount of work:

* items: javaobj reads each value of the stream (a type code, a number, a string's bytes) with
  one ``read`` call of the file object it is given; that object (:class:`_BudgetedStream`)
  counts the calls.  Counting at this one narrow door needs nothing of javaobj's internals and
  sees every value however it is nested;
* top-level contents and nesting: a subclass of javaobj's parser counts the contents it reads
  at the top of the stream and how deeply they nest (its ``_read_content``, the one method every
  content goes through);
* string and array sizes: a string or a block of custom data is one ``read`` of its length,
  refused past ``string_bytes`` before it is read; an array's length reaches the transformers'
  ``load_array`` hook before its elements are read, and is refused there past
  ``array_length``;
* seconds: the stream checks the clock every 4,096 items.

The figures of real saves, measured with javaobj-py3 0.6.1 (the seven public saves of
triplea-game/assets, test_data/save_games/2.x; no later Global 1940 save is public there): the
largest, a Civil War game of 189 kB (1.35 MB inflated), holds 449,420 items, 93 top-level
contents, strings of at most 52,527 bytes and arrays of at most 603 elements, and reads in about
1.5 s into about 55 MB; the deepest, Global 1940 2nd Edition, nests 114 levels (its attachments
refer to one another).  TripleA's developers report real saves of 1 MB at most (issues #37 and
#250), about 10 MB inflated; the budget is set to take such a save whole.  Nesting has a ceiling
of its own: javaobj reads nested contents by recursion, about five Python frames a level, so
Python's recursion limit (1,000 frames) stops it near 190 levels; past ``depth`` (180) or at
that limit, the save is refused alike.
"""

from __future__ import annotations

import functools
import io
import logging
import struct
import time
import zlib
from collections import Counter
from dataclasses import dataclass, field

from ..errors import BattleInputError
from ..files import read_input

MAX_SAVE_BYTES = 64 * 1024 * 1024  # compressed; a save is a few hundred kB
MAX_STREAM_BYTES = 64 * 1024 * 1024  # decompressed: a gzip bomb stops here (real: 1.4 MB)
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


class SaveBudgetError(SaveFormatError):
    """A save past the parsing budget: more than a real save holds."""


@dataclass(frozen=True)
class ParseBudget:
    """What reading one save's object stream may cost (the module docstring gives the figures
    of real saves each limit is set against)."""

    items: int = 4_000_000  # values read: 9x the largest real save (449,420)
    objects: int = 600_000  # objects, strings, arrays and classes built: 10x (56,563)
    top_level: int = 1_000  # contents at the top of the stream (real: 75 to 93)
    depth: int = 180  # levels of nested contents (real: 114 at most)
    string_bytes: int = 1 << 20  # one string or block of custom data (real: 52,527 at most)
    array_length: int = 100_000  # elements of one array (real: 603 at most)
    seconds: float = 30.0  # wall time of the parse (real: 1.5 s at most)


SAVE_BUDGET = ParseBudget()


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
    """A fire step of a battle in progress whose dice are rolled: who fired, how many hits."""

    defending: bool  # the defender fired
    firing_nation: str | None
    hits: int
    dice: int
    next_step: str  # TripleA's name of the step to come ("Germans select casualties")


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


@dataclass
class StreamFigures:
    """What reading an object stream took, each figure against its part of the budget: the
    items read, the objects built, the contents at the top, the deepest nesting, the longest
    string or block (bytes) and array (elements) read, the seconds taken."""

    items: int = 0
    objects: int = 0
    top_level: int = 0
    depth: int = 0
    string_bytes: int = 0
    array_length: int = 0
    seconds: float = 0.0


class _BudgetedStream(io.BytesIO):
    """The object stream as javaobj reads it, one ``read`` call per value: the calls are
    counted against the budget's items, the length a call asks for (a string's, a block's)
    against its string size, and the clock is looked at every 4,096 calls."""

    def __init__(self, data: bytes, budget: ParseBudget, figures: StreamFigures):
        super().__init__(data)
        self.budget, self.figures = budget, figures
        self.deadline = time.monotonic() + budget.seconds

    def read(self, size: int | None = -1) -> bytes:
        figures, budget = self.figures, self.budget
        figures.items += 1
        if figures.items > budget.items:
            raise SaveBudgetError(f"more than {budget.items:,} items in its object stream")
        if not figures.items & 0xFFF and time.monotonic() > self.deadline:
            raise SaveBudgetError(f"not read in {budget.seconds:g} s")
        if size is not None and size > figures.string_bytes:
            if size > budget.string_bytes:
                raise SaveBudgetError(f"a string or block of {size:,} bytes (more than "
                                      f"{budget.string_bytes:,})")
            figures.string_bytes = size
        return super().read(size)


@functools.cache
def _budgeted_parser():
    """javaobj's parser counting the contents at the top of the stream, their nesting and the
    objects built, and a transformer refusing an array past the budget's length before its
    elements are read."""
    from javaobj.v2.api import ObjectTransformer
    from javaobj.v2.core import JavaStreamParser

    class Parser(JavaStreamParser):
        def __init__(self, stream: _BudgetedStream, transformers):
            super().__init__(stream, transformers)
            self.budget, self.figures = stream.budget, stream.figures
            self.depth = 0

        def _read_content(self, type_code, block_data, class_desc=None):
            budget, figures = self.budget, self.figures
            if self.depth == 0:
                figures.top_level += 1
                if figures.top_level > budget.top_level:
                    raise SaveBudgetError(f"more than {budget.top_level:,} contents at the "
                                          "top of its object stream")
            elif self.depth >= budget.depth:
                raise SaveBudgetError(f"objects nested more than {budget.depth} deep")
            self.depth += 1
            figures.depth = max(figures.depth, self.depth)
            try:
                return super()._read_content(type_code, block_data, class_desc)
            finally:
                self.depth -= 1

        def _new_handle(self):  # each object, string, array or class the stream defines
            self.figures.objects += 1
            if self.figures.objects > self.budget.objects:
                raise SaveBudgetError(f"more than {self.budget.objects:,} objects in its "
                                      "object stream")
            return super()._new_handle()

    class ArrayLengths(ObjectTransformer):
        def __init__(self, budget: ParseBudget, figures: StreamFigures):
            self.budget, self.figures = budget, figures

        def load_array(self, reader, type_code, size):
            if size > self.budget.array_length:
                raise SaveBudgetError(f"an array of {size:,} elements (more than "
                                      f"{self.budget.array_length:,})")
            self.figures.array_length = max(self.figures.array_length, size)
            return None  # javaobj reads the elements

    return Parser, ArrayLengths


def _objects(path, max_inflated: int = MAX_STREAM_BYTES,
             budget: ParseBudget = SAVE_BUDGET) -> list:
    """The contents of the save's object stream, read within `budget`."""
    return _read_objects(path, max_inflated, budget)[0]


def _read_objects(path, max_inflated: int, budget: ParseBudget
                  ) -> tuple[list, StreamFigures]:
    data = _stream(path, max_inflated)
    if data[:2] != b"\xac\xed":
        raise SaveFormatError(f"{path} is not a TripleA save: no Java object stream inside")
    _javaobj()
    from javaobj.v2.transformers import DefaultObjectTransformer

    parser_class, array_lengths = _budgeted_parser()
    figures = StreamFigures()
    started = time.perf_counter()
    try:
        contents = parser_class(_BudgetedStream(data, budget, figures),
                                [array_lengths(budget, figures),
                                 DefaultObjectTransformer()]).run()
    except SaveBudgetError as exc:
        raise SaveBudgetError(f"{path} is refused: {exc}, past what a real TripleA save holds"
                              ) from None
    except RecursionError:
        raise SaveBudgetError(f"{path} is refused: objects nested too deeply, past what a real "
                              "TripleA save holds") from None
    except Exception as exc:  # javaobj raises whatever the damaged bytes lead it to
        reason = " ".join(str(exc).split())[:80] or type(exc).__name__
        raise SaveFormatError(f"{path} is a damaged or truncated TripleA save ({reason})"
                              ) from None
    figures.seconds = time.perf_counter() - started
    return contents, figures


def stream_figures(path, budget: ParseBudget = SAVE_BUDGET) -> StreamFigures:
    """What reading the save at `path` takes, figure by figure (benchmarks/triplea_budget.py
    prints them for the saves it is given; the docs compare the largest with the budget)."""
    return _read_objects(path, MAX_STREAM_BYTES, budget)[1]


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
        fire=_fire_state(reader, current),
    )


def _fire_state(reader: _Reader, step) -> FireState | None:
    """A Fire step whose dice are rolled (the step objects of Fire are inner classes holding
    the Fire as ``this$0``)."""
    fire = reader.opt(step, "this$0")
    if not _class_name(fire).endswith(".Fire"):
        return None
    dice = reader.opt(fire, "dice")
    if dice is None:
        return None
    rolls, hits = _dice(reader, dice)
    return FireState(
        defending=reader.flag(fire, "defending"),
        firing_nation=reader.name_of(reader.opt(fire, "firingPlayer")),
        hits=hits, dice=len(rolls),
        next_step=str(reader.opt(fire, "stepName") or ""))


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
