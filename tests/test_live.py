"""The live board without a server (issue 30): `serve --watch DIR` refusing what it cannot
watch before any server is built, and the board's streams ending when the server stops.  The
live board on real servers is tests/test_live_server.py (the slow tier: tests/tiers.py)."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from helpers import invoke  # noqa: E402

from battlecalc.web import server as web_server  # noqa: E402


@pytest.fixture
def no_server(monkeypatch):
    import uvicorn

    def refuse(*args, **kwargs):
        raise AssertionError("the server was built although the folder cannot be watched")

    monkeypatch.setattr(web_server, "create_app", refuse)
    monkeypatch.setattr(uvicorn.Server, "run", refuse)


def test_serve_watch_refuses_what_it_cannot_watch_in_one_line(no_server, tmp_path):
    for args, words in (
            (["--watch", str(tmp_path / "missing")], "cannot watch "),
            (["--watch", str(tmp_path), "--workers", "2"],
             "--watch runs in one server process: leave out --workers")):
        result = invoke("serve", "--port", "1", *args)
        assert result.exit_code == 2, result.output
        (line,) = result.stderr.splitlines()
        assert line.startswith("Error: ") and words in line and "Traceback" not in line


def test_the_board_streams_end_when_the_server_stops(tmp_path):
    # serve's Ctrl-C closes them first (so uvicorn need not cancel them at its timeout)
    import asyncio

    from battlecalc.triplea.watch import SaveFolder
    from battlecalc.web.live import LiveBoard

    async def follow_then_stop():
        live = LiveBoard(SaveFolder(tmp_path), engine=None)
        live.loop = asyncio.get_running_loop()
        stream = live.events()
        first = await stream.__anext__()
        assert first.startswith("event: board\ndata: ") and len(live.subscribers) == 1
        live.close_streams_threadsafe()
        with pytest.raises(StopAsyncIteration):
            await asyncio.wait_for(stream.__anext__(), 5)
        assert live.subscribers == set()
        live.folder.close()

    asyncio.run(follow_then_stop())
