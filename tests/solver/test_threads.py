"""The engine's own machinery: kernels that are plain Python until compiled, numba's cache
when no folder is writable, the compiling notice, the faster method, bounded work, and the
engine's threads (results the same on 1 and 3 threads, whatever the machine's cores)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from cli_helpers import assert_usage_error, invoke

import battlecalc
from battlecalc import api
from battlecalc.kernels import exact, jit


@pytest.mark.slow
def test_a_small_exact_solve_loads_no_numba():
    # a fresh interpreter: the first README example solves in plain Python
    code = ("import sys, battlecalc\n"
            "r = battlecalc.simulate(rules='1942-2e', attacker='6 inf, 2 art, 2 tank, 2 ftr',"
            " defender='8 inf 1 tank 1 aa')\n"
            "print(r.method, round(r.attacker_win, 12), 'numba' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    compiled = battlecalc.simulate(rules="1942-2e", attacker="6 inf, 2 art, 2 tank, 2 ftr",
                                   defender="8 inf 1 tank 1 aa", method="exact")
    assert out[0] == "exact" and out[2] == "False"
    assert float(out[1]) == pytest.approx(compiled.attacker_win, abs=1e-12)


def test_unwritable_cache_falls_back_to_a_temporary_folder(monkeypatch):
    import numba

    numba.njit(lambda x: x)(1)  # numba's first compile loads more of numba, which calls njit
    real = numba.njit
    calls = []

    def njit(*args, **options):
        calls.append(numba.config.CACHE_DIR)
        if options.get("cache") and len(calls) == 1:
            raise RuntimeError("cannot cache function 'f': no locator available for file")
        return real(*args, **options)

    monkeypatch.setattr(numba, "njit", njit)
    monkeypatch.setattr(numba.config, "CACHE_DIR", numba.config.CACHE_DIR)

    def double(x):
        return 2 * x

    dispatcher = jit._jit(numba, double, {"inline": "never", "nogil": False})
    assert dispatcher(21) == 42
    assert len(calls) == 2 and "battlecalc-numba" in numba.config.CACHE_DIR


def test_compiling_notice_only_when_the_cache_is_cold(monkeypatch):
    jit.compiled()
    calls = []
    monkeypatch.setattr(jit, "cache_is_cold", lambda dispatcher: True)
    battlecalc.simulate(rules="revised", attacker="2 inf", defender="2 inf", method="mc",
                        trials=100, seed=1, progress=lambda *args: calls.append(args))
    assert calls[0] == (0, 0, "compiling kernels (first run only)")
    calls.clear()
    monkeypatch.setattr(jit, "cache_is_cold", lambda dispatcher: False)
    battlecalc.simulate(rules="revised", attacker="2 inf", defender="2 inf", method="mc",
                        trials=100, seed=1, progress=lambda *args: calls.append(args))
    assert all(what == "trials" for *_, what in calls)


def test_auto_takes_the_faster_method(monkeypatch):
    battle = dict(rules="1942-2e", attacker="10 inf 3 art 3 tank", defender="12 inf 2 tank")
    assert battlecalc.simulate(**battle).method == "exact"
    # few trials: Monte Carlo would be done before the exact solve
    monkeypatch.setattr(api, "MC_RATE", {True: 1e15, False: 1e15})
    assert battlecalc.simulate(**battle, trials=1000, seed=1).method == "mc"


@pytest.mark.parametrize(("battle", "fragment"), [
    (dict(rules="revised", attacker="600 ftr 600 bmb", defender="1 inf 1 aa"),
     "aircraft against AA fire have up to 361,201 outcomes"),
    (dict(rules="1942-2e", attacker="1000 inf 1000 art 1000 tank 1000 ftr 1000 bmb",
          defender="1000 inf 1000 art 1000 tank 1000 ftr 1000 bmb 1000 aa"),
     "tables would hold"),
    (dict(rules="1942-2e", sea=True, attacker="1000 sub 1000 dd 1000 ftr 1000 bb",
          defender="1000 sub 1000 cv 1000 ftr 1000 tt"), "tables would hold"),
])
def test_too_large_battles_are_refused_before_any_table_is_built(battle, fragment):
    with pytest.raises(battlecalc.BattleInputError, match=fragment):
        battlecalc.simulate(**battle, trials=1000, seed=1)


# --- threads: the engine's own pool ---------------------------------------------------------


@pytest.fixture
def threads_restored():
    before = jit.thread_count()
    yield
    battlecalc.set_threads(before)


def _numbers(result) -> tuple:
    data = result.to_dict()
    data.pop("elapsed_s")
    return (data, result.attacker_law.probability.tolist(),
            result.defender_law.probability.tolist())


@pytest.mark.parametrize("battle", [
    dict(rules="1942-2e", attacker="2 sub 1 dd 2 ftr", defender="1 dd 1 cv 1 ftr 1 sub",
         sea=True),  # the general round
    dict(rules="revised", attacker="6 inf 2 art 2 tank 3 ftr 1 bmb", defender="8 inf 1 aa"),
])
def test_monte_carlo_is_the_same_on_one_and_three_threads(battle, threads_restored,
                                                          monkeypatch):
    # the pool has 3 threads even on a one-core machine; 13 chunks of trials do not split
    # evenly over them; calls of one chunk (CALL_SECONDS tiny) against adaptive ones
    from battlecalc.kernels import montecarlo

    battle = dict(battle, method="mc", trials=13 * montecarlo.CHUNK_TRIALS - 5, seed=11)
    battlecalc.set_threads(1)
    one = _numbers(battlecalc.simulate(**battle))
    assert battlecalc.set_threads(3) == battlecalc.thread_count() == 3
    three = _numbers(battlecalc.simulate(**battle))
    assert len(jit._pool["workers"].threads) == 3
    monkeypatch.setattr(montecarlo, "CALL_SECONDS", 1e-9)
    three_small_calls = _numbers(battlecalc.simulate(**battle))
    assert one == three == three_small_calls
    assert _numbers(battlecalc.simulate(**{**battle, "seed": 12})) != one


def test_exact_is_the_same_on_one_and_three_threads(threads_restored, monkeypatch):
    # 55 attacker blocks (AA fire), solved in parallel, one block a thread per call
    battle = dict(rules="revised", attacker="20 inf 6 art 6 tank 10 ftr 4 bmb",
                  defender="30 inf 4 tank 1 aa 4 ftr", method="exact")
    monkeypatch.setattr(exact, "CALL_SECONDS", 1e-9)
    splits = []
    real = jit.threads

    def spy(function, n_items, *args):
        splits.append(n_items)
        return real(function, n_items, *args)

    monkeypatch.setattr(jit, "threads", spy)
    battlecalc.set_threads(1)
    one = _numbers(battlecalc.simulate(**battle))
    assert splits == [1] * 55
    splits.clear()
    battlecalc.set_threads(3)
    three = _numbers(battlecalc.simulate(**battle))
    assert splits == [3] * 18 + [1]
    assert one == three


@pytest.mark.parametrize("count", [0, -1, 1.5, 2.0, "2", True, 1025])
def test_set_threads_refuses_what_is_not_a_thread_count(count, threads_restored):
    with pytest.raises(battlecalc.BattleInputError, match="threads must be a whole number"):
        battlecalc.set_threads(count)


@pytest.mark.parametrize("value", ["abc", "0", "-2", "2.5", "5000"])
def test_a_bad_battlecalc_threads_is_refused(value, monkeypatch, threads_restored):
    monkeypatch.setenv(jit.THREADS_ENV, value)
    with pytest.raises(battlecalc.BattleInputError, match="BATTLECALC_THREADS must be"):
        battlecalc.set_threads(None)
    result = invoke("run", "--rules", "revised", "-a", "1 inf", "-d", "1 inf")
    assert_usage_error(result, f"BATTLECALC_THREADS must be a whole number of threads (1 to "
                               f"1024), got {value!r}")


@pytest.mark.slow
def test_a_bad_battlecalc_threads_is_refused_by_the_first_solve():
    # a fresh process: the count is read when a kernel first runs, here a small exact solve
    code = ("import battlecalc\n"
            "try:\n"
            "    battlecalc.simulate(rules='revised', attacker='1 inf', defender='1 inf')\n"
            "except battlecalc.BattleInputError as exc:\n"
            "    print(exc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ, jit.THREADS_ENV: "many"}).stdout
    assert out == ("BATTLECALC_THREADS must be a whole number of threads (1 to 1024), "
                   "got 'many'\n")


def test_threads_default_to_the_environment_else_the_usable_cores(monkeypatch,
                                                                  threads_restored):
    monkeypatch.setenv(jit.THREADS_ENV, " 3 ")
    assert battlecalc.set_threads(None) == 3
    monkeypatch.delenv(jit.THREADS_ENV)
    assert battlecalc.set_threads(None) == len(os.sched_getaffinity(0))
    assert battlecalc.thread_count() == len(os.sched_getaffinity(0))


def test_the_cli_sets_the_threads(threads_restored):
    result = invoke("run", "--rules", "revised", "-a", "2 inf", "-d", "2 inf", "--method", "mc",
                    "--trials", "1000", "--seed", "1", "--threads", "3")
    assert result.exit_code == 0, result.output
    assert battlecalc.thread_count() == 3
    assert_usage_error(invoke("run", "--rules", "revised", "-a", "1 inf", "-d", "1 inf",
                              "--threads", "0"), "--threads")


def test_resizing_the_pool_ends_the_old_threads(threads_restored):
    import threading
    import time

    battle = dict(rules="revised", attacker="3 inf", defender="3 inf", method="mc",
                  trials=50_000, seed=1)
    battlecalc.set_threads(4)
    battlecalc.simulate(**battle)
    battlecalc.set_threads(2)
    battlecalc.simulate(**battle)
    deadline = time.monotonic() + 10
    while True:
        alive = [t for t in threading.enumerate() if t.name.startswith("battlecalc-kernels-")]
        if len(alive) == 2 or time.monotonic() > deadline:
            break
        time.sleep(0.01)
    assert len(alive) == 2


def test_an_error_in_one_range_reaches_the_caller_and_the_pool_goes_on(threads_restored):
    jit.compiled()  # compiled: the ranges run on the pool, even one
    battlecalc.set_threads(3)

    def fill(first, last, out):
        if first == 0:
            raise ZeroDivisionError("range 0")
        out[first:last] = 1.0

    with pytest.raises(ZeroDivisionError, match="range 0"):
        jit.threads(fill, 12, np.zeros(12))
    out = np.zeros(12)
    jit.threads(lambda first, last, out: out.__setitem__(slice(first, last), 2.0), 12, out)
    assert (out == 2.0).all()


@pytest.mark.slow
def test_numba_thread_pool_is_never_started():
    # numba.get_num_threads() would start numba's OpenMP/workqueue pool; no kernel uses it
    code = ("import battlecalc, numba\n"
            "battlecalc.set_threads(2)\n"
            "battlecalc.simulate(rules='revised', attacker='3 inf 1 ftr', defender='3 inf 1 aa',"
            " method='mc', trials=100000, seed=1)\n"
            "battlecalc.simulate(rules='revised', attacker='20 inf 6 art 6 tank 10 ftr 4 bmb',"
            " defender='30 inf 4 tank 1 aa 4 ftr', method='exact')\n"
            "try:\n"
            "    print(numba.threading_layer())\n"
            "except ValueError:\n"
            "    print('not started')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out == "not started\n"


@pytest.mark.slow
def test_compiling_from_several_threads_at_once_compiles_once():
    # four first requests at once: one compiles and rebinds, the others wait for it
    code = ("import threading, collections\n"
            "from battlecalc.kernels import jit, exact\n"
            "calls = collections.Counter()\n"
            "real = jit._jit\n"
            "def counting(numba, func, options):\n"
            "    calls[func.__module__, func.__qualname__] += 1\n"
            "    return real(numba, func, options)\n"
            "jit._jit = counting\n"
            "barrier = threading.Barrier(4)\n"
            "def first_request():\n"
            "    barrier.wait()\n"
            "    jit.compiled()\n"
            "    assert jit.is_compiled() and hasattr(exact._solve_blocks, 'py_func')\n"
            "threads = [threading.Thread(target=first_request) for _ in range(4)]\n"
            "[t.start() for t in threads]\n"
            "[t.join() for t in threads]\n"
            "print(len(calls), max(calls.values()))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert int(out[0]) > 40 and out[1] == "1"


@pytest.mark.slow
def test_a_forked_child_starts_a_pool_of_its_own():
    # the parent's pool threads do not exist in a forked child: it must not wait for them
    code = ("import os, battlecalc\n"
            "battlecalc.set_threads(2)\n"
            "battle = dict(rules='revised', attacker='3 inf', defender='3 inf', method='mc',"
            " trials=100000, seed=1)\n"
            "parent = battlecalc.simulate(**battle).attacker_win\n"
            "pid = os.fork()\n"
            "if pid == 0:\n"
            "    os._exit(0 if battlecalc.simulate(**battle).attacker_win == parent else 1)\n"
            "print(os.waitpid(pid, 0)[1])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120).stdout
    assert out == "0\n"


AMPHIBIOUS_WITH_DEFENDING_AIR = dict(
    rules="1942-2e", attacker="2 inf 1 tank", landing="3 inf 1 art", bombard="1 bb 1 ca",
    defender="5 inf 1 tank 1 aa 2 ftr")


def test_bombardment_needs_no_aircraft_category_when_ground_units_are_lost_first(monkeypatch):
    # the defender loses AAA and infantry before its fighters, so the two bombardment hits
    # never reach them: the fast path (no aircraft category) must give the categorised answer
    from battlecalc import compile as compile_module

    fast = compile_module.compile_battle(api.make_battle(**AMPHIBIOUS_WITH_DEFENDING_AIR))
    assert fast.rules[compile_module.RU_SIMPLE] == 1
    plain = battlecalc.simulate(**AMPHIBIOUS_WITH_DEFENDING_AIR, method="exact")
    monkeypatch.setattr(compile_module, "_ground_first", lambda *args: False)
    api.forget_compiled()  # compiled again, under the patch
    categorised = battlecalc.simulate(**AMPHIBIOUS_WITH_DEFENDING_AIR, method="exact")
    for key in ("attacker_win", "defender_win", "draw", "takes_territory", "attacker_ipc_loss",
                "defender_ipc_loss", "mean_rounds"):
        assert getattr(plain, key) == pytest.approx(getattr(categorised, key), abs=1e-12), key
    assert plain.defender_survivors == pytest.approx(categorised.defender_survivors, abs=1e-12)


def test_bombardment_within_reach_of_aircraft_keeps_them_apart_in_monte_carlo():
    # fighters first in the defender's order: bombardment (2 hits) may not take them, so the
    # aircraft are a category of their own; Monte Carlo within 4 standard errors of exact
    battle = dict(AMPHIBIOUS_WITH_DEFENDING_AIR, defender_ool="fighter")
    from battlecalc import compile as compile_module

    compiled = compile_module.compile_battle(api.make_battle(**battle))
    assert compiled.rules[compile_module.RU_SIMPLE] == 0
    exact_result = battlecalc.simulate(**battle, method="exact")
    mc = battlecalc.simulate(**battle, method="mc", trials=200_000, seed=5)
    for key in ("attacker_win", "defender_win", "takes_territory"):
        assert abs(getattr(mc, key) - getattr(exact_result, key)) <= 4 * mc.stderr[key], key
    # the fighters left are 0..2: their standard deviation is at most 1
    fighters = exact_result.defender_survivors["fighter"]
    assert abs(mc.defender_survivors["fighter"] - fighters) <= 4 / 200_000 ** 0.5
