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
from . import options as options_module
from . import waves as waves_module
from .compile import SideCache, compile_battle
from .errors import BattleInputError, quoted
from .options import OPTIONS, is_empty, read
from .results import build_result, rows
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
        if name in args:
            args[name] = value
        else:  # (the formula model's, and options the table has that simulate names not)
            formula[name] = value
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
                if n in options_module.BY_NAME]
    battles = []
    for i, row in enumerate(frame[readable].to_dict("records") if readable else
                            [{}] * len(frame)):
        battle = {}
        for column, value in row.items():
            if _cell(value):
                try:
                    battle[str(column)] = read(options_module.BY_NAME[str(column)], value)
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


def _kept_plan(compiled, run):
    """_planned, a batchable plan kept with the attacker's side (a process that solves the
    same armies again, a server's or a planner's, chooses once): the attacker Side's
    "_plans", {(id of the defender's Side, the round rules, the objective, method, trials,
    law of rounds): (that Side, plan)} (a battle of the kept path: its sides, rules and
    objective are all the plan reads of it, but for the kernels' state, which only the
    plan's `compiled` reads: the batch decides that for itself, solve_batch)."""
    kept = compiled.attacker.__dict__.setdefault("_plans", {})
    key = (id(compiled.defender), compiled.rules.tobytes(), compiled.objective, run.method,
           run.trials, run.rounds_distribution)
    found = kept.get(key)
    if found is not None and found[0] is compiled.defender:
        return found[1]
    plan = _planned(compiled, run)
    if plan is not None and batchable(plan):
        if len(kept) >= 1024:
            kept.clear()
        kept[key] = (compiled.defender, plan)
    return plan


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
        self.plans: dict = {}  # (id of the attacker's Side, the defender's) -> _planned

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
        if battle.start or battle.landing or battle.bombard:  # (sides of other battles too)
            return compiled, _planned(compiled, self.run)
        # (a pair of sides is one battle of the lane: its plan once; the sides live as long as
        # the lane's SideCache)
        pair = (id(compiled.attacker), id(compiled.defender))
        plan = self.plans.get(pair, False)
        if plan is False:
            plan = self.plans[pair] = _kept_plan(compiled, self.run)
        return compiled, plan


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
    """The sequences of battles of a call (waves, a counter-attack: battlecalc.waves), each
    played as simulate plays it (waves' _sequence: the same code, which yields the battles
    each stage needs together), every sequence's stage at once: the battles all of them need
    next (the first waves, then the next wave on each force the defender holds with, the
    counter-attack on each force holding the territory) are checked through the lanes' forms
    (each stage's once, each distinct army read once) and solved together, once each however
    many sequences share them (the small exact ones in the batch), then sent back."""

    def __init__(self):
        self.stages: dict = {}  # id of a stage's arguments -> (them, their _Lane or None)
        self.lanes: dict = {}  # _form_key -> _Lane

    def _lane_of(self, arguments: dict):
        """The lane of a stage's battles (its arguments but the armies), or None (checked one
        by one)."""
        found = self.stages.get(id(arguments))
        if found is not None and found[0] is arguments:
            return found[1]
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
        self.stages[id(arguments)] = (arguments, lane)
        return lane

    def _checked(self, q):
        """A request's battle, run spec and lane (spec.simulate_spec's battle and run)."""
        lane = self._lane_of(q.arguments)
        if lane is None:
            battle, run = waves_module._checked(q.label, q.arguments, q.attacker, q.defender,
                                                q.trials, q.seed)
            return battle, run, None
        seed = check_seed(q.seed)
        battle, run = lane.form.battle(q.attacker, q.defender), lane.run
        if run.trials != q.trials or run.seed != seed:
            run = replace(run, trials=q.trials, seed=seed)
        return battle, run, lane

    def resolve(self, requests: list) -> dict:
        """{id of a request: its Result, or its error (named by its battle)}: each distinct
        battle solved once, the small exact ones together."""
        results, wanted = {}, {}
        for q in requests:
            try:
                battle, run, lane = self._checked(q)
            except BattleInputError as exc:
                results[id(q)] = type(exc)(f"{q.label}: {exc}")
                continue
            key = ((id(lane), tuple(battle.attacker.items()), tuple(battle.defender.items()),
                    run.method, run.trials, run.seed) if lane is not None
                   else _battle_key(battle, run))
            if key is None:
                key = ("alone", id(q))
            found = wanted.get(key)
            if found is None:
                found = wanted[key] = (battle, run, lane, [])
            found[3].append(q)
        batch, alone = _Batch(), []
        for battle, run, lane, asked in wanted.values():
            try:
                compiled = plan = None
                if not battle.reactions:
                    compiled = compile_battle(battle, None if lane is None else lane.sides)
                    plan = _planned(compiled, run)
                if plan is not None and batchable(plan):
                    batch.add(asked, battle, compiled, plan)
                else:
                    alone.append((asked, battle, run, compiled, plan))
            except BattleInputError as exc:
                for q in asked:
                    results[id(q)] = type(exc)(f"{q.label}: {exc}")
        for asked, battle, run, compiled, plan in alone:
            try:
                result = api.solve(battle, run, None, compiled, solve_plan=plan)
            except BattleInputError as exc:
                result = exc
            for q in asked:
                results[id(q)] = (type(result)(f"{q.label}: {result}")
                                  if isinstance(result, BattleInputError) else result)
        if batch.positions:
            started = time.perf_counter()
            law = solve_batch(batch.compiled, batch.plans)
            for i, asked in enumerate(batch.positions):
                result = build_result(batch.battles[i], batch.compiled[i], "exact", None, None,
                                      law.law(i), started)
                for q in asked:
                    results[id(q)] = result
        return results

    def play(self, chains: list) -> list:
        """Each chain (waves, counterattack, simulate's other arguments) played to its end:
        its WavesResult, or the exception simulate raises for it."""
        out: list = [None] * len(chains)
        active = []  # (chain, its sequence, the battles it waits for)
        for k, (waves, counterattack, options) in enumerate(chains):
            try:
                sequence = waves_module._sequence(waves, counterattack, api.solve, None,
                                                  dict(options))
                next(sequence)  # (its solver)
                active.append((k, sequence, next(sequence)))
            except StopIteration as done:
                out[k] = done.value
            except Exception as exc:  # noqa: BLE001 - each chain its own answer
                out[k] = exc
        while active:
            results = self.resolve([q for _, _, asked in active for q in asked
                                    if q is not None])
            waiting = []
            for k, sequence, asked in active:
                try:
                    waiting.append((k, sequence, sequence.send(
                        [None if q is None else results[id(q)] for q in asked])))
                except StopIteration as done:
                    out[k] = done.value
                except Exception as exc:  # noqa: BLE001
                    out[k] = exc
            active = waiting
        return out


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
            if options and (type(given) is dict or isinstance(given, Mapping)):
                given = {**options, **given}
            if type(given) is not dict or "waves" in given or "counterattack" in given:
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
    elif name not in options_module.BY_NAME:  # (the table now: an option added is one)
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
