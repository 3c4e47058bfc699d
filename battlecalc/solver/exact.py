"""The exact solver's driver: a plan (solver.plan.SolvePlan) carried out on a compiled battle
by the kernels of battlecalc/kernels/exact (see its docstring for the method): the kernels'
view of the battle (layout.ExactBattle), its outputs, the calls (on the engine's threads, a
block or a group of blocks at a time), a compact table grown and solved again where it fills
up, and --retreat-below's table (fill_win_values)."""

from __future__ import annotations

import dataclasses

import numpy as np

from ..errors import BattleInputError
from ..kernels import jit
from ..kernels.exact import pairs, sweep
from ..kernels.layout import (
    N_OUTCOMES,
    NO_MERGE,
    RT_AFTER,
    TOTAL_COLS,
    TOTAL_FULL,
    TOTAL_WORK,
    ExactBattle,
    ExactOut,
    ExactSide,
)
from ..kernels.numba_private import overload
from . import threads
from .law import FinalLaw, exact_law
from .plan import Limits, SolvePlan, exact_entry, exact_view, spend
from .tables import merged


class TooBigToSolve(BattleInputError):
    """A compact table's solve passed its work limit (SolvePlan.work_limit) or its biggest
    table (Limits.table_cells): `auto` takes Monte Carlo instead (SolvePlan.fallback)."""


def exact_battle(compiled, plan: SolvePlan, table: tuple[int, int] | None = None,
                 work_limit: int | None = None) -> ExactBattle:
    """The compiled battle as the exact kernels take it under a plan (table, work_limit: a
    compact table's size and work limit now, default the plan's)."""
    att, dfn = compiled.attacker, compiled.defender
    merge = merged(att) if plan.merge_blocks else None
    return ExactBattle(ExactSide(att.states, att.rows, att.pmf, att.cdf),
                       ExactSide(dfn.states, dfn.rows, dfn.pmf, dfn.cdf), att.blocks,
                       compiled.rules, att.start, dfn.start, compiled.bombardment.pmf,
                       np.ones(1), compiled.retreat_tables(), plan.eps, plan.state_eps,
                       plan.prune_eps, plan.tail_eps, plan.budget,
                       *(merge or (NO_MERGE, NO_MERGE)), plan.row_sweep, plan.two_phase,
                       *(plan.table if table is None else table),
                       plan.work_limit if work_limit is None else work_limit,
                       compiled.start_rounds, compiled.retreat_from)


def _grown_table(compiled, table: tuple[int, int], full: int,
                 limits: Limits) -> tuple[int, int]:
    """The compact table after one that ran out of rows (full & 1) or columns (full & 2):
    four times as many of those; TooBigToSolve where that passes limits.table_cells."""
    rows, cols = table
    if full & 1:
        rows = min(compiled.attacker.n_states, 4 * rows)
    if full & 2:
        cols = min(compiled.defender.n_states, 4 * cols)
    if rows * cols > limits.table_cells or (rows, cols) == table:
        raise TooBigToSolve(
            f"battle too large to solve exactly (its probability spreads over more than "
            f"{limits.table_cells:,} state pairs); use --method mc for Monte Carlo")
    return rows, cols


def _block_range(first, last, solve_blocks, offset, phase, *args):
    """solve_blocks over blocks offset+first .. offset+last-1 (threads.threads splits
    first..last)."""
    solve_blocks(offset + first, offset + last, phase, *args)


def _shapes(n_a: int, n_d: int, n_blocks: int, joint: bool, rounds_bins: int,
            rows: int) -> tuple:
    """The shapes of the arrays of fresh outputs (layout.ExactOut, in its order) of a solve of
    n_a x n_d states writing `rows` rows of per-block stacks (joint: with the joint law)."""
    return ((rows, N_OUTCOMES), n_a, (rows, n_d), (n_a, n_d) if joint else (0, 0),
            (rows, TOTAL_COLS), (rows, rounds_bins), (n_blocks, n_d))


def _outputs(shapes: tuple) -> ExactOut:
    """Fresh outputs (zeros) of the shapes of _shapes."""
    outcomes, a_final, d_final, joint, totals, rounds_hist, transfer = shapes
    zeros = np.zeros
    # (tuple.__new__: ExactOut._make checks the length in Python, on a kept battle's floor)
    return tuple.__new__(ExactOut, (zeros(outcomes), zeros(a_final), zeros(d_final),
                                    zeros(joint), zeros(totals), zeros(rounds_hist),
                                    zeros(transfer)))


class ExactSolve:
    """A plan's exact solve of one compiled battle, prepared once: the kernels' view of the
    battle (layout.ExactBattle), the sizes of the outputs, and for a solve that is `kept`
    (solved again later: a kept battle of battlecalc.api), after its first short solve by
    compiled kernels, the compiled kernel itself (numba_private.overload): each later solve
    (again) costs the kernel and its fresh outputs, about 0.5 us of Python on a tiny battle
    besides their 1 us of np.zeros (the FinalLaw, law_of, where the caller needs it).  Nothing
    is kept between solves but read-only tables: every solve writes new outputs, and threads
    may share one ExactSolve (but for one of a compact table, which grows its table in place:
    one is made for each solve)."""

    __slots__ = ("compiled", "plan", "limits", "explicit", "n_a", "n_d", "n_blocks", "shapes",
                 "phases", "battle", "entry", "entry_name", "kept", "table", "work",
                 "solved")

    def __init__(self, compiled, plan: SolvePlan, kept: bool = False):
        compiled = exact_view(compiled, plan)
        att, dfn = compiled.attacker, compiled.defender
        self.compiled, self.plan, self.limits = compiled, plan, plan.limits
        retreat = compiled.retreat_tables()
        # the first rounds played one at a time: those of the law of rounds, up to a retreat
        # after round R, and a battle's first round where it starts at the start of a round
        # (no retreat before it: the decision at its start is taken)
        self.explicit = max(plan.rounds_bins - 1, int(retreat.policy[RT_AFTER]), 1,
                            compiled.retreat_from)
        self.n_a, self.n_d, self.n_blocks = att.n_states, dfn.n_states, len(att.blocks)
        self.shapes = _shapes(self.n_a, self.n_d, self.n_blocks, plan.joint, plan.rounds_bins, 1)
        # blocks the battle starts in, then (where a partial retreat may leave units behind)
        # the blocks of the stayers
        self.phases = range(2 if compiled.has_partial_retreat else 1)
        self.battle = exact_battle(compiled, plan)
        self.entry_name = exact_entry(compiled, plan.table)[1]  # (the kernel the solve calls)
        self.entry = None
        self.solved = False  # (solved once by the compiled kernel in this thread)
        self.kept = kept  # solved again later: worth finding the compiled kernel for
        self.table = plan.table  # grown where a solve fills it up
        self.work = 0  # successor terms spread by the last solve (compact tables only)

    def again(self) -> ExactOut | None:
        """The outputs (one row) of a kept solve solved again by the compiled kernel, called
        straight, or None where run must solve it (not solved so yet): law_of(outputs) is
        run's FinalLaw."""
        entry = self.entry
        if not entry:
            return None
        n_blocks, battle, explicit = self.n_blocks, self.battle, self.explicit
        stacks = _outputs(self.shapes)
        for phase in self.phases:
            entry(0, n_blocks, phase, battle, stacks, explicit)
        return stacks

    def law_of(self, stacks: ExactOut) -> FinalLaw:
        """The FinalLaw of the outputs of again."""
        return exact_law(stacks, self.compiled, False, self.plan.rounds_bins, self.plan.joint)

    def run(self, progress=None, spent: int = 0) -> FinalLaw:
        """Solve the battle (progress(done, total, what) hears of compiling and of the solve;
        spent: the work of this solve's earlier tries on smaller compact tables)."""
        if progress is None:
            stacks = self.again()
            if stacks is not None:  # solved by the compiled kernel already: the same again
                return self.law_of(stacks)
        plan = self.plan
        spend(plan, plan.seconds, self.limits)
        # the kernels the plan runs: compiled (numba compiles them on the first call, or loads
        # them from its cache), or plain Python
        kernels = jit.kernels(sweep, plan.compiled)
        entry = getattr(kernels, self.entry_name)
        with jit.compiling(entry, progress if plan.compiled else None):
            return self._run(kernels, entry, progress, spent)

    def _run(self, kernels, solve_blocks, progress, spent: int) -> FinalLaw:
        """run with its kernels: kernels/exact/sweep's, compiled or plain, and the entry over
        blocks of a dense table (solve_blocks: _solve_blocks or _solve_walk_blocks)."""
        plan, n_blocks = self.plan, self.n_blocks
        if progress is not None:
            progress(0, 0, "exact solve")
        if self.table[0] and not spent:  # a new solve: the whole work limit again
            self.battle = self.battle._replace(work_limit=plan.work_limit)
        parallel = plan.per_block_rows
        stacks = _outputs(_shapes(self.n_a, self.n_d, n_blocks, plan.joint, plan.rounds_bins,
                                  n_blocks) if parallel else self.shapes)
        args = (self.battle, stacks, self.explicit)
        short = plan.short
        compiled = plan.compiled
        if self.table[0]:  # a compact table: one block, one phase
            threads.call(kernels._solve_compact, self.battle, stacks, self.explicit, short=short,
                         compiled=compiled)
        for phase in () if self.table[0] else self.phases:
            if parallel:  # groups of blocks of about call_seconds a call (one block: one call)
                group = max(1, int(self.limits.call_seconds * n_blocks / plan.seconds)
                            ) * threads.thread_count()
                for first in range(0, n_blocks, group):
                    threads.threads(_block_range, min(group, n_blocks - first),
                                    solve_blocks, first, phase, *args, compiled=compiled)
            else:
                threads.call(solve_blocks, 0, n_blocks, phase, *args, short=short,
                             compiled=compiled)
        if (self.kept and short and not parallel and plan.compiled and self.entry is None
                and not self.table[0]):
            # solved in this thread by the compiled kernel a second time (a battle asked
            # again: finding the kernel costs a fresh battle's solve a fifth): from the next
            # solve on, that kernel is called straight, without the dispatcher's typing of
            # every array (the dispatcher all the same where overload finds none)
            if self.solved:
                self.entry = overload(solve_blocks, (0, n_blocks, 0, *args)) or False
            self.solved = True
        if self.table[0]:  # (a dense solve writes neither: no reductions for it)
            # (a solve on a grown table counts on from the work its smaller tables did)
            self.work = spent + int(stacks.totals[:, TOTAL_WORK].sum())
            full = int(stacks.totals[:, TOTAL_FULL].max())
            if full & 4:
                raise TooBigToSolve(
                    f"battle too large to solve exactly (its solve passed "
                    f"{plan.work_limit:,} successor terms, about "
                    f"{plan.work_limit / self.limits.work_rate:.2g} s of work); use --method "
                    "mc for Monte Carlo")
            if full:  # the compact table ran out of rows or columns: again, with a bigger one
                self.table = _grown_table(self.compiled, self.table, full, self.limits)
                left = max(1, plan.work_limit - self.work) if plan.work_limit else 0
                self.battle = self.battle._replace(table_rows=self.table[0],
                                                   table_cols=self.table[1], work_limit=left)
                return self._run(kernels, solve_blocks, progress, self.work)
        return exact_law(stacks, self.compiled, parallel, plan.rounds_bins, plan.joint)


def fill_win_values(compiled, plan: SolvePlan, progress=None):
    """The battle with its retreat tables filled in, before a plan with win_values runs:
    --retreat-air-loss's (compiled.retreat.air_value: per state, the chance that fighting on
    with no further retreat loses every aircraft), then --retreat-below's, whose policy may
    read it (compiled.retreat.win_value: the per-state win probabilities), each from a
    backward sweep.

    A table is filled a range of attacker states at a time (about
    limits.win_value_call_seconds each), progress(done, total, "retreat-below table" or
    "retreat-air-loss table") counting state pairs after each, so a caller's progress hook
    can stop it by raising.  plan.win_values_seconds is the tables' estimate together."""
    n_a, n_d = compiled.attacker.n_states, compiled.defender.n_states
    air = compiled.retreat_air_loss is not None
    below = compiled.retreat_below is not None
    retreat = compiled.retreat
    if air:
        retreat = retreat._replace(air_value=np.zeros((n_a, n_d)))
    if below:
        retreat = retreat._replace(win_value=np.zeros((n_a, n_d)))
    compiled = dataclasses.replace(compiled, retreat=retreat)
    view = exact_view(compiled, plan)
    seconds = plan.win_values_seconds / (air + below)  # (each table's)
    limits = plan.limits
    spend(plan, plan.win_values_seconds, limits)
    kernels, pair_kernels = jit.kernels(sweep, plan.compiled), jit.kernels(pairs, plan.compiled)
    total = n_a * n_d
    with jit.compiling(kernels._win_values, progress if plan.compiled else None):
        for table in [t for t, wanted in ((True, air), (False, below)) if wanted]:
            # (the air-loss table first: the retreat-below table's policy reads it)
            _fill_win_values(compiled, view, plan, kernels, pair_kernels, seconds, total,
                             progress, limits, table)
    return compiled


def backward_sweep(view, plan: SolvePlan, pair_kernels, n_a: int, n_d: int, seconds: float,
                   call_seconds: float, limits: Limits) -> tuple:
    """What a backward sweep over every state pair of n_a x n_d works with (the
    --retreat-below table here, the optimal decisions in solver.decide): the pair kernels'
    work arrays, one block's outputs, the kernels' battle (no merged blocks, mass table or
    work limit) and the attacker states a kernel call takes (about call_seconds of a sweep
    estimated at `seconds`, compiled)."""
    scratch = pair_kernels._scratch(n_a, n_d)
    shapes = _shapes(n_a, n_d, len(view.attacker.blocks), False, 1, 1)
    out = pair_kernels._out(_outputs(shapes), 0)
    battle = exact_battle(view, dataclasses.replace(plan, merge_blocks=False, table=(0, 0),
                                                    work_limit=0))
    slowdown = 1 if plan.compiled else limits.python_slowdown
    step = max(1, int(n_a * call_seconds / max(seconds * slowdown, 1e-9)))
    return scratch, out, battle, step


def _fill_win_values(compiled, view, plan: SolvePlan, kernels, pair_kernels, seconds: float,
                     total: int, progress, limits: Limits, air: bool) -> None:
    """One table of fill_win_values (air: --retreat-air-loss's, else --retreat-below's) with
    its kernels (kernels/exact's sweep and pairs, compiled or plain)."""
    n_a, n_d = compiled.attacker.n_states, compiled.defender.n_states
    what = "retreat-air-loss table" if air else "retreat-below table"
    if progress is not None:
        progress(0, total, what)
    value = np.zeros((n_a, n_d))
    scratch, out, battle, step = backward_sweep(view, plan, pair_kernels, n_a, n_d, seconds,
                                                limits.win_value_call_seconds, limits)
    for a_last in range(n_a, 0, -step):
        a_first = max(0, a_last - step)
        threads.call(kernels._win_values, battle, out, value, scratch, a_first, a_last, air,
                     short=seconds < limits.short_seconds, compiled=plan.compiled)
        if progress is not None:
            progress((n_a - a_first) * n_d, total, what)
