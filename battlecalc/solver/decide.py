"""The optimal decisions (issue 31): the attacker's best choice at every state pair where it may
retreat, and each side's submerge choices where it submerges optimally, by backward induction
(kernels/exact/sweep._decide_values, _decide_first), and that policy as a player reads it.

The backward sweep is --retreat-below's (solver.exact.fill_win_values) with another value: the
objective's expected value (spec.Objective: the TUV swing, the chance of winning or of taking
the territory, or the TUV swing plus the territory's value) from each pair a round's end
enters, retreating wherever stopping is worth more than fighting on.  The policy found is a
mask in the battle's retreat tables (win_value 1.0: press on, 0.0: retreat, under the
threshold compile.OPTIMAL_MASK), so the exact solver solves the battle forward under it and
Monte Carlo plays it, by the kernels' ordinary retreat path.  The submerge choices of a side
that submerges optimally are a table of bits beside it (RetreatTables.choices, the policy
layout.POLICY_TABLE), read by round_model.submerge_step in both solvers.

:class:`Policy` holds what the sweep found: the value of every pair, the choice at every
decision pair, the value of the option not taken, and gives it as a table of rows (JSON, CSV)
and as a rule in words where one fits ("press on while you have >= 4 units and they have
<= 5; otherwise retreat").
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from ..kernels import jit
from ..kernels.exact import pairs, sweep
from ..kernels.layout import (
    B_KIND,
    B_OFFSET,
    BLOCK_START,
    C_A_DECIDES,
    C_A_SUBMERGES,
    C_D_DECIDES,
    C_D_SUBMERGES,
    C_DA_DECIDES,
    C_DA_SUBMERGES,
    C_FIRST,
    CONTINUE,
    I_SUBMERGED,
    NO_CHOICES,
    POLICY_TABLE,
    RU_A_POLICY,
    RU_AIR_ALWAYS,
    RU_D_POLICY,
    S_BLOCK,
    S_INFO,
    S_UNITS,
)
from ..kernels.round_model import settle, submerges_before_fire
from . import threads
from .exact import backward_sweep
from .plan import Limits, SolvePlan, exact_view, spend

# the decision mask (the retreat tables' win_value): at a pair where the attacker decides,
# PRESS_ON or RETREAT; elsewhere NO_DECISION (it fights on: nothing to decide there)
PRESS_ON, RETREAT, NO_DECISION = 1.0, 0.0, 2.0
MAX_RULE_ROWS = 40  # a rule in words of more attacker counts than this is not written


@dataclass(frozen=True, eq=False)
class Policy:
    """The optimal decisions of a compiled battle: value[a, d] (the objective from the pair a
    round's end enters), press[a, d] (PRESS_ON / RETREAT where the attacker decides to
    retreat or not, else NO_DECISION), other[a, d] (at such a pair: the value of the option
    not taken), the objective (spec.Objective), the battle (its retreat tables holding the
    policy) and choices, the submerge choices of a side that submerges optimally
    (layout.C_* bits; NO_CHOICES where none does)."""

    compiled: Any
    value: np.ndarray
    press: np.ndarray
    other: np.ndarray
    objective: Any
    choices: np.ndarray = dataclasses.field(default_factory=lambda: NO_CHOICES)

    @cached_property
    def decisions(self) -> tuple[np.ndarray, np.ndarray]:
        """The retreat decision pairs (attacker states, defender states) a battle from its
        start may reach: the attacker's in blocks it starts in (a partial retreat's stayers
        never decide)."""
        a, d = np.nonzero(self.press != NO_DECISION)
        kept = self._starting(a)
        return a[kept], d[kept]

    @cached_property
    def _names(self) -> dict:
        return {}

    def state_name(self, side: str, x: int) -> str:
        """A state's units as army notation (submerged submarines said so), each state's
        made once."""
        key = (side, x)
        name = self._names.get(key)
        if name is None:
            tables = self.compiled.attacker if side == "attacker" else self.compiled.defender
            row = tables.survivors[x].tolist()
            name = ", ".join(f"{c} {n}" for n, c in zip(tables.unit_names, row, strict=True)
                             if c) or "nothing"
            if tables.states[x, S_INFO] & I_SUBMERGED:
                name += " (subs submerged)"
            self._names[key] = name
        return name

    def _starting(self, a: np.ndarray) -> np.ndarray:
        """Whether each attacker state lies in a block the battle starts in."""
        att = self.compiled.attacker
        starting = np.zeros(len(att.blocks), dtype=bool)
        offsets = att.blocks[:, B_OFFSET]
        for b in range(len(att.blocks)):
            end = offsets[b + 1] if b + 1 < len(offsets) else att.n_states
            starting[b] = (att.blocks[b, B_KIND] == BLOCK_START
                           and att.start[offsets[b]:end].any())
        return starting[att.states[a, S_BLOCK]]

    @cached_property
    def table(self) -> list[dict[str, Any]]:
        """rows(), made once."""
        return self.rows()

    def rows(self) -> list[dict[str, Any]]:
        """One row a decision: the attacker's retreat at each decision pair (most attacker
        units first, then fewest defender units), then each side's submerge choices where it
        submerges optimally: the units each side has and their counts, the decision, whether
        at the battle's first round start, the choice, and for a retreat the objective's
        value of pressing on and of retreating there."""
        att, dfn = self.compiled.attacker, self.compiled.defender
        rows = []
        a, d = self.decisions
        order = np.lexsort((d, a, dfn.states[d, S_UNITS], -att.states[a, S_UNITS]))
        for i in order.tolist():
            x, y = int(a[i]), int(d[i])
            press = self.press[x, y] == PRESS_ON
            value, other = float(self.value[x, y]), float(self.other[x, y])
            rows.append(self._row("retreat", x, y, False, "press on" if press else "retreat",
                                  value if press else other, other if press else value))
        if self.choices.shape != self.value.shape:
            return rows
        for first in (True, False):
            shift = C_FIRST if first else 0
            for what, decides, yes in (
                    ("attacker submerges", C_A_DECIDES, C_A_SUBMERGES),
                    ("defender submerges", C_D_DECIDES, C_D_SUBMERGES),
                    ("defender submerges", C_DA_DECIDES, C_DA_SUBMERGES)):
                a, d = np.nonzero((self.choices >> shift) & decides)
                keep = self._starting(a)
                a, d = a[keep], d[keep]
                order = np.lexsort((d, a, dfn.states[d, S_UNITS], -att.states[a, S_UNITS]))
                for i in order.tolist():
                    x, y = int(a[i]), int(d[i])
                    go = (self.choices[x, y] >> shift) & yes
                    rows.append(self._row(what, x, y, first, "submerge" if go else "stay",
                                          None, None))
        return rows

    def _row(self, what: str, a: int, d: int, first: bool, choice: str, press_on, retreat):
        return {"decision": what, "attacker": self.state_name("attacker", a),
                "defender": self.state_name("defender", d),
                "attacker_units": int(self.compiled.attacker.states[a, S_UNITS]),
                "defender_units": int(self.compiled.defender.states[d, S_UNITS]),
                "first_round": first, "choice": choice, "press_on_value": press_on,
                "retreat_value": retreat}

    def submerging(self) -> dict[str, str]:
        """Each side that submerges optimally: its choices in words."""
        words = {}
        if self.choices.shape != self.value.shape:
            return words
        kinds = {"attacker": ((C_A_DECIDES, C_A_SUBMERGES),),
                 "defender": ((C_D_DECIDES, C_D_SUBMERGES), (C_DA_DECIDES, C_DA_SUBMERGES))}
        for side, bits in kinds.items():
            if self.compiled.rules[RU_A_POLICY if side == "attacker"
                                   else RU_D_POLICY] != POLICY_TABLE:
                continue
            states = dives = 0
            for shift in (C_FIRST, 0):
                for decides, yes in bits:
                    a, d = np.nonzero((self.choices >> shift) & decides)
                    keep = self._starting(a)
                    states += int(keep.sum())
                    dives += int(((self.choices[a[keep], d[keep]] >> shift) & yes).astype(
                        bool).sum())
            words[side] = ("its submarines never get to submerge" if not states
                           else "never submerge" if not dives
                           else "submerge wherever they may" if dives == states
                           else f"submerge at {dives} of the {states} decision states "
                                "(see the policy table)")
        return words

    @cached_property
    def by_counts(self) -> dict[tuple[int, int], set[str]]:
        """{(attacker units, defender units): the choices taken at such decision pairs}."""
        a, d = self.decisions
        n_a = self.compiled.attacker.states[a, S_UNITS]
        n_d = self.compiled.defender.states[d, S_UNITS]
        cells: dict[tuple[int, int], set[str]] = {}
        for x, y, p in zip(n_a.tolist(), n_d.tolist(), (self.press[a, d] == PRESS_ON).tolist(),
                           strict=True):
            cells.setdefault((x, y), set()).add("press on" if p else "retreat")
        return cells

    def rule(self) -> str:
        """The policy in words (module docstring)."""
        return rule_in_words(self.by_counts)


def rule_in_words(cells: dict[tuple[int, int], set[str]]) -> str:
    """A retreat policy by unit counts in words: cells {(your units, their units): the choices
    taken there}.  "never retreat", "retreat after round 1", or, where for each count of your
    units you press on up to some count of theirs and retreat above it, "press on while you
    have >= 4 units and they have <= 5, or ...; otherwise retreat"; where the choice depends
    on which units are left (a cell holds both), or is not such a threshold, it says so."""
    if not cells:
        return "no retreat decision arises: the battle is fought to the end"
    choices = set().union(*cells.values())
    if choices == {"press on"}:
        return "never retreat: fight to the end"
    if choices == {"retreat"}:
        return "retreat at the end of the first round, whatever is left"
    mixed = sorted(k for k, v in cells.items() if len(v) > 1)
    limit: dict[int, int | None] = {}  # your units -> most of theirs you press on against
    for mine in sorted({m for m, _ in cells}):
        theirs = sorted((t, next(iter(cells[(mine, t)]))) for m, t in cells if m == mine
                        and len(cells[(mine, t)]) == 1)
        pressing = [t for t, c in theirs if c == "press on"]
        top = max(pressing) if pressing else None
        if top is not None and any(c == "retreat" and t < top for t, c in theirs):
            return ("the choice is not a threshold on the units left (it depends on which "
                    "units they are): see the policy table")
        limit[mine] = top
    clauses = []
    mines = sorted(limit, reverse=True)
    most_theirs = max(t for _, t in cells)
    i = 0
    while i < len(mines):
        top = limit[mines[i]]
        if top is None:
            i += 1
            continue
        # the longest run of your counts below mines[i] (one less each) pressing on against
        # the same count of theirs (flat), or against as many more or fewer than yours
        flat = _run(mines, limit, i, 0)
        diagonal = _run(mines, limit, i, 1)
        j = diagonal if diagonal > flat else flat
        hi, lo = mines[i], mines[j]
        if i == 0:  # the most units you have: from lo on
            you = f"you have >= {lo} units"
        else:
            you = f"you have {lo}" if hi == lo else f"you have {lo}-{hi}"
            you += " unit" if hi == 1 else " units"
        if diagonal > flat:
            gap = top - hi
            they = ("they have no more than you" if gap == 0
                    else f"they have at most {gap} more than you" if gap > 0
                    else f"they have at least {-gap} fewer than you")
            clauses.append(f"{you} and {they}")
        elif top >= most_theirs:
            clauses.append(f"{you} (whatever they have)")
        else:
            clauses.append(f"{you} and they have <= {top}")
        i = j + 1
    if not clauses:
        return ("the choice depends on which units are left, not only on how many: see the "
                "policy table")
    if len(clauses) > MAX_RULE_ROWS:
        return "the rule has too many cases to write: see the policy table"
    text = "press on while " + ", or ".join(clauses) + "; otherwise retreat"
    if mixed:
        shown = ", ".join(f"{m} v {t}" for m, t in mixed[:4]) + (", ..." if len(mixed) > 4
                                                                  else "")
        text += (f" (at {shown} it depends on which units are left: see the policy table)")
    return text


def _run(mines: list[int], limit: dict, i: int, slope: int) -> int:
    """The last index j >= i of mines (descending counts) such that mines[i..j] go down one at
    a time and each one's limit is that of mines[i] less `slope` per count less (0: the same
    limit; 1: as many more or fewer of theirs as of yours)."""
    j = i
    while j + 1 < len(mines) and mines[j + 1] == mines[j] - 1:
        top = limit[mines[j + 1]]
        if top is None or top != limit[mines[i]] - slope * (mines[i] - mines[j + 1]):
            break
        j += 1
    return j


def fill_decisions(compiled, plan: SolvePlan, progress=None) -> tuple[Any, Policy]:
    """The battle with its optimal retreat in its retreat tables (compiled.retreat.win_value:
    the mask, see the module docstring), and the Policy, from the backward sweep
    (kernels/exact/sweep._decide_values) over every state pair, before a plan with `decide`
    runs.  Filled a range of attacker states at a time (about limits.decide_call_seconds each),
    progress(done, total, "optimal retreat") counting state pairs after each, so a caller's
    progress hook can stop it by raising."""
    n_a, n_d = compiled.attacker.n_states, compiled.defender.n_states
    press = np.full((n_a, n_d), NO_DECISION)
    rules = compiled.rules
    tables = POLICY_TABLE in (rules[RU_A_POLICY], rules[RU_D_POLICY])
    choices = np.zeros((n_a, n_d), dtype=np.int64) if tables else NO_CHOICES
    retreat = compiled.retreat_tables()._replace(win_value=press, choices=choices)
    compiled = dataclasses.replace(compiled, retreat=retreat)
    view = exact_view(compiled, plan)
    seconds = plan.decide_seconds
    limits = plan.limits
    spend(plan, seconds, limits)
    # its kernels, compiled (numba compiles them on the first call, or loads them from its
    # cache) or plain Python (solver.plan.kernels_for)
    kernels, pair_kernels = jit.kernels(sweep, plan.compiled), jit.kernels(pairs, plan.compiled)
    with jit.compiling(kernels._decide_values, progress if plan.compiled else None):
        return _fill_decisions(compiled, view, plan, kernels, pair_kernels, choices, tables,
                               press, seconds, progress, limits)


def _fill_decisions(compiled, view, plan: SolvePlan, kernels, pair_kernels, choices, tables,
                    press, seconds: float, progress, limits: Limits):
    """fill_decisions with its kernels (kernels/exact's sweep and pairs, compiled or plain)."""
    n_a, n_d = compiled.attacker.n_states, compiled.defender.n_states
    rules = compiled.rules
    total = n_a * n_d
    if progress is not None:
        progress(0, total, "optimal retreat")
    value = np.zeros((n_a, n_d))
    other = np.zeros((n_a, n_d))
    scratch, out, battle, step = backward_sweep(view, plan, pair_kernels, n_a, n_d, seconds,
                                                limits.decide_call_seconds, limits)
    coef = np.array(compiled.objective.coefficients())
    for a_last in range(n_a, 0, -step):
        a_first = max(0, a_last - step)
        threads.call(kernels._decide_values, battle, out, value, press, other, choices, coef,
                     limits.decision_tolerance, scratch, a_first, a_last,
                     short=seconds < limits.short_seconds, compiled=plan.compiled)
        if progress is not None:
            progress((n_a - a_first) * n_d, total, "optimal retreat")
    if tables and submerges_before_fire(rules, 0):
        # the submerge choices at the battle's first round start, where no retreat was offered
        # (each start pair, after the units it loses without dice)
        att, dfn = compiled.attacker, compiled.defender
        air_always = rules[RU_AIR_ALWAYS] == 1
        for a in np.flatnonzero(att.start).tolist():
            for d in np.flatnonzero(dfn.start).tolist():
                while True:
                    outcome, a2, d2 = settle(att.states, a, dfn.states, d, air_always)
                    if (a2, d2) == (a, d):
                        break
                    a, d = a2, d2
                if outcome == CONTINUE:
                    kernels._decide_first(battle, out, value, choices, coef,
                                        limits.decision_tolerance, scratch, a, d)
    return compiled, Policy(compiled, value, press, other, compiled.objective, choices)
