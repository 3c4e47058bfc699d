"""Many small exact battles solved in one kernel loop (kernels/batch.py): every battle's tables
laid end to end in flat arrays (a side several battles share, once), one compiled loop over
them on the engine's threads, each battle writing only its own rows.  The results do not
depend on how the battles are split among threads, and each is the sum its plan's solve alone
computes, in the same order.  A batch's plans are those the batch kernel carries out
(batchable): exact, a dense table, no pruning budget, short enough for one thread, no
--retreat-below or decision table, no law of rounds.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

import numpy as np

from ..kernels import batch as batch_kernels
from ..kernels import jit
from ..kernels.layout import (
    FULL_RETREAT,
    N_OUTCOMES,
    NO_MERGE,
    NO_THRESHOLD,
    RETREAT_COLS,
    RT_AFTER,
    TOTAL_COLS,
    TOTAL_PRUNED,
    TOTAL_ROUNDS,
    TOTAL_TAKES,
)
from . import threads
from .law import FinalLaw
from .plan import LIMITS, SOLVE_BATCH, Limits, SolvePlan, kernels_for, spend
from .tables import merged


def batchable(plan: SolvePlan, limits: Limits = LIMITS) -> bool:
    """Whether the batch kernel carries out the plan (the plan simulate solves the battle by,
    solver.choose): exact, an estimate of at most limits.parallel_seconds (one thread's work,
    in one row of outputs), a dense table, no pruning budget, the row sweep and the two-phase
    round, no --retreat-below or decision table, no law of rounds.  Its blocks one by one or
    merged, from its start or from where it stands, as the plan and the battle say."""
    return (plan.method == "exact" and plan.seconds <= limits.parallel_seconds
            and not plan.per_block_rows and not plan.table[0] and not plan.budget
            and not plan.win_values and not plan.decide and plan.rounds_bins == 1
            and plan.row_sweep and plan.two_phase and plan.sea_walk)


class BatchLaw(NamedTuple):
    """The exact laws of a batch's n battles (the only reader of the batch kernel's outputs):
    battle i's final laws at a_final[a_out[i, 0]:a_out[i, 1]] (its attacker's states, in
    order) and d_final[d_out[i, ...]]; its attacker side is attackers.unique[attackers.index[i]]
    (the distinct sides, laid end to end: its states at a_states[i])."""

    outcomes: np.ndarray  # float64[n, N_OUTCOMES]
    takes: np.ndarray  # float64[n]
    mean_rounds: np.ndarray  # float64[n]
    pruned: np.ndarray  # float64[n] (at least 0)
    a_final: np.ndarray
    d_final: np.ndarray
    a_out: np.ndarray  # int64[n, 2]
    d_out: np.ndarray
    a_states: np.ndarray  # int64[n, 2]
    d_states: np.ndarray
    attackers: Sides
    defenders: Sides
    compiled: bool  # solved by compiled kernels (else plain Python)

    def law(self, i: int) -> FinalLaw:
        """Battle i's FinalLaw, as its own exact solve gives it (no joint final law: the
        swing's law is not kept), its final laws views of the batch's."""
        (a0, a1), (d0, d1) = self.a_out[i], self.d_out[i]
        return FinalLaw(1.0, None, self.outcomes[i], self.takes[i], self.a_final[a0:a1],
                        self.d_final[d0:d1], float(self.mean_rounds[i]), None, None, 0.0, 0.0,
                        float(self.pruned[i]))


_NO_MERGE = (NO_MERGE, NO_MERGE)


def offsets(lengths: Iterable[int]) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(np.fromiter(lengths, dtype=np.int64))])


def _padded(arrays: list[np.ndarray], width: int, fill: float) -> np.ndarray:
    out = np.full((sum(a.shape[0] for a in arrays), width), fill)
    row = 0
    for a in arrays:
        out[row:row + a.shape[0], :a.shape[1]] = a
        row += a.shape[0]
    return out


class Sides:
    """The distinct objects of a list (sides, laws shared by several battles), once each:
    `unique`, and `index[i]` the one of element i."""

    def __init__(self, objects: list):
        first: dict[int, int] = {}
        self.index = np.fromiter((first.setdefault(id(o), len(first)) for o in objects),
                                 np.int64, len(objects))
        self.unique = list({id(o): o for o in objects}.values())

    def spans(self, lengths: Iterable[int]) -> tuple[np.ndarray, np.ndarray]:
        """Each element's (first, end) rows when the unique objects' rows (of the given
        lengths) are laid end to end, and where each unique object starts."""
        starts = offsets(lengths)
        return np.stack([starts[self.index], starts[self.index + 1]], axis=1), starts


def _tables(compiled: list, plans: list[SolvePlan]
            ) -> tuple[batch_kernels.BatchTables, int, int, Sides, Sides]:
    """The batch's tables end to end (kernels/batch.py), the sizes of its outputs a_final and
    d_final, and its distinct attacker and defender sides."""
    n = len(compiled)
    att, dfn = Sides([c.attacker for c in compiled]), Sides([c.defender for c in compiled])
    laws = Sides([c.bombardment.pmf for c in compiled])
    # (each merged side's merge and sweep rows once; a battle whose blocks go one by one: none)
    merges = Sides([merged(c.attacker) or _NO_MERGE if p.merge_blocks else _NO_MERGE
                    for c, p in zip(compiled, plans, strict=True)]
                   if any(p.merge_blocks for p in plans) else [_NO_MERGE] * n)
    spans = np.zeros((n, batch_kernels.SPAN_COLS, 2), dtype=np.int64)
    spans[:, batch_kernels.SP_A_STATES], a_starts = att.spans(s.n_states for s in att.unique)
    spans[:, batch_kernels.SP_A_ROWS], _ = att.spans(s.rows.shape[0] for s in att.unique)
    spans[:, batch_kernels.SP_BLOCKS], _ = att.spans(len(s.blocks) for s in att.unique)
    spans[:, batch_kernels.SP_D_STATES], _ = dfn.spans(s.n_states for s in dfn.unique)
    spans[:, batch_kernels.SP_D_ROWS], _ = dfn.spans(s.rows.shape[0] for s in dfn.unique)
    spans[:, batch_kernels.SP_BOMBARD], _ = laws.spans(p.shape[0] for p in laws.unique)
    spans[:, batch_kernels.SP_MERGE], _ = merges.spans(m[0].shape[0] for m in merges.unique)
    spans[:, batch_kernels.SP_SWEEP], _ = merges.spans(m[1].shape[0] for m in merges.unique)
    sizes = np.diff(spans, axis=2)[:, :, 0]
    outputs = ((batch_kernels.SP_A_OUT, sizes[:, batch_kernels.SP_A_STATES]),
               (batch_kernels.SP_D_OUT, sizes[:, batch_kernels.SP_D_STATES]),
               (batch_kernels.SP_TRANSFER,
                sizes[:, batch_kernels.SP_BLOCKS] * sizes[:, batch_kernels.SP_D_STATES]))
    for column, size in outputs:
        ends = np.cumsum(size)
        spans[:, column, 0], spans[:, column, 1] = ends - size, ends
    width = max(s.pmf.shape[1] for s in (*att.unique, *dfn.unique))
    policy = np.zeros((n, RETREAT_COLS), dtype=np.int64)
    below = np.full(n, NO_THRESHOLD)
    remainder = np.full(a_starts[-1], FULL_RETREAT, dtype=np.int64)
    phases = np.ones(n, dtype=np.int64)
    start_rounds = np.zeros(n, dtype=np.int64)
    retreat_from = np.ones(n, dtype=np.int64)
    for i, c in enumerate(compiled):
        if c.start_rounds or c.retreat_from != 1:  # (a battle that starts where it stands)
            start_rounds[i], retreat_from[i] = c.start_rounds, c.retreat_from
        if c.retreat is not None:  # (its attacker's tables are its own: compile.with_retreat)
            policy[i], below[i] = c.retreat.policy, c.retreat.below
            first = a_starts[att.index[i]]
            remainder[first:first + c.attacker.n_states] = c.retreat.remainder
            phases[i] = 2 if c.has_partial_retreat else 1
    tables = batch_kernels.BatchTables(
        spans, np.concatenate([s.states for s in att.unique]),
        np.concatenate([s.rows for s in att.unique]),
        _padded([s.pmf for s in att.unique], width, 0.0),
        _padded([s.cdf for s in att.unique], width, 1.0),
        np.concatenate([s.start for s in att.unique]), remainder,
        np.concatenate([s.states for s in dfn.unique]),
        np.concatenate([s.rows for s in dfn.unique]),
        _padded([s.pmf for s in dfn.unique], width, 0.0),
        _padded([s.cdf for s in dfn.unique], width, 1.0),
        np.concatenate([s.start for s in dfn.unique]),
        np.concatenate([s.blocks for s in att.unique]), np.concatenate(laws.unique),
        np.stack([c.rules for c in compiled]), policy, below,
        # (the rounds played one at a time: as solver.exact.ExactSolve's explicit)
        np.maximum(np.maximum(policy[:, RT_AFTER], 1), retreat_from), phases,
        np.concatenate([m[0] for m in merges.unique]),
        np.concatenate([m[1] for m in merges.unique]), start_rounds, retreat_from,
        plans[0].eps, plans[0].state_eps)
    return (tables, int(spans[-1, batch_kernels.SP_A_OUT, 1]),
            int(spans[-1, batch_kernels.SP_D_OUT, 1]), att, dfn)


def _range(first: int, last: int, solve, offset: int, tables, out) -> None:
    solve(offset + first, offset + last, tables, out)


def solve_batch(compiled: list, plans: list[SolvePlan], limits: Limits = LIMITS) -> BatchLaw:
    """The exact laws of battles whose plans are batchable, solved by the batch kernel in
    calls of about limits.call_seconds of estimated work (so Ctrl-C ends the work soon), each
    split among the engine's threads.  Compiled kernels or plain Python are decided for the
    whole batch, on the sum of its estimates (solver.plan.kernels_for)."""
    seconds = [plan.seconds for plan in plans]
    total = float(sum(seconds))
    tables, a_size, d_size, att, dfn = _tables(compiled, plans)
    n = len(seconds)
    out = batch_kernels.BatchOut(
        np.zeros((n, N_OUTCOMES)), np.zeros((n, TOTAL_COLS)), np.zeros((n, 1)), np.zeros(a_size),
        np.zeros(d_size), np.zeros(tables.spans[-1, batch_kernels.SP_TRANSFER, 1]))
    plan = SolvePlan("exact", total, 0.0, 1, compiled=kernels_for(total, limits, (SOLVE_BATCH,)))
    spend(plan, total, limits)
    solve_range = jit.kernels(batch_kernels, plan.compiled)._solve_range
    work = np.cumsum(seconds)
    first = 0
    while first < n:
        done = work[first - 1] if first else 0.0
        last = max(first + 1, int(np.searchsorted(work, done + limits.call_seconds,
                                                  side="right")))
        last = min(last, n)
        threads.threads(_range, last - first, solve_range, first, tables, out,
                        short=work[last - 1] - done < limits.short_seconds,
                        compiled=plan.compiled)
        first = last
    spans = tables.spans
    totals = out.totals
    return BatchLaw(out.outcomes, totals[:, TOTAL_TAKES],
                    totals[:, TOTAL_ROUNDS] + tables.start_rounds,
                    np.maximum(0.0, totals[:, TOTAL_PRUNED]), out.a_final, out.d_final,
                    spans[:, batch_kernels.SP_A_OUT], spans[:, batch_kernels.SP_D_OUT],
                    spans[:, batch_kernels.SP_A_STATES], spans[:, batch_kernels.SP_D_STATES],
                    att, dfn, plan.compiled)
