"""The calibrated cost model the choice of a method weighs: an exact solve's seconds, the
--retreat-below table's, a Monte Carlo run's.  Estimates for choosing, within a factor of a
few (benchmarks/bench_big.py, bench_engine.py on one machine); never a guarantee."""

from __future__ import annotations

from ..kernels.layout import RU_SIMPLE

BAND_PAIRS = 8000  # state pairs of a block beyond which a battle's mass keeps to a band
BAND_FLOOR = 0.08  # the least share (fitted: 1000 v 900 land, one block of 900,000 pairs)


def band_share(block_pairs: float) -> float:
    """The share of a block's state pairs the solve plays on: all of a small block, less of a
    big one, whose mass keeps to a band around the likely course of the battle (fitted:
    (BAND_PAIRS / pairs) ** 0.85, at least BAND_FLOOR)."""
    return min(1.0, max(BAND_FLOOR, (BAND_PAIRS / max(block_pairs, 1.0)) ** 0.85))


def solve_seconds(compiled) -> float:
    """Rough seconds of an exact solve with compiled kernels on two cores, its attacker blocks
    solved one by one: state pairs times their cost a round (land: the rectangle of both
    sides' hit counts; the general round: both sides' hit combinations, each one assignment,
    and their product), times the share of the pairs a big battle reaches (band_share).
    Calibrated on land and sea battles of 20 to 300 units a side (benchmarks/bench_big.py's,
    one machine).  (plan.choose scales it down where blocks are merged.)"""
    att, dfn = compiled.attacker, compiled.defender
    pairs = att.n_states * dfn.n_states
    band = band_share(pairs / len(att.blocks))
    mean_a, mean_d = att.mean_hit_combinations, dfn.mean_hit_combinations
    if not compiled.rules[RU_SIMPLE]:
        return pairs * band * (1e-7 + 4e-9 * (mean_a + mean_d) + 2e-10 * mean_a * mean_d)
    return pairs * band * (1e-7 + 2e-10 * mean_a * mean_d)


def win_values_seconds(compiled) -> float:
    """Rough seconds of the --retreat-below table (one thread, compiled kernels): unlike the
    solve, it plays a round from every state pair, reachable or not, and sums every successor
    (land: the rectangle of both sides' hit counts; the general round: each pair's successors
    gathered one by one).  Calibrated like solve_seconds, on land and sea battles of 4 to
    630,000 state pairs (benchmarks/bench_engine.py's machine), within a factor of about 2."""
    att, dfn = compiled.attacker, compiled.defender
    pairs = att.n_states * dfn.n_states
    if compiled.rules[RU_SIMPLE]:
        return pairs * (2e-7 + 1.8e-9 * att.mean_hit_combinations * dfn.mean_hit_combinations)
    return pairs * (1e-6 + 1e-7 * (att.mean_hit_combinations + dfn.mean_hit_combinations))


def monte_carlo_seconds(compiled, trials: int, limits) -> float:
    """Rough seconds of `trials` Monte Carlo trials of a compiled battle (limits.mc_rate_*:
    a small battle's rate, two cores), as `auto` weighs them against the exact solve."""
    rate = limits.mc_rate_walk if compiled.rules[RU_SIMPLE] == 1 else limits.mc_rate_general
    return trials / rate
