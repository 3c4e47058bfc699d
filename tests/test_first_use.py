"""First use (issue 28, goal 1): what a process compiles, and what it answers without
compiling.

Each Monte Carlo path compiles only its own entry kernel, and a battle without a retreat policy
none of the retreat code; a side's alias tables are built by the plain Python kernel where they
are small, the same tables the compiled kernel builds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from battlecalc.api import make_battle
from battlecalc.compile import compile_battle
from battlecalc.kernels import jit, montecarlo
from battlecalc.solver import tables

SIDES = {
    "readme mc": dict(rules="revised", attacker="3inf 1art 2arm 1bmb", defender="4inf 1aa"),
    "big land": dict(rules="1942-2e", attacker="30 inf 10 art 10 tank 8 ftr 4 bmb",
                     defender="40 inf 5 art 5 tank 6 ftr"),
    "mid sea": dict(rules="1942-2e", attacker="4 sub 2 dd 1 ca 2 ftr 1 bmb 1 bb",
                    defender="1 bb 2 dd 1 ca 1 cv 2 ftr 2 sub 2 tt", sea=True),
    "low luck": dict(rules="revised", attacker="3 inf 2 art 1 bmb", defender="4 inf 1 aa",
                     dice="low_luck"),
}


@pytest.mark.parametrize("name", SIDES)
def test_plain_alias_tables_are_the_compiled_ones(name):
    jit.compiled()
    compiled = compile_battle(make_battle(**SIDES[name]))
    for side in (compiled.attacker, compiled.defender):
        assert side.pmf.size <= tables.PLAIN_ALIAS_CELLS  # (built plain by the sampler)
        thresh, alias = montecarlo.alias_tables(side.pmf, side.rows)
        plain_thresh, plain_alias = jit.plain(montecarlo.alias_tables)(side.pmf, side.rows)
        assert plain_thresh.dtype == thresh.dtype and plain_alias.dtype == alias.dtype
        assert np.array_equal(plain_thresh, thresh) and np.array_equal(plain_alias, alias)


COMPILES = textwrap.dedent("""
    import json
    from numba.core import event
    import battlecalc
    from battlecalc.kernels import jit

    with event.install_recorder("numba:compile") as compiles:
        r = battlecalc.simulate(rules="revised", attacker="3inf 1art 2arm 1bmb",
                                defender="4inf 1aa", method="mc", trials=2000, seed=7)
    names = [e.data["dispatcher"].py_func.__name__ for _, e in compiles.buffer
             if e.is_start and jit.in_kernels(e.data["dispatcher"].py_func.__code__.co_filename)]
    print(json.dumps([names, r.attacker_win]))
""")


@pytest.mark.slow
def test_a_land_battle_compiles_the_land_walk_alone(tmp_path):
    """A fresh process with an empty numba cache, the README's Monte Carlo example (land, no
    retreat): the kernels numba compiles are those of the land walk, without the general
    round's trial, the retreat step or the alias tables."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    env.pop(jit.PLAIN_ENV, None)
    done = subprocess.run([sys.executable, "-c", COMPILES], capture_output=True, text=True,
                          env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    names, win = json.loads(done.stdout)
    assert "_simulate_walk_chunks" in names and "_trial_walk" in names
    for other in ("_simulate_chunks", "_chunk", "_trial", "_general_hits", "_retreat_step",
                  "should_retreat", "alias_tables"):
        assert other not in names, names
    assert 0.98 < win < 1.0
