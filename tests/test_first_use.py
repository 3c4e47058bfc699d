"""First use (issue 28, goal 1): what a process compiles, and what it answers without
compiling.

Each Monte Carlo path compiles only its own entry kernel; a side's alias tables are built by
the plain Python kernel where they are small, the same tables the compiled kernel builds.
"""

from __future__ import annotations

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
