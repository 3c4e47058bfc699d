"""The live board of ``battlecalc serve --watch DIR``, and the board of an uploaded save.

:func:`solve_board` solves a board read by the child process (battlecalc.web.saves,
battlecalc.triplea.board.read_board) on the server's engine: each battle from its query, as
``/api/run`` answers that query (so the board's odds are the form's, to the bit), the luck of
the history's fought battles exactly (where ``method=auto`` would solve them exactly), the
turn's summary and the battles' order by TUV at risk.

:class:`LiveBoard` watches one folder (battlecalc.triplea.watch.SaveFolder): every ``interval``
seconds it looks for the newest complete save (off the event loop), reads a new one in a child
process under the server's limits of time and memory, one at a time and in one of the slots
that uploads share, marks what changed since the board before (board.changes) and publishes
the board, first as read (odds to come), then solved.  Every open page gets each state over
``GET /api/watch``: server-sent events (``event: board``, ``data:`` the state as JSON), the
current state first, a comment line every KEEPALIVE_S seconds; ``GET /api/board`` answers the
state once.  The state: ``watching`` (the folder), ``status`` (what it does now, in words),
``notes`` (files skipped or refused), ``version`` and ``board`` (null before the first save).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import json
import sys
import threading
import traceback
from collections import OrderedDict
from typing import Any

from ..errors import BattleInputError

KEEPALIVE_S = 15.0  # a comment line this often on an idle stream (a gone client shows)
MAX_SUBSCRIBERS = 64  # pages following the board at once; beyond: 503
# a state is serialised once (its event text shared by every page) and written to a page in
# pieces of STREAM_PIECE characters, each once the one before it has gone: a page that does
# not read holds one piece in the server's buffers, not a state a page (64 such pages held
# 627 MB: each stream serialised the whole state into its own buffer); a page more than
# MAX_BEHIND states behind (still writing an old one) is ended (an EventSource reconnects)
STREAM_PIECE = 64 * 1024
MAX_BEHIND = 2
# the state's JSON at most (a real board: 20-50 kB; the save reader answers up to 8 MiB): a
# larger board is not shown (said in the status), so that what every page holds is bounded
MAX_BOARD_BYTES = 1024 * 1024
INTERVAL_S = 0.25  # between looks at the folder
MAX_JUDGED = 500  # fought battles of the history judged per board (the rest: pending)
MAX_BOARD_BATTLES = 64  # battles solved per board (a real turn: a dozen at most)
BOARD_TIME_LIMIT_S = 60.0  # no battle of a board starts after this (each: the request limits)
LUCK_CACHE = 2048  # judged battles kept (a history repeats its battles save after save)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


async def solve_board(engine, board: dict[str, Any],
                      cancel: threading.Event | None = None) -> dict[str, Any]:
    """Solve `board` in place on `engine` (battlecalc.web.server.Engine) and return it: each
    battle's ``odds`` (or ``error``), the luck (``luck``: battlecalc luck's object), the
    order by stake (``by_stake``: territories) and the one-line ``summary``."""
    from ..triplea.board import by_stake, endpoint_of, odds_of, solve_params, turn_summary
    from .spec import parse_params, raid_parameters
    from .work import Busy as _Busy
    from .work import Cancelled

    loop = asyncio.get_running_loop()
    deadline = loop.time() + BOARD_TIME_LIMIT_S
    slots = asyncio.Semaphore(max(1, engine.workers))  # (as many as the pool runs at once)

    async def one(battle: dict[str, Any], index: int) -> None:
        battle.setdefault("odds", None)
        if not battle.get("query") or battle.get("error"):
            return
        if index >= MAX_BOARD_BATTLES:
            battle["error"] = f"not solved: the board solves {MAX_BOARD_BATTLES} battles at most"
            return
        async with slots:
            if loop.time() > deadline:
                battle["error"] = (f"not solved: past the board's time limit of "
                                   f"{BOARD_TIME_LIMIT_S:g} s")
                return
            await _solve_one(battle)

    async def _solve_one(battle: dict[str, Any]) -> None:
        what = endpoint_of(battle)
        try:
            kwargs, _ = parse_params(solve_params(battle["query"]),
                                     raid_parameters() if what == "raid" else None)
            data = await engine.run(kwargs, False, what, cancel)
        except BattleInputError as exc:
            battle["error"] = _one_line(exc)
            return
        except _Busy:
            battle["error"] = "not solved: the server is busy"
            return
        except Cancelled:
            raise
        battle["odds"] = odds_of(data)
        if data.get("warnings"):
            battle["warnings"] = data["warnings"]

    battles = board.get("battles", [])
    staked = {b["territory"]: i for i, b in enumerate(by_stake(battles))}  # most at stake first
    await asyncio.gather(*(one(b, staked.get(b["territory"], i)) for i, b in enumerate(battles)))
    board["by_stake"] = [b["territory"] for b in by_stake(battles)]
    board["summary"] = turn_summary(board)
    history = board.pop("luck", None)
    if history is not None:
        board["luck"] = await loop.run_in_executor(engine.pool, judged_luck, engine, history)
    return board


_luck_cache: OrderedDict[str, tuple] = OrderedDict()
_luck_lock = threading.Lock()


def judged_luck(engine, history: dict[str, Any]) -> dict[str, Any]:
    """battlecalc luck's object for the history (board.judge_luck), each fought battle solved
    exactly where the server solves it exactly (else listed as not judged); at most
    MAX_JUDGED battles (the last ones), their laws kept between boards."""
    from .. import solver
    from ..triplea.board import judge_luck
    from ..waves import simulate_with

    fought = list(history.get("fought", []))
    history = dict(history)
    if len(fought) > MAX_JUDGED:
        history["pending"] = [*history.get("pending", []), *(
            {"territory": f["territory"], "round": f["round"],
             "reason": f"not judged here: only the last {MAX_JUDGED} battles are"}
            for f in fought[:-MAX_JUDGED])]
        history["fought"] = fought[-MAX_JUDGED:]

    class Law:  # what judge_luck reads of a result
        def __init__(self, swing_law, tuv_swing):
            self.swing_law, self.tuv_swing = swing_law, tuv_swing

    def solve(kwargs: dict[str, Any]) -> Law:
        key = json.dumps(kwargs, sort_keys=True)
        with _luck_lock:
            if key in _luck_cache:
                _luck_cache.move_to_end(key)
                return Law(*_luck_cache[key])
        try:
            result = simulate_with(engine.exact_solve, **kwargs)
        except solver.ExactRefused:
            raise BattleInputError("too large to solve exactly on this server") from None
        law = (tuple(map(list, result.swing_law)), result.tuv_swing)
        with _luck_lock:
            _luck_cache[key] = law
            while len(_luck_cache) > LUCK_CACHE:
                _luck_cache.popitem(last=False)
        return Law(*law)

    return judge_luck(history, solve)


class LiveBoard:
    """The board of the newest complete save of a watched folder, pushed to every page that
    follows it (module documentation)."""

    def __init__(self, folder, engine, slots: asyncio.Semaphore | None = None,
                 interval: float = INTERVAL_S):
        self.folder = folder  # battlecalc.triplea.watch.SaveFolder
        self.engine = engine
        self.slots = slots
        self.interval = interval
        self.board: dict[str, Any] | None = None
        self.raw: bytes | None = None  # the save behind the board (GET /api/turn/reach)
        self.status = f"watching {folder.shown} for TripleA saves"
        self.version = 0
        self.subscribers: set[asyncio.Event] = set()
        self._event: tuple[int, str] | None = None  # (version, its event text)
        self.reads = 0  # saves read (parsed) so far
        self.task: asyncio.Task | None = None
        self.notes_from = 0  # the folder's notes since the board's save was read
        self.closing = False  # the server stops: the streams end
        self.loop: asyncio.AbstractEventLoop | None = None

    def state(self) -> dict[str, Any]:
        return {"watching": self.folder.shown, "status": self.status,
                "notes": self.folder.notes_since(self.notes_from)[-10:], "version": self.version,
                "board": self.board}

    def publish(self, status: str | None = None) -> None:
        if status is not None:
            self.status = status
        self.version += 1
        self._event = None
        if self.board is not None:
            size = len(json.dumps(self.state()))
            if size > MAX_BOARD_BYTES:  # (a hostile save's: never a real one)
                name = self.board.get("file") or "the save"
                self.board = None
                self.status = (f"{name}: its board is {size:,} bytes of JSON, more than the "
                               f"{MAX_BOARD_BYTES:,} a page is sent: not shown")
        for event in self.subscribers:
            event.set()

    def event_text(self) -> tuple[int, str]:
        """(version, the server-sent event of the state now), made once a version."""
        if self._event is None or self._event[0] != self.version:
            self._event = (self.version, f"event: board\ndata: {json.dumps(self.state())}\n\n")
        return self._event

    def subscribe(self) -> asyncio.Event:
        """A page's place among the subscribers, taken now (before its response starts: the
        cap counts every page let in, however many come at once)."""
        wake = asyncio.Event()
        wake.set()
        self.subscribers.add(wake)
        return wake

    def unsubscribe(self, wake: asyncio.Event) -> None:
        self.subscribers.discard(wake)

    def start(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.task = asyncio.ensure_future(self.run())

    def close_streams(self) -> None:
        """End every page's stream (the server stops: its connections can then close)."""
        self.closing = True
        for event in self.subscribers:
            event.set()

    def close_streams_threadsafe(self) -> None:
        """close_streams from a signal handler or another thread."""
        if self.loop is not None and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self.close_streams)

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
        self.folder.close()

    async def run(self) -> None:
        notes = 0
        while True:
            try:
                found = await asyncio.to_thread(self.folder.poll)
            except OSError as exc:  # the folder gone or unreadable: say so, look again
                found = None
                if self.status != f"cannot read {self.folder.shown}: {exc.strerror or exc}":
                    self.publish(f"cannot read {self.folder.shown}: {exc.strerror or exc}")
            if found is not None:
                try:
                    await self.read(found)
                except asyncio.CancelledError:
                    raise
                except Exception:  # a bug: say so, keep watching
                    traceback.print_exc(file=sys.stderr)
                    self.publish(f"{found.name}: internal error (see the server's output)")
            elif self.folder.said != notes:
                self.publish()
            notes = self.folder.said
            await asyncio.sleep(self.interval)

    async def read(self, found) -> None:
        """Read, publish, solve and publish one save (a watch.Found)."""
        from .saves import read_in_child

        engine = self.engine
        modified = datetime.datetime.fromtimestamp(found.mtime_ns / 1e9).strftime("%H:%M:%S")
        self.publish(f"reading {found.name} (written {modified})")
        if self.slots is not None:
            await self.slots.acquire()
        try:
            self.reads += 1
            board = await read_in_child(found.raw, engine.game_time_limit, engine.game_memory)
        except BattleInputError as exc:
            self.publish(f"{found.name} could not be read: {_one_line(exc)}")
            return
        finally:
            if self.slots is not None:
                self.slots.release()
        from ..triplea.board import changes

        before = self.board
        self.raw = found.raw
        self.notes_from = self.folder.said  # (what was skipped before it: said then)
        board["file"], board["modified"] = found.name, modified
        for battle in board["battles"]:
            battle["odds"] = None
        shown = json.loads(json.dumps(board))  # as read, the odds to come
        shown.pop("luck", None)
        shown["changes"] = changes(before, shown)
        self.board = shown
        compiling = " (compiling kernels, first run only: a minute or two)" \
            if _compiling() else ""
        self.publish(f"{found.name} read: solving {len(board['battles'])} "
                     f"battle{'s' if len(board['battles']) != 1 else ''}{compiling}")
        solved = await solve_board(engine, board)
        solved["changes"] = changes(before, solved)
        self.board = solved
        self.publish(f"watching {self.folder.shown} \u00b7 {found.name}, written {modified}")

    async def events(self, wake: asyncio.Event | None = None):
        """The server-sent events of one page (its place: subscribe(), taken now if not
        given): the state now, then the latest at each change, each in pieces of
        STREAM_PIECE that go one after another (the next once the last was written); a page
        more than MAX_BEHIND states behind is ended."""
        wake = self.subscribe() if wake is None else wake
        try:
            while True:
                try:
                    await asyncio.wait_for(wake.wait(), KEEPALIVE_S)
                except TimeoutError:
                    yield ": still watching\n\n"
                    continue
                wake.clear()
                if self.closing:
                    return
                version, text = self.event_text()
                for at in range(0, len(text), STREAM_PIECE):
                    if self.closing or self.version - version > MAX_BEHIND:
                        return  # (behind: its EventSource reconnects to the state now)
                    yield text[at:at + STREAM_PIECE]
        finally:
            self.unsubscribe(wake)


def _compiling() -> bool:
    from ..api import kernels_cold

    try:
        return kernels_cold()
    except Exception:  # (numba absent: plain kernels)
        return False


def solve_here(board: dict[str, Any], progress=None) -> dict[str, Any]:
    """solve_board's work in this process (battlecalc watch): each battle from its query as the
    web API reads it (web.spec), the history's battles exactly (as battlecalc luck does)."""
    from .. import api
    from ..raids import raid
    from ..triplea.board import (
        by_stake,
        endpoint_of,
        judge_luck,
        odds_of,
        solve_params,
        turn_summary,
    )
    from ..waves import simulate_with  # noqa: F401  (loaded: api.simulate solves waves)
    from .spec import parse_params, raid_parameters

    for battle in board.get("battles", []):
        battle.setdefault("odds", None)
        if not battle.get("query") or battle.get("error"):
            continue
        try:
            raids = endpoint_of(battle) == "raid"
            kwargs, _ = parse_params(solve_params(battle["query"]),
                                     raid_parameters() if raids else None)
            solve = raid if raids else api.simulate  # (looked up now, as the CLI's run)
            battle["odds"] = odds_of(solve(**kwargs, progress=progress).to_dict())
        except BattleInputError as exc:
            battle["error"] = " ".join(str(exc).split())
    board["by_stake"] = [b["territory"] for b in by_stake(board.get("battles", []))]
    board["summary"] = turn_summary(board)
    if "luck" in board:
        board["luck"] = judge_luck(board["luck"], lambda kwargs: api.simulate(**kwargs))
    return board
