"""What both solvers return, :class:`FinalLaw`, and the only reader of the kernels' outputs
(layout.ExactOut, the Monte Carlo counts): results read a FinalLaw and nothing of the kernels."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..kernels.layout import TOTAL_PRUNED, TOTAL_ROUNDS, TOTAL_TAKES


def weighted_sum(weights: np.ndarray, values: np.ndarray) -> Any:
    """weights @ values (values a vector, or a matrix: one sum per column), added in the same
    order on every CPU.  numpy's @ hands float arrays to BLAS, whose kernel OpenBLAS picks per
    CPU and which adds in its own order: 592 of the golden's 992 answers differed in their last
    bits between an AMD EPYC and an Intel Xeon.  np.add.reduce adds the same way everywhere."""
    weights = np.asarray(weights, dtype=np.float64)
    return np.add.reduce(weights[:, None] * values if np.ndim(values) == 2
                         else weights * values, axis=0)


def segment_sums(values: np.ndarray, offsets: np.ndarray, compiled: bool = True) -> np.ndarray:
    """out[i, j] = weighted_sum's sum of values[offsets[i]:offsets[i + 1], j] (values a matrix
    [rows, columns]; each segment added as np.add.reduce adds a vector, to the last bit): the
    sums of many battles at once (results.rows), each equal to the battle's own: by the
    kernel kernels/batch._segment_sums, compiled or plain Python."""
    from ..kernels import batch, jit

    out = np.zeros((len(offsets) - 1, values.shape[1]))
    jit.kernels(batch, compiled)._segment_sums(values, offsets, out)
    return out


def grouped(keys: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct keys (values, or rows of a 2-D array) ascending, and each one's weight."""
    if keys.ndim == 1:
        if keys.dtype.kind in "iu" and len(keys):
            # whole numbers in a short range (IPC): counted by value, without np.unique's sort
            # (the same sums: bincount adds each group's weights in the order they come)
            lo = keys.min()
            span = int(keys.max() - lo) + 1
            if span <= 4 * len(keys) + 64:
                offset = keys - lo
                present = np.flatnonzero(np.bincount(offset, minlength=span))
                return ((present + lo).astype(keys.dtype, copy=False),
                        np.bincount(offset, weights=weights, minlength=span)[present])
        unique, inverse = np.unique(keys, return_inverse=True)
        return unique, np.bincount(inverse, weights=weights, minlength=len(unique))
    # rows sorted first column first (what np.unique(axis=0) does, without its slow
    # structured-array view: this runs on every simulate call)
    order = np.lexsort(keys.T[::-1])
    ordered = keys[order]
    starts = np.ones(len(order), dtype=bool)
    starts[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    group = np.cumsum(starts) - 1
    return ordered[starts], np.bincount(group, weights=weights[order], minlength=int(starts.sum()))


@dataclass(frozen=True)
class FinalLaw:
    """What both solvers return (solver.exact, solver.montecarlo):
    weights out of `total`, probabilities for the exact solver (total 1.0, trials None), trial
    counts for Monte Carlo (total = trials).

    outcomes[N_OUTCOMES] by outcome code; takes: weight of the attacker taking the territory;
    a_final[Fa], d_final[Fd]: each side's end state; mean_rounds: expected rounds;
    rounds_hist[R]: weight of each number of rounds (last bin: R-1 or more), None where not
    computed (an exact solve without the law of rounds); swing: (TUV swing in IPC ascending,
    weight of each), None where not kept; swing_sum, swing_sq_sum: the swing's first two
    weighted sums (0.0 where swing is None and the solver is exact); pruned: probability mass
    the exact solver left out (0.0 for Monte Carlo); seed: the Monte Carlo run's."""

    total: float
    trials: int | None
    outcomes: np.ndarray
    takes: float
    a_final: np.ndarray
    d_final: np.ndarray
    mean_rounds: float
    rounds_hist: np.ndarray | None
    swing: tuple[np.ndarray, np.ndarray] | None
    swing_sum: float
    swing_sq_sum: float
    pruned: float
    seed: int | None = None  # the Monte Carlo run's seed (None: exact)
    policy: Any = None  # the optimal retreat played (solver.decide.Policy), where one was

    @classmethod
    def of_joint(cls, joint: np.ndarray | None, att_ipc: np.ndarray, dfn_ipc: np.ndarray,
                 **fields) -> FinalLaw:
        """An exact solver's law, its swing fields from the joint final law joint[Fa, Fd]
        (None: not kept; then swing None and both sums 0.0) and each side's IPC lost per
        state, built on first use (most callers never read them)."""
        if joint is None:
            return cls(**fields, swing=None, swing_sum=0.0, swing_sq_sum=0.0)
        law = cls.__new__(cls)
        law.__dict__.update(fields, _joint=(joint, att_ipc, dfn_ipc))
        return law

    def __getattr__(self, name: str) -> Any:
        # only reached for the swing fields of_joint left for later
        source = self.__dict__.get("_joint")
        if source is None or name not in ("swing", "swing_sum", "swing_sq_sum"):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        swing = swing_of_joint(*source)
        self.__dict__.update(swing=swing, swing_sum=float(weighted_sum(swing[1], swing[0])),
                             swing_sq_sum=float(weighted_sum(swing[1], swing[0] * swing[0])))
        return self.__dict__[name]


def swing_of_joint(joint: np.ndarray, att_ipc: np.ndarray, dfn_ipc: np.ndarray):
    """(TUV swings ascending, weight of each) from the joint final law joint[Fa, Fd]."""
    kept = joint > 0
    return grouped((dfn_ipc[None, :] - att_ipc[:, None])[kept], joint[kept])


def exact_law(stacks, compiled, summed: bool, rounds_bins: int, joint: bool) -> FinalLaw:
    """The FinalLaw of an exact solve's outputs (layout.ExactOut): per-block rows (summed)
    added in a fixed order, the same sums whatever the thread count; one row taken as it is.
    joint: the outputs hold the joint final law (the TUV-swing law comes from it).  The mean
    rounds count from round 1 (a battle that starts where it stands: its rounds before)."""
    outcomes, a_final, d_final, joint_law, totals, rounds_hist, _ = stacks
    if summed:
        outcomes, d_final, totals = (x.sum(axis=0) for x in (outcomes, d_final, totals))
        rounds_hist = rounds_hist.sum(axis=0) if rounds_bins > 1 else None
    else:
        outcomes, d_final, totals = outcomes[0], d_final[0], totals[0]
        rounds_hist = rounds_hist[0] if rounds_bins > 1 else None
    att, dfn = compiled.attacker, compiled.defender
    # the TUV-swing law from the joint law when first read (FinalLaw.of_joint)
    return FinalLaw.of_joint(
        joint_law if joint else None, att.ipc_lost, dfn.ipc_lost,
        total=1.0, trials=None, outcomes=outcomes, takes=totals[TOTAL_TAKES],
        a_final=a_final, d_final=d_final,
        mean_rounds=float(totals[TOTAL_ROUNDS]) + compiled.start_rounds,
        rounds_hist=rounds_hist, pruned=max(0.0, float(totals[TOTAL_PRUNED])))


def exact_odds(stacks, start_rounds: int = 0) -> tuple[list[float], float, float, float]:
    """(outcome probabilities by outcome code, takes territory, mean rounds, pruned mass at
    least 0) of one-row outputs, as Python floats: the headline of a Result made straight from
    a kept solve's outputs (results.ExactResults; start_rounds: the compiled battle's)."""
    [outcomes], [totals] = stacks.outcomes.tolist(), stacks.totals.tolist()
    pruned = totals[TOTAL_PRUNED]
    return (outcomes, totals[TOTAL_TAKES], totals[TOTAL_ROUNDS] + start_rounds,
            pruned if pruned > 0.0 else 0.0)
