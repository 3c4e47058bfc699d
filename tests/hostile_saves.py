"""TripleA saves made hostile in the tests, from the shared fixtures (never copied into the
project): a save is gzip over a Java object stream, so a name is a Java string to rewrite and
extra objects are bytes to append."""

from __future__ import annotations

import gzip
import os
import struct
from pathlib import Path

TC_STRING = b"\x74"  # a Java string in an object stream: the tag, a 2-byte length, its bytes


def triplea_fixtures() -> Path:
    """``shared/fixtures/triplea`` beside the project (CI: ``../shared``) or beside a folder
    above it (a git worktree), or the folder $TRIPLEA_FIXTURES names."""
    if os.environ.get("TRIPLEA_FIXTURES"):
        return Path(os.environ["TRIPLEA_FIXTURES"])
    root = Path(__file__).resolve().parents[1]
    return next((folder / "shared" / "fixtures" / "triplea" for folder in root.parents
                 if (folder / "shared" / "fixtures" / "triplea").is_dir()),
                root.parent / "shared" / "fixtures" / "triplea")


LAND_BATTLE = triplea_fixtures() / "saves" / "revised_during_land_to_land_combat.tsvg"


def stream(save: Path = LAND_BATTLE) -> bytes:
    """The Java object stream of a save."""
    return gzip.decompress(save.read_bytes())


def java_string(text: str) -> bytes:
    """`text` as the object stream writes a string (modified UTF-8 is UTF-8 here: no NUL, no
    character beyond the BMP)."""
    data = text.encode("utf-8")
    return TC_STRING + len(data).to_bytes(2, "big") + data


def renamed(data: bytes, old: str, new: str) -> bytes:
    """The stream with the string `old` (written once; later uses refer back to it) now
    `new`."""
    assert data.count(java_string(old)) >= 1, old
    return data.replace(java_string(old), java_string(new))


def with_empty_strings(data: bytes, count: int) -> bytes:
    """The stream followed by `count` empty Java strings: 3 bytes each, and an object each
    for the reader to build (issue 29: 20,000,000 of them held a reader at 4 GB)."""
    return data + java_string("") * count


def save_bytes(data: bytes) -> bytes:
    return gzip.compress(data)


# Java object stream pieces (a flood of new objects: the costliest within the parsing budget)


def _utf(text: str) -> bytes:
    data = text.encode()
    return struct.pack(">H", len(data)) + data


def _array(type_name: str, length: int, elements: bytes) -> bytes:
    """TC_ARRAY of a new class `type_name` ("[B"), `length` declared."""
    return (b"\x75\x72" + _utf(type_name) + bytes(8) + b"\x02\x00\x00\x78\x70"
            + struct.pack(">i", length) + elements)


def _array_list(size: int, elements: bytes) -> bytes:
    """A java.util.ArrayList as Java writes it (its size field, then its elements in custom
    data), of a new class description."""
    return (b"\x73\x72" + _utf("java.util.ArrayList") + bytes.fromhex("7881d21d99c7619d")
            + b"\x03\x00\x01I" + _utf("size") + b"\x78\x70" + struct.pack(">i", size)
            + b"\x77\x04" + struct.pack(">i", size) + elements + b"\x78")


def _empty_objects(count: int) -> bytes:
    """`count` new objects of one field-less class, in an ArrayList (after a reset: the list's
    class is 0x7e0000, the list 0x7e0001, the objects' class 0x7e0002)."""
    first = b"\x73\x72" + _utf("X") + bytes(8) + b"\x02\x00\x00\x78\x70"
    return _array_list(count, first + b"\x73\x71\x00\x7e\x00\x02" * (count - 1))


RESET = b"\x79"  # TC_RESET: the handles after it are numbered from 0x7e0000 again


def with_new_objects(data: bytes, count: int) -> bytes:
    """The stream followed by `count` new objects in a list: within the parsing budget
    (save.SAVE_BUDGET: 600,000 objects) for count up to about 550,000, and the slowest thing
    to read inside it (javaobj builds some 500 bytes an object: seconds)."""
    return data + RESET + _empty_objects(count)
