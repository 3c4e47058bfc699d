"""Solving a compiled battle: the one place that turns a compile.CompiledBattle into a
:class:`FinalLaw`.  The wing's door:

    plan = choose(compiled, method="auto", trials=1_000_000)   # -> SolvePlan (a value)
    law = solve(compiled, plan, seed=run.mc_seed)               # -> FinalLaw
    laws = solve_batch(compiled_list, plans)                   # -> BatchLaw (solve_many)

``repr(plan)`` says how a battle is solved; every variant and threshold is a field of the plan
or of its Limits (solver.plan), never a module global.  Inside: plan (the choice), cost (the
estimates), exact (the exact driver), montecarlo (the Monte Carlo driver), batch (many small
battles in one kernel loop), law (FinalLaw and the only reader of kernel outputs), tables
(merged walks, samplers), threads (the engine's pool).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from .batch import BatchLaw, batchable, solve_batch
from .decide import Policy, fill_decisions
from .exact import ExactSolve, TooBigToSolve, fill_win_values
from .law import FinalLaw
from .montecarlo import run_monte_carlo
from .plan import (
    LIMITS,
    ROUNDS_BINS,
    ExactRefused,
    KernelState,
    Limits,
    SolvePlan,
    choose,
    exact_seconds,
)

__all__ = ["LIMITS", "ROUNDS_BINS", "BatchLaw", "ExactRefused", "ExactSolve", "FinalLaw",
           "KernelState", "Limits", "Policy", "SolvePlan", "TooBigToSolve",
           "batchable", "choose", "exact_seconds", "solve", "solve_batch"]


def solve(compiled, plan: SolvePlan, seed: int | Callable[[], int] | None = None,
          progress=None, prepared: ExactSolve | None = None) -> FinalLaw:
    """Carry out a plan on a compiled battle: its FinalLaw.  Everything the plan decides is
    the plan's, the limits it was chosen under included (SolvePlan.limits); the arguments
    are the run's:

    seed: the Monte Carlo run's seed, or a function that gives it (called only if Monte Carlo
    runs: a compact solve past its work limit falls back to it where the plan says so);
    progress(done, total, what): hears of compiling, of the --retreat-below table (or the
    optimal retreat's), of the exact solve and of the trials done; prepared: the plan's
    ExactSolve kept from an earlier solve of the same battle (none where the plan builds a
    --retreat-below table).  Where the plan decides (plan.decide), the law's `policy` is the
    optimal retreat found (solver.decide.Policy), which the exact solve and Monte Carlo
    play."""
    policy = None
    if plan.win_values or plan.decide:
        if plan.method == "mc" and progress is not None:
            # Monte Carlo it is, said before the table
            progress(0, plan.trials, "trials")
        if plan.decide:
            compiled, policy = fill_decisions(compiled, plan, progress)
        else:
            compiled = fill_win_values(compiled, plan, progress)
        prepared = None
    law = None
    if plan.method == "exact":
        solver = prepared if prepared is not None else ExactSolve(compiled, plan)
        try:
            law = solver.run(progress)
        except TooBigToSolve:
            if not plan.fallback:
                raise
            plan = dataclasses.replace(plan, method="mc", table=(0, 0), work_limit=0,
                                       fallback=False, compiled=True)
    if law is None:
        law = run_monte_carlo(compiled, plan.trials, seed() if callable(seed) else seed,
                              progress, plan.threads, plan.limits.call_seconds)
    if policy is not None:
        object.__setattr__(law, "policy", policy)  # (a frozen law: set once, here)
    return law
