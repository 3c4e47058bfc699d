"""Tables the solvers derive from a compiled side, kept with the side (a side is built once
and shared by the battles that have it: compile's caches): the exact solver's merged table of
a side of several blocks of single walks (merged_walks) and the Monte Carlo sampler's alias
tables (sampler)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..kernels import builder, jit, layout
from ..kernels.layout import (
    B_KIND,
    B_OFFSET,
    B_RADIX_A,
    B_RADIX_N,
    B_RADIX_S,
    BLOCK_START,
    R_HI,
    R_LO,
    R_STRENGTH,
    R_TOP,
    S_INFO,
    S_OTHER,
    S_PLACE,
    S_ROW_N,
)
from .state import KernelState


def _kept(side, name: str, build):
    """side's table `name`, built by build(side) on first use and kept with the side (in its
    __dict__, as functools.cached_property keeps a value: a Side is a frozen dataclass)."""
    found = side.__dict__.get(name)
    if found is None and name not in side.__dict__:
        found = side.__dict__[name] = build(side)
    return found


MERGED_WALKS = ((builder.__name__, "merged_walks"),)  # merged_walks' kernel


def merged(side) -> tuple[np.ndarray, np.ndarray] | None:
    """The side's merged_walks, built once per side."""
    return _kept(side, "_merged_walks", merged_walks)


class Sampler(NamedTuple):
    """A side's tables for Monte Carlo draws in O(1): thresh[R, W] (uint64) and alias[R, W],
    Walker's alias tables of the hit laws pmf[R, W]: a draw takes a uniform column h of the
    row (0..R_TOP) and keeps it with chance thresh[r, h] / 2**32, else takes alias[r, h]
    (kernels/montecarlo._alias); free[F] (int64 0/1): the state of a single walk is in the
    battle with units that can hit, so the between-rounds checks (rules.settle) find nothing
    to do for a pair of free states."""

    thresh: np.ndarray
    alias: np.ndarray
    free: np.ndarray


def sampler(side) -> Sampler:
    """The side's Monte Carlo tables, built once per side (the kernels compiled by then)."""
    return _kept(side, "_sampler", _build_sampler)


# hit-law cells (rows x hit counts) up to which a side's alias tables are built by the plain
# Python kernel (about 0.8 us a cell, 80 ms at most) rather than the compiled one (compiling
# alias_tables costs about 0.7 s of CPU in a process whose cache is cold, more than all the
# Monte Carlo trials of a small battle)
PLAIN_ALIAS_CELLS = 100_000


def _build_sampler(side) -> Sampler:
    from ..kernels import montecarlo

    # (the same kernel, the same tables)
    build = jit.kernels(montecarlo, side.pmf.size > PLAIN_ALIAS_CELLS).alias_tables
    thresh, alias = build(side.pmf, side.rows)
    info = side.states[:, S_INFO]
    free = (((info & (layout.I_SUBS | layout.I_AIR)) == 0) & ((info & layout.I_OTHER) != 0)
            & ((info & layout.I_OTHER_FIRE) != 0))
    return Sampler(thresh, alias, free.astype(np.int64))


_MIX = np.random.default_rng(19).integers(1, 2**62, size=256)  # merged_walks' column hash
# the state columns merged_walks compares: all but those that say where a state lies in its
# own block's table and rows
_COMPARED = np.ones(layout.STATE_COLS, dtype=bool)
_COMPARED[list(S_PLACE)] = False


def merged_walks(side, kernels=None) -> tuple[np.ndarray, np.ndarray] | None:
    """(merge, sweep) of a side of several blocks of single walks (land, after round-1 AA
    fire): merge[a] is a itself or the state of block 0 that a equals (the same units, fire,
    columns and everything after it: block b, its aircraft shot down, often reaches a state
    of block 0 after a few casualties, or at once when its casualties are aircraft first);
    sweep, the states that are their own, most casualty steps left first (so every state
    comes after each state that can reach it).  None: nothing merges, or not such a side.
    merged keeps it with the side.  kernels: the kernels' state (solver.KernelState, default
    the process's) that says whether the kernel makes it (ready) or numpy."""
    blocks, st = side.blocks, side.states
    if (len(blocks) < 2 or (blocks[:, B_KIND] != BLOCK_START).any()
            or (blocks[:, B_RADIX_S] != 1).any() or (blocks[:, B_RADIX_A] != 1).any()):
        return None
    # (the same arrays by the kernel, kernels/builder.py, where it costs no compiling)
    if (kernels or KernelState.now(MERGED_WALKS)).ready(MERGED_WALKS):
        status, merge, sweep = builder.merged_walks(blocks, st, side.survivors, side.rows,
                                                    side.pmf, side.cdf, _MIX, _COMPARED)
        if status >= 0:
            return (merge, sweep) if status else None
    rows = st[:, S_ROW_N]
    same = _COMPARED
    # (nor the rank of the next casualty: it only orders one category against another)
    ints = np.hstack([st[:, same], side.survivors, side.rows[rows][:, [R_TOP, R_LO, R_HI,
                                                                        R_STRENGTH]]])
    # each state's twin: the state of block 0 with the same columns, units and fire (found
    # by a hash of the columns, then compared in full: a clash only merges less)
    n, n_0 = len(st), int(blocks[0, B_RADIX_N])
    code = ints @ _MIX[:ints.shape[1]]
    order = np.argsort(code[:n_0])
    at = np.minimum(np.searchsorted(code[:n_0], code, sorter=order), n_0 - 1)
    twin = order[at]
    found = ((code[twin] == code) & (ints[twin] == ints).all(axis=1)
             & (side.pmf[rows[twin]] == side.pmf[rows]).all(axis=1)
             & (side.cdf[rows[twin]] == side.cdf[rows]).all(axis=1))
    # a state of block 1 or later is merged if it and every later state of its block have
    # twins, each the twin's successor's predecessor (the last: block 0's last state)
    last = np.zeros(n, dtype=bool)
    last[blocks[:, B_OFFSET] + blocks[:, B_RADIX_N] - 1] = True
    ok = found & np.where(last, twin == n_0 - 1, np.append(twin[1:] == twin[:-1] + 1, False))
    ok[:n_0] = False
    fails = np.cumsum(~ok[::-1])[::-1]  # states not ok from each state to the very last
    end = np.repeat(blocks[:, B_OFFSET] + blocks[:, B_RADIX_N], blocks[:, B_RADIX_N])
    after = np.append(fails, 0)[end]
    merge = np.where(fails == after, twin, np.arange(n, dtype=np.int64))
    merge[:n_0] = np.arange(n_0)
    own = np.flatnonzero(merge == np.arange(n))
    if len(own) == n:
        return None
    return merge, own[np.argsort(-st[own, S_OTHER], kind="stable")]


