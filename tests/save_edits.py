"""Boards edited from a real save's object stream (tests/java_stream.py), for the movement tests
of issue 41: the step the game is at, a unit moved or a territory emptied, an owner changed, a
territory conquered this turn, a flag or a number of an attachment or a property.  Each edit
returns the new stream's bytes; :func:`written` writes them as a save.  Test tooling only."""

from __future__ import annotations

import gzip
import struct
from pathlib import Path

from java_stream import Stream, save_bytes, string

TC_ENDBLOCKDATA = 0x78


def _reader():
    from battlecalc.triplea.save import _javaobj, _Reader

    _, beans = _javaobj()
    return _Reader(beans)


class Edit:
    """A save's stream, parsed, with the objects the edits reach by name."""

    def __init__(self, data: bytes):
        from battlecalc.triplea.save import _class_name

        self.stream = s = Stream(data)
        self.r = r = _reader()
        self.game_data = next(o for o in s.contents if _class_name(o).endswith(".GameData"))
        self.states = {_class_name(o).rsplit(".", 1)[-1]: o for o in s.contents
                       if _class_name(o).endswith("DelegateState")}
        self._territories = {r.text(t, "name"): t for t in r.elements(
            r.get(self.game_data, "map", "territories"))}

    @classmethod
    def of(cls, path: Path) -> Edit:
        return cls(gzip.decompress(Path(path).read_bytes()))

    # ------------------------------------------------------------ finding
    def territory(self, name: str):
        return self._territories[name]

    def units(self, name: str) -> list:
        return self.r.elements(self.r.get(self.territory(name), "unitCollection", "units"))

    def player(self, name: str):
        return next(p for p in self.r.elements(self.r.get(self.game_data, "playerList",
                                                          "players"))
                    if self.r.text(p, "name") == name)

    def unit_attachment(self, unit_type: str):
        types = self.r.get(self.game_data, "unitTypeList", "unitTypes")
        return self.r.get(types[unit_type], "attachments")["unitAttachment"]

    def _property(self, name: str):
        """(the span of its value in the table, the value) of a game property."""
        s = self.stream
        for part in ("constantProperties", "editableProperties"):
            table = self.r.get(self.r.get(self.game_data, "properties"), part)
            if name in table:
                children = s.children(s.definition(table))
                at = next(i for i, c in enumerate(children) if str(c.content) == name
                          and c.type_code in (0x74, 0x71))
                return children[at + 1], table[name]
        raise KeyError(name)

    def set_property(self, name: str, value) -> bytes:
        """A game property set: a Boolean pointed at a Boolean of that value written before it
        (Java writes Boolean.TRUE once and refers to it after), a number's Integer changed in
        place.  Where the property's own Boolean is the one written (others refer to it), use
        rename_property."""
        s = self.stream
        span, current = self._property(name)
        if isinstance(value, bool):
            assert s.data[span.start] == 0x71, "the property's Boolean is written here"
            other = next(x.content for x in s.spans if x.start < span.start
                         and type(x.content).__name__ == "JavaBool"
                         and bool(x.content) is value and x.type_code == 0x73)
            return s.rebuilt([(0, span.start), ("ref", other), (span.end, len(s.data))])
        if hasattr(current, "classdesc") and "Property" in str(current.classdesc.name):
            current = self.r.get(current, "value")
        return self.primitive(current, "value", value)

    def rename_property(self, name: str, new: str) -> bytes:
        """A game property's name changed (its key, a string written there): the property
        `name` is then absent (TripleA's default) and `new` has its value."""
        s = self.stream
        span, _ = self._property(name)
        key = next(x for x in s.spans if x.end == span.start and x.type_code == 0x74)
        return s.rebuilt([(0, key.start), ("same", key.start, key.end, string(new)),
                          (key.end, len(s.data))])

    def primitive(self, obj, field: str, value) -> bytes:
        """`obj`'s primitive `field` (int or boolean) set to `value`."""
        start, end = self.stream.field_bytes(obj, field)
        new = struct.pack(">i", value) if end - start == 4 else bytes([bool(value)])
        assert len(new) == end - start, (field, start, end)
        return self.stream.patched([(start, new)])

    def step(self, name: str) -> bytes:
        """The game at step `name` of its sequence (its delegates' states as they were)."""
        sequence = self.r.get(self.game_data, "sequence")
        names = [self.r.text(st, "name") for st in self.r.elements(self.r.get(sequence,
                                                                              "steps"))]
        return self.primitive(sequence, "currentIndex", names.index(name))

    def reference_field(self, obj, field: str, target) -> bytes:
        """`obj`'s object field (a reference or null where it is written) pointing at
        `target`, an object written before it."""
        start, end = self.stream.field_bytes(obj, field)
        assert self.stream.data[start] in (0x70, 0x71), "a definition, not a reference"
        return self.stream.rebuilt([(0, start), ("ref", target), (end, len(self.stream.data))])

    def move_units(self, origin: str, destination: str, count: int | None = None,
                   keep=lambda unit: False) -> bytes:
        """The units of `origin` (the first `count`, or all but those `keep` says) moved to
        the end of `destination`'s units: their definitions move in the stream, every handle
        is renumbered (Stream.rebuilt)."""
        s, r = self.stream, self.r
        units = [u for u in self.units(origin) if not keep(u)][:count]
        source = r.get(self.territory(origin), "unitCollection", "units")
        target = r.get(self.territory(destination), "unitCollection", "units")
        spans = [s.definition(u) for u in units]
        target_end = s.definition(target).end - 1  # before its TC_ENDBLOCKDATA
        assert s.data[target_end] == TC_ENDBLOCKDATA
        changes = []
        for lst, change in ((source, -len(units)), (target, len(units))):
            start, end = s.field_bytes(lst, "size")
            (size,) = struct.unpack(">i", s.data[start:end])
            changes.append((start, struct.pack(">i", size + change)))
        pieces, at = [], 0
        for start, end, insert in sorted([(sp.start, sp.end, False) for sp in spans]
                                         + [(target_end, target_end, True)]):
            pieces.append((at, start))
            if insert:
                pieces.extend((sp.start, sp.end) for sp in spans)
            at = end
        pieces.append((at, len(s.data)))
        return s.rebuilt(pieces, s.patched(changes))

    def give_units(self, territory: str, player: str) -> bytes:
        """Every unit of `territory` made `player`'s (their owner fields pointed at it)."""
        s = self.stream
        target = self.player(player)
        cuts = sorted(s.field_bytes(u, "owner") for u in self.units(territory))
        assert all(s.data[start] == 0x71 for start, _ in cuts)
        pieces, at = [], 0
        for start, end in cuts:
            pieces += [(at, start), ("ref", target)]
            at = end
        pieces.append((at, len(s.data)))
        return s.rebuilt(pieces)

    def add_to_set(self, tracker_field: str, territory: str) -> bytes:
        """A territory added to one of the battle tracker's sets (conquered, blitzed,
        foughtBattles): a reference before the set's end, its size one more."""
        s = self.stream
        tracker = self.r.get(self.states["BattleExtendedDelegateState"], "battleTracker")
        found = self.r.get(tracker, tracker_field)
        span = s.definition(found)
        end = span.end - 1
        assert s.data[end] == TC_ENDBLOCKDATA
        block = next(c for c in s.children(span) if s.data[c.start] == 0x77)
        size_at = block.start + 2 + 8  # capacity int, load factor float, size int
        (size,) = struct.unpack(">i", s.data[size_at:size_at + 4])
        return s.rebuilt([(0, end), ("ref", self.territory(territory)), (end, len(s.data))],
                         s.patched([(size_at, struct.pack(">i", size + 1))]))


def written(tmp_path: Path, data: bytes, name: str = "edited.tsvg") -> Path:
    path = Path(tmp_path) / name
    path.write_bytes(save_bytes(data))
    return path


def chain(path: Path, *edits) -> bytes:
    """Edits one after the other, each on the stream the one before it made."""
    data = gzip.decompress(Path(path).read_bytes())
    for edit in edits:
        data = edit(Edit(data))
    return data
