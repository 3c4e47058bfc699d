"""The round model (kernels.round_model) and the Monte Carlo kernel's tables against
independent references: the alias tables (kernels.montecarlo.alias_tables, kept with a side by
solver.tables.sampler) reproduce each hit law, and the capped greedy of round_model.assign
picks the casualties that the greedy with Hall's condition over every set of categories
picks."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from battlecalc.api import make_battle
from battlecalc.compile import compile_battle
from battlecalc.kernels import jit, round_model
from battlecalc.kernels.layout import (
    NO_RANK,
    R_RANK,
    R_TOP,
    S_AIR,
    S_OTHER,
    S_ROW_A,
    S_ROW_N,
    S_ROW_S,
    S_STRIDE_A,
    S_STRIDE_S,
    S_SUBS,
)
from battlecalc.solver import tables

BATTLES = {
    "big land": dict(rules="1942-2e", attacker="30 inf 10 art 10 tank 8 ftr 4 bmb",
                     defender="40 inf 5 art 5 tank 6 ftr"),
    "mid sea": dict(rules="1942-2e", attacker="4 sub 2 dd 1 ca 2 ftr 1 bmb 1 bb",
                    defender="1 bb 2 dd 1 ca 1 cv 2 ftr 2 sub 2 tt", sea=True),
    "revised sea": dict(rules="revised", attacker="2 sub 1 dd 2 ftr 1 bb",
                        defender="1 cv 2 ftr 2 sub 1 dd 1 tt", sea=True),
    "amphibious": dict(rules="1942-2e", attacker="6 inf 2 art 2 tank", landing="8 inf 2 tank",
                       bombard="1 bb 2 ca", defender="12 inf 2 art 2 tank 1 ftr 1 aa"),
}


def _sides(name):
    compiled = compile_battle(make_battle(**BATTLES[name]))
    return compiled.attacker, compiled.defender


@pytest.mark.parametrize("name", BATTLES)
def test_alias_tables_give_each_hit_law(name):
    """The law a draw from the alias tables has (column h with chance 1/n, kept with chance
    thresh / 2**32, else its alias) equals the row's hit law up to the 2**-32 rounding."""
    jit.compiled()
    for side in _sides(name):
        sampler = tables.sampler(side)
        for r in range(side.rows.shape[0]):
            n = int(side.rows[r, R_TOP]) + 1
            keep = sampler.thresh[r, :n].astype(np.float64) / 2.0**32
            law = np.zeros(side.pmf.shape[1])
            np.add.at(law, np.arange(n), keep / n)
            np.add.at(law, sampler.alias[r, :n], (1.0 - keep) / n)
            assert np.abs(law - side.pmf[r]).max() <= 1e-9, (name, r)
            assert (sampler.alias[r, :n] < n).all()


def _hall_greedy(yst, yr, y, h_sub, h_air, h_gen, air_on_subs):
    """The casualties taken one by one in the order of losses, each only if the set chosen so
    far still satisfies Hall's condition over all seven sets of categories."""
    left = (yst[y, S_SUBS], yst[y, S_AIR], yst[y, S_OTHER])
    rows = (yst[y, S_ROW_S], yst[y, S_ROW_A], yst[y, S_ROW_N])
    taken = [0, 0, 0]
    blocked = [n == 0 for n in left]

    def matchable(x):
        for mask in range(1, 8):
            has = [(mask >> k) & 1 == 1 for k in range(3)]
            demand = sum(x[k] for k in range(3) if has[k])
            supply = (h_gen + (h_sub if has[0] or has[2] else 0)
                      + (h_air if has[1] or has[2] or (has[0] and air_on_subs) else 0))
            if demand > supply:
                return False
        return True

    while sum(taken) < h_sub + h_air + h_gen:
        ranks = [yr[rows[k] + taken[k], R_RANK] if not blocked[k] and taken[k] < left[k]
                 else NO_RANK for k in range(3)]
        k = int(np.argmin(ranks))
        if ranks[k] == NO_RANK:
            break
        trial = list(taken)
        trial[k] += 1
        if matchable(trial):
            taken = trial
        else:
            blocked[k] = True
    return y + taken[0] * yst[y, S_STRIDE_S] + taken[1] * yst[y, S_STRIDE_A] + taken[2]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mid sea", "revised sea"])
def test_assign_is_the_hall_greedy(name):
    for side in _sides(name):
        for y in range(side.n_states):
            for h_sub, h_air, h_gen in itertools.product(range(4), repeat=3):
                for air_on_subs in (False, True):
                    expected = _hall_greedy(side.states, side.rows, y, h_sub, h_air, h_gen,
                                            air_on_subs)
                    assert round_model.assign(side.states, side.rows, y, h_sub, h_air, h_gen,
                                        air_on_subs) == expected, (y, h_sub, h_air, h_gen)
