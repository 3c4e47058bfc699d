"""The live board on the server (issue 30): `serve --watch DIR`, the board of an uploaded save,
and the API's side of the frictions (a battle in progress as `game` solves it, an honest word
while kernels compile, warnings as the command line gives them), against real servers on
loopback ports (the slow tier: every test here starts a server, tests/tiers.py; the in-process
tests of the live board are tests/test_live.py)."""

from __future__ import annotations

import http.client
import json
import shutil
import threading
import time
import urllib.parse

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from helpers import invoke  # noqa: E402
from hostile_saves import LAND_BATTLE, triplea_fixtures  # noqa: E402
from webserver import get_json, request, running_server  # noqa: E402

import battlecalc  # noqa: E402
from battlecalc.options import NO_EDITION_WARNING  # noqa: E402
from battlecalc.triplea.board import solve_params  # noqa: E402
from battlecalc.web import server as web_server  # noqa: E402
from battlecalc.web.server import Engine  # noqa: E402

START = triplea_fixtures() / "saves" / "revisted_start_of_game.tsvg"
needs_saves = pytest.mark.skipif(not LAND_BATTLE.exists(),
                                 reason="the shared TripleA saves are absent")
ODDS = ("attacker_win", "defender_win", "draw", "takes_territory", "tuv_swing",
        "attacker_ipc_loss", "defender_ipc_loss", "mean_rounds")


@pytest.fixture(scope="module")
def base():
    with running_server() as url:
        yield url


def _game_result():
    from battlecalc.triplea.game import read_game

    (battle,) = read_game(LAND_BATTLE).battles
    return battle.result


# ------------------------------------------------------------------ friction 1, uploads


@needs_saves
def test_an_uploaded_save_is_a_board_each_battle_as_game_solves_it(base):
    from battlecalc.triplea.luck import read_luck

    status, _, body = request(base, "POST", "/api/game", LAND_BATTLE.read_bytes(),
                              {"Content-Type": "application/octet-stream"})
    assert status == 200, body
    board = json.loads(body)
    (battle,) = board["battles"]
    game = _game_result()
    # the query loads the battle as it stands (friction 1: it was solved fresh, 99.98%)
    query = dict(urllib.parse.parse_qsl(battle["query"]))
    assert (query["start_round"], query["start_step"], query["hits_on_defender"]) == (
        "1", "defender_fire", "1")
    assert battle["start"] == game["start"]
    status, run = get_json(base, "/api/run?" + urllib.parse.urlencode(solve_params(
        battle["query"])))
    assert status == 200
    for key in ODDS:
        assert run[key] == pytest.approx(game[key], abs=1e-9), key
        assert battle["odds"][key] == run[key], key  # the board's odds are the form's
    assert run["attacker_win"] == pytest.approx(0.99894, abs=1e-5)
    assert battle["tuv_at_risk"] == 65 and board["by_stake"] == ["West Russia"]
    assert board["summary"] == ("Round 1, Russians to move: 1 battle, 65 TUV at risk; expected "
                                "swing +6.36 TUV for Russians")
    luck = read_luck(LAND_BATTLE).to_dict()
    assert {k: board["luck"][k] for k in luck} == luck
    assert len(board["territories"]) == 143


@needs_saves
def test_a_save_with_no_battle_has_its_territories_and_its_luck(base):
    # friction 5: "no battle pending" and nothing else
    status, _, body = request(base, "POST", "/api/game", START.read_bytes(),
                              {"Content-Type": "application/octet-stream"})
    board = json.loads(body)
    assert status == 200 and board["battles"] == []
    assert board["summary"] == "Round 1, Russians to move: no battle pending"
    germany = next(t for t in board["territories"] if t["name"] == "Germany")
    attack = "8 infantry, 3 tank, 2 fighter"
    status, run = get_json(base, "/api/run?" + urllib.parse.urlencode(
        solve_params(germany["query"], attacker=attack)))
    from battlecalc.triplea.game import read_game

    (cli_battle,) = read_game(START, territory="Germany", attack=attack).battles
    assert status == 200
    assert run["attacker_win"] == pytest.approx(cli_battle.result["attacker_win"], abs=1e-9)
    assert board["luck"]["dice"]["rolls"] == 0 and board["luck"]["battles"] == []


@needs_saves
@pytest.mark.parametrize(("name", "value", "words"), [
    ("MAX_BOARD_BATTLES", 0, "not solved: the board solves 0 battles at most"),
    ("BOARD_TIME_LIMIT_S", -1.0, "not solved: past the board's time limit of -1 s"),
])
def test_a_board_s_work_is_bounded(base, monkeypatch, name, value, words):
    from battlecalc.web import live

    monkeypatch.setattr(live, name, value)
    status, _, body = request(base, "POST", "/api/game", LAND_BATTLE.read_bytes(),
                              {"Content-Type": "application/octet-stream"})
    (battle,) = json.loads(body)["battles"]
    assert status == 200 and battle["odds"] is None and battle["error"] == words


# ------------------------------------------------------------------ serve --watch


def _wait(condition, seconds: float, step: float = 0.02):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(step)
    raise AssertionError(f"not within {seconds} s")


def _board(base):
    status, state = get_json(base, "/api/board")
    assert status == 200
    return state


class Events:
    """The server-sent events of GET /api/watch, read in a thread."""

    def __init__(self, base: str):
        parts = urllib.parse.urlsplit(base)
        self.connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
        self.connection.request("GET", "/api/watch", headers={"X-Battlecalc-Client": "tests"})
        self.response = self.connection.getresponse()
        assert self.response.status == 200
        assert self.response.getheader("content-type").startswith("text/event-stream")
        self.states: list[dict] = []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        data = []
        try:
            for raw in self.response:
                line = raw.decode().rstrip("\n")
                if line.startswith("data: "):
                    data.append(line[len("data: "):])
                elif not line and data:
                    self.states.append(json.loads("\n".join(data)))
                    data = []
        except (OSError, ValueError, AttributeError):  # (closed under it: AttributeError)
            pass

    def close(self):
        import socket

        if self.connection.sock is not None:  # (wakes the reading thread)
            self.connection.sock.shutdown(socket.SHUT_RDWR)
        self.connection.close()
        self.thread.join(5)


@needs_saves
def test_serve_watch_pushes_the_newest_complete_save_to_every_page(tmp_path):
    engine = Engine()
    with running_server(engine, watch=tmp_path, watch_interval=0.05) as base:
        state = _board(base)
        assert state["board"] is None and state["watching"] == str(tmp_path)
        pages = [Events(base), Events(base)]
        try:
            _wait(lambda: all(p.states for p in pages), 10)
            assert pages[0].states[0]["board"] is None
            copied = time.monotonic()
            shutil.copy(START, tmp_path / "autosave_round_odd.tsvg")
            first = _wait(lambda: (s := _board(base))["board"] and s["board"].get("summary")
                          and s, 15)
            assert first["board"]["file"] == "autosave_round_odd.tsvg"
            assert first["board"]["battles"] == []
            # a newer save: a battle in progress, pushed to both pages, solved as game does
            copied = time.monotonic()
            shutil.copy(LAND_BATTLE, tmp_path / "autosaveBeforeBattle.tsvg")

            def solved(page):
                return next((s for s in page.states if s["board"] and s["board"]["battles"]
                             and s["board"]["battles"][0]["odds"]), None)

            states = _wait(lambda: all(solved(p) for p in pages) and [solved(p) for p in pages],
                           15)
            seconds = time.monotonic() - copied
            assert seconds < 5, seconds
            board = states[0]["board"]
            assert states[1]["board"] == board
            (battle,) = board["battles"]
            game = _game_result()
            for key in ODDS:
                assert battle["odds"][key] == pytest.approx(game[key], abs=1e-9), key
            assert battle["change"] == "new"
            assert board["changes"]["since"]["file"] == "autosave_round_odd.tsvg"
            # the board as read came first (the odds to come), then solved
            unsolved = [s for s in pages[0].states if s["board"] and s["board"]["battles"]
                        and s["board"]["battles"][0]["odds"] is None]
            assert unsolved and unsolved[0]["version"] < states[0]["version"]
            print(f"a copied save solved on the pages in {seconds:.2f} s")
        finally:
            for p in pages:
                p.close()


@needs_saves
def test_a_half_written_save_is_not_read_and_a_symlink_out_is_refused(tmp_path, monkeypatch):
    from battlecalc.web import saves

    parsed = []
    real = saves.read_in_child

    async def counting(raw, *args, **kwargs):
        parsed.append(len(raw))
        return await real(raw, *args, **kwargs)

    monkeypatch.setattr(saves, "read_in_child", counting)
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.copy(LAND_BATTLE, outside / "elsewhere.tsvg")
    watched = tmp_path / "autoSave"
    watched.mkdir()
    (watched / "autosave.tsvg").symlink_to(outside / "elsewhere.tsvg")
    raw = LAND_BATTLE.read_bytes()
    with running_server(watch=watched, watch_interval=0.05) as base:
        refused = _wait(lambda: (s := _board(base))["notes"] and s, 10)
        assert refused["notes"] == ["autosave.tsvg: refused, a symlink out of the folder"]
        target = watched / "autosaveBeforeBattle.tsvg"
        with open(target, "wb") as partial:  # TripleA 2.0 writes in place
            partial.write(raw[: len(raw) // 2])
            partial.flush()
            time.sleep(1.5)  # past the settle time: unchanged, yet incomplete
            state = _board(base)
            assert state["board"] is None and parsed == []
            assert "autosaveBeforeBattle.tsvg: skipped, its gzip stream is incomplete " \
                   "(being written?)" in state["notes"]
            partial.write(raw[len(raw) // 2:])
        state = _wait(lambda: (s := _board(base))["board"] and s["board"].get("summary") and s,
                      15)
        assert parsed == [len(raw)]  # the whole save, once
        assert state["board"]["battles"][0]["territory"] == "West Russia"


def test_the_board_needs_the_page_header_and_a_watched_folder(base, tmp_path):
    for path in ("/api/board", "/api/watch"):
        status, _, body = request(base, "GET", path)
        assert status == 404 and json.loads(body)["error"] == (
            "this server watches no folder: start it with battlecalc serve --watch DIR")
        status, _, _ = request(base, "GET", path, client=False)
        assert status == 403


def test_pages_following_the_board_are_bounded(tmp_path, monkeypatch):
    from battlecalc.web import live

    monkeypatch.setattr(live, "MAX_SUBSCRIBERS", 2)
    with running_server(watch=tmp_path) as base:
        pages = [Events(base), Events(base)]
        try:
            _wait(lambda: all(p.states for p in pages), 10)
            status, _, body = request(base, "GET", "/api/watch")
            assert status == 503 and "too many pages" in json.loads(body)["error"]
        finally:
            for p in pages:
                p.close()
        # a page gone frees its place
        time.sleep(0.3)
        third = Events(base)
        try:
            _wait(lambda: third.states, 10)
        finally:
            third.close()


# ------------------------------------------------------------------ friction 2


def _stream(base: str, body: dict) -> list[dict]:
    status, _, raw = request(base, "POST", "/api/run", json.dumps(body).encode(),
                             {"Content-Type": "application/json",
                              "Accept": "application/x-ndjson"})
    assert status == 200
    return [json.loads(line) for line in raw.decode().splitlines() if line.strip()]


def test_a_cold_server_says_it_compiles_and_its_time_limit_waits_for_the_kernels(monkeypatch):
    # friction 2: "a large battle: Monte Carlo, a few seconds..." for minutes, then a
    # 100,000-trial request stopped at the time limit ("ask for fewer trials")
    monkeypatch.setattr(battlecalc.api, "kernels_cold", lambda method=None: True)
    real = web_server.api.simulate

    def compiling_first(*args, progress=None, **kwargs):
        first = [True]

        def slow(done, total, *rest, **more):
            if first[0] and total:  # the kernels "compile" before the first chunk
                first[0] = False
                time.sleep(1.2)
            return progress(done, total, *rest, **more)

        return real(*args, progress=slow, **kwargs)

    monkeypatch.setattr(web_server.api, "simulate", compiling_first)
    engine = Engine(time_limit=0.8)
    with running_server(engine) as base:
        lines = _stream(base, {"rules": "1942-2e", "attacker": "6 inf 3 art 3 tank 2 ftr",
                               "defender": "8 inf 3 tank 1 ftr 1 aa", "method": "mc",
                               "trials": "100000", "seed": "1"})
    assert lines[-1]["status"] == 200, lines[-1]  # (was 400: "... ask for fewer trials")
    told = lines[0]
    assert told == {"progress": 0, "total": 0, "what": "compiling kernels (first run only)",
                    "method": "mc", "compiling": True, "trials": 100000}
    expected = battlecalc.simulate(rules="1942-2e", attacker="6 inf 3 art 3 tank 2 ftr",
                                   defender="8 inf 3 tank 1 ftr 1 aa", method="mc",
                                   trials=100000, seed=1)
    assert lines[-1]["result"]["attacker_win"] == expected.attacker_win


def test_a_streamed_answer_says_first_what_will_run(base):
    lines = _stream(base, {"rules": "revised", "attacker": "3 inf", "defender": "2 inf"})
    assert lines[0] == {"progress": 0, "total": 0, "what": "exact solve", "method": "exact",
                        "compiling": False, "trials": None}
    assert lines[-1]["status"] == 200 and lines[-1]["result"]["method"] == "exact"


# ------------------------------------------------------------------ friction 4


def _cli_warnings(args: list[str]) -> list[str]:
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    return [line[len("Warning: "):] for line in result.stderr.splitlines()
            if line.startswith("Warning: ")]


@pytest.mark.parametrize(("params", "args", "words"), [
    ({"rules": "revised", "attacker": "1 tank", "landing": "3 inf", "defender": "2 inf",
      "retreat_after": "1"},
     ["run", "--rules", "revised", "-a", "1 tank", "--landing", "3 inf", "-d", "2 inf",
      "--retreat-after", "1"],
     ["the retreat policy is ignored: only aircraft may retreat from an amphibious assault in "
      "revised, and the attacker has none (the battle is fought to the end)"]),
    ({"rules": "revised", "attacker": "2 inf", "defender": "2 inf", "method": "exact",
      "seed": "3", "trials": "1000"},
     ["run", "--rules", "revised", "-a", "2 inf", "-d", "2 inf", "--method", "exact",
      "--seed", "3", "--trials", "1000"],
     ["seed and trials are ignored with method exact (no dice are rolled)"]),
    ({"rules": "1942-2e", "attacker": "3 inf", "defender": "2 inf", "defender_tech": "jets"},
     ["run", "--rules", "1942-2e", "-a", "3 inf", "-d", "2 inf", "--defender-tech", "jets"],
     ["defender technology jets changes nothing here: it changes no unit the defender has, "
      "in its role"]),
])
def test_what_the_cli_warns_of_the_api_answers_as_warnings(base, params, args, words):
    # friction 4: ignored silently on the page
    cli_words = [line.replace("--method", "method").replace("--seed", "seed")
                 .replace("--trials", "trials") for line in _cli_warnings(args)]
    assert cli_words == words
    for _ in range(2):  # the second from the cache of exact answers: still warned
        status, data = get_json(base, "/api/run?" + urllib.parse.urlencode(params))
        assert status == 200 and data["warnings"] == words


def test_a_request_without_an_edition_is_told_which_it_got(base):
    status, data = get_json(base, "/api/run?attacker=1+inf&defender=1+inf")
    assert status == 200 and data["rules"] == "revised"
    assert data["warnings"] == [NO_EDITION_WARNING]
    status, data = get_json(base, "/api/run?rules=revised&attacker=1+inf&defender=1+inf")
    assert "warnings" not in data


def test_a_raid_s_notes_are_its_warnings(base):
    args = ["raid", "--rules", "1942-2e", "-a", "2 bomber", "--target-value", "3", "--aa"]
    cli_words = _cli_warnings(args)
    assert cli_words and "aa is ignored" in cli_words[0]
    status, data = get_json(base, "/api/raid?rules=1942-2e&attacker=2+bomber&target_value=3"
                                  "&aa=1")
    assert status == 200 and data["warnings"] == cli_words


def test_the_page_spec_names_the_watched_folder(tmp_path):
    with running_server(watch=tmp_path) as base:
        status, spec = get_json(base, "/api/spec")
    assert status == 200 and spec["limits"]["watching"] == str(tmp_path)


