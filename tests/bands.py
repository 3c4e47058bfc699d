"""Monte Carlo held to an exact answer: one band of k standard errors for the whole suite
(assert_mc_agrees, the conftest fixture of that name; mc_outside says which keys leave it), and
the statistical tests' trials.  Imports nothing of the package (the references' own tests use
it too)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

# the statistical tests' trials: the quick tier's, and the slow tier's longer runs
MC_TRIALS = 20_000
MC_TRIALS_SLOW = 200_000
PROBABILITIES = ("attacker_win", "defender_win", "draw", "stalemate", "retreat",
                 "takes_territory")
MEANS = ("attacker_ipc_loss", "defender_ipc_loss", "tuv_swing", "mean_rounds")


def _value(source, key: str) -> float:
    if isinstance(source, Mapping):
        return float(source[key])
    return float(getattr(source, key))


def mc_outside(mc, exact, k: float = 4, probabilities: Iterable = PROBABILITIES,
               means: Iterable = MEANS, slack: float = 1e-12, trials: int | None = None,
               stderr: Mapping | None = None) -> dict:
    """{key: deviation in standard errors} of every key where Monte Carlo leaves exact's band
    of k standard errors (plus `slack`): a probability of `probabilities` against k binomial
    standard errors sqrt(p (1 - p) / n) of the exact p (so that an outcome the exact answer
    calls impossible must never occur), a mean of `means` against k of the sample's own
    standard errors (mc.stderr, or `stderr` where given).  mc: a Monte Carlo result, or its
    numbers as a mapping or attributes (then `trials`, and `stderr` for the means); exact: a
    result or a mapping of exact values (a reference's Fractions)."""
    n = mc.trials if trials is None else trials
    stderr = getattr(mc, "stderr", None) if stderr is None else stderr
    assert n, "not a Monte Carlo result"
    out = {}
    for key in probabilities:
        p = _value(exact, key)
        se = math.sqrt(max(p * (1.0 - p), 0.0) / n)
        deviation = abs(_value(mc, key) - p)
        if deviation > k * se + slack:
            out[key] = deviation / se if se else math.inf
    for key in means:
        se = stderr[key]
        deviation = abs(_value(mc, key) - _value(exact, key))
        if deviation > k * se + slack:
            out[key] = deviation / se if se else math.inf
    return out


def assert_mc_agrees(mc, exact, k: float = 4, probabilities: Iterable = PROBABILITIES,
                     means: Iterable = MEANS, slack: float = 1e-12, trials: int | None = None,
                     stderr: Mapping | None = None) -> None:
    """Monte Carlo within k standard errors of exact (mc_outside finds no key outside)."""
    outside = mc_outside(mc, exact, k, probabilities, means, slack, trials, stderr)
    assert outside == {}, {key: (_value(mc, key), _value(exact, key), f"{se:.2f} SE")
                           for key, se in outside.items()}
