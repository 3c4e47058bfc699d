"""A folder of TripleA saves, watched: the newest complete save, read once TripleA has written it.

TripleA writes an autosave at several points of a turn (its ``AutoSaveFileUtils``: before and
after a step such as the battle step, after the combat move, at the end of a round, odd and
even rounds) into ``autoSave`` under its save-games folder (:func:`triplea_autosave_folder`).
Since TripleA 2.7 it writes a save to a sibling temporary file (``NAME.tsvgNNN.tmp``) and renames
it (``GameDataWriter.writeToFile``); older versions, and a player copying a save in, write the
file in place.  :class:`SaveFolder` therefore reads a save only when

* its name ends in ``.tsvg`` (or ``.tsvg.gz``, as macOS downloads them), and matches
  ``pattern`` if one is given: a temporary file is never a candidate;
* it is a regular file in the folder itself: a symlink is never followed (one that points out
  of the folder is reported as refused), a subfolder never entered, a FIFO or device never
  opened; the file is opened by its name relative to the folder's descriptor with
  ``O_NOFOLLOW`` where the system has them;
* its size and modification time have not changed for ``settle`` seconds, did not change while
  it was read, and its gzip stream is complete (its trailer read and its CRC right): a save
  being written is skipped, never half-read;
* it is at most ``max_bytes`` long, and inflates to at most ``max_inflated`` bytes.

:meth:`SaveFolder.poll` returns the newest such save when it is one not returned before (by its
name, size and modification time), else None.  Nothing here parses a save: the caller does
(the web server in a child process under limits, battlecalc.web.saves).
"""

from __future__ import annotations

import errno
import fnmatch
import os
import stat
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import BattleInputError

SUFFIXES = (".tsvg", ".tsvg.gz")  # TripleA's save extensions (GameDataFileUtils)
MAX_BYTES = 4 * 1024 * 1024  # a save is a few hundred kB (the server's upload cap)
MAX_INFLATED = 64 * 1024 * 1024  # decompressed (the server's cap for uploads)
SETTLE_S = 0.5  # unchanged this long before it is read
MAX_ENTRIES = 10_000  # entries of the folder looked at per poll (an autosave folder: a dozen)
MAX_NOTES = 50  # notes kept (skipped and refused files), newest last
# os.open's errors of a save that is gone or turned into a symlink since it was listed (it is
# looked at again at the next poll); any other (EACCES: not readable) is noted
_GONE = {errno.ENOENT, errno.ELOOP, errno.ENOTDIR}


def triplea_autosave_folder(home: str | os.PathLike | None = None,
                            save_games: str | os.PathLike | None = None) -> Path:
    """Where TripleA writes its autosaves by default: ``autoSave`` in its save-games folder
    (``ClientSetting.saveGamesFolderPath``), which is ``savedGames`` in the user's TripleA
    folder: ``HOME/Documents/triplea`` when that folder exists, else ``HOME/triplea``
    (``ClientFileSystemHelper.getUserRootFolder``; HOME is Java's ``user.home``).  A player who
    changed the save-games folder in TripleA's settings gives it as `save_games`."""
    if save_games is not None:
        return Path(save_games) / "autoSave"
    home = Path(home) if home is not None else Path.home()
    root = home / "Documents" / "triplea"
    if not root.is_dir():
        root = home / "triplea"
    return root / "savedGames" / "autoSave"


def _shown(folder: Path) -> str:
    """The folder as said to the player: under the home folder, from ``~``."""
    try:
        return str(Path("~") / Path(folder).absolute().relative_to(Path.home()))
    except (ValueError, RuntimeError, KeyError):  # (not under it; no home)
        return str(folder)


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 and not n % (1 << 20) else f"{n:,} bytes"


def is_save_name(name: str) -> bool:
    return name.lower().endswith(SUFFIXES) and not name.startswith(".")


def gzip_state(raw: bytes, max_inflated: int = MAX_INFLATED) -> str:
    """"complete" (one gzip stream, its trailer read and its CRC and size right),
    "incomplete" (it ends early: being written), "damaged" (not gzip, or corrupt) or
    "too large" (more than `max_inflated` bytes inflated).  Inflates in steps of 1 MiB and keeps
    none of it."""
    if raw[:2] != b"\x1f\x8b":
        return "damaged" if len(raw) >= 2 else "incomplete"
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    total = 0
    data = raw
    try:
        while data and not inflater.eof:
            total += len(inflater.decompress(data, 1 << 20))
            if total > max_inflated:
                return "too large"
            data = inflater.unconsumed_tail
    except zlib.error:
        return "damaged"
    return "complete" if inflater.eof else "incomplete"


@dataclass(frozen=True)
class Found:
    """A save read from the folder: its name, bytes, size and modification time (ns)."""

    name: str
    raw: bytes
    size: int
    mtime_ns: int

    @property
    def key(self) -> tuple[str, int, int]:
        return (self.name, self.size, self.mtime_ns)


@dataclass
class _Seen:
    size: int
    mtime_ns: int
    since: float  # (monotonic) when this size and time were first seen


@dataclass
class SaveFolder:
    """The folder `path` of TripleA saves (see the module's documentation).  `clock`: the
    monotonic clock (tests); `settle`: seconds a save stays unchanged before it is read."""

    path: str | os.PathLike
    settle: float = SETTLE_S
    pattern: str = "*"  # of the names looked at (fnmatch, any case): "autosaveBefore*"
    max_bytes: int = MAX_BYTES
    max_inflated: int = MAX_INFLATED
    clock: object = time.monotonic
    notes: list[str] = field(default_factory=list)  # skipped or refused files, in words
    reads: int = 0  # files opened (and read through) so far
    _seen: dict = field(default_factory=dict)
    _done: set = field(default_factory=set)  # keys returned, or found unusable
    _bad: set = field(default_factory=set)  # keys found unusable
    _noted: set = field(default_factory=set)
    _dir_fd: int | None = None
    _identity: tuple = ()  # (st_dev, st_ino) of the folder opened
    said: int = 0  # notes made so far (`notes` keeps the last MAX_NOTES)

    def __post_init__(self):
        folder = Path(self.path)
        hint = f" (TripleA's autosave folder here: {_shown(triplea_autosave_folder())})"
        try:
            info = folder.stat()
        except OSError as exc:
            raise BattleInputError(f"cannot watch {folder}: {exc.strerror or exc}{hint}"
                                   ) from None
        except ValueError as exc:  # a NUL in the path
            raise BattleInputError(f"cannot watch {folder!r}: {exc}") from None
        if not stat.S_ISDIR(info.st_mode):
            raise BattleInputError(f"cannot watch {folder}: not a folder{hint}")
        self.real = Path(os.path.realpath(folder))
        self.shown = _shown(folder)
        try:
            self._open()
        except OSError as exc:  # stat'ed but not listed (a folder of mode 0311)
            raise BattleInputError(f"cannot watch {folder}: {exc.strerror or exc} (the folder "
                                   "cannot be listed)") from None

    def _open(self) -> None:
        """Open the folder (a descriptor where the system has them), list it once (OSError: it
        cannot be listed) and keep its identity (st_dev, st_ino), which each poll compares
        with the path's: a folder removed and made again is another folder."""
        fd = None
        if os.open in os.supports_dir_fd and hasattr(os, "O_DIRECTORY"):
            fd = os.open(self.real, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
        try:
            with os.scandir(self.real if fd is None else fd):
                pass
            info = os.stat(self.real) if fd is None else os.fstat(fd)
        except OSError:
            if fd is not None:
                os.close(fd)
            raise
        self._dir_fd, self._identity = fd, (info.st_dev, info.st_ino)

    def close(self) -> None:
        if self._dir_fd is not None:
            os.close(self._dir_fd)
            self._dir_fd = None

    def _same_folder(self) -> None:
        """The path names the folder opened, or it is opened again (noted, what was seen of
        the old one forgotten): a folder removed and made again, or replaced, is looked at
        where it now is.  OSError where the path names no folder that can be listed (gone;
        the caller says so and asks again)."""
        info = os.stat(self.real)
        if not stat.S_ISDIR(info.st_mode):
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(self.real))
        if (info.st_dev, info.st_ino) == self._identity:
            return
        self.close()
        self._open()
        self._seen.clear()
        self._done.clear()
        self._bad.clear()
        self._note(("again", self._identity), f"{self.shown} was removed and made again (or "
                                              "replaced): watching the folder there now")

    def _note(self, key, text: str) -> None:
        if key in self._noted:
            return
        self._noted.add(key)
        self.notes.append(text)
        self.said += 1
        del self.notes[:-MAX_NOTES]

    def notes_since(self, said: int) -> list[str]:
        """The notes made after the first `said` (those still kept)."""
        return self.notes[max(0, len(self.notes) - (self.said - said)):] if said < self.said \
            else []

    def _entries(self) -> list[tuple[str, os.stat_result]]:
        """The folder's save files (name, lstat), newest first; symlinks noted, never
        followed."""
        found = []
        target = self._dir_fd if self._dir_fd is not None else self.real
        with os.scandir(target) as entries:
            for count, entry in enumerate(entries):
                if count >= MAX_ENTRIES:
                    self._note(("many",), f"more than {MAX_ENTRIES:,} entries in the folder: "
                                          "the rest are not looked at")
                    break
                name = entry.name
                if not is_save_name(name) or os.sep in name or (os.altsep and os.altsep in name):
                    continue
                if not fnmatch.fnmatchcase(name.lower(), self.pattern.lower()):
                    continue
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:  # gone meanwhile
                    continue
                if stat.S_ISLNK(info.st_mode):
                    self._symlink(name)
                    continue
                if stat.S_ISREG(info.st_mode):
                    found.append((name, info))
        found.sort(key=lambda item: (-item[1].st_mtime_ns, item[0]))
        return found

    def _symlink(self, name: str) -> None:
        try:
            aim = os.path.realpath(self.real / name)
        except (OSError, ValueError):
            aim = ""
        inside = os.path.dirname(aim) == str(self.real)
        if inside:
            self._note(("link", name), f"{name}: a symlink, not followed (its target in the "
                                       "folder is read as itself)")
        else:
            self._note(("link", name), f"{name}: refused, a symlink out of the folder")

    def poll(self) -> Found | None:
        """The newest complete save not returned before, or None (nothing new, or the newest
        still being written)."""
        now = self.clock()
        self._same_folder()
        entries = self._entries()
        names = {name for name, _ in entries}
        for name in list(self._seen):
            if name not in names:
                del self._seen[name]
        # what is remembered of files is of the files there now (a long game writes hundreds)
        listed = {(name, info.st_size, info.st_mtime_ns) for name, info in entries}
        self._done &= listed
        self._bad &= listed
        if len(self._noted) > MAX_ENTRIES:
            self._noted.clear()
        for name, info in entries:
            key = (name, info.st_size, info.st_mtime_ns)
            if key in self._done:
                if key not in self._bad:
                    return None  # the newest complete save is the one returned last
                continue  # unusable: an older one may do
            seen = self._seen.get(name)
            if seen is None or (seen.size, seen.mtime_ns) != key[1:]:
                self._seen[name] = _Seen(info.st_size, info.st_mtime_ns, now)
                continue  # changed since the last look: being written
            if now - seen.since < self.settle:
                continue
            if info.st_size > self.max_bytes:
                self._refuse(key, f"{name}: over {_size(self.max_bytes)}, not read")
                continue
            found = self._read(name, key)
            if found is not None:
                return found
        return None

    def _refuse(self, key, text: str) -> None:
        self._done.add(key)
        self._bad.add(key)
        self._note(key, text)

    def _read(self, name: str, key) -> Found | None:
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) \
            | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
        try:
            if self._dir_fd is not None:
                fd = os.open(name, flags, dir_fd=self._dir_fd)
            else:
                fd = os.open(self.real / name, flags)
        except OSError as exc:
            if exc.errno not in _GONE:  # gone, or a symlink now: nothing to say, next poll
                # (said once; tried again at each poll: a chmod changes no size or time)
                self._note(key, f"{name}: cannot be read ({exc.strerror or exc}), skipped")
            return None
        try:
            before = os.fstat(fd)
            if not stat.S_ISREG(before.st_mode):
                return None
            if (before.st_size, before.st_mtime_ns) != key[1:]:
                return None  # changed since it was listed
            if self._dir_fd is None:  # no O_NOFOLLOW relative to the folder: the same file?
                listed = os.lstat(self.real / name)
                if (listed.st_ino, listed.st_dev) != (before.st_ino, before.st_dev):
                    return None
            chunks, left = [], self.max_bytes + 1
            while left > 0:
                chunk = os.read(fd, min(left, 1 << 20))
                if not chunk:
                    break
                chunks.append(chunk)
                left -= len(chunk)
            raw = b"".join(chunks)
            after = os.fstat(fd)
        except OSError as exc:  # (EIO: a failing disk, a network folder gone)
            self._refuse(key, f"{name}: cannot be read ({exc.strerror or exc}), not read")
            return None
        finally:
            os.close(fd)
        self.reads += 1
        if (after.st_size, after.st_mtime_ns) != key[1:] or len(raw) != key[1]:
            return None  # written to while read: the next poll sees it changed
        state = gzip_state(raw, self.max_inflated)
        if state == "incomplete":
            # unchanged for `settle` seconds yet incomplete: a writer stalled or a broken
            # copy; skipped until it changes
            self._refuse(key, f"{name}: skipped, its gzip stream is incomplete (being written?)")
            return None
        if state != "complete":
            why = "its gzip data is damaged" if state == "damaged" else \
                f"over {_size(self.max_inflated)} decompressed"
            self._refuse(key, f"{name}: not read, {why}")
            return None
        self._done.add(key)
        return Found(name, raw, key[1], key[2])
