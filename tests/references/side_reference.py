"""The side-table builder as it was before its caches (battlecalc/compile.py at the merge of
solve_many, 2026-12-01): a plain, per-row rebuild kept as the reference that
tests/test_compile.py holds the cached, vectorised compile.build_side to, table for table.
Nothing here is cached; only casualty_steps, force_dice, hit_distribution and strength are
shared with the package (their values are not what the cache work changed)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from battlecalc.compile.sides import CAT_A, CAT_N, CAT_S, Side, _category
from battlecalc.dice import force_dice, hit_distribution, strength
from battlecalc.kernels import layout
from battlecalc.kernels.layout import (
    B_OFFSET,
    NO_RANK,
    R_HI,
    R_LO,
    R_RANK,
    R_STRENGTH,
    R_TOP,
    ROW_COLS,
    S_A,
    S_AIR,
    S_BLOCK,
    S_HAS_LAND,
    S_INFO,
    S_IPC,
    S_N,
    S_OTHER,
    S_ROW_A,
    S_ROW_N,
    S_ROW_S,
    S_S,
    S_STRIDE_A,
    S_STRIDE_S,
    S_SUBMERGE,
    S_SUBS,
    S_UNITS,
    STATE_COLS,
)
from battlecalc.orders import casualty_steps


@dataclass
class _Walk:
    """One category's casualty walk: forces[k] after k steps, rank[k] of the next casualty."""

    forces: list = field(default_factory=list)
    ranks: list = field(default_factory=list)
    ipc: list = field(default_factory=list)



def _walks(force: dict[str, int], ruleset, order, split) -> list[_Walk]:
    units = ruleset.units
    steps = casualty_steps(force, units, order, ruleset.supports)
    walks = [_Walk() for _ in range(3)]
    current = [{n: c for n, c in force.items() if c and units[n].can_be_casualty
                and _category(units[n], split) == cat} for cat in range(3)]
    lost = [0, 0, 0]
    for walk, forces in zip(walks, current, strict=True):
        walk.forces.append(dict(forces))
        walk.ipc.append(0)
    for rank, (name, kind) in enumerate(steps):
        cat = _category(units[name], split)
        walk, now = walks[cat], current[cat]
        walk.ranks.append(rank)
        now[name] -= 1
        if kind == "damage":
            form = units[name].damaged_form or name
            now[form] = now.get(form, 0) + 1
        else:
            lost[cat] += units[name].cost
        walk.forces.append({n: c for n, c in now.items() if c})
        walk.ipc.append(lost[cat])
    for walk in walks:
        walk.ranks.append(NO_RANK)
    return walks



def _row(force: dict[str, int], spec) -> tuple[np.ndarray, int, int]:
    """A category step's fire law, low-luck strength and I_DESTROYER / I_DEFENCELESS /
    I_TRANSPORTS flags (kernels/layout.py)."""
    units = spec.ruleset.units
    dice = force_dice(force, units, spec.role, spec.ruleset.supports)
    pmf = hit_distribution(dice, spec.ruleset.die_size, spec.dice_model)
    kinds = [units[n] for n in force]
    flags = layout.I_DESTROYER if any(u.anti_sub for u in kinds) else 0
    if kinds and all(u.defenceless for u in kinds):
        flags |= layout.I_DEFENCELESS
    if kinds and all(u.transport for u in kinds):
        flags |= layout.I_TRANSPORTS
    return pmf, strength(dice, spec.ruleset.die_size), flags


def _hit_table(pmf_rows: list[np.ndarray], ranks: list[int], strengths: list[int],
               hit_eps: float):
    """rows[R, ROW_COLS], pmf[R, W] and cdf[R, W] of a side's category steps (hit counts less
    likely than hit_eps cut: R_HI)."""
    width = max(len(p) for p in pmf_rows)
    pmf = np.zeros((len(pmf_rows), width))
    for i, row in enumerate(pmf_rows):
        pmf[i, : len(row)] = row
    rows = np.zeros((len(pmf_rows), ROW_COLS), dtype=np.int64)
    keep = pmf > hit_eps
    keep[:, 0] = True  # the no-hit entry feeds the self-loop; always exact
    rows[:, R_TOP] = width - 1 - np.argmax((pmf > 0)[:, ::-1], axis=1)
    rows[:, R_RANK] = ranks
    rows[:, R_STRENGTH] = strengths
    rows[:, R_LO] = np.argmax(keep, axis=1)
    rows[:, R_HI] = width - 1 - np.argmax(keep[:, ::-1], axis=1)
    cdf = np.cumsum(pmf, axis=1)
    cdf[np.arange(width)[None, :] >= rows[:, R_TOP][:, None]] = 1.0
    return rows, pmf, cdf



def reference_build_side(spec) -> Side:
    """A side's tables from its blocks (see the module docstring).

    Rows: every block's n-category steps first, in block order, then the s and a steps; so a
    side that is one walk per block (no s or a category) has row index = flat state index.
    """
    units = spec.ruleset.units
    names = list(units)
    index = {name: i for i, name in enumerate(names)}
    land = np.array([units[n].is_land for n in names])
    sub_cols = [index[n] for n in names if units[n].submarine]
    walks = [_walks(dict(force), spec.ruleset, spec.order, spec.split)
             for _, force, _, _ in spec.blocks]
    row_of = [[0, 0, 0] for _ in walks]
    pmf_rows, ranks, strengths, row_flags = [], [], [], []
    fire = {}  # force -> _row(force): the empty force ends every walk, blocks share forces
    for cats in ((CAT_N,), (CAT_S, CAT_A)):  # every block's n rows first
        for b, block_walks in enumerate(walks):
            for cat in cats:
                row_of[b][cat] = len(pmf_rows)
                for k, force in enumerate(block_walks[cat].forces):
                    key = tuple(force.items())
                    if key not in fire:
                        fire[key] = _row(force, spec)
                    pmf, power, flags = fire[key]
                    pmf_rows.append(pmf)
                    strengths.append(power)
                    row_flags.append(flags)
                    ranks.append(block_walks[cat].ranks[k])
    rows, pmf, cdf = _hit_table(pmf_rows, ranks, strengths, spec.hit_eps)
    row_flags = np.array(row_flags, dtype=np.int64)
    fires = rows[:, R_TOP] > 0
    block_rows, state_parts, surv_parts = [], [], []
    n_states = 0
    for b, ((_, _, ipc_before, withdrawn), block_walks) in enumerate(
            zip(spec.blocks, walks, strict=True)):
        vectors, ipc = [], []
        for walk in block_walks:
            vec = np.zeros((len(walk.forces), len(names)), dtype=np.int64)
            for k, force in enumerate(walk.forces):
                for name, count in force.items():
                    vec[k, index[name]] = count
            vectors.append(vec)
            ipc.append(np.array(walk.ipc, dtype=np.int64))
        n_sub, n_air, n_other = (len(w.forces) - 1 for w in block_walks)
        # s: subs lost while in the battle, then (if they may submerge) the same again for the
        # subs left having submerged
        copies = 2 if spec.submerge and n_sub else 1
        radix = ((n_sub + 1) * copies, n_air + 1, n_other + 1)
        s, a, n = np.indices(radix).reshape(3, -1)
        s_lost = s % (n_sub + 1)
        submerged = s > n_sub
        survivors = vectors[CAT_S][s_lost] + vectors[CAT_A][a] + vectors[CAT_N][n]
        in_battle = survivors.copy()
        in_battle[np.ix_(submerged, sub_cols)] = 0
        states = np.zeros((len(s), STATE_COLS), dtype=np.int64)
        states[:, S_BLOCK] = b
        states[:, S_S], states[:, S_A], states[:, S_N] = s, a, n
        states[:, S_ROW_S] = row_of[b][CAT_S] + s_lost
        states[:, S_ROW_A] = row_of[b][CAT_A] + a
        states[:, S_ROW_N] = row_of[b][CAT_N] + n
        states[:, S_SUBS] = np.where(submerged, 0, n_sub - s)
        states[:, S_AIR] = n_air - a
        states[:, S_OTHER] = n_other - n
        states[:, S_STRIDE_S] = radix[1] * radix[2]
        states[:, S_STRIDE_A] = radix[2]
        if copies == 2:
            states[:, S_SUBMERGE] = np.where(submerged | (s == n_sub), 0,
                                             (n_sub + 1) * radix[1] * radix[2])
        states[:, S_INFO] = (
            np.where(states[:, S_SUBS] > 0, layout.I_SUBS, 0) | np.where(a < n_air, layout.I_AIR, 0)
            | np.where(n < n_other, layout.I_OTHER, 0)
            | np.where((states[:, S_SUBS] > 0) & fires[states[:, S_ROW_S]], layout.I_SUBS_FIRE, 0)
            | np.where(fires[states[:, S_ROW_A]], layout.I_AIR_FIRE, 0)
            | np.where(fires[states[:, S_ROW_N]], layout.I_OTHER_FIRE, 0)
            | row_flags[states[:, S_ROW_N]] | np.where(submerged, layout.I_SUBMERGED, 0))
        states[:, S_HAS_LAND] = in_battle[:, land].sum(axis=1) > 0
        states[:, S_UNITS] = in_battle.sum(axis=1)
        states[:, S_IPC] = ipc_before + ipc[CAT_S][s_lost] + ipc[CAT_A][a] + ipc[CAT_N][n]
        if withdrawn is not None:
            survivors = survivors + np.array(withdrawn, dtype=np.int64)
        kind = layout.BLOCK_START if withdrawn is None else layout.BLOCK_STAYERS
        block_rows.append([n_states, *radix, kind])
        state_parts.append(states)
        surv_parts.append(survivors)
        n_states += len(s)
    states = np.concatenate(state_parts)
    blocks = np.array(block_rows, dtype=np.int64)
    start = np.zeros(n_states)
    start[blocks[:, B_OFFSET]] = [prob for prob, *_ in spec.blocks]
    return Side(blocks, states, rows, pmf, cdf, start, np.concatenate(surv_parts),
                states[:, S_IPC].copy(), tuple(names), spec.split)

