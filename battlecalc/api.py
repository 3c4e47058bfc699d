"""The Python API: check a battle (battlecalc.spec), compile it, run a solver, wrap the result.

    >>> import battlecalc
    >>> r = battlecalc.simulate(rules="revised", attacker="1 inf", defender="1 inf", method="exact")
    >>> round(r.attacker_win, 6), round(r.defender_win, 6), round(r.draw, 6)
    (0.25, 0.625, 0.125)
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Iterable, Mapping

import numpy as np

from .compile import compile_battle, forget_tables
from .errors import BattleInputError
from .formula.engine import run_formula
from .kernels.common import RU_SIMPLE
from .kernels.exact import (
    PRUNE_PAIRS,
    ExactSolve,
    TooBigToSolve,
    compact_table,
    fill_win_values,
    seconds_estimate,
    win_values_seconds,
)
from .kernels.jit import set_threads, thread_count  # noqa: F401  (re-exported)
from .kernels.montecarlo import ROUNDS_BINS, run_monte_carlo
from .results import ExactResults, Result, build_result
from .rules import load_rules
from .spec import (  # noqa: F401  (re-exported: the public constants and spec objects)
    DEFAULT_TRIALS,
    FORMULA_OPTIONS,
    MAX_TRIALS,
    METHODS,
    SUBMERGE_POLICIES,
    Battle,
    FormulaSpec,
    Retreat,
    RunSpec,
    check_waves,
    make_battle,
    simulate_spec,
    spec_key,
    warnings_issued,
)

# The exact solver's cost is estimated before it runs (kernels.exact.seconds_estimate): `auto`
# solves exactly when that beats the Monte Carlo run it would replace, `exact` refuses above
# MAX_EXACT_SECONDS (the solve plus --retreat-below's table, kernels.exact.win_values_seconds,
# which either method needs); the mass table of the solver caps the state pairs.
MAX_EXACT_SECONDS = 10.0
EXACT_STATE_LIMIT = 4_000_000  # attacker x defender states (the solver's mass table)
WIN_VALUE_LIMIT = 4_000_000  # state pairs for --retreat-below's per-state win probabilities
# Monte Carlo trials a second on two cores, roughly (benchmarks/bench_engine.py)
MC_RATE = {True: 6_000_000, False: 2_500_000}  # land fast path, general round
# battles of kernels.exact.PRUNE_PAIRS state pairs or more (solved within a pruning budget):
# `auto` solves them exactly when the estimate is at most this (1e6 trials of a 300 v 300 land
# battle took 0.39 s against the 0.17 s MC_RATE says, its exact solve 0.35-0.45 s)
AUTO_BIG_SECONDS = 1.0
# a battle too big for a dense mass table, solved in a compact one (kernels.exact.compact_table:
# a sea battle of subs and aircraft on both sides): its cost is known only as it goes, so
# `auto` tries it exactly within about this many seconds of work (Monte Carlo past that, the
# try wasted), `exact` within MAX_EXACT_SECONDS (refused past that)
AUTO_COMPACT_SECONDS = 2.0


MAX_WIN_VALUE_SECONDS = 60.0  # estimated work of that table, whatever the method


def _check_win_values(compiled, seconds: float) -> None:
    """--retreat-below's table, refused from its size and estimated work before any of it is
    built (seconds: kernels.exact.win_values_seconds)."""
    pairs = compiled.attacker.n_states * compiled.defender.n_states
    if pairs > WIN_VALUE_LIMIT or seconds > MAX_WIN_VALUE_SECONDS:
        raise BattleInputError(
            f"--retreat-below needs the exact win probability of every state, and this "
            f"battle has {pairs:,} state pairs (about {seconds:.2g} s of work; limits "
            f"{WIN_VALUE_LIMIT:,} pairs, {MAX_WIN_VALUE_SECONDS:g} s); use another retreat "
            "option"
        )


def _with_win_values(compiled, seconds: float, progress):
    """--retreat-below: the exact per-state win probabilities, from a backward sweep."""
    n_a, n_d = compiled.attacker.n_states, compiled.defender.n_states
    retreat = compiled.retreat._replace(win_value=np.zeros((n_a, n_d)))
    compiled = dataclasses.replace(compiled, retreat=retreat)
    fill_win_values(compiled, seconds, progress)
    return compiled


# Plans: a battle given as plain data (spec.spec_key) is checked and compiled once; simulate
# with the same arguments again solves it again from the same tables (no answer is kept).
# One solved exactly is solved again straight (_solved_again: its compiled kernel into fresh
# outputs, a Result read from them; about 9 us a call on a tiny battle, 4 of them the kernel).
# At most MAX_PLANS (the oldest go first), each of at most PLAN_STATES states (both sides: a
# larger battle's solve dwarfs checking and compiling it, and its tables are large: the plans
# hold at most a few hundred MB of tables, usually far less).
MAX_PLANS = 256
PLAN_STATES = 2_000
_plans: dict = {}
_plans_lock = threading.Lock()


class _Plan:
    """A checked battle, its run spec and its compiled tables (None: a formula battle), and
    once it is solved exactly (solve), the prepared solve (kernels.exact.ExactSolve), which
    the next call runs again if the plan is kept; `fast`: (_limits() when solve chose the
    exact method, that solve, its results.ExactResults), which simulate runs straight while
    the limits are the same."""

    __slots__ = ("rules", "battle", "run", "compiled", "exact", "kept", "fast")

    def __init__(self, rules, battle, run, compiled):
        self.rules, self.battle, self.run, self.compiled = rules, battle, run, compiled
        self.exact = self.fast = None
        self.kept = False  # in _plans


def _plan(arguments: dict, found: _Plan | None = None) -> _Plan:
    """The plan of simulate's arguments: kept (found: the one simulate found already), or
    checked (and for a dice battle compiled) now."""
    key = None
    if found is None:
        key = spec_key(arguments)
        found = None if key is None else _plans.get(key)
    # valid while the edition id names the same Ruleset (tests put other rules in its place)
    if found is not None and load_rules(arguments["rules"]) is found.rules:
        return found
    if key is None:
        key = spec_key(arguments)
    warned = warnings_issued()
    battle, run = simulate_spec(arguments)
    formula = isinstance(battle, FormulaSpec)
    compiled = None if formula else compile_battle(battle)
    plan = _Plan(battle.ruleset if formula else battle.rules, battle, run, compiled)
    # kept only where checking warned of nothing (a kept plan would not warn again)
    if key is not None and warnings_issued() == warned and (
            compiled is None
            or compiled.attacker.n_states + compiled.defender.n_states <= PLAN_STATES):
        with _plans_lock:
            while len(_plans) >= MAX_PLANS:
                del _plans[next(iter(_plans))]
            _plans[key] = plan
            plan.kept = True
    return plan


def _limits() -> tuple:
    """What solve's choice of the exact method reads besides the battle (tests change it)."""
    return (MAX_EXACT_SECONDS, EXACT_STATE_LIMIT, AUTO_BIG_SECONDS, PRUNE_PAIRS, MC_RATE[True],
            MC_RATE[False])


def forget_compiled() -> None:
    """Drop every kept plan (checked, compiled battle) and side table: the next call checks
    and compiles as for a battle never seen (tests; benchmarks of fresh battles)."""
    with _plans_lock:
        _plans.clear()
    forget_tables()


def simulate(
    rules: str = "revised",
    attacker: str | Mapping[str, int] | None = None,
    defender: str | Mapping[str, int] | None = None,
    sea: bool = False,
    trials: int = DEFAULT_TRIALS,
    seed: int | None = None,
    method: str = "auto",
    attacker_tech: str | Iterable[str] | None = None,
    defender_tech: str | Iterable[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
    attacker_submerge: str = "never",
    defender_submerge: str = "never",
    landing: str | Mapping[str, int] | None = None,
    bombard: str | Mapping[str, int] | None = None,
    attacker_ool: str | list[str] | None = None,
    defender_ool: str | list[str] | None = None,
    keep_land: int = 0,
    aa_last: bool = False,
    retreat_after: int | None = None,
    retreat_when_left: int | None = None,
    retreat_when_only_air: bool = False,
    retreat_below: float | None = None,
    strafe: int | None = None,
    rounds_distribution: bool = False,
    dice: str = "standard",
    waves: Iterable[str | Mapping[str, int]] | None = None,
    counterattack: str | Mapping[str, int] | None = None,
    **formula_options,
):
    """Odds of a battle.

    rules: an edition id (see :func:`battlecalc.list_editions`), a Ruleset or the path of an
    edition file; attacker/defender: army notation (``"3 inf, 1 art, 2 tank"``) or
    ``{unit: count}``; sea: a sea battle; trials and seed: Monte Carlo size (an int, or an
    integral float such as 1e6) and seed (same seed, same numbers); method: ``"exact"``,
    ``"mc"`` or ``"auto"`` (exact when the battle is small enough); attacker_tech /
    defender_tech: technologies such as ``"heavy_bombers,jets"`` or ``["jets"]``; progress:
    called as progress(done, total, what) while it runs; attacker_submerge /
    defender_submerge: ``"never"``, ``"when-only-subs-left"`` or ``"first-chance"`` (sea
    battles); landing/bombard: an amphibious assault's land units from transports and
    bombarding ships (land battles); attacker_ool/defender_ool: orders of losses
    (``"bomber,tank"`` or ``["bomber", "tank"]``, TripleA's ``"*^infantry;*^fighter;1^infantry"``,
    or a preset ``cheapest``/``weakest``/``smart``); keep_land: the attacker's last N land
    units are lost after every aircraft; aa_last: the defender's AAA are lost last instead of
    first (1942 2E); retreat_after R (at most 1000), retreat_when_left N,
    retreat_when_only_air, retreat_below P, strafe N: when the attacker withdraws at the end
    of a round (reported as ``retreat``; N above the armies' sizes means the same as their
    size); rounds_distribution: the exact solver also computes the law of the number of
    rounds (Monte Carlo always does); dice: ``"standard"`` or ``"low_luck"`` (each fire
    step's strength in sure hits, one die for the remainder).  Flags must be bools and counts
    whole numbers; every bad argument raises BattleInputError before anything runs
    (battlecalc.spec).  waves:
    further waves on the defender's survivors, and counterattack: the defender side's
    counter-attack on the territory taken (both return a :class:`battlecalc.waves.WavesResult`;
    see :mod:`battlecalc.waves`).

    Editions of the formula model (``rules="formula"``) take the options of
    :func:`battlecalc.spec.make_formula_spec` instead (attacker_level, counter, exchanges,
    ...) and return a :class:`battlecalc.formula.FormulaResult`.
    """
    started = time.perf_counter()
    # every parameter above but formula_options, in order (_PARAMETERS), checked in one place
    values = (rules, attacker, defender, sea, trials, seed, method, attacker_tech, defender_tech,
              progress, attacker_submerge, defender_submerge, landing, bombard, attacker_ool,
              defender_ool, keep_land, aa_last, retreat_after, retreat_when_left,
              retreat_when_only_air, retreat_below, strafe, rounds_distribution, dice, waves,
              counterattack)
    plan = None
    if not formula_options:
        # the kept plan of equal values of the same types: spec_key's key where they are
        # plain (a dict or a list among them is not hashable: spec_key's key, made by _plan);
        # each type(value) written out, which costs less than tuple(map(type, values))
        kinds = (type(rules), type(attacker), type(defender), type(sea), type(trials),
                 type(seed), type(method), type(attacker_tech), type(defender_tech),
                 type(progress), type(attacker_submerge), type(defender_submerge),
                 type(landing), type(bombard), type(attacker_ool), type(defender_ool),
                 type(keep_land), type(aa_last), type(retreat_after), type(retreat_when_left),
                 type(retreat_when_only_air), type(retreat_below), type(strafe),
                 type(rounds_distribution), type(dice), type(waves), type(counterattack))
        try:
            plan = _plans.get((kinds, values))
        except TypeError:
            pass
        # (found: a battle that was checked, no waves)
        if plan is not None and plan.fast is not None and load_rules(rules) is plan.rules:
            result = _solved_again(plan, started)
            if result is not None:
                return result
    found = plan
    arguments = dict(zip(_PARAMETERS, values, strict=True), formula_options=formula_options)
    waves = check_waves(waves)
    if waves or counterattack is not None:  # a sequence of battles: battlecalc.waves
        from .waves import simulate_waves

        options = {k: v for k, v in arguments.items()
                   if k not in ("waves", "counterattack", "formula_options")}
        return simulate_waves(waves, counterattack, solve=solve, **options, **formula_options)
    plan = _plan(arguments, found)
    if plan.compiled is None:
        return run_formula(plan.battle, plan.run, started)
    if plan.fast is not None and plan is not found:  # kept, found by spec_key's key
        result = _solved_again(plan, started)
        if result is not None:
            return result
    return solve(plan.battle, plan.run, started, plan.compiled, plan)


def _solved_again(plan: _Plan, started: float) -> Result | None:
    """The Result of a kept plan solved exactly under the limits of now (_Plan.fast), solved
    again straight, with no Python but its outputs and Result; None where solve must."""
    limits, prepared, results = plan.fast
    if limits == _limits():
        outputs = prepared.again()
        if outputs is not None:
            return results.of(outputs, started)
    return None


# simulate's parameters in order but formula_options: what its `values` hold
_PARAMETERS = tuple(simulate.__code__.co_varnames[:simulate.__code__.co_argcount])


def solve(battle: Battle, run: RunSpec, started: float | None = None,
          compiled=None, plan: _Plan | None = None) -> Result:
    """The engine under :func:`simulate`: compile a checked dice battle, pick the method, run
    the exact solver or the Monte Carlo kernel and build its :class:`Result`.  `started`:
    the clock (time.perf_counter) that the result's elapsed_s counts from (default: now);
    compiled: the battle's tables when the caller has them (compile_battle(battle)); plan:
    simulate's plan of the battle, which keeps its prepared exact solve for the next call.

    battlecalc.waves solves each battle of a sequence through this function, which
    :func:`simulate` hands it (waves imports nothing from this module: no import circle)."""
    started = time.perf_counter() if started is None else started
    compiled = compile_battle(battle) if compiled is None else compiled
    prepared = None if plan is None else plan.exact
    seconds = seconds_estimate(compiled) if prepared is None else prepared.seconds
    pairs = compiled.attacker.n_states * compiled.defender.n_states
    below = compiled.retreat_below is not None
    # --retreat-below's table is built whatever the method: counted in the exact estimate
    table_seconds = win_values_seconds(compiled) if below else 0.0
    if below:
        _check_win_values(compiled, table_seconds)
    if run.rounds_distribution and compiled.has_partial_retreat:
        raise BattleInputError(
            "the exact law of rounds is not available with partial amphibious retreats; "
            "use --method mc"
        )
    method = run.method
    compact = compact_table(compiled)[0] > 0 and not below
    if compact and method != "mc":
        law = _solve_compact(compiled, run, method)
        if law is not None:
            return build_result(battle, compiled, "exact", None, None, law, started)
        method = "mc"
    if method == "auto":  # the faster of the two (both need --retreat-below's table)
        mc_seconds = monte_carlo_seconds(compiled, run.trials)
        if pairs >= PRUNE_PAIRS:
            # a big battle: Monte Carlo's trials slow down with its size (MC_RATE is a small
            # battle's) and the exact answer has no noise; exact up to AUTO_BIG_SECONDS
            mc_seconds = max(mc_seconds, AUTO_BIG_SECONDS)
        method = "exact" if (seconds <= mc_seconds and pairs <= EXACT_STATE_LIMIT
                             and seconds + table_seconds <= MAX_EXACT_SECONDS) else "mc"
    if method == "exact" and pairs > EXACT_STATE_LIMIT:
        raise BattleInputError(
            f"battle too large to solve exactly ({pairs:,} state pairs, limit "
            f"{EXACT_STATE_LIMIT:,}); use --method mc for Monte Carlo"
        )
    if method == "exact" and seconds + table_seconds > MAX_EXACT_SECONDS:
        raise BattleInputError(
            f"battle too large to solve exactly (about {seconds + table_seconds:.2g} s of "
            f"work, limit {MAX_EXACT_SECONDS:g} s); use --method mc for Monte Carlo"
        )
    if below:
        if method == "mc" and run.progress is not None:
            # Monte Carlo it is, said before the table (the web server's method=exact stops
            # at the first trials report)
            run.progress(0, run.trials, "trials")
        compiled = _with_win_values(compiled, table_seconds, run.progress)
    if method == "exact":
        rounds_bins = ROUNDS_BINS if run.rounds_distribution else 1
        if below or prepared is None:
            kept = plan is not None and plan.kept and not below  # below: this call's own table
            prepared = ExactSolve(compiled, rounds_bins, seconds, kept=kept)
            if kept:
                plan.exact = prepared
        law = prepared.run(run.progress)
        if plan is not None and plan.exact is prepared:
            fast = plan.fast
            plan.fast = (_limits(), prepared, ExactResults(battle, compiled, prepared.law_of)
                         if fast is None else fast[2])
        return build_result(battle, compiled, "exact", None, None, law, started)
    seed = run.mc_seed()
    law = run_monte_carlo(compiled, run.trials, seed, run.progress)
    return build_result(battle, compiled, "mc", run.trials, seed, law, started)


def monte_carlo_seconds(compiled, trials: int) -> float:
    """Rough seconds of `trials` Monte Carlo trials of a compiled battle (MC_RATE: a small
    battle's rate), as `auto` weighs them against the exact solve."""
    return trials / MC_RATE[bool(compiled.rules[RU_SIMPLE] == 1)]


def _solve_compact(compiled, run: RunSpec, method: str):
    """The exact law of a battle solved in a compact mass table (method `exact` or `auto`),
    within MAX_EXACT_SECONDS or AUTO_COMPACT_SECONDS (at least the Monte Carlo run's time) of
    work; None where `auto` passed that (Monte Carlo then)."""
    limit = MAX_EXACT_SECONDS
    if method == "auto":
        limit = max(AUTO_COMPACT_SECONDS, monte_carlo_seconds(compiled, run.trials))
    rounds_bins = ROUNDS_BINS if run.rounds_distribution else 1
    try:
        return ExactSolve(compiled, rounds_bins, max_seconds=limit).run(run.progress)
    except TooBigToSolve:
        if method == "exact":
            raise
        return None
