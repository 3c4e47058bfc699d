"""Reading a file a user names: a regular file, size-capped, never blocking.

The one reader of every input file named by a path (edition files and their bases, TripleA
saves and maps).  Checked with ``os.stat`` before it is opened, so that a FIFO (which would
block), a device (``/dev/zero``: endless) or a folder is refused unread; opened non-blocking and
checked again on the open descriptor (the path may change in between); read no further than the
cap (a ``/proc`` file says 0 bytes and may hold more).
"""

from __future__ import annotations

import os
import stat

from .errors import BattleInputError


def read_regular_file(path: str | os.PathLike, limit: int, what: str,
                      error: type[BattleInputError] = BattleInputError) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them.

    what: the kind of file with its article, for messages ("an edition file"); error: the
    exception raised for a
    file that is not regular or is too large (OSError for a file that cannot be opened).
    """
    shown = os.fspath(path)
    _check_regular(os.stat(path), limit, what, error)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(shown, flags | getattr(os, "O_CLOEXEC", 0))
    try:
        _check_regular(os.fstat(fd), limit, what, error)
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 16, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > limit:
        raise error(f"more than {limit:,} bytes, more than {what} needs")
    return b"".join(chunks)


def _check_regular(info: os.stat_result, limit: int, what: str,
                   error: type[BattleInputError]) -> None:
    if not stat.S_ISREG(info.st_mode):
        kind = "a folder" if stat.S_ISDIR(info.st_mode) else "a FIFO, device or socket"
        raise error(f"not a regular file ({kind}: battlecalc reads {what} from a regular "
                    "file only)")
    if info.st_size > limit:
        raise error(f"{info.st_size:,} bytes is more than {what} needs ({limit:,} at most)")


def read_input(path: str | os.PathLike, limit: int, what: str,
               error: type[BattleInputError] = BattleInputError) -> bytes:
    """read_regular_file for a file named on the command line or in a call: every refusal, and
    a file that cannot be opened, is one `error` naming the path."""
    try:
        return read_regular_file(path, limit, what, error)
    except BattleInputError as exc:
        raise error(f"cannot read {os.fspath(path)}: {exc}") from None
    except OSError as exc:
        raise error(f"cannot read {os.fspath(path)}: {exc.strerror or exc}") from None
