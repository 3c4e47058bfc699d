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
from .compile import SUBMERGE_POLICIES, compile_battle
from .errors import BattleInputError
from .formula.engine import simulate_formula
from .kernels.common import RU_SIMPLE
from .kernels.exact import fill_win_values, run_exact, work_estimate
from .kernels.montecarlo import ROUNDS_BINS, run_monte_carlo
from .orders import LossOrder, parse_loss_order
from .results import build_result
from .rules import Ruleset, load_rules

METHODS = ("auto", "mc", "exact")
FORMULA_OPTIONS = ("attacker_level", "defender_level", "counter", "hatred", "loss_multiplier",
                   "exchanges", "exchange_cap", "flips")
DEFAULT_TRIALS = 1_000_000
MAX_TRIALS = 10_000_000_000
# Work estimates (kernels.exact.work_estimate: state pairs x kept hit combinations): `auto`
# solves exactly up to the first limit (about a second on 2 cores), `exact` refuses above the
# second (about ten).  A round in the general model (sea, amphibious with bombardment) costs
# more per step than the land fast path.
AUTO_EXACT_WORK = 4_000_000_000
MAX_EXACT_WORK = 40_000_000_000
GENERAL_AUTO_EXACT_WORK = 150_000_000
GENERAL_MAX_EXACT_WORK = 1_500_000_000
EXACT_STATE_LIMIT = 4_000_000  # attacker x defender states (the solver's mass table)
WIN_VALUE_LIMIT = 4_000_000  # state pairs for --retreat-below's per-state win probabilities


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


def _exact_limits(compiled) -> tuple[float, float]:
    """(auto limit, exact limit) on the work estimate: about one and ten seconds."""
    if compiled.rules[RU_SIMPLE]:
        return AUTO_EXACT_WORK, MAX_EXACT_WORK
    return GENERAL_AUTO_EXACT_WORK, GENERAL_MAX_EXACT_WORK


def _with_win_values(compiled, work: float):
    """--retreat-below: the exact per-state win probabilities, from a backward sweep."""
    n_a, n_d = compiled.attacker.n_states, compiled.defender.n_states
    if n_a * n_d > WIN_VALUE_LIMIT:
        raise BattleInputError(
            f"--retreat-below needs the exact win probability of every state, and this "
            f"battle has {n_a * n_d:,} state pairs (limit {WIN_VALUE_LIMIT:,}); use another "
            "retreat option"
        )
    retreat = dataclasses.replace(compiled.retreat, win_value=np.zeros((n_a, n_d)))
    compiled = dataclasses.replace(compiled, retreat=retreat)
    fill_win_values(compiled, work)
    return compiled


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
    (Monte Carlo always does).

    Editions of the formula model (``rules="formula"``) take the options of
    :func:`battlecalc.formula.engine.simulate_formula` instead (attacker_level, counter,
    exchanges, ...) and return its FormulaResult.
    """
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
    compiled = compile_battle(battle)
    work = work_estimate(compiled)
    pairs = compiled.attacker.n_states * compiled.defender.n_states
    auto_limit, max_limit = _exact_limits(compiled)
    if compiled.retreat is not None and compiled.retreat.below >= 0:
        compiled = _with_win_values(compiled, work)
    partial = (compiled.attacker.start[compiled.attacker.blocks[:, 0]] == 0).any()
    if rounds_distribution and partial:
        raise BattleInputError(
            "the exact law of rounds is not available with partial amphibious retreats; "
            "use --method mc"
        )
    if method == "auto":
        method = "mc" if work > auto_limit or pairs > EXACT_STATE_LIMIT else "exact"
    if method == "exact" and (work > max_limit or pairs > EXACT_STATE_LIMIT):
        raise BattleInputError(
            f"battle too large to solve exactly (about {work:.2g} elementary steps, limit "
            f"{max_limit:.2g}); use --method mc for Monte Carlo"
        )
    if method == "exact":
        raw = run_exact(compiled, ROUNDS_BINS if rounds_distribution else 1, work)
        return build_result(battle, compiled, "exact", None, None, raw, started)
    seed = _check_seed(seed)
    raw = run_monte_carlo(compiled, trials, seed, progress)
    return build_result(battle, compiled, "mc", trials, seed, raw, started)
