"""TripleA saves made hostile in the tests, from the shared fixtures (never copied into the
project): a save is gzip over a Java object stream, so a name is a Java string to rewrite and
extra objects are bytes to append."""

from __future__ import annotations

import gzip
import os
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
