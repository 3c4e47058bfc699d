"""Many battles in one call: :func:`solve_many`, thousands of small exact battles a second.

    >>> import battlecalc
    >>> rows = battlecalc.solve_many([{"attacker": "1 inf", "defender": "1 inf"},
    ...                               {"attacker": "2 inf", "defender": "1 inf"}],
    ...                              rules="revised", method="exact")
    >>> [round(p, 6) for p in rows["attacker_win"]]
    [0.25, 0.676724]

Each battle is checked as :func:`battlecalc.simulate` checks its arguments (battlecalc.spec)
and solved as simulate would solve it, with the same answer.  Battles whose keywords differ
only in their armies and seeds (one edition and set of options: a lane) are checked through
one spec.BattleForm (the options once, each distinct army once) and compiled by
compile.compile_plain (each distinct side once), without simulate_spec's every check per
battle: a lane takes battles from their start without an amphibious assault, technologies,
keep_land, retreat_below, decisions or reactions, whose checks never read the armies (a
retreat policy reads their sizes); the
others, and a lane's battles that fail its checks (simulate_spec then words the error), are
checked one by one.  The small exact ones (an estimated solve of at most
solver.plan.Limits.parallel_seconds, where simulate too solves in one thread: solver.batch's
batchable plans) are solved together:
their sides' tables come from a cache of small sides (a side's tables depend only on its
units, its technologies, its order of losses and a few options of the battle), every battle's
tables are laid end to end in flat arrays and one compiled loop (kernels/batch.py) solves them
one after the other, on the engine's threads (battlecalc.set_threads); their result columns
are computed for all of them at once.  The others (Monte Carlo, larger battles,
--retreat-below, the law of rounds, decisions solved, the defender's reactions, battles that
start where they stand, formula editions) go through simulate's own engine one by one.
"""

from __future__ import annotations

import contextlib
import gc
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from . import api
from .army import format_army
from .compile import build_side, compile_battle, compile_plain
from .errors import BattleInputError, quoted
from .options import BY_NAME, FORMULA_OPTIONS, OPTIONS, is_empty, read
from .results import OUTCOME_KEYS, PERCENTILES, _present_units, ipc_percentiles_of
from .solver.batch import batch_seconds, offsets, solve_batch
from .spec import PLAIN_TYPES, START, FormulaSpec, battle_form, check_seed, simulate_spec

# simulate's keywords (the table of options, battlecalc.options): those a battle may set, and
# the defaults of all (a battle of solve_many is one battle: no waves, no counter-attack, no
# progress hook)
NOT_HERE = tuple(o.name for o in OPTIONS if o.kind == "callable" or o.applies == {"waves"})
DEFAULTS = {o.name: o.default for o in OPTIONS if not o.formula_only}
KEYWORDS = tuple(o.name for o in OPTIONS if o.name not in NOT_HERE)
ARMY_SIDES = ("attacker", "defender", "landing", "bombard")  # SIDE.UNIT columns (sweep's)

# The cache of small sides' tables (compile.build_side's own cache keeps 256 sides of any
# size): sides of at most SMALL_SIDE_STATES states, SIDE_CACHE_BYTES of arrays in all, the
# oldest dropped first.
SMALL_SIDE_STATES = 4096
SIDE_CACHE_BYTES = 64 << 20
_sides: dict = {}
_side_bytes = [0]
_side_lock = threading.Lock()


def _side(spec):
    """A side's tables (compile._SideSpec -> compile.Side), from the cache of small sides."""
    cached = _sides.get(spec)
    if cached is not None:
        return cached[0]
    side = build_side.__wrapped__(spec)  # (not through build_side's cache: no double keeping)
    if side.n_states <= SMALL_SIDE_STATES:
        size = sum(a.nbytes for a in (side.blocks, side.states, side.rows, side.pmf, side.cdf,
                                      side.start, side.survivors, side.ipc_lost))
        with _side_lock:
            while _sides and _side_bytes[0] + size > SIDE_CACHE_BYTES:
                _side_bytes[0] -= _sides.pop(next(iter(_sides)))[1]
            if spec not in _sides:
                _sides[spec] = (side, size)
                _side_bytes[0] += size
    return side


# ---------------------------------------------------------------------------------------------
# Reading the battles


def _battle_arguments(given: Mapping[str, Any]) -> dict[str, Any]:
    """simulate's arguments (as battlecalc.spec.simulate_spec takes them) of one battle."""
    if not isinstance(given, Mapping):
        raise BattleInputError(
            f"a battle must be a {{keyword: value}} mapping, got {quoted(given)}")
    args = dict(DEFAULTS)
    formula: dict[str, Any] = {}
    for name, value in given.items():
        _check_keyword(name, value)
        if name in NOT_HERE:
            continue
        if name in FORMULA_OPTIONS:
            formula[name] = value
        else:
            args[name] = value
    args["formula_options"] = formula
    return args


def _cell(value: Any) -> bool:
    """Whether a table cell holds a value (None, blank text, NaN and pandas' NA do not)."""
    if value is None or is_empty(value):
        return False
    try:
        import pandas as pd

        return value is not pd.NA and value is not pd.NaT
    except ImportError:  # pragma: no cover - pandas is a dependency
        return True


def frame_battles(frame) -> list[dict[str, Any]]:
    """The battles of a DataFrame, a row each: the cells of the columns named as simulate's
    keywords (``rules``, ``attacker``, ``sea``, ``retreat_after``, ...), read as battlecalc.sweep
    reads them (battlecalc.options.read; an empty cell is the default); other columns (labels,
    the result columns of an earlier run) are not read."""
    names = [str(c) for c in frame.columns]
    units = [n for n in names if n.split(".", 1)[0] in ARMY_SIDES and "." in n]
    if units:
        raise BattleInputError(
            f"solve_many reads armies from the attacker/defender/landing/bombard columns; "
            f"{units[0]!r} (SIDE.UNIT) is a column of battlecalc.sweep, which expands them")
    readable = [c for c, n in zip(frame.columns, names, strict=True)
                if n in KEYWORDS or n in NOT_HERE]
    battles = []
    for i, row in enumerate(frame[readable].to_dict("records") if readable else
                            [{}] * len(frame)):
        battle = {}
        for column, value in row.items():
            if _cell(value):
                try:
                    battle[str(column)] = read(BY_NAME[str(column)], value)
                except BattleInputError as exc:
                    raise BattleInputError(f"battle {i}: {exc}") from None
        battles.append(battle)
    return battles


# ---------------------------------------------------------------------------------------------
# Solving


class _Batch:
    """The small exact battles of a call: positions, checked battles, compiled tables."""

    def __init__(self):
        self.positions: list[int] = []
        self.battles: list = []
        self.compiled: list = []
        self.seconds: list = []  # (each one's estimate: solver.batch.batch_seconds)

    def add(self, position: int, battle, compiled, seconds: float) -> None:
        self.positions.append(position)
        self.battles.append(battle)
        self.compiled.append(compiled)
        self.seconds.append(seconds)

    def append(self, item: tuple) -> None:  # (the same battle again: _run's `seen`)
        self.add(*item)


def _frozen(value: Any) -> Any:
    """A hashable stand-in for a keyword's value (armies as {unit: count}, lists of unit
    names), told apart by type: True is not 1 (a bad flag and a good count must not meet)."""
    if isinstance(value, Mapping):
        return ("mapping", tuple((_frozen(k), _frozen(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_frozen(v) for v in value))
    hash(value)
    return (type(value), value)


def _key(given: Any):
    """The battle's keywords as a hashable key, or None (not a mapping, an unhashable
    value): battles with equal keys are the same battle."""
    if not isinstance(given, Mapping):
        return None
    try:
        return tuple(sorted((name, _frozen(value)) for name, value in given.items()))
    except TypeError:
        return None


def _batched(battle, run) -> bool:
    """Whether the battle can join the batch before it is compiled: exact or auto, none of
    the options whose work is a solve of its own (--retreat-below, the law of rounds, the
    defender's reactions: a battle for each choice, battlecalc.reactions), from its start (a
    battle that starts where it stands is solved as simulate solves it: the batch's plans are
    of battles from their start, solver.batch.batchable)."""
    return (run.method != "mc" and battle.retreat.below is None and not run.rounds_distribution
            and not battle.reactions and battle.start == START)


def _exact_and_small(compiled, run) -> tuple[bool, Any]:
    """Whether the batch solves the compiled battle (its plan is batchable: simulate would
    solve it exactly in one thread), and its estimate (solver.batch.batch_seconds: that of
    solver.batch.batch_plan, without making the plan)."""
    seconds = batch_seconds(compiled, run.method, run.trials)
    return seconds is not None, seconds


ARMIES = ("attacker", "defender")
NOT_FORM = (*ARMIES, "seed")  # (a sweep gives each battle a seed of its own: _Lane.battle)


def _form_key(given: Mapping[str, Any]) -> tuple | None:
    """A hashable key of a battle's keywords other than its armies and seed, or None (a value
    not of a plain type): battles with equal keys differ at most in their armies and seeds.
    Each value's type is part of the key (True and 1 stay apart)."""
    key = []
    for name, value in given.items():
        if name not in NOT_FORM:
            kind = type(value)
            if kind not in PLAIN_TYPES:
                return None
            key.append((name, kind, value))
    return tuple(key)


def _army_key(value: Any):
    """A hashable key of army notation or a {name: int} dict (None: of another kind)."""
    if type(value) is str:
        return value
    if type(value) is dict and set(map(type, value)) == _STR \
            and set(map(type, value.values())) == _INT:
        return tuple(value.items())
    return None


_STR, _INT = {str}, {int}


class _Lane:
    """The battles of a call with the same keywords but their armies (_form_key), checked
    through one spec.BattleForm (their armies each once) and compiled by
    compile.compile_plain (each distinct side once)."""

    def __init__(self, form, run):
        self.form, self.run = form, run
        self.armies: dict = {}  # (side, _army_key) -> BattleForm.army
        self.kept: dict = {}  # compile_plain's
        self.small: dict = {}  # (id of the attacker's Side, the defender's) -> _exact_and_small

    def army(self, value: Any, side: str):
        key = _army_key(value)
        if key is None:
            return self.form.army(value, side)
        found = self.armies.get((side, key))
        if found is None:
            found = self.armies[(side, key)] = self.form.army(value, side)
        return found

    def battle(self, given: Mapping[str, Any]):
        """The battle (spec.Battle) and its RunSpec (the lane's, with the battle's seed);
        BattleInputError where it is not a battle (simulate_spec words why)."""
        battle = self.form.battle(self.army(given.get("attacker"), "attacker"),
                                  self.army(given.get("defender"), "defender"))
        seed = check_seed(given.get("seed"))
        return battle, (self.run if seed is None else replace(self.run, seed=seed))

    def compiled(self, battle):
        """The battle compiled, and whether it is small (_exact_and_small)."""
        compiled = compile_plain(battle, _side, self.kept)
        pair = (id(compiled.attacker), id(compiled.defender))
        small = self.small.get(pair)
        if small is None:
            small = self.small[pair] = _exact_and_small(compiled, self.run)
        return compiled, small


def _lane(given: Mapping[str, Any]) -> _Lane | None:
    """The lane of a battle's keywords (None: they need simulate_spec's every check, or the
    battle is not for the batch: Monte Carlo, the law of rounds)."""
    try:
        args = {**_battle_arguments(given), "seed": None}  # (each battle's own: _Lane.battle)
    except BattleInputError:
        return None
    found = battle_form(args)
    if found is None or found[1].method == "mc" or found[1].rounds_distribution:
        return None
    return _Lane(*found)


def _one(battle, run, started: float) -> dict[str, Any]:
    """A battle solved on its own, as simulate solves it: its flat row."""
    if isinstance(battle, FormulaSpec):
        from .formula.engine import run_formula

        return run_formula(battle, run, started).flat_row()
    return api.solve(battle, run, started).flat_row()


TIMING = ("check", "compile", "one_by_one", "solve", "rows")  # _run's phases


def _run(battles: list, options: Mapping[str, Any], strict: bool):
    """Solve every battle: (parts, errors, timing).  parts: [(positions, {column: values})],
    each battle in one part; errors: {position: message} of the battles with no result
    (strict: the first one raises BattleInputError naming its battle instead, every battle
    being checked before any is solved); timing: the seconds spent in each phase (TIMING).
    Its callers run it with the collector paused (_collector_paused)."""
    timing = dict.fromkeys(TIMING, 0.0)
    clock = time.perf_counter
    errors: dict[int, str] = {}
    parts: list[tuple[list[int], dict[str, list]]] = []
    batch = _Batch()
    alone = []  # (position, battle, run, seconds its checks took) of those solved on their own

    def failed(position: int, exc: Exception) -> None:
        if strict and isinstance(exc, BattleInputError):
            raise BattleInputError(f"battle {position}: {exc}") from None
        if strict:
            raise exc
        errors[position] = (str(exc) if isinstance(exc, BattleInputError)
                            else f"{type(exc).__name__}: {exc}")

    seen: dict = {}  # a battle given again: its checks and tables once (same answer)
    lanes: dict = {}  # _form_key -> _Lane or None
    for position, given in enumerate(battles):
        started = clock()
        try:
            if options and isinstance(given, Mapping):
                given = {**options, **given}
            form_key = _form_key(given) if type(given) is dict else None
            if form_key is not None:
                lane = lanes.get(form_key, False)
                if lane is False:
                    lane = lanes[form_key] = _lane(given)
                if lane is not None:
                    try:
                        battle, run = lane.battle(given)
                    except BattleInputError:
                        pass  # (checked below, for simulate_spec's message)
                    else:
                        checked = clock()
                        timing["check"] += checked - started
                        compiled, (small, seconds) = lane.compiled(battle)
                        timing["compile"] += clock() - checked
                        if small:
                            batch.add(position, battle, compiled, seconds)
                            continue
                        alone.append((position, battle, run, clock() - started))
                        continue
            key = _key(given)
            if key is not None and key in seen:
                where, item = seen[key]
                where.append((position, *item[1:]))
                continue
            battle, run = simulate_spec(_battle_arguments(given))
            checked = clock()
            timing["check"] += checked - started
            if not isinstance(battle, FormulaSpec) and _batched(battle, run):
                compiled = compile_battle(battle, _side)
                small, seconds = _exact_and_small(compiled, run)
                timing["compile"] += clock() - checked
                if small:
                    batch.add(position, battle, compiled, seconds)
                    if key is not None:
                        seen[key] = (batch, (position, battle, compiled, seconds))
                    continue
            alone.append((position, battle, run, clock() - started))
            if key is not None:
                seen[key] = (alone, alone[-1])
        except Exception as exc:  # noqa: BLE001 - one bad battle must not lose the others
            failed(position, exc)
    for position, battle, run, checks in alone:
        solo = clock()
        try:
            row = _one(battle, run, solo - checks)  # (elapsed_s: its checks and its solve)
            parts.append(([position], {k: [v] for k, v in row.items()}))
        except Exception as exc:  # noqa: BLE001
            failed(position, exc)
        timing["one_by_one"] += clock() - solo
    if batch.positions:
        try:
            parts += _solve_batch(batch, timing)
        except Exception as exc:  # noqa: BLE001 - a failure of the batch marks its battles
            if strict:
                raise
            for position in batch.positions:
                failed(position, exc)
    return parts, errors, timing


@contextlib.contextmanager
def _collector_paused():
    """Python's cyclic garbage collector paused, then as it was (as msgpack pauses it to
    unpack): checking and compiling a batch makes many small objects that live to the end of
    the call (armies, specs, tables) and form no cycles, and the collector's passes over them
    took about a fifth of the time of a batch of new armies (benchmarks/bench_many.py)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _segment_sums(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Sums of values[offsets[i]:offsets[i + 1]] (every segment non-empty), along axis 0."""
    return np.add.reduceat(values, offsets[:-1], axis=0)


def _army_text(army: dict[str, int]) -> str:
    return format_army(army) if army else ""


def _memo(function, key_of):
    """function with its answers kept by key_of(*args) (for one batch: armies recur)."""
    kept: dict = {}

    def memo(*args):
        key = key_of(*args)
        if key not in kept:
            kept[key] = function(*args)
        return kept[key]

    return memo


def _described(battles: list, compiled: list, army_text) -> dict[str, list]:
    """The leading columns of the battles' rows (Result.flat_row: the battle and its
    policies, DESCRIBED), as simulate's exact result gives them (army_text: format_army)."""
    n = len(battles)
    orders = [(b.attacker_order, b.defender_order) for b in battles]
    retreats = [b.retreat for b in battles]
    bombardments = [c.bombardment for c in compiled]
    columns = {
        "rules": [b.rules.id for b in battles], "method": ["exact"] * n, "trials": [None] * n,
        "seed": [None] * n, "attacker": [army_text(b.attacker) for b in battles],
        "defender": [army_text(b.defender) for b in battles], "sea": [b.sea for b in battles],
        "attacker_tech": [",".join(b.attacker_tech) for b in battles],
        "defender_tech": [",".join(b.defender_tech) for b in battles],
        "landing": [_army_text(b.landing) for b in battles],
        "bombard": [_army_text(bombard.fired) for bombard in bombardments],
        "bombard_unused": [_army_text(bombard.unused) for bombard in bombardments],
        "attacker_submerge": [b.attacker_submerge for b in battles],
        "defender_submerge": [b.defender_submerge for b in battles],
        "attacker_ool": [a.text for a, _ in orders], "defender_ool": [d.text for _, d in orders],
        "keep_land": [a.keep_land for a, _ in orders], "aa_last": [d.aa_last for _, d in orders],
        "retreat_after": [r.after for r in retreats],
        "retreat_when_left": [r.when_left for r in retreats],
        "retreat_when_only_air": [r.only_air for r in retreats],
        "retreat_below": [r.below for r in retreats], "strafe": [r.strafe for r in retreats],
        "dice": [b.dice for b in battles]}
    return {name: columns[name] for name in DESCRIBED}


DESCRIBED = ("rules", "method", "trials", "seed", "attacker", "defender", "sea", "attacker_tech",
             "defender_tech", "landing", "bombard", "bombard_unused", "attacker_submerge",
             "defender_submerge", "attacker_ool", "defender_ool", "keep_land", "aa_last",
             "retreat_after", "retreat_when_left", "retreat_when_only_air", "retreat_below",
             "strafe", "dice")
VALUES = (*OUTCOME_KEYS, "takes_territory")
MEANS = ("attacker_ipc_loss", "defender_ipc_loss", "tuv_swing", "mean_rounds")


def _solve_batch(batch: _Batch, timing: dict[str, float]) -> list[tuple[list[int], dict]]:
    """Solve the batch and build its rows, a part per edition (their survivor columns): the
    descriptive columns as lists, the numbers as numpy arrays.  elapsed_s: the time spent on
    the batch's battles (checks, compiling, solving, rows), shared equally."""
    started = time.perf_counter()
    law = solve_batch(batch.compiled, seconds=batch.seconds)
    solved = time.perf_counter()
    timing["solve"] += solved - started
    a_off, d_off = offsets(np.diff(law.a_out)[:, 0]), offsets(np.diff(law.d_out)[:, 0])
    everyone = np.arange(len(batch.positions))
    a_rows = _rows(everyone, law.a_states, law.a_out)
    d_rows = _rows(everyone, law.d_states, law.d_out)
    att, dfn = law.attackers, law.defenders
    a_ipc_lost = np.concatenate([s.ipc_lost for s in att.unique])[a_rows[0]]
    d_ipc_lost = np.concatenate([s.ipc_lost for s in dfn.unique])[d_rows[0]]
    a_ipc = _segment_sums(law.a_final * a_ipc_lost, a_off)
    d_ipc = _segment_sums(law.d_final * d_ipc_lost, d_off)
    numbers = {key: law.outcomes[:, i] for i, key in enumerate(OUTCOME_KEYS)}
    numbers["takes_territory"] = law.takes
    numbers.update(mean_rounds=law.mean_rounds, attacker_ipc_loss=a_ipc,
                   defender_ipc_loss=d_ipc, tuv_swing=d_ipc - a_ipc)
    for side, ipc_lost, final, offs in (("attacker", a_ipc_lost, law.a_final, a_off),
                                        ("defender", d_ipc_lost, law.d_final, d_off)):
        for q, values in zip(PERCENTILES, ipc_percentiles_of(ipc_lost, final, offs),
                             strict=True):
            numbers[f"{side}_ipc_loss_percentiles.p{q}"] = values
    numbers["pruned"] = law.pruned

    editions: dict[int, list[int]] = {}  # the battles of each edition (one set of columns)
    for i, battle in enumerate(batch.battles):
        editions.setdefault(id(battle.rules), []).append(i)
    parts = []
    # (by the dict's identity: the batch holds every battle, and so its armies' dicts, to the
    # end of the call, and a lane's battles share the dicts of their armies)
    army_text = _memo(format_army, id)
    for members in map(np.asarray, editions.values()):
        units = tuple(batch.battles[members[0]].rules.units)
        columns: dict[str, Any] = _described([batch.battles[i] for i in members],
                                             [batch.compiled[i] for i in members], army_text)
        for name in (*VALUES, "mean_rounds", *MEANS[:3]):
            columns[name] = numbers[name][members]
        for side, sides, final, states, outs in (
                ("attacker", att, law.a_final, law.a_states, law.a_out),
                ("defender", dfn, law.d_final, law.d_states, law.d_out)):
            means = _survivor_means(members, sides, states, outs, final)
            rules = "attacker_rules" if side == "attacker" else "defender_rules"
            means *= _present_masks([getattr(batch.battles[i], side) for i in members],
                                    [getattr(batch.battles[i], rules) for i in members], units)
            for j, unit in enumerate(units):
                columns[f"{side}_survivors.{unit}"] = means[:, j]
        zero = np.zeros(len(members))
        for name in (*VALUES, *MEANS):
            columns[f"{name}_stderr"] = zero
        for name in VALUES:
            columns[f"{name}_ci95_low"] = columns[name]
            columns[f"{name}_ci95_high"] = columns[name]
        columns["pruned"] = numbers["pruned"][members]
        columns["elapsed_s"] = zero  # (its place among the columns; set below)
        for side in ("attacker", "defender"):
            for q in PERCENTILES:
                name = f"{side}_ipc_loss_percentiles.p{q}"
                columns[name] = numbers[name][members]
        parts.append(([batch.positions[i] for i in members], columns))
    timing["rows"] += time.perf_counter() - solved
    # (the checks of the battles solved on their own count here too: a small part)
    elapsed = (timing["check"] + timing["compile"] + timing["solve"]
               + timing["rows"]) / len(batch.positions)
    for _, columns in parts:
        columns["elapsed_s"] = np.full(len(columns["rules"]), elapsed)
    return parts


def _rows(members: np.ndarray, tables: np.ndarray, outputs: np.ndarray):
    """(rows of the members' tables, rows of their outputs), state by state: member i's
    states at tables[i] (rows of the distinct sides end to end) and outputs[i]."""
    size = tables[members, 1] - tables[members, 0]
    local = np.arange(size.sum()) - np.repeat(offsets(size)[:-1], size)
    return (np.repeat(tables[members, 0], size) + local,
            np.repeat(outputs[members, 0], size) + local)


def _present_masks(armies: list[dict[str, int]], rules: list, units: tuple[str, ...]):
    """[len(armies), U]: 1.0 for the units whose survivors Result reports for each army
    (results._present_units: its casualties and their damaged forms), else 0.0; each
    distinct army (its units) worked out once."""
    index: dict = {}
    rows = []
    which = np.empty(len(armies), dtype=np.int64)
    for i, (army, ruleset) in enumerate(zip(armies, rules, strict=True)):
        key = (tuple(army), id(ruleset))
        found = index.get(key)
        if found is None:
            found = index[key] = len(rows)
            present = set(_present_units(army, ruleset))
            rows.append([1.0 if unit in present else 0.0 for unit in units])
        which[i] = found
    return np.array(rows)[which]


def _survivor_means(members: np.ndarray, sides, tables: np.ndarray,
                    outputs: np.ndarray, final: np.ndarray) -> np.ndarray:
    """Mean survivors of each unit type [len(members), U] of the members (battles of one
    edition, U units)."""
    used = np.unique(sides.index[members])
    survivors = np.concatenate([sides.unique[u].survivors for u in used])
    starts = offsets(sides.unique[u].n_states for u in used)
    local = np.zeros(len(sides.unique), dtype=np.int64)
    local[used] = starts[:-1]
    # the members' tables as rows of `survivors`: their side's start there, not in the batch
    spans = tables.copy()
    spans[members, 0] = local[sides.index[members]]
    spans[members, 1] = spans[members, 0] + tables[members, 1] - tables[members, 0]
    table_rows, out_rows = _rows(members, spans, outputs)
    size = tables[members, 1] - tables[members, 0]
    # (only the unit types some side has: the others' means are 0)
    held = np.flatnonzero(survivors.any(axis=0))
    means = np.zeros((len(members), survivors.shape[1]))
    means[:, held] = _segment_sums(final[out_rows][:, None] * survivors[table_rows][:, held],
                                   offsets(size))
    return means


# ---------------------------------------------------------------------------------------------
# The public function and sweep's


def typed_column(column):
    """An object column with a dtype that keeps every value exact: whole numbers stay whole
    (nullable Int64 where some are missing, never float), text stays object (the types of
    sweep's table and of solve_many's)."""
    import pandas as pd

    kind = pd.api.types.infer_dtype(column, skipna=True)
    gaps = bool(column.isna().any())
    try:
        if kind == "boolean":
            return column.astype("boolean" if gaps else bool)
        if kind == "integer":
            return column.astype("Int64" if gaps else "int64")
        if kind in ("floating", "mixed-integer-float"):
            return column.astype("float64")
    except (TypeError, ValueError, OverflowError):
        pass
    return column.where(column.notna(), None) if gaps else column


def _typed(column: np.ndarray):
    """typed_column of an object column, the columns of one type without a gap (text, flags,
    whole numbers, floats, None: most of solve_many's) typed without pandas' inference."""
    import pandas as pd

    kinds = set(map(type, column.tolist()))
    if len(kinds) == 1:
        kind = kinds.pop()
        if kind is str or kind is type(None):
            return column
        if kind is bool:
            return column.astype(bool)
        if kind is float:
            return column.astype(np.float64)
        if kind is int:
            try:
                return column.astype(np.int64)
            except OverflowError:
                pass
    return typed_column(pd.Series(column)).array


def _listed(battles) -> list:
    import pandas as pd

    if isinstance(battles, pd.DataFrame):
        return frame_battles(battles)
    if isinstance(battles, (str, bytes, Mapping)) or not isinstance(battles, Iterable):
        raise BattleInputError(
            f"battles must be a list of {{keyword: value}} battles or a DataFrame, got "
            f"{quoted(battles)}")
    return list(battles)


def _check_keyword(name: str, value: Any) -> None:
    """A keyword of solve_many's battles and options: one of simulate's, and not one of those
    that make one battle several (NOT_HERE; None for them is taken as not given)."""
    if name in NOT_HERE:
        if value is not None:
            raise BattleInputError(
                f"{name} is not an option of solve_many (one battle each: use simulate for "
                f"{name})")
    elif name not in KEYWORDS:
        raise BattleInputError(
            f"{quoted(name)} is not an option of simulate (options: {', '.join(KEYWORDS)})")


def _checked_options(options: Mapping[str, Any]) -> dict[str, Any]:
    for name, value in options.items():
        _check_keyword(name, value)
    return {k: v for k, v in options.items() if k not in NOT_HERE}


def solve_many(battles, **options):
    """Odds of many battles: a pandas DataFrame with one row per battle, in order.

    battles: a list of ``{keyword: value}`` dicts, each as simulate's keyword arguments
    (``attacker``, ``defender``, ``rules``, ``sea``, ``method``, ``retreat_after``, ...), or
    a DataFrame with a row per battle and a column per keyword (cells read as battlecalc.sweep
    reads them, an empty cell being the default; other columns are not read).  options:
    keywords of simulate for every battle (a battle's own value wins).

    The rows are the columns of :meth:`battlecalc.Result.flat_row` (``battlecalc run --format
    csv``), the same values simulate gives each battle, typed as sweep's table (whole numbers
    stay whole, nullable where some rows have none); a column of one edition's unit is
    missing (NA) in rows of an edition without it.  ``elapsed_s`` of the battles solved
    together is their share of the batch's time; ``frame.attrs["timing_s"]``: the seconds
    spent in each phase (checking, compiling, solving alone, laying out and solving the batch,
    building its rows, building the table).  Bad input raises BattleInputError
    naming the battle and simulate's message (``battle 3: keep_land must be ...``); every
    battle is checked and compiled before any is solved.  Solved together are the battles
    simulate solves exactly in one thread (see the module's docstring); the others one by
    one, as simulate solves them.
    """
    import pandas as pd

    options = _checked_options(options)
    battles = _listed(battles)
    with _collector_paused():  # (the table's many new objects too)
        parts, _, timing = _run(battles, options, strict=True)
        if not parts:
            return pd.DataFrame()
        return _frame(parts, timing)


def _frame(parts: list, timing: dict):
    """solve_many's table of the parts of _run (their positions: every row's, once): each
    column laid out by position, a float column as floats (NaN in the rows of parts without
    it), any other as objects (NaN there) typed as sweep's table (typed_column), as pandas'
    concat of the parts' frames would have it, without building them."""
    import pandas as pd

    started = time.perf_counter()
    parts.sort(key=lambda part: part[0][0])
    n = sum(len(positions) for positions, _ in parts)
    where = [np.asarray(positions, dtype=np.int64) for positions, _ in parts]
    columns = {}
    for name in dict.fromkeys(name for _, part in parts for name in part):
        given = [(rows, part[name]) for rows, (_, part) in zip(where, parts, strict=True)
                 if name in part]
        if all(isinstance(values, np.ndarray) and values.dtype == np.float64
               for _, values in given):
            column = np.full(n, np.nan)
            for rows, values in given:
                column[rows] = values
            columns[name] = column
            continue
        column = np.full(n, np.nan, dtype=object)
        for rows, values in given:
            column[rows] = values if isinstance(values, np.ndarray) else np.array(
                values, dtype=object)
        columns[name] = _typed(column)
    frame = pd.DataFrame(columns, index=pd.RangeIndex(n))
    frame.attrs["timing_s"] = {**timing, "table": time.perf_counter() - started}
    return frame


def solve_rows(battles: list[Mapping[str, Any]]) -> list[tuple[dict | None, str | None]]:
    """battlecalc.sweep's runner: each battle's (flat row, None), or (None, the error message
    as simulate raises it); never raises for a bad battle."""
    with _collector_paused():
        parts, errors, _ = _run(battles, {}, strict=False)
        rows: list[tuple[dict | None, str | None]] = [(None, errors.get(i)) for i in
                                                      range(len(battles))]
        for positions, part in parts:
            names = list(part)
            cells = [v.tolist() if isinstance(v, np.ndarray) else v for v in part.values()]
            for position, values in zip(positions, zip(*cells, strict=True), strict=True):
                rows[position] = (dict(zip(names, values, strict=True)), None)
    return rows
