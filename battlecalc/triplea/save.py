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

import contextlib
import functools
import io
import logging
import math
import struct
import time
import zlib
from collections import Counter
from dataclasses import dataclass, field

from ..errors import BattleInputError, quoted
from ..files import read_input

MAX_SAVE_BYTES = 64 * 1024 * 1024  # compressed; a save is a few hundred kB
MAX_STREAM_BYTES = 64 * 1024 * 1024  # decompressed: a gzip bomb stops here (real: 1.4 MB)
INSTALL_HINT = "pip install 'battlecalc[triplea]'"
MAX_WRAPPERS = 8  # collections wrapping collections (an unmodifiable view of a synchronized one)
MAX_SUPERCLASSES = 16  # looked at for an object's class (TripleA's go 5 deep)
# The rule switches battlecalc reads: TripleA reads each as a Boolean (GameProperties.get(name,
# false) casts the value; a map's "true" or "false" becomes one when the game is loaded)
SWITCH_PROPERTIES = ("Low Luck", "LHTR Heavy Bombers", "Scramble Rules In Effect",
                     "Scramble From Island Only")

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
    damage: int = 0  # unitDamage: a facility's bombing damage (an air base past its
    disabled: bool = False  # maxOperationalDamage is out of use, as is a disabled unit)
    scrambled: bool = False  # wasScrambled: an aircraft scrambled this turn scrambles no more


@dataclass(frozen=True)
class UnitTypeRecord:
    """What a scramble needs of a unit type (its UnitAttachment): an air base, an aircraft
    that may scramble and how far, the damage past which a facility is out of use (-1: none)."""

    air_base: bool = False
    can_scramble: bool = False
    scramble_distance: int = 0
    max_operational_damage: int = -1


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
    neighbors: dict = field(default_factory=dict)  # territory -> tuple of its neighbours
    at_war: frozenset = frozenset()  # frozensets {nation, nation} of the pairs at war
    unit_types: dict = field(default_factory=dict)  # TripleA unit type -> UnitTypeRecord
    scramble_pending: bool = False  # the battle phase has not yet asked for scrambles
    kamikaze_pending: bool = False  # nor for kamikaze strikes
    kamikaze_zones: dict = field(default_factory=dict)  # sea zone -> its original owner
    kamikaze_tokens: dict = field(default_factory=dict)  # nation -> its kamikaze tokens


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
    """Field access on javaobj's objects, each value's type checked as it is read.  The reader
    keeps the path it is at (``GameData.map.territories[12] ('Karelia').unitCollection.units[3]``,
    :meth:`at`); a missing field or a value of the wrong type is a SaveFormatError naming
    that path, the field and what was found there (as cfgv names a config's key)."""

    def __init__(self, beans):
        self.beans = beans
        self._fields: dict[int, dict] = {}
        self.path: list[str] = []

    @contextlib.contextmanager
    def at(self, *parts: str):
        """Read inside `parts` of the path (a field's name, or ``[3]`` for an element)."""
        self.path.extend(parts)
        try:
            yield
        finally:
            del self.path[len(self.path) - len(parts):]

    def error(self, problem: str, *fields: str) -> SaveFormatError:
        where = "".join(p if p.startswith("[") or not i else "." + p
                        for i, p in enumerate([*self.path, *fields]))
        return SaveFormatError(f"not a TripleA save this version of battlecalc reads: "
                               f"{where or 'the stream'}: {problem}")

    def describe(self, value) -> str:
        """What a value is, for an error: null, a number, a text (quoted), an object's class."""
        if value is None:
            return "null"
        if isinstance(value, bool):
            return f"the boolean {str(value).lower()}"
        if isinstance(value, int | float):
            return f"the number {value}"
        if isinstance(value, str | self.beans.JavaString):
            return f"the text {quoted(str(value))}"
        if isinstance(value, dict):
            return "a map"
        if isinstance(value, list | tuple):
            return "a list"
        return f"a {_class_name(value).rsplit('.', 1)[-1]}"

    def fields(self, obj) -> dict:
        if not isinstance(obj, self.beans.JavaInstance):
            raise self.error(f"expected an object, found {self.describe(obj)}")
        key = id(obj)
        if key not in self._fields:
            values = {}
            for _, by_field in obj.field_data.items():
                for desc, value in by_field.items():
                    values[str(desc.name)] = value
            self._fields[key] = values
        return self._fields[key]

    def get(self, obj, *path: str):
        for i, name in enumerate(path):
            with self.at(*path[:i]):
                values = self.fields(obj)
                if name not in values:
                    raise self.error(f"{_class_name(obj).rsplit('.', 1)[-1]} has no field "
                                     f"{name!r}")
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
        raise self.error(f"expected text, found {self.describe(value)}", *path)

    def optional_text(self, obj, name: str) -> str | None:
        """A text field that may be null or absent."""
        value = self.opt(obj, name)
        if value is None or isinstance(value, str | self.beans.JavaString):
            return None if value is None else str(value)
        raise self.error(f"expected text, found {self.describe(value)}", name)

    def number(self, obj, *path: str) -> int:
        value = self.get(obj, *path)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(f"expected a number, found {self.describe(value)}", *path)
        return value

    def optional_number(self, obj, name: str, default: int) -> int:
        """A whole-number field that may be absent (another TripleA version)."""
        value = self.opt(obj, name, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(f"expected a number, found {self.describe(value)}", name)
        return value

    def flag(self, obj, name: str) -> bool:
        value = self.opt(obj, name, False)
        if not isinstance(value, bool):
            raise self.error(f"expected true or false, found {self.describe(value)}", name)
        return value

    def instance(self, value, kind: str, *, null: bool = False):
        """`value` checked to be an object of the class `kind` (its simple name), or null
        where `null` allows it."""
        if value is None and null:
            return None
        if isinstance(value, self.beans.JavaInstance):
            desc = value.classdesc
            for _ in range(MAX_SUPERCLASSES):  # the class and its superclasses (GamePlayer$1:
                if desc is None:               # the null player, a GamePlayer)
                    break
                if str(desc.name).rsplit(".", 1)[-1] == kind:
                    return value
                desc = desc.super_class
        raise self.error(f"expected a {kind}, found {self.describe(value)}")

    def elements(self, obj) -> list:
        """The elements of a Java collection as javaobj gives it: lists and maps it converts,
        sets and deques it leaves as objects whose custom data holds the elements, wrappers
        (Collections$Unmodifiable*, synchronized ones) hold another collection; a wrapper
        that holds itself, or a chain of them past MAX_WRAPPERS, is an error."""
        seen: set[int] = set()
        while isinstance(obj, self.beans.JavaInstance) and not isinstance(obj, dict | list):
            values = self.fields(obj)
            inner = next((k for k in ("c", "list", "m") if k in values), None)
            if inner is None:
                found = []
                for data in (obj.annotations or {}).values():
                    found.extend(a for a in data if isinstance(a, self.beans.JavaInstance))
                return found
            if id(obj) in seen or len(seen) >= MAX_WRAPPERS:
                raise self.error("a collection that contains itself")
            seen.add(id(obj))
            obj = values[inner]
        if obj is None:
            return []
        if isinstance(obj, dict):
            return list(obj.values())
        if isinstance(obj, list | tuple):
            return list(obj)
        raise self.error(f"expected a collection, found {self.describe(obj)}")

    def each(self, obj, kind: str | None = None):
        """(the path part ``[i]``, element) of a collection, each element checked to be a
        `kind` where one is given; read each inside ``with reader.at(part)``."""
        for i, element in enumerate(self.elements(obj)):
            if kind is not None:
                with self.at(f"[{i}]"):
                    self.instance(element, kind)
            yield f"[{i}]", element

    def name_of(self, obj, kind: str = "", *, null: bool = True) -> str | None:
        """The name of a GamePlayer, Territory or UnitType (`kind`, checked where given; None
        for no object where `null` allows it)."""
        if kind:
            obj = self.instance(obj, kind, null=null)
        elif obj is None and not null:
            raise self.error("expected an object, found null")
        if obj is None:
            return None
        return self.text(obj, "name")

    def unit(self, obj) -> UnitRecord:
        """A Unit: its UnitType and owner (a GamePlayer: TripleA gives a unit without one the
        null player, never null) and the hits it has taken."""
        self.instance(obj, "Unit")
        with self.at("type"):
            unit_type = self.name_of(self.get(obj, "type"), "UnitType", null=False)
        with self.at("owner"):
            owner = self.name_of(self.get(obj, "owner"), "GamePlayer", null=False)
        return UnitRecord(unit_type, owner, self.optional_number(obj, "hits", 0),
                          damage=self.optional_number(obj, "unitDamage", 0),
                          disabled=self.flag(obj, "disabled"),
                          scrambled=self.flag(obj, "wasScrambled"))

    def units(self, obj) -> tuple[UnitRecord, ...]:
        units = []
        for part, element in self.each(obj):
            with self.at(part):
                units.append(self.unit(element))
        return tuple(units)


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


LARGE_READ = 4096  # bytes: a read this long (a string, a block) looks at the clock


class _BudgetedStream(io.BytesIO):
    """The object stream as javaobj reads it, one ``read`` call per value: the calls are
    counted against the budget's items, the length a call asks for (a string's, a block's)
    against its string size, and the clock is looked at every 4,096 calls and at every read
    of LARGE_READ bytes or more (javaobj decodes a string of 1 MiB in about half a second:
    63 of them took 25-55 s past a budget of 2 s that was looked at every 4,096 calls; now
    the overrun is at most one string's decoding)."""

    def __init__(self, data: bytes, budget: ParseBudget, figures: StreamFigures):
        super().__init__(data)
        self.budget, self.figures = budget, figures
        self.deadline = time.monotonic() + budget.seconds

    def read(self, size: int | None = -1) -> bytes:
        figures, budget = self.figures, self.budget
        figures.items += 1
        if figures.items > budget.items:
            raise SaveBudgetError(f"more than {budget.items:,} items in its object stream")
        if (not figures.items & 0xFFF or (size is not None and size >= LARGE_READ)) \
                and time.monotonic() > self.deadline:
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
    with reader.at("GameData"):
        game = reader.text(game_data, "gameName")
        sequence = reader.get(game_data, "sequence")
        with reader.at("sequence"):
            steps = reader.elements(reader.get(sequence, "steps"))
            index = reader.number(sequence, "currentIndex")
            if not 0 <= index < len(steps):
                raise reader.error(f"step {index} of {len(steps)}: out of the sequence",
                                   "currentIndex")
            round_ = reader.number(sequence, "round")
            with reader.at("steps", f"[{index}]"):
                step = reader.instance(steps[index], "GameStep")
                step_name = reader.text(step, "name")
                display = reader.optional_text(step, "displayName")
                with reader.at("player"):
                    player = reader.name_of(reader.opt(step, "player"), "GamePlayer")
        territories = []
        with reader.at("map", "territories"):
            for part, territory in reader.each(reader.get(game_data, "map", "territories"),
                                               "Territory"):
                territories.append(_territory(reader, territory, part))
        with reader.at("properties"):
            properties = _properties(reader, reader.get(game_data, "properties"))
        with reader.at("playerList", "players"):
            techs = _techs(reader, reader.get(game_data, "playerList", "players"))
        with reader.at("alliances"):
            alliances = _alliances(reader, game_data)
        with reader.at("map", "connections"):
            neighbors = _connections(reader, reader.get(game_data, "map"))
        with reader.at("relationships", "relationships"):
            at_war = _at_war(reader, game_data)
        with reader.at("unitTypeList", "unitTypes"):
            unit_types = _unit_types(reader, game_data)
        with reader.at("playerList", "players"):
            tokens = _kamikaze_tokens(reader, reader.get(game_data, "playerList", "players"))
        with reader.at("map", "territories"):
            zones = _kamikaze_zones(reader, reader.get(game_data, "map", "territories"))
    places = {t.name for t in territories}
    battles = []
    scramble_pending = kamikaze_pending = False
    for state in objects:
        if _class_name(state).endswith(".BattleExtendedDelegateState"):
            # TripleA's BattleDelegate.start scrambles, then asks for kamikaze strikes, once,
            # before any battle; end() sets both due again
            scramble_pending = reader.flag(state, "needToScramble") or reader.flag(
                state, "m_needToScramble")
            kamikaze_pending = reader.flag(state, "needToKamikazeSuicideAttacks") or \
                reader.flag(state, "m_needToKamikazeSuicideAttacks")
            with reader.at("BattleExtendedDelegateState", "battleTracker", "pendingBattles"):
                tracker = reader.get(state, "battleTracker")
                for part, battle in reader.each(reader.get(tracker, "pendingBattles")):
                    with reader.at(part):
                        record = _battle(reader, battle)
                        if record.territory not in places:
                            raise reader.error(f"{quoted(record.territory)} is not a territory "
                                               "of the map", "battleSite")
                    battles.append(record)
    battles.sort(key=lambda b: (b.territory, b.battle_type))
    return SaveData(game=game, engine_version=engine, round=round_, step=step_name,
                    step_display=display, player=player, territories=tuple(territories),
                    battles=tuple(battles), properties=properties, techs=techs,
                    alliances=alliances, neighbors=neighbors, at_war=at_war,
                    unit_types=unit_types, scramble_pending=scramble_pending,
                    kamikaze_pending=kamikaze_pending, kamikaze_zones=zones,
                    kamikaze_tokens=tokens)


def _table(reader: _Reader, obj, name: str) -> dict:
    """A map field ({} for null or absent)."""
    value = reader.opt(obj, name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise reader.error(f"expected a map, found {reader.describe(value)}", name)
    return value


def _territory(reader: _Reader, territory, part: str) -> TerritoryRecord:
    with reader.at(part):
        name = reader.text(territory, "name")
    with reader.at(f"{part} ({quoted(name)})"):
        with reader.at("attachments", "['territoryAttachment']"):
            attachment = reader.instance(_table(reader, territory, "attachments").get(
                "territoryAttachment"), "TerritoryAttachment", null=True)
            production = reader.optional_number(attachment, "production", 0)
        with reader.at("owner"):
            owner = reader.name_of(reader.get(territory, "owner"), "GamePlayer")
        water = reader.flag(territory, "water")
        with reader.at("unitCollection", "units"):
            units = reader.units(reader.get(territory, "unitCollection", "units"))
    return TerritoryRecord(name=name, owner=owner, water=water, units=units,
                           production=production)


def _enum(value) -> str:
    return str(getattr(value, "value", value))


def _enum_constant(reader: _Reader, value, kind: str) -> str:
    """The constant's name of a Java enum value, checked to be one."""
    if not isinstance(value, reader.beans.JavaEnum):
        raise reader.error(f"expected a {kind}, found {reader.describe(value)}")
    return reader.text(value.value)


def _battle(reader: _Reader, battle) -> BattleRecord:
    reader.fields(battle)  # an object (a MustFightBattle, a raid, an air battle, ...)
    with reader.at("stack"):
        stack = reader.instance(reader.opt(battle, "stack"), "ExecutionStack", null=True)
        current = reader.opt(stack, "currentStep")
        queued = reader.elements(reader.opt(stack, "deque"))
    with reader.at("battleSite"):
        territory = reader.name_of(reader.get(battle, "battleSite"), "Territory", null=False)
    with reader.at("battleType"):
        battle_type = _enum_constant(reader, reader.get(battle, "battleType"), "BattleType")
    with reader.at("attacker"):
        attacker = reader.name_of(reader.get(battle, "attacker"), "GamePlayer", null=False)
    with reader.at("defender"):
        defender = reader.name_of(reader.opt(battle, "defender"), "GamePlayer")

    def units(name: str, required: bool = False) -> tuple[UnitRecord, ...]:
        with reader.at(name):
            return reader.units(reader.get(battle, name) if required else reader.opt(battle,
                                                                                     name))

    steps = []
    for part, text in reader.each(reader.opt(battle, "stepStrings")):
        with reader.at("stepStrings", part):
            steps.append(reader.text(text))
    with reader.at("stack", "currentStep" if current is not None else "deque[0]"):
        fire = _fire_state(reader, current if current is not None else
                           (queued[0] if queued else None))
    return BattleRecord(
        territory=territory, battle_type=battle_type, attacker=attacker, defender=defender,
        attacking=units("attackingUnits", True), defending=units("defendingUnits", True),
        bombarding=units("bombardingUnits"), landing=units("amphibiousLandAttackers"),
        amphibious=reader.flag(battle, "isAmphibious"),
        round=reader.optional_number(battle, "round", 1),
        started=current is not None or bool(queued),
        killed=units("killed"),
        attacking_waiting_to_die=units("attackingWaitingToDie"),
        defending_waiting_to_die=units("defendingWaitingToDie"),
        steps=tuple(steps), fire=fire)


_PHASES = {"1": "roll", "2": "select", "3": "mark", "4": "mark"}  # Fire$N, FireAa$N (2.0-2.4)
_NEW_PHASES = {"RollDiceStep": "roll", "SelectCasualties": "select", "MarkCasualties": "mark"}
_GROUPS = {"aa": "aa", "naval bombardment": "bombard", "first strike units": "strike",
           "air vs non subs": "air"}  # 2.5's firingGroup.displayName (else general fire)


def _enclosing(reader: _Reader, step):
    """The object an instance of an inner or anonymous class belongs to: the field javac
    names this$N, N the depth of the class it is declared in (this$0 in a top-level class's
    inner class, Fire$2's Fire; this$1 in an anonymous class inside an inner class,
    StrategicBombingRaidBattle$FireAa$3's FireAa, whose own this$0 is the raid)."""
    if not isinstance(step, reader.beans.JavaInstance):
        return None
    names = [n for n in reader.fields(step) if n.startswith("this$") and n[5:].isdigit()]
    return reader.fields(step)[max(names, key=lambda n: int(n[5:]))] if names else None


def _killed(reader: _Reader, fire, field: str) -> tuple[UnitRecord, ...]:
    """The casualties a fire chose: its `killed` (2.0's Fire), or its CasualtyDetails'
    (`casualties`, `details`: FireAa, a raid's FireAa, an air battle's fire)."""
    if field == "killed":
        return reader.units(reader.opt(fire, "killed"))
    details = reader.opt(fire, field)
    return reader.units(reader.opt(details, "killed")) if details is not None else ()


def _raid_step(reader: _Reader, step, inner: str) -> FireState | None:
    """A step of a StrategicBombingRaidBattle (2.0-2.4; docs/in-progress.md R1-R5): FireAa
    itself (queued: the AA to fire) or its anonymous steps FireAa$1 (roll), $2 (casualties
    to choose), $3 and $4 (chosen: ``casualties``), which hold their FireAa as this$1;
    ConductBombing and its anonymous steps (the bombing; its dice once rolled); the raid's
    own anonymous steps ($1, $2: after the bombing, the raid over)."""
    parts = inner.split("$")
    short = "StrategicBombingRaidBattle$" + inner
    if parts[0] == "FireAa":
        fire = step if len(parts) == 1 else _enclosing(reader, step)
        dice = reader.opt(fire, "dice")
        rolls, hits = _dice(reader, dice) if dice is not None else ([], 0)
        chosen = reader.opt(fire, "casualties") is not None
        phase = ("roll" if dice is None else "mark" if chosen or parts[1:] in (["3"], ["4"])
                 else "select")
        return FireState(True, None, hits, len(rolls), "", kind="raid_aa", phase=phase,
                         killed=_killed(reader, fire, "casualties") if phase == "mark" else (),
                         step=short)
    if parts[0] == "ConductBombing":
        conduct = step if len(parts) == 1 else _enclosing(reader, step)
        rolled = reader.opt(conduct, "dice") is not None or parts[1:] == ["2"]
        return FireState(False, None, 0, 0, "", kind="bombing",
                         phase="select" if rolled else "roll", step=short)
    if inner.isdigit():  # after the bombing: the raid's damage known, the raid over
        return FireState(False, None, 0, 0, "", kind="raid_over", phase="mark", step=short)
    return None


def _air_step(reader: _Reader, step, inner: str) -> FireState | None:
    """A step of an AirBattle (1940 2E's air battle before a raid; docs/in-progress.md
    R6-R12): InterceptorsLaunch (the defender to choose its interceptors), AttackersFire and
    DefendersFire (each itself, queued, or its anonymous steps $1 roll, $2 casualties, $3
    notify: this$1), the battle's own anonymous steps (its casualties removed, its end)."""
    parts = inner.split("$")
    short = "AirBattle$" + inner
    if parts[0] == "InterceptorsLaunch":
        return FireState(True, None, 0, 0, "", kind="interceptors", phase="roll", step=short)
    if parts[0] in ("AttackersFire", "DefendersFire"):
        fire = step if len(parts) == 1 else _enclosing(reader, step)
        dice = reader.opt(fire, "dice")
        rolls, hits = _dice(reader, dice) if dice is not None else ([], 0)
        phase = ("roll" if dice is None else
                 "mark" if reader.opt(fire, "details") is not None else "select")
        return FireState(parts[0] == "DefendersFire", None, hits, len(rolls), "",
                         kind="air_battle", phase=phase,
                         killed=_killed(reader, fire, "details") if phase == "mark" else (),
                         step=short)
    if inner.isdigit():
        return FireState(False, None, 0, 0, "", kind="air_battle", phase="mark", step=short)
    return None


def _fire_state(reader: _Reader, step) -> FireState | None:
    """The fire a battle in progress stands in, from its step object (None: no fire step, or
    one battlecalc does not read).  TripleA 2.0-2.4: the inner steps Fire$1 (roll), Fire$2
    (select), Fire$3 (mark) of a Fire (general, first strike, bombardment: `text` "Bombard"),
    FireAa$N of a land battle's AA (its casualties in `casualties`), each holding its fire as
    ``this$0``; the raid's and the air battle's steps (_raid_step, _air_step: their
    anonymous steps inside inner classes hold those as ``this$1``); 2.5: RollDiceStep,
    SelectCasualties, MarkCasualties with `side`, `firingGroup` and `fireRoundState`."""
    if step is None:
        return None
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
    outer, _, inner = short.partition("$")
    if outer == "StrategicBombingRaidBattle" and inner:
        return _raid_step(reader, step, inner)
    if outer == "AirBattle" and inner:
        return _air_step(reader, step, inner)
    fire = _enclosing(reader, step)
    phase = _PHASES.get(inner) if outer in ("Fire", "FireAa") else None
    if phase is None or not _class_name(fire).endswith((".Fire", ".FireAa")):
        return None
    dice = reader.opt(fire, "dice")
    rolls, hits = _dice(reader, dice) if dice is not None else ([], 0)
    aa = outer == "FireAa"
    if aa:
        kind = "aa"
    elif str(reader.opt(fire, "text") or "") == "Bombard":
        kind = "bombard"
    elif "first strike" in str(reader.opt(fire, "stepName") or "").lower():
        kind = "strike"
    else:
        kind = "general"
    killed = _killed(reader, fire, "casualties" if aa else "killed") if phase == "mark" else ()
    return FireState(
        defending=reader.flag(fire, "defending"),
        firing_nation=reader.name_of(reader.opt(fire, "firingPlayer")),
        hits=hits, dice=len(rolls),
        next_step=str(reader.opt(fire, "stepName") or ""), kind=kind,
        phase="roll" if dice is None and phase != "mark" else phase, killed=killed,
        step=short)


def _dice(reader: _Reader, roll) -> tuple[list[int], int]:
    """A DiceRoll's dice (packed) and hits (counted from the dice where none are stored)."""
    dice = dice_roll(reader, roll)
    hits = dice.hits if dice.hits is not None else sum(1 for v in dice.packed if v & 0xFF == 1)
    return list(dice.packed), hits


@dataclass(frozen=True)
class DiceRecord:
    """A DiceRoll: its dice (each packed as value << 16 | rolledAt << 8 | type, value
    0-based, type 1 a hit), the hits and expected hits TripleA stored with it (None where its
    data stops after the dice), and the player who rolled (stored from TripleA 2.6 on)."""

    packed: tuple[int, ...]
    hits: int | None
    expected: float | None
    player: str | None


def dice_roll(reader: _Reader, roll) -> DiceRecord:
    """A DiceRoll from its externalized data (TripleA's DiceRoll.writeExternal): from 2.6 on
    an int version (1) first; then int[] dice, int hits, double expectedHits; from 2.6 on the
    player's name (a String or null)."""
    reader.instance(roll, "DiceRoll")
    items = [item for data in (roll.annotations or {}).values() for item in data]
    arrays = [i for i, item in enumerate(items) if isinstance(item, list | tuple)]
    if len(arrays) != 1:
        raise reader.error(f"a dice roll with {len(arrays)} arrays of dice, not 1")
    at = arrays[0]
    before = b"".join(block_bytes(item) for item in items[:at])
    after = b"".join(block_bytes(item) for item in items[at + 1:])
    packed = []
    for value in items[at]:
        if isinstance(value, bool) or not isinstance(value, int):
            raise reader.error(f"a die is {reader.describe(value)}, not a number")
        packed.append(value)
    hits = expected = None
    if len(after) >= 12:
        hits, expected = struct.unpack(">id", after[:12])
        if not math.isfinite(expected):
            raise reader.error("a dice roll's expected hits are not a number")
    elif len(after) >= 4:
        (hits,) = struct.unpack(">i", after[:4])
    player = None
    if len(before) >= 4 and struct.unpack(">i", before[:4])[0] >= 1:
        text = str | reader.beans.JavaString
        player = next((str(item) for item in items[at + 1:] if isinstance(item, text)), None)
    return DiceRecord(tuple(packed), hits, expected, player)


def block_bytes(item) -> bytes:
    """The bytes of a custom-data block (javaobj's BlockData, or bytes)."""
    if isinstance(item, bytes):
        return item
    data = getattr(item, "data", None)
    return data if isinstance(data, bytes) else b""


def _properties(reader: _Reader, properties) -> dict:
    """Rule switches: {name: value} for the boolean, number and text properties; a switch
    battlecalc reads (SWITCH_PROPERTIES) must be true or false, as TripleA reads it."""
    found = {}
    for part in ("constantProperties", "editableProperties"):
        for name, value in _table(reader, properties, part).items():
            editable = isinstance(value, reader.beans.JavaInstance)
            inner = reader.opt(value, "value", value) if editable else value
            if str(name) in SWITCH_PROPERTIES and not isinstance(inner, bool):
                raise reader.error(f"expected true or false, found {reader.describe(inner)} "
                                   "(TripleA reads it as a Boolean)", part, f"[{quoted(name)}]",
                                   *(["value"] if editable else []))
            if isinstance(inner, bool | int | float):
                found[str(name)] = inner
            elif isinstance(inner, str | reader.beans.JavaString):
                found[str(name)] = str(inner)
    return found


def _techs(reader: _Reader, players) -> dict:
    techs = {}
    for part, player in reader.each(players, "GamePlayer"):
        with reader.at(part):
            name = reader.text(player, "name")
            with reader.at("attachments", "['techAttachment']"):
                attachment = reader.instance(_table(reader, player, "attachments").get(
                    "techAttachment"), "TechAttachment", null=True)
                techs[name] = tuple(tech for field_name, tech in TECH_FIELDS.items()
                                    if attachment is not None
                                    and reader.flag(attachment, field_name))
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
            player = reader.name_of(item, "GamePlayer")
        elif isinstance(item, str | reader.beans.JavaString) and player is not None:
            found.setdefault(player, []).append(str(item))
    return {p: tuple(a) for p, a in found.items()}


def _connections(reader: _Reader, game_map) -> dict:
    """{territory: its neighbours} from GameMap.connections (a map of sets)."""
    found = {}
    for territory, near in _table(reader, game_map, "connections").items():
        name = reader.name_of(territory, "Territory", null=False)
        with reader.at(f"[{quoted(name)}]"):
            found[name] = tuple(sorted(reader.name_of(t, "Territory", null=False)
                                       for t in reader.elements(near)))
    return found


def _at_war(reader: _Reader, game_data) -> frozenset:
    """The pairs of nations at war (a relationship whose type's archeType is "war")."""
    tracker = reader.opt(game_data, "relationships")
    pairs = set()
    for key, relationship in _table(reader, tracker, "relationships").items():
        with reader.at("[...]"):
            kind = reader.opt(reader.opt(relationship, "relationshipType"), "attachments") or {}
            arche = reader.opt(kind.get("relationshipTypeAttachment"), "archeType")
            if str(arche) == "war":
                pairs.add(frozenset((reader.name_of(reader.get(key, "player1"), "GamePlayer"),
                                     reader.name_of(reader.get(key, "player2"), "GamePlayer"))))
    return frozenset(pairs)


def _unit_types(reader: _Reader, game_data) -> dict:
    """{TripleA unit type: UnitTypeRecord} from the unit attachments."""
    found = {}
    types = reader.opt(reader.opt(game_data, "unitTypeList"), "unitTypes") or {}
    if not isinstance(types, dict):
        raise reader.error(f"expected a map, found {reader.describe(types)}")
    for name, unit_type in types.items():
        with reader.at(f"[{quoted(str(name))}]"):
            attachment = (_table(reader, unit_type, "attachments")).get("unitAttachment")
            if attachment is None:
                continue
            found[str(name)] = UnitTypeRecord(
                air_base=reader.flag(attachment, "isAirBase"),
                can_scramble=reader.flag(attachment, "canScramble"),
                scramble_distance=reader.optional_number(attachment, "maxScrambleDistance", 0),
                max_operational_damage=reader.optional_number(attachment,
                                                              "maxOperationalDamage", -1))
    return found


def _integer_map(reader: _Reader, value) -> dict:
    """{name: count} of an IntegerMap keyed by named objects (resources)."""
    values = reader.opt(value, "mapValues") or {}
    if not isinstance(values, dict):
        raise reader.error(f"expected a map, found {reader.describe(values)}", "mapValues")
    found = {}
    for key, count in values.items():
        count = getattr(count, "value", count)
        if isinstance(count, bool) or not isinstance(count, int):
            raise reader.error(f"expected a number, found {reader.describe(count)}",
                               "mapValues")
        found[reader.name_of(key, "Resource", null=False)] = count
    return found


def _kamikaze_tokens(reader: _Reader, players) -> dict:
    """{nation: the tokens it holds of its player attachment's suicideAttackResources}, for the
    nations that have such resources."""
    tokens = {}
    for part, player in reader.each(players, "GamePlayer"):
        with reader.at(part):
            attachment = _table(reader, player, "attachments").get("playerAttachment")
            with reader.at("attachments", "['playerAttachment']", "suicideAttackResources"):
                kinds = _integer_map(reader, reader.opt(attachment, "suicideAttackResources"))
            if kinds:
                with reader.at("resources", "resources"):
                    held = _integer_map(reader, reader.opt(reader.opt(player, "resources"),
                                                           "resources"))
                tokens[reader.text(player, "name")] = sum(held.get(k, 0) for k in kinds)
    return tokens


def _kamikaze_zones(reader: _Reader, territories) -> dict:
    """{sea zone: its original owner} of the zones whose attachment says kamikazeZone."""
    zones = {}
    for part, territory in reader.each(territories, "Territory"):
        with reader.at(part, "attachments", "['territoryAttachment']"):
            attachment = _table(reader, territory, "attachments").get("territoryAttachment")
            if attachment is not None and reader.flag(attachment, "kamikazeZone"):
                with reader.at("originalOwner"):
                    zones[reader.text(territory, "name")] = reader.name_of(
                        reader.opt(attachment, "originalOwner"), "GamePlayer")
    return zones


def unit_counts(units) -> Counter:
    """{(owner, type, hits): count}."""
    return Counter((u.owner, u.type, u.hits) for u in units)
