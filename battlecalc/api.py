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

from . import reactions, solver
from .army import format_army
from .compile import compile_battle, forget_tables
from .errors import BattleInputError
from .results import DecisionResult, ExactResults, Result, build_result, with_decisions
from .rules import load_rules
from .solver.threads import set_threads, thread_count  # noqa: F401  (re-exported)
from .spec import (  # noqa: F401  (re-exported: the public constants and spec objects)
    DEFAULT_TRIALS,
    FORMULA_OPTIONS,
    MAX_TRIALS,
    METHODS,
    SUBMERGE_POLICIES,
    USUAL_DEFAULTS,
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

# Kept battles: a battle given as plain data (spec.spec_key) is checked and compiled once;
# simulate with the same arguments again solves it again from the same tables (no answer is
# kept).  One solved exactly by compiled kernels is solved again straight (_solved_again: its
# compiled kernel into fresh outputs, a Result read from them; about 9 us a call on a tiny
# battle, 4 of them the kernel).  At most MAX_KEPT (the oldest go first), each of at most
# KEPT_STATES states (both sides: a larger battle's solve dwarfs checking and compiling it, and
# its tables are large: the kept battles hold at most a few hundred MB of tables, usually far
# less).
MAX_KEPT = 256
KEPT_STATES = 2_000
_kept: dict = {}
_kept_lock = threading.Lock()


class KeptBattle:
    """A checked battle, its run spec and its compiled tables (None: a formula battle), and
    once it is solved exactly (solve), the prepared solve (solver.ExactSolve) of its plan,
    which the next call runs again if the battle is kept; `fast`: (that solve, its
    results.ExactResults) once it has been solved so, which simulate runs straight."""

    __slots__ = ("rules", "battle", "run", "compiled", "exact", "kept", "fast")

    def __init__(self, rules, battle, run, compiled):
        self.rules, self.battle, self.run, self.compiled = rules, battle, run, compiled
        self.exact = self.fast = None
        self.kept = False  # in _kept


def _kept_battle(arguments: dict, found: KeptBattle | None = None) -> KeptBattle:
    """The kept battle of simulate's arguments: kept (found: the one simulate found already),
    or checked (and for a dice battle compiled) now."""
    key = None
    if found is None:
        key = spec_key(arguments)
        found = None if key is None else _kept.get(key)
    # valid while the edition id names the same Ruleset (tests put other rules in its place)
    if found is not None and load_rules(arguments["rules"]) is found.rules:
        return found
    if key is None:
        key = spec_key(arguments)
    warned = warnings_issued()
    battle, run = simulate_spec(arguments)
    formula = isinstance(battle, FormulaSpec)
    # (a battle with reactions is a battle for each choice: battlecalc.reactions compiles them)
    compiled = None if formula or battle.reactions else compile_battle(battle)
    kept = KeptBattle(battle.ruleset if formula else battle.rules.fair, battle, run, compiled)
    # kept only where checking warned of nothing (a kept battle would not warn again)
    if key is not None and warnings_issued() == warned and (
            compiled is None
            or compiled.attacker.n_states + compiled.defender.n_states <= KEPT_STATES):
        with _kept_lock:
            while len(_kept) >= MAX_KEPT:
                del _kept[next(iter(_kept))]
            _kept[key] = kept
            kept.kept = True
    return kept


def compile_kernels() -> None:
    """Compile (or load from numba's cache) every kernel now, rather than when a battle first
    needs them (a server's warm-up, a sweep's workers); small battles are solved in plain
    Python until then."""
    from .kernels import jit

    jit.compiled()


def kernels_cold(method: str | None = None) -> bool:
    """Whether running `method` ("mc", "exact"; None: either) now compiles kernels first (a
    few seconds for Monte Carlo's, a minute or so for the exact solver's on a first run):
    where they are neither compiled in this process nor in numba's cache on disk, and for the
    exact solver only where this process compiles its solves now (small battles run in plain
    Python until it has spent a while there: solver.plan.kernels_for).  False where kernels
    run as plain Python."""
    return solver.plan.compiles_first(method)


def monte_carlo_kernel(**arguments) -> tuple[str, str] | None:
    """The kernel simulate(**arguments) would run Monte Carlo with where it is cold (neither
    compiled in this process nor in numba's cache: solver.plan.mc_cold), as (module, name)
    for kernel_cold; None where it is not cold, the battle is not solved by Monte Carlo (a
    dice battle, one battle, as choose decides) or does not check (simulate says why)."""
    try:
        battle, run, compiled = prepare(**arguments)
        if choose(battle, run, compiled).method != "mc":
            return None
    except (BattleInputError, ValueError, RecursionError):
        return None
    return solver.plan.mc_entry(compiled) if solver.plan.mc_cold(compiled) else None


def kernel_cold(kernel: tuple[str, str]) -> bool:
    """Whether a kernel of monte_carlo_kernel's is still cold (neither compiled in this
    process nor in numba's cache)."""
    return solver.plan.entry_cold(kernel)


def forget_compiled() -> None:
    """Drop every kept battle (checked, compiled) and side table: the next call checks and
    compiles as for a battle never seen (tests; benchmarks of fresh battles)."""
    with _kept_lock:
        _kept.clear()
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
    start_round: int = 1,
    start_step: str = "start",
    hits_on_attacker: int = 0,
    hits_on_defender: int = 0,
    bombard_hits: int = 0,
    attacker_waiting: str | Mapping[str, int] | None = None,
    defender_waiting: str | Mapping[str, int] | None = None,
    retreat_policy: str | None = None,
    optimize: str | None = None,
    territory_value: int | None = None,
    scramble_from: str | Mapping[str, int] | None = None,
    scramble: str | Mapping[str, int] | None = None,
    kamikaze: int | None = None,
    kamikaze_targets: str | list[str] | None = None,
    retreat_air_loss: float | None = None,
    die_law: str | Iterable | None = None,
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
    retreat_when_only_air, retreat_below P, strafe N, retreat_air_loss P: when the attacker
    withdraws at the end of a round (reported as ``retreat``; N above the armies' sizes means
    the same as their size; retreat_air_loss: once the exact chance that fighting on, with no
    further retreat, loses every one of its aircraft is above P, docs/rules.md);
    rounds_distribution: the exact solver also computes the law of the number of rounds
    (Monte Carlo always does); dice: ``"standard"`` or ``"low_luck"`` (each fire
    step's strength in sure hits, one die for the remainder); die_law: a biased die, the
    exact chances of its faces 1..6 summing to 1 (``"1/4,1/6,1/6,1/6,1/6,1/12"`` or a list
    of fractions or decimals: docs/rules.md, not with low luck).  Flags must be bools and counts
    whole numbers; every bad argument raises BattleInputError before anything runs
    (battlecalc.spec).  waves:
    further waves on the defender's survivors, and counterattack: the defender side's
    counter-attack on the territory taken (both return a :class:`battlecalc.waves.WavesResult`;
    see :mod:`battlecalc.waves`).  start_round: the round the battle starts in (from round 2
    on nothing that fires in round 1 only fires); start_step, hits_on_attacker,
    hits_on_defender, bombard_hits, attacker_waiting, defender_waiting: where in that round
    it starts, as a TripleA save in progress stands (battlecalc.spec.Start;
    docs/in-progress.md): the armies are then the units standing.  retreat_policy
    ``"optimal"``: the attacker retreats wherever that is worth more than fighting on, by
    `optimize` (``"tuv"``, the default; ``"win"``, ``"takes"``, ``"value"`` with
    `territory_value` IPC counted when the territory is taken), found by backward induction
    over the battle's states: the result is a :class:`battlecalc.results.DecisionResult`,
    with the policy, its rule in words and its gain over never retreating.  1940-2e sea
    battles, the defender's reactions (battlecalc.reactions): scramble_from, the fighters and
    tactical bombers on an air base next to the zone (every force it may scramble is solved),
    scramble: ``"best"`` (the default: the one worst for the attacker by `optimize`),
    ``"none"`` or the aircraft; kamikaze: the tokens spent, each striking a surface warship
    before the battle, kamikaze_targets: where (``"battleship:2, cruiser:1"``; default: the
    placing worst for the attacker).

    Editions of the formula model (``rules="formula"``) take the options of
    :func:`battlecalc.spec.make_formula_spec` instead (attacker_level, counter, exchanges,
    ...) and return a :class:`battlecalc.formula.FormulaResult`.
    """
    started = time.perf_counter()
    # every parameter above but formula_options, in order (_PARAMETERS), checked in one place:
    # first all but those of spec.USUAL_DEFAULTS, which most calls leave at their defaults
    # (`usual`: each at its default, of the default's type), and where they are, spec_key's
    # key leaves them out, and so does the one made here (half the time of the whole one, on
    # the per-call floor of a kept battle)
    values = (rules, attacker, defender, sea, trials, seed, method, attacker_tech, defender_tech,
              progress, attacker_submerge, defender_submerge, landing, bombard, attacker_ool,
              defender_ool, keep_land, aa_last, retreat_after, retreat_when_left,
              retreat_when_only_air, retreat_below, strafe, rounds_distribution, dice)
    usual = (waves is None and counterattack is None and type(start_round) is int
             and start_round == 1 and type(start_step) is str and start_step == "start"
             and type(hits_on_attacker) is int and hits_on_attacker == 0
             and type(hits_on_defender) is int and hits_on_defender == 0
             and type(bombard_hits) is int and bombard_hits == 0
             and attacker_waiting is None and defender_waiting is None
             and retreat_policy is None and optimize is None and territory_value is None
             and scramble_from is None and scramble is None and kamikaze is None
             and kamikaze_targets is None and retreat_air_loss is None and die_law is None)
    if not usual:
        values += (waves, counterattack, start_round, start_step, hits_on_attacker,
                   hits_on_defender, bombard_hits, attacker_waiting, defender_waiting,
                   retreat_policy, optimize, territory_value, scramble_from, scramble, kamikaze,
                   kamikaze_targets, retreat_air_loss, die_law)
    kept = None
    if not formula_options:
        # the kept plan of equal values of the same types: spec_key's key where they are
        # plain (a dict or a list among them is not hashable: spec_key's key, made by _kept_battle);
        # each type(value) written out, which costs less than tuple(map(type, values)), but
        # for spec.UNTYPED_KEYS (text wherever a plan is kept: no other type matches it)
        kinds = (type(attacker), type(defender), type(sea), type(trials), type(seed),
                 type(attacker_tech), type(defender_tech), type(landing), type(bombard),
                 type(attacker_ool), type(defender_ool), type(keep_land), type(aa_last),
                 type(retreat_after), type(retreat_when_left), type(retreat_when_only_air),
                 type(retreat_below), type(strafe), type(rounds_distribution))
        if not usual:
            kinds += (type(waves), type(counterattack), type(start_round),
                      type(hits_on_attacker), type(hits_on_defender), type(bombard_hits),
                      type(attacker_waiting), type(defender_waiting), type(retreat_policy),
                      type(optimize), type(territory_value), type(scramble_from),
                      type(scramble), type(kamikaze), type(kamikaze_targets),
                      type(retreat_air_loss), type(die_law))
        try:
            kept = _kept.get((kinds, values))
        except TypeError:
            pass
        # (found: a battle that was checked, no waves)
        if kept is not None and kept.fast is not None and load_rules(rules) is kept.rules:
            # (_solved_again written out: a call less on a kept battle's floor)
            prepared, results = kept.fast
            outputs = prepared.again()
            if outputs is not None:
                return results.of(outputs, started)
    if usual:
        values += _USUAL_VALUES  # (equal to those given, of the same types)
    found = kept
    arguments = dict(zip(_PARAMETERS, values, strict=True), formula_options=formula_options)
    waves = check_waves(waves)
    if waves or counterattack is not None:
        # a sequence of battles: battlecalc.waves, which stands above this module and gives
        # its solver when it is loaded (battlecalc.simulate loads it)
        sequences = SEQUENCES.get("solve")
        if sequences is None:
            raise BattleInputError("waves and a counter-attack are a sequence of battles: "
                                   "import battlecalc.waves (battlecalc.simulate does)")
        options = {k: v for k, v in arguments.items()
                   if k not in ("waves", "counterattack", "formula_options")}
        return sequences(waves, counterattack, **options, **formula_options)
    kept = _kept_battle(arguments, found)
    if isinstance(kept.battle, FormulaSpec):
        from .formula.engine import run_formula  # (the formula game's engine: on first use)

        return run_formula(kept.battle, kept.run, started)
    if kept.fast is not None and kept is not found:  # kept, found by spec_key's key
        result = _solved_again(kept, started)
        if result is not None:
            return result
    return solve(kept.battle, kept.run, started, kept.compiled, kept)


# the solver of sequences of battles (waves, a counter-attack): battlecalc.waves registers its
# simulate_waves here when it is loaded (it stands above this module: no import of it here)
SEQUENCES: dict = {}


def _decided(battle: Battle, run: RunSpec, started: float, compiled,
             solve_plan: solver.SolvePlan, limits: solver.Limits,
             table: bool = True) -> Result:
    """solve's answer for a battle whose decisions are solved (battle.objective): the
    result under the optimal retreat the plan's backward induction finds (solver.decide),
    with the policy and its gain over never retreating (the same battle with no retreat,
    solved by the same method asked for) as a results.DecisionResult."""
    law = solver.solve(compiled, solve_plan, seed=run.mc_seed, progress=run.progress)
    method = "exact" if law.trials is None else "mc"
    result = build_result(battle, compiled, method, law.trials, law.seed, law, started)
    never = None
    if battle.retreat.optimal:
        # never retreating, the other choices as they are (optimal submerging: the never
        # battle decides it again, for itself; only its value is read)
        never_battle = dataclasses.replace(battle, retreat=Retreat())
        never_run = dataclasses.replace(run, seed=law.seed if law.seed is not None
                                        else run.seed)
        if "optimal" in (battle.attacker_submerge, battle.defender_submerge):
            never_compiled = compile_battle(never_battle, hit_eps=limits.hit_eps)
            never = _decided(never_battle, never_run, time.perf_counter(), never_compiled,
                             solver.choose(never_compiled, run.method, run.trials,
                                           run.rounds_distribution, limits),
                             limits, table=False)
        else:
            never = solve(never_battle, never_run, limits=limits)
    decided = with_decisions(result, battle.objective, law.policy, never,
                             "optimal" if battle.retreat.optimal else None, table)
    decided.elapsed_s = time.perf_counter() - started
    return decided


def _reactions(battle: Battle, run: RunSpec, started: float, limits: solver.Limits) -> Result:
    """solve's answer for a battle with the defender's reactions (scramble, kamikaze:
    battlecalc.reactions): every combination weighed solved, the defender's best (or the
    one given) taken, its result a DecisionResult whose decisions also hold what the air base
    holds and what was scrambled, the tokens and their targets, and `reactions`, a row a
    combination (its outcome probabilities, IPC losses, TUV swing and the objective's
    value)."""
    r, objective = battle.reactions, battle.objective
    pairs = reactions.combinations(battle)  # (counted first: refused past its cap)
    reactions.check_tables(battle, pairs, compile_battle)
    best = reactions.Best(r, pairs)  # (only the results that may be the defender's kept)
    for done, (scramble, allocation) in enumerate(pairs):
        reactions.report(run.progress, done, len(pairs))
        result = solve(reactions.reacted(battle, scramble, allocation), run, limits=limits)
        best.add(reactions.row(scramble, allocation, result, objective.of(result)), result)
    rows, (chosen, result) = best.rows, best.chosen()
    if not isinstance(result, DecisionResult):
        result = with_decisions(result, objective, None, None, None)
    result.decisions.update({
        "scramble_from": "; ".join(map(format_army, r.bases)) if r.bases else None,
        "scrambled": rows[chosen]["scrambled"] if (r.scramble_from or r.scramble) else None,
        "kamikaze": r.kamikaze or None,
        "kamikaze_targets": rows[chosen]["kamikaze_targets"] if r.kamikaze else None,
        "reactions_chosen": "given" if not r.choosing else "best for the defender",
        "reactions": rows,
    })
    result.reaction_rows = rows
    result.elapsed_s = time.perf_counter() - started
    return result


def _solved_again(kept: KeptBattle, started: float) -> Result | None:
    """The Result of a kept battle solved exactly by compiled kernels (KeptBattle.fast), solved
    again straight, with no Python but its outputs and Result; None where solve must.
    (simulate's look-up by its own key does the same written out.)"""
    prepared, results = kept.fast
    outputs = prepared.again()
    if outputs is not None:
        return results.of(outputs, started)
    return None


# simulate's parameters in order but formula_options: what its `values` hold; their defaults
_PARAMETERS = tuple(simulate.__code__.co_varnames[:simulate.__code__.co_argcount])
_DEFAULTS = dict(zip(_PARAMETERS, simulate.__defaults__, strict=True))
_USUAL_VALUES = tuple(USUAL_DEFAULTS.values())  # (the end of _PARAMETERS)


def prepare(**arguments) -> tuple[Battle, RunSpec, object]:
    """simulate's arguments (a dice battle, one battle: no waves) checked and compiled: the
    battle, its run spec and its compiled tables, as choose and solve take them."""
    values = {**_DEFAULTS, **arguments}
    battle, run = simulate_spec({**values, "formula_options": {}})
    if isinstance(battle, FormulaSpec):
        raise BattleInputError(f"{battle.ruleset.id} is a formula edition: no dice battle to "
                               "compile")
    return battle, run, compile_battle(battle)


def choose(battle: Battle, run: RunSpec, compiled=None) -> solver.SolvePlan:
    """How simulate solves a checked dice battle (solver.choose on its compiled tables):
    which method and exact variant; BattleInputError where the method asked for cannot solve
    it."""
    compiled = compile_battle(battle) if compiled is None else compiled
    return solver.choose(compiled, run.method, run.trials, run.rounds_distribution)


def solve(battle: Battle, run: RunSpec, started: float | None = None,
          compiled=None, kept: KeptBattle | None = None,
          solve_plan: solver.SolvePlan | None = None,
          limits: solver.Limits = solver.LIMITS) -> Result:
    """The engine under :func:`simulate`: compile a checked dice battle, choose how to solve
    it (solver.choose), solve it (solver.solve) and build its :class:`Result`.  (battlecalc
    .waves solves each battle of a sequence through it.)  `started`:
    the clock (time.perf_counter) that the result's elapsed_s counts from (default: now);
    compiled: the battle's tables when the caller has them (compile_battle(battle)); kept:
    simulate's KeptBattle, which keeps its prepared exact solve for the next call;
    solve_plan: the plan to carry out where the caller chose it (choose); limits: the limits
    the plan is chosen (or was chosen) and carried out under.
"""
    started = time.perf_counter() if started is None else started
    if battle.reactions:  # scramble, kamikaze: a battle for each choice (battlecalc.reactions)
        return _reactions(battle, run, started, limits)
    compiled = compile_battle(battle, hit_eps=limits.hit_eps) if compiled is None else compiled
    prepared = None if kept is None else kept.exact
    if solve_plan is None:
        solve_plan = solver.choose(
            compiled, run.method, run.trials, run.rounds_distribution, limits,
            seconds=None if prepared is None or limits is not solver.LIMITS
            else prepared.plan.seconds)
    if battle.retreat.optimal or "optimal" in (battle.attacker_submerge,
                                               battle.defender_submerge):
        return _decided(battle, run, started, compiled, solve_plan, limits)
    # (a kept battle keeps the prepared solve of simulate's plans only: under other limits it
    # is solved as any battle, and its next simulate call solves by simulate's plan again)
    if (kept is not None and kept.kept and limits is solver.LIMITS
            and solve_plan.method == "exact" and not solve_plan.win_values
            and not solve_plan.table[0]):
        if prepared is None or prepared.plan != solve_plan:
            prepared = kept.exact = solver.ExactSolve(compiled, solve_plan, kept=True)
        law = solver.solve(compiled, solve_plan, progress=run.progress, prepared=prepared)
        if kept.fast is None or kept.fast[0] is not prepared:
            kept.fast = (prepared, ExactResults(battle, compiled, prepared.law_of))
        return build_result(battle, compiled, "exact", None, None, law, started)
    law = solver.solve(compiled, solve_plan, seed=run.mc_seed, progress=run.progress)
    if law.trials is None:
        return build_result(battle, compiled, "exact", None, None, law, started)
    return build_result(battle, compiled, "mc", law.trials, law.seed, law, started)
