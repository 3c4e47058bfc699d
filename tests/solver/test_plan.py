"""Bounded work (issue 16, points 5, 6 and 12's duplicate JSON keys): --retreat-below's table is
sized and estimated before it is built and stops when the progress hook says so; the formula
model refuses an exact solve quickly and runs under the server's time limit."""

from __future__ import annotations

import inspect
import json
import math
import time

import pytest

import battlecalc
from battlecalc import BattleInputError, api, simulate
from battlecalc.compile import compile_battle
from battlecalc.formula import engine as formula_engine
from battlecalc.kernels import exact
from battlecalc.spec import simulate_spec

# sea battles of the general round: 126,000 and 628,425 state pairs
MID = dict(rules="1942-2e", sea=True, attacker="6 sub 6 dd 3 ca 2 bb 4 ftr 1 cv",
           defender="5 dd 3 ca 2 cv 3 ftr 2 bb 3 sub")
BIG = dict(rules="1942-2e", sea=True, attacker="8 sub 8 dd 4 ca 3 bb 6 ftr 2 cv",
           defender="6 dd 4 ca 2 cv 4 ftr 3 bb 4 sub")


def _compiled(**options):
    arguments = {name: p.default for name, p in inspect.signature(simulate).parameters.items()
                 if p.default is not inspect.Parameter.empty}
    arguments.update(options, formula_options={})
    battle, _ = simulate_spec(arguments)
    return compile_battle(battle)


def _no_table(*_args, **_kwargs):
    raise AssertionError("the retreat-below table was built")


# ----------------------------------------------------------------------------- point 5

def test_exact_refusal_counts_the_table_and_comes_before_it(monkeypatch):
    compiled = _compiled(**BIG, retreat_below=0.5)
    solve, table = exact.seconds_estimate(compiled), exact.win_values_seconds(compiled)
    assert solve < api.MAX_EXACT_SECONDS < solve + table  # refused for the table's sake
    monkeypatch.setattr(api, "fill_win_values", _no_table)
    started = time.perf_counter()
    with pytest.raises(BattleInputError, match=f"about {solve + table:.2g} s of work, limit 10 s"):
        simulate(**BIG, retreat_below=0.5, method="exact")
    assert time.perf_counter() - started < 10  # the table takes 18-40 s on two cores


def test_the_table_is_in_the_estimate_auto_and_exact_use(monkeypatch):
    compiled = _compiled(**MID, retreat_below=0.5)
    solve, table = exact.seconds_estimate(compiled), exact.win_values_seconds(compiled)
    assert table > 0 and exact.win_values_seconds(_compiled(**MID)) > 0
    monkeypatch.setattr(api, "MAX_EXACT_SECONDS", solve + table / 2)
    # without --retreat-below the solve alone is under the limit ...
    assert simulate(**MID, method="exact").method == "exact"
    # ... with it, solve + table is over: exact refuses, auto (which would otherwise solve
    # exactly: many trials make Monte Carlo the slower) runs Monte Carlo
    monkeypatch.setattr(api, "fill_win_values", _no_table)
    with pytest.raises(BattleInputError, match="battle too large to solve exactly"):
        simulate(**MID, retreat_below=0.5, method="exact")
    monkeypatch.undo()
    monkeypatch.setattr(api, "MAX_EXACT_SECONDS", solve + table / 2)
    assert simulate(**MID, method="auto", trials=10**8).method == "exact"
    result = simulate(**MID, retreat_below=0.5, method="auto", trials=2000, seed=1)
    assert result.method == "mc"


@pytest.mark.parametrize("method", ["exact", "mc", "auto"])
def test_a_table_over_its_limit_is_refused_before_it_is_built(monkeypatch, method):
    table = exact.win_values_seconds(_compiled(**MID, retreat_below=0.5))
    monkeypatch.setattr(api, "MAX_WIN_VALUE_SECONDS", table / 2)
    monkeypatch.setattr(api, "fill_win_values", _no_table)
    with pytest.raises(BattleInputError, match=(
            rf"--retreat-below needs the exact win probability of every state, and this "
            rf"battle has 126,000 state pairs \(about {table:.2g} s of work; limits "
            rf"4,000,000 pairs, {table / 2:g} s\)")):
        simulate(**MID, retreat_below=0.5, method=method, trials=1000, seed=1)


def test_cli_refuses_a_table_of_minutes_at_once(monkeypatch):
    from click.testing import CliRunner

    from battlecalc.cli import cli

    huge = dict(rules="1942-2e", sea=True, attacker="10 sub 10 dd 5 ca 4 bb 8 ftr 2 cv",
                defender="8 dd 5 ca 2 cv 6 ftr 4 bb 5 sub")
    table = exact.win_values_seconds(_compiled(**huge, retreat_below=0.5))
    assert table > api.MAX_WIN_VALUE_SECONDS  # 2,594,592 pairs: under the pair limit
    monkeypatch.setattr(api, "fill_win_values", _no_table)
    started = time.perf_counter()
    result = CliRunner().invoke(cli, [
        "run", "--rules", "1942-2e", "--sea", "-a", huge["attacker"], "-d", huge["defender"],
        "--retreat-below", "0.5", "--method", "mc", "--trials", "1000"])
    assert result.exit_code == 2
    assert "Error: --retreat-below needs the exact win probability of every state, and this " \
        "battle has 2,594,592 state pairs" in " ".join(result.output.split())
    assert time.perf_counter() - started < 10


def test_the_table_reports_progress_and_stops_when_the_hook_raises():
    calls = []
    simulate(**MID, retreat_below=0.5, method="mc", trials=1000, seed=1,
             progress=lambda done, total, what="trials": calls.append((done, total, what)))
    table = [(done, total) for done, total, what in calls if what == "retreat-below table"]
    assert len(table) >= 5  # about 2 s of work, reported every ~0.1 s of it
    assert table[0] == (0, 126_000) and table[-1] == (126_000, 126_000)
    assert all(a[0] < b[0] for a, b in zip(table, table[1:], strict=False))

    class Stop(Exception):
        pass

    seen = []

    def stop_at_second(done, total, what="trials"):
        if what == "retreat-below table":
            seen.append(done)
            if len(seen) == 2:
                raise Stop

    with pytest.raises(Stop):
        simulate(**MID, retreat_below=0.5, method="mc", trials=1000, seed=1,
                 progress=stop_at_second)
    assert len(seen) == 2 and 0 < seen[1] < 126_000


@pytest.mark.parametrize("battle", [
    dict(rules="1942-2e", sea=True, attacker="2 sub 1 dd", defender="1 dd 1 ca"),
    dict(rules="1942-2e", attacker="1 ftr", landing="3 inf 1 tank", bombard="1 bb",
         defender="4 inf"),
    dict(rules="1942-2e", attacker="4 inf 2 art 2 tank 1 ftr", defender="6 inf 1 aa 1 art"),
    dict(rules="1942-2e", sea=True, attacker="3 sub 3 dd 2 ca 2 ftr",
         defender="3 dd 2 ca 1 cv 2 ftr"),
])
def test_the_table_filled_a_row_at_a_time_equals_one_sweep(monkeypatch, battle):
    monkeypatch.setattr(exact, "WIN_VALUE_CALL_SECONDS", 1e9)  # one kernel call
    whole = simulate(**battle, retreat_below=0.4, method="exact")
    monkeypatch.setattr(exact, "WIN_VALUE_CALL_SECONDS", 1e-12)  # one attacker state a call
    by_rows = simulate(**battle, retreat_below=0.4, method="exact")
    assert whole.retreat > 0  # the policy did something
    rows = [{k: v for k, v in r.flat_row().items() if k != "elapsed_s"} for r in (whole, by_rows)]
    assert rows[0] == rows[1]  # bit for bit


@pytest.mark.slow
def test_the_server_stops_the_table_at_its_time_limit(monkeypatch):
    from battlecalc.web.server import Engine, TooMuchWork

    engine = Engine(workers=1, time_limit=0.3)
    try:
        started = time.perf_counter()
        with pytest.raises(TooMuchWork, match=(
                r"stopped at the server's time limit of 0\.3 s after [\d,]+ of 628,425 "
                r"retreat-below table")):
            engine._simulate({**BIG, "retreat_below": 0.5, "method": "mc", "trials": 1000,
                              "seed": 1})
        assert time.perf_counter() - started < 10  # the whole table: 18-40 s
        # method=exact, where auto takes Monte Carlo: refused before the table is built
        monkeypatch.setattr(api, "fill_win_values", _no_table)
        with pytest.raises(TooMuchWork, match="battle too large to solve exactly on this server"):
            engine._simulate({**BIG, "retreat_below": 0.5, "method": "exact"})
    finally:
        engine.close()


# ----------------------------------------------------------------------------- point 6

FORMULA_BIG = dict(rules="formula", attacker="40 army 10 air", defender="40 army 10 air",
                   exchanges="until-done")


def _no_state(*args, **kwargs):
    raise AssertionError("the exact solver built a state")


def test_formula_exact_refusal_builds_no_state(monkeypatch):
    # decided from the pieces (engine.transition_bound) before the solver starts: 0.9-1.0 ms
    # warm where walking states until 1,000,000 transitions took 0.9-1.1 s (speed is a
    # benchmark's business, not a timed test's)
    monkeypatch.setattr(formula_engine._SideStates, "number", _no_state)
    monkeypatch.setattr(formula_engine, "_solve_exact", _no_state)
    with pytest.raises(BattleInputError, match=r"more than 1,000,000 transitions .*; use "
                                               r"method 'mc' for Monte Carlo"):
        simulate(**FORMULA_BIG, method="exact")


def test_formula_auto_picks_monte_carlo_without_building_states(monkeypatch):
    monkeypatch.setattr(formula_engine._SideStates, "number", _no_state)
    monkeypatch.setattr(formula_engine, "_solve_exact", _no_state)
    trials = 20_000
    r = simulate(**FORMULA_BIG, trials=trials, seed=3)
    assert r.method == "mc" and r.trials == trials
    # equal forces, equal levels, no counter points: the rules are symmetric, so both sides
    # win with the same probability; 4 standard errors of the difference at this sample size
    spread = 4 * math.sqrt((r.attacker_win + r.defender_win) / trials)
    assert abs(r.attacker_win - r.defender_win) <= spread


def test_formula_exact_or_not_is_the_bound_against_the_limit(monkeypatch):
    battle = dict(rules="formula", attacker="6 army", defender="5 army, 1 air",
                  exchanges="until-done")
    bound = formula_engine.transition_bound(formula_engine.make_formula_battle(
        battle["attacker"], battle["defender"], exchanges="until-done"))
    monkeypatch.setattr(formula_engine, "EXACT_TRANSITION_LIMIT", bound)
    assert simulate(**battle, method="exact").method == "exact"
    assert simulate(**battle).method == "exact"
    monkeypatch.setattr(formula_engine, "EXACT_TRANSITION_LIMIT", bound - 1)
    monkeypatch.setattr(formula_engine._SideStates, "number", _no_state)
    with pytest.raises(BattleInputError, match=rf"more than {bound - 1:,} transitions"):
        simulate(**battle, method="exact")
    assert simulate(**battle, trials=1000, seed=1).method == "mc"


def test_formula_monte_carlo_does_not_depend_on_the_call_sizes(monkeypatch):
    options = dict(rules="formula", attacker="30 army 5 air", defender="25 army 8 air",
                   exchanges=40, method="mc", trials=100_000, seed=9)
    reference = simulate(**options).to_dict()
    monkeypatch.setattr(formula_engine, "FIRST_CALL_CHUNKS", 1)
    monkeypatch.setattr(formula_engine, "CALL_SECONDS", 1e-9)  # one chunk a call
    one_by_one = simulate(**options).to_dict()
    for data in (reference, one_by_one):
        data.pop("elapsed_s", None)
        data.pop("timing", None)
    assert json.dumps(one_by_one, sort_keys=True, default=str) == \
        json.dumps(reference, sort_keys=True, default=str)


@pytest.mark.slow
def test_the_server_stops_formula_monte_carlo_at_its_time_limit():
    from battlecalc.web.server import Engine, TooMuchWork

    engine = Engine(workers=1, time_limit=0.5)
    try:
        started = time.perf_counter()
        # 1000 exchanges a trial: 200,000 trials take 20-40 s on two cores
        with pytest.raises(TooMuchWork, match=r"time limit of 0\.5 s after [\d,]+ of 200,000 "
                                              r"trials"):
            engine._simulate(dict(rules="formula", attacker="1000 army",
                                  defender="1000 army", exchanges=1000, method="mc",
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


# ----------------------------------------------------------------------------- point 12 (web)

def test_a_json_body_with_a_key_twice_is_refused():
    pytest.importorskip("starlette")
    pytest.importorskip("uvicorn")
    from webserver import request, running_server

    with running_server() as base:
        body = (b'{"rules": "revised", "attacker": "1 inf", "attacker": "9 inf", '
                b'"defender": "1 inf"}')
        status, _, answer = request(base, "POST", "/api/run", body,
                                    {"Content-Type": "application/json"})
        assert status == 400
        assert json.loads(answer) == {"error": "parameter 'attacker' given more than once"}
        once = b'{"rules": "revised", "attacker": "1 inf", "defender": "1 inf", "method": "exact"}'
        status, _, answer = request(base, "POST", "/api/run", once,
                                    {"Content-Type": "application/json"})
        assert status == 200
        assert json.loads(answer)["attacker_win"] == pytest.approx(0.25, abs=1e-12)
