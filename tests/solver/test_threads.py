"""The engine's threads (solver.threads): one pool of its own, sized by set_threads,
--threads or BATTLECALC_THREADS (refused when it is not a thread count), resized in place; the
same answers on 1 and 3 threads whatever the machine's cores, the same Monte Carlo counts
whatever the size of the kernel calls; an error in one range reaching the caller; numba's own
pool never started; a forked child with a pool of its own."""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pytest
from helpers import assert_usage_error

import battlecalc
from battlecalc.kernels import jit
from battlecalc.solver import montecarlo
from battlecalc.solver import threads as pool


@pytest.fixture
def threads_restored():
    before = pool.thread_count()
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
def test_monte_carlo_is_the_same_on_one_and_three_threads(battle, threads_restored, plan_of):
    # the pool has 3 threads even on a one-core machine; 13 chunks of trials do not split
    # evenly over them; calls of one chunk (Limits.call_seconds tiny) against adaptive ones
    battle = dict(battle, method="mc", trials=13 * montecarlo.CHUNK_TRIALS - 5, seed=11)
    battlecalc.set_threads(1)
    one = _numbers(battlecalc.simulate(**battle))
    assert battlecalc.set_threads(3) == battlecalc.thread_count() == 3
    three = _numbers(battlecalc.simulate(**battle))
    assert len(pool._pool["workers"].threads) == 3
    three_small_calls = _numbers(plan_of(battle, call_seconds=1e-9).result())
    assert one == three == three_small_calls
    assert _numbers(battlecalc.simulate(**{**battle, "seed": 12})) != one


def test_exact_is_the_same_on_one_and_three_threads(threads_restored, plan_of, monkeypatch):
    # 55 attacker blocks (AA fire), solved in parallel, one block a thread per call
    battle = dict(rules="revised", attacker="20 inf 6 art 6 tank 10 ftr 4 bmb",
                  defender="30 inf 4 tank 1 aa 4 ftr", method="exact")
    splits = []
    real = pool.threads

    def spy(function, n_items, *args, **kwargs):
        splits.append(n_items)
        return real(function, n_items, *args, **kwargs)

    monkeypatch.setattr(pool, "threads", spy)
    jit.compiled()  # (blocks on threads: compiled kernels)
    battlecalc.set_threads(1)
    planned = plan_of(battle, call_seconds=1e-9)
    assert planned.plan.per_block_rows and not planned.plan.merge_blocks
    one = _numbers(planned.result())
    assert splits == [1] * 55
    splits.clear()
    battlecalc.set_threads(3)
    three = _numbers(plan_of(battle, call_seconds=1e-9).result())
    assert splits == [3] * 18 + [1]
    assert one == three


@pytest.mark.parametrize("count", [0, -1, 1.5, 2.0, "2", True, 1025])
def test_set_threads_refuses_what_is_not_a_thread_count(count, threads_restored):
    with pytest.raises(battlecalc.BattleInputError, match="threads must be a whole number"):
        battlecalc.set_threads(count)


@pytest.mark.parametrize("value", ["abc", "0", "-2", "2.5", "5000"])
def test_a_bad_battlecalc_threads_is_refused(value, monkeypatch, threads_restored, invoke):
    monkeypatch.setenv(pool.THREADS_ENV, value)
    with pytest.raises(battlecalc.BattleInputError, match="BATTLECALC_THREADS must be"):
        battlecalc.set_threads(None)
    result = invoke("run", "--rules", "revised", "-a", "1 inf", "-d", "1 inf")
    assert_usage_error(result, f"BATTLECALC_THREADS must be a whole number of threads (1 to "
                               f"1024), got {value!r}")


@pytest.mark.fresh("threads_env_refused_by_the_first_solve")
def test_a_bad_battlecalc_threads_is_refused_by_the_first_solve(fresh):
    # a fresh process: the count is read when a kernel first runs, here a small exact solve
    assert fresh == ("BATTLECALC_THREADS must be a whole number of threads (1 to 1024), "
                     "got 'many'")


def test_threads_default_to_the_environment_else_the_usable_cores(monkeypatch,
                                                                  threads_restored):
    monkeypatch.setenv(pool.THREADS_ENV, " 3 ")
    assert battlecalc.set_threads(None) == 3
    monkeypatch.delenv(pool.THREADS_ENV)
    assert battlecalc.set_threads(None) == len(os.sched_getaffinity(0))
    assert battlecalc.thread_count() == len(os.sched_getaffinity(0))


def test_the_cli_sets_the_threads(threads_restored, invoke):
    result = invoke("run", "--rules", "revised", "-a", "2 inf", "-d", "2 inf", "--method", "mc",
                    "--trials", "1000", "--seed", "1", "--threads", "3")
    assert result.exit_code == 0, result.output
    assert battlecalc.thread_count() == 3
    assert_usage_error(invoke("run", "--rules", "revised", "-a", "1 inf", "-d", "1 inf",
                              "--threads", "0"), "--threads")


def test_resizing_the_pool_ends_the_old_threads(threads_restored):
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
        pool.threads(fill, 12, np.zeros(12))
    out = np.zeros(12)
    pool.threads(lambda first, last, out: out.__setitem__(slice(first, last), 2.0), 12, out)
    assert (out == 2.0).all()


@pytest.mark.fresh("numba_thread_pool_never_started")
def test_numba_thread_pool_is_never_started(fresh):
    # numba.get_num_threads() would start numba's OpenMP/workqueue pool; no kernel uses it
    # (a fresh process: Monte Carlo and a parallel exact solve on 2 threads)
    assert fresh == "not started"


@pytest.mark.fresh("forked_child_has_a_pool_of_its_own")
def test_a_forked_child_starts_a_pool_of_its_own(fresh):
    # the parent's pool threads do not exist in a forked child: it must not wait for them
    assert fresh == 0
