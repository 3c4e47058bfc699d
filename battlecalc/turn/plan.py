"""The combat move that is worth the most: :func:`plan_turn` (``battlecalc turn SAVE``,
``battlecalc.plan_turn``), issue 44.

**The model.**  A plan sends a force (units of each type, from the classes that can reach it)
to each front it attacks.  A battle's value is E[TUV swing] (the defender's expected IPC loss
minus the attacker's, at the edition's costs) + the territory's own ``production`` x P(take);
an empty enemy territory is no battle: P(take) 1 if a land unit goes, swing 0; a force with no
land unit cannot take.  Defenders are every unit of a player at war with the mover, as one
side; factories, harbours and airfields are not defenders (AA guns are, and fire).  Units
already sent into a pending land battle are committed: they always fight there and their
battle always counts; the plan may add units, and then min-win applies; a raid is not a land
battle.  Liberating an ally's territory is valued as taking it.

**The objective** (``objective``): ``value`` (the default), the sum over the battles of
E[TUV swing] + production x P(take); ``swing``, the sum of E[TUV swing]; ``hold``, with the
counter-attack: the swing of both battles + production x P(take and hold).  ``min_win``:
every territory the plan sends units to is taken with at least this probability.

**The counter-attack** (``counter``): ``none``, the attacks alone; ``max``, each territory
taken is counter-attacked by every enemy unit that can reach it in the enemy's next turn,
chained exactly on the law of the attack's survivors (battlecalc.turn.counter); ``alive``, as
max less the enemy units the plan itself destroys with probability at least min-win, iterated
to a fixed point (at most 3 rounds).  ``hold`` needs one (default ``max``); under ``value``
and ``swing`` the counter-attack is solved for the plan's battles and printed, and weighs
nothing.

**The search.**  Every candidate battle is solved exactly through solve_many
(battlecalc.turn.leaves), the candidates of each front enumerated where their number allows
and searched otherwise (battlecalc.turn.search), and the best combination found by HiGHS
(battlecalc.turn.combine).  The plan is proven optimal where every front's forces were all
solved and HiGHS proved the combination optimal within the time budget.
"""

from __future__ import annotations

import json
import math
import shlex
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from ..errors import BattleInputError, quoted

OBJECTIVES = ("value", "swing", "hold")
COUNTERS = ("none", "max", "alive")
ALIVE_ROUNDS = 3
MAX_TOP = 20
MAX_TIME_BUDGET = 3600.0
SEARCH_SHARE = 0.75  # of the time budget, for finding candidates (the rest: the combination)
OBJECTIVE_WORDS = {
    "value": "E[TUV swing] + production x P(take)",
    "swing": "E[TUV swing]",
    "hold": "E[TUV swing] with the counter-attack + production x P(take and hold)",
}
COUNTER_WORDS = {
    "none": "none (the attacks alone)",
    "max": "max (every enemy unit that can reach a territory taken, in its next turn)",
    "alive": "alive (as max, less the units the plan destroys with P >= min-win)",
}


@dataclass
class PlannedBattle:
    """One battle of a plan (its keys are those of ``--format json``'s battles)."""

    target: str
    owner: str
    attackers: dict  # edition names, committed units included
    committed: dict
    origins: dict  # {territory: {TripleA type: n}} of the units the plan sends
    defenders: dict  # edition names
    defender_nations: tuple
    production: int
    territory_value: float
    p_win: float
    p_take: float
    p_hold: float | None
    swing: float  # the attack's E[TUV swing]
    swing_with_counter: float | None
    value: float
    counter: dict | None
    counter_from: dict | None  # {territory: {TripleA type: n}}
    battle: bool  # a battle is fought (False: an empty territory walked into)
    run: dict | None  # simulate's arguments of the battle (with its counter-attack)
    command: str | None  # the battlecalc run command that solves it

    def to_dict(self) -> dict:
        return {"target": self.target, "owner": self.owner, "attackers": self.attackers,
                "committed": self.committed, "from": self.origins, "defenders": self.defenders,
                "defender_nations": list(self.defender_nations),
                "production": self.production, "territory_value": self.territory_value,
                "p_win": self.p_win, "p_take": self.p_take, "p_hold": self.p_hold,
                "swing": self.swing, "swing_with_counter": self.swing_with_counter,
                "value": self.value, "counter": self.counter, "counter_from": self.counter_from,
                "battle": self.battle, "run": self.run, "command": self.command}


@dataclass
class TurnPlan:
    """The plan of a player's combat move (module documentation).  `value`: the objective's
    total; `battles`: PlannedBattle each; `moves`: ``[{"unit", "count", "from", "to"}]`` in
    TripleA's names, checked by part 1's movement model; `proven_optimal`: every force of
    every front was solved and HiGHS proved the combination best; `gap`: what is known of how
    far from the best it may be (None: not known); `solves`: candidate battles solved."""

    game: str
    edition: str
    round: int
    step: str
    player: str
    moment: str
    objective: str
    min_win: float
    counter: str
    value: float
    battles: list
    moves: list
    unused: list
    proven_optimal: bool
    gap: float | None
    why: str  # why the plan is (or is not) proven optimal, in words
    solves: int
    battles_solved: int
    seconds: float
    forces: int  # every force of every front (the empty one included)
    candidates: int  # forces solved
    greedy: float | None  # the greedy baseline's value (battlecalc.turn.search)
    notes: list = field(default_factory=list)
    alternatives: list = field(default_factory=list)  # the next best plans (--top)
    counter_rounds: int = 0

    def to_dict(self) -> dict:
        return {"game": self.game, "edition": self.edition, "round": self.round,
                "step": self.step, "player": self.player, "moment": self.moment,
                "objective": self.objective, "min_win": self.min_win, "counter": self.counter,
                "value": self.value, "proven_optimal": self.proven_optimal, "gap": self.gap,
                "why": self.why, "battles": [b.to_dict() for b in self.battles],
                "moves": self.moves, "unused": self.unused, "greedy": self.greedy,
                "solves": self.solves, "battles_solved": self.battles_solved,
                "seconds": self.seconds, "forces": self.forces,
                "candidates": self.candidates, "counter_rounds": self.counter_rounds,
                "notes": self.notes,
                "alternatives": [{"value": a.value,
                                  "battles": [b.to_dict() for b in a.battles],
                                  "moves": a.moves} for a in self.alternatives]}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    def moves_json(self) -> str:
        return json.dumps(self.moves, indent=2, ensure_ascii=False)

    def table(self) -> str:
        lines = [f"{self.game} ({self.edition}), round {self.round}, step {self.step}: the "
                 f"{self.player}' combat move ({self.moment})",
                 f"objective {self.objective}: {OBJECTIVE_WORDS[self.objective]}; every attack "
                 f"takes with P >= {self.min_win:g}; counter-attack {COUNTER_WORDS[self.counter]}"]
        lines.append(_summary(self))
        for i, plan in enumerate([self, *self.alternatives]):
            if i:
                lines += ["", f"plan {i + 1}: worth {plan.value:.6f}"]
            if not plan.battles:
                lines += ["", "  no attack is worth making"]
            for b in plan.battles:
                lines += [""] + _battle_lines(b, self.counter != "none")
            if i == 0 and self.alternatives:
                lines += ["", *_moves_lines(plan.moves)]
        if not self.alternatives:
            lines += ["", *_moves_lines(self.moves)]
        if self.unused:
            lines += ["", "unused: " + "; ".join(
                f"{u['from']} / {u['unit']} x{u['count']}" for u in self.unused)]
        for note in self.notes:
            lines.append(f"note: {note}")
        return "\n".join(lines) + "\n"


def _summary(plan: TurnPlan) -> str:
    how = "proven optimal" if plan.proven_optimal else f"not proven optimal ({plan.why})"
    if plan.gap is not None and not plan.proven_optimal:
        how += f", gap at most {plan.gap:.6f}"
    greedy = "" if plan.greedy is None else f"; the greedy baseline: {plan.greedy:.6f}"
    return (f"plan worth {plan.value:.6f} IPC, {how}; {plan.forces:,} forces, "
            f"{plan.battles_solved:,} battles solved ({plan.seconds:.1f} s){greedy}")


def _battle_lines(b: PlannedBattle, counter: bool) -> list[str]:
    from ..army import format_army

    defenders = format_army(b.defenders) if b.defenders else "no defender"
    head = f"{b.target} ({', '.join(b.defender_nations) or b.owner}: {defenders}; " \
           f"production {b.production}"
    if b.territory_value != b.production:
        head += f", counted as {b.territory_value:g}"
    lines = [head + ")", f"  attackers  {format_army(b.attackers)}"]
    origins = "; ".join(f"{t}: " + ", ".join(f"{n} {k}" for k, n in units.items())
                        for t, units in b.origins.items())
    if b.committed:
        origins = (origins + "; " if origins else "") + \
            f"already there: {format_army(b.committed)}"
    lines.append(f"  from       {origins}")
    odds = f"  P(win) {b.p_win:.4f}  P(take) {b.p_take:.4f}"
    if b.p_hold is not None:
        odds += f"  P(hold) {b.p_hold:.4f}"
    odds += f"  E[swing] {b.swing:+.3f}"
    if b.swing_with_counter is not None:
        odds += f" ({b.swing_with_counter:+.3f} with the counter-attack)"
    odds += f"  value {b.value:.6f}"
    lines.append(odds)
    if counter:
        if b.counter:
            where = "; ".join(f"{t}: " + ", ".join(f"{n} {k}" for k, n in units.items())
                              for t, units in (b.counter_from or {}).items())
            lines.append(f"  counter    {format_army(b.counter)} (from {where})")
        else:
            lines.append("  counter    none: no enemy unit can reach it")
    if not b.battle:
        lines.append("  no battle: the land units walk in")
    if b.command:
        lines.append(f"  {b.command}")
    return lines


def _moves_lines(moves: list) -> list[str]:
    if not moves:
        return ["moves: none"]
    return ["moves:", *(f"  {m['count']} {m['unit']} {m['from']} -> {m['to']}" for m in moves)]


# ---------------------------------------------------------------- checking the arguments


def _check(objective, min_win, counter, top, time_budget) -> str:
    if objective not in OBJECTIVES:
        raise BattleInputError(f"objective: expected one of {', '.join(OBJECTIVES)}, got "
                               f"{quoted(objective)}")
    if isinstance(min_win, bool) or not isinstance(min_win, int | float) or not (
            0.0 <= min_win <= 1.0):
        raise BattleInputError(f"min_win: expected a probability 0..1, got {quoted(min_win)}")
    if counter is None:
        counter = "max" if objective == "hold" else "none"
    if counter not in COUNTERS:
        raise BattleInputError(f"counter: expected one of {', '.join(COUNTERS)}, got "
                               f"{quoted(counter)}")
    if objective == "hold" and counter == "none":
        raise BattleInputError("counter: none with objective hold, which weighs the "
                               "counter-attack (give max or alive)")
    if isinstance(top, bool) or not isinstance(top, int) or not 1 <= top <= MAX_TOP:
        raise BattleInputError(f"top: expected a whole number of plans 1..{MAX_TOP}, got "
                               f"{quoted(top)}")
    if isinstance(time_budget, bool) or not isinstance(time_budget, int | float) or \
            not math.isfinite(time_budget) or not 0 < time_budget <= MAX_TIME_BUDGET:
        raise BattleInputError(f"time_budget: expected seconds, more than 0 and at most "
                               f"{MAX_TIME_BUDGET:g}, got {quoted(time_budget)}")
    return counter


# ---------------------------------------------------------------- the planner


def plan_turn(save, player: str | None = None, *, objective: str = "value",
              min_win: float = 0.8, counter: str | None = None, territory_values=None,
              only=None, exclude=None, keep=None, top: int = 1, time_budget: float = 30.0,
              progress: Callable[[str], None] | None = None) -> TurnPlan:
    """The combat move of `player` (default: the save's player to move) in the TripleA save
    `save` (a path or a battlecalc.turn.TurnSave) that is worth the most (module
    documentation).  territory_values: {territory: IPC} (or a JSON file of it) counted
    instead of production; only / exclude: territories (a list or "T1,T2") to plan or leave;
    keep: "N UNIT@TERRITORY" texts of units that stay home; top: how many plans; time_budget:
    seconds for the search (the best plan found is kept); progress(text): called as the work
    goes.  BattleInputError (one line) for anything it cannot plan from."""
    from .combine import scipy_optimize

    started = time.perf_counter()
    counter = _check(objective, min_win, counter, top, time_budget)
    if player is not None and not isinstance(player, str):
        raise BattleInputError(f"player: expected a player's name, got {quoted(player)}")
    scipy_optimize()  # (one line, before any work, where scipy is missing)
    planner = _Planner(save, player, objective=objective, min_win=float(min_win),
                       counter=counter, territory_values=territory_values, only=only,
                       exclude=exclude, keep=keep, top=top, time_budget=float(time_budget),
                       progress=progress, started=started)
    return planner.run()


class _Planner:
    def __init__(self, save, player, *, objective, min_win, counter, territory_values, only,
                 exclude, keep, top, time_budget, progress, started):
        from .combine import Combination
        from .counter import CounterForces
        from .leaves import Leaves
        from .loading import TurnSave, load
        from .theatre import theatre_of

        self.started = started
        self.deadline = time.monotonic() + time_budget
        self.search_deadline = time.monotonic() + SEARCH_SHARE * time_budget
        self.objective, self.min_win, self.counter, self.top = objective, min_win, counter, top
        self.progress = progress
        self.say("reading the save")
        turn_save = save if isinstance(save, TurnSave) else load(save)
        self.theatre = theatre_of(turn_save, player, territory_values=territory_values,
                                  only=only, exclude=exclude, keep=keep)
        self.counters = CounterForces(self.theatre) if counter != "none" else None
        self.leaves = Leaves(self.theatre, progress,
                             counter_owners=self._counter_owners)
        self.combination = Combination(self.theatre)
        self.without: frozenset = frozenset()  # alive: the fronts whose units are destroyed
        self.notes = list(self.theatre.notes)
        self.searched: list[str] = []
        self.cut_short: list[str] = []

    def say(self, text: str) -> None:
        if self.progress is not None:
            self.progress(text)

    # ------------------------------------------------------------ leaves and values
    def _counter_owners(self, front: str) -> tuple:
        return self.counters.owners(front) if self.counters is not None else ()

    def counter_key(self, front: str, without: frozenset | None = None):
        """The counter key of a leaf on `front`: None without a counter model, else the
        counter army (max, or alive less the units of `without`)."""
        if self.counters is None:
            return None
        army = self.counters.force(front, self.without if without is None else without)
        return tuple(army.items())

    def search_key(self, front: str, force: tuple) -> tuple:
        """The leaf the search values a candidate by: with its counter under hold."""
        return (front, force, self.counter_key(front) if self.objective == "hold" else None)

    def value_of(self, front, leaf) -> float:
        if self.objective == "value":
            return leaf.swing + front.value * leaf.p_take
        if self.objective == "swing":
            return leaf.swing
        return leaf.swing_all + front.value * leaf.p_hold

    def feasible(self, front, force: tuple, leaf) -> bool:
        if front.pending and not any(force):
            return True  # the committed units fight whatever the plan
        return leaf.p_take >= self.min_win - 1e-12 and (
            self.min_win > 0 or self.theatre.has_land(front, force) or leaf.p_win > 0)

    # ------------------------------------------------------------ the work
    def run(self) -> TurnPlan:
        from .search import (
            ENUMERATE_FRONT,
            ENUMERATE_TOTAL,
            GREEDY_TAKE,
            count_forces,
            enumerate_forces,
            greedy,
            price_and_climb,
        )

        theatre = self.theatre
        need_land = self.min_win > 0
        fronts = list(theatre.fronts.values())
        # a front its whole supply cannot take with min-win's probability is left (P(take)
        # never falls when a unit is added); pending fronts keep their battle
        full = {f.name: tuple(f.supply) for f in fronts}
        self.say("solving each front's whole force")
        self.leaves.solve(self.search_key(f.name, full[f.name]) for f in fronts
                          if any(full[f.name]) and (not need_land or theatre.has_land(
                              f, full[f.name])))
        if any(f.pending for f in fronts):
            zero = tuple(0 for _ in theatre.types)
            self.leaves.solve(self.search_key(f.name, zero) for f in fronts if f.pending)
        open_fronts = []
        for f in fronts:
            whole = full[f.name]
            reachable = any(whole) and (not need_land or theatre.has_land(f, whole))
            if reachable and self.leaves.known(*self.search_key(f.name, whole)):
                leaf = self.leaves.get(*self.search_key(f.name, whole))
                if leaf.p_take >= self.min_win - 1e-12:
                    open_fronts.append(f)
                    continue
                why = f"every unit that can reach it takes it with P {leaf.p_take:.4f}, " \
                      f"below min-win {self.min_win:g}"
            else:
                why = "no land unit can reach it (a force with no land unit cannot take)" \
                    if any(whole) else "nothing can reach it"
            if f.pending:
                open_fronts.append(f)  # (its committed battle, with no unit added)
            elif self.min_win > 0:
                self.notes.append(f"{f.name}: not attacked: {why}")
        # enumerate the fronts with few forces, search the others
        counts = {f.name: count_forces(theatre, f, need_land) for f in open_fronts}
        enumerated, total = [], 0
        for f in sorted(open_fronts, key=lambda f: counts[f.name]):
            if counts[f.name] <= ENUMERATE_FRONT and total + counts[f.name] <= ENUMERATE_TOTAL:
                enumerated.append(f)
                total += counts[f.name]
            else:
                self.searched.append(f.name)
        columns: dict = {f.name: {} for f in open_fronts}
        for f in open_fronts:  # the whole force, and the committed battle alone
            for force in (full[f.name], tuple(0 for _ in theatre.types)):
                self._add(columns, f, force)
        self.say(f"solving {total:,} candidate battles")
        wanted = [self.search_key(f.name, force) for f in enumerated
                  for force in enumerate_forces(theatre, f, need_land)]
        from .search import BATCH

        for start in range(0, len(wanted), BATCH):
            if time.monotonic() > self.search_deadline:
                self.cut_short = sorted({key[0] for key in wanted[start:]})
                break
            self.leaves.solve(wanted[start:start + BATCH])
        for f in enumerated:
            for force in enumerate_forces(theatre, f, need_land):
                self._add(columns, f, force)
        # the greedy baseline: its forces are candidates
        self.say("the greedy baseline")
        threshold = max(GREEDY_TAKE, self.min_win)
        # (not cut by the time budget: the plan is never worth less than the baseline)
        base = greedy(theatre, self.leaves, self.search_key, self.value_of, threshold)
        for name, force in base.chosen.items():
            self._add(columns, theatre.fronts[name], force)
        if self.searched:
            self.say(f"searching {', '.join(self.searched)}")
            price_and_climb(theatre, self.leaves, self.combination, columns, self.searched,
                            self.search_key, self.value_of, self.feasible,
                            self.search_deadline, self.progress)
        solutions, rounds, fixed = self._combine(columns)
        greedy_value, _ = self._evaluate(base.chosen)
        best_value, _ = self._evaluate(solutions[0].chosen) if solutions else (0.0, None)
        if not solutions or best_value < greedy_value - 1e-9:
            # (the combination stopped at its time limit below the baseline: the baseline)
            only_greedy = {t: [(f, columns[t].get(f, 0.0))] for t, f in base.chosen.items()}
            solutions = self.combination.best(only_greedy, top=1, time_limit=10.0)
            for s in solutions:
                s.optimal = False
            self.notes.append("the combination found nothing better than the greedy baseline "
                              "in its time: the plan is the baseline")
        plans = [self._plan(s) for s in solutions]
        best = plans[0]
        proven = (not self.searched and not self.cut_short and solutions[0].optimal
                  and fixed)
        if proven:
            why = "every force of every front solved, the combination proven best by HiGHS"
        elif self.cut_short:
            why = f"the time budget ended before every force of {', '.join(self.cut_short)} " \
                  "was solved"
        elif self.searched:
            why = f"{', '.join(self.searched)} had too many forces to solve them all: the " \
                  "plan is the best combination of the forces searched"
        elif not fixed:
            why = f"the alive counter-attack reached no fixed point in {ALIVE_ROUNDS} rounds"
        else:
            why = "HiGHS stopped at the time budget before proving the combination best"
        if self.counters is not None:
            self.notes += self.counters.notes
        seconds = time.perf_counter() - self.started
        board = theatre.board
        return TurnPlan(
            game=board.game, edition=theatre.ruleset.id, round=board.round, step=board.step,
            player=board.player, moment=board.moment, objective=self.objective,
            min_win=self.min_win, counter=self.counter, value=best.value,
            battles=best.battles, moves=best.moves, unused=best.unused,
            proven_optimal=proven, gap=0.0 if proven else (
                None if self.searched or self.cut_short or not fixed else solutions[0].gap),
            why=why,
            solves=self.leaves.solves, battles_solved=self.leaves.battles, seconds=seconds,
            forces=sum(f.forces() for f in theatre.fronts.values()),
            candidates=sum(len(c) for c in columns.values()), greedy=greedy_value,
            notes=self.notes, alternatives=plans[1:], counter_rounds=rounds)

    def _add(self, columns: dict, front, force: tuple) -> None:
        """A candidate of `front` where its leaf is known and feasible."""
        key = self.search_key(front.name, force)
        if front.name not in columns or not self.leaves.known(*key):
            return
        leaf = self.leaves.get(*key)
        if self.feasible(front, force, leaf):
            columns[front.name][force] = self.value_of(front, leaf)

    def _columns_for_program(self, columns: dict) -> dict:
        """The candidates the program takes: worth more than nothing (a front's committed
        battle alone always), no force beaten by a smaller one (where no escort binds)."""
        from .search import dominated

        out = {}
        for t, forces in columns.items():
            front = self.theatre.fronts[t]
            items = [(f, v) for f, v in forces.items() if v > 1e-12 or front.pending]
            if not front.escorted and len(items) > 1:
                drop = dominated([f for f, _ in items], [v for _, v in items])
                zero = tuple(0 for _ in self.theatre.types)
                items = [item for i, item in enumerate(items)
                         if i not in drop or (front.pending and item[0] == zero)]
            out[t] = items
        return out

    def _combine(self, columns: dict):
        """The best combinations, and under hold with alive the rounds to a fixed point:
        (solutions, rounds, whether a fixed point was reached)."""
        self.say("choosing the best combination")
        left = max(self.deadline - time.monotonic(), 2.0)
        solutions = self.combination.best(self._columns_for_program(columns), top=self.top,
                                          time_limit=left)
        if not (self.objective == "hold" and self.counter == "alive") or not solutions:
            return solutions, 1 if self.counter != "none" else 0, True
        rounds = 1
        while rounds < ALIVE_ROUNDS:
            without = self._destroyed(solutions[0].chosen)
            if without == self.without:
                return solutions, rounds, True
            self.without = without
            rounds += 1
            self.say(f"alive counter-attack, round {rounds}")
            self.leaves.solve(self.search_key(t, f) for t, forces in columns.items()
                              for f in forces)
            for t in columns:
                front = self.theatre.fronts[t]
                columns[t] = {f: self.value_of(front, self.leaves.get(*self.search_key(t, f)))
                              for f in columns[t]}
            left = max(self.deadline - time.monotonic(), 2.0)
            solutions = self.combination.best(self._columns_for_program(columns),
                                              top=self.top, time_limit=left)
        fixed = self._destroyed(solutions[0].chosen) == self.without
        return solutions, rounds, fixed

    def _destroyed(self, chosen: dict) -> frozenset:
        """The fronts of a plan where every defender is destroyed with P >= min-win."""
        found = set()
        for t, force in chosen.items():
            leaf = self.leaves.get(*self._attack_key(t, force))
            if leaf.p_destroyed >= self.min_win and self.theatre.fronts[t].defender:
                found.add(t)
        return frozenset(found)

    def _attack_key(self, front: str, force: tuple) -> tuple:
        key = self.search_key(front, force)
        if not self.leaves.known(*key):
            self.leaves.solve([key])
        return key

    def _evaluate(self, chosen: dict):
        """(value, {front: leaf}) of a plan with its own counter-attacks (alive: less what
        it destroys), every leaf solved."""
        if not chosen:
            return 0.0, {}
        without = self._destroyed(chosen) if self.counter == "alive" else frozenset()
        keys = {t: (t, f, self.counter_key(t, without)) for t, f in chosen.items()}
        self.leaves.solve(keys.values())
        shown = {t: self.leaves.get(*k) for t, k in keys.items()}
        if self.objective == "hold":
            value = sum(self.value_of(self.theatre.fronts[t], leaf) for t, leaf in shown.items())
        else:  # (the attack's own values: the counter-attack is shown, weighs nothing)
            value = sum(self.value_of(self.theatre.fronts[t], self.leaves.get(
                *self._attack_key_plain(t, f))) for t, f in chosen.items())
        return value, shown

    def _attack_key_plain(self, front: str, force: tuple) -> tuple:
        key = (front, force, None)
        if not self.leaves.known(*key):
            self.leaves.solve([key])
        return key

    # ------------------------------------------------------------ the plan's words
    def _plan(self, solution) -> TurnPlan:
        from .moves import check_moves

        theatre = self.theatre
        value, shown = self._evaluate(solution.chosen)
        without = self._destroyed(solution.chosen) if self.counter == "alive" else frozenset()
        origins: dict = defaultdict(lambda: defaultdict(Counter))
        moves: dict = Counter()
        used: Counter = Counter()
        for (index, t), n in sorted(solution.flows.items()):
            s = theatre.supplies[index]
            origins[t][s.territory][s.unit_type] += n
            moves[(s.unit_type, s.territory, t)] += n
            used[index] += n
        move_list = [{"unit": u, "count": n, "from": a, "to": b}
                     for (u, a, b), n in sorted(moves.items(), key=lambda item: (
                         list(theatre.fronts).index(item[0][2]), item[0][1], item[0][0]))]
        check = check_moves(theatre.reach, move_list)
        if not check.legal:  # pragma: no cover - the program's flows are part 1's reach
            raise BattleInputError(f"the plan's moves fail the movement check: "
                                   f"{check.problems[0]}")
        battles = []
        for t in theatre.fronts:
            if t not in solution.chosen:
                continue
            front, force = theatre.fronts[t], solution.chosen[t]
            leaf = shown[t]
            plain = self.leaves.get(*self._attack_key_plain(t, force)) \
                if self.objective != "hold" else leaf
            army = theatre.army(front, force)
            counter = dict(self.counter_key(t, without)) if self.counters is not None else None
            sources = None
            if self.counters is not None:
                sources = defaultdict(Counter)
                for src in self.counters.sources(t):
                    if src.territory not in without:
                        sources[src.territory][src.unit_type] += src.count
                sources = {k: dict(v) for k, v in sources.items()}
            battles.append(PlannedBattle(
                target=t, owner=front.owner, attackers=army, committed=dict(front.committed),
                origins={a: dict(units) for a, units in origins[t].items()},
                defenders=dict(front.defender), defender_nations=front.defender_nations,
                production=front.production, territory_value=front.value,
                p_win=plain.p_win, p_take=plain.p_take,
                p_hold=leaf.p_hold if self.counters is not None else None,
                swing=plain.swing,
                swing_with_counter=leaf.swing_all if self.counters is not None else None,
                value=self.value_of(front, leaf if self.objective == "hold" else plain),
                counter=counter or ({} if counter is not None else None),
                counter_from=sources, battle=not front.empty,
                run=(run := _run_arguments(theatre, front, army, counter,
                                           self._counter_owners(t))),
                command=run_command(run)))
        unused = []
        for s in theatre.supplies:
            left = s.count - used[s.index]
            if left > 0:
                unused.append({"from": s.territory, "unit": s.unit_type, "count": left,
                               "could_attack": sorted(s.targets)})
        return TurnPlan(
            game=theatre.board.game, edition=theatre.ruleset.id, round=theatre.board.round,
            step=theatre.board.step, player=theatre.player, moment=theatre.board.moment,
            objective=self.objective, min_win=self.min_win, counter=self.counter, value=value,
            battles=battles, moves=move_list, unused=unused, proven_optimal=False, gap=None,
            why="", solves=0, battles_solved=0, seconds=0.0, forces=0, candidates=0,
            greedy=None)


def _run_arguments(theatre, front, army: dict, counter: dict | None,
                   owners: tuple) -> dict | None:
    """simulate's arguments of a planned battle (with its counter-attack; for an empty
    territory with a counter model: the counter-attack on the units that walked in), or None
    where no battle is fought."""
    from ..army import format_army
    from .leaves import _counter_tech, _land

    options = theatre.battle_options(front)
    run = {"rules": theatre.ruleset.id}
    if not front.empty:
        run.update(attacker=format_army(army), defender=format_army(front.defender))
        if counter:
            run["counterattack"] = format_army(counter)
            tech = _counter_tech(theatre, front, owners)
            if tech:
                options["defender_tech"] = list(tech)
        attacker_tech = options.get("attacker_tech")
        defender_tech = options.get("defender_tech")
    elif counter and _land(theatre, army):
        run.update(attacker=format_army(counter), defender=format_army(_land(theatre, army)))
        attacker_tech = list(_counter_tech(theatre, front, owners)) or None
        defender_tech = list(theatre.attacker_tech) or None
    else:
        return None
    if options.get("dice"):
        run["dice"] = options["dice"]
    if attacker_tech:
        run["attacker_tech"] = list(attacker_tech)
    if defender_tech:
        run["defender_tech"] = list(defender_tech)
    run["method"] = "exact"
    return run


RUN_FLAGS = {"attacker": "-a", "defender": "-d", "method": "-m"}


def run_command(run: dict | None) -> str | None:
    """The ``battlecalc run`` command of simulate's arguments (run_arguments')."""
    if run is None:
        return None
    words = ["battlecalc", "run"]
    for key, value in run.items():
        flag = RUN_FLAGS.get(key, "--" + key.replace("_", "-"))
        if isinstance(value, list):
            value = ",".join(value)
        words += [flag, str(value).replace("_", "-") if key == "dice" else str(value)]
    return " ".join(shlex.quote(w) for w in words)
