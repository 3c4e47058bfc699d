"""``GET|POST /api/turn/reach``: every legal attack of a player in a TripleA save (issue 41),
as ``battlecalc turn SAVE --reach`` lists them; ``GET|POST /api/turn/plan``: the plan of the
turn (issue 44), as ``battlecalc turn SAVE --format json`` gives it (:func:`plan_answer`).

* ``POST`` with a save as the body (as ``/api/game`` takes it: at most MAX_SAVE_UPLOAD): that
  save;
* ``GET`` under ``serve --watch DIR``: the save behind the live board (the newest complete
  save of the folder, the one ``/api/board`` shows); 404 without --watch, 409 before a save
  is read.

``?player=NAME`` chooses the player (default: the save's player to move).  The save is read,
and its reach computed, by a child process under the server's limits of time and memory, in
one of the slots uploads share (battlecalc.web.saves.read_in_child, task "reach").  The
answer is battlecalc.turn.Reach.to_dict: ``reach`` (the command line's JSON: {"TERRITORY /
TYPE xN": {target: movement}}), ``classes`` (each with its targets' routes, landings and
escorts), ``unsupported`` (what is not modelled, with why), and the game, step, player and
moment.  What the model refuses, or what is not a save, is a 400 with its one line.
"""

from __future__ import annotations

import asyncio
import sys
import traceback
from typing import Any

from ..errors import BattleInputError

MAX_PLAYER_NAME = 200  # a TripleA player's name (real: a word or two)


async def _the_save(request, live, upload, error, not_watching: str):
    """The save a request of /api/turn/* is about, or the response refusing it: GET, the
    watched folder's (404 without --watch, 409 before a save is read); POST, its body
    (upload: the server's one reader of an uploaded save)."""
    if request.method != "GET":
        return await upload(request)
    if live is None:
        return error(not_watching, 404)
    raw = getattr(live, "raw", None)
    if raw is None:
        return error("no save of the watched folder has been read yet", 409)
    return raw


async def reach_answer(request, engine, live, slots: asyncio.Semaphore, *, respond,
                       acquire, client_gone, upload, not_watching: str):
    """The response to one request of /api/turn/reach (module documentation), with the
    server's own helpers: respond(data, status) (its JSON response), acquire(slots, gone),
    client_gone(request), upload(request) (the save of a POST's body, or the response
    refusing it: /api/game's limits) and its words for a server that watches no folder."""
    from starlette.requests import ClientDisconnect

    from .saves import ChildGone, read_in_child

    def _error(message: str, status: int = 400):
        return respond({"error": message}, status)

    _json, _acquire, _client_gone, NOT_WATCHING = respond, acquire, client_gone, not_watching

    player = request.query_params.get("player")
    unknown = sorted(set(request.query_params) - {"player"})
    if unknown:
        return _error(f"/api/turn/reach takes no parameter {', '.join(unknown)} (its one: "
                      "player)")
    if player is not None and (not player.strip() or len(player) > MAX_PLAYER_NAME):
        return _error(f"player: expected a player's name of 1 to {MAX_PLAYER_NAME} characters")
    raw = await _the_save(request, live, upload, _error, NOT_WATCHING)
    if not isinstance(raw, bytes):  # (the response refusing it)
        return raw
    if engine.saves_full():
        return _error("the server is busy reading saves; try again in a moment", 503)
    engine.game_pending += 1
    gone = asyncio.ensure_future(_client_gone(request))
    try:
        if not await _acquire(slots, gone):
            raise ChildGone()
        try:
            engine.started["turn_reach"] += 1
            answer: dict[str, Any] = await read_in_child(
                raw, engine.game_time_limit, engine.game_memory, gone,
                task=("reach", player or ""))
        finally:
            slots.release()
    except (ClientDisconnect, ChildGone):
        return _error("cancelled: the client has gone", 409)
    except BattleInputError as exc:
        return _error(" ".join(str(exc).split()))
    except Exception:  # a bug: say so, keep serving
        traceback.print_exc(file=sys.stderr)
        return _error("internal error (see the server's output)", 500)
    finally:
        engine.game_pending -= 1
        gone.cancel()
    return _json(answer)


# ---------------------------------------------------------------- /api/turn/plan

PLAN_TIME_BUDGET_S = 30.0  # the planner's search (plan_turn's time_budget: the CLI's default)
PLAN_TIME_LIMIT_S = 120.0  # the child planning, killed past it (reading, solving, the search)
PLAN_MEMORY = 2 * 1024 * 1024 * 1024  # its address space (Global 1940's Germans: 0.42 GB
#                                       resident, more than 1 GB of address space)
PLAN_CACHE = 16  # plans kept: a watched save, and the pages that follow it, ask once
PLAN_PARAMETERS = ("player", "objective", "counter", "min_win")
_plans: dict = {}  # (save digest, options) -> answer, oldest first


def plan_options(params) -> dict[str, Any]:
    """plan_turn's keywords from the request's query (BattleInputError naming the one that is
    wrong: the checks of plan_turn, here, before a child starts)."""
    unknown = sorted(set(params) - set(PLAN_PARAMETERS))
    if unknown:
        raise BattleInputError(f"/api/turn/plan takes no parameter {', '.join(unknown)} (its "
                               f"parameters: {', '.join(PLAN_PARAMETERS)})")
    options: dict[str, Any] = {"time_budget": PLAN_TIME_BUDGET_S}
    player = params.get("player")
    if player is not None:
        if not player.strip() or len(player) > MAX_PLAYER_NAME:
            raise BattleInputError(f"player: expected a player's name of 1 to "
                                   f"{MAX_PLAYER_NAME} characters")
        options["player"] = player
    for name in ("objective", "counter"):
        if params.get(name):
            options[name] = params[name]
    if params.get("min_win"):
        try:
            options["min_win"] = float(params["min_win"])
        except ValueError:
            raise BattleInputError(f"min_win: expected a probability 0..1, got "
                                   f"{params['min_win']!r}") from None
    from ..turn.plan import _check

    _check(options.get("objective", "value"), options.get("min_win", 0.8),
           options.get("counter"), 1, options["time_budget"])
    return options


async def plan_in_child(raw: bytes, options: dict[str, Any], time_limit: float, memory: int,
                        gone: asyncio.Future, report) -> dict[str, Any]:
    """The plan of a save (battlecalc.web.saves.plan_of_upload) in a child process capped at
    `memory` bytes of address space, killed past `time_limit` seconds or once `gone` is done
    (ChildGone); report(text) for each line of its progress."""
    import json

    from .saves import MAX_TRACEBACK_BYTES, SaveTooCostly, child_env, child_result

    child = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "battlecalc.web.saves", str(memory), "plan", json.dumps(options),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=child_env(), limit=1 << 24)

    async def talk() -> dict[str, Any]:
        child.stdin.write(raw)
        await child.stdin.drain()
        child.stdin.close()
        errors = asyncio.ensure_future(child.stderr.read())
        while True:
            line = await child.stdout.readline()
            if not line:
                await child.wait()
                err = await errors
                print(f"battlecalc: a plan's child ended with status {child.returncode}",
                      file=sys.stderr, flush=True)
                sys.stderr.write(err[-MAX_TRACEBACK_BYTES:].decode("utf-8", "replace"))
                raise SaveTooCostly(f"the plan could not be made within the server's limits "
                                    f"({memory >> 20} MiB, {time_limit:g} s)")
            message = json.loads(line)
            if "progress" in message:
                report(str(message["progress"]))
                continue
            await child.wait()
            if "error" in message:
                raise BattleInputError(message["error"])
            if "answer" not in message:  # a bug: its traceback on the server's stderr
                err = await errors
                sys.stderr.write(err[-MAX_TRACEBACK_BYTES:].decode("utf-8", "replace"))
                raise RuntimeError(message.get("bug", "the planner failed"))
            errors.cancel()
            return message["answer"]

    return await child_result(child, asyncio.ensure_future(talk()), gone, time_limit,
                              f"the plan took more than the server's {time_limit:g} s; "
                              "battlecalc turn makes it on the command line")


async def plan_answer(request, engine, live, slots: asyncio.Semaphore, *, respond, acquire,
                      client_gone, upload, not_watching: str, stream_type: str, headers: dict):
    """The response to one request of /api/turn/plan: the plan of the turn of the watched
    save (GET) or of the save in the body (POST), made by a child process
    (plan_in_child) in one of the slots uploads share; its query: player, objective, counter,
    min_win (plan_turn's).  With ``Accept: application/x-ndjson`` the answer streams: a line
    ``{"progress": text}`` as the planner goes, then ``{"status": 200, "result": plan}`` or
    ``{"status": 4xx, "error": message}``.  A plan is kept (PLAN_CACHE) for the same save and
    options."""
    import hashlib
    import json

    from starlette.requests import ClientDisconnect
    from starlette.responses import StreamingResponse

    from .saves import ChildGone

    def _error(message: str, status: int = 400):
        return respond({"error": message}, status)

    try:
        options = plan_options(request.query_params)
    except BattleInputError as exc:
        return _error(" ".join(str(exc).split()))
    raw = await _the_save(request, live, upload, _error, not_watching)
    if not isinstance(raw, bytes):  # (the response refusing it)
        return raw
    key = (hashlib.sha256(raw).hexdigest(), json.dumps(options, sort_keys=True))
    updates: asyncio.Queue = asyncio.Queue()

    async def answer(gone: asyncio.Future) -> tuple[int, dict[str, Any]]:
        """(status, data); `gone` done: the client has gone (the child is stopped)."""
        if key in _plans:
            _plans[key] = _plans.pop(key)  # (the most recent last)
            return 200, _plans[key]
        if engine.saves_full():
            return 503, {"error": "the server is busy reading saves; try again in a moment"}
        engine.game_pending += 1
        try:
            if not await acquire(slots, gone):
                raise ChildGone()
            try:
                engine.started["turn_plan"] += 1
                data = await plan_in_child(raw, options, PLAN_TIME_LIMIT_S, PLAN_MEMORY, gone,
                                           updates.put_nowait)
            finally:
                slots.release()
        except (ClientDisconnect, ChildGone):
            return 409, {"error": "cancelled: the client has gone"}
        except BattleInputError as exc:
            return 400, {"error": " ".join(str(exc).split())}
        except Exception:  # a bug: say so, keep serving
            traceback.print_exc(file=sys.stderr)
            return 500, {"error": "internal error (see the server's output)"}
        finally:
            engine.game_pending -= 1
        _plans[key] = data
        while len(_plans) > PLAN_CACHE:
            _plans.pop(next(iter(_plans)))
        return 200, data

    if stream_type not in request.headers.get("accept", ""):
        gone = asyncio.ensure_future(client_gone(request))
        try:
            status, data = await answer(gone)
        finally:
            gone.cancel()
        return respond(data, status)

    async def lines():
        # (the stream closed early: the client has gone, and the child is stopped)
        gone = asyncio.get_running_loop().create_future()
        task = asyncio.ensure_future(answer(gone))
        try:
            while not task.done():
                getter = asyncio.ensure_future(updates.get())
                await asyncio.wait({task, getter}, return_when=asyncio.FIRST_COMPLETED)
                if getter.done():
                    yield json.dumps({"progress": getter.result()}) + "\n"
                else:
                    getter.cancel()
            status, data = task.result()
            yield json.dumps({"status": status, "result": data} if status == 200
                             else {"status": status, **data}) + "\n"
        finally:  # (the task sees it, stops its child and ends by itself)
            if not gone.done():
                gone.set_result(None)

    return StreamingResponse(lines(), media_type=stream_type,
                             headers={**headers, "Cache-Control": "no-store"})
