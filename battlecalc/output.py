"""Where a command's text goes: standard output or a file named by ``--output``.

:func:`open_destination` checks the destination before any work is done, so that a bad path
costs nothing; :meth:`Destination.write` then writes the finished text.

* A regular file (new or existing) is written atomically: a temporary file in the folder of
  the file, then a rename onto it.  A symlink is followed, so that its target is replaced and
  the link stays a link.  A new file gets the usual ``0666 & ~umask`` mode; an existing file
  keeps its mode (and, where permitted, its owner).
* A character device (``/dev/null``, a terminal) or a FIFO is written through: opened and
  written, never replaced.  Paths that name an open file descriptor (``/dev/stdout``,
  ``/dev/fd/N``, ``/proc/self/fd/N``) are written through too, whatever they point to.
* ``-`` is standard output.  Anything else (a directory, a block device, a socket, a missing or
  unwritable folder, a new file under ``/dev``, ``/proc`` or ``/sys``, a file the command
  reads: one of ``inputs``) is an :class:`OutputError`, raised by :func:`open_destination`.

The one writer of every command: text (``run``, ``raid``, ``plan``, a CSV table) through
:meth:`Destination.write`, bytes (a Parquet table, a figure) through
:meth:`Destination.write_bytes`.  The temporary file's name does not depend on the target's
(``.battlecalc-XXXXXXXX.tmp``), so that a target name of up to NAME_MAX characters works, and
the check makes the very kind of file the write makes.

No import of the rest of the package but :mod:`battlecalc.errors` (no dependencies): the CLI
can use this before loading the engine.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass

from .errors import BattleInputError

# Pseudo file systems: files there are kernel objects; battlecalc never creates or replaces one
# (/dev/shm is ordinary shared memory, where files are fine).
SYSTEM_FOLDERS = ("/dev", "/proc", "/sys")
ORDINARY_FOLDERS = ("/dev/shm",)
# Links that name an open file descriptor: writing through them is writing to that descriptor.
DESCRIPTOR_LINK = re.compile(
    r"/dev/std(in|out|err)|/dev/fd/\d+|/proc/(self|thread-self|\d+)/fd/\d+"
)


# Control characters but newline and tab: C0, DEL and C1 (U+009B is a terminal's CSI, as ESC [)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_RAW_IN_JSON = re.compile(r"[\x7f-\x9f]")  # what json.dumps(ensure_ascii=False) leaves raw


def printable(text: str) -> str:
    """`text` for a terminal: every control character but newline and tab written as a
    visible escape (``\\x1b``), so that a name read from a file (a territory of a TripleA save
    named with ``ESC ] 0; ... BEL``) cannot set the window title, move the cursor or clear the
    screen.  For tables and messages; CSV and JSON carry names unchanged (json_safe)."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


_ANY_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def one_line(text: str) -> str:
    """`text` as one line of a terminal: printable's escapes, newline and tab too
    (``\\x0a``).  For a line that holds names read from files (a territory of a save named
    ``"X\\nattacker wins 100%"``): a table built line by line escapes each line with it, a
    message on stderr is one line."""
    return _ANY_CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def json_safe(text: str) -> str:
    """JSON text with DEL and the C1 controls, which ``json.dumps(..., ensure_ascii=False)``
    writes raw, as ``\\u00XX`` escapes (the same string once read; the C0 controls are escaped
    already).  Outside its strings JSON text is ASCII, so this changes nothing else."""
    return _RAW_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class OutputError(BattleInputError):
    """The output destination cannot be written; the message names the path and the reason."""


@dataclass(frozen=True)
class Destination:
    """A checked output destination: ``kind`` is ``"stdout"``, ``"through"`` or ``"replace"``.

    ``path`` is the path as given; ``target`` the file actually written (the end of any
    symlink chain) for ``"replace"``.  ``mode``, ``uid`` and ``gid`` are the existing file's
    (kept), or None for a new file.
    """

    kind: str
    path: str = ""
    target: str = ""
    mode: int | None = None
    uid: int | None = None
    gid: int | None = None

    def write(self, text: str) -> None:
        """Write all of ``text`` (a final newline is added if missing); raise OutputError."""
        if text and not text.endswith("\n"):
            text += "\n"
        if self.kind == "stdout":
            sys.stdout.write(text)
            sys.stdout.flush()
        else:
            self.write_bytes(text.encode("utf-8"))

    def write_bytes(self, data: bytes) -> None:
        """Write all of ``data`` as it is (a Parquet file, an image); raise OutputError."""
        if self.kind == "stdout":
            sys.stdout.flush()
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        elif self.kind == "through":
            _write_through(self.path, data)
        else:
            _replace_atomically(self, data)


def _error(path: str, reason: str) -> OutputError:
    return OutputError(f"cannot write {path}: {reason}")


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _within(path: str, folders: tuple[str, ...]) -> bool:
    return any(path == folder or path.startswith(folder + "/") for folder in folders)


def _umask() -> int:
    mask = os.umask(0o022)  # the only portable way to read it is to set it...
    os.umask(mask)  # ...and put it back at once
    return mask


def _temp_file(folder: str) -> tuple[int, str]:
    """A new temporary file in `folder` (its descriptor and path), 0600, with a short name."""
    return tempfile.mkstemp(prefix=".battlecalc-", suffix=".tmp", dir=folder)


def _same_file(path: str, info: os.stat_result | None, other: str) -> bool:
    """Whether writing `path` (stat `info`, None if new) would write over the file `other`."""
    if os.path.realpath(path) == os.path.realpath(other):
        return True
    try:
        return info is not None and os.path.samestat(info, os.stat(other))
    except (OSError, ValueError):  # an input that is not there is not overwritten
        return False


def open_destination(path: str | None, inputs: Iterable[str | os.PathLike | None] = ()
                     ) -> Destination:
    """Check where output goes, before any computing; raise OutputError if it cannot be written.

    None or ``-``: standard output.  `inputs`: the files the command reads (None entries are
    skipped); a destination that is one of them is refused, whatever the path that names it.
    Nothing is created or changed on disk.
    """
    if path is None or path == "-":
        return Destination("stdout")
    if path == "":
        raise OutputError("the output path is empty (use -o - or leave -o out for stdout)")
    if "\0" in path:
        raise _error(repr(path), "the path contains a NUL character")
    if path.endswith(os.sep):
        raise _error(path, "the path names a directory (it ends with /)")
    absolute = os.path.abspath(path)
    try:
        info = os.stat(path)  # follows symlinks
    except FileNotFoundError:
        info = None
    except OSError as exc:  # ELOOP, ENOTDIR, EACCES on a parent folder, ENAMETOOLONG, ...
        raise _error(path, _reason(exc)) from None

    if info is not None and stat.S_ISDIR(info.st_mode):
        raise _error(path, "it is a directory")
    if info is not None and (stat.S_ISCHR(info.st_mode) or stat.S_ISFIFO(info.st_mode)):
        if not os.access(path, os.W_OK):
            raise _error(path, "permission denied")
        return Destination("through", path)
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise _error(path, "not a regular file, character device or FIFO")
    for source in inputs:
        if source is not None and os.fspath(source) not in ("", "-") and _same_file(
                path, info, os.fspath(source)):
            raise _error(path, f"it is the input file {os.fspath(source)} (battlecalc does not "
                         "write over a file it reads; choose another output file)")
    if info is not None and DESCRIPTOR_LINK.fullmatch(absolute):
        # /dev/stdout redirected to a file: write to that open file, do not replace it
        if not os.access(path, os.W_OK):
            raise _error(path, "permission denied")
        return Destination("through", path)

    target = os.path.realpath(path)  # the end of the symlink chain (the file itself if none)
    folder = os.path.dirname(target)
    if any(_within(p, SYSTEM_FOLDERS) and not _within(p, ORDINARY_FOLDERS)
           for p in (absolute, target)):
        raise _error(path, f"battlecalc does not create or replace files in {folder}")
    if not os.path.isdir(folder):
        raise _error(path, f"folder {folder} does not exist")
    if info is not None and not os.access(target, os.W_OK):
        raise _error(path, "the file is read-only")
    # The honest test of "can a file be created there": create one, and remove it.
    try:
        fd, probe = _temp_file(folder)  # the same kind of name as the write's
    except OSError as exc:
        raise _error(path, _reason(exc)) from None
    os.close(fd)
    os.unlink(probe)
    if info is None:
        return Destination("replace", path, target)
    return Destination("replace", path, target, stat.S_IMODE(info.st_mode), info.st_uid,
                       info.st_gid)


def _write_through(path: str, data: bytes) -> None:
    # Append mode: a character device or FIFO ignores it; a file behind /dev/stdout is
    # written at its end, as the program's own standard output would be.
    try:
        with open(path, "ab") as handle:
            handle.write(data)
    except OSError as exc:
        raise _error(path, _reason(exc)) from None


def _replace_atomically(destination: Destination, data: bytes) -> None:
    target = destination.target
    folder = os.path.dirname(target)
    try:
        # not named after the target: `.{name}.XXXXXXXX.tmp` of a 250-character name is over
        # NAME_MAX (255), and was refused only after the battle had run
        fd, tmp = _temp_file(folder)
    except OSError as exc:
        raise _error(destination.path, _reason(exc)) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if destination.mode is None:
            os.chmod(tmp, 0o666 & ~_umask())
        else:
            os.chmod(tmp, destination.mode)
            owner = (destination.uid, destination.gid)
            if hasattr(os, "getuid") and owner != (os.getuid(), os.getgid()):
                try:
                    os.chown(tmp, destination.uid, destination.gid)
                except PermissionError:
                    pass  # not ours to give away; the content still lands
        os.replace(tmp, target)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError as cleanup:
            if cleanup.errno != errno.ENOENT:
                raise _error(destination.path, _reason(exc)) from None
        raise _error(destination.path, _reason(exc)) from None
