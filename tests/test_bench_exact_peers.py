"""benchmarks/bench_exact_peers.py's own helpers (no aacalc2 needed): the order of losses it
hands aacalc2 is battlecalc's default one, the battery is fixed by its seed, and a row counts
as differing only when aacalc2's unpruned answer differs too."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from battlecalc import load_rules
from battlecalc.orders import default_loss_order

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_exact_peers.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_exact_peers", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("role", ["attack", "defense"])
@pytest.mark.parametrize("domain", ["land", "sea"])
def test_aacalc2_gets_battlecalcs_default_order(bench, role, domain):
    units = load_rules("1942-2e").units
    order = [name for name in default_loss_order(units, role)
             if name in bench.CHEAPEST[domain, role]]
    assert bench.CHEAPEST[domain, role] == order


def test_every_battery_unit_has_an_aacalc2_id_and_order(bench):
    for _, attacker, defender, sea in bench.battery(7, 30, 30):
        battle = bench.aacalc2_battle(attacker, defender, sea, 3)
        assert set(battle["attack"]) <= set(battle["att_ool"])
        assert set(battle["defense"]) <= set(battle["def_ool"])
        assert 1 <= sum(attacker.values()) <= 40
        assert 1 <= sum(n for unit, n in defender.items() if unit != "aa") <= 40
        assert defender.get("aa", 0) <= 3 and not (sea and "aa" in defender)


def test_battery_is_fixed_by_its_seed(bench):
    assert bench.battery(11, 5, 5) == bench.battery(11, 5, 5)
    assert bench.battery(11, 5, 5) != bench.battery(12, 5, 5)


def test_a_unit_without_an_order_is_refused(bench):
    with pytest.raises(ValueError, match="damaged_battleship"):
        bench.aacalc2_order({"damaged_battleship": 1}, True, "attack")


def row(max_diff, unpruned=None, known=None):
    return {"max_diff": max_diff, "max_diff_unpruned": unpruned, "known_difference": known}


def test_differs_only_when_the_unpruned_answer_differs(bench):
    assert not bench.differs(row(5e-10))
    assert not bench.differs(row(4e-9, unpruned=2e-14))  # aacalc2's pruning
    assert bench.differs(row(4e-9, unpruned=3e-9))
    assert bench.differs(row(4e-9))  # not rechecked: counts
    assert not bench.differs(row(0.17, unpruned=0.17, known="aaa-only"))


def test_without_aacalc2_the_script_stops_with_a_usage_error():
    env = {k: v for k, v in os.environ.items() if k != "AACALC2_DIR"}
    done = subprocess.run([sys.executable, str(SCRIPT), "--quick"], env=env,
                          capture_output=True, text=True)
    assert done.returncode == 2
    assert "AACALC2_DIR" in done.stderr
