"""``POST /api/game``: an uploaded TripleA save read in a process of its own.

Reading a save builds Python objects for every item of its object stream, and a hostile save
of 85 kB can ask for gigabytes and minutes (issue 29).  The server therefore never reads an
upload itself: :func:`read_in_child` starts ``python -m battlecalc.web.saves``, which caps its
own memory (``RLIMIT_AS``), reads the save from its standard input and writes one line of JSON
(``{"answer": ...}`` or ``{"error": ...}``).  The server kills it at the time limit or when the
client goes away, and its memory goes back to the system when it ends, whatever the save held.
The battle pool never waits for an upload: a child runs beside it.

Nothing here imports the web stack or the engine (numba): the child starts in about 0.3 s
(the turn planner's child, ``plan``, loads the engine to solve its battles).
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import sys
from pathlib import Path
from typing import Any

from ..errors import BattleInputError

MAX_SAVE_UPLOAD = 4 * 1024 * 1024  # a TripleA save is a few hundred kB
MAX_SAVE_INFLATED = 64 * 1024 * 1024  # decompressed, checked before the reader sees it
MAX_ANSWER_BYTES = 8 * 1024 * 1024  # the JSON of a save's battles (a real save's: a few kB)
MAX_TRACEBACK_BYTES = 16 * 1024  # of a failed reader's stderr, shown on the server's
PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])  # the folder that holds battlecalc/


class SaveTooCostly(BattleInputError):
    """An upload over the server's limits of time or memory (HTTP 400)."""


class ChildGone(Exception):
    """The request's client went away: the child was stopped."""


def game_battles(raw: bytes) -> dict[str, Any]:
    """The board of an uploaded TripleA save (bytes, never a server path), unsolved
    (battlecalc.triplea.board.read_board): the game and, per battle, its armies in the
    edition's notation, its start state and ``query``, the page's URL query that loads it into
    the form as it stands (null for a kind the form has not: raids, air battles); every
    territory with the query that loads its units as the defender; the history's dice and
    fought battles.  BattleInputError for anything that is not a save battlecalc reads."""
    import tempfile

    from ..triplea.board import read_board

    with tempfile.TemporaryDirectory(prefix="battlecalc-save-") as folder:
        path = Path(folder) / "save.tsvg"
        path.write_bytes(raw)
        try:
            # the reader's own inflating stops a gzip bomb, at the server's lower cap
            return read_board(path, max_inflated=MAX_SAVE_INFLATED)
        except BattleInputError as exc:  # the message names the upload, not the server's path
            raise BattleInputError(str(exc).replace(str(path), "the save")) from None


def reach_of_upload(raw: bytes, player: str | None) -> dict[str, Any]:
    """The legal attacks in an uploaded save (bytes, never a server path): battlecalc.turn's
    Reach.to_dict, for GET|POST /api/turn/reach (battlecalc.web.turn)."""
    import tempfile

    from ..triplea.movement import read_movement
    from ..turn import reach

    with tempfile.TemporaryDirectory(prefix="battlecalc-save-") as folder:
        path = Path(folder) / "save.tsvg"
        path.write_bytes(raw)
        try:
            return reach(read_movement(path, max_inflated=MAX_SAVE_INFLATED),
                         player or None).to_dict()
        except BattleInputError as exc:  # the message names the upload, not the server's path
            raise BattleInputError(str(exc).replace(str(path), "the save")) from None


def plan_of_upload(raw: bytes, options: dict[str, Any], progress=None) -> dict[str, Any]:
    """The plan of the turn in an uploaded save (bytes, never a server path): battlecalc.turn's
    TurnPlan.to_dict, each battle with the page's ``query`` that loads it into the form, for
    GET|POST /api/turn/plan (battlecalc.web.turn).  options: plan_turn's keywords (player,
    objective, min_win, counter, time_budget)."""
    import tempfile
    import urllib.parse

    from ..turn import plan_turn

    with tempfile.TemporaryDirectory(prefix="battlecalc-save-") as folder:
        path = Path(folder) / "save.tsvg"
        path.write_bytes(raw)
        try:
            data = plan_turn(path, options.get("player") or None, progress=progress,
                             **{k: v for k, v in options.items() if k != "player"}).to_dict()
        except BattleInputError as exc:  # the message names the upload, not the server's path
            raise BattleInputError(str(exc).replace(str(path), "the save")) from None
    for plan in [data, *data.get("alternatives", [])]:
        for battle in plan["battles"]:
            run = battle.get("run")
            battle["query"] = None if run is None else urllib.parse.urlencode(
                {k: ",".join(v) if isinstance(v, list) else v for k, v in run.items()})
    return data


def child_env() -> dict[str, str]:
    """The environment of a child working on an upload (this module's _main): one BLAS
    thread (numpy's buffers count against its address space) and this package importable."""
    return {**os.environ, "OPENBLAS_NUM_THREADS": "1",
            "PYTHONPATH": os.pathsep.join(
                [PACKAGE_ROOT, *filter(None, [os.environ.get("PYTHONPATH")])])}


async def child_result(child, work: asyncio.Future, gone: asyncio.Future | None,
                       time_limit: float, too_long: str):
    """The result of `work` (talking with `child`) within `time_limit` seconds:
    SaveTooCostly(too_long) past it, ChildGone once `gone` is done; whatever happens the child
    is killed and the work cancelled before this returns."""
    try:
        waited = {work} if gone is None else {work, gone}
        await asyncio.wait(waited, timeout=time_limit, return_when=asyncio.FIRST_COMPLETED)
        if not work.done():
            if gone is not None and gone.done():
                raise ChildGone()
            raise SaveTooCostly(too_long)
        return work.result()
    finally:
        if child.returncode is None:
            child.kill()
            await child.wait()
        if not work.done():
            work.cancel()
            await asyncio.gather(work, return_exceptions=True)


async def read_in_child(raw: bytes, time_limit: float, memory: int,
                        gone: asyncio.Future | None = None,
                        task: tuple[str, ...] = ()) -> dict[str, Any]:
    """game_battles(raw) in a child process whose address space is capped at `memory` bytes,
    killed after `time_limit` seconds (SaveTooCostly) or once `gone` is done (ChildGone).
    BattleInputError with the reader's message for what is not a save; RuntimeError for a
    failure of the child itself (a bug: its traceback is on the server's stderr).  task:
    ("reach", player) for the save's legal attacks instead (battlecalc.web.turn)."""
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-m", __name__, str(memory), *task, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=child_env())
    out, err = await child_result(
        child, asyncio.ensure_future(child.communicate(raw)), gone, time_limit,
        f"the save took more than the server's {time_limit:g} s to read; battlecalc game "
        "reads it on the command line")
    try:
        message = json.loads(out)
    except ValueError:  # no line: it died past what the limits let it do
        print(f"battlecalc: an upload's reader ended with status {child.returncode}",
              file=sys.stderr, flush=True)
        raise SaveTooCostly(
            f"the save could not be read within the server's limits ({memory >> 20} MiB, "
            f"{time_limit:g} s)") from None
    if "error" in message:
        raise BattleInputError(message["error"])
    if "answer" not in message:  # a bug: the child's traceback on the server's stderr
        sys.stderr.write(err[-MAX_TRACEBACK_BYTES:].decode("utf-8", "replace"))
        raise RuntimeError(message.get("bug", "the save reader failed"))
    return message["answer"]


def _main() -> None:
    """The child: cap the memory, read the save from stdin, write one line of JSON."""
    memory = int(sys.argv[1])
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    except (ImportError, ValueError, OSError):  # no such limit here (Windows): none is set
        pass
    raw = sys.stdin.buffer.read(MAX_SAVE_UPLOAD + 1)
    try:
        if len(raw) > MAX_SAVE_UPLOAD:
            raise BattleInputError(f"a save of at most {MAX_SAVE_UPLOAD >> 20} MiB")
        if sys.argv[2:3] == ["reach"]:
            answer = json.dumps({"answer": reach_of_upload(raw, sys.argv[3] or None)})
        elif sys.argv[2:3] == ["plan"]:  # (its progress first, a line each: web.turn reads)
            def progress(text: str) -> None:
                sys.stdout.write(json.dumps({"progress": text}) + "\n")
                sys.stdout.flush()

            answer = json.dumps({"answer": plan_of_upload(raw, json.loads(sys.argv[3]),
                                                          progress)})
        else:
            answer = json.dumps({"answer": game_battles(raw)})
        if len(answer) > MAX_ANSWER_BYTES:
            raise BattleInputError(f"the save's battles are more than the page lists "
                                   f"({MAX_ANSWER_BYTES >> 20} MiB of JSON)")
    except BattleInputError as exc:
        answer = json.dumps({"error": " ".join(str(exc).split())})
    except RecursionError:
        answer = json.dumps({"error": "the save is nested too deeply to read"})
    except Exception as exc:
        # out of memory: MemoryError, or ENOMEM from the system (a temporary file, say), or
        # CPython's SystemError "error return without exception set", which an allocation
        # failing inside an import under the address-space cap raises now and then (1 run in
        # 3 of test_an_upload_over_its_memory_is_400[32]: a 500 where a 400 was due)
        if isinstance(exc, (MemoryError, SystemError)) \
                or getattr(exc, "errno", None) == errno.ENOMEM:
            answer = json.dumps({"error": f"the save needs more memory to read than the "
                                          f"server gives an upload ({memory >> 20} MiB)"})
        else:  # a bug: its traceback on stderr (the server's), keep serving
            import traceback

            traceback.print_exc()
            answer = json.dumps({"bug": f"{type(exc).__name__} reading an upload"})
    sys.stdout.write(answer + "\n")


if __name__ == "__main__":
    _main()
