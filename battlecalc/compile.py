"""Compile a validated battle into the flat tables the exact solver and the Monte Carlo kernel
share (kernels/layout.py documents their columns).

The side model: a side is up to three loss categories, each a casualty walk in the side's
order of losses restricted to the category: ``s`` submarines, ``a`` aircraft, ``n`` every other
unit.  Categories exist only where some fire step treats them differently (submarine hits never
land on aircraft; aircraft may not hit submarines without a destroyer; shore bombardment hits
only land units), so a land battle is one walk, the fast path.  For each step of each walk the
tables hold the hit distribution of what is left of that category, the rank of its next
casualty in the whole order of losses (hits are assigned by rank), and the survivors and IPC
lost.  A side's state is one step per category, within a block: the force it began the battle
with.  Round-1 AA fire gives the attacker one block per distinct outcome (which aircraft are
left), each with its probability; a partial amphibious retreat continues in a block of the
units that stay.  Fire before round 1 (AA, Revised bombardment) is compiled into each side's
distribution of start states.

Two builders make the same tables, to the last bit (tests/kernels/test_builder.py): the
compiled one (kernels/builder.py, driven by _built_side: a side in one kernel call, its hit laws
from a law bank of the dice of one edition and role), once its kernels cost no compiling
(jit.ready: a first use, its numba cache cold, does not wait for them), and the Python one
(_python_side, with its caches of fire laws, casualty walks and block tables) before that.
"""

from __future__ import annotations

import functools
import itertools
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np

from . import orders, starts
from .dice import _hit_distribution, force_dice, hit_distribution, strength
from .errors import BattleInputError
from .kernels import builder, jit, layout
from .kernels.layout import (
    B_KIND,
    B_OFFSET,
    B_RADIX_A,
    B_RADIX_N,
    FULL_RETREAT,
    NO_LIMIT,
    NO_RANK,
    NO_THRESHOLD,
    R_HI,
    R_LO,
    R_RANK,
    R_STRENGTH,
    R_TOP,
    RETREAT_COLS,
    ROW_COLS,
    RU_A_POLICY,
    RU_A_STRIKE,
    RU_AIR_ALWAYS,
    RU_BOMBARD,
    RU_D_POLICY,
    RU_D_STRIKE,
    RU_DIE,
    RU_LONE_RETREAT,
    RU_LOW_LUCK,
    RU_SIMPLE,
    RU_STRIKE_RETURN,
    RU_SUBMERGE,
    RULE_COLS,
    S_A,
    S_AIR,
    S_BLOCK,
    S_HAS_LAND,
    S_INFO,
    S_IPC,
    S_MAY_RETREAT,
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
    SIMPLE_EXACT,
    STATE_COLS,
    STRIKE_ALWAYS,
    STRIKE_NEVER,
    STRIKE_UNLESS_DESTROYER,
    RetreatTables,
)
from .orders import LossOrder, casualty_steps
from .reactions import after_strikes
from .spec import SUBMERGE_POLICIES

CAT_S, CAT_A, CAT_N = 0, 1, 2
ROW_COLUMN = (S_ROW_S, S_ROW_A, S_ROW_N)  # a state's row column of each category
# Bounds on what one side's tables may hold (checked before they are built, so a battle too
# large is refused in well under a second and a few hundred MB): states (a row of STATE_COLS
# int64 each), category steps x hit counts (pmf and cdf), and round-1 AA outcomes.
MAX_STATES = 1_000_000
MAX_TABLE_CELLS = 8_000_000
MAX_AA_OUTCOMES = 20_000
TOO_LARGE_HINT = ("battlecalc's tables hold about a thousand units a side (fewer at sea, where "
                  "submarines, aircraft and ships are counted apart); split the battle")
PRUNE_EPS = 1e-16  # hit counts less likely than this are skipped by the exact solver
# an optimal retreat's threshold on its retreat tables' win_value, which holds the policy found
# (1.0: press on, 0.0: retreat; kernels/round_model.should_retreat retreats below it)
OPTIMAL_MASK = 0.5


SMALL_SIDE = 256  # sides of at most this many states: Side.mean_hit_combinations in Python


@dataclass(frozen=True)
class Side:
    """One side's tables.  F flat states, R category steps (rows), W hit counts, U unit types.

    blocks[B, BLOCK_COLS], states[F, STATE_COLS], rows[R, ROW_COLS]: see kernels/layout.py;
    pmf[R, W] / cdf[R, W]: law of the hits the category's units left score in one round (cdf:
    running sums, exactly 1 from the largest possible count on); start[F]: probability of
    starting the battle in each state; survivors[F, U], ipc_lost[F] (IPC) for the results.
    """

    blocks: np.ndarray
    states: np.ndarray
    rows: np.ndarray
    pmf: np.ndarray
    cdf: np.ndarray
    start: np.ndarray
    survivors: np.ndarray
    ipc_lost: np.ndarray
    unit_names: tuple[str, ...]
    split: tuple[bool, bool] = (False, False)  # (subs, aircraft) are categories of their own

    # (cached, as the properties below: a side is shared by the battles of many calls, which
    # read these several times each)
    @functools.cached_property
    def n_states(self) -> int:
        return int(self.states.shape[0])

    @functools.cached_property
    def has_stayers(self) -> bool:
        """Some block holds the units that stay after a partial retreat (BLOCK_STAYERS)."""
        return bool((self.blocks[:, B_KIND] == layout.BLOCK_STAYERS).any())

    @functools.cached_property
    def mean_hit_combinations(self) -> float:
        """Mean over the states of the hit combinations the side's fire has in one round (the
        exact solver's work per state pair; kept, as build_side reuses a side)."""
        st = self.states
        if st.shape[0] <= SMALL_SIDE:  # (the same products and sum, without numpy's calls)
            widths = [hi - lo + 1.0 for hi, lo in self.rows[:, (R_HI, R_LO)].tolist()]
            products = [(widths[s] if subs > 0 else 1.0) * widths[a] * widths[n] for subs, s, a, n
                        in st[:, (S_SUBS, S_ROW_S, S_ROW_A, S_ROW_N)].tolist()]
            return float(np.add.reduce(np.array(products))) / len(products)
        widths = (self.rows[:, R_HI] - self.rows[:, R_LO] + 1).astype(np.float64)
        return float((np.where(st[:, S_SUBS] > 0, widths[st[:, S_ROW_S]], 1.0)
                      * widths[st[:, S_ROW_A]] * widths[st[:, S_ROW_N]]).mean())


@dataclass(frozen=True)
class Bombardment:
    """Shore bombardment of an amphibious assault: pmf[B] law of its hits, fired / unused
    ships (beyond one per landing unit), and whether its casualties fire back (else the hits
    are taken before round 1)."""

    pmf: np.ndarray
    return_fire: bool
    fired: dict[str, int]
    unused: dict[str, int]


NO_BOMBARDMENT = Bombardment(np.ones(1), True, {}, {})


@dataclass(frozen=True)
class CompiledBattle:
    attacker: Side
    defender: Side
    rules: np.ndarray  # int64[RULE_COLS]
    bombardment: Bombardment = NO_BOMBARDMENT
    retreat: RetreatTables | None = None  # the attacker's retreat policy as kernel arrays
    sea: bool = False
    # a battle that starts where it stands (with_start): rounds fought before its start, and
    # the rounds fought from which the attacker takes its retreat decisions
    start_rounds: int = 0
    retreat_from: int = 1
    # the attacker retreats optimally by this objective (spec.Objective; None: its retreat
    # policy, if any, is the fixed one): its retreat tables' win_value becomes the policy the
    # backward induction finds (solver.decide.fill_decisions), read with threshold
    # OPTIMAL_MASK
    objective: object | None = None

    def retreat_tables(self) -> RetreatTables:
        """The retreat policy as the kernels take it ("never" where the battle has none)."""
        return self.retreat or self._never_retreat

    @functools.cached_property
    def _never_retreat(self) -> RetreatTables:
        # built once per battle: no kernel writes these (only fill_win_values writes a
        # win_value, that of a --retreat-below policy)
        return RetreatTables(
            np.zeros(RETREAT_COLS, dtype=np.int64), NO_THRESHOLD, np.zeros((1, 1)),
            np.full(self.attacker.n_states, FULL_RETREAT, dtype=np.int64))

    @property
    def retreat_below(self) -> float | None:
        """--retreat-below's win-probability threshold; None when the policy has none (an
        optimal retreat's threshold reads its policy, not a chance of winning)."""
        if (self.retreat is None or self.retreat.below == NO_THRESHOLD
                or self.objective is not None):
            return None
        return self.retreat.below

    @property
    def has_partial_retreat(self) -> bool:
        """Some retreat leaves units behind (an amphibious assault's landed units): the
        attacker's tables then hold blocks of the stayers (BLOCK_STAYERS), which no battle
        starts in."""
        return self.attacker.has_stayers


# ---------------------------------------------------------------------------------------------
# Walks and blocks


def _category(unit, split: tuple[bool, bool]) -> int:
    if split[0] and unit.submarine:
        return CAT_S
    if split[1] and unit.is_air:
        return CAT_A
    return CAT_N


# What recurs across sides is kept (bounded, least recently used first out; all dropped by
# forget_tables, which api.forget_compiled calls): a force's fire law (_fire_law, ~1 KB an
# entry for small forces, a long law's array being the dice cache's own: at most ~70 MB), a
# block force's casualty walks (_kept_walks, forces of at most KEPT_WALK_UNITS units, ~2.5 KB
# an entry for 3-6 units: at most ~40 MB), a block's size check (_block_size, ~0.5 KB, at
# most ~8 MB) and the tables of a block (_block, BLOCK_CACHE_BYTES).  Measured: 6,000 fresh
# 3-6-unit battles leave 1,801 laws, 2,678 walks and 2,678 blocks (10 MB), 25 MB in all.  A
# new army's walks pass through forces other armies had; a battle's retreat and bombardment
# variants rebuild the same blocks; round-1 AA outcomes recur across defenders.
CACHE_ENTRIES = 65_536
WALK_ENTRIES = 16_384
KEPT_WALK_UNITS = 64
SHORT_LAW = 32  # laws of at most this many entries: tables built from their Python floats
BLOCK_CACHE_BYTES = 32 << 20
BLOCK_CACHE_STATES = 4096  # blocks larger than this are built each time (not kept)


@dataclass(frozen=True)
class _Walk:
    """One category's casualty walk: forces[k] (unit, count items) after k steps, rank[k] of
    the next casualty (NO_RANK after the last), ipc[k] lost by then; moves[k] the step from
    forces[k] to forces[k + 1]: (unit, its damaged form, or None where it is lost)."""

    forces: tuple
    ranks: tuple
    ipc: tuple
    moves: tuple


def _walks(force: tuple, ruleset, order: LossOrder, split) -> tuple[_Walk, _Walk, _Walk]:
    """The three category walks (s, a, n) of a block force given as (unit, count) items
    (kept for forces of at most KEPT_WALK_UNITS units)."""
    if sum(count for _, count in force) <= KEPT_WALK_UNITS:
        return _kept_walks(force, ruleset, order, split)
    return _build_walks(force, ruleset, order, split)


def _build_walks(force: tuple, ruleset, order: LossOrder, split) -> tuple[_Walk, _Walk, _Walk]:
    units = ruleset.units
    steps = casualty_steps(dict(force), units, order, ruleset.supports)
    forces: list[list] = [[], [], []]
    ranks: list[list] = [[], [], []]
    ipc: list[list] = [[0], [0], [0]]
    moves: list[list] = [[], [], []]
    current: list[dict] = [{}, {}, {}]
    category = {}  # (of each unit of the force, and of the damaged forms it takes)
    for name, count in force:
        unit = units[name]
        category[name] = cat = _category(unit, split)
        if count and unit.can_be_casualty:
            current[cat][name] = count
    for cat in range(3):
        forces[cat].append(tuple(current[cat].items()))
    lost = [0, 0, 0]
    # (a unit type leaves its walk's forces when its count reaches 0: damage comes before
    # every kill, so no type comes back, and the forces keep their order)
    for rank, (name, kind) in enumerate(steps):
        cat = category.get(name)
        if cat is None:
            cat = category[name] = _category(units[name], split)
        now = current[cat]
        ranks[cat].append(rank)
        form = (units[name].damaged_form or name) if kind == "damage" else None
        if form != name:
            left = now[name] - 1
            if left:
                now[name] = left
            else:
                del now[name]
        if kind == "damage":
            if form != name:
                now[form] = now.get(form, 0) + 1
            moves[cat].append((name, form))
        else:
            lost[cat] += units[name].cost
            moves[cat].append((name, None))
        forces[cat].append(tuple(now.items()))
        ipc[cat].append(lost[cat])
    return tuple(_Walk(tuple(forces[c]), (*ranks[c], NO_RANK), tuple(ipc[c]), tuple(moves[c]))
                 for c in range(3))


_kept_walks = functools.lru_cache(maxsize=WALK_ENTRIES)(_build_walks)


@dataclass(frozen=True)
class _SideSpec:
    """What a side's tables depend on (hashable, for the table cache)."""

    ruleset: object  # Ruleset with the side's technologies applied
    role: str
    order: LossOrder
    split: tuple[bool, bool]
    submerge: bool  # its submarines may submerge
    blocks: tuple  # (probability, force items, ipc already lost, withdrawn survivor counts)
    dice_model: str = "standard"


class _Fire(NamedTuple):
    """A force's fire law as the tables hold it: pmf, cdf (running sums, exactly 1
    from `top` on), top (most hits), hi (most hits more likely than PRUNE_EPS; the least, R_LO,
    is always 0), low-luck strength, I_DESTROYER / I_DEFENCELESS / I_TRANSPORTS flags
    (kernels/layout.py) and the number of dice."""

    pmf_list: tuple | None  # pmf and cdf as Python floats (None: a law longer than SHORT_LAW)
    cdf_list: tuple | None
    top: int
    hi: int
    strength: int
    flags: int
    dice: int
    pmf: np.ndarray  # (hit_distribution's own, read-only)


@functools.lru_cache(maxsize=256)
def _unit_fire(ruleset, role: str) -> tuple[dict, frozenset]:
    """Per unit type of an edition in a role: its dice group as dice.add_dice makes it
    ((value, best of), dice a unit) or None, and its I_DESTROYER / I_DEFENCELESS /
    I_TRANSPORTS traits; and the support givers (whose presence makes force_dice count
    supports, attack only)."""
    table = {}
    for name, unit in ruleset.units.items():
        value, per_unit = unit.value(role), unit.dice(role)
        fires = value > 0 and per_unit > 0 and (role != "attack" or unit.can_attack)
        best = unit.best_die and per_unit > 1
        table[name] = (((value, per_unit) if best else (value, 1), 1 if best else per_unit)
                       if fires else None, unit.anti_sub, unit.defenceless, unit.transport)
    givers = frozenset(s.giver for s in ruleset.supports) if role == "attack" else frozenset()
    return table, givers


@functools.lru_cache(maxsize=CACHE_ENTRIES)
def _fire_law(ruleset, role: str, force: tuple, dice_model: str) -> _Fire:
    """The fire law of a force given as (unit, count) items, counts > 0."""
    table, givers = _unit_fire(ruleset, role)
    anti_sub, defenceless, transports = False, bool(force), bool(force)
    for name, _ in force:
        _, anti, lone, carrier = table[name]
        anti_sub |= anti
        defenceless &= lone
        transports &= carrier
    if givers and any(name in givers for name, _ in force):
        dice = force_dice(dict(force), ruleset.units, role, ruleset.supports)
    else:  # (force_dice without supports: each unit's dice group, count times)
        dice = {}
        for name, count in force:
            group = table[name][0]
            if group is not None:
                dice[group[0]] = dice.get(group[0], 0) + count * group[1]
    pmf = hit_distribution(dice, ruleset.die_size, dice_model)
    flags = ((layout.I_DESTROYER if anti_sub else 0)
             | (layout.I_DEFENCELESS if defenceless else 0)
             | (layout.I_TRANSPORTS if transports else 0))
    power, n_dice = strength(dice, ruleset.die_size), sum(dice.values())
    if len(pmf) > SHORT_LAW:  # (its tables are built from the array: _hit_tables)
        positive = np.flatnonzero(pmf > 0.0)
        top = int(positive[-1]) if len(positive) else len(pmf) - 1
        kept = np.flatnonzero(pmf[1:] > PRUNE_EPS)
        hi = int(kept[-1]) + 1 if len(kept) else 0
        return _Fire(None, None, top, hi, power, flags, n_dice, pmf)
    law = pmf.tolist()
    top = hi = len(law) - 1
    while top > 0 and not law[top] > 0.0:
        top -= 1
    while hi > 0 and not law[hi] > PRUNE_EPS:
        hi -= 1
    # (accumulate: the same sums, in the same order, as np.cumsum)
    cdf = (*itertools.accumulate(law[:top]), *(1.0,) * (len(law) - top))
    return _Fire(tuple(law), cdf, top, hi, power, flags, n_dice, pmf)


@dataclass(frozen=True)
class _BlockTables:
    """A block's tables as a side of that block alone has them (its n rows, then s, then a;
    block 0, no IPC lost before), read-only: states[F, STATE_COLS], survivors[F, U],
    rows[R, ROW_COLS], pmf[R, W] and cdf[R, W]; n_rows per category (s, a, n); radix."""

    states: np.ndarray
    survivors: np.ndarray
    rows: np.ndarray
    pmf: np.ndarray
    cdf: np.ndarray
    n_rows: tuple[int, int, int]
    radix: tuple[int, int, int]

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.states, self.survivors, self.rows, self.pmf,
                                      self.cdf))


def _frozen(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


@functools.lru_cache(maxsize=64)
def _unit_index(names: tuple) -> dict[str, int]:
    """Each unit's column of the survivor tables (an edition's units, in order)."""
    return {name: i for i, name in enumerate(names)}


def _block_tables(force: tuple, spec: _SideSpec, names: tuple, land: tuple) -> _BlockTables:
    """A block's tables (see _BlockTables).  A state's columns are sums of one part per
    category (its I_* bits are disjoint across categories): each category's parts are a small
    table, built a column at a time, and the block's states every sum of one row of each, in
    flat order (s, a, n).  An empty category's one part is all zeros; a block of one category
    is that table."""
    walks = _walks(force, spec.ruleset, spec.order, spec.split)
    laws = [[_fire_law(spec.ruleset, spec.role, f, spec.dice_model) for f in walk.forces]
            for walk in walks]
    n_sub, n_air, n_other = (len(w.forces) - 1 for w in walks)
    copies = 2 if spec.submerge and n_sub else 1
    radix = ((n_sub + 1) * copies, n_air + 1, n_other + 1)
    n_rows = (n_sub + 1, n_air + 1, n_other + 1)
    row_base = (n_rows[CAT_N], n_rows[CAT_N] + n_rows[CAT_S], 0)
    index = _unit_index(names)
    n_units = len(names)
    used = [cat for cat in range(3) if radix[cat] > 1] or [CAT_N]
    alone = len(used) == 1
    step_col = (S_S, S_A, S_N)
    left_col = (S_SUBS, S_AIR, S_OTHER)
    here = (layout.I_SUBS, layout.I_AIR, layout.I_OTHER)
    fire = (layout.I_SUBS_FIRE, layout.I_AIR_FIRE, layout.I_OTHER_FIRE)
    tables = []
    for cat in used:
        walk, cat_laws = walks[cat], laws[cat]
        steps = len(walk.forces) - 1
        size = radix[cat]
        # the units left after each step: the first force, less the steps' losses so far
        vector = [0] * n_units
        total = on_land = 0
        for name, count in walk.forces[0]:
            i = index[name]
            vector[i] = count
            total += count
            on_land += count if land[i] else 0
        vectors, totals, lands = [vector.copy()], [total], [on_land]
        for name, form in walk.moves:
            i = index[name]
            if form is None:
                vector[i] -= 1
                total -= 1
                on_land -= land[i]
            elif form != name:
                j = index[form]
                vector[i] -= 1
                vector[j] += 1
                on_land += land[j] - land[i]
            vectors.append(vector.copy())
            totals.append(total)
            lands.append(on_land)
        vectors = np.array(vectors, dtype=np.int64)
        # each state's row, as a list (one array of them: the columns at once)
        template = [0] * STATE_COLS
        if cat == used[0]:  # (once in each state: what the block has alike)
            template[S_STRIDE_S] = radix[1] * radix[2]
            template[S_STRIDE_A] = radix[2]
            for other in range(3):
                if other not in used:  # the row of an empty category's one step
                    template[ROW_COLUMN[other]] = row_base[other]
        surfacing = (n_sub + 1) * radix[1] * radix[2] if cat == CAT_S and copies == 2 else 0
        step, row_col, left = step_col[cat], ROW_COLUMN[cat], left_col[cat]
        ks, state_rows = [], []
        for s in range(size):
            k = s % (steps + 1)
            law = cat_laws[k]
            submerged = s > steps
            in_battle = 0 if submerged else steps - s
            bits = (here[cat] | (fire[cat] if law.top > 0 else 0)) if in_battle > 0 else 0
            if cat == CAT_S:
                bits |= layout.I_SUBMERGED if submerged else 0
            else:
                bits |= fire[cat] if law.top > 0 else 0
                if cat == CAT_N:
                    bits |= law.flags
            ks.append(k)
            row = template.copy()
            row[step] = s
            row[row_col] = k + row_base[cat]
            row[left] = in_battle
            row[S_INFO] = bits
            row[S_IPC] = walk.ipc[k]
            if not submerged:
                row[S_UNITS] = totals[k]
                row[S_HAS_LAND] = 1 if lands[k] > 0 else 0  # (summed below: made 0 / 1)
                if s < n_sub:
                    row[S_SUBMERGE] = surfacing
            state_rows.append(row)
        states = np.array(state_rows, dtype=np.int64)
        tables.append((cat, states, vectors if size == steps + 1 else vectors[ks]))
    if alone:
        _, states, survivors = tables[0]
    else:
        shapes = ((-1, 1, 1), (1, -1, 1), (1, 1, -1))
        states = survivors = 0
        for cat, part, vectors in tables:
            states = states + part.reshape(*shapes[cat], STATE_COLS)
            survivors = survivors + vectors.reshape(*shapes[cat], n_units)
        states = states.reshape(-1, STATE_COLS)
        survivors = survivors.reshape(-1, n_units)
        states[:, S_HAS_LAND] = states[:, S_HAS_LAND] > 0
    rows = []
    for cat in (CAT_N, CAT_S, CAT_A):
        for law, rank in zip(laws[cat], walks[cat].ranks, strict=True):
            row = [0] * ROW_COLS
            row[R_TOP], row[R_RANK], row[R_HI], row[R_STRENGTH] = (law.top, rank, law.hi,
                                                                   law.strength)
            rows.append(row)
    block_laws = laws[CAT_N] + laws[CAT_S] + laws[CAT_A]
    return _BlockTables(_frozen(states), _frozen(survivors),
                        _frozen(np.array(rows, dtype=np.int64)), *_hit_tables(block_laws),
                        n_rows, radix)


def _hit_tables(laws: list) -> tuple[np.ndarray, np.ndarray]:
    """pmf[R, W] (padded with 0) and cdf[R, W] (running sums, 1 from each law's top on),
    read-only, of fire laws: short ones from their Python floats in one array, long ones a
    row at a time and the running sums along the rows (the same sums either way)."""
    width = max(len(law.pmf) for law in laws)
    if width <= SHORT_LAW:
        pmf = np.array([law.pmf_list + (0.0,) * (width - len(law.pmf_list)) for law in laws])
        cdf = np.array([law.cdf_list + (1.0,) * (width - len(law.cdf_list)) for law in laws])
        return _frozen(pmf), _frozen(cdf)
    pmf = np.zeros((len(laws), width))
    for i, law in enumerate(laws):
        pmf[i, :len(law.pmf)] = law.pmf
    cdf = np.cumsum(pmf, axis=1)
    tops = np.array([law.top for law in laws])
    cdf[np.arange(width)[None, :] >= tops[:, None]] = 1.0
    return _frozen(pmf), _frozen(cdf)


_blocks: dict = {}  # (block force, what else a block's tables depend on) -> _BlockTables
_block_bytes = [0]
_block_lock = threading.Lock()


def _block(force: tuple, spec: _SideSpec, names: tuple, land: tuple) -> _BlockTables:
    """_block_tables, kept (BLOCK_CACHE_BYTES in all, the least recently used dropped)."""
    key = (force, spec.ruleset, spec.role, spec.order, spec.split, spec.submerge,
           spec.dice_model)
    with _block_lock:
        found = _blocks.pop(key, None)
        if found is not None:
            _blocks[key] = found  # (now the most recently used)
            return found
    tables = _block_tables(force, spec, names, land)
    size = tables.nbytes
    if tables.states.shape[0] <= BLOCK_CACHE_STATES and size <= BLOCK_CACHE_BYTES:
        with _block_lock:
            while _blocks and _block_bytes[0] + size > BLOCK_CACHE_BYTES:
                _block_bytes[0] -= _blocks.pop(next(iter(_blocks))).nbytes
            if key not in _blocks:
                _blocks[key] = tables
                _block_bytes[0] += size
    return tables


def forget_tables() -> None:
    """Drop every kept side table and what they are built from (fire laws, casualty walks,
    block tables, round-1 AA outcomes, base orders of losses): the next build is as for a
    battle never seen (the laws of dice groups, battlecalc.dice, are kept)."""
    build_side.cache_clear()
    _kept_walks.cache_clear()
    _fire_law.cache_clear()
    _block_size.cache_clear()
    _aa_outcomes.cache_clear()
    _unit_fire.cache_clear()
    orders._BASE_RANKS.clear()
    with _block_lock:
        _blocks.clear()
        _block_bytes[0] = 0


# the compiled builder's kernels that _built_side calls (the side, its law bank's)
_BUILDER_KERNELS = ("build_side", "find_law", "insert_laws", "law_columns")


@functools.lru_cache(maxsize=256)
def build_side(spec: _SideSpec) -> Side:
    """A side's tables from its blocks (see the module docstring): built by the compiled
    builder (kernels/builder.py, _built_side) once the kernels are compiled and it costs no
    compiling (jit.ready: compiled for every solve, or in this process or numba's cache
    already), else (and for a spec it does not take) by the Python builder (_python_side),
    which a first use never waits for numba to compile; the same arrays either way.

    Rows: every block's n-category steps first, in block order, then the s and a steps; so a
    side that is one walk per block (no s or a category) has row index = flat state index.
    """
    if all(jit.ready(builder.__name__, name) for name in _BUILDER_KERNELS):
        side = _built_side(spec)
        if side is not None:
            return side
    return _python_side(spec)


def _python_side(spec: _SideSpec) -> Side:
    """build_side in Python: its blocks' tables (_block, kept), laid end to end."""
    units = spec.ruleset.units
    names = tuple(units)
    land = tuple(u.is_land for u in units.values())
    _check_size(spec)
    blocks = [_block(force, spec, names, land) for _, force, _, _ in spec.blocks]
    if len(blocks) == 1 and spec.blocks[0][2] == 0 and spec.blocks[0][3] is None:
        block = blocks[0]  # a side of one block is the block's own tables
        states = block.states.copy()
        blocks_array = np.array([[0, *block.radix, layout.BLOCK_START]], dtype=np.int64)
        start = np.zeros(len(states))
        start[0] = spec.blocks[0][0]
        return Side(blocks_array, states, block.rows.copy(), block.pmf.copy(),
                    block.cdf.copy(), start, block.survivors.copy(),
                    states[:, S_IPC].copy(), names, spec.split)
    # the rows of block b: its n rows at n_at[b], its s and a rows at sa_at[b]
    n_at, sa_at, at = [], [], 0
    for block in blocks:
        n_at.append(at)
        at += block.n_rows[CAT_N]
    for block in blocks:
        sa_at.append(at)
        at += block.n_rows[CAT_S] + block.n_rows[CAT_A]
    width = max(block.pmf.shape[1] for block in blocks)
    rows = np.empty((at, ROW_COLS), dtype=np.int64)
    pmf = np.zeros((at, width))
    cdf = np.ones((at, width))
    for block, n0, sa0 in zip(blocks, n_at, sa_at, strict=True):
        n_n = block.n_rows[CAT_N]
        n_sa = block.n_rows[CAT_S] + block.n_rows[CAT_A]
        for target, source in ((rows, block.rows), (pmf, block.pmf), (cdf, block.cdf)):
            target[n0:n0 + n_n, :source.shape[1]] = source[:n_n]
            target[sa0:sa0 + n_sa, :source.shape[1]] = source[n_n:]
    block_rows, state_parts, surv_parts = [], [], []
    n_states = 0
    for b, ((_, _, ipc_before, withdrawn), block) in enumerate(
            zip(spec.blocks, blocks, strict=True)):
        shift = [0] * STATE_COLS
        shift[S_BLOCK] = b
        shift[S_ROW_N] = n_at[b]
        shift[S_ROW_S] = shift[S_ROW_A] = sa_at[b] - block.n_rows[CAT_N]
        shift[S_IPC] = ipc_before
        state_parts.append(block.states + np.array(shift, dtype=np.int64))
        surv_parts.append(block.survivors if withdrawn is None
                          else block.survivors + np.array(withdrawn, dtype=np.int64))
        kind = layout.BLOCK_START if withdrawn is None else layout.BLOCK_STAYERS
        block_rows.append([n_states, *block.radix, kind])
        n_states += block.states.shape[0]
    states = state_parts[0] if len(state_parts) == 1 else np.concatenate(state_parts)
    survivors = np.concatenate(surv_parts)  # (a copy: the kept block is never handed out)
    blocks_array = np.array(block_rows, dtype=np.int64)
    start = np.zeros(n_states)
    start[blocks_array[:, B_OFFSET]] = [prob for prob, *_ in spec.blocks]
    return Side(blocks_array, states, rows, pmf, cdf, start, survivors,
                states[:, S_IPC].copy(), names, spec.split)


@functools.lru_cache(maxsize=CACHE_ENTRIES)
def _block_size(force: tuple, ruleset, role: str, split, submerge: bool) -> tuple[int, int]:
    """(states, hit probabilities) of a block's tables, from its force: steps per loss
    category, and dice."""
    units = ruleset.units
    steps = [0, 0, 0]
    for name, count in force:
        if units[name].can_be_casualty:
            steps[_category(units[name], split)] += count * units[name].hp
    dice = sum(force_dice(dict(force), units, role, ruleset.supports).values())
    states = ((steps[0] + 1) * (2 if submerge and steps[0] else 1) * (steps[1] + 1)
              * (steps[2] + 1))
    return states, (sum(steps) + 3) * (dice + 1)


def _check_size(spec: _SideSpec) -> None:
    """Refuse a side whose tables would be too large, before building them."""
    states = cells = 0
    for _, force, _, _ in spec.blocks:
        more_states, more_cells = _block_size(force, spec.ruleset, spec.role, spec.split,
                                              spec.submerge)
        states += more_states
        cells += more_cells
    if states > MAX_STATES or cells > MAX_TABLE_CELLS:
        _too_large(spec, states, cells)


def _too_large(spec: _SideSpec, states: int, cells: int):
    side = "attacker" if spec.role == "attack" else "defender"
    raise BattleInputError(
        f"battle too large: the {side}'s tables would hold {states:,} states and "
        f"{cells:,} hit probabilities (limits {MAX_STATES:,} and {MAX_TABLE_CELLS:,}); "
        + TOO_LARGE_HINT)


# ---------------------------------------------------------------------------------------------
# The compiled builder's driver (kernels/builder.py)


class _UnitTable(NamedTuple):
    """An edition's units in a role as kernels/builder.py takes them: per Ruleset object (an
    edition and its technologies) and role, made once and kept for the process, as the
    rules are (forget_tables keeps them: they are the edition's, not a battle's)."""

    ruleset: object
    units: np.ndarray  # int64[U, builder.UNIT_COLS]
    supports: np.ndarray  # int64[K, builder.SUP_COLS]: the attacker's (none on defence)
    targets: np.ndarray  # int64[K, T]: each support's targets, in order (-1 padded)
    by_rank: dict  # preset -> int64[casualty units]: the preset's base order of losses
    kind_slot: np.ndarray  # int64[most best-of + 1]: the slot of each best-of kind
    kinds: tuple  # the best-of kinds, in slot order (1 first)
    index: dict  # unit -> its column
    names: tuple  # the edition's units, in order


_unit_tables: dict = {}  # (id(ruleset), role) -> (ruleset, _UnitTable or None)
_tables_lock = threading.Lock()


def _unit_table(ruleset, role: str) -> _UnitTable | None:
    """The builder's unit table of an edition in a role, or None where the builder does not
    take the edition (a damaged form that is not a one-hit casualty of its unit's category,
    a support of a unit the edition does not have): the Python builder builds its sides."""
    found = _unit_tables.get((id(ruleset), role))
    if found is not None and found[0] is ruleset:
        return found[1]
    table = _make_unit_table(ruleset, role)
    with _tables_lock:
        if len(_unit_tables) >= 256:
            _unit_tables.clear()
        _unit_tables[(id(ruleset), role)] = (ruleset, table)
    return table


def _make_unit_table(ruleset, role: str) -> _UnitTable | None:
    units = ruleset.units
    names = tuple(units)
    index = {name: i for i, name in enumerate(names)}
    rows = []
    for unit in units.values():
        form = units.get(unit.damaged_form) if unit.damaged_form else None
        if unit.damaged_form and (form is None or not form.can_be_casualty or form.hp != 1
                                  or form.submarine != unit.submarine
                                  or form.is_air != unit.is_air or form.name == unit.name):
            return None
        rows.append([unit.can_be_casualty, unit.hp, index[form.name] if form else -1, unit.cost,
                     unit.is_land, unit.is_air, unit.submarine, unit.is_aa,
                     unit.transport and unit.defenceless, unit.anti_sub, unit.defenceless,
                     unit.transport, role != "attack" or unit.can_attack, unit.value(role),
                     unit.dice(role), unit.best_die])
    supports = ruleset.supports if role == "attack" else ()
    if any(s.giver not in index or any(t not in index for t in s.targets) for s in supports):
        return None
    width = max((len(s.targets) for s in supports), default=0)
    targets = np.full((len(supports), max(width, 1)), -1, dtype=np.int64)
    for k, support in enumerate(supports):
        targets[k, :len(support.targets)] = [index[t] for t in support.targets]
    by_rank = {}
    for preset in ("cheapest", "weakest"):
        rank = orders._base_rank(units, role, preset == "weakest")
        by_rank[preset] = np.array([index[n] for n in sorted(rank, key=rank.__getitem__)],
                                   dtype=np.int64)
    kinds = tuple(sorted({1} | {u.dice(role) for u in units.values()
                                if u.best_die and u.dice(role) > 1}))
    kind_slot = np.zeros(kinds[-1] + 1, dtype=np.int64)
    kind_slot[list(kinds)] = np.arange(len(kinds))
    return _UnitTable(ruleset, np.array(rows, dtype=np.int64).reshape(len(rows),
                                                                        builder.UNIT_COLS),
                      np.array([[index[s.giver], s.bonus, s.count, len(s.targets)]
                                for s in supports], dtype=np.int64).reshape(-1, builder.SUP_COLS),
                      targets, by_rank, kind_slot, kinds, index, names)


MAX_BANK_LAWS = 1 << 18  # a law bank past these starts again empty
MAX_BANK_FLOATS = 1 << 22


class _LawBank:
    """The hit laws of the dice of one edition's units in one role and dice model, found by
    their dice (kernels/builder.py): a dice vector counts the dice of each slot, a hit value
    (clamped to the die: the same chance to hit) and a best-of kind; its law is
    dice.hit_distribution's of those dice, stored with its top count, its highest count
    above PRUNE_EPS and its low-luck strength.  Kept for the process (at most MAX_BANK_LAWS
    laws and MAX_BANK_FLOATS probabilities, then emptied), as dice.hit_distribution keeps the
    laws of dice groups: a law is the same for every battle whose dice it is."""

    def __init__(self, die: int, kinds: tuple, model: str):
        self.die, self.model = die, model
        self.slots = [(value, kind) for value in range(1, die + 1) for kind in kinds]
        self.lock = threading.Lock()
        self._empty()

    def _empty(self) -> None:
        n = len(self.slots)
        # (keys, values, laws, pmf): what the kernels read, replaced as one where it grows
        self.arrays = (np.zeros((256, n), dtype=np.int64), np.full(256, -1, dtype=np.int64),
                       np.zeros((64, builder.LAW_COLS), dtype=np.int64), np.zeros(4096))
        self.vectors = np.zeros((64, n), dtype=np.int64)
        self.n_laws = self.n_floats = 0

    def add(self, missing: np.ndarray) -> None:
        """The laws of the dice vectors missing[M, S] added (those not there yet); where
        they would take the bank past its bounds, the bank emptied instead (the builder then
        asks for every law of its side, which an empty bank takes however many: a side's
        laws are all there at once)."""
        with self.lock:
            groups = [tuple((value, kind, n) for (value, kind), n
                            in zip(self.slots, vector.tolist(), strict=True) if n)
                      for vector in missing]
            found = [_hit_distribution(g, self.die, self.model) for g in groups]
            if self.n_laws and (self.n_laws + len(found) > MAX_BANK_LAWS
                                or self.n_floats + sum(map(len, found)) > MAX_BANK_FLOATS):
                self._empty()
                return
            for vector, dice, law in zip(missing, groups, found, strict=True):
                keys, values, _, _ = self.arrays
                if builder.find_law(keys, values, vector) >= 0:
                    continue
                size = len(law)
                self._room(size)
                keys, values, laws, pmf = self.arrays
                top, hi = builder.law_columns(law, PRUNE_EPS)
                i, at = self.n_laws, self.n_floats
                pmf[at:at + size] = law
                laws[i] = (top, hi, sum(n * min(v + b - 1, self.die) for v, b, n in dice),
                           size, at)
                self.vectors[i] = vector
                builder.insert_laws(keys, values, vector[None, :], np.array([i]))
                self.n_laws, self.n_floats = i + 1, at + size

    def _room(self, size: int) -> None:
        """Room for one more law of `size` probabilities (arrays grown by doubling; the hash
        table kept at most half full)."""
        keys, values, laws, pmf = self.arrays
        n = self.n_laws + 1
        if n > len(laws):
            laws = np.concatenate([laws, np.zeros_like(laws)])
            self.vectors = np.concatenate([self.vectors, np.zeros_like(self.vectors)])
        if self.n_floats + size > len(pmf):
            grown = np.zeros(max(2 * len(pmf), self.n_floats + size))
            grown[:self.n_floats] = pmf[:self.n_floats]
            pmf = grown
        if 2 * n > len(values):
            keys = np.zeros((4 * len(values), keys.shape[1]), dtype=np.int64)
            values = np.full(4 * len(values), -1, dtype=np.int64)
            builder.insert_laws(keys, values, self.vectors[:self.n_laws],
                                np.arange(self.n_laws, dtype=np.int64))
        self.arrays = (keys, values, laws, pmf)


_banks: dict = {}  # (id(ruleset), role, dice model) -> (ruleset, _LawBank)


def _law_bank(ruleset, role: str, model: str, table: _UnitTable) -> _LawBank:
    key = (id(ruleset), role, model)
    found = _banks.get(key)
    if found is not None and found[0] is ruleset:
        return found[1]
    bank = _LawBank(ruleset.die_size, table.kinds, model)
    with _tables_lock:
        if len(_banks) >= 64:
            _banks.clear()
        _banks[key] = (ruleset, bank)
    return bank


def forget_laws() -> None:
    """Drop the compiled builder's law banks (the next side finds no law there: measured
    cold; forget_tables keeps them, as it keeps dice.hit_distribution's laws)."""
    with _tables_lock:
        _banks.clear()


_NO_STEPS = np.zeros((1, 1), dtype=np.int64)


def _built_side(spec: _SideSpec) -> Side | None:
    """build_side by the compiled builder (kernels/builder.py), or None where it does not
    take the spec (its edition: _unit_table; an order of losses with casualties chosen
    already whose steps are not each unit's hit points)."""
    table = _unit_table(spec.ruleset, spec.role)
    if table is None:
        return None
    index = table.index
    n_blocks, n_units = len(spec.blocks), len(table.names)
    forces = np.zeros((n_blocks, n_units), dtype=np.int64)
    extra = np.zeros((n_blocks, n_units + 2), dtype=np.int64)  # (builder.build_side's)
    probs = np.empty(n_blocks)
    for b, (prob, force, ipc, left) in enumerate(spec.blocks):
        row = forces[b]
        for name, count in force:
            row[index[name]] = count
        probs[b] = prob
        if ipc:
            extra[b, n_units] = ipc
        if left is not None:
            extra[b, :n_units] = left
            extra[b, n_units + 1] = 1
    static = _static(spec, table)
    if static is None:  # (casualty steps the builder takes as given)
        static = _static(spec, table, given=True)
        step_units, step_kinds = _given_steps(spec, table, forces)
        if step_units is None:
            return None
    else:
        step_units = step_kinds = _NO_STEPS
    by_rank, order_row, sections, side = static
    bank = _law_bank(spec.ruleset, spec.role, spec.dice_model, table)
    while True:
        keys, values, laws, pmf = bank.arrays
        status, a, b, *tables = builder.build_side(
            table.units, table.supports, table.targets, by_rank, order_row, sections, side,
            table.kind_slot, forces, extra, probs, step_units, step_kinds, keys, values, laws,
            pmf)
        if status == builder.BUILT:
            built = Side(*tables, table.names, spec.split)
            if a >= 0:  # (exact: the same float whatever the order of the sums)
                built.__dict__["mean_hit_combinations"] = a / built.n_states
            return built
        if status == builder.TOO_LARGE:
            _too_large(spec, a, b)
        bank.add(tables[0])


_statics: dict = {}  # _static's


def _static(spec: _SideSpec, table: _UnitTable, given: bool = False) -> tuple | None:
    """What builder.build_side takes of a spec besides its blocks: (by_rank, order, sections,
    side), kept per edition, role, order of losses and side options; None where the builder
    is given the casualty steps (orders it does not work out: smart, casualties chosen
    already) and given is False."""
    order = spec.order
    if not given and (order.preset == "smart" or order.chosen):
        return None
    key = (id(table), order.preset, order.sections, order.keep_land, order.aa_last, given,
           spec.split, spec.submerge)
    found = _statics.get(key)
    if found is not None and found[0] is table:
        return found[1]
    units, index = spec.ruleset.units, table.index
    sections = np.array([(index[units[name].damaged_form or name if units[name].hp > 1
                                else name], -1 if count is None else count)
                         for name, count in order.sections], dtype=np.int64).reshape(-1, 2)
    by_rank = table.by_rank["weakest" if order.preset == "weakest" else "cheapest"]
    side = np.array([spec.split[0], spec.split[1], spec.submerge, spec.ruleset.die_size,
                     len(table.kinds), MAX_STATES, MAX_TABLE_CELLS], dtype=np.int64)
    order_row = np.array([order.keep_land, order.aa_last, len(sections), given],
                         dtype=np.int64)
    static = (by_rank, order_row, sections, side)
    with _tables_lock:
        if len(_statics) >= 4096:
            _statics.clear()
        _statics[key] = (table, static)
    return static


def _given_steps(spec: _SideSpec, table: _UnitTable, forces: np.ndarray) -> tuple:
    """The blocks' casualty steps (orders.casualty_steps: an order the builder does not
    work out itself) as (units, kinds)[B, T], or (None, None) where a category's steps are
    not its units' hit points (casualties chosen already: each lost in one step)."""
    units, index = spec.ruleset.units, table.index
    hp = table.units[:, builder.U_HP] * table.units[:, builder.U_CASUALTY]
    categories = [_category(unit, spec.split) for unit in units.values()]
    lists = []
    for b, (_, force, _, _) in enumerate(spec.blocks):
        steps = casualty_steps(dict(force), units, spec.order, spec.ruleset.supports)
        counts, want = [0, 0, 0], [0, 0, 0]
        for name, _ in steps:
            counts[categories[index[name]]] += 1
        for i, n in enumerate(forces[b].tolist()):
            want[categories[i]] += n * int(hp[i])
        if counts != want:
            return None, None
        lists.append(steps)
    size = max(1, max(len(steps) for steps in lists))
    step_units = np.zeros((len(lists), size), dtype=np.int64)
    step_kinds = np.zeros((len(lists), size), dtype=np.int64)
    for b, steps in enumerate(lists):
        for t, (name, kind) in enumerate(steps):
            step_units[b, t] = index[name]
            step_kinds[b, t] = builder.DAMAGE if kind == "damage" else builder.KILL
    return step_units, step_kinds


def flat_state(side: Side, block: int, s: int, a: int, n: int) -> int:
    b = side.blocks[block]
    return int(b[B_OFFSET] + (s * b[B_RADIX_A] + a) * b[B_RADIX_N] + n)


# ---------------------------------------------------------------------------------------------
# Fire before round 1


def aa_blocks(attacker: dict[str, int], defender: dict[str, int], a_rules, d_units, flags,
              attacker_order: LossOrder, dice_model: str = "standard",
              die_size: int = 6) -> list[tuple[float, dict[str, int]]]:
    """The attacker's possible forces after round-1 AA fire, with their probabilities.

    Dice: one per attacking aircraft (`aa_dice = per_aircraft`) or min(aa_shots x guns,
    aircraft) (`per_gun`); each hits on the gun's aa_value (low luck: one group of that
    strength).  Losses: the attacker's order of losses restricted to aircraft (`aa_casualties =
    attacker_chooses`), or each die at its own aircraft, i.e. a uniformly random set of the
    aircraft shot at (`own_aircraft`; low luck: TripleA's rule, a sure hit on every full group
    of die / value aircraft of one type, the rest at random among the aircraft left over).
    """
    a_units = a_rules.units
    guns = {n: c for n, c in defender.items() if c and d_units[n].is_aa}
    aircraft = {n: c for n, c in attacker.items() if c and a_units[n].is_air}
    if not guns or not aircraft:
        return [(1.0, dict(attacker))]
    n_aircraft = sum(aircraft.values())
    outcomes_bound = (n_aircraft + 1 if flags["aa_casualties"] == "attacker_chooses"
                      else math.prod(c + 1 for c in aircraft.values()))
    if outcomes_bound > MAX_AA_OUTCOMES:
        raise BattleInputError(
            f"battle too large: {n_aircraft} aircraft against AA fire have up to "
            f"{outcomes_bound:,} outcomes (limit {MAX_AA_OUTCOMES:,}); " + TOO_LARGE_HINT)
    hit_value = max(d_units[n].aa_value for n in guns)
    if flags["aa_dice"] == "per_aircraft":
        n_dice = n_aircraft
    else:
        n_dice = min(n_aircraft, sum(c * d_units[n].aa_shots for n, c in guns.items()))
    hit_chances = hit_distribution({(hit_value, 1): n_dice}, die_size, dice_model)
    outcomes: dict[tuple, float] = {}
    air_order = [n for n, kind in casualty_steps(attacker, a_units, attacker_order,
                                                 a_rules.supports)
                 if kind == "kill" and n in aircraft]
    names = list(aircraft)
    for hits, p_hits in enumerate(hit_chances):
        if p_hits == 0.0:
            continue
        if flags["aa_casualties"] == "attacker_chooses":
            lost: dict[str, int] = {}
            for name in air_order[:hits]:
                lost[name] = lost.get(name, 0) + 1
            key = tuple(sorted(lost.items()))
            outcomes[key] = outcomes.get(key, 0.0) + p_hits
            continue
        sure = dict.fromkeys(names, 0)
        pool = dict(aircraft)
        if dice_model == "low_luck" and die_size % hit_value == 0:
            group = die_size // hit_value
            sure = {n: c // group for n, c in aircraft.items()}
            pool = {n: c % group for n, c in aircraft.items()}
        # the other hits fall on a uniformly random subset of the pool (multivariate
        # hypergeometric over types)
        rest = min(hits - sum(sure.values()), sum(pool.values()))
        total = math.comb(sum(pool.values()), rest)
        for lost_counts in _compositions(rest, [pool[n] for n in names]):
            pairs = [(n, sure[n] + k) for n, k in zip(names, lost_counts, strict=True)]
            ways = math.prod(math.comb(pool[n], k) for n, k in zip(names, lost_counts,
                                                                   strict=True))
            key = tuple(sorted(pairs))
            outcomes[key] = outcomes.get(key, 0.0) + p_hits * ways / total
    return [(prob, {n: c - dict(key).get(n, 0) for n, c in attacker.items()})
            for key, prob in outcomes.items()]


@functools.lru_cache(maxsize=4096)
def _aa_outcomes(attacker: tuple, guns: tuple, a_rules, d_rules, ruleset, attacker_order,
                 dice_model: str, die_size: int) -> tuple:
    """aa_blocks of a battle, kept for the next battle with the same aircraft and guns
    (battles in bulk: battlecalc.batch): the attacker and the defender's AA guns as (unit,
    count) items in the edition's order, the outcomes as (probability, force items)."""
    return tuple((prob, tuple(force.items())) for prob, force in aa_blocks(
        dict(attacker), dict(guns), a_rules, d_rules.units, ruleset.flags, attacker_order,
        dice_model, die_size))


def _compositions(total: int, caps: list[int]):
    """All ways to write `total` as a sum of len(caps) parts with 0 <= part_i <= caps[i]."""
    if not caps:
        if total == 0:
            yield ()
        return
    for first in range(min(total, caps[0]) + 1):
        for rest in _compositions(total - first, caps[1:]):
            yield (first, *rest)


def bombardment(bombard: dict[str, int], landing_units: int, a_units, flags,
                dice_model: str = "standard", die_size: int = 6) -> Bombardment:
    """Which ships fire (strongest first where one ship per landing unit is the limit) and the
    law of their hits (one fire step: low luck sums their strength)."""
    ships = sorted(((a_units[n].bombard, n) for n, c in bombard.items() for _ in range(c)),
                   reverse=True)
    limit = landing_units if flags["bombard_per_landing_unit"] else len(ships)
    fired: dict[str, int] = {}
    unused: dict[str, int] = {}
    dice: dict[tuple[int, int], int] = {}
    for i, (value, name) in enumerate(ships):
        if i < limit:
            fired[name] = fired.get(name, 0) + 1
            dice[(value, 1)] = dice.get((value, 1), 0) + 1
        else:
            unused[name] = unused.get(name, 0) + 1
    return Bombardment(np.array(hit_distribution(dice, die_size, dice_model)),
                       bool(flags["bombard_return_fire"]), fired, unused)


# ---------------------------------------------------------------------------------------------
# The battle


def round_rules(flags, sea: bool, attacker_submerge: str, defender_submerge: str,
                bombard_in_round: bool, simple: int, dice_model: str = "standard",
                die_size: int = 6) -> np.ndarray:
    """The round-rule vector of the kernels (kernels/layout.py) from an edition's flags."""
    strike = {"never": STRIKE_NEVER, "always": STRIKE_ALWAYS,
              "unless_enemy_destroyer": STRIKE_UNLESS_DESTROYER}
    rules = np.zeros(RULE_COLS, dtype=np.int64)
    if sea:
        rules[RU_A_STRIKE] = strike[flags["attacker_sub_first_strike"]]
        rules[RU_D_STRIKE] = strike[flags["defender_sub_first_strike"]]
    rules[RU_STRIKE_RETURN] = flags["strike_casualties_fire_back"] == "with_own_destroyer"
    rules[RU_AIR_ALWAYS] = flags["air_hits_subs"] == "always"
    rules[RU_SUBMERGE] = {"end_of_round": 0, "before_fire": 1, "never": 2}[
        flags["submerge_timing"] if sea else "never"]
    rules[RU_LONE_RETREAT] = flags["lone_attacking_transports"] == "one_volley_then_retreat"
    rules[RU_A_POLICY] = SUBMERGE_POLICIES.index(attacker_submerge)
    rules[RU_D_POLICY] = SUBMERGE_POLICIES.index(defender_submerge)
    rules[RU_BOMBARD] = bombard_in_round
    rules[RU_SIMPLE] = simple  # (compile._simple)
    rules[RU_LOW_LUCK] = dice_model == "low_luck"
    rules[RU_DIE] = die_size
    return rules


def _simple(battle, split: bool, a_transports: bool) -> int:
    """RU_SIMPLE of a battle: 1 a land battle whose sides are single walks (split: a side has
    a category, subs or aircraft hit apart); SIMPLE_EXACT a sea battle without submarines
    (two single casualty walks as well: every hit may land on any unit, rules.assign takes
    the next step of the side's one walk; the exact solver may play them by its walk path,
    solver.plan.SolvePlan.sea_walk), unless the attacker has transports an edition makes
    retreat when left alone (RU_LONE_RETREAT: only the general round plays that); else 0."""
    if split:
        return 0
    if not battle.sea:
        return 1
    lone = battle.rules.flags["lone_attacking_transports"] == "one_volley_then_retreat"
    return SIMPLE_EXACT if not (lone and a_transports) else 0


def _transports(force: dict[str, int], units) -> bool:
    return any(count and units[n].transport for n, count in force.items())


def _force_key(force: dict[str, int]) -> tuple:
    return tuple(sorted((n, c) for n, c in force.items() if c))


def compile_battle(battle, build: Callable[[_SideSpec], Side] | None = None) -> CompiledBattle:
    """Both sides' tables for a validated battle (api.Battle).  build: what builds (or finds)
    a side's tables from its _SideSpec (default build_side and its cache; battlecalc.batch
    passes a larger cache of small sides)."""
    build = build or build_side
    start = battle.start
    if start:  # (the units chosen as casualties back in, lost first: starts.start_view)
        battle = starts.start_view(battle)
    a_rules, d_rules = battle.attacker_rules, battle.defender_rules
    a_units, d_units = a_rules.units, d_rules.units
    flags = battle.rules.flags
    a_subs = any(a_units[n].submarine for n in battle.attacker)
    d_subs = any(d_units[n].submarine for n in battle.defender)
    dice_model, die_size = battle.dice, battle.rules.die_size
    bombard = NO_BOMBARDMENT
    if battle.bombard:
        bombard = bombardment(battle.bombard, sum(battle.landing.values()), a_units, flags,
                              dice_model, die_size)
        if start:  # its hits to come, rolled (a law of one count), or none left
            bombard = starts.bombardment_left(start, bombard) or NO_BOMBARDMENT
    bombarding = bombard is not NO_BOMBARDMENT
    # aircraft are a category of their own where enemy subs make hits on them special (and a
    # defender's where bombardment might reach them: below)
    a_split = (a_subs, d_subs)
    d_split = (d_subs, a_subs)
    guns = () if battle.sea or not starts.aa_to_come(start) else _guns(battle.defender, d_units)
    a_spec = _attacker_spec(battle, a_split, guns)
    d_spec = _defender_spec(battle, d_split)
    attacker, defender = build(a_spec), build(d_spec)
    if bombarding and not d_split[1] and not _ground_first(defender, d_units,
                                                           len(bombard.pmf) - 1):
        d_split = (d_subs, True)
        d_spec = replace(d_spec, split=d_split)
        defender = build(d_spec)
    if bombarding and not bombard.return_fire:
        defender = _bombarded_start(defender, bombard)
    simple = _simple(battle, any(a_split) or any(d_split), _transports(battle.attacker, a_units))
    rules = round_rules(flags, battle.sea, battle.attacker_submerge, battle.defender_submerge,
                        bombarding and bombard.return_fire, simple, dice_model, die_size)
    compiled = CompiledBattle(attacker, defender, rules, bombard, None, battle.sea)
    if battle.retreat:
        compiled = with_retreat(battle, compiled, a_spec)
    if battle.retreat.optimal or "optimal" in (battle.attacker_submerge,
                                               battle.defender_submerge):
        compiled = replace(compiled, objective=battle.objective)
    if start:
        compiled = starts.with_start(battle, compiled)
    return compiled


def compile_plain(battle, build: Callable[[_SideSpec], Side], kept: dict) -> CompiledBattle:
    """compile_battle(battle, build) of a battle without an amphibious assault, with what it
    computes of one side kept in `kept` for the next battle: a dict its caller holds for
    battles of one edition and options (spec.BattleForm), as battlecalc.batch does.  A side's
    tables depend on its own units, whether the enemy has submarines and (a land battle's
    attacker) the enemy's AA guns, the attacker's retreat tables on its tables and the
    retreat policy: each distinct side is specified and built once (an army found by its
    dict's identity first: a lane's battles share the dicts of their armies, _kept_army)."""
    d_army, a_army = battle.defender, battle.attacker
    enemy = _kept_army(kept, "defender", d_army)
    if enemy is None:
        d_units = battle.defender_rules.units
        enemy = _keep_army(kept, "defender", d_army, (
            any(d_units[n].submarine for n in d_army),
            () if battle.sea else _guns(d_army, d_units), {}))
    d_subs, guns, defenses = enemy
    mine = _kept_army(kept, "attacker", a_army)
    if mine is None:
        a_units = battle.attacker_rules.units
        mine = _keep_army(kept, "attacker", a_army, (
            any(a_units[n].submarine for n in a_army), _transports(a_army, a_units), {}))
    a_subs, a_transports, attacks = mine
    found = attacks.get((d_subs, guns))
    if found is None:
        a_spec = _attacker_spec(battle, (a_subs, d_subs), guns)
        found = attacks[(d_subs, guns)] = (build(a_spec), a_spec)
    attacker, a_spec = found
    defender = defenses.get(a_subs)
    if defender is None:
        defender = defenses[a_subs] = build(_defender_spec(battle, (d_subs, a_subs)))
    simple = _simple(battle, a_subs or d_subs, a_transports)
    rules = kept.get(("rules", simple, battle.sea))
    if rules is None:
        rules = kept[("rules", simple, battle.sea)] = round_rules(
            battle.rules.flags, battle.sea, battle.attacker_submerge, battle.defender_submerge,
            False, simple, battle.dice, battle.rules.die_size)
    if not battle.retreat:
        return CompiledBattle(attacker, defender, rules, NO_BOMBARDMENT, None, battle.sea)
    key = ("retreat", id(attacker), battle.retreat)  # (the attacker is kept: its id stays)
    retreating = kept.get(key)
    if retreating is None:  # (with_retreat reads the defender of no battle)
        compiled = with_retreat(battle, CompiledBattle(attacker, defender, rules,
                                                       NO_BOMBARDMENT, None, battle.sea), a_spec)
        retreating = kept[key] = (compiled.attacker, compiled.retreat)
    return CompiledBattle(retreating[0], defender, rules, NO_BOMBARDMENT, retreating[1],
                          battle.sea, objective=battle.objective if battle.retreat.optimal
                          else None)


def _kept_army(kept: dict, side: str, army: dict) -> tuple | None:
    """compile_plain's entry of an army (what it keeps of the side), by the dict's identity
    (a dict lookup, where its items would be hashed), else by its items (an equal army given
    in another dict: the entry is shared, and kept by this dict's identity too); None where
    the army is new.  An army's dict must not change while `kept` lives (a lane's are
    BattleForm.army's, which nothing changes)."""
    found = kept.get((side, id(army)))
    if found is not None and found[0] is army:  # (the dict is kept with it: its id stays)
        return found[1]
    entry = kept.get((side, tuple(army.items())))
    if entry is not None:
        kept[(side, id(army))] = (army, entry)
    return entry


def _keep_army(kept: dict, side: str, army: dict, entry: tuple) -> tuple:
    kept[(side, tuple(army.items()))] = entry
    kept[(side, id(army))] = (army, entry)
    return entry


def _guns(defender: dict[str, int], d_units) -> tuple:
    """A land defender's AA guns as (unit, count) items."""
    return tuple((n, c) for n, c in defender.items() if d_units[n].is_aa)


def _submerges(battle, policy: str) -> bool:
    """Whether a side's submarines may submerge (its policy, in a sea battle of an edition
    where they may)."""
    return (battle.sea and battle.rules.flags["submerge_timing"] != "never"
            and policy != "never")


def _attacker_spec(battle, split: tuple[bool, bool], guns: tuple) -> _SideSpec:
    """The attacker's _SideSpec: its blocks are its forces after round-1 AA fire (land) from
    the defender's guns (unit, count items)."""
    a_rules = battle.attacker_rules
    a_units = a_rules.units
    blocks = [(1.0, battle.attacker)]
    if battle.kamikaze_struck:  # the law of its force after kamikaze strikes (reactions)
        blocks = after_strikes(a_rules, battle.attacker, battle.kamikaze_struck,
                               battle.dice == "low_luck")
    if not battle.sea:
        blocks = [(prob, dict(force)) for prob, force in _aa_outcomes(
            tuple(battle.attacker.items()), guns, a_rules, battle.defender_rules, battle.rules,
            battle.attacker_order, battle.dice, battle.rules.die_size)]
        if battle.start.step == "aa_casualties":  # its hits rolled: the forces they leave
            blocks = starts.aa_hits_taken(battle, blocks)
    cost = sum(n * a_units[name].cost for name, n in battle.attacker.items())
    a_blocks = tuple(
        (prob, _force_key(force), cost - sum(n * a_units[name].cost for name, n in force.items()),
         None)
        for prob, force in blocks)
    return _SideSpec(a_rules, "attack", battle.attacker_order, split,
                     _submerges(battle, battle.attacker_submerge), a_blocks, battle.dice)


def _defender_spec(battle, split: tuple[bool, bool]) -> _SideSpec:
    return _SideSpec(battle.defender_rules, "defense", battle.defender_order, split,
                     _submerges(battle, battle.defender_submerge),
                     ((1.0, _force_key(battle.defender), 0, None),), battle.dice)


def _ground_first(side: Side, units, hits: int) -> bool:
    """Whether the first `hits` casualty steps of a side without categories take no aircraft:
    then bombardment hits (never on aircraft) land where the walk puts them, and the side
    needs no aircraft category (the fast path stays open)."""
    air = np.array([units[name].is_air for name in side.unit_names])
    steps = side.survivors[:hits + 1]  # one block: state k has taken k steps
    return not ((steps[:-1] - steps[1:])[:, air] > 0).any()


def _bombarded_start(defender: Side, bombard: Bombardment) -> Side:
    """Bombardment before round 1 (no return fire): the defender starts with the hits taken
    by its land units (category n), in its order of losses."""
    start = np.zeros(defender.n_states)
    last = int(defender.blocks[0, B_RADIX_N]) - 1
    for hits, p in enumerate(bombard.pmf):
        if p > 0.0:
            start[flat_state(defender, 0, 0, 0, min(hits, last))] += p
    return Side(defender.blocks, defender.states, defender.rows, defender.pmf, defender.cdf,
                start, defender.survivors, defender.ipc_lost, defender.unit_names,
                defender.split)


# ---------------------------------------------------------------------------------------------
# Retreats


def _may_withdraw(battle, side: Side) -> np.ndarray:
    """Units of each type that may withdraw at each attacker state [F, U].

    All of them, except in an amphibious assault: landed units never retreat (a type's
    casualties are counted against its landed units first), and with amphibious_retreat =
    "air_only" (Revised) only aircraft do.
    """
    survivors = side.survivors
    if not battle.landing:
        return survivors.copy()
    flag = battle.rules.flags["amphibious_retreat"]
    allowed = np.zeros_like(survivors)
    for i, name in enumerate(side.unit_names):
        unit = battle.attacker_rules.units[name]
        if unit.is_air and flag != "none":
            allowed[:, i] = survivors[:, i]
        elif flag == "air_and_overland":
            allowed[:, i] = np.minimum(survivors[:, i], battle.overland.get(name, 0))
    return allowed


def retreat_vector(policy) -> tuple[np.ndarray, float]:
    """The retreat vector and win-probability threshold of kernels.round_model.should_retreat, from
    a spec.Retreat."""
    vector = np.array([
        1 if policy else 0,
        policy.after or 0,
        NO_LIMIT if policy.when_left is None else policy.when_left,
        1 if policy.only_air else 0,
        NO_LIMIT if policy.strafe is None else policy.strafe,
    ], dtype=np.int64)
    below = NO_THRESHOLD if policy.below is None else float(policy.below)
    if policy.optimal:  # the policy found: win_value 1.0 where it presses on, 0.0 retreats
        below = OPTIMAL_MASK
    return vector, below


def with_retreat(battle, compiled: CompiledBattle, a_spec: _SideSpec) -> CompiledBattle:
    """The battle with its retreat policy as kernel arrays.  A retreat at a state where some
    but not all units may withdraw (an amphibious assault) goes on in a block of its own: the
    units that stay, with the withdrawn ones as survivors and the IPC lost carried along."""
    att = compiled.attacker
    leaving = np.minimum(_may_withdraw(battle, att), att.survivors)
    staying = att.survivors - leaving
    n_main = att.n_states
    remainder = np.full(n_main, FULL_RETREAT, dtype=np.int64)
    may = (att.states[:, S_INFO] & layout.I_IN_BATTLE) != 0
    extra = []
    names = att.unit_names
    for f in np.flatnonzero(may & staying.any(axis=1)):
        if not leaving[f].any():
            may[f] = False  # nothing may withdraw
            continue
        force = {names[i]: int(c) for i, c in enumerate(staying[f]) if c}
        extra.append((f, (0.0, _force_key(force), int(att.ipc_lost[f]),
                          tuple(int(c) for c in leaving[f]))))
    if extra:
        spec = _SideSpec(a_spec.ruleset, a_spec.role, a_spec.order, a_spec.split,
                         a_spec.submerge, a_spec.blocks + tuple(b for _, b in extra),
                         a_spec.dice_model)
        att = build_side(spec)
        for k, (f, _) in enumerate(extra):
            remainder[f] = att.blocks[len(a_spec.blocks) + k, B_OFFSET]
    remainder = np.concatenate([remainder, np.full(att.n_states - n_main, FULL_RETREAT,
                                                   dtype=np.int64)])
    may = np.concatenate([may, np.zeros(att.n_states - n_main, dtype=bool)])
    states = att.states.copy()
    states[:, S_MAY_RETREAT] = may
    att = Side(att.blocks, states, att.rows, att.pmf, att.cdf, att.start, att.survivors,
               att.ipc_lost, att.unit_names, att.split)
    vector, below = retreat_vector(battle.retreat)
    retreat = RetreatTables(vector, below, np.zeros((1, 1)), remainder)
    return CompiledBattle(att, compiled.defender, compiled.rules, compiled.bombardment, retreat,
                          compiled.sea)
