"""A side's tables (kernels/layout.py documents their columns): the casualty walks of its
blocks, the hit laws of what is left at each step, its states, survivors and IPC lost.

The side model: a side is up to three loss categories, each a casualty walk in the side's
order of losses restricted to the category: ``s`` submarines, ``a`` aircraft, ``n`` every other
unit.  Categories exist only where some fire step treats them differently (submarine hits never
land on aircraft; aircraft may not hit submarines without a destroyer; shore bombardment hits
only land units), so a land battle is one walk, the fast path.  For each step of each walk the
tables hold the hit distribution of what is left of that category, the rank of its next
casualty in the whole order of losses (hits are assigned by rank), and the survivors and IPC
lost.  A side's state is one step per category, within a block: the force it began the battle
with.

Two builders make the same tables, to the last bit (tests/kernels/test_builder.py): the
compiled one (kernels/builder.py, driven by _built_side: a side in one kernel call, its hit laws
from a law bank of the dice of one edition and role), once its kernels cost no compiling
(solver.KernelState.ready: a first use, its numba cache cold, does not wait for them), and the
Python one (_python_side, with its caches of fire laws, casualty walks and block tables) before
that.  Side.builder says which built a side; a plan shows it (SolvePlan.side_builders).
"""


from __future__ import annotations

import functools
import itertools
import threading
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .. import orders
from ..dice import _hit_distribution, force_dice, hit_distribution, strength
from ..errors import BattleInputError
from ..kernels import builder, layout
from ..kernels.layout import (
    B_KIND,
    B_OFFSET,
    B_RADIX_A,
    B_RADIX_N,
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
from ..orders import LossOrder, casualty_steps
from ..solver.plan import LIMITS, KernelState
from .cache import TABLES

TABLES.store(orders._BASE_RANKS)  # (a base order of losses: kept with the tables)

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
    builder: str = "python"  # which builder made the tables: "compiled" or "python"

    # (cached, as the properties below: a side is shared by the battles of many calls, which
    # read these several times each)
    @functools.cached_property
    def n_states(self) -> int:
        return int(self.states.shape[0])

    @functools.cached_property
    def nbytes(self) -> int:
        """The bytes of its arrays (what compile.cache.TABLES counts)."""
        return sum(a.nbytes for a in (self.blocks, self.states, self.rows, self.pmf, self.cdf,
                                      self.start, self.survivors, self.ipc_lost))

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


# ---------------------------------------------------------------------------------------------
# Walks and blocks


def _category(unit, split: tuple[bool, bool]) -> int:
    if split[0] and unit.submarine:
        return CAT_S
    if split[1] and unit.is_air:
        return CAT_A
    return CAT_N


# What recurs across sides is kept (compile.cache.TABLES; all dropped by forget_tables, which
# api.forget_compiled calls): a force's fire law (_fire_law, ~1 KB an entry for small forces, a
# long law's array being the dice cache's own: at most ~70 MB), a block force's casualty walks
# (_kept_walks, forces of at most KEPT_WALK_UNITS units, ~2.5 KB an entry for 3-6 units: at
# most ~40 MB), a block's size check (_block_size, ~0.5 KB, at most ~8 MB), the tables of a
# block (_block, blocks of at most BLOCK_CACHE_STATES states) and of a side (build_side), the
# last two within the tables' byte budget.  Measured: 6,000 fresh 3-6-unit battles leave 1,801
# laws, 2,678 walks and 2,678 blocks (10 MB), 25 MB in all.  A new army's walks pass through
# forces other armies had; a battle's retreat and bombardment variants rebuild the same
# blocks; round-1 AA outcomes recur across defenders.
CACHE_ENTRIES = 65_536
WALK_ENTRIES = 16_384
KEPT_WALK_UNITS = 64
SHORT_LAW = 32  # laws of at most this many entries: tables built from their Python floats
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


_kept_walks = TABLES.memo(WALK_ENTRIES)(_build_walks)


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
    hit_eps: float = LIMITS.hit_eps  # hit counts less likely than this are cut (R_HI)


class _Fire(NamedTuple):
    """A force's fire law as the tables hold it: pmf, cdf (running sums, exactly 1
    from `top` on), top (most hits), hi (most hits more likely than hit_eps; the least, R_LO,
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


@TABLES.memo(256)
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


@TABLES.memo(CACHE_ENTRIES)
def _fire_law(ruleset, role: str, force: tuple, dice_model: str, hit_eps: float) -> _Fire:
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
    pmf = hit_distribution(dice, ruleset.die, dice_model)  # (a biased die's law: Ruleset.die)
    flags = ((layout.I_DESTROYER if anti_sub else 0)
             | (layout.I_DEFENCELESS if defenceless else 0)
             | (layout.I_TRANSPORTS if transports else 0))
    power, n_dice = strength(dice, ruleset.die_size), sum(dice.values())
    if len(pmf) > SHORT_LAW:  # (its tables are built from the array: _hit_tables)
        positive = np.flatnonzero(pmf > 0.0)
        top = int(positive[-1]) if len(positive) else len(pmf) - 1
        kept = np.flatnonzero(pmf[1:] > hit_eps)
        hi = int(kept[-1]) + 1 if len(kept) else 0
        return _Fire(None, None, top, hi, power, flags, n_dice, pmf)
    law = pmf.tolist()
    top = hi = len(law) - 1
    while top > 0 and not law[top] > 0.0:
        top -= 1
    while hi > 0 and not law[hi] > hit_eps:
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
    laws = [[_fire_law(spec.ruleset, spec.role, f, spec.dice_model, spec.hit_eps)
             for f in walk.forces]
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


def _block(force: tuple, spec: _SideSpec, names: tuple, land: tuple) -> _BlockTables:
    """_block_tables, kept (compile.cache.TABLES) where the block has at most
    BLOCK_CACHE_STATES states."""
    key = ("block", force, spec.ruleset, spec.role, spec.order, spec.split, spec.submerge,
           spec.dice_model, spec.hit_eps)
    return TABLES.kept(key, lambda: _block_tables(force, spec, names, land),
                       keep=_block_size(force, spec.ruleset, spec.role, spec.split,
                                        spec.submerge)[0] <= BLOCK_CACHE_STATES)


def forget_tables() -> None:
    """Drop every kept side table and what they are built from (fire laws, casualty walks,
    block tables, round-1 AA outcomes, base orders of losses): the next build is as for a
    battle never seen (the laws of dice groups, battlecalc.dice, are kept, and the compiled
    builder's edition tables and law banks)."""
    TABLES.clear()


# the compiled builder's kernels that _built_side calls (the side, its law bank's)
BUILDER_KERNELS = tuple((builder.__name__, name) for name in ("build_side", "find_law",
                                                              "insert_laws", "law_columns"))


def build_side(spec: _SideSpec, kernels: KernelState | None = None) -> Side:
    """A side's tables from its blocks (see the module docstring): built by the compiled
    builder (kernels/builder.py, _built_side) where the kernels' state `kernels` (default:
    the process's, solver.KernelState.now) has it ready (compiled for every solve, or in this
    process or numba's cache already: KernelState.ready), else (and for a spec it does not
    take) by the Python builder (_python_side), which a first use never waits for numba to
    compile; the same arrays either way, Side.builder saying which.

    Rows: every block's n-category steps first, in block order, then the s and a steps; so a
    side that is one walk per block (no s or a category) has row index = flat state index.
    Kept (compile.cache.TABLES) by its spec.
    """
    return TABLES.kept(("side", spec), lambda: _new_side(spec, kernels))


def _new_side(spec: _SideSpec, kernels: KernelState | None = None) -> Side:
    """build_side's side, built now."""
    if kernels is None:
        kernels = KernelState.now(BUILDER_KERNELS)
    if kernels.ready(BUILDER_KERNELS):
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


@TABLES.memo(CACHE_ENTRIES)
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


# (id(ruleset), role) -> (ruleset, _UnitTable or None)
_unit_tables: dict = TABLES.edition("unit tables")
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
    above hit_eps and its low-luck strength.  Kept for the process (at most MAX_BANK_LAWS
    laws and MAX_BANK_FLOATS probabilities, then emptied), as dice.hit_distribution keeps the
    laws of dice groups: a law is the same for every battle whose dice it is."""

    def __init__(self, die: int, kinds: tuple, model: str, hit_eps: float, law=None):
        self.die, self.model, self.hit_eps = die, model, hit_eps
        self.law = die if law is None else law  # (the laws' die: a biased one's, Ruleset.die)
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
            found = [_hit_distribution(g, self.law, self.model) for g in groups]
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
                top, hi = builder.law_columns(law, self.hit_eps)
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


_banks: dict = TABLES.edition("law banks")  # (id(ruleset), role, dice model) -> (ruleset, _LawBank)


def _law_bank(ruleset, role: str, model: str, table: _UnitTable, hit_eps: float) -> _LawBank:
    key = (id(ruleset), role, model, hit_eps)
    found = _banks.get(key)
    if found is not None and found[0] is ruleset:
        return found[1]
    bank = _LawBank(ruleset.die_size, table.kinds, model, hit_eps, ruleset.die)
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
    bank = _law_bank(spec.ruleset, spec.role, spec.dice_model, table, spec.hit_eps)
    while True:
        keys, values, laws, pmf = bank.arrays
        status, a, b, *tables = builder.build_side(
            table.units, table.supports, table.targets, by_rank, order_row, sections, side,
            table.kind_slot, forces, extra, probs, step_units, step_kinds, keys, values, laws,
            pmf)
        if status == builder.BUILT:
            built = Side(*tables, table.names, spec.split, "compiled")
            if a >= 0:  # (exact: the same float whatever the order of the sums)
                built.__dict__["mean_hit_combinations"] = a / built.n_states
            return built
        if status == builder.TOO_LARGE:
            _too_large(spec, a, b)
        bank.add(tables[0])


_statics: dict = TABLES.edition("side statics")  # _static's


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

