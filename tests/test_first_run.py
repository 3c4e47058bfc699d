"""What a new user waits for: `plan` says what it is doing, `serve` answers at once.

A plan reports the compiling notice of its battles and its progress over the candidates it
searches (monotone, to completion); the web server warms its kernels up in the background and
answers the page, /api/spec and battles meanwhile.
"""

from __future__ import annotations

import threading

import pytest
from cli_helpers import invoke

import battlecalc
from battlecalc import cli as cli_module
from battlecalc import planner

# the planner module's doctest: 2 infantry against 4 inf 2 tank, goal takes_territory >= 0.8
SMALL_PLAN = dict(rules="revised", defender="2 inf", pool="4 inf 2 tank",
                  goal="takes_territory>=0.8", method="exact")


class Recorder:
    def __init__(self):
        self.calls = []

    def __call__(self, done, total, what="trials"):
        self.calls.append((done, total, what))

    def search(self):
        return [(done, total) for done, total, what in self.calls
                if what == planner.PROGRESS_STEP]


def assert_monotone_to_completion(steps, total):
    assert steps, "no progress reported"
    assert {t for _, t in steps} == {total}
    dones = [d for d, _ in steps]
    assert dones == sorted(dones) and 0 <= dones[0]
    assert steps[-1] == (total, total)


@pytest.mark.parametrize("options, total", [
    # cost: the candidates are the compositions of the pool without its line (infantry, the
    # most copies): 0, 1 or 2 tanks
    ({}, 3),
    # --minimize loss: every force of the pool, (4 + 1) x (2 + 1)
    ({"objective": "loss"}, 15),
    # --retreat-below makes the search exhaustive: every force again
    ({"retreat_below": 0.3}, 15),
])
def test_plan_reports_monotone_progress_to_completion(options, total):
    progress = Recorder()
    with_progress = battlecalc.plan(**SMALL_PLAN, **options, progress=progress)
    assert_monotone_to_completion(progress.search(), total)
    without = battlecalc.plan(**SMALL_PLAN, **options)
    assert ([(p.addition, p.cost) for p in with_progress.plans]
            == [(p.addition, p.cost) for p in without.plans])
    if not options:  # the module's doctest answer
        assert [(battlecalc.format_army(p.addition), p.cost) for p in with_progress.plans] == [
            ("2 infantry, 1 tank", 11), ("1 infantry, 2 tank", 13)]


def test_plan_passes_on_the_compiling_notice_and_nothing_else_of_its_battles(monkeypatch):
    real = planner.simulate

    def stub(*args, progress=None, **kwargs):
        progress(0, 0, "compiling kernels (first run only)")
        progress(0, 0, "exact solve")
        progress(5, 10, "trials")
        progress(5, 10)
        return real(*args, **kwargs)

    monkeypatch.setattr(planner, "simulate", stub)
    progress = Recorder()
    result = battlecalc.plan(**SMALL_PLAN, progress=progress)
    assert result.solves >= 1
    other = [c for c in progress.calls if c[2] != planner.PROGRESS_STEP]
    assert other == [(0, 0, "compiling kernels (first run only)")] * result.solves
    assert_monotone_to_completion(progress.search(), 3)


def test_plan_command_draws_its_progress_on_a_terminal(monkeypatch):
    monkeypatch.setattr(cli_module, "_stderr_is_terminal", lambda: True)
    monkeypatch.setattr(cli_module, "PROGRESS_DELAY_S", 0.0)
    monkeypatch.setattr(cli_module._Progress, "REDRAW_S", 0.0)
    result = invoke("plan", "--rules", "revised", "-d", "2 inf", "--pool", "4 inf 2 tank",
                    "--goal", "takes_territory>=0.8", "--method", "exact")
    assert result.exit_code == 0, result.output
    assert "1         11  2 infantry, 1 tank" in result.stdout
    assert "\rplan search [" in result.stderr
    assert "/3\x1b[K" in result.stderr
    assert result.stderr.endswith("\r\x1b[K")  # the line is cleared at the end


def test_plan_command_prints_no_progress_off_a_terminal():
    result = invoke("plan", "--rules", "revised", "-d", "2 inf", "--pool", "4 inf 2 tank",
                    "--goal", "takes_territory>=0.8", "--method", "exact")
    assert result.exit_code == 0, result.output
    assert result.stderr == ""


# --- the web server answers while the kernels warm up ---------------------------------------


def test_server_answers_while_the_warm_up_is_still_running():
    pytest.importorskip("starlette")
    pytest.importorskip("uvicorn")
    from webserver import request, run_query, running_server

    from battlecalc.web.server import WARM_UP, Engine

    release, reached = threading.Event(), threading.Event()
    seen = []

    def hook(battle):
        seen.append(battle)
        reached.set()
        assert release.wait(120), "the test never released the warm-up"

    engine = Engine(warm_up_battles=WARM_UP[:2], warm_up_hook=hook)
    try:
        with running_server(engine, warm=True, timeout=60) as base:
            assert reached.wait(60), "the warm-up did not start"
            assert not engine.warm.is_set()  # held in the hook, before its first battle
            status, headers, body = request(base, "GET", "/")
            assert status == 200 and b"<html" in body.lower()
            status, _, body = request(base, "GET", "/api/spec")
            assert status == 200 and b'"revised"' in body
            # a battle meanwhile compiles what it needs itself: 1 infantry against 1 in
            # Revised, won (1/6)(4/6) / (1 - (5/6)(4/6)) = 1/4 of the time
            status, data = run_query(base, rules="revised", attacker="1 inf",
                                     defender="1 inf", method="exact")
            assert status == 200, data
            assert data["attacker_win"] == pytest.approx(0.25, abs=1e-12)
            assert not engine.warm.is_set()
            release.set()
            assert engine.warm.wait(120), "the warm-up did not finish"
            assert seen == WARM_UP[:2]
            assert engine.warm_up_s is not None and engine.warm_up_problems == []
            status, data = run_query(base, rules="revised", attacker="1 inf",
                                     defender="1 inf", method="exact")
            assert status == 200 and data["attacker_win"] == pytest.approx(0.25, abs=1e-12)
    finally:
        release.set()
