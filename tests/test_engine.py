"""The engine's own machinery: kernels that are plain Python until compiled, numba's cache
when no folder is writable, the compiling notice, the faster method, bounded work."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import battlecalc
from battlecalc import api
from battlecalc.kernels import exact, jit


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


def test_plain_python_and_compiled_kernels_give_the_same_answer(monkeypatch):
    battle = dict(rules="revised", attacker="2 sub 1 dd 1 ftr", defender="1 dd 1 cv 1 ftr",
                  sea=True, method="exact")
    jit.compiled()
    compiled = battlecalc.simulate(**battle)
    from battlecalc.api import make_battle
    from battlecalc.compile import compile_battle

    # the same sweep run by the Python functions behind the compiled kernels
    plain = {name: getattr(exact, name).py_func for name in
             ("_solve_blocks", "_solve_block", "_enter", "_play", "_transition", "_fire",
              "_spread_walk", "_finish", "_withdraw_or_finish", "_out", "_scratch", "_add",
              "_clear", "_block_size", "_low_luck_chance")}
    for name, func in plain.items():
        monkeypatch.setattr(exact, name, func)
    raw = exact.run_exact(compile_battle(make_battle(**{k: v for k, v in battle.items()
                                                        if k != "method"})))
    assert raw["outcomes"][0] == pytest.approx(compiled.attacker_win, abs=1e-13)
    assert raw["mean_rounds"] == pytest.approx(compiled.mean_rounds, abs=1e-13)


def test_unwritable_cache_falls_back_to_a_temporary_folder(monkeypatch):
    import numba

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


def test_monte_carlo_threads_do_not_change_the_numbers():
    import numba

    battle = dict(rules="1942-2e", attacker="2 sub 1 dd 2 ftr", defender="1 dd 1 cv 1 ftr 1 sub",
                  sea=True, method="mc", trials=100_000, seed=11)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = battlecalc.simulate(**battle)
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        many = battlecalc.simulate(**battle)
    finally:
        numba.set_num_threads(before)
    assert one.to_dict()["attacker_win"] == many.to_dict()["attacker_win"]
    assert np.array_equal(one.attacker_law.probability, many.attacker_law.probability)


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
