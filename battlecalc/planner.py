"""Plan an attack or a defence: the cheapest force from a pool that reaches a goal.

    >>> import battlecalc
    >>> p = battlecalc.plan(rules="revised", defender="2 inf", pool="4 inf 2 tank",
    ...                     goal="takes_territory>=0.8", method="exact")
    >>> [(battlecalc.format_army(q.addition), q.cost) for q in p.plans]
    [('2 infantry, 1 tank', 11), ('1 infantry, 2 tank', 13)]

A *plan* is a force taken from the pool (each unit type up to its count) that meets every goal
(``"takes_territory>=0.9"``; any numeric key of the ``--format json`` result, ``>=`` or ``<=``).
Plans are ranked by an objective:

* ``cost`` (default): the IPC value of the units taken from the pool. Only *lean* plans are
  listed: those from which no single unit can be dropped while still meeting the goal (the
  others are a lean plan plus units that are not needed).
* ``loss``: the planner's side's expected IPC loss (attacker's, or defender's with ``defend``).
* ``swing``: the planner's side's expected TUV swing, highest first.

With ``defend=True`` the pool is the defender's: the plan is the cheapest addition to
``defender`` that holds against ``attacker`` (a goal such as ``"takes_territory<=0.1"``).

**Search.** Every battle is solved by :func:`battlecalc.simulate` (exact where feasible);
results are cached, and the number of battles solved is reported as ``solves``. The search
assumes *monotonicity*: adding a unit to the planner's side never lowers that side's chances
(``attacker_win`` and ``takes_territory`` never fall, ``defender_win`` never rises, when an
attacking unit is added; the reverse when a defending unit is added). Under an order of losses
that is a fixed priority of unit types (the default ``cheapest``, ``weakest``, lists such as
``bomber,tank``) it follows from a coupling argument: the larger force rolls every die the
smaller one rolls, and after the same hits it keeps every unit the smaller one keeps.
tests/test_planner.py checks it to 1e-12 on a sample of battles (AA guns of both editions,
``keep_land``, ``aa_last`` and the retreat policies below included). At sea hits are assigned
by category (submarines, aircraft, other ships) and there is no such proof; it was checked on
random 1942 2E sea battles (400 single-unit additions, no counterexample), and the tests hold
a sea sample too. Goals in that direction
(``attacker_win>=``, ``takes_territory>=``, ``defender_win<=`` when attacking;
``attacker_win<=``, ``takes_territory<=``, ``defender_win>=`` when defending) make the set of
plans closed upwards, and the search prunes:

* an infeasible force proves every smaller force infeasible, a feasible one every larger one;
* for ``cost``, forces are split into the unit type with the most copies in the pool (usually
  infantry, the *line*) and the rest; for each composition of the rest, in order of cost, the
  cheapest line count is probed at the most the remaining budget allows (the cost of the
  ``top``-th plan found so far), then binary-searched, and compositions whose cost alone
  passes the budget end the search;
* for ``loss`` and ``swing``, which adding a unit can move either way, every feasible force is
  solved, from the largest down, skipping those below a force already found infeasible.

Where the assumption fails the search is exhaustive (every force solved, up to
``MAX_EXHAUSTIVE``), and the result says why (:func:`why_not_monotone`):

* ``retreat_below`` and ``strafe``: counterexamples are in the tests (with ``strafe`` an extra
  defender keeps the attacker from retreating and raises its chance of winning; with
  ``retreat_below`` an extra bomber raises ``defender_win``); ``retreat_air_loss`` likewise
  (an extra fighter is an aircraft to retreat for: the attacker that would have won withdraws);
* ``retreat_after``, ``retreat_when_left``, ``retreat_when_only_air``: ``attacker_win`` and
  ``takes_territory`` stay monotone, but ``defender_win`` does not (a larger attacker fights
  on where a smaller one withdrew, and can die);
* orders of losses that depend on the force (``smart``, TripleA's counted notation) and
  submerge policies: no counterexample was found, but there is no proof either;
  ``search="monotone"`` prunes anyway;
* goals in the other direction, or on other keys (``draw``, ``attacker_ipc_loss<=``, ...).

With Monte Carlo every force is simulated with the same seed; the goal is then checked on
estimates, and monotonicity holds only up to their noise.
"""

from __future__ import annotations

import heapq
import itertools
import math
import re
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .api import simulate
from .army import format_army
from .errors import BattleInputError, quoted
from .options import BATTLE_OPTIONS
from .results import Result, rows_csv
from .rules import Ruleset, load_rules
from .spec import (
    army_counts,
    check_flag,
    check_int,
    check_order,
    check_progress,
    fresh_seed,
    is_finite,
)

GOAL_KEYS = ("attacker_win", "defender_win", "draw", "stalemate", "retreat", "takes_territory",
             "mean_rounds", "attacker_ipc_loss", "defender_ipc_loss", "tuv_swing")
OBJECTIVES = ("cost", "loss", "swing")
SEARCHES = ("auto", "monotone", "exhaustive")
# simulate's battle keywords that plan takes as **run_options (the others are its own)
PLAN_OPTIONS = tuple(name for name in BATTLE_OPTIONS
                     if name not in ("rules", "attacker", "defender", "sea", "trials", "seed",
                                     "method"))
MAX_EXHAUSTIVE = 3000  # forces solved one by one when the monotone pruning does not apply
MAX_OBJECTIVE_FORCES = 20_000  # forces within the cost limit for the loss and swing objectives
MAX_LATTICE = 2_000_000  # forces the pool may describe at all
# +1: the key never falls when a unit is added to the planner's side; -1: it never rises
MONOTONE = {
    "attack": {"attacker_win": 1, "takes_territory": 1, "defender_win": -1},
    "defend": {"attacker_win": -1, "takes_territory": -1, "defender_win": 1},
}
PROGRESS_STEP = "plan search"  # the `what` of the search's progress reports
_GOAL = re.compile(r"^\s*([a-z_]+)\s*(>=|<=)\s*([0-9.eE+-]+)\s*(%?)\s*$")


@dataclass(frozen=True)
class Goal:
    """``key op value``: e.g. takes_territory >= 0.9."""

    key: str
    op: str
    value: float

    def met(self, values: Mapping[str, float]) -> bool:
        x = values[self.key]
        return x >= self.value if self.op == ">=" else x <= self.value

    def __str__(self) -> str:
        return f"{self.key}{self.op}{self.value:g}"


def parse_goals(goal: str | Goal | Iterable[str | Goal]) -> tuple[Goal, ...]:
    """Goals from ``"takes_territory>=0.9"``, ``"attacker_win>=90%, attacker_ipc_loss<=20"``
    or a list of such strings."""
    if isinstance(goal, str):
        items = goal.split(",")
    elif isinstance(goal, Goal):
        items = [goal]
    elif isinstance(goal, (list, tuple)) and all(isinstance(g, (str, Goal)) for g in goal):
        items = list(goal)
    else:
        raise BattleInputError(
            f"goal must be text such as 'takes_territory>=0.9' or a list of goals, got "
            f"{quoted(goal)}")
    goals = []
    for item in items:
        if not isinstance(item, Goal) and not str(item).strip():
            continue
        if isinstance(item, Goal):
            goals.append(item)
            continue
        match = _GOAL.match(str(item))
        if not match:
            raise BattleInputError(
                f"cannot read goal {str(item).strip()!r}: write KEY>=VALUE or KEY<=VALUE, "
                "e.g. takes_territory>=0.9"
            )
        key, op, number, percent = match.groups()
        if key not in GOAL_KEYS:
            raise BattleInputError(
                f"unknown goal key {key!r} (keys: {', '.join(GOAL_KEYS)})"
            )
        try:
            value = float(number) / (100 if percent else 1)
        except ValueError:
            raise BattleInputError(f"cannot read the number in goal {item.strip()!r}") from None
        if not math.isfinite(value):
            raise BattleInputError(f"goal {item.strip()!r} needs a finite number")
        goals.append(Goal(key, op, value))
    if not goals:
        raise BattleInputError("no goal given (e.g. takes_territory>=0.9)")
    return tuple(goals)


@dataclass
class Plan:
    """One force: what it takes from the pool (`addition`), its cost and the battle's odds."""

    addition: dict[str, int]
    cost: float
    result: Result

    def to_dict(self) -> dict[str, Any]:
        data = self.result.to_dict()
        return {"attacker": data.pop("attacker"), "cost": self.cost,
                "addition": format_army(self.addition), **data}

    def flat_row(self) -> dict[str, Any]:
        return {"cost": self.cost, "addition": format_army(self.addition),
                **self.result.flat_row()}

    def outcome_line(self, sea: bool) -> str:
        r = self.result
        parts = [f"attacker wins {r.attacker_win:.2%}"]
        if not sea:
            parts.append(f"takes {r.takes_territory:.2%}")
        parts.append(f"defender wins {r.defender_win:.2%}")
        if r.retreat:
            parts.append(f"retreats {r.retreat:.2%}")
        parts.append(f"IPC lost att {r.attacker_ipc_loss:.1f} def {r.defender_ipc_loss:.1f}")
        parts.append(f"swing {r.tuv_swing:+.1f}")
        return ", ".join(parts)


@dataclass
class PlanResult:
    """The best plans (best first) and how the search went.

    `solves` counts the battles solved, `forces` the forces the pool describes, `search` is
    ``"monotone"`` (pruned) or ``"exhaustive"`` (`exhaustive_because` says why); when no force
    meets the goal, `plans` is empty and `best_reachable` is the result of the force that
    comes closest to the first goal (the whole pool, in a monotone search).
    """

    rules: str
    mode: str
    goals: tuple[Goal, ...]
    objective: str
    opponent: str
    base: str
    pool: dict[str, int]
    sea: bool
    plans: list[Plan]
    solves: int
    forces: int
    search: str
    method: str
    seed: int | None
    elapsed_s: float
    exhaustive_because: str | None = None
    best_reachable: Result | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "rules": self.rules,
            "mode": self.mode,
            "goal": [str(g) for g in self.goals],
            "objective": self.objective,
            "opponent": self.opponent,
            "base": self.base,
            "pool": format_army(self.pool),
            "method": self.method,
            "seed": self.seed,
            "search": self.search,
            "exhaustive_because": self.exhaustive_because,
            "forces": self.forces,
            "solves": self.solves,
            "elapsed_s": self.elapsed_s,
            "plans": [p.to_dict() for p in self.plans],
            "best_reachable": (self.best_reachable.to_dict() if self.best_reachable is not None
                               else None),
        }

    def to_json(self) -> str:
        import json

        return json.dumps(self.to_dict(), indent=2)

    def to_csv(self) -> str:
        """One row per plan: rank, cost, addition, then the `run --format csv` columns."""
        if not self.plans:
            return "rank,cost,addition\n"
        rows = [{"rank": i + 1, **p.flat_row()} for i, p in enumerate(self.plans)]
        return rows_csv(rows)

    def table(self) -> str:
        side = "attack on" if self.mode == "attack" else "defence against"
        what = {"cost": "minimize cost", "loss": "minimize expected IPC loss",
                "swing": "maximize TUV swing"}[self.objective]
        lines = [f"plan ({self.rules}): {side} {self.opponent}"
                 + (f" (with {self.base})" if self.base != "nothing" else ""),
                 f"pool: {format_army(self.pool)}",
                 f"goal: {', '.join(map(str, self.goals))}   {what}",
                 f"{self.forces:,} forces, {self.solves:,} battles solved "
                 f"({self.search} search"
                 + (f": {self.exhaustive_because}" if self.exhaustive_because else "")
                 + f", method {self.method}"
                 + (f", seed {self.seed}" if self.seed is not None else "")
                 + f")   ({self.elapsed_s:.3f} s)", ""]
        if not self.plans:
            lines.append("no force from the pool meets the goal")
            best = self.best_reachable
            if best is not None:
                values = _values(best)
                force = best.attacker if self.mode == "attack" else best.defender
                lines.append(f"closest: {force}, with " + ", ".join(
                    f"{g.key} = {values[g.key]:.4g}" for g in self.goals))
            return "\n".join(lines)
        lines.append(f"{'rank':<6}{'cost':>6}  force")
        for i, p in enumerate(self.plans, 1):
            lines.append(f"{i:<6}{p.cost:>6g}  {format_army(p.addition)}")
            lines.append(f"{'':14}{p.outcome_line(self.sea)}")
        return "\n".join(lines)


def _values(result: Result) -> dict[str, float]:
    return {key: float(getattr(result, key)) for key in GOAL_KEYS}


def _army_counts(value, ruleset, label: str) -> dict[str, int]:
    if isinstance(value, str) and not value.strip():
        return {}
    return army_counts(value, ruleset, label)


def why_not_monotone(goals: tuple[Goal, ...], mode: str, options: Mapping[str, Any]) -> str | None:
    """None when the monotone pruning applies to these goals and run options, else why not."""
    for key, flag in (("retreat_below", "--retreat-below"), ("strafe", "--strafe"),
                      ("retreat_air_loss", "--retreat-air-loss")):
        if options.get(key) is not None:
            return f"{flag} can make a stronger force do worse"
    for key in ("attacker_submerge", "defender_submerge"):
        if options.get(key) not in (None, "never"):
            return "submerge policies were not checked for monotonicity"
    if options.get("retreat_policy") is not None:
        return "the optimal retreat can make a stronger force do worse at a goal it does not weigh"
    for key in ("attacker_ool", "defender_ool"):
        order = options.get(key) or ""
        text = (order if isinstance(order, str) else ",".join(order)).strip().lower()
        if text == "smart" or "^" in text or ";" in text:
            return f"the order of losses {text!r} depends on the force"
    retreats = any(options.get(k) not in (None, False, 0) for k in (
        "retreat_after", "retreat_when_left", "retreat_when_only_air"))
    if retreats and options.get("landing"):
        return "a partial retreat from an amphibious assault was not checked for monotonicity"
    directions = MONOTONE[mode]
    for g in goals:
        if directions.get(g.key, 0) != (1 if g.op == ">=" else -1):
            return f"the goal {g} is not one that adding a unit can only help"
        if g.key == "defender_win" and retreats:
            return "with a retreat policy defender_win can move either way"
    return None


class _Evaluator:
    """Solve forces (tuples of counts of the pool's unit types) once each, with the cache."""

    def __init__(self, names, mode, base, opponent, goals, run: Callable[..., Result],
                 progress: Callable[..., None] | None = None):
        self.names, self.mode, self.base, self.opponent = names, mode, base, opponent
        self.goals, self.run = goals, run
        self.cache: dict[tuple[int, ...], Result | None] = {}
        self.solves = 0
        self.progress = progress
        self.searched = (0, 1)  # (done, total) of the search, as last reported

    def report(self, done: int, total: int) -> None:
        """The search has gone through `done` of its `total` candidates (compositions of the
        pool for the cheapest plans, forces otherwise)."""
        self.searched = (min(max(done, self.searched[0]), total), total)
        if self.progress is not None:
            self.progress(*self.searched, PROGRESS_STEP)

    def finish(self) -> None:
        self.report(self.searched[1], self.searched[1])

    def force(self, point: tuple[int, ...]) -> dict[str, int]:
        counts = dict(self.base)
        for name, n in zip(self.names, point, strict=True):
            if n:
                counts[name] = counts.get(name, 0) + n
        return counts

    def result(self, point: tuple[int, ...]) -> Result | None:
        """The battle's result, or None where there is no battle (an empty side)."""
        if point not in self.cache:
            force = self.force(point)
            if not force:
                self.cache[point] = None
            else:
                self.solves += 1
                pair = (force, self.opponent) if self.mode == "attack" else (self.opponent, force)
                self.cache[point] = self.run(*pair)
        return self.cache[point]

    def feasible(self, point: tuple[int, ...]) -> bool:
        result = self.result(point)
        if result is None:
            return False
        values = _values(result)
        return all(g.met(values) for g in self.goals)


def plan(
    rules: str | Ruleset,
    defender: str | Mapping[str, int] | None = None,
    pool: str | Mapping[str, int] | None = None,
    goal: str | Iterable[str] = "takes_territory>=0.9",
    objective: str = "cost",
    top: int = 5,
    defend: bool = False,
    attacker: str | Mapping[str, int] | None = None,
    max_cost: float | None = None,
    sea: bool = False,
    method: str = "auto",
    trials: int = 100_000,
    seed: int | None = None,
    search: str = "auto",
    progress: Callable[..., None] | None = None,
    **run_options,
) -> PlanResult:
    """The best forces from `pool` that meet `goal` (see the module documentation).

    Attacking (default): `defender` is the target, `pool` the units available to attack, and
    `attacker` optional units sent in any case. With ``defend=True``: `attacker` is the
    threat, `pool` the units available to add to `defender` (which may be empty).
    `objective` is ``"cost"``, ``"loss"`` or ``"swing"``; `top` the number of plans;
    `max_cost` leaves out forces costing more. `rules`, `sea`, `method`, `trials`, `seed`
    and every other keyword of :func:`battlecalc.simulate` that describes a dice battle
    (:data:`battlecalc.options.BATTLE_OPTIONS`: attacker_tech, defender_tech, dice, landing,
    bombard, attacker_ool, defender_ool, keep_land, aa_last, the retreat policies, strafe,
    the submerge policies) are passed to :func:`battlecalc.simulate` for every force. Monte
    Carlo uses one seed for every force (drawn and reported when not given). `search`:
    ``"auto"`` prunes by monotonicity where it applies (:func:`why_not_monotone`),
    ``"monotone"`` prunes anyway (at your risk), ``"exhaustive"`` solves every force.
    progress: called as ``progress(done, total, what)``: while kernels compile (``what``
    "compiling kernels (first run only)", ``total`` 0), and as the search goes through its
    candidates (``what`` :data:`PROGRESS_STEP`; ``done`` never falls and ends at ``total``).
    """
    started = time.perf_counter()
    unknown = set(run_options) - set(PLAN_OPTIONS)
    if unknown:
        raise TypeError(f"plan() got unexpected keyword arguments: {sorted(unknown)}")
    ruleset = load_rules(rules)
    if ruleset.model != "dice":
        raise BattleInputError(f"plan works with dice editions, not with {ruleset.id}")
    defend = check_flag("defend", defend)
    sea = check_flag("sea", sea)
    for key in ("attacker_ool", "defender_ool"):
        check_order(run_options.get(key), key)
    check_progress(progress, "progress(done, total, what)")
    mode = "defend" if defend else "attack"
    goals = parse_goals(goal)
    if objective not in OBJECTIVES:
        raise BattleInputError(
            f"objective must be one of {', '.join(OBJECTIVES)}, got {objective!r}")
    top = check_int("top", top, 1)
    if max_cost is not None and (isinstance(max_cost, bool)
                                 or not isinstance(max_cost, (int, float, np.integer,
                                                              np.floating))
                                 or not is_finite(max_cost) or max_cost < 0):
        raise BattleInputError(f"max_cost must be a finite number >= 0 (at most about "
                               f"{sys.float_info.max:.1e}), got {quoted(max_cost)}")
    if sea and any(g.key == "takes_territory" for g in goals):
        raise BattleInputError(
            "takes_territory is always 0 in sea battles; use attacker_win or defender_win")
    pool_counts = _army_counts(pool, ruleset, "pool")
    if not pool_counts:
        raise BattleInputError("the pool is empty: give the units available, e.g. "
                               "--pool '8 inf 4 art 2 tank'")
    attacker_counts = _army_counts(attacker, ruleset, "attacker")
    defender_counts = _army_counts(defender, ruleset, "defender")
    if mode == "attack":
        base, opponent = attacker_counts, defender_counts
        if not opponent:
            raise BattleInputError("the defender has no units: give --defender")
    else:
        base, opponent = defender_counts, attacker_counts
        if not opponent:
            raise BattleInputError("--defend needs the attacking army: give --attacker")
    if seed is None:  # one seed for every force, reported when Monte Carlo is used
        seed = fresh_seed()
    names = list(pool_counts)
    caps = [pool_counts[n] for n in names]
    costs = [ruleset.units[n].cost for n in names]
    forces = math.prod(c + 1 for c in caps)
    if forces > MAX_LATTICE:
        raise BattleInputError(
            f"the pool describes {forces:,} forces, more than the {MAX_LATTICE:,} plan "
            "searches; give fewer unit types or smaller counts")

    def notices(done: int, total: int, what: str = "trials", *_) -> None:
        """A battle's progress: only its compiling notice reaches the plan's progress."""
        if what.startswith("compiling"):
            progress(done, total, what)

    def run(att, dfn) -> Result:
        try:
            return simulate(rules=rules, attacker=att, defender=dfn, sea=sea, method=method,
                            trials=trials, seed=seed,
                            progress=notices if progress is not None else None, **run_options)
        except BattleInputError as exc:
            raise BattleInputError(
                f"{format_army(att)} attacking {format_army(dfn)}: {exc}") from None

    evaluator = _Evaluator(names, mode, base, opponent, goals, run, progress)
    reason = why_not_monotone(goals, mode, run_options)
    if search not in SEARCHES:
        raise BattleInputError(f"search must be one of {', '.join(SEARCHES)}, got {search!r}")
    upward = search == "monotone" or (search == "auto" and reason is None)
    full = tuple(caps)
    sign = 1 if goals[0].op == ">=" else -1
    side_loss = "attacker_ipc_loss" if mode == "attack" else "defender_ipc_loss"

    def cost_of(point) -> float:
        return float(sum(n * c for n, c in zip(point, costs, strict=True)))

    def key_of(point):
        values = _values(evaluator.result(point))
        if objective == "cost":
            primary = cost_of(point)
        elif objective == "loss":
            primary = values[side_loss]
        else:
            primary = -values["tuv_swing"] if mode == "attack" else values["tuv_swing"]
        return (primary, cost_of(point) if objective != "cost" else 0.0,
                -sign * values[goals[0].key], point)

    budget = math.inf if max_cost is None else float(max_cost)
    best_reachable = None
    if upward and not evaluator.feasible(full):
        points: list[tuple[int, ...]] = []
        best_reachable = evaluator.result(full)
    elif upward and objective == "cost":
        points = _cheapest_lean(evaluator, caps, costs, top, budget)
    elif upward:
        points = _all_feasible_monotone(evaluator, caps, costs, budget)
    else:
        points = _all_feasible_exhaustive(evaluator, caps, costs, budget, lean=objective == "cost")
        solved = [p for p, r in evaluator.cache.items() if r is not None]
        if not points and solved:  # the force closest to the first goal
            best_reachable = evaluator.result(max(
                solved, key=lambda p: sign * _values(evaluator.result(p))[goals[0].key]))
    evaluator.finish()
    ranked = sorted(points, key=key_of)[:top]
    plans = [Plan({n: k for n, k in zip(names, p, strict=True) if k}, cost_of(p),
                  evaluator.result(p)) for p in ranked]
    for p in plans:
        if float(p.cost).is_integer():
            p.cost = int(p.cost)
    used_methods = {r.method for r in evaluator.cache.values() if r is not None}
    return PlanResult(
        rules=ruleset.id, mode=mode, goals=goals, objective=objective,
        opponent=format_army(opponent), base=format_army(base), pool=pool_counts, sea=sea,
        plans=plans, solves=evaluator.solves, forces=forces,
        search="monotone" if upward else "exhaustive",
        exhaustive_because=None if upward else (reason or "asked for"),
        method=(used_methods.pop() if len(used_methods) == 1
                else "mixed" if used_methods else method),
        seed=seed if any(r is not None and r.method == "mc" for r in evaluator.cache.values())
        else None,
        elapsed_s=time.perf_counter() - started, best_reachable=best_reachable,
    )


def _cheapest_lean(evaluator: _Evaluator, caps, costs, top: int, budget: float):
    """The `top` cheapest lean feasible forces (plus any tied with the last), for a feasible
    set closed upwards.

    The unit type with the most copies (cheapest among equals) is the *line*; the other types
    form *outer* compositions. For an outer composition c, x*(c) is the fewest line units
    that make c feasible; it never rises when c grows. Outer compositions are taken in order
    of cost; each is probed at the most line units the budget (cost of the `top`-th lean plan
    found so far, or `budget`) allows and binary-searched below if that is feasible. Every
    solved force also bounds x* for all larger outer compositions (feasible) or all smaller
    ones (infeasible).
    """
    n = len(caps)
    line = max(range(n), key=lambda i: (caps[i], -costs[i]))
    outer_idx = [i for i in range(n) if i != line]
    line_cap, line_cost = caps[line], float(costs[line])
    outer = np.array(list(itertools.product(*[range(caps[i] + 1) for i in outer_idx])),
                     dtype=np.int64)
    if not outer_idx:  # a pool of one unit type: the line alone
        outer = np.zeros((1, 0), dtype=np.int64)
    outer_cost = outer @ np.array([costs[i] for i in outer_idx], dtype=np.float64)
    order = np.lexsort((np.arange(len(outer)), outer_cost))
    # x*(c) lies in (known_infeasible[c], known_feasible[c]]; line_cap + 1 means unknown
    known_infeasible = np.full(len(outer), -1, dtype=np.int64)
    known_feasible = np.full(len(outer), line_cap + 1, dtype=np.int64)
    index_of = {tuple(row): k for k, row in enumerate(outer.tolist())}

    def point(k: int, x: int) -> tuple[int, ...]:
        full = [0] * n
        for j, i in enumerate(outer_idx):
            full[i] = int(outer[k, j])
        full[line] = x
        return tuple(full)

    def feasible(k: int, x: int) -> bool:
        if x <= known_infeasible[k]:
            return False
        if x >= known_feasible[k]:
            return True
        ok = evaluator.feasible(point(k, x))
        if ok:
            mask = (outer >= outer[k]).all(axis=1)
            np.minimum.at(known_feasible, np.flatnonzero(mask), x)
        else:
            mask = (outer <= outer[k]).all(axis=1)
            np.maximum.at(known_infeasible, np.flatnonzero(mask), x)
        return ok

    found: list[tuple[float, tuple[int, ...]]] = []  # lean plans: (cost, force)

    def current_budget() -> float:
        if len(found) < top:
            return budget
        return min(budget, heapq.nsmallest(top, found)[-1][0])

    for searched, k in enumerate(order):
        evaluator.report(searched, len(order))
        limit = current_budget()
        if outer_cost[k] > limit + 1e-9:
            break
        most = line_cap if math.isinf(limit) else min(
            line_cap, math.floor((limit - outer_cost[k]) / line_cost + 1e-9))
        if most < 0 or known_infeasible[k] >= most:
            continue
        if not feasible(k, most):  # probe the top first: most forces in budget fail
            continue
        lo, hi = int(known_infeasible[k]) + 1, min(int(known_feasible[k]), most)
        while lo < hi:
            mid = (lo + hi) // 2
            if feasible(k, mid):
                hi = mid
            else:
                lo = mid + 1
        if lo > most or not feasible(k, lo):  # only when estimates break monotonicity
            continue
        lean = True
        for j in range(len(outer_idx)):
            if outer[k, j] > 0:
                smaller = outer[k].copy()
                smaller[j] -= 1
                if feasible(index_of[tuple(smaller.tolist())], lo):
                    lean = False
                    break
        if lean:
            found.append((float(outer_cost[k]) + lo * line_cost, point(k, lo)))
    limit = current_budget()
    return [p for cost, p in found if cost <= limit + 1e-9]


def count_within(caps, costs, budget: float, limit: int) -> int:
    """How many forces (a count of each unit type up to its cap) cost at most `budget`,
    counted without listing them (the forces of the types after i within what is left of
    the budget, memoised on (i, what is left)); any number past `limit` is limit + 1 (the
    count stops there)."""
    if math.isinf(budget):
        return min(math.prod(c + 1 for c in caps), limit + 1)
    memo: dict[tuple[int, float], int] = {}

    def count(i: int, left: float) -> int:
        if i == len(caps):
            return 1
        key = (i, left)
        if key not in memo:
            total = 0
            for n in range(caps[i] + 1):
                rest = left - n * costs[i]
                if rest < -1e-9:
                    break
                total += count(i + 1, rest)
                if total > limit:
                    break
            memo[key] = min(total, limit + 1)
        return memo[key]

    return count(0, float(budget))


def _within(caps, costs, budget: float):
    """The forces of cost <= budget, in the order of itertools.product, listing no other."""
    def place(i: int, left: float, point: tuple):
        if i == len(caps):
            yield point
            return
        for n in range(caps[i] + 1):
            rest = left - n * costs[i]
            if rest < -1e-9:
                return
            yield from place(i + 1, rest, (*point, n))

    return place(0, float(budget), ())


def _all_feasible_monotone(evaluator: _Evaluator, caps, costs, budget: float):
    """Every feasible force of cost <= budget, for a feasible set closed upwards: forces are
    solved from the largest down, and a force below a solved infeasible one is skipped.
    Counted before they are listed (a pool of 2,000,000 forces was listed, some 300 MB, and
    then refused)."""
    within = count_within(caps, costs, budget, MAX_OBJECTIVE_FORCES)
    if within > MAX_OBJECTIVE_FORCES:
        raise BattleInputError(
            f"--minimize loss and --maximize swing solve every force that meets the goal, and "
            f"the pool describes more than {MAX_OBJECTIVE_FORCES:,} forces within the cost "
            "limit; shrink the pool or give --max-cost")
    points = sorted(_within(caps, costs, budget), key=lambda p: (-sum(p), p))
    infeasible: list[np.ndarray] = []
    feasible_points = []
    for searched, p in enumerate(points):
        evaluator.report(searched, len(points))
        arr = np.array(p)
        if infeasible and (np.array(infeasible) >= arr).all(axis=1).any():
            continue
        if evaluator.feasible(p):
            feasible_points.append(p)
        else:
            infeasible.append(arr)
    return feasible_points


def _all_feasible_exhaustive(evaluator: _Evaluator, caps, costs, budget: float, lean: bool):
    """Every feasible force of cost <= budget, each solved; with `lean`, only those from which
    no single unit can be dropped while still feasible."""
    if count_within(caps, costs, budget, MAX_EXHAUSTIVE) > MAX_EXHAUSTIVE:  # (before listing)
        raise BattleInputError(
            f"these goals or options need every force solved (the monotone pruning does not "
            f"apply; see `battlecalc plan --help`), and the pool describes more than "
            f"{MAX_EXHAUSTIVE:,} forces within the cost limit; shrink the pool or give "
            "--max-cost")
    points = list(_within(caps, costs, budget))
    feasible = set()
    for searched, p in enumerate(points):
        evaluator.report(searched, len(points))
        if evaluator.feasible(p):
            feasible.add(p)
    if not lean:
        return sorted(feasible)
    result = []
    for p in sorted(feasible):
        smaller = (p[:i] + (p[i] - 1,) + p[i + 1:] for i in range(len(p)) if p[i])
        if not any(q in feasible for q in smaller):
            result.append(p)
    return result
