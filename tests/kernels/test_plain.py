"""BATTLECALC_PLAIN_KERNELS=1 runs every kernel as plain Python (nothing compiled, numba not
imported): small battles of each kind through every kernel give the compiled answers, exact
ones to 1e-12, Monte Carlo ones identical at the same seed."""

from __future__ import annotations

import importlib
import json
import math
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import battlecalc
from battlecalc.kernels import jit

TESTS = os.path.dirname(os.path.abspath(__file__))
TRIALS = 3000  # plain Python draws about 20,000 trials a second

# each battle runs exactly and by Monte Carlo; together they reach every kernel (checked): the
# land fast path and the general round, sea rules (submarines, submerging, lone transports
# that fire once and retreat), amphibious assaults with bombardment and a partial retreat (the
# stayers' blocks), AA fire, low luck, the law of rounds, --retreat-below's win-value sweep,
# and the formula model's kernels
BATTLES = {
    "land": dict(rules="revised", attacker="3 inf 1 art 1 tank 1 ftr", defender="3 inf 1 aa",
                 rounds_distribution=True),
    "land, retreat below": dict(rules="1942-2e", attacker="3 inf 2 tank", defender="4 inf",
                                retreat_below=0.4),
    "sea": dict(rules="1942-2e", attacker="2 sub 1 dd 1 ftr", defender="1 dd 1 cv 1 ftr 1 sub",
                sea=True, defender_submerge="when-only-subs-left"),
    "sea, general round": dict(rules="revised", attacker="2 sub 1 bb", defender="1 dd 1 tt",
                               sea=True, attacker_submerge="first-chance"),
    "sea, lone transports": dict(rules="revised", attacker="2 tt", defender="1 dd", sea=True),
    "amphibious": dict(rules="1942-2e", attacker="1 inf 1 tank 1 ftr", landing="2 inf 1 art",
                       bombard="1 bb", defender="3 inf 1 aa 1 ftr", retreat_after=2),
    "low luck, land": dict(rules="revised", attacker="3 inf 2 art 1 bmb", defender="4 inf 1 aa",
                           dice="low_luck"),
    "low luck, sea": dict(rules="1942-2e", attacker="1 sub 2 dd", defender="1 cv 1 ftr 1 tt",
                          sea=True, dice="low_luck"),
    "formula": dict(rules="formula", attacker="3 army, 1 air", defender="3 army"),
    # (solved in a compact mass table, as a big sea battle is: exact.COMPACT_PAIRS 0)
    "sea, compact table": dict(rules="1942-2e", attacker="2 sub 1 ftr 1 dd",
                               defender="2 sub 1 ftr 1 cv", sea=True, rounds_distribution=True),
}
COMPACT = {"sea, compact table"}


def solve(name: str, method: str):
    """simulate of the battle BATTLES[name] by `method` (the compact table where COMPACT)."""
    from battlecalc.kernels import exact

    dense_from = exact.COMPACT_PAIRS
    exact.COMPACT_PAIRS = 0 if name in COMPACT else dense_from
    try:
        return battlecalc.simulate(**BATTLES[name], method=method, trials=TRIALS, seed=17)
    finally:
        exact.COMPACT_PAIRS = dense_from


def summary(result) -> dict:
    """Every number of a result: its JSON object (less the time taken) and, for the dice
    model, its laws."""
    data = result.to_dict()
    data.pop("elapsed_s")
    laws = {}
    if hasattr(result, "attacker_law"):
        laws["attacker"] = result.attacker_law.probability.tolist()
        laws["defender"] = result.defender_law.probability.tolist()
        for name in ("swing_law", "rounds_law"):
            law = getattr(result, name)
            if law is not None:
                laws[name] = [np.asarray(part, dtype=float).tolist() for part in law]
    return {"data": data, "laws": laws}


def run_all() -> dict:
    return {f"{name}, {method}": summary(solve(name, method))
            for name in BATTLES for method in ("exact", "mc")}


def kernels_not_run(work) -> list[str]:
    """The kernels (jit.kernel) that work() does not call, as module.name (plain Python)."""
    kernels = {}
    for module in map(importlib.import_module, jit.KERNEL_MODULES):
        for name, obj in vars(module).items():
            if hasattr(obj, jit._MARK) and obj.__module__ == module.__name__:
                kernels[obj.__code__] = f"{module.__name__.rsplit('.', 1)[1]}.{name}"
    called = set()

    def note(frame, event, arg):
        if event == "call" and frame.f_code in kernels:
            called.add(kernels[frame.f_code])

    sys.setprofile(note)
    threading.setprofile(note)  # kernels on the pool's threads
    try:
        work()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    return sorted(set(kernels.values()) - called)


def _close(plain, compiled, tolerance: float, where: str) -> None:
    if isinstance(compiled, dict):
        assert plain.keys() == compiled.keys(), where
        for key in compiled:
            _close(plain[key], compiled[key], tolerance, f"{where}.{key}")
    elif isinstance(compiled, list):
        assert len(plain) == len(compiled), where
        for i, (p, c) in enumerate(zip(plain, compiled, strict=True)):
            _close(p, c, tolerance, f"{where}[{i}]")
    elif isinstance(compiled, float) and not isinstance(plain, str):
        assert math.isclose(plain, compiled, rel_tol=0, abs_tol=tolerance) or plain == compiled, (
            where, plain, compiled)
    else:
        assert plain == compiled, (where, plain, compiled)


@pytest.fixture(scope="module")
def plain_results() -> dict:
    code = ("import json, sys\n"
            f"sys.path.insert(0, {TESTS!r})\n"
            "import test_plain_kernels as t\n"
            "results = {}\n"
            "missed = t.kernels_not_run(lambda: results.update(t.run_all()))\n"
            "assert not missed, f'kernels never run: {missed}'\n"
            "assert 'numba' not in sys.modules, 'numba was imported'\n"
            "print(json.dumps(results))\n")
    env = {**os.environ, jit.PLAIN_ENV: "1"}
    done = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True,
                          text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.slow
@pytest.mark.parametrize("name", BATTLES)
@pytest.mark.parametrize("method", ["exact", "mc"])
def test_plain_python_kernels_give_the_compiled_answers(plain_results, name, method):
    jit.compiled()
    assert jit.is_compiled()
    compiled = summary(solve(name, method))
    compiled = json.loads(json.dumps(compiled))  # the same types as the subprocess's JSON
    tolerance = 1e-12 if method == "exact" else 0.0  # Monte Carlo: counts, identical
    _close(plain_results[f"{name}, {method}"], compiled, tolerance, f"{name}, {method}")


def test_the_switch_keeps_kernels_plain_even_when_asked_to_compile():
    code = ("import sys\n"
            "from battlecalc.kernels import jit, exact\n"
            "jit.compiled()\n"
            "print(jit.is_compiled(), 'numba' in sys.modules,\n"
            "      type(exact._solve_blocks).__name__)\n")
    env = {**os.environ, jit.PLAIN_ENV: "1"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True).stdout.split()
    assert out == ["False", "False", "function"]
