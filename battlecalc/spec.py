"""Battle specs: every argument of `simulate` checked once, into frozen objects.

A dice battle becomes a :class:`Battle`, a formula battle a :class:`FormulaSpec`, how to compute
either a :class:`RunSpec`.  Light on purpose (no numpy, numba or pandas): the command line
imports the constants below without loading the engine.  A whole number is an int or numpy int,
a flag a bool or numpy bool.  Retreat thresholds above an army's size mean the same as its size
and are clamped to it (``retreat_when_left=10**20``: retreat at the end of round 1).
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import secrets
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from .army import MAX_UNITS_PER_TYPE, format_army, parse_army, resolve_unit_name
from .errors import QUOTE_LIMIT, BattleInputError, quoted, warn_input
from .options import (  # noqa: F401  (re-exported: the public constants)
    DEFAULT_TRIALS,
    DICE_MODELS,
    FLIP_RULES,
    FORMULA_OPTIONS,
    LAND_STEPS,
    MAX_TERRITORY_VALUE,
    METHODS,
    OBJECTIVES,
    OPTIONS,
    RETREAT_POLICIES,
    SEA_STEPS,
    START_STEPS,
    SUBMERGE_POLICIES,
    UNTIL_DONE,
    is_bool,
    option,
    read,
    read_choice,
)
from .orders import PRESETS, LossOrder, parse_loss_order
from .reactions import NO_REACTIONS, Reactions, check_reactions
from .rules import Ruleset, list_editions, load_rules, tech_affects

MAX_TRIALS = 10_000_000_000
MAX_SEED = 2**63 - 1


def fresh_seed() -> int:
    """A random seed for a run that was given none (0..MAX_SEED; drawn here only, reported
    with the result so the run can be repeated)."""
    return secrets.randbits(MAX_SEED.bit_length())


LOSS_ORDER_PRESETS = PRESETS
MAX_RETREAT_ROUND = 1000  # retreat_after: a battle this long has no measurable probability
DEFAULT_EXCHANGE_CAP = 100
MAX_EXCHANGES = 1000  # for both `exchanges` and `exchange_cap`
MAX_COUNTER = 1000
MAX_LOSS_MULTIPLIER = 10
Army = str | Mapping[str, int] | None  # army notation or {unit: count}
Techs = str | Iterable[str] | None  # "jets,heavy_bombers" or ["jets", ...]
Order = str | Iterable[str] | None  # an order of losses: text or a list of unit names
# simulate's dice-model arguments and their defaults (refused by formula editions), from the
# table of options (battlecalc.options)
DICE_ONLY = {o.name: o.default for o in OPTIONS if o.dice_only}


# ---------------------------------------------------------------------------------------------
# Values


def check_flag(name: str, value: Any) -> bool:
    """A bool (or numpy bool)."""
    if not is_bool(value):
        raise BattleInputError(f"{name} must be true or false (a bool), got {quoted(value)}")
    return bool(value)


def check_int(name: str, value: Any, lo: int, hi: int | None = None, hi_text: str = "",
              floats: bool = False) -> int:
    """A whole number lo..hi (hi None: no bound): an int or numpy int, with floats=True also
    an integral float such as 1e6."""
    if type(value) is int and value >= lo and (hi is None or value <= hi):
        return value  # the common case, without the numbers ABC checks below (a batch's cost)
    if (floats and isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral)
            and is_finite(value) and value == int(value)):
        value = int(value)
    if is_bool(value) or not isinstance(value, numbers.Integral):
        raise BattleInputError(f"{name} must be a whole number, got {quoted(value)}")
    if value < lo or (hi is not None and value > hi):
        bound = f"{lo} or more" if hi is None else f"between {lo:,} and {hi_text or f'{hi:,}'}"
        raise BattleInputError(f"{name} must be {bound}, got {quoted(int(value))}")
    return int(value)


def is_finite(value: numbers.Real) -> bool:
    """math.isfinite, False for a number beyond a float (a Fraction of 400 digits), which
    math.isfinite answers with OverflowError."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def check_choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise BattleInputError(f"{name} must be one of {', '.join(choices)}, got {quoted(value)}")
    return value


def army_counts(value: Army, ruleset: Ruleset, side: str) -> dict[str, int]:
    """Army notation or ``{unit: count}`` as ``{canonical unit: count}`` in the edition's unit
    order; at most MAX_UNITS_PER_TYPE of a type either way."""
    if value is None:
        return {}
    if isinstance(value, str):
        return parse_army(value, ruleset)
    if not isinstance(value, Mapping):
        raise BattleInputError(
            f"{side} must be army notation or a {{unit: count}} mapping, got {quoted(value)}")
    counts: dict[str, int] = {}
    aliases = ruleset.aliases  # (a name as written there: resolve_unit_name's answer)
    for name, count in value.items():
        if not isinstance(name, str):
            raise BattleInputError(f"{side}: unit names must be text, got {quoted(name)}")
        unit = aliases.get(name) or resolve_unit_name(name, ruleset)
        count = check_int(f"{side} count of {unit}", count, 0, MAX_UNITS_PER_TYPE)
        counts[unit] = counts.get(unit, 0) + count
        if counts[unit] > MAX_UNITS_PER_TYPE:
            raise BattleInputError(
                f"{side}: {counts[unit]} {unit} is more than the {MAX_UNITS_PER_TYPE} per unit "
                "type battlecalc accepts")
    return {name: counts[name] for name in ruleset.units if counts.get(name)}


def check_techs(value: Techs, side: str) -> tuple[str, ...]:
    """Technologies, comma-separated or a list, normalised (``heavy-bombers`` ->
    ``heavy_bombers``); Ruleset.with_techs checks that the edition knows them."""
    if isinstance(value, str):
        value = value.split(",")
    if value is not None and not (isinstance(value, (list, tuple))
                                  and all(isinstance(t, str) for t in value)):
        raise BattleInputError(
            f"{side}_tech must be text or a list of technology names, got {quoted(value)}")
    return tuple(t.strip().lower().replace("-", "_") for t in value or () if t.strip())


def check_order(value: Order, name: str) -> Order:
    """An order of losses: text, a list of unit names or None (orders.py reads it)."""
    if value is None or isinstance(value, str) or (
            isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)):
        return value
    raise BattleInputError(
        f"{name} must be an order of losses (text or a list of unit names), got {quoted(value)}")


def check_waves(value: Any) -> list | None:
    """simulate's `waves`: one army (notation or {unit: count}) or a list of them."""
    if value is None:
        return None
    if isinstance(value, (str, Mapping)):
        return [value]
    if isinstance(value, (list, tuple)) and all(isinstance(v, (str, Mapping)) for v in value):
        return list(value)
    raise BattleInputError(
        f"waves must be an army or a list of armies (notation or {{unit: count}}), "
        f"got {quoted(value)}")


# ---------------------------------------------------------------------------------------------
# How to compute


@dataclass(frozen=True)
class RunSpec:
    """How to compute a battle; rounds_distribution: the exact solver also gives the law of
    the number of rounds."""

    method: str = "auto"
    trials: int = DEFAULT_TRIALS
    seed: int | None = None  # None: a random seed, drawn (and reported) when Monte Carlo runs
    progress: Callable[..., None] | None = None  # progress(done, total, what)
    rounds_distribution: bool = False

    def mc_seed(self) -> int:
        """The seed a Monte Carlo run uses."""
        return fresh_seed() if self.seed is None else self.seed


def check_seed(seed: Any) -> int | None:
    """A seed 0..MAX_SEED, or None (none given)."""
    return None if seed is None else check_int("seed", seed, 0, MAX_SEED, "2**63-1")


def check_progress(progress: Any, shown: str = "progress(done, total, ...)") -> Any:
    """A progress callback checked before any work: None, or a callable that takes the three
    arguments every run passes, progress(done, total, what) (a callable of another arity
    would fail only mid-run, with a TypeError).  shown: how the message writes the call.  A
    callable with no signature to read (some built-ins) is taken as it is."""
    if progress is None:
        return None
    if not callable(progress):
        raise BattleInputError(f"progress must be a function {shown} or None, got "
                               f"{quoted(progress)}")
    try:
        signature = inspect.signature(progress)
    except (TypeError, ValueError):
        return progress
    try:
        signature.bind(0, 0, "trials")
    except TypeError as exc:
        name = str(getattr(progress, "__qualname__", type(progress).__name__))[:QUOTE_LIMIT]
        raise BattleInputError(
            f"progress must take three arguments, progress(done, total, what); "
            f"{name}{signature} does not ({exc})") from None
    return progress


def make_run(method: Any = "auto", trials: Any = DEFAULT_TRIALS, seed: Any = None,
             progress: Any = None, rounds_distribution: Any = False) -> RunSpec:
    """Check how to compute; `trials` may be an integral float (1e6)."""
    check_progress(progress)
    return RunSpec(
        check_choice("method", method, METHODS),
        check_int("trials", trials, 1, MAX_TRIALS, floats=True),
        check_seed(seed),
        progress,
        check_flag("rounds_distribution", rounds_distribution),
    )


# ---------------------------------------------------------------------------------------------
# Dice battles


@dataclass(frozen=True)
class Retreat:
    """When the attacker withdraws at the end of a round (unset: never): after round `after`,
    with `when_left` or fewer of its units left, once only aircraft are left (`only_air`, land
    battles), once its exact chance of winning is below `below`, or once the defender has
    `strafe` or fewer units left; or `optimal`: wherever withdrawing is worth more than
    fighting on, by the battle's objective (Battle.objective), found by backward induction."""

    after: int | None = None
    when_left: int | None = None
    only_air: bool = False
    below: float | None = None
    strafe: int | None = None
    optimal: bool = False

    def __bool__(self) -> bool:
        return self.optimal or any(
            v is not None and v is not False
            for v in (self.after, self.when_left, self.only_air, self.below, self.strafe))


SEA_OBJECTIVES = ("tuv", "win")
FIXED_RETREATS = ("retreat_after", "retreat_when_left", "retreat_when_only_air", "retreat_below",
                  "strafe")


@dataclass(frozen=True)
class Objective:
    """What the decisions of a battle are taken for, from the attacker's side (the defender's
    choices work against it): ``tuv``, the expected TUV swing (the defender's IPC lost less
    the attacker's); ``win``, the chance that the attacker wins; ``takes``, the chance that it
    takes the territory (land); ``value``, the TUV swing plus `territory_value` IPC counted
    when the territory is taken (land)."""

    name: str = "tuv"
    territory_value: int = 0

    def coefficients(self) -> tuple[float, float, float]:
        """(weight of the TUV swing, of a win, of a win that takes the territory): the
        objective of a battle's end (kernels/exact/sweep._end_value)."""
        return {"tuv": (1.0, 0.0, 0.0), "win": (0.0, 1.0, 0.0), "takes": (0.0, 0.0, 1.0),
                "value": (1.0, 0.0, float(self.territory_value))}[self.name]

    def of(self, result) -> float:
        """The objective of a result (any object with tuv_swing, attacker_win and
        takes_territory)."""
        if self.name == "win":
            return result.attacker_win
        if self.name == "takes":
            return result.takes_territory
        swing = result.tuv_swing
        return swing + self.territory_value * result.takes_territory if self.name == "value" \
            else swing

    def describe(self) -> str:
        return {"tuv": "expected TUV swing", "win": "chance of winning",
                "takes": "chance of taking the territory",
                "value": f"TUV swing + {self.territory_value} IPC if the territory is taken"}[
                    self.name]


def check_objective(optimize: Any, territory_value: Any, sea: bool,
                    decides: bool) -> Objective | None:
    """The Objective of simulate's optimize and territory_value (None: not given, "tuv"
    where a decision is solved), or None where the battle decides nothing (decides False: no
    optimal retreat, submerging, scramble or kamikaze); BattleInputError where they cannot
    apply."""
    value = 0 if territory_value is None else check_int("territory_value", territory_value, 0,
                                                        MAX_TERRITORY_VALUE)
    if optimize is not None:
        check_choice("optimize", optimize, OBJECTIVES)
    if not decides:
        if optimize is not None:
            raise BattleInputError("optimize must come with a decision to solve (retreat_policy "
                                   "optimal, optimal submerging, scramble_from, kamikaze): "
                                   "nothing is decided here")
        if value:
            raise BattleInputError("territory_value must come with optimize value and a "
                                   "decision to solve (retreat_policy optimal)")
        return None
    name = optimize or "tuv"
    if sea and name not in SEA_OBJECTIVES:
        raise BattleInputError(f"optimize must be {' or '.join(SEA_OBJECTIVES)} at sea (a sea "
                               f"zone is never taken), got {quoted(name)}")
    if value and name != "value":
        raise BattleInputError("optimize must be value for territory_value to count")
    return Objective(name, value)


def check_retreat(retreat: Mapping | Retreat | None, sea: bool, attacker_size: int,
                  defender_size: int) -> Retreat:
    """A Retreat from ``{after, when_left, only_air, below, strafe, optimal}`` (None:
    unset)."""
    if type(retreat) is dict and retreat.get("after") is None \
            and retreat.get("when_left") is None and retreat.get("only_air") is False \
            and retreat.get("below") is None and retreat.get("strafe") is None \
            and retreat.get("optimal") is False \
            and len(retreat) == len(_RETREAT_FIELDS) and set(retreat) == _RETREAT_FIELDS:
        return _NO_RETREAT  # (no policy: the common case, without the checks below)
    if isinstance(retreat, Retreat):
        retreat = asdict(retreat)
    if retreat is not None and not isinstance(retreat, Mapping):
        raise BattleInputError(f"retreat must be a mapping, got {quoted(retreat)}")
    policy = {k: v for k, v in (retreat or {}).items() if v is not None}
    unknown = sorted(map(str, set(policy) - {f.name for f in fields(Retreat)}))
    if unknown:
        raise BattleInputError(f"unknown retreat options: {quoted(', '.join(unknown))}")
    only_air = check_flag("retreat_when_only_air", policy.get("only_air", False))
    if sea and only_air:
        raise BattleInputError("retreat_when_only_air applies to land battles")
    after, left, strafe = (
        None if policy.get(key) is None else check_int(label, policy[key], lo, hi)
        for key, label, lo, hi in (("after", "retreat_after", 1, MAX_RETREAT_ROUND),
                                   ("when_left", "retreat_when_left", 0, None),
                                   ("strafe", "strafe", 0, None)))
    below = policy.get("below")
    if below is not None:
        if is_bool(below) or not isinstance(below, numbers.Real) or not 0 < below <= 1:
            raise BattleInputError(
                f"retreat_below must be a probability in (0, 1], got {quoted(below)}")
        if after:
            raise BattleInputError("retreat_below cannot be combined with retreat_after")
    optimal = check_flag("optimal retreat", policy.get("optimal", False))
    if optimal and (after is not None or left is not None or only_air or below is not None
                    or strafe is not None):
        raise BattleInputError(
            "retreat_policy optimal decides every retreat: it cannot be combined with "
            "retreat_after, retreat_when_left, retreat_when_only_air, retreat_below or strafe")
    return Retreat(after, None if left is None else min(left, attacker_size), only_air,
                   None if below is None else float(below),
                   None if strafe is None else min(strafe, defender_size), optimal)


@dataclass(frozen=True)
class Battle:
    """A checked dice battle: armies as {canonical unit: count} in the edition's unit order
    (``attacker`` = ``overland`` + ``landing``), rules with each side's techs applied, orders
    of losses, submerge policies (sea battles) and the attacker's retreat policy."""

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
    retreat: Retreat = field(default_factory=Retreat)
    dice: str = "standard"  # DICE_MODELS
    start: Start = field(default_factory=lambda: START)
    # what the decisions solved are taken for (None: the battle decides nothing)
    objective: Objective | None = None
    # the defender's reactions before a sea battle (scramble, kamikaze: battlecalc.reactions
    # solves them), and the kamikaze strikes of a battle after them (the attacker's start law)
    reactions: Reactions = NO_REACTIONS
    kamikaze_struck: tuple = ()


@dataclass(frozen=True)
class Start:
    """Where a battle starts: the round it is in (1: the battle's start) and where in that
    round, as a save in progress stands (docs/in-progress.md, tests/references/start_reference.py).

    step: the step to come (LAND_STEPS / SEA_STEPS; "start": the start of the round);
    hits_on_attacker / hits_on_defender: hits rolled at that side and not yet taken (general
    hits, which may land on any unit the firing units may hit); bombard_hits: round 1's
    bombardment hits carried into the attacker's general fire (editions whose bombardment
    casualties fire back); attacker_waiting / defender_waiting: units chosen as casualties,
    not yet removed (they still fire where the rules let them).  The armies of the battle are
    the units standing: in the battle, not chosen.  Losses count from the start (standing +
    waiting); rounds from round 1."""

    round: int = 1
    step: str = "start"
    hits_on_attacker: int = 0
    hits_on_defender: int = 0
    bombard_hits: int = 0
    attacker_waiting: tuple[tuple[str, int], ...] = ()
    defender_waiting: tuple[tuple[str, int], ...] = ()

    def __bool__(self) -> bool:
        """Whether the battle starts anywhere but at its very start."""
        return self != START

    @property
    def in_round_one(self) -> bool:
        """Round 1 with its first-round fire (AA, bombardment) still to come, or under way."""
        return self.round == 1 and self.step in ROUND_ONE_STEPS

    def keywords(self) -> dict[str, Any]:
        """simulate's start keywords of this start (those not at their defaults)."""
        out: dict[str, Any] = {"start_round": self.round}
        if self.step != "start":
            out["start_step"] = self.step
        for name in ("hits_on_attacker", "hits_on_defender", "bombard_hits"):
            if getattr(self, name):
                out[name] = getattr(self, name)
        for name in ("attacker_waiting", "defender_waiting"):
            if getattr(self, name):
                out[name] = dict(getattr(self, name))
        return out

    def text(self) -> str:
        """How the start reads ("round 2", "round 1, defender_fire, 1 hit on the defender")."""
        parts = [f"round {self.round}"]
        if self.step != "start":
            parts.append(self.step)
        for count, what in ((self.hits_on_attacker, "on the attacker"),
                            (self.hits_on_defender, "on the defender"),
                            (self.bombard_hits, "of bombardment")):
            if count:
                parts.append(f"{count} hit{'' if count == 1 else 's'} {what} to take")
        for waiting, side in ((self.attacker_waiting, "attacker"),
                              (self.defender_waiting, "defender")):
            if waiting:
                parts.append(f"{side} casualties chosen: {format_army(dict(waiting))}")
        return ", ".join(parts)


START = Start()
# the steps of round 1 before or in its first-round fire: AA, bombardment (land)
ROUND_ONE_STEPS = ("start", "aa_fire", "aa_casualties", "bombard_fire", "bombard_casualties")
# where each pending figure may stand
_HITS_AT = {
    "hits_on_attacker": {"land": ("aa_casualties", "general_casualties"),
                         "sea": ("strike_casualties", "general_casualties")},
    "hits_on_defender": {"land": ("bombard_casualties", "defender_fire", "general_casualties"),
                         "sea": ("defender_strike", "strike_casualties", "defender_fire",
                                 "general_casualties")},
    "attacker_waiting": {"land": ("bombard_fire", "bombard_casualties", "attacker_fire",
                                  "defender_fire", "general_casualties", "end_of_round"),
                         "sea": ("attacker_fire", "defender_fire", "general_casualties",
                                 "end_of_round")},
    "defender_waiting": {"land": ("attacker_fire", "defender_fire", "general_casualties",
                                  "end_of_round"),
                         "sea": ("strike_casualties", "attacker_fire", "defender_fire",
                                 "general_casualties", "end_of_round")},
}


def _plus(army: dict[str, int], waiting: tuple[tuple[str, int], ...]) -> dict[str, int]:
    if not waiting:
        return army  # (read only: the checks)
    out = dict(army)
    for name, count in waiting:
        out[name] = out.get(name, 0) + count
    return out


def check_start(ruleset: Ruleset, sea: bool, amphibious: bool, start_round: Any,
                start_step: Any, hits_on_attacker: Any, hits_on_defender: Any,
                bombard_hits: Any, attacker_waiting: Army, defender_waiting: Army) -> Start:
    """The battle's Start, checked: a step of its kind, round-1 steps in round 1 only, pending
    hits and chosen casualties only at the steps that have them.  Each error names the
    step."""
    if (start_round.__class__ is int and start_round == 1 and start_step == "start"
            and hits_on_attacker.__class__ is int and hits_on_attacker == 0
            and hits_on_defender.__class__ is int and hits_on_defender == 0
            and bombard_hits.__class__ is int and bombard_hits == 0
            and attacker_waiting is None and defender_waiting is None):
        return START  # (the common case, without the checks below: a batch's cost)
    round_ = check_int("start_round", start_round, 1, 1000)
    step = check_choice("start_step", read_choice("start_step", start_step, START_STEPS)
                        if isinstance(start_step, str) else start_step, START_STEPS)
    kind = "sea" if sea else "land"
    steps = SEA_STEPS if sea else LAND_STEPS
    if step not in steps:
        raise BattleInputError(f"start_step {step} is not a step of a {kind} battle (its "
                               f"steps: {', '.join(steps)})")
    if step in ROUND_ONE_STEPS[1:] and round_ != 1:
        raise BattleInputError(f"start_step {step} comes in round 1 only, not in round "
                               f"{round_}")
    if step == "bombard_casualties" and not amphibious:
        raise BattleInputError(f"start_step {step}: the bombardment of an amphibious assault "
                               "(--landing); this battle has none")
    values = {"hits_on_attacker": check_int("hits_on_attacker", hits_on_attacker, 0, 1000),
              "hits_on_defender": check_int("hits_on_defender", hits_on_defender, 0, 1000)}
    bombard = check_int("bombard_hits", bombard_hits, 0, 1000)
    waiting = {"attacker_waiting": army_counts(attacker_waiting, ruleset, "attacker"),
               "defender_waiting": army_counts(defender_waiting, ruleset, "defender")}
    for name, value in (*values.items(), *waiting.items()):
        if value and step not in _HITS_AT[name][kind]:
            raise BattleInputError(
                f"{name} at start_step {step}: a {kind} battle has them only at "
                f"{', '.join(_HITS_AT[name][kind])}")
    if bombard:
        if not ruleset.flags["bombard_return_fire"] or round_ != 1 \
                or step not in ("attacker_fire", "defender_fire"):
            raise BattleInputError(
                "bombard_hits: round 1's bombardment hits carried into the attacker's fire "
                "(at start_step attacker_fire or defender_fire of round 1, in an edition "
                "whose bombardment casualties fire back)")
    for name, army in waiting.items():
        for unit in army:
            if not ruleset.units[unit].can_be_casualty:
                raise BattleInputError(f"{name}: {unit} is never a casualty")
    return Start(round_, step, values["hits_on_attacker"], values["hits_on_defender"],
                 bombard, tuple(waiting["attacker_waiting"].items()),
                 tuple(waiting["defender_waiting"].items()))


def _check_amphibious(ruleset: Ruleset, a_rules: Ruleset, sea: bool, landing: dict[str, int],
                      bombard: dict[str, int]) -> None:
    if sea and (landing or bombard):
        raise BattleInputError(
            "--landing and --bombard belong to amphibious assaults (land battles), "
            "not to sea battles")
    for name in landing:
        unit = a_rules.units[name]
        if not unit.is_land or not unit.can_attack:
            raise BattleInputError(
                f"{name} cannot land from a transport: --landing takes land units that attack")
    if bombard and not landing:
        raise BattleInputError(
            "--bombard needs --landing: ships bombard only to support an amphibious assault")
    for name in bombard:
        if not a_rules.units[name].bombard:
            enabling = [t for t, tech in ruleset.techs.items()
                        if tech.changes.get(name, {}).get("bombard")]
            hint = f" (needs the {enabling[0]} technology)" if enabling else ""
            raise BattleInputError(f"{name} cannot bombard in {ruleset.id}{hint}")


def _check_domains(ruleset: Ruleset, a_rules: Ruleset, sea: bool, a_army: dict[str, int],
                   d_army: dict[str, int]) -> None:
    for side, army in (("attacker", a_army), ("defender", d_army)):
        _check_domain(ruleset, sea, side, army)
    _check_attacks(a_rules, a_army)


def _check_domain(ruleset: Ruleset, sea: bool, side: str, army: dict[str, int]) -> None:
    if not army:
        raise BattleInputError(f"the {side} has no units")
    for name in army:
        domain = ruleset.units[name].domain
        if sea and domain == "land":
            raise BattleInputError(
                f"{name} is a land unit and cannot be in a sea battle ({side})")
        if not sea and domain == "sea":
            raise BattleInputError(
                f"{name} is a sea unit and cannot be in a land battle ({side}); "
                "use --sea for a sea battle")


def _check_attacks(a_rules: Ruleset, a_army: dict[str, int]) -> None:
    for name in a_army:
        if not a_rules.units[name].can_attack:
            raise BattleInputError(f"{name} cannot attack (it only defends)")


def make_battle(rules: str | Ruleset, attacker: Army, defender: Army, sea: bool = False,
                attacker_tech: Techs = None, defender_tech: Techs = None,
                attacker_submerge: str = "never", defender_submerge: str = "never",
                landing: Army = None, bombard: Army = None, attacker_ool: Order = None,
                defender_ool: Order = None, keep_land: int = 0, aa_last: bool = False,
                retreat: Mapping | Retreat | None = None, dice: str = "standard",
                start_round: int = 1, start_step: str = "start", hits_on_attacker: int = 0,
                hits_on_defender: int = 0, bombard_hits: int = 0,
                attacker_waiting: Army = None, defender_waiting: Army = None,
                optimize: str | None = None, territory_value: int | None = None,
                scramble_from: Army = None, scramble: Army = None, kamikaze: int | None = None,
                kamikaze_targets: Any = None) -> Battle:
    """Parse and validate a battle; raise BattleInputError with a clear message if it is not one.

    rules: an edition id, a Ruleset or the path of an edition file.  An amphibious assault is a
    land battle with `landing` (land units from transports, on top of the overland `attacker`)
    and optionally `bombard` (ships bombarding in round 1).  dice: "standard" or "low_luck"
    ("low-luck" too).  start_round .. defender_waiting: where the battle starts (Start).
    """
    ruleset = load_rules(rules)
    dice = check_choice("dice", dice.replace("-", "_") if isinstance(dice, str) else dice,
                        DICE_MODELS)
    sea = check_flag("sea", sea)
    a_tech = check_techs(attacker_tech, "attacker")
    d_tech = check_techs(defender_tech, "defender")
    a_rules, d_rules = ruleset.with_techs(a_tech), ruleset.with_techs(d_tech)
    overland = army_counts(attacker, ruleset, "attacker")
    d_army = army_counts(defender, ruleset, "defender")
    landing_army = army_counts(landing, ruleset, "landing")
    bombard_army = army_counts(bombard, ruleset, "bombard")
    _check_amphibious(ruleset, a_rules, sea, landing_army, bombard_army)
    if landing_army:
        a_army = {n: overland.get(n, 0) + landing_army.get(n, 0) for n in ruleset.units
                  if overland.get(n, 0) + landing_army.get(n, 0)}
    else:  # (the same dict: army_counts gives units of counts > 0, in the edition's order)
        a_army = dict(overland)
    start = check_start(ruleset, sea, bool(landing_army), start_round, start_step,
                        hits_on_attacker, hits_on_defender, bombard_hits, attacker_waiting,
                        defender_waiting)
    # (the units in the battle: standing, and chosen as casualties where it starts in a round)
    _check_domains(ruleset, a_rules, sea, _plus(a_army, start.attacker_waiting),
                   _plus(d_army, start.defender_waiting))
    a_submerge = check_choice("attacker_submerge", attacker_submerge, SUBMERGE_POLICIES)
    d_submerge = check_choice("defender_submerge", defender_submerge, SUBMERGE_POLICIES)
    if not sea and (a_submerge != "never" or d_submerge != "never"):
        raise BattleInputError("submerge policies apply to sea battles only (--sea)")
    if (a_submerge != "never" or d_submerge != "never") \
            and ruleset.flags["submerge_timing"] == "never":
        raise BattleInputError(f"submarines never submerge in {ruleset.id}: "
                               "use the submerge policy never")
    keep_land = check_int("keep_land", keep_land, 0)
    if keep_land:
        land_units = sum(n for u, n in a_army.items() if ruleset.units[u].is_land)
        if sea:
            raise BattleInputError("keep_land applies to land battles, not to sea battles")
        if keep_land > land_units:
            raise BattleInputError(
                f"keep_land {quoted(keep_land)} is more than the attacker's {land_units} land "
                "units")
    if check_flag("aa_last", aa_last):
        if not any(u.is_aa and u.can_be_casualty for u in ruleset.units.values()):
            raise BattleInputError(f"aa_last: AA guns are never casualties in {ruleset.id}")
        if sea:
            raise BattleInputError("aa_last applies to land battles")
    subs = {side: any(ruleset.units[u].submarine for u in army)
            for side, army in (("attacker", a_army), ("defender", d_army))}
    attacker_order = parse_loss_order(check_order(attacker_ool, "attacker_ool"), ruleset,
                                      "attack", keep_land=keep_land)
    defender_order = parse_loss_order(check_order(defender_ool, "defender_ool"), ruleset,
                                      "defense", aa_last=bool(aa_last))
    retreat = check_retreat(retreat, sea, sum(a_army.values()), sum(d_army.values()))
    reactions = check_reactions(ruleset, sea, a_army, scramble_from, scramble, kamikaze,
                                kamikaze_targets, army_counts)
    submerging = "optimal" in (a_submerge, d_submerge)
    if submerging and retreat and not retreat.optimal:
        raise BattleInputError(
            "optimal submerging is solved with the attacker's retreat optimal (retreat_policy "
            "optimal) or none: it cannot be combined with retreat_after, retreat_when_left, "
            "retreat_below or strafe")
    goal = check_objective(optimize, territory_value, sea,
                           retreat.optimal or submerging or bool(reactions))
    if retreat and landing_army and not _may_withdraw(ruleset, a_army, overland):
        _warn(_NO_AMPHIBIOUS_RETREAT[ruleset.flags["amphibious_retreat"]].format(
            edition=ruleset.id))
        if not retreat.optimal:  # (an optimal one finds no decision: fought to the end)
            retreat = Retreat()  # it can never happen: the battle is fought to the end
    for side, techs, army, role in (("attacker", a_tech, {**a_army, **bombard_army}, "attack"),
                                    ("defender", d_tech, d_army, "defense")):
        for tech in techs:
            if not tech_affects(ruleset, tech, army, role):
                _warn(f"{side} technology {tech} changes nothing here: it changes no unit "
                      f"the {side} has, in its role")
    if start and retreat.after is not None and retreat.after < start.round:
        # (a battle that starts in round N fights round N before its first retreat point)
        _warn(f"retreat_after {retreat.after}: the battle starts in round {start.round}, so "
              f"the attacker retreats at the end of round {start.round}")
    return Battle(ruleset, a_rules, d_rules, a_army, d_army, sea, a_tech, d_tech,
                  a_submerge, d_submerge, landing_army, bombard_army, overland,
                  attacker_order.with_enemy_subs(subs["defender"]),
                  defender_order.with_enemy_subs(subs["attacker"]), retreat, dice, start,
                  goal, reactions)


@dataclass(frozen=True, eq=False)
class BattleForm:
    """What make_battle checks of a battle apart from its armies: the battles of a batch
    (battlecalc.batch) that differ only in their armies are checked through one form, each
    battle's armies alone.  Only for battles without an amphibious assault, technologies,
    keep_land or retreat_below, whose other checks never read the armies (battle_form; a
    retreat policy reads only the armies' sizes)."""

    rules: Ruleset
    sea: bool
    attacker_submerge: str
    defender_submerge: str
    attacker_order: LossOrder  # (before with_enemy_subs: battle() sets it)
    defender_order: LossOrder
    dice: str
    retreat: Mapping | None = None  # check_retreat's policy (checked), None: no retreat

    def __post_init__(self):
        orders = {(role, subs): order.with_enemy_subs(subs)
                  for role, order in (("attack", self.attacker_order),
                                      ("defense", self.defender_order))
                  for subs in (False, True)}
        object.__setattr__(self, "_orders", orders)
        object.__setattr__(self, "_retreats", {})  # (attacker size, defender size) -> Retreat

    def _retreat(self, a_army: dict[str, int], d_army: dict[str, int]) -> Retreat:
        if self.retreat is None:
            return _NO_RETREAT
        sizes = (sum(a_army.values()), sum(d_army.values()))
        found = self._retreats.get(sizes)
        if found is None:  # (its thresholds clamped to the armies' sizes)
            found = self._retreats[sizes] = check_retreat(self.retreat, self.sea, *sizes)
        return found

    def army(self, value: Army, side: str) -> tuple[dict[str, int], bool]:
        """A side's army as make_battle checks it (army_counts, then _check_domains' checks
        of that side), and whether it has submarines."""
        counts = army_counts(value, self.rules, side)
        _check_domain(self.rules, self.sea, side, counts)
        if side == "attacker":
            _check_attacks(self.rules, counts)
        units = self.rules.units
        return counts, any(units[name].submarine for name in counts)

    def battle(self, attacker: tuple[dict[str, int], bool],
               defender: tuple[dict[str, int], bool]) -> Battle:
        """The Battle make_battle makes of the form's arguments and these armies (each as
        army() gives it): equal to it in every field."""
        (a_army, a_subs), (d_army, d_subs) = attacker, defender
        return _battle_of((self.rules, self.rules, self.rules, a_army, d_army, self.sea, (), (),
                           self.attacker_submerge, self.defender_submerge, {}, {}, a_army,
                           self._orders["attack", d_subs], self._orders["defense", a_subs],
                           self._retreat(a_army, d_army), self.dice, START, None, NO_REACTIONS,
                           ()))


_BATTLE_FIELDS = tuple(f.name for f in fields(Battle))


def _battle_of(values: tuple) -> Battle:
    """Battle(*values), every field given in order, without the frozen dataclass's __init__
    (which sets a field at a time through object.__setattr__: 2 us of a small battle's 65 in
    solve_many); the same object, field for field."""
    battle = object.__new__(Battle)
    vars(battle).update(zip(_BATTLE_FIELDS, values, strict=True))
    return battle


_NO_RETREAT = Retreat()
_RETREAT_FIELDS = frozenset(f.name for f in fields(Retreat))


def battle_form(args: Mapping[str, Any]) -> tuple[BattleForm, RunSpec] | None:
    """The BattleForm and RunSpec of simulate_spec's arguments (their attacker and defender
    aside), or None where no form stands for them: a formula edition, a battle that starts
    where it stands (start_round, start_step, hits, waiting casualties), an amphibious assault
    (landing, bombard), technologies, keep_land, retreat_below, or other arguments that
    make_battle refuses (simulate_spec then raises, with its message), or decisions to solve
    (retreat_policy, optimize, territory_value, scramble, kamikaze)."""
    try:
        if args["formula_options"]:
            return None
        run = make_run(args["method"], args["trials"], args["seed"], args["progress"],
                       args["rounds_distribution"])
        ruleset = load_rules(args["rules"])
        if ruleset.model == "formula" or args["landing"] is not None \
                or args["bombard"] is not None:
            return None
        dice = args["dice"]
        dice = check_choice("dice", dice.replace("-", "_") if isinstance(dice, str) else dice,
                            DICE_MODELS)
        sea = check_flag("sea", args["sea"])
        if check_start(ruleset, sea, False, args["start_round"], args["start_step"],
                       args["hits_on_attacker"], args["hits_on_defender"], args["bombard_hits"],
                       args["attacker_waiting"], args["defender_waiting"]) is not START:
            return None  # a battle from where it stands (make_battle's every check)
        if check_techs(args["attacker_tech"], "attacker") \
                or check_techs(args["defender_tech"], "defender"):
            return None
        a_submerge = check_choice("attacker_submerge", args["attacker_submerge"],
                                  SUBMERGE_POLICIES)
        d_submerge = check_choice("defender_submerge", args["defender_submerge"],
                                  SUBMERGE_POLICIES)
        if (a_submerge != "never" or d_submerge != "never") and (
                not sea or ruleset.flags["submerge_timing"] == "never"):
            return None
        if "optimal" in (a_submerge, d_submerge):
            return None  # decisions solved
        if check_int("keep_land", args["keep_land"], 0):
            return None
        aa_last = check_flag("aa_last", args["aa_last"])
        if aa_last and (sea or not any(u.is_aa and u.can_be_casualty
                                       for u in ruleset.units.values())):
            return None
        policy = {"after": args["retreat_after"], "when_left": args["retreat_when_left"],
                  "only_air": args["retreat_when_only_air"], "below": args["retreat_below"],
                  "strafe": args["strafe"]}
        retreat = check_retreat(policy, sea, 0, 0)  # (its checks; sizes only clamp it)
        if retreat.below is not None:
            return None
        if any(args[name] is not None for name in (
                "retreat_policy", "optimize", "territory_value", "scramble_from", "scramble",
                "kamikaze", "kamikaze_targets")):
            return None  # decisions solved: make_battle checks them, api.solve solves them
        attacker_order = parse_loss_order(check_order(args["attacker_ool"], "attacker_ool"),
                                          ruleset, "attack", keep_land=0)
        defender_order = parse_loss_order(check_order(args["defender_ool"], "defender_ool"),
                                          ruleset, "defense", aa_last=aa_last)
    except BattleInputError:
        return None
    return BattleForm(ruleset, sea, a_submerge, d_submerge, attacker_order, defender_order,
                      dice, policy if retreat else None), run


_warnings_issued = [0]  # BattleInputWarnings make_battle has issued (see spec_key)


def _warn(message: str) -> None:
    _warnings_issued[0] += 1
    warn_input(message, stacklevel=3)


def warnings_issued() -> int:
    """How many BattleInputWarnings make_battle has issued in this process: a caller that
    keeps a battle for later (api's plans) keeps only one whose checking warned of nothing."""
    return _warnings_issued[0]


_NO_AMPHIBIOUS_RETREAT = {
    "none": "the retreat policy is ignored: no attacker retreats from an amphibious assault "
            "in {edition} (the battle is fought to the end)",
    "air_only": "the retreat policy is ignored: only aircraft may retreat from an amphibious "
                "assault in {edition}, and the attacker has none (the battle is fought to "
                "the end)",
    "air_and_overland": "the retreat policy is ignored: units landed from transports never "
                        "retreat, and the attacker has no aircraft nor units that came "
                        "overland (the battle is fought to the end)",
}


def _may_withdraw(ruleset: Ruleset, attacker: dict[str, int], overland: dict[str, int]) -> bool:
    """Whether any attacker unit of an amphibious assault may retreat (compile._may_withdraw
    per state; the flag amphibious_retreat)."""
    flag = ruleset.flags["amphibious_retreat"]
    air = any(ruleset.units[name].is_air for name in attacker)
    return (flag != "none" and air) or (flag == "air_and_overland" and any(
        overland.get(name) and not ruleset.units[name].is_air for name in attacker))


# ---------------------------------------------------------------------------------------------
# Formula battles


@dataclass(frozen=True)
class FormulaSpec:
    """A checked formula battle (battlecalc.formula compiles and solves it): armies as
    {canonical unit: count}, military levels, counter points, hatred, loss multiplier, flip
    rule, and exchanges (a number, or UNTIL_DONE with at most exchange_cap of them)."""

    ruleset: Ruleset
    attacker: dict[str, int]
    defender: dict[str, int]
    attacker_level: int = 1
    defender_level: int = 1
    counter: int = 0
    hatred: bool = False
    loss_multiplier: int = 1
    flips: str = "A2"
    exchanges: int | str = 1
    exchange_cap: int = DEFAULT_EXCHANGE_CAP

    @property
    def max_exchanges(self) -> int:
        """Exchanges to run at most: `exchanges`, or the cap for until-done."""
        return self.exchange_cap if self.exchanges == UNTIL_DONE else self.exchanges


def make_formula_spec(attacker: Army, defender: Army, *, attacker_level: int | None = None,
                      defender_level: int | None = None, counter: int = 0, hatred: bool = False,
                      loss_multiplier: int = 1, exchanges: int | str = 1,
                      exchange_cap: int = DEFAULT_EXCHANGE_CAP, flips: str | None = None,
                      rules: str | Ruleset = "formula") -> FormulaSpec:
    """Check every input of a formula battle; BattleInputError if bad.  A level not given is
    the edition's min_level (1 in the seed game)."""
    ruleset = load_rules(rules)
    if ruleset.model != "formula":
        raise BattleInputError(
            f"{ruleset.id} is not a formula-model edition (model = {ruleset.model!r})")
    lo, hi = ruleset.formula["min_level"], ruleset.formula["max_level"]
    if isinstance(exchanges, str):  # "3" or "until-done" from a command line
        text = exchanges
        try:
            exchanges = read(option("exchanges"), text)
        except BattleInputError:
            exchanges = None
        if exchanges is None:
            raise BattleInputError(
                f"exchanges must be a number 1..{MAX_EXCHANGES} or {UNTIL_DONE!r}, "
                f"got {quoted(text)}")
    if exchanges != UNTIL_DONE:
        exchanges = check_int("exchanges", exchanges, 1, MAX_EXCHANGES)
    armies = {side: army_counts(army, ruleset, side)
              for side, army in (("attacker", attacker), ("defender", defender))}
    for side, army in armies.items():
        if not any(army.get(up) for up, _ in ruleset.formula["piece_types"]):
            raise BattleInputError(
                f"the {side} needs at least one face-up piece to fight "
                f"(got {format_army(army)}; flipped pieces do not count in the formula)")
    return FormulaSpec(
        ruleset, armies["attacker"], armies["defender"],
        check_int("attacker_level", lo if attacker_level is None else attacker_level, lo, hi),
        check_int("defender_level", lo if defender_level is None else defender_level, lo, hi),
        check_int("counter", counter, 0, MAX_COUNTER),
        check_flag("hatred", hatred),
        check_int("loss_multiplier", loss_multiplier, 1, MAX_LOSS_MULTIPLIER),
        check_choice("flips", ruleset.flags["formula_flips"] if flips is None else flips,
                     FLIP_RULES),
        exchanges,
        check_int("exchange_cap", exchange_cap, 1, MAX_EXCHANGES),
    )


# ---------------------------------------------------------------------------------------------
# simulate's arguments


def _given(value: Any, default: Any) -> bool:
    """Whether a dice-only argument is set (None, False, 0, "" and its default are not)."""
    if isinstance(value, (str, numbers.Integral, list, tuple, dict)) or is_bool(value):
        return bool(value) and value != default
    return value is not None


# simulate's other spellings of two decision keywords (the decisions issue's: retreat="optimal",
# objective="win")
KEYWORD_SPELLINGS = {"retreat": "retreat_policy", "objective": "optimize"}


def _spelled(args: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """simulate's arguments with KEYWORD_SPELLINGS' keywords under their own names."""
    options = dict(args["formula_options"])
    args = dict(args)
    for spelling, name in KEYWORD_SPELLINGS.items():
        if spelling in options:
            if args[name] is not None:
                raise BattleInputError(f"give {name} or {spelling}, not both")
            args[name] = options.pop(spelling)
    args["formula_options"] = options
    return args, options


def simulate_spec(args: Mapping[str, Any]) -> tuple[Battle | FormulaSpec, RunSpec]:
    """Check every argument of :func:`battlecalc.simulate`, given as {parameter: value} (its
    extra keyword arguments under ``formula_options``): the battle, and how to compute it."""
    options = args["formula_options"]
    if not options.keys().isdisjoint(KEYWORD_SPELLINGS):
        args, options = _spelled(args)
    unknown = set(options) - set(FORMULA_OPTIONS)
    if unknown:
        raise TypeError(f"simulate() got unexpected keyword arguments: {sorted(unknown)}")
    run = make_run(args["method"], args["trials"], args["seed"], args["progress"],
                   args["rounds_distribution"])
    ruleset = load_rules(args["rules"])
    if ruleset.model == "formula":
        used = [name for name, default in DICE_ONLY.items() if _given(args[name], default)]
        if used:
            raise BattleInputError(
                f"{', '.join(used)} do not apply to the {ruleset.id} edition (formula combat)")
        return make_formula_spec(args["attacker"], args["defender"], rules=ruleset,
                                 **{k: v for k, v in options.items() if v is not None}), run
    given = [k for k, v in options.items() if v is not None]
    if given:
        raise BattleInputError(
            f"{', '.join(given)} apply to formula-combat editions only, not to {ruleset.id}")
    retreat = {"after": args["retreat_after"], "when_left": args["retreat_when_left"],
               "only_air": args["retreat_when_only_air"], "below": args["retreat_below"],
               "strafe": args["strafe"],
               "optimal": check_retreat_policy(args["retreat_policy"]) == "optimal"}
    return make_battle(ruleset, **{name: args[name] for name in _BATTLE_ARGUMENTS},
                       retreat=retreat), run


# make_battle's arguments among simulate's (the retreat options come as one policy)
_BATTLE_ARGUMENTS = ("attacker", "defender", *(
    name for name in DICE_ONLY if name.split("_")[0] not in ("retreat", "strafe")))


def check_retreat_policy(value: Any) -> str | None:
    """simulate's retreat_policy: None (the fixed conditions, if any) or "optimal"."""
    return None if value is None else check_choice("retreat_policy", value, RETREAT_POLICIES)


PLAIN_TYPES = frozenset((str, int, float, bool, type(None)))


def _plain_key(value: Any) -> Any:
    """A value not of one of the PLAIN_TYPES as part of a hashable key, or _UNKEYED where it
    has none (numpy numbers, callables, other mappings ...)."""
    kind = type(value)
    if kind is dict:
        if all(type(k) is str and type(v) is int for k, v in value.items()):
            return tuple(value.items())
    elif kind in (list, tuple) and all(type(v) is str for v in value):
        return tuple(value)
    return _UNKEYED


_UNKEYED = object()


def spec_key(args: Mapping[str, Any]) -> tuple | None:
    """A hashable key of :func:`simulate_spec`'s arguments that gives the same battle and run
    spec whenever it is equal, or None: for plain data only (text, whole numbers, floats,
    bools, None, {unit: count} dicts, lists of names), a shipped edition's id as `rules`, no
    progress hook and no formula options (a caller may keep what simulate_spec returned for
    such a key: battlecalc.api's plans).  Each value's type is part of the key: True and 1,
    1 and 1.0 stay apart.  Where every argument of USUAL_DEFAULTS is at its default, they are
    left out (a key that has them is longer: never equal to one that has not)."""
    if args["progress"] is not None or args["formula_options"]:
        return None
    rules = args["rules"]
    if type(rules) is not str or rules not in _shipped_editions():
        return None  # a path names a file that may change
    usual = _usual(args)
    names = tuple(name for name in args
                  if name != "formula_options" and not (usual and name in USUAL_DEFAULTS))
    values = [args[name] for name in names]
    kinds = tuple(map(type, values))
    if not PLAIN_TYPES.issuperset(kinds):
        for i, kind in enumerate(kinds):
            if kind not in PLAIN_TYPES:
                values[i] = _plain_key(values[i])
                if values[i] is _UNKEYED:
                    return None
    typed = _typed_positions(names)
    return (tuple(kinds[i] for i in typed), tuple(values))


# simulate's arguments that are text wherever a key is kept (a shipped edition's id, choices
# of text): no value of another type equals one, so their types are not in spec_key's key
UNTYPED_KEYS = frozenset({"rules", "method", "progress", "attacker_submerge",
                          "defender_submerge", "dice", "start_step"})

# simulate's last arguments (its signature ends with them, in this order), which most calls
# leave at their defaults: a sequence of battles, a battle in progress, the decisions solved
# and the defender's reactions.  spec_key's key leaves them out where each is at its default,
# of the default's type (start_round=True is not 1), which simulate tests in less time than
# it takes to type and hash them (a tiny kept battle's call costs a few microseconds).
USUAL_DEFAULTS = {name: next(o.default for o in OPTIONS if o.name == name) for name in (
    "waves", "counterattack", "start_round", "start_step", "hits_on_attacker",
    "hits_on_defender", "bombard_hits", "attacker_waiting", "defender_waiting",
    "retreat_policy", "optimize", "territory_value", "scramble_from", "scramble", "kamikaze",
    "kamikaze_targets")}


def _usual(args: Mapping[str, Any]) -> bool:
    """Whether every argument of USUAL_DEFAULTS is given at its default, of its type."""
    missing = object()
    for name, default in USUAL_DEFAULTS.items():
        value = args.get(name, missing)
        if type(value) is not type(default) or value != default:
            return False
    return True


@functools.lru_cache(maxsize=16)
def _typed_positions(names: tuple[str, ...]) -> tuple[int, ...]:
    return tuple(i for i, name in enumerate(names) if name not in UNTYPED_KEYS)


_shipped: list = []


def _shipped_editions() -> frozenset:
    """The ids of the shipped editions (read once)."""
    if not _shipped:
        _shipped.append(frozenset(list_editions()))
    return _shipped[0]
