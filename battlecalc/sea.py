"""Compile a sea battle into per-category tables.

At sea, hits are restricted: submarine hits cannot touch aircraft, and (1942 2E) aircraft cannot
touch submarines without a friendly destroyer.  Units with the same eligibility are
interchangeable for every kind of hit, so a side splits into three categories, each lost in the
side's order of losses restricted to that category:

  S  submarines (and whether they have submerged),
  A  aircraft,
  N  every other ship (battleship damage steps included).

A side's state is the triple (s, a, n) of steps taken in each category; flat index
``(s_index * (LA + 1) + a) * (LN + 1) + n`` where ``s_index = s`` while the subs are in the
battle and ``nS + 1 + s`` once the remaining ``nS - s`` subs have submerged.  Every component only
grows, so flat indices only grow: the exact solver can sweep them in order.  Which hits go where
is decided in the kernel (kernels/sea.py) from the categories' next-loss ranks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .compile import dice_by_chance, hits_pmf
from .orders import LossOrder, casualty_steps
from .rules import Ruleset, Unit

CAT_SUB, CAT_AIR, CAT_SHIP = 0, 1, 2
_NO_RANK = np.iinfo(np.int64).max


def category(unit: Unit) -> int:
    if unit.submarine:
        return CAT_SUB
    if unit.is_air:
        return CAT_AIR
    return CAT_SHIP


@dataclass(frozen=True)
class SeaSide:
    """One side of a sea battle.  Category tables are indexed by steps taken in that category.

    n_sub, n_air_steps, n_ship_steps: category lengths (nS, LA, LN)
    sub_pmf[nS+1, W]   hits of the subs still in the battle, by subs lost (row s)
    air_pmf[LA+1, W], ship_pmf[LN+1, W]: hits of the remaining aircraft / ships
    *_cdf, *_top       the same as running sums (last used entry exactly 1) and largest hit count
    sub_rank[nS+1], air_rank[LA+1], ship_rank[LN+1]: position in the side's order of losses of
                       the category's next casualty (int64 max when none is left)
    ship_destroyer[LN+1]  an anti-sub ship is left;  ship_transport_only[LN+1]  the ships left are
                       all defenceless (transports), at least one;  ship_all_transports[LN+1]
                       the ships left are all transports, at least one
    survivors[F, U], ipc_lost[F], alive[F] (units in the battle), has_land[F] (always False):
                       per flat state, for results
    """

    n_sub: int
    n_air_steps: int
    n_ship_steps: int
    sub_pmf: np.ndarray
    sub_cdf: np.ndarray
    sub_top: np.ndarray
    air_pmf: np.ndarray
    air_cdf: np.ndarray
    air_top: np.ndarray
    ship_pmf: np.ndarray
    ship_cdf: np.ndarray
    ship_top: np.ndarray
    sub_rank: np.ndarray
    air_rank: np.ndarray
    ship_rank: np.ndarray
    ship_destroyer: np.ndarray
    ship_transport_only: np.ndarray
    ship_all_transports: np.ndarray
    survivors: np.ndarray
    ipc_lost: np.ndarray
    alive: np.ndarray
    has_land: np.ndarray
    unit_names: tuple[str, ...]

    @property
    def n_states(self) -> int:
        return int(self.ipc_lost.shape[0])


@dataclass(frozen=True)
class CompiledSeaBattle:
    attacker: SeaSide
    defender: SeaSide
    units: dict  # unit name -> Unit (the edition's table)


def _pad(rows: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    width = max(len(r) for r in rows)
    pmf = np.zeros((len(rows), width))
    for i, row in enumerate(rows):
        pmf[i, : len(row)] = row
    top = np.array([int(np.flatnonzero(r > 0)[-1]) for r in rows], dtype=np.int64)
    cdf = np.cumsum(pmf, axis=1)
    for i, t in enumerate(top):
        cdf[i, t:] = 1.0
    return pmf, cdf, top


def build_sea_side(force: dict[str, int], units: dict[str, Unit], role: str,
                   order: LossOrder) -> SeaSide:
    """Category tables for one side of a sea battle (see the module docstring)."""
    names = list(units)
    steps = casualty_steps(force, units, order)
    by_cat: list[list[tuple[int, str, str]]] = [[], [], []]
    for rank, (name, kind) in enumerate(steps):
        by_cat[category(units[name])].append((rank, name, kind))

    def walk(cat: int):
        """Forces, ranks and lost IPC after each number of steps in one category."""
        current = {n: c for n, c in force.items() if c and category(units[n]) == cat}
        forces, ranks, ipc = [dict(current)], [], [0]
        lost = 0
        for rank, name, kind in by_cat[cat]:
            ranks.append(rank)
            current[name] -= 1
            if kind == "damage":
                form = units[name].damaged_form or name
                current[form] = current.get(form, 0) + 1
            else:
                lost += units[name].cost
            forces.append(dict(current))
            ipc.append(lost)
        ranks.append(_NO_RANK)
        return forces, np.array(ranks, dtype=np.int64), ipc

    sub_forces, sub_rank, sub_ipc = walk(CAT_SUB)
    air_forces, air_rank, air_ipc = walk(CAT_AIR)
    ship_forces, ship_rank, ship_ipc = walk(CAT_SHIP)

    def pmfs(forces):
        return _pad([hits_pmf(dice_by_chance(f, units, role)) for f in forces])

    sub_pmf, sub_cdf, sub_top = pmfs(sub_forces)
    air_pmf, air_cdf, air_top = pmfs(air_forces)
    ship_pmf, ship_cdf, ship_top = pmfs(ship_forces)
    ship_destroyer = np.array([any(c and units[n].anti_sub for n, c in f.items())
                               for f in ship_forces], dtype=np.bool_)
    ship_transport_only = np.array(
        [any(c for c in f.values()) and all(units[n].defenceless for n, c in f.items() if c)
         for f in ship_forces], dtype=np.bool_)
    ship_all_transports = np.array(
        [any(c for c in f.values()) and all(units[n].transport for n, c in f.items() if c)
         for f in ship_forces], dtype=np.bool_)

    def vec(f):
        return np.array([f.get(n, 0) for n in names], dtype=np.int64)

    n_sub, n_air, n_ship = len(sub_forces) - 1, len(air_forces) - 1, len(ship_forces) - 1
    sub_vec = np.array([vec(f) for f in sub_forces])
    air_vec = np.array([vec(f) for f in air_forces])
    ship_vec = np.array([vec(f) for f in ship_forces])
    # S index: 0..nS subs lost while in the battle, nS+1+s: the nS-s left have submerged
    s_vec = np.concatenate([sub_vec, sub_vec])
    s_ipc = np.array(sub_ipc + sub_ipc, dtype=np.int64)
    s_in = np.array([n_sub - s > 0 for s in range(n_sub + 1)] + [False] * (n_sub + 1))
    survivors = (s_vec[:, None, None, :] + air_vec[None, :, None, :]
                 + ship_vec[None, None, :, :]).reshape(-1, len(names))
    ipc = (s_ipc[:, None, None] + np.array(air_ipc)[None, :, None]
           + np.array(ship_ipc)[None, None, :]).reshape(-1)
    alive = (s_in[:, None, None] | (np.arange(n_air + 1) < n_air)[None, :, None]
             | (np.arange(n_ship + 1) < n_ship)[None, None, :]).reshape(-1)
    return SeaSide(
        n_sub=n_sub, n_air_steps=n_air, n_ship_steps=n_ship,
        sub_pmf=sub_pmf, sub_cdf=sub_cdf, sub_top=sub_top,
        air_pmf=air_pmf, air_cdf=air_cdf, air_top=air_top,
        ship_pmf=ship_pmf, ship_cdf=ship_cdf, ship_top=ship_top,
        sub_rank=sub_rank, air_rank=air_rank, ship_rank=ship_rank,
        ship_destroyer=ship_destroyer, ship_transport_only=ship_transport_only,
        ship_all_transports=ship_all_transports,
        survivors=survivors, ipc_lost=ipc.astype(np.int64), alive=alive.astype(np.bool_),
        has_land=np.zeros(len(ipc), dtype=np.bool_), unit_names=tuple(names),
    )


def compile_sea(attacker: dict[str, int], defender: dict[str, int], attacker_rules: Ruleset,
                defender_rules: Ruleset, attacker_order: LossOrder,
                defender_order: LossOrder) -> CompiledSeaBattle:
    return CompiledSeaBattle(
        build_sea_side(attacker, dict(attacker_rules.units), "attack", attacker_order),
        build_sea_side(defender, dict(defender_rules.units), "defense", defender_order),
        dict(attacker_rules.units),
    )


def side_arrays(side: SeaSide) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ints, cdf, pmf): a side in the layout of kernels/sea.py (see its docstring)."""
    rows = [side.sub_top, side.air_top, side.ship_top, side.sub_rank, side.air_rank,
            side.ship_rank, side.ship_destroyer, side.ship_transport_only,
            side.ship_all_transports]
    width = max(3, *(len(r) for r in rows))
    ints = np.zeros((10, width), dtype=np.int64)
    ints[0, :3] = (side.n_sub, side.n_air_steps, side.n_ship_steps)
    for i, row in enumerate(rows, start=1):
        ints[i, : len(row)] = row
    hits = max(t.shape[1] for t in (side.sub_pmf, side.air_pmf, side.ship_pmf))
    cdf = np.ones((3, width, hits))
    pmf = np.zeros((3, width, hits))
    for i, (p, c) in enumerate(((side.sub_pmf, side.sub_cdf), (side.air_pmf, side.air_cdf),
                                (side.ship_pmf, side.ship_cdf))):
        pmf[i, : p.shape[0], : p.shape[1]] = p
        cdf[i, : c.shape[0], : c.shape[1]] = c
    return ints, cdf, pmf


SUBMERGE_POLICIES = ("never", "when-only-subs-left", "first-chance")


def rules_array(flags, attacker_submerge: str, defender_submerge: str) -> np.ndarray:
    """The int64[6] rule vector of kernels/sea.py from an edition's flags and the policies."""
    mode = {"always": 0, "unless_enemy_destroyer": 1}[flags["sub_first_strike"]]
    timing = {"end_of_round": 0, "before_fire": 1, "never": 2}[flags["submerge_timing"]]
    return np.array([
        mode,
        1 if flags["air_hits_subs"] == "always" else 0,
        timing,
        1 if flags["lone_attacking_transports"] == "one_volley_then_retreat" else 0,
        SUBMERGE_POLICIES.index(attacker_submerge),
        SUBMERGE_POLICIES.index(defender_submerge),
    ], dtype=np.int64)
