"""The Python API: validate a battle, compile it, run a solver, wrap the result.

    >>> import battlecalc
    >>> r = battlecalc.simulate(rules="revised", attacker="1 inf", defender="1 inf", method="exact")
    >>> round(r.attacker_win, 6), round(r.defender_win, 6), round(r.draw, 6)
    (0.25, 0.625, 0.125)
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from .army import format_army, parse_army, resolve_unit_name
from .compile import CompiledBattle, SideTables, compile_tables
from .errors import BattleInputError
from .exact.solver import solve
from .kernels.common import N_OUTCOMES
from .kernels.montecarlo import simulate_chunks
from .results import Result, build_result
from .rules import Ruleset, load_rules

METHODS = ("auto", "mc", "exact")
DEFAULT_TRIALS = 1_000_000
MAX_TRIALS = 10_000_000_000
CHUNK_TRIALS = 16_384
CHUNKS_PER_CALL = 128  # one kernel call = one progress step; memory does not grow with trials
ROUNDS_BINS = 101  # rounds histogram: 0..99 and "100 or more"
# Exact solver: work estimate (state pairs x kept hit combinations) above which `auto`
# switches to Monte Carlo and `exact` refuses.
EXACT_WORK_LIMIT = 400_000_000
PRUNE_EPS = 1e-16  # hit counts with a smaller probability are skipped (mass reported)
TRANSITION_EPS = 1e-18  # transitions moving less probability are skipped (mass reported)
JOINT_LIMIT = 4_000_000  # keep the joint final distribution (for the TUV-swing law) below this


@dataclass(frozen=True)
class Battle:
    """A validated battle: armies as {canonical unit: count}, rules with techs applied."""

    rules: Ruleset
    attacker_rules: Ruleset
    defender_rules: Ruleset
    attacker: dict[str, int]
    defender: dict[str, int]
    sea: bool
    attacker_tech: tuple[str, ...]
    defender_tech: tuple[str, ...]


def _army(value: str | Mapping[str, int] | None, ruleset: Ruleset, side: str) -> dict[str, int]:
    if value is None:
        return {}
    if isinstance(value, str):
        return parse_army(value, ruleset)
    if not isinstance(value, Mapping):
        raise BattleInputError(f"{side} army must be a string or a mapping, got {value!r}")
    counts: dict[str, int] = {}
    for name, count in value.items():
        canonical = resolve_unit_name(str(name), ruleset)
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 0:
            raise BattleInputError(f"{side} count for {canonical} must be an integer >= 0")
        counts[canonical] = counts.get(canonical, 0) + int(count)
    return {n: counts[n] for n in ruleset.units if counts.get(n)}


def _techs(value: str | Iterable[str] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = value.split(",")
    return tuple(t.strip().lower().replace("-", "_") for t in value if t.strip())


def make_battle(
    rules: str,
    attacker: str | Mapping[str, int] | None,
    defender: str | Mapping[str, int] | None,
    sea: bool = False,
    attacker_tech: str | Iterable[str] | None = None,
    defender_tech: str | Iterable[str] | None = None,
) -> Battle:
    """Parse and validate a battle; raise BattleInputError with a clear message if it is not one."""
    ruleset = load_rules(rules)
    a_tech, d_tech = _techs(attacker_tech), _techs(defender_tech)
    a_rules, d_rules = ruleset.with_techs(a_tech), ruleset.with_techs(d_tech)
    a_army, d_army = _army(attacker, ruleset, "attacker"), _army(defender, ruleset, "defender")
    if not a_army:
        raise BattleInputError("the attacker has no units")
    if not d_army:
        raise BattleInputError("the defender has no units")
    if sea:
        raise BattleInputError(
            "sea battles are not supported yet: this version computes land battles only"
        )
    for side, army in (("attacker", a_army), ("defender", d_army)):
        for name in army:
            unit = ruleset.units[name]
            if unit.domain == "sea":
                raise BattleInputError(
                    f"{name} is a sea unit and cannot be in a land battle ({side})"
                )
    for name in a_army:
        if not a_rules.units[name].can_attack:
            raise BattleInputError(f"{name} cannot attack (it only defends)")
    return Battle(ruleset, a_rules, d_rules, a_army, d_army, sea, a_tech, d_tech)


def _work_estimate(tables: CompiledBattle, a_lo, a_hi, d_lo, d_hi) -> float:
    a_width = float(np.mean(a_hi - a_lo + 1))
    d_width = float(np.mean(d_hi - d_lo + 1))
    return tables.attacker.n_states * tables.defender.n_states * a_width * d_width


def _kept_range(side: SideTables, eps: float) -> tuple[np.ndarray, np.ndarray]:
    keep = side.pmf > eps
    keep[:, 0] = True  # the no-hit entry feeds the self-loop; always exact
    lo = np.argmax(keep, axis=1).astype(np.int64)
    hi = (keep.shape[1] - 1 - np.argmax(keep[:, ::-1], axis=1)).astype(np.int64)
    return lo, hi


def run_exact(tables: CompiledBattle, eps: float = PRUNE_EPS) -> dict:
    """Exact outcome probabilities and final-state distributions from the compiled tables."""
    att, dfn = tables.attacker, tables.defender
    a_lo, a_hi = _kept_range(att, eps)
    d_lo, d_hi = _kept_range(dfn, eps)
    outcomes = np.zeros(N_OUTCOMES)
    a_final = np.zeros(att.n_states)
    d_final = np.zeros(dfn.n_states)
    joint_size = att.n_states * dfn.n_states
    joint = np.zeros((att.n_states, dfn.n_states) if joint_size <= JOINT_LIMIT else (0, 0))
    totals = np.zeros(3)
    solve(
        att.profile_prob, att.offset, att.length, att.pmf, a_lo, a_hi, att.can_hit,
        att.alive, att.defenceless, att.has_land,
        dfn.pmf, d_lo, d_hi, dfn.can_hit, dfn.alive, dfn.defenceless, int(dfn.length[0]),
        outcomes, a_final, d_final, joint, totals, TRANSITION_EPS,
    )
    return {
        "outcomes": outcomes,
        "takes": totals[2],
        "a_final": a_final,
        "d_final": d_final,
        "joint": joint if joint.size else None,
        "mean_rounds": totals[0],
        "pruned": max(0.0, float(totals[1])),
    }


def run_monte_carlo(
    tables: CompiledBattle,
    trials: int,
    seed: int,
    progress: Callable[[int, int], None] | None = None,
) -> dict:
    """Monte Carlo aggregates over `trials` trials; identical for a seed whatever the threads."""
    att, dfn = tables.attacker, tables.defender
    n_chunks = -(-trials // CHUNK_TRIALS)
    chunk_trials = np.full(n_chunks, CHUNK_TRIALS, dtype=np.int64)
    chunk_trials[-1] = trials - CHUNK_TRIALS * (n_chunks - 1)
    seeds = np.random.SeedSequence(seed).generate_state(n_chunks, dtype=np.uint64)
    profile_cdf = np.cumsum(att.profile_prob)
    profile_cdf[-1] = 1.0
    totals = {
        "outcomes": np.zeros(N_OUTCOMES, dtype=np.int64),
        "takes": 0,
        "a_final": np.zeros(att.n_states, dtype=np.int64),
        "d_final": np.zeros(dfn.n_states, dtype=np.int64),
        "rounds_hist": np.zeros(ROUNDS_BINS, dtype=np.int64),
        "rounds_sum": 0,
        "swing_sum": 0,
        "swing_sq_sum": 0,
    }
    done = 0
    for start in range(0, n_chunks, CHUNKS_PER_CALL):
        stop = min(start + CHUNKS_PER_CALL, n_chunks)
        n = stop - start
        outcomes = np.zeros((n, N_OUTCOMES), dtype=np.int64)
        takes = np.zeros(n, dtype=np.int64)
        a_final = np.zeros((n, att.n_states), dtype=np.int64)
        d_final = np.zeros((n, dfn.n_states), dtype=np.int64)
        rounds_hist = np.zeros((n, ROUNDS_BINS), dtype=np.int64)
        rounds_sum = np.zeros(n, dtype=np.int64)
        swing_sum = np.zeros(n, dtype=np.int64)
        swing_sq_sum = np.zeros(n, dtype=np.int64)
        simulate_chunks(
            seeds[start:stop], chunk_trials[start:stop],
            profile_cdf, att.offset, att.length, att.cdf, att.max_hits, att.can_hit,
            att.alive, att.defenceless, att.has_land, att.ipc_lost,
            dfn.cdf, dfn.max_hits, dfn.can_hit, dfn.alive, dfn.defenceless, dfn.ipc_lost,
            int(dfn.length[0]),
            outcomes, takes, a_final, d_final, rounds_hist, rounds_sum, swing_sum, swing_sq_sum,
        )
        totals["outcomes"] += outcomes.sum(axis=0)
        totals["takes"] += int(takes.sum())
        totals["a_final"] += a_final.sum(axis=0)
        totals["d_final"] += d_final.sum(axis=0)
        totals["rounds_hist"] += rounds_hist.sum(axis=0)
        totals["rounds_sum"] += int(rounds_sum.sum())
        totals["swing_sum"] += int(swing_sum.sum())
        totals["swing_sq_sum"] += int(swing_sq_sum.sum())
        done += int(chunk_trials[start:stop].sum())
        if progress is not None:
            progress(done, trials)
    return totals


def _check_trials(trials) -> int:
    if isinstance(trials, bool) or not isinstance(trials, (int, np.integer)):
        raise BattleInputError(f"trials must be a whole number, got {trials!r}")
    if not 1 <= trials <= MAX_TRIALS:
        raise BattleInputError(f"trials must be between 1 and {MAX_TRIALS:,}, got {trials:,}")
    return int(trials)


def _check_seed(seed) -> int:
    if seed is None:
        return int(np.random.SeedSequence().entropy % (2**63))
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise BattleInputError(f"seed must be a whole number, got {seed!r}")
    if not 0 <= seed < 2**63:
        raise BattleInputError(f"seed must be between 0 and 2**63-1, got {seed}")
    return int(seed)


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
) -> Result:
    """Odds of a battle.

    rules: edition id (see :func:`battlecalc.list_editions`); attacker/defender: army notation
    (``"3 inf, 1 art, 2 tank"``) or ``{unit: count}``; sea: a sea battle; trials and seed: Monte
    Carlo size and seed (same seed, same numbers); method: ``"exact"``, ``"mc"`` or ``"auto"``
    (exact when the battle is small enough); attacker_tech/defender_tech: technologies such as
    ``"heavy_bombers"`` or ``["jets"]``; progress: called as progress(done, total) during
    Monte Carlo runs.
    """
    started = time.perf_counter()
    if method not in METHODS:
        raise BattleInputError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    trials = _check_trials(trials)
    battle = make_battle(rules, attacker, defender, sea, attacker_tech, defender_tech)
    tables = compile_tables(
        battle.attacker, battle.defender, battle.attacker_rules, battle.defender_rules,
        is_land_battle=not battle.sea,
    )
    if method in ("auto", "exact"):
        a_lo, a_hi = _kept_range(tables.attacker, PRUNE_EPS)
        d_lo, d_hi = _kept_range(tables.defender, PRUNE_EPS)
        work = _work_estimate(tables, a_lo, a_hi, d_lo, d_hi)
        if work > EXACT_WORK_LIMIT:
            if method == "exact":
                raise BattleInputError(
                    f"battle too large to solve exactly (about {work:.2g} transitions, limit "
                    f"{EXACT_WORK_LIMIT:.2g}); use --method mc for Monte Carlo"
                )
            method = "mc"
        else:
            method = "exact"
    if method == "exact":
        raw = run_exact(tables)
        return build_result(battle, tables, "exact", None, None, raw, started)
    seed = _check_seed(seed)
    raw = run_monte_carlo(tables, trials, seed, progress)
    return build_result(battle, tables, "mc", trials, seed, raw, started)


def describe_army(counts: dict[str, int]) -> str:
    return format_army(counts)


def default_threads() -> int:
    return int(os.environ.get("NUMBA_NUM_THREADS", os.cpu_count() or 1))
