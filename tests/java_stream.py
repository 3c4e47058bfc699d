"""Editing a real save's Java object stream as a fuzzer would, keeping it well formed.

A save's stream is parsed once (javaobj-py3) with the byte span of every content read, its
nesting depth, the position where each handle (an object, string, array or class) is made and
the position of every reference.  An edit replaces a span (or inserts bytes) and renumbers the
references after it by the handles it adds or removes, so that a test can null a field, point
a reference elsewhere, put a string where a number was or add objects, and the rest of the
save reads as before.  Test tooling only: battlecalc reads saves through its own reader.
"""

from __future__ import annotations

import gzip
import io
import struct
from dataclasses import dataclass

TC_NULL, TC_REFERENCE, TC_STRING = 0x70, 0x71, 0x74
BASE_HANDLE = 0x7E0000


@dataclass
class Span:
    start: int
    end: int
    depth: int
    type_code: int
    content: object


def reference(handle: int) -> bytes:
    return bytes([TC_REFERENCE]) + struct.pack(">i", handle)


def string(text: str) -> bytes:
    data = text.encode()
    return bytes([TC_STRING]) + struct.pack(">H", len(data)) + data


class Stream:
    """The object stream of a save, and where everything in it is."""

    def __init__(self, data: bytes):
        from javaobj.v2.core import JavaStreamParser
        from javaobj.v2.transformers import DefaultObjectTransformer

        self.data = data
        spans, handles, refs = [], [], []
        fields: dict[int, list[tuple[int, int]]] = {}  # id(object) -> its field values' spans
        reading: list[list[tuple[int, int]]] = []

        class Recorder(JavaStreamParser):
            def __init__(self, fd):
                super().__init__(fd, [DefaultObjectTransformer()])
                self.fd, self.depth = fd, 0

            def _read_class_data(self, instance):
                reading.append([])
                try:
                    super()._read_class_data(instance)
                finally:
                    fields[id(instance)] = reading.pop()

            def _read_field_value(self, field_type):
                start = self.fd.tell()
                value = super()._read_field_value(field_type)
                if reading:
                    reading[-1].append((start, self.fd.tell()))
                return value

            def _read_content(self, type_code, block_data, class_desc=None):
                start = self.fd.tell() - 1  # its type code was read just before
                self.depth += 1
                try:
                    content = super()._read_content(type_code, block_data, class_desc)
                finally:
                    self.depth -= 1
                spans.append(Span(start, self.fd.tell(), self.depth, type_code, content))
                return content

            def _new_handle(self):
                handle = super()._new_handle()
                handles.append((self.fd.tell(), handle))
                return handle

            def _do_reference(self, type_code=0):
                refs.append(self.fd.tell())  # the position of the handle's 4 bytes
                return super()._do_reference(type_code)

        self.contents = Recorder(io.BytesIO(data)).run()
        self.spans = sorted(spans, key=lambda s: (s.start, s.depth))
        self.handles, self.refs = handles, refs
        self._field_spans = fields

    @classmethod
    def of_save(cls, path) -> Stream:
        return cls(gzip.decompress(path.read_bytes()))

    def definition(self, obj) -> Span:
        """The span where `obj` is written out (not a reference to it)."""
        return next(s for s in self.spans if s.content is obj and s.type_code != TC_REFERENCE)

    def children(self, span: Span) -> list[Span]:
        return [s for s in self.spans if span.start < s.start and s.end <= span.end
                and s.depth == span.depth + 1]

    def field(self, obj, value) -> Span:
        """The span of `obj`'s field (or custom data) holding `value`, the one such."""
        (found,) = [s for s in self.children(self.definition(obj)) if s.content is value]
        return found

    def handle_of(self, obj) -> int:
        return obj.handle

    def edit(self, start: int, end: int, new: bytes, new_handles: int = 0) -> bytes:
        """The stream with bytes [start, end) replaced by `new`, which makes `new_handles`
        handles; the references after `end` to handles made after it are renumbered.  A
        reference after the edit to a handle the edit removes is an error."""
        made = [h for p, h in self.handles if start <= p < end]
        later = [h for p, h in self.handles if p >= end]
        shift = new_handles - len(made)
        first_later = later[0] if later else None
        out = bytearray(self.data[:start] + new + self.data[end:])
        moved = len(new) - (end - start)
        for position in self.refs:
            if position < end:
                continue
            (handle,) = struct.unpack(">i", self.data[position:position + 4])
            if handle in made:
                raise ValueError(f"a reference at {position} to handle {handle:#x}, which the "
                                 "edit removes")
            if first_later is not None and handle >= first_later:
                out[position + moved:position + moved + 4] = struct.pack(">i", handle + shift)
        return bytes(out)

    def replace(self, span: Span, new: bytes, new_handles: int = 0) -> bytes:
        return self.edit(span.start, span.end, new, new_handles)


    def field_bytes(self, obj, name: str) -> tuple[int, int]:
        """The byte span [start, end) of `obj`'s field `name` (a primitive's value, or an
        object field's content) where `obj` is written out; the field of the class nearest
        `obj` where its hierarchy has two of that name."""
        from javaobj.v2.beans import ClassDataType

        classes: list = []
        obj.classdesc.get_hierarchy(classes)
        names = [(cd.name, field.name) for cd in classes
                 if cd.data_type in (ClassDataType.NOWRCLASS, ClassDataType.WRCLASS)
                 for field in cd.fields]
        spans = self._field_spans[id(obj)]
        if len(spans) != len(names):
            raise ValueError(f"{obj.classdesc.name}: {len(spans)} field values read, "
                             f"{len(names)} fields declared")
        found = [span for (_, field), span in zip(names, spans, strict=True) if field == name]
        if not found:
            raise KeyError(f"{obj.classdesc.name} has no field {name!r}")
        return found[-1]

    def patched(self, changes: list[tuple[int, bytes]]) -> bytes:
        """The stream with bytes overwritten in place (same length each: primitive values),
        `changes` as (position, bytes)."""
        out = bytearray(self.data)
        for position, new in changes:
            out[position:position + len(new)] = new
        return bytes(out)

    def rebuilt(self, pieces: list, source: bytes | None = None) -> bytes:
        """A new stream made of `pieces`, in order: (start, end) ranges of this stream (moved
        or kept whole; their bytes taken from `source`, this stream with values patched in
        place, where given), bytes that define nothing, or ("ref", obj) for a reference to one
        of its objects.  Every handle is numbered anew by where it is now defined and every
        reference follows its object, so objects may move; a reference to an object that is no
        longer defined, or defined only after it, is an error."""
        source = self.data if source is None else source
        assert len(source) == len(self.data)
        layout = []  # (new position, old start, old end) of the ranges kept
        out = bytearray()
        refs_wanted = []  # (new position, obj)
        for piece in pieces:
            if isinstance(piece, bytes):
                out += piece
            elif isinstance(piece, tuple) and piece and piece[0] == "ref":
                refs_wanted.append((len(out) + 1, piece[1]))
                out += bytes([TC_REFERENCE]) + bytes(4)
            elif isinstance(piece, tuple) and piece and piece[0] == "same":
                # ("same", start, end, new): [start, end) written anew, defining the same
                # handles (a string renamed) and referring to none
                _, start, end, new = piece
                assert not any(start <= p < end for p in self.refs)
                layout.append((len(out), start, end))
                out += new
            else:
                start, end = piece
                layout.append((len(out), start, end))
                out += source[start:end]

        def moved(position: int) -> int | None:
            for new, start, end in layout:
                if start <= position < end:
                    return new + min(position - start, len(out) - new - 1)
            return None

        defined = sorted((moved(p), h) for p, h in self.handles if moved(p) is not None)
        number = {h: BASE_HANDLE + i for i, (_, h) in enumerate(defined)}
        where = {h: p for p, h in defined}
        for position in self.refs:
            new = moved(position)
            if new is None:
                continue
            (handle,) = struct.unpack(">i", self.data[position:position + 4])
            if handle not in number or where[handle] > new:
                raise ValueError(f"a reference at {position} to handle {handle:#x}, which the "
                                 "new stream does not define before it")
            out[new:new + 4] = struct.pack(">i", number[handle])
        for new, obj in refs_wanted:
            handle = obj.handle
            if handle not in number or where[handle] > new:
                raise ValueError(f"a reference to {obj}, not defined before it")
            out[new:new + 4] = struct.pack(">i", number[handle])
        return bytes(out)


def save_bytes(stream: bytes) -> bytes:
    return gzip.compress(stream)


# ---------------------------------------------------------------------------------------------
# Writing new objects into a stream (a test builds the objects a save holds at a step TripleA
# stands at: its classes as Java names them, nested anonymous classes' `this$1` and
# `val$name` fields included, their fields in the order Java writes them)

TC_OBJECT, TC_CLASSDESC, TC_ENUM, TC_ARRAY = 0x73, 0x72, 0x7E, 0x75
TC_BLOCKDATA, TC_ENDBLOCKDATA = 0x77, 0x78
SC_WRITE_METHOD, SC_SERIALIZABLE = 0x01, 0x02
_PRIMITIVES = {"B": ">b", "C": ">H", "D": ">d", "F": ">f", "I": ">i", "J": ">q", "S": ">h",
               "Z": ">?"}


def _utf(text: str) -> bytes:
    data = str(text).encode()
    return struct.pack(">H", len(data)) + data


@dataclass
class JavaClass:
    """A class description: a new one (written where first used, `handle` then set) or one
    the stream holds (`handle` given).  fields: (type code, name, class name of an object
    field), kept in the order Java writes them (primitives, then objects, each by name)."""

    name: str
    fields: list
    uid: int = 0
    parent: JavaClass | None = None
    flags: int = SC_SERIALIZABLE
    handle: int | None = None

    def __post_init__(self):
        self.fields = sorted(self.fields, key=lambda f: (f[0] in "L[", f[1]))

    @classmethod
    def of(cls, desc) -> JavaClass:
        """The class a javaobj class description describes (existing in the stream)."""
        fields = [(chr(f.type.value), str(f.name), _text(getattr(f, "class_name", None)))
                  for f in desc.fields]
        parent = None if desc.super_class is None else cls.of(desc.super_class)
        return cls(desc.name, fields, parent=parent, flags=desc.flags, handle=desc.handle)

    def chain(self) -> list[JavaClass]:
        """The class and its superclasses, the topmost first (the order of an object's data)."""
        return ([] if self.parent is None else self.parent.chain()) + [self]


def _text(value):
    return None if value is None else str(value)


class Ref:
    """A reference to an object (or string, array, class) of handle `handle`."""

    def __init__(self, handle: int):
        self.handle = handle


class Writer:
    """The bytes of new contents to insert into `stream` at `position` (Stream.edit), their
    handles numbered from the one the stream's next content there takes; `made`: how many."""

    def __init__(self, stream: Stream, position: int):
        later = [h for p, h in stream.handles if p >= position]
        self.next = later[0] if later else BASE_HANDLE + len(stream.handles)
        self.out = bytearray()
        self.made = 0

    def _handle(self) -> int:
        handle, self.next, self.made = self.next, self.next + 1, self.made + 1
        return handle

    def class_desc(self, cls: JavaClass | None) -> None:
        if cls is None:
            self.out += bytes([TC_NULL])
            return
        if cls.handle is not None:
            self.out += reference(cls.handle)
            return
        self.out += bytes([TC_CLASSDESC]) + _utf(cls.name) + struct.pack(">q", cls.uid)
        cls.handle = self._handle()
        self.out += bytes([cls.flags]) + struct.pack(">h", len(cls.fields))
        for code, name, type_name in cls.fields:
            self.out += code.encode() + _utf(name)
            if code in "L[":
                self.string(type_name)
        self.out += bytes([TC_ENDBLOCKDATA])
        self.class_desc(cls.parent)

    def string(self, text: str) -> int:
        self.out += bytes([TC_STRING]) + _utf(text)
        return self._handle()

    def value(self, value) -> None:
        """An object field's value: None, a Ref, text (a new string), or a function writing
        an object (it is called with this writer)."""
        if value is None:
            self.out += bytes([TC_NULL])
        elif isinstance(value, Ref):
            self.out += reference(value.handle)
        elif isinstance(value, str):
            self.string(value)
        else:
            value(self)

    def obj(self, cls: JavaClass, values: dict, annotations=None) -> int:
        """A new object of `cls`: each class's fields from `values` (by name; a missing object
        field null, a missing number 0); `annotations`: a function writing the custom data of
        a class with a writeObject method (its TC_ENDBLOCKDATA is added).  Returns its handle,
        which values may refer to when they are functions (the object is begun first)."""
        self.out += bytes([TC_OBJECT])
        self.class_desc(cls)
        handle = self._handle()
        for level in cls.chain():
            for code, name, _ in level.fields:
                value = values.get(name)
                if code in "L[":
                    self.value(value(handle) if callable(value) and getattr(
                        value, "wants_self", False) else value)
                else:
                    self.out += struct.pack(_PRIMITIVES[code], value or 0)
            if level.flags & SC_WRITE_METHOD:
                if annotations is not None and level is cls:
                    annotations(self)
                self.out += bytes([TC_ENDBLOCKDATA])
        return handle

    def block(self, data: bytes) -> None:
        self.out += bytes([TC_BLOCKDATA, len(data)]) + data

    def enum(self, cls: JavaClass, constant: str) -> int:
        self.out += bytes([TC_ENUM])
        self.class_desc(cls)
        handle = self._handle()
        self.string(constant)
        return handle

    def int_array(self, cls: JavaClass, values: list[int]) -> int:
        self.out += bytes([TC_ARRAY])
        self.class_desc(cls)
        handle = self._handle()
        self.out += struct.pack(">i", len(values)) + b"".join(struct.pack(">i", v)
                                                               for v in values)
        return handle


def with_self(function):
    """A value function that is given the handle of the object being written (a nested
    object's reference back to it: an inner class's this$0)."""
    function.wants_self = True
    return function
