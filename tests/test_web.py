"""`battlecalc serve` in process, without a server: the request parameters and the page's
spec, the engine's limits and warm-up, the `serve` command's refusals.  The API against a real
server on a loopback port is tests/test_web_server.py (the slow tier: tests/tiers.py).
"""

from __future__ import annotations

import inspect
import socket
import threading
import time

import numpy as np
import pytest
from helpers import invoke

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from webserver import (  # noqa: E402
    without_time,
)

import battlecalc  # noqa: E402
from battlecalc import api, solver  # noqa: E402
from battlecalc.cli import PLAN_OPTIONS  # noqa: E402
from battlecalc.web import server as web_server  # noqa: E402
from battlecalc.web.server import Engine  # noqa: E402
from battlecalc.web.spec import (  # noqa: E402
    OPTIONS,
    ParamError,
    parse_params,
    plan_parameters,
    raid_parameters,
    simulate_parameters,
)


def test_every_simulate_argument_is_a_request_parameter():
    names = set(inspect.signature(battlecalc.simulate).parameters) - {"progress",
                                                                      "formula_options"}
    assert set(simulate_parameters()) == names | set(api.FORMULA_OPTIONS)
    assert set(raid_parameters()) == set(inspect.signature(battlecalc.raid).parameters) - {
        "progress"}
    assert set(plan_parameters()) == set(inspect.signature(battlecalc.plan).parameters) - {
        "progress", "run_options"} | set(PLAN_OPTIONS)
    assert {o["name"] for o in OPTIONS} <= (set(simulate_parameters()) | set(raid_parameters())
                                            | set(plan_parameters()))
    kwargs, extra = parse_params({"trials": "1,000,000", "seed": "7", "sea": "yes",
                                  "retreat_below": "0.25", "attacker_tech": "jets",
                                  "keep_land": "", "distributions": "on"})
    assert kwargs == {"trials": 1_000_000, "seed": 7, "sea": True, "retreat_below": 0.25,
                      "attacker_tech": "jets"}
    assert extra == {"distributions": True}
    assert parse_params({"trials": "1e5"})[0] == {"trials": 100_000}
    with pytest.raises(ParamError, match="trials must be a whole number, got '1.5'"):
        parse_params({"trials": "1.5"})


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_serve_allow_host_is_checked_and_named_in_the_warning(monkeypatch):
    import uvicorn

    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: None)
    result = invoke("serve", "--host", "0.0.0.0", "--port", str(free_port()),
                    "--allow-host", "mypc.local", "--allow-host", "[fd00::5]")
    assert result.exit_code == 0, result.output
    named = result.stderr.split("It answers requests that name it as ")[1].split(
        " or any address of this machine; give other names with --allow-host NAME")[0]
    assert set(named.split(", ")) == {"::1", "127.0.0.1", "fd00::5", "localhost",
                                      "mypc.local", *web_server.machine_names()}
    result = invoke("serve", "--port", str(free_port()), "--allow-host", "evil.example:80/x")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [
        "Error: --allow-host: 'evil.example:80/x' is not a host name or an address (give it "
        "without a port, e.g. --allow-host mypc.local)"]


def test_serve_command_warns_off_loopback_and_stays_quiet_on_it(monkeypatch):
    import uvicorn

    calls = []

    def served(self, sockets=None):
        (sock,) = sockets
        calls.append({"host": self.config.host, "port": self.config.port,
                      "bound": sock.getsockname()[1]})

    monkeypatch.setattr(uvicorn.Server, "run", served)
    port = free_port()
    result = invoke("serve", "--host", "0.0.0.0", "--port", str(port))
    assert result.exit_code == 0, result.output
    assert "Warning: listening on 0.0.0.0" in result.stderr
    assert calls[-1] == {"host": "0.0.0.0", "port": port, "bound": port}
    port = free_port()
    result = invoke("serve", "--port", str(port))
    assert result.exit_code == 0 and "Warning" not in result.stderr
    assert calls[-1] == {"host": "127.0.0.1", "port": port, "bound": port}
    result = invoke("serve", "--port", "70000")
    assert result.exit_code == 2


def test_exact_is_solved_where_auto_would_and_refused_before_any_work_elsewhere():
    """method=exact on the server: exact where auto would solve exactly; where auto would take
    Monte Carlo the battle's plan refuses before anything runs (no progress report at all),
    for one battle and for a battle of waves alike."""
    engine = Engine(cache_size=0)
    reports = []

    def report(*args):
        reports.append(args)

    small = {"rules": "revised", "attacker": "1 inf", "defender": "1 inf", "method": "exact"}
    # 200 tanks a side: exact is possible (a few seconds) but auto takes Monte Carlo
    big = {"rules": "1942-2e", "attacker": "200 tank", "defender": "200 inf", "method": "exact",
           "trials": 1000}
    try:
        assert engine.compute(small, False, report=report)["method"] == "exact"
        for battle in (big, {**small, "waves": ["200 tank"], "defender": "200 inf 1 aa",
                             "trials": 1000}):
            reports.clear()
            with pytest.raises(web_server.TooMuchWork, match="too large to solve exactly"):
                engine.compute(battle, False, report=report)
            assert not [r for r in reports if r[2:3] == ("trials",)]
        # the library's own method=exact solves the big battle (its limits are wider)
        assert battlecalc.simulate(**{**big, "attacker": "20 tank", "defender": "20 inf"}
                                   ).method == "exact"
    finally:
        engine.close()


def test_serve_without_the_web_extra_says_how_to_install_it(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "battlecalc.web.server", None)  # import fails
    result = invoke("serve")
    assert result.exit_code == 2
    assert "pip install 'battlecalc[web]'" in result.stderr


def test_warm_up_runs_every_kind_of_battle():
    engine = Engine()
    try:
        assert engine.warm_up() < 120
        assert engine.warm_up_problems == []
    finally:
        engine.close()
    kinds = {(b["rules"], b.get("sea", False), "landing" in b, b["method"])
             for b in web_server.WARM_UP}
    assert {("1942-2e", False, False, "exact"), ("1942-2e", True, False, "mc"),
            ("1942-2e", False, True, "exact"), ("formula", False, False, "mc")} <= kinds


# --- issue 16: no server file is a request's to read (point 1) -------------------------------


# --- issue 16 point 13: a request's bad values are 400, never 500 ---------------------------


# --- issue 16 point 15: serve checks where it listens before the warm-up --------------------


@pytest.fixture
def no_warm_up(monkeypatch):
    """Fail the test if the server is built or warmed up: the refusal must come first."""
    import uvicorn

    def refuse(*args, **kwargs):
        raise AssertionError("the server was built although it cannot listen")

    monkeypatch.setattr(web_server, "create_app", refuse)
    monkeypatch.setattr(uvicorn.Server, "run", refuse)


def one_error_line(result) -> str:
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    assert line.startswith("Error: ") and "Traceback" not in result.output
    assert result.stdout == ""
    return line


def test_serve_on_a_port_in_use_is_one_line_and_exit_2(no_warm_up):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        started = time.monotonic()
        line = one_error_line(invoke("serve", "--port", str(port)))
    assert line == (f"Error: cannot listen on 127.0.0.1:{port}: the port is in use "
                    "(another server?); choose another --port")
    assert time.monotonic() - started < 5


@pytest.mark.parametrize(("host", "fragment"), [
    ("no-such-host.invalid", "cannot listen on 'no-such-host.invalid': unknown host"),
    ("192.0.2.1", "cannot listen on 192.0.2.1:8000: not an address of this machine"),
])
def test_serve_on_an_unknown_or_foreign_host_is_one_line_and_exit_2(no_warm_up, host,
                                                                     fragment):
    line = one_error_line(invoke("serve", "--host", host))
    assert fragment in line


# --- issue 18: raids, the planner and waves answer the CLI's JSON; work follows the user ------


def test_latest_request_of_each_page():
    latest = web_server.Latest(size=2)
    first, second, late, other = (threading.Event() for _ in range(4))
    latest.begin("p", 1, first)
    latest.begin("q", 1, other)
    latest.begin("p", 2, second)
    assert first.is_set() and not second.is_set() and not other.is_set()
    latest.begin("p", 1, late)  # an older request that arrives late is cancelled at once
    assert late.is_set() and not second.is_set()
    latest.begin(None, None, threading.Event())  # no page id: nothing remembered
    assert set(latest.pages) == {"p", "q"}
    latest.end("p", second)
    assert set(latest.pages) == {"q"}


def test_the_partial_outcome_counts_leave_the_monte_carlo_answer_unchanged():
    battle = dict(rules="1942-2e", attacker="3 inf 1 art 2 tank", defender="4 inf 1 tank",
                  method="mc", trials=300_000, seed=9)
    seen = []

    def progress(done, total, what="trials", *, outcomes=None):
        if outcomes is not None:
            seen.append((done, outcomes))

    with_counts = battlecalc.simulate(**battle, progress=progress)
    plain = battlecalc.simulate(**battle)
    assert without_time(with_counts.to_dict()) == without_time(plain.to_dict())
    assert seen and seen[-1][0] == battle["trials"]
    for done, outcomes in seen:
        assert int(outcomes.sum()) == done
    counts = np.array([o for _, o in seen])
    assert (np.diff(counts, axis=0) >= 0).all()
    final = seen[-1][1] / battle["trials"]
    assert final[0] == plain.attacker_win and final[1] == plain.defender_win
    # a callback without the keyword is called as before (done, total, what)
    calls = []
    battlecalc.simulate(**battle, progress=lambda *args: calls.append(args))
    assert calls and all(len(args) == 3 for args in calls)


# --- what a new user waits for: the server answers while the kernels warm up --------------


# --- bounded work (issue 16, points 5 and 12): the server stops --retreat-below's table at its
# time limit, and refuses a JSON body with a key twice -------------------------------------

# a sea battle of the general round: 628,425 state pairs, its table 18-40 s of work
BIG_TABLE = dict(rules="1942-2e", sea=True, attacker="8 sub 8 dd 4 ca 3 bb 6 ftr 2 cv",
                 defender="6 dd 4 ca 2 cv 4 ftr 3 bb 4 sub")


def _no_table(*_args, **_kwargs):
    raise AssertionError("the retreat-below table was built")


@pytest.mark.slow
def test_the_server_stops_the_table_at_its_time_limit(monkeypatch):
    from battlecalc.web.server import Engine, TooMuchWork

    engine = Engine(workers=1, time_limit=0.3)
    try:
        started = time.perf_counter()
        with pytest.raises(TooMuchWork, match=(
                r"stopped at the server's time limit of 0\.3 s after [\d,]+ of 628,425 "
                r"retreat-below table")):
            engine._simulate({**BIG_TABLE, "retreat_below": 0.5, "method": "mc", "trials": 1000,
                              "seed": 1})
        assert time.perf_counter() - started < 10  # the whole table: 18-40 s
        # method=exact, where auto takes Monte Carlo: refused before the table is built
        monkeypatch.setattr(solver, "fill_win_values", _no_table)
        with pytest.raises(TooMuchWork, match="battle too large to solve exactly on this server"):
            engine._simulate({**BIG_TABLE, "retreat_below": 0.5, "method": "exact"})
    finally:
        engine.close()


@pytest.mark.slow
def test_the_server_stops_formula_monte_carlo_at_its_time_limit():
    from battlecalc.web.server import Engine, TooMuchWork

    engine = Engine(workers=1, time_limit=0.5)
    try:
        started = time.perf_counter()
        # 300 exchanges a trial: 200,000 trials take 2-5 s on two cores, a call of one chunk
        # a thread about 0.3 s (1000 army a side, 1000 exchanges: a call of about 1 s, the
        # whole run 20-40 s, and as stopped; the stop costs the calls in flight)
        with pytest.raises(TooMuchWork, match=r"time limit of 0\.5 s after [\d,]+ of 200,000 "
                                              r"trials"):
            engine._simulate(dict(rules="formula", attacker="300 army",
                                  defender="300 army", exchanges=300, method="mc",
                                  trials=200_000, seed=1))
        assert time.perf_counter() - started < 12
        # a formula battle within the limit still runs
        data = engine.compute(dict(rules="formula", attacker="3 army", defender="2 army",
                                   method="exact"), False)
        assert data["attacker_win"] == pytest.approx(
            battlecalc.simulate(rules="formula", attacker="3 army", defender="2 army",
                                method="exact").attacker_win, abs=1e-15)
    finally:
        engine.close()


# ---------------------------------------------------------------------------------------------
# Issue 29, item 2: the API answers only what the page itself sends (its header), so that a page
# of another origin cannot make the server work (the browser test sends from one).


# ---------------------------------------------------------------------------------------------
# Issue 29, item 4: an uploaded save is read in a child process with a deadline, stopped when
# its client goes, a few at once, beyond a bound refused; the battle pool never waits for one.
# These run a server in a child process under a memory limit (a regression would read the
# uploads in the server itself: 300 MB each).


