"""The Python API: validate a battle, compile it, run a solver, wrap the result.

    >>> import battlecalc
    >>> r = battlecalc.simulate(rules="revised", attacker="1 inf", defender="1 inf", method="exact")
    >>> round(r.attacker_win, 6), round(r.defender_win, 6), round(r.draw, 6)
    (0.25, 0.625, 0.125)
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from .army import parse_army, resolve_unit_name
from .compile import (
    CompiledBattle,
    RetreatTables,
    SideTables,
    compile_tables,
    with_partial_retreats,
)
from .errors import BattleInputError
from .exact.sea_solver import scratch_for, sea_win_values, solve_sea
from .exact.solver import solve, solve_serial, win_values
from .formula.engine import simulate_formula
from .kernels.common import N_OUTCOMES
from .kernels.montecarlo import simulate_chunks
from .kernels.sea import simulate_sea_chunks
from .orders import LossOrder, parse_loss_order
from .results import build_result
from .rules import Ruleset, load_rules
from .sea import SUBMERGE_POLICIES, CompiledSeaBattle, compile_sea, rules_array, side_arrays

METHODS = ("auto", "mc", "exact")
FORMULA_OPTIONS = ("attacker_level", "defender_level", "counter", "hatred", "loss_multiplier",
                   "exchanges", "exchange_cap", "flips")
DEFAULT_TRIALS = 1_000_000
MAX_TRIALS = 10_000_000_000
CHUNK_TRIALS = 16_384
CHUNKS_PER_CALL = 128  # one kernel call = one progress step; memory does not grow with trials
ROUNDS_BINS = 101  # rounds histogram: 0..99 and "100 or more"
# Work estimates (elementary steps of the exact solvers: state pairs x kept hit combinations):
# `auto` solves exactly up to the first limit (about a second on 2 cores), `exact` refuses
# above the second (about ten).
AUTO_EXACT_WORK = 4_000_000_000
PARALLEL_EXACT_WORK = 20_000_000  # below this the exact land solver runs on one thread
MAX_EXACT_WORK = 40_000_000_000
SEA_AUTO_EXACT_WORK = 150_000_000
SEA_MAX_EXACT_WORK = 1_500_000_000
SEA_EXACT_STATE_LIMIT = 4_000_000  # attacker x defender states (the solver's mass table)
PRUNE_EPS = 1e-16  # hit counts with a smaller probability are skipped (mass reported)
TRANSITION_EPS = 1e-18  # transitions moving less probability are skipped (mass reported)
STATE_EPS = 1e-16  # states holding less probability are not played on (mass reported)
WIN_VALUE_LIMIT = 4_000_000  # state pairs for --retreat-below's per-state win probabilities
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
    attacker_submerge: str = "never"
    defender_submerge: str = "never"
    landing: dict[str, int] = field(default_factory=dict)
    bombard: dict[str, int] = field(default_factory=dict)
    overland: dict[str, int] = field(default_factory=dict)
    attacker_order: LossOrder = field(default_factory=lambda: LossOrder("attack"))
    defender_order: LossOrder = field(default_factory=lambda: LossOrder("defense"))
    retreat: dict = field(default_factory=dict)  # after, when_left, only_air, below, strafe


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
    attacker_submerge: str = "never",
    defender_submerge: str = "never",
    landing: str | Mapping[str, int] | None = None,
    bombard: str | Mapping[str, int] | None = None,
    attacker_ool: str | None = None,
    defender_ool: str | None = None,
    keep_land: int = 0,
    aa_last: bool = False,
    retreat: Mapping | None = None,
) -> Battle:
    """Parse and validate a battle; raise BattleInputError with a clear message if it is not one.

    An amphibious assault is a land battle with `landing` (land units from transports, on
    top of the overland `attacker`) and optionally `bombard` (ships bombarding in round 1).
    """
    ruleset = load_rules(rules)
    a_tech, d_tech = _techs(attacker_tech), _techs(defender_tech)
    a_rules, d_rules = ruleset.with_techs(a_tech), ruleset.with_techs(d_tech)
    overland = _army(attacker, ruleset, "attacker")
    d_army = _army(defender, ruleset, "defender")
    landing_army = _army(landing, ruleset, "landing")
    bombard_army = _army(bombard, ruleset, "bombard")
    if sea and (landing_army or bombard_army):
        raise BattleInputError(
            "--landing and --bombard belong to amphibious assaults (land battles), "
            "not to sea battles"
        )
    for name in landing_army:
        unit = a_rules.units[name]
        if not unit.is_land or not unit.can_attack:
            raise BattleInputError(
                f"{name} cannot land from a transport: --landing takes land units that attack"
            )
    if bombard_army and not landing_army:
        raise BattleInputError(
            "--bombard needs --landing: ships bombard only to support an amphibious assault"
        )
    for name in bombard_army:
        if not a_rules.units[name].bombard:
            enabling = [t for t, tech in ruleset.techs.items()
                        if tech.changes.get(name, {}).get("bombard")]
            hint = f" (needs the {enabling[0]} technology)" if enabling else ""
            raise BattleInputError(f"{name} cannot bombard in {ruleset.id}{hint}")
    a_army = {n: overland.get(n, 0) + landing_army.get(n, 0) for n in ruleset.units
              if overland.get(n, 0) + landing_army.get(n, 0)}
    if not a_army:
        raise BattleInputError("the attacker has no units")
    if not d_army:
        raise BattleInputError("the defender has no units")
    for side, policy in (("attacker", attacker_submerge), ("defender", defender_submerge)):
        if policy not in SUBMERGE_POLICIES:
            raise BattleInputError(
                f"{side} submerge policy must be one of {', '.join(SUBMERGE_POLICIES)}, "
                f"got {policy!r}"
            )
    for side, army in (("attacker", a_army), ("defender", d_army)):
        for name in army:
            unit = ruleset.units[name]
            if sea and unit.domain == "land":
                raise BattleInputError(
                    f"{name} is a land unit and cannot be in a sea battle ({side})"
                )
            if not sea and unit.domain == "sea":
                raise BattleInputError(
                    f"{name} is a sea unit and cannot be in a land battle ({side}); "
                    "use --sea for a sea battle"
                )
    for name in a_army:
        if not a_rules.units[name].can_attack:
            raise BattleInputError(f"{name} cannot attack (it only defends)")
    if sea:
        if ruleset.flags["sub_first_strike"] not in ("always", "unless_enemy_destroyer"):
            raise BattleInputError(
                f"sea battles of {ruleset.id} are not supported (sub_first_strike = "
                f"{ruleset.flags['sub_first_strike']})"
            )
    elif attacker_submerge != "never" or defender_submerge != "never":
        raise BattleInputError("submerge policies apply to sea battles only (--sea)")
    attacker_order = parse_loss_order(attacker_ool, ruleset, "attack", keep_land=keep_land)
    defender_order = parse_loss_order(defender_ool, ruleset, "defense", aa_last=aa_last)
    if keep_land:
        land_units = sum(n for u, n in a_army.items() if ruleset.units[u].is_land)
        if sea:
            raise BattleInputError("--keep-land applies to land battles, not to sea battles")
        if keep_land > land_units:
            raise BattleInputError(
                f"--keep-land {keep_land} is more than the attacker's {land_units} land units"
            )
    if aa_last:
        if not any(u.is_aa and u.can_be_casualty for u in ruleset.units.values()):
            raise BattleInputError(
                f"--aa-last: AA guns are never casualties in {ruleset.id}"
            )
        if sea:
            raise BattleInputError("--aa-last applies to land battles")
    enemy_subs = {side: any(ruleset.units[u].submarine for u in army)
                  for side, army in (("attacker", a_army), ("defender", d_army))}
    attacker_order = attacker_order.with_enemy_subs(enemy_subs["defender"])
    defender_order = defender_order.with_enemy_subs(enemy_subs["attacker"])
    return Battle(ruleset, a_rules, d_rules, a_army, d_army, sea, a_tech, d_tech,
                  attacker_submerge, defender_submerge, landing_army, bombard_army, overland,
                  attacker_order, defender_order, _check_retreat(retreat, sea))


def _check_retreat(retreat: Mapping | None, sea: bool) -> dict:
    """Validate a retreat policy {after, when_left, only_air, below, strafe}; {} for none."""
    policy = {k: v for k, v in (retreat or {}).items() if v is not None and v is not False}
    unknown = set(policy) - {"after", "when_left", "only_air", "below", "strafe"}
    if unknown:
        raise BattleInputError(f"unknown retreat options: {', '.join(sorted(unknown))}")
    if not policy:
        return {}
    if sea and policy.get("only_air"):
        raise BattleInputError("--retreat-when-only-air applies to land battles")
    for key, label, lo in (("after", "--retreat-after", 1),
                           ("when_left", "--retreat-when-left", 0),
                           ("strafe", "--strafe", 0)):
        value = policy.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or value < lo):
            raise BattleInputError(f"{label} must be a whole number >= {lo}, got {value!r}")
    below = policy.get("below")
    if below is not None:
        if isinstance(below, bool) or not isinstance(below, (int, float)) or not 0 < below <= 1:
            raise BattleInputError(
                f"--retreat-below must be a probability in (0, 1], got {below!r}"
            )
        if policy.get("after"):
            raise BattleInputError("--retreat-below cannot be combined with --retreat-after")
    return policy


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


def _retreat_args(tables: CompiledBattle) -> tuple:
    r = tables.retreat_tables()
    return (r.vector, r.below, r.a_units_left, r.d_units_left, r.a_may_retreat, r.win_value,
            r.remainder_start)


def _profile_maps(side: SideTables) -> tuple[np.ndarray, np.ndarray]:
    """Per flat state: its profile's index and its profile's last ('nothing left') state."""
    profile_of = np.repeat(np.arange(len(side.offset)), side.length + 1).astype(np.int64)
    return profile_of, (side.offset + side.length)[profile_of].astype(np.int64)


def _may_withdraw(battle: Battle, side: SideTables) -> np.ndarray:
    """Units of each type that may withdraw at each attacker state [Sa, U].

    All of them, except in an amphibious assault: landed units never retreat (a type's
    casualties are counted against its landed units first), and with amphibious_retreat =
    "air_only" (Revised) only aircraft do.
    """
    survivors = side.survivors
    if not battle.landing:
        return survivors.copy()
    flag = battle.rules.flags["amphibious_retreat"]
    allowed = np.zeros_like(survivors)
    for i, name in enumerate(side.unit_names):
        unit = battle.attacker_rules.units[name]
        if unit.is_air and flag != "none":
            allowed[:, i] = survivors[:, i]
        elif flag == "air_and_overland":
            allowed[:, i] = np.minimum(survivors[:, i], battle.overland.get(name, 0))
    return allowed


def _retreat_vector(policy: dict) -> tuple[np.ndarray, float]:
    """The retreat vector and win-probability threshold of kernels.common.should_retreat."""
    vector = np.array([
        1 if policy else 0,
        policy.get("after") or 0,
        -1 if policy.get("when_left") is None else policy["when_left"],
        1 if policy.get("only_air") else 0,
        -1 if policy.get("strafe") is None else policy["strafe"],
    ], dtype=np.int64)
    below = -1.0 if policy.get("below") is None else float(policy["below"])
    return vector, below


def _win_value_table(n_a: int, n_d: int) -> np.ndarray:
    """Zeroed per-state win probabilities for --retreat-below, if the battle is small enough."""
    if n_a * n_d > WIN_VALUE_LIMIT:
        raise BattleInputError(
            f"--retreat-below needs the exact win probability of every state, and this "
            f"battle has {n_a * n_d:,} state pairs (limit {WIN_VALUE_LIMIT:,}); use another "
            "retreat option"
        )
    return np.zeros((n_a, n_d))


def with_retreat(battle: Battle, tables: CompiledBattle) -> CompiledBattle:
    """The tables with the battle's retreat policy as kernel arrays: partial retreats of
    amphibious assaults get profiles of their own (compile.with_partial_retreats), and the
    per-state win probabilities of `retreat_below` come from a backward exact sweep."""
    policy = battle.retreat
    if not policy:
        return tables
    n_main = tables.attacker.n_states
    tables, remainder_start = with_partial_retreats(
        tables, battle.attacker_rules, battle.attacker_order,
        _may_withdraw(battle, tables.attacker))
    att, dfn = tables.attacker, tables.defender
    a_units_left = att.survivors.sum(axis=1).astype(np.int64)
    d_units_left = dfn.survivors.sum(axis=1).astype(np.int64)
    # retreats happen from the original profiles only; the stayers of a partial retreat
    # never retreat again
    may = np.zeros(att.n_states, dtype=np.bool_)
    may[:n_main] = remainder_start != -2
    start = np.full(att.n_states, -1, dtype=np.int64)
    start[:n_main] = np.maximum(remainder_start, -1)
    vector, below = _retreat_vector(policy)
    win_value = np.zeros((1, 1))
    if below >= 0:
        win_value = _win_value_table(att.n_states, dfn.n_states)
        a_lo, a_hi = _kept_range(att, PRUNE_EPS)
        d_lo, d_hi = _kept_range(dfn, PRUNE_EPS)
        win_values(att.offset, att.length, att.pmf, a_lo, a_hi, att.can_hit, att.alive,
                   att.defenceless, att.has_land, dfn.pmf, d_lo, d_hi, dfn.can_hit, dfn.alive,
                   dfn.defenceless, int(dfn.length[0]), vector, below, a_units_left,
                   d_units_left, may, win_value, start)
    retreat = RetreatTables(vector, below, a_units_left, d_units_left, may, win_value, start)
    return dataclasses.replace(tables, retreat=retreat)


def run_exact(tables: CompiledBattle, eps: float = PRUNE_EPS, rounds_law: bool = False) -> dict:
    """Exact outcome probabilities and final-state distributions from the compiled tables;
    rounds_law: also the law of the number of rounds (the first ROUNDS_BINS - 1 rounds are then
    played one by one, which costs more than the closed-form sweep)."""
    att, dfn = tables.attacker, tables.defender
    a_lo, a_hi = _kept_range(att, eps)
    d_lo, d_hi = _kept_range(dfn, eps)
    outcomes = np.zeros(N_OUTCOMES)
    a_final = np.zeros(att.n_states)
    d_final = np.zeros(dfn.n_states)
    joint_size = att.n_states * dfn.n_states
    joint = np.zeros((att.n_states, dfn.n_states) if joint_size <= JOINT_LIMIT else (0, 0))
    totals = np.zeros(3)
    rounds_hist = np.zeros(ROUNDS_BINS if rounds_law else 1)
    # threads only pay off for several AA profiles and real work
    work = _work_estimate(tables, a_lo, a_hi, d_lo, d_hi)
    solver = solve if len(att.profile_prob) > 1 and work > PARALLEL_EXACT_WORK else solve_serial
    solver(
        att.profile_prob, att.offset, att.length, att.pmf, np.cumsum(att.pmf, axis=1), a_lo,
        a_hi, att.can_hit, att.alive, att.defenceless, att.has_land,
        dfn.pmf, d_lo, d_hi, dfn.can_hit, dfn.alive, dfn.defenceless,
        int(dfn.length[0]),
        tables.bombardment.pmf, tables.bombardment.mode, tables.bombardment.land_prefix,
        *_retreat_args(tables), _profile_maps(att)[0],
        np.zeros((len(att.offset), dfn.n_states)),
        outcomes, a_final, d_final, joint, totals, rounds_hist, TRANSITION_EPS, STATE_EPS,
    )
    return {
        "outcomes": outcomes,
        "takes": totals[2],
        "a_final": a_final,
        "d_final": d_final,
        "joint": joint if joint.size else None,
        "mean_rounds": totals[0],
        "pruned": max(0.0, float(totals[1])),
        "rounds_hist": rounds_hist if rounds_law else None,
    }


def _run_chunks(n_a: int, n_d: int, trials: int, seed: int, progress, kernel) -> dict:
    """Drive a Monte Carlo kernel over fixed chunks of trials and add up its aggregates.

    kernel(seeds, chunk_trials, outcomes, takes, a_final, d_final, rounds_hist, rounds_sum,
    swing_sum, swing_sq_sum) fills one row per chunk.  Chunks and their seeds depend only on
    `trials` and `seed`, and every aggregate is an integer, so the totals are identical
    whatever the thread count; memory is bounded by CHUNKS_PER_CALL, not by `trials`.
    """
    n_chunks = -(-trials // CHUNK_TRIALS)
    chunk_trials = np.full(n_chunks, CHUNK_TRIALS, dtype=np.int64)
    chunk_trials[-1] = trials - CHUNK_TRIALS * (n_chunks - 1)
    seeds = np.random.SeedSequence(seed).generate_state(n_chunks, dtype=np.uint64)
    shapes = {
        "outcomes": (N_OUTCOMES,), "takes": (), "a_final": (n_a,), "d_final": (n_d,),
        "rounds_hist": (ROUNDS_BINS,), "rounds_sum": (), "swing_sum": (), "swing_sq_sum": (),
    }
    totals = {key: np.zeros(shape, dtype=np.int64) for key, shape in shapes.items()}
    done = 0
    for start in range(0, n_chunks, CHUNKS_PER_CALL):
        stop = min(start + CHUNKS_PER_CALL, n_chunks)
        rows = {key: np.zeros((stop - start, *shape), dtype=np.int64)
                for key, shape in shapes.items()}
        kernel(seeds[start:stop], chunk_trials[start:stop], *rows.values())
        for key, value in rows.items():
            totals[key] += value.sum(axis=0)
        done += int(chunk_trials[start:stop].sum())
        if progress is not None:
            progress(done, trials)
    return {key: (int(v) if v.ndim == 0 else v) for key, v in totals.items()}


def run_monte_carlo(
    tables: CompiledBattle,
    trials: int,
    seed: int,
    progress: Callable[[int, int], None] | None = None,
) -> dict:
    """Monte Carlo aggregates of a land battle; identical for a seed whatever the threads."""
    att, dfn = tables.attacker, tables.defender
    profile_cdf = np.cumsum(att.profile_prob)
    # exactly 1 from the last profile that can start on (partial-retreat profiles cannot)
    profile_cdf[np.flatnonzero(att.profile_prob > 0)[-1]:] = 1.0
    profile_end = _profile_maps(att)[1]
    bombard = tables.bombardment
    bombard_cdf = np.cumsum(bombard.pmf)
    bombard_cdf[-1] = 1.0

    def kernel(seeds, chunk_trials, outcomes, takes, a_final, d_final, rounds_hist,
               rounds_sum, swing_sum, swing_sq_sum):
        simulate_chunks(
            seeds, chunk_trials,
            profile_cdf, att.offset, att.length, att.cdf, att.max_hits, att.can_hit,
            att.alive, att.defenceless, att.has_land, att.ipc_lost,
            dfn.cdf, dfn.max_hits, dfn.can_hit, dfn.alive, dfn.defenceless, dfn.ipc_lost,
            int(dfn.length[0]), bombard_cdf, bombard.mode, bombard.land_prefix,
            *_retreat_args(tables), profile_end,
            outcomes, takes, a_final, d_final, rounds_hist, rounds_sum, swing_sum, swing_sq_sum,
        )

    return _run_chunks(att.n_states, dfn.n_states, trials, seed, progress, kernel)


def sea_retreat_args(tables: CompiledSeaBattle, policy: dict | None,
                     rules: np.ndarray) -> tuple:
    """(retreat vector, attacker / defender units in the battle per flat state, all-True
    may-retreat, win-probability threshold, per-state win probabilities) for the sea kernels
    (kernels.common.should_retreat); the win probabilities only for --retreat-below."""
    # --retreat-when-only-air is refused at sea, so the vector never asks for it
    vector, below = _retreat_vector(policy or {})

    def in_battle(side):
        # submerged subs are survivors but no longer in the battle
        n_air, n_ship = side.n_air_steps + 1, side.n_ship_steps + 1
        s_index = np.arange(side.n_states) // (n_air * n_ship)
        subs = side.survivors[:, [i for i, name in enumerate(side.unit_names)
                                  if tables.units[name].submarine]].sum(axis=1)
        return (side.survivors.sum(axis=1) - np.where(s_index > side.n_sub, subs, 0)).astype(
            np.int64)

    att, dfn = tables.attacker, tables.defender
    a_units, d_units = in_battle(att), in_battle(dfn)
    may = np.ones(att.n_states, dtype=np.bool_)
    win_value = np.zeros((1, 1))
    if below >= 0:
        win_value = _win_value_table(att.n_states, dfn.n_states)
        a_ints, _, a_pmf = side_arrays(att)
        d_ints, _, d_pmf = side_arrays(dfn)
        sea_win_values(a_ints, a_pmf, d_ints, d_pmf, rules, vector, a_units, d_units, may,
                       below, win_value, scratch_for(att.n_states), scratch_for(dfn.n_states))
    return (vector, a_units, d_units, may, below, win_value)


def run_sea_monte_carlo(tables: CompiledSeaBattle, rules: np.ndarray, trials: int, seed: int,
                        progress: Callable[[int, int], None] | None = None,
                        retreat: dict | None = None) -> dict:
    """Monte Carlo aggregates of a sea battle (rules: see battlecalc.sea.rules_array)."""
    att, dfn = tables.attacker, tables.defender
    a_ints, a_cdf, _ = side_arrays(att)
    d_ints, d_cdf, _ = side_arrays(dfn)
    retreat_args = sea_retreat_args(tables, retreat, rules)

    def kernel(seeds, chunk_trials, outcomes, takes, a_final, d_final, rounds_hist,
               rounds_sum, swing_sum, swing_sq_sum):
        simulate_sea_chunks(seeds, chunk_trials, a_ints, a_cdf, d_ints, d_cdf, rules,
                            *retreat_args, att.ipc_lost, dfn.ipc_lost, outcomes, a_final,
                            d_final, rounds_hist, rounds_sum, swing_sum, swing_sq_sum)

    return _run_chunks(att.n_states, dfn.n_states, trials, seed, progress, kernel)


def run_sea_exact(tables: CompiledSeaBattle, rules: np.ndarray,
                  retreat: dict | None = None) -> dict:
    """Exact law of a sea battle."""
    att, dfn = tables.attacker, tables.defender
    outcomes = np.zeros(N_OUTCOMES)
    a_final = np.zeros(att.n_states)
    d_final = np.zeros(dfn.n_states)
    totals = np.zeros(3)
    mass = np.zeros((att.n_states, dfn.n_states))
    joint_size = att.n_states * dfn.n_states
    joint = np.zeros((att.n_states, dfn.n_states) if joint_size <= JOINT_LIMIT else (0, 0))
    a_ints, _, a_pmf = side_arrays(att)
    d_ints, _, d_pmf = side_arrays(dfn)
    solve_sea(a_ints, a_pmf, d_ints, d_pmf, rules, *sea_retreat_args(tables, retreat, rules),
              mass,
              scratch_for(att.n_states),
              scratch_for(dfn.n_states), TRANSITION_EPS, outcomes, a_final, d_final, joint,
              totals)
    return {
        "outcomes": outcomes,
        "takes": 0.0,
        "a_final": a_final,
        "d_final": d_final,
        "joint": joint if joint.size else None,
        "mean_rounds": totals[0],
        "pruned": max(0.0, float(totals[1])),
    }


def _sea_work_estimate(tables: CompiledSeaBattle) -> float:
    """Rough count of elementary steps of the exact sea solver (state pairs x hit combos)."""
    def combos(side):
        return ((int(side.sub_top.max()) + 1) * (int(side.air_top.max()) + 1)
                * (int(side.ship_top.max()) + 1))
    pairs = tables.attacker.n_states * tables.defender.n_states
    return pairs * (combos(tables.attacker) + combos(tables.defender))


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
    attacker_submerge: str = "never",
    defender_submerge: str = "never",
    landing: str | Mapping[str, int] | None = None,
    bombard: str | Mapping[str, int] | None = None,
    attacker_ool: str | None = None,
    defender_ool: str | None = None,
    keep_land: int = 0,
    aa_last: bool = False,
    retreat_after: int | None = None,
    retreat_when_left: int | None = None,
    retreat_when_only_air: bool = False,
    retreat_below: float | None = None,
    strafe: int | None = None,
    rounds_distribution: bool = False,
    waves: Iterable[str | Mapping[str, int]] | None = None,
    counterattack: str | Mapping[str, int] | None = None,
    **formula_options,
):
    """Odds of a battle.

    rules: edition id (see :func:`battlecalc.list_editions`); attacker/defender: army notation
    (``"3 inf, 1 art, 2 tank"``) or ``{unit: count}``; sea: a sea battle; trials and seed: Monte
    Carlo size and seed (same seed, same numbers); method: ``"exact"``, ``"mc"`` or ``"auto"``
    (exact when the battle is small enough); attacker_tech/defender_tech: technologies such as
    ``"heavy_bombers"`` or ``["jets"]``; progress: called as progress(done, total) during
    Monte Carlo runs; attacker_submerge/defender_submerge: ``"never"``,
    ``"when-only-subs-left"`` or ``"first-chance"`` (sea battles); landing/bombard: an
    amphibious assault's land units from transports and bombarding ships (land battles);
    attacker_ool/defender_ool: orders of losses (``"bomber,tank"``, TripleA's
    ``"*^infantry;*^fighter;1^infantry"``, or a preset ``cheapest``/``weakest``/``smart``);
    keep_land: the attacker's last N land units are lost after every aircraft; aa_last: the
    defender's AAA are lost last instead of first (1942 2E); retreat_after R,
    retreat_when_left N, retreat_when_only_air, retreat_below P, strafe N: when the attacker
    withdraws at the end of a round (land battles; reported as ``retreat``);
    rounds_distribution: the exact solver also computes the law of the number of rounds
    (Monte Carlo always does); waves: further waves on the defender's survivors, and
    counterattack: the defender side's counter-attack on the territory taken (both return a
    :class:`battlecalc.waves.WavesResult`; see :mod:`battlecalc.waves`).

    Editions of the formula model (``rules="formula"``) take the options of
    :func:`battlecalc.formula.engine.simulate_formula` instead (attacker_level, counter,
    exchanges, ...) and return its FormulaResult.
    """
    if waves or counterattack is not None:  # a sequence of battles: battlecalc.waves
        options = {k: v for k, v in locals().items()
                   if k not in ("waves", "counterattack", "formula_options")}
        from .waves import simulate_waves

        return simulate_waves(waves, counterattack, **options, **formula_options)
    started = time.perf_counter()
    unknown = set(formula_options) - set(FORMULA_OPTIONS)
    if unknown:
        raise TypeError(f"simulate() got unexpected keyword arguments: {sorted(unknown)}")
    ruleset = load_rules(rules)
    if ruleset.model == "formula":
        dice_only = {"sea": sea, "attacker_tech": attacker_tech, "defender_tech": defender_tech,
                     "landing": landing, "bombard": bombard, "attacker_ool": attacker_ool,
                     "defender_ool": defender_ool, "keep_land": keep_land, "aa_last": aa_last,
                     "retreat_after": retreat_after, "retreat_when_left": retreat_when_left,
                     "retreat_when_only_air": retreat_when_only_air,
                     "retreat_below": retreat_below, "strafe": strafe,
                     "attacker_submerge": attacker_submerge != "never" or None,
                     "defender_submerge": defender_submerge != "never" or None}
        used = [name for name, value in dice_only.items() if value]
        if used:
            raise BattleInputError(
                f"{', '.join(used)} do not apply to the {ruleset.id} edition (formula combat)"
            )
        options = {k: v for k, v in formula_options.items() if v is not None}
        return simulate_formula(attacker, defender, method=method, trials=trials, seed=seed,
                                rules=ruleset, **options)
    given = [k for k, v in formula_options.items() if v is not None]
    if given:
        raise BattleInputError(
            f"{', '.join(given)} apply to formula-combat editions only, not to {ruleset.id}"
        )
    if method not in METHODS:
        raise BattleInputError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    trials = _check_trials(trials)
    battle = make_battle(rules, attacker, defender, sea, attacker_tech, defender_tech,
                         attacker_submerge, defender_submerge, landing, bombard, attacker_ool,
                         defender_ool, keep_land, aa_last,
                         {"after": retreat_after, "when_left": retreat_when_left,
                          "only_air": retreat_when_only_air, "below": retreat_below,
                          "strafe": strafe})
    if battle.sea:
        tables = compile_sea(
            battle.attacker, battle.defender, battle.attacker_rules, battle.defender_rules,
            battle.attacker_order, battle.defender_order,
        )
        rule_vector = rules_array(battle.rules.flags, battle.attacker_submerge,
                                  battle.defender_submerge)
        work = _sea_work_estimate(tables)
        pairs = tables.attacker.n_states * tables.defender.n_states
        too_big_for_auto = work > SEA_AUTO_EXACT_WORK or pairs > SEA_EXACT_STATE_LIMIT
        too_big = work > SEA_MAX_EXACT_WORK or pairs > SEA_EXACT_STATE_LIMIT
        run_exact_method = lambda: run_sea_exact(  # noqa: E731
            tables, rule_vector, battle.retreat)
        run_mc_method = lambda s: run_sea_monte_carlo(  # noqa: E731
            tables, rule_vector, trials, s, progress, battle.retreat)
    else:
        tables = compile_tables(
            battle.attacker, battle.defender, battle.attacker_rules, battle.defender_rules,
            is_land_battle=True, bombard=battle.bombard,
            attacker_order=battle.attacker_order, defender_order=battle.defender_order,
            landing_units=sum(battle.landing.values()),
        )
        tables = with_retreat(battle, tables)
        a_lo, a_hi = _kept_range(tables.attacker, PRUNE_EPS)
        d_lo, d_hi = _kept_range(tables.defender, PRUNE_EPS)
        work = _work_estimate(tables, a_lo, a_hi, d_lo, d_hi)
        too_big_for_auto = work > AUTO_EXACT_WORK
        too_big = work > MAX_EXACT_WORK
        if rounds_distribution and (tables.attacker.profile_prob == 0).any():
            raise BattleInputError(
                "the exact law of rounds is not available with partial amphibious retreats; "
                "use --method mc"
            )
        run_exact_method = lambda: run_exact(tables, rounds_law=rounds_distribution)  # noqa: E731
        run_mc_method = lambda s: run_monte_carlo(tables, trials, s, progress)  # noqa: E731
    if method == "auto":
        method = "mc" if too_big_for_auto else "exact"
    if method == "exact" and too_big:
        raise BattleInputError(
            f"battle too large to solve exactly (about {work:.2g} elementary steps, limit "
            f"{MAX_EXACT_WORK if not battle.sea else SEA_MAX_EXACT_WORK:.2g}); "
            "use --method mc for Monte Carlo"
        )
    if method == "exact":
        return build_result(battle, tables, "exact", None, None, run_exact_method(), started)
    seed = _check_seed(seed)
    return build_result(battle, tables, "mc", trials, seed, run_mc_method(seed), started)
