"""Many battles in one call: :func:`solve_many`, thousands of small exact battles a second.

    >>> import battlecalc
    >>> rows = battlecalc.solve_many([{"attacker": "1 inf", "defender": "1 inf"},
    ...                               {"attacker": "2 inf", "defender": "1 inf"}],
    ...                              rules="revised", method="exact")
    >>> [round(p, 6) for p in rows["attacker_win"]]
    [0.25, 0.676724]

Each battle is made, compiled, planned and solved as :func:`battlecalc.simulate` makes,
compiles, plans and solves it, with the same answer to the last bit.  Battles whose keywords
differ only in their armies and seeds (a lane) are checked through one spec.BattleForm (every
option once, each distinct army once) and compiled with one compile.SideCache (each distinct
side once); their plans (solver.choose) are kept with their sides.  The battles whose plans
the batch kernel carries out (solver.batch.batchable: exact, at most
solver.plan.Limits.parallel_seconds of work, as simulate solves them in one thread) are
solved together: every battle's tables laid end to end in flat arrays, one compiled loop
(kernels/batch.py) solving them one after the other on the engine's threads
(battlecalc.set_threads), their rows built for all of them at once (results.rows).  The
others (Monte Carlo, larger battles, --retreat-below, the law of rounds, decisions solved,
the defender's reactions, formula editions) go through simulate's own engine one by one,
from the tables compiled for them.
"""

from __future__ import annotations

import contextlib
import gc
import time
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from . import api
from . import waves as waves_module
from .compile import SideCache, compile_battle
from .errors import BattleInputError, quoted
from .options import BY_NAME, FORMULA_OPTIONS, OPTIONS, is_empty, read
from .results import SideLaw, build_result, rows
from .solver import choose
from .solver.batch import batchable, solve_batch
from .spec import (
    PLAIN_TYPES,
    BattleForm,
    FormulaSpec,
    check_seed,
    check_waves,
    fresh_seed,
    simulate_form,
    simulate_spec,
)
from .waves import simulate_waves

# simulate's keywords (the table of options, battlecalc.options): those a battle may set, and
# the defaults of all (no progress hook: solve_many reports none)
NOT_HERE = tuple(o.name for o in OPTIONS if o.kind == "callable")
DEFAULTS = {o.name: o.default for o in OPTIONS if not o.formula_only}
KEYWORDS = tuple(o.name for o in OPTIONS if o.name not in NOT_HERE)
ARMY_SIDES = ("attacker", "defender", "landing", "bombard")  # SIDE.UNIT columns (sweep's)

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
    """The small exact battles of a call: positions, checked battles, compiled tables, plans
    (solver.choose's, each batchable)."""

    def __init__(self):
        self.positions: list[int] = []
        self.battles: list = []
        self.compiled: list = []
        self.plans: list = []

    def add(self, position: int, battle, compiled, plan) -> None:
        self.positions.append(position)
        self.battles.append(battle)
        self.compiled.append(compiled)
        self.plans.append(plan)

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


def _planned(compiled, run):
    """The plan simulate solves a compiled battle by (solver.choose, kept with its sides), or
    None where it refuses the battle (simulate then says why)."""
    try:
        return choose(compiled, run.method, run.trials, run.rounds_distribution)
    except BattleInputError:
        return None


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


class _Lane:
    """The battles of a call with the same keywords but their armies and seeds (_form_key):
    checked through one spec.BattleForm (simulate_spec's checks of everything but the armies,
    once; each distinct army read once) and compiled with what they share kept (_compiled)."""

    def __init__(self, form, run):
        self.form, self.run = form, run
        self.sides = SideCache()

    def battle(self, given: Mapping[str, Any]):
        """The battle (spec.Battle) and its RunSpec (the lane's, with the battle's seed);
        simulate_spec's BattleInputError where it is not a battle."""
        seed = check_seed(given.get("seed"))  # (simulate_spec checks it first)
        battle = self.form.battle(given.get("attacker"), given.get("defender"))
        return battle, (self.run if seed is None else replace(self.run, seed=seed))

    def compiled(self, battle):
        """The battle compiled (None: a battle for each of the defender's reactions, which
        simulate's engine compiles), and its plan (_planned)."""
        if battle.reactions:
            return None, None
        compiled = compile_battle(battle, self.sides)
        return compiled, _planned(compiled, self.run)


def _lane(given: Mapping[str, Any]) -> _Lane | Exception | None:
    """The lane of a battle's keywords: a _Lane, the error every battle of it has (its
    options refused), or None (a formula edition, or keywords simulate does not take:
    each battle is checked on its own, for simulate_spec's words)."""
    try:
        args = {**_battle_arguments(given), "seed": None}  # (each battle's own: _Lane.battle)
    except BattleInputError:
        return None
    try:
        form, run = simulate_form(args)
    except BattleInputError as exc:
        return exc
    return _Lane(form, run) if isinstance(form, BattleForm) else None


# ---------------------------------------------------------------------------------------------
# Chains: waves and counter-attacks


class _Unsolved:
    """What a chain is given for a battle not solved yet (a pass that finds the battles its
    chains need next: _Chains): nothing taken, no survivors."""

    attacker, method = "", "exact"
    attacker_win = defender_win = draw = stalemate = retreat = takes_territory = 0.0
    attacker_ipc_loss = defender_ipc_loss = tuv_swing = 0.0
    attacker_law = defender_law = SideLaw((), np.zeros((0, 0), dtype=np.int64),
                                          np.zeros(0, dtype=np.int64), np.zeros(0))


_UNSOLVED = _Unsolved()


def _battle_key(battle, run):
    """A hashable key of a checked battle and its run spec (equal: the same battle, solved
    the same way), or None where some part of it is not hashable."""
    key = (id(battle.rules), id(battle.attacker_rules), id(battle.defender_rules),
           tuple(battle.attacker.items()), tuple(battle.defender.items()), battle.sea,
           battle.attacker_submerge, battle.defender_submerge, tuple(battle.landing.items()),
           tuple(battle.bombard.items()), tuple(battle.overland.items()),
           battle.attacker_order, battle.defender_order, battle.retreat, battle.dice,
           battle.start, battle.objective, battle.kamikaze_struck,
           # (the defender's reactions: each a battle solved by simulate's engine)
           None if not battle.reactions else id(battle.reactions),
           run.method, run.trials, run.seed, run.rounds_distribution)
    try:
        hash(key)
    except TypeError:
        return None
    return key


class _Chains:
    """The sequences of battles of a call (waves, a counter-attack: battlecalc.waves), solved
    as simulate solves each of them, their battles together: each sequence is played again
    pass after pass (waves.simulate_waves), each pass finding the battles its next stage
    needs (the next wave on each force the defender holds with, the counter-attack on each
    force holding the territory), which are then solved together, once each however many
    sequences share them (in the batch where their plans allow it, as solve_many solves a
    battle); the last pass, with every battle solved, is each sequence's answer.  The
    battles are checked through the lanes' forms (_Lane), each distinct army read once."""

    def __init__(self):
        self.results: dict = {}  # battle key -> Result, or the BattleInputError it raised
        self.wanted: dict = {}  # battle key -> (battle, run) not solved yet
        self.lanes: dict = {}  # _form_key -> _Lane
        self.stages: dict = {}  # (chain, stage label) -> its battles' _Lane (or None)
        self.chain = 0  # the chain being played
        self.lane = None  # the lane of the battle check made last (solve's, next)

    def check(self, label: str, arguments: dict, attacker, defender, trials, seed):
        """simulate_spec's battle and run spec (waves._checked's) through the lane of the
        stage's keywords: the same for every pass (a stage's arguments are its chain's)."""
        lane = self.stages.get((self.chain, label), False)
        if lane is False:
            given = {k: v for k, v in arguments.items()
                     if k not in ("attacker", "defender", "formula_options")}
            key = _form_key(given)
            lane = self.lanes.get(key) if key is not None else None
            if lane is None:
                lane = _lane(given)
                if not isinstance(lane, _Lane):
                    lane = None
                elif key is not None:
                    self.lanes[key] = lane
            self.stages[(self.chain, label)] = lane
        self.lane = lane
        if lane is None:
            return waves_module._checked(label, arguments, attacker, defender, trials, seed)
        seed = check_seed(seed)
        battle, run = lane.form.battle(attacker, defender), lane.run
        if run.trials != trials or run.seed != seed:
            run = replace(run, trials=trials, seed=seed)
        return battle, run

    def solve(self, battle, run, *_args, **_kwargs):
        """The battle's Result, once it is solved; until then _UNSOLVED, the battle noted
        (with the lane check found it in: a battle of a lane is known by its armies)."""
        lane, self.lane = self.lane, None
        if lane is not None:
            key = (id(lane), tuple(battle.attacker.items()), tuple(battle.defender.items()),
                   run.method, run.trials, run.seed)
        else:
            key = _battle_key(battle, run)
        if key is None or run.progress is not None:
            return api.solve(battle, run)
        found = self.results.get(key)
        if found is None:
            self.wanted.setdefault(key, (battle, run, lane))
            return _UNSOLVED
        if isinstance(found, Exception):
            raise found
        return found

    def solve_wanted(self) -> None:
        """Solve the battles the last pass found (the small exact ones together)."""
        wanted, self.wanted = self.wanted, {}
        batch = _Batch()
        alone = []
        for key, (battle, run, lane) in wanted.items():
            try:
                compiled = plan = None
                if not battle.reactions:
                    compiled = compile_battle(battle, None if lane is None else lane.sides)
                    plan = _planned(compiled, run)
                if plan is not None and batchable(plan):
                    batch.add(key, battle, compiled, plan)
                else:
                    alone.append((key, battle, run, compiled, plan))
            except BattleInputError as exc:
                self.results[key] = exc
        for key, battle, run, compiled, plan in alone:
            try:
                self.results[key] = api.solve(battle, run, None, compiled, solve_plan=plan)
            except BattleInputError as exc:
                self.results[key] = exc
        if batch.positions:
            started = time.perf_counter()
            law = solve_batch(batch.compiled, batch.plans)
            for i, key in enumerate(batch.positions):
                self.results[key] = build_result(batch.battles[i], batch.compiled[i], "exact",
                                                 None, None, law.law(i), started)

    def play(self, chains: list) -> list:
        """Each chain (waves, counterattack, simulate's other arguments) played to its end:
        its WavesResult, or the exception simulate raises for it."""
        for self.chain, (_, _, options) in enumerate(chains):  # (wave 1 is known: first)
            try:
                self.solve(*self.check("wave 1", options, options["attacker"],
                                       options["defender"], options["trials"],
                                       options["seed"]))
            except Exception:  # noqa: BLE001, S110 - (the chain's own pass says why)
                pass
        self.solve_wanted()
        while True:
            out = []
            for self.chain, (waves, counterattack, options) in enumerate(chains):
                try:
                    out.append(simulate_waves(waves, counterattack, solve=self.solve,
                                              check=self.check, **options))
                except Exception as exc:  # noqa: BLE001 - each chain its own answer
                    out.append(exc)
            if not self.wanted:
                return out
            self.solve_wanted()


def _chain_arguments(given: Mapping[str, Any]):
    """(waves, counterattack, simulate's other arguments) of a battle of solve_many, or None
    where it is one battle (neither waves nor a counter-attack)."""
    if not isinstance(given, Mapping) or (given.get("waves") is None
                                         and given.get("counterattack") is None):
        return None
    args = _battle_arguments(given)
    waves, counterattack = check_waves(args.pop("waves")), args.pop("counterattack")
    if not waves and counterattack is None:
        return None
    if args["method"] in ("mc", "auto") and args["seed"] is None:
        args["seed"] = fresh_seed()  # (simulate_waves' own, drawn once for every pass)
    return waves, counterattack, {**args.pop("formula_options"), **args}


def _one(battle, run, started: float, compiled=None, plan=None) -> dict[str, Any]:
    """A battle solved on its own, as simulate solves it (compiled and planned already, where
    it was): its flat row."""
    if isinstance(battle, FormulaSpec):
        from .formula.engine import run_formula

        return run_formula(battle, run, started).flat_row()
    return api.solve(battle, run, started, compiled, solve_plan=plan).flat_row()


TIMING = ("check", "compile", "one_by_one", "solve", "rows", "chains")  # _run's phases


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
    # (position, battle, run, seconds its checks took, compiled, plan) of those solved on their
    # own (compiled and planned where they were)
    alone = []

    def failed(position: int, exc: Exception) -> None:
        if strict and isinstance(exc, BattleInputError):
            raise BattleInputError(f"battle {position}: {exc}") from None
        if strict:
            raise exc
        errors[position] = (str(exc) if isinstance(exc, BattleInputError)
                            else f"{type(exc).__name__}: {exc}")

    seen: dict = {}  # a battle given again: its checks and tables once (same answer)
    lanes: dict = {}  # _form_key -> _Lane or None
    chains: list = []  # (position, (waves, counterattack, options)) of the sequences
    for position, given in enumerate(battles):
        started = clock()
        try:
            if options and isinstance(given, Mapping):
                given = {**options, **given}
            chain = _chain_arguments(given)
            if chain is not None:
                chains.append((position, chain))
                continue
            form_key = _form_key(given) if type(given) is dict else None
            if form_key is not None:
                lane = lanes.get(form_key, False)
                if lane is False:
                    lane = lanes[form_key] = _lane(given)
                if isinstance(lane, Exception):
                    raise lane
                if lane is not None:
                    battle, run = lane.battle(given)
                    checked = clock()
                    timing["check"] += checked - started
                    compiled, plan = lane.compiled(battle)
                    timing["compile"] += clock() - checked
                    if plan is not None and batchable(plan):
                        batch.add(position, battle, compiled, plan)
                        continue
                    alone.append((position, battle, run, clock() - started, compiled, plan))
                    continue
            key = _key(given)
            if key is not None and key in seen:
                where, item = seen[key]
                where.append((position, *item[1:]))
                continue
            battle, run = simulate_spec(_battle_arguments(given))
            checked = clock()
            timing["check"] += checked - started
            compiled = plan = None
            if not isinstance(battle, FormulaSpec) and not battle.reactions:
                compiled = compile_battle(battle)
                plan = _planned(compiled, run)
                timing["compile"] += clock() - checked
                if plan is not None and batchable(plan):
                    batch.add(position, battle, compiled, plan)
                    if key is not None:
                        seen[key] = (batch, (position, battle, compiled, plan))
                    continue
            alone.append((position, battle, run, clock() - started, compiled, plan))
            if key is not None:
                seen[key] = (alone, alone[-1])
        except Exception as exc:  # noqa: BLE001 - one bad battle must not lose the others
            failed(position, exc)
    if chains:
        played = clock()
        for (position, _), result in zip(chains, _Chains().play([c for _, c in chains]),
                                         strict=True):
            if isinstance(result, Exception):
                failed(position, result)
            else:
                parts.append(([position], {k: [v] for k, v in result.flat_row().items()}))
        timing["chains"] += clock() - played
    for position, battle, run, checks, compiled, plan in alone:
        solo = clock()
        try:
            # (elapsed_s: its checks and its solve)
            row = _one(battle, run, solo - checks, compiled, plan)
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


def _solve_batch(batch: _Batch, timing: dict[str, float]) -> list[tuple[list[int], dict]]:
    """Solve the batch and build its rows (results.rows): parts of (positions, {column:
    values}).  elapsed_s: the time spent on the batch's battles (checks, compiling, solving,
    rows), shared equally (the checks of the battles solved on their own count here too: a
    small part)."""
    started = time.perf_counter()
    law = solve_batch(batch.compiled, batch.plans)
    solved = time.perf_counter()
    timing["solve"] += solved - started
    parts = rows(batch.battles, batch.compiled, law, 0.0, law.compiled)
    timing["rows"] += time.perf_counter() - solved
    elapsed = (timing["check"] + timing["compile"] + timing["solve"]
               + timing["rows"]) / len(batch.positions)
    for _, columns in parts:
        columns["elapsed_s"] = np.full(len(columns["rules"]), elapsed)
    return [([batch.positions[i] for i in members], columns) for members, columns in parts]


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
