"""``GET|POST /api/turn/reach``: every legal attack of a player in a TripleA save (issue 41),
as ``battlecalc turn SAVE --reach`` lists them.

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


async def reach_answer(request, engine, live, slots: asyncio.Semaphore, *, respond,
                       acquire, client_gone, not_watching: str):
    """The response to one request of /api/turn/reach (module documentation), with the
    server's own helpers: respond(data, status) (its JSON response), acquire(slots, gone),
    client_gone(request) and its words for a server that watches no folder."""
    from starlette.requests import ClientDisconnect

    from .saves import MAX_SAVE_UPLOAD, ChildGone, read_in_child

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
    if request.method == "GET":
        if live is None:
            return _error(NOT_WATCHING, 404)
        raw = getattr(live, "raw", None)
        if raw is None:
            return _error("no save of the watched folder has been read yet", 409)
    else:
        declared = request.headers.get("content-length")
        too_large = f"a save of at most {MAX_SAVE_UPLOAD >> 20} MiB"
        if declared is not None and (not declared.isdigit() or int(declared) > MAX_SAVE_UPLOAD):
            return _error(too_large, 413)
        body = bytearray()
        try:
            async for chunk in request.stream():
                body += chunk
                if len(body) > MAX_SAVE_UPLOAD:
                    return _error(too_large, 413)
        except ClientDisconnect:
            return _error("cancelled: the client has gone", 409)
        if not body:
            return _error("send the TripleA save (.tsvg) as the request body")
        raw = bytes(body)
    if engine.game_pending >= engine.max_game_pending:
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
