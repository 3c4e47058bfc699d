"""Battle specs: every argument of `simulate` checked once, into frozen objects.

A dice battle becomes a :class:`Battle`, a formula battle a :class:`FormulaSpec`, how to compute
either a :class:`RunSpec`.  Light on purpose (no numpy, numba or pandas): the command line
imports the constants below without loading the engine.  A whole number is an int or numpy int,
a flag a bool or numpy bool.  Retreat thresholds above an army's size mean the same as its size
and are clamped to it (``retreat_when_left=10**20``: retreat at the end of round 1).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
import numbers
import secrets
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any, NamedTuple

from . import options as options_module
from .army import MAX_UNITS_PER_TYPE, format_army, parse_army, resolve_unit_name
from .die_law import DieLaw, read_die_law
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


def check_die_law(value: Any, ruleset: Ruleset, dice: str = "standard") -> DieLaw | None:
    """A biased die (battlecalc.die_law: text or a list of the chances of the edition's
    die_size faces, exact, summing to 1) or None; refused with low luck, which has no die law
    (docs/rules.md)."""
    law = read_die_law(value, ruleset.die_size)
    if law is not None and dice == "low_luck":
        raise BattleInputError(
            "die_law cannot be combined with dice low_luck: low luck scores sure hits by the "
            "strength of the fire and rolls the edition's fair die for the rest")
    return law


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
    `strafe` or fewer units left, or once the exact chance that fighting on with no further
    retreat loses every one of its aircraft is above `air_loss` (an attacker with no aircraft
    left never retreats by it; docs/rules.md); or `optimal`: wherever withdrawing is worth
    more than fighting on, by the battle's objective (Battle.objective), found by backward
    induction."""

    after: int | None = None
    when_left: int | None = None
    only_air: bool = False
    below: float | None = None
    strafe: int | None = None
    optimal: bool = False
    air_loss: float | None = None

    def __bool__(self) -> bool:
        if self is _NO_RETREAT:  # (the common case: a battle with no policy)
            return False
        return self.optimal or any(
            v is not None and v is not False
            for v in (self.after, self.when_left, self.only_air, self.below, self.strafe,
                      self.air_loss))


SEA_OBJECTIVES = ("tuv", "win")
FIXED_RETREATS = ("retreat_after", "retreat_when_left", "retreat_when_only_air", "retreat_below",
                  "strafe", "retreat_air_loss")


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
    """A Retreat from ``{after, when_left, only_air, below, strafe, optimal, air_loss}``
    (None: unset)."""
    if type(retreat) is dict and retreat.get("after") is None \
            and retreat.get("when_left") is None and retreat.get("only_air") is False \
            and retreat.get("below") is None and retreat.get("strafe") is None \
            and retreat.get("optimal") is False and retreat.get("air_loss") is None \
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
    air_loss = policy.get("air_loss")
    if air_loss is not None and (is_bool(air_loss) or not isinstance(air_loss, numbers.Real)
                                 or not 0 < air_loss <= 1):
        raise BattleInputError(
            f"retreat_air_loss must be a probability in (0, 1], got {quoted(air_loss)}")
    optimal = check_flag("optimal retreat", policy.get("optimal", False))
    if optimal and (after is not None or left is not None or only_air or below is not None
                    or strafe is not None):
        raise BattleInputError(
            "retreat_policy optimal decides every retreat: it cannot be combined with "
            "retreat_after, retreat_when_left, retreat_when_only_air, retreat_below or strafe")
    if optimal and air_loss is not None:  # (a message of its own: the one above is pinned)
        raise BattleInputError(
            "retreat_policy optimal decides every retreat: it cannot be combined with "
            "retreat_air_loss")
    return Retreat(after, None if left is None else min(left, attacker_size), only_air,
                   None if below is None else float(below),
                   None if strafe is None else min(strafe, defender_size), optimal,
                   None if air_loss is None else float(air_loss))


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
    # options of the table that no check reads (spec.check_option's), carried to the result:
    # ((name, value), ...)
    extras: tuple = ()


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
        return self is not START and self != START

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
                kamikaze_targets: Any = None, die_law: Any = None) -> Battle:
    """Parse and validate a battle; raise BattleInputError with a clear message if it is not one.

    rules: an edition id, a Ruleset or the path of an edition file.  An amphibious assault is a
    land battle with `landing` (land units from transports, on top of the overland `attacker`)
    and optionally `bombard` (ships bombarding in round 1).  dice: "standard" or "low_luck"
    ("low-luck" too); die_law: a biased die (check_die_law).  start_round ..
    defender_waiting: where the battle starts (Start).
    (The options checked once into a BattleForm, then the armies: BattleForm.battle.)
    """
    return BattleForm.of(
        rules, sea, attacker_tech, defender_tech, attacker_submerge, defender_submerge, landing,
        bombard, attacker_ool, defender_ool, keep_land, aa_last, retreat, dice, start_round,
        start_step, hits_on_attacker, hits_on_defender, bombard_hits, attacker_waiting,
        defender_waiting, optimize, territory_value, scramble_from, scramble, kamikaze,
        kamikaze_targets, die_law).battle(attacker, defender)


# make_battle's checks, in order: those before the armies are read, then these (a check of the
# options that fails after ARMIES is raised where make_battle would meet it: BattleForm.deferred)
ARMIES, DOMAINS, KEEP_LAND, REACTIONS = 6, 12, 14, 19


class _Army(NamedTuple):
    """A side's army as a form reads it: its counts (the attacker's with the landing),
    whether it has submarines, the errors of its checks (its units' domain, and the
    attacker's units that cannot attack: raised in make_battle's order by BattleForm.battle,
    of its units in the battle, standing and chosen as casualties) and its land units
    (keep_land's)."""

    counts: dict[str, int]
    subs: bool
    domain_error: BattleInputError | None
    attack_error: BattleInputError | None
    land_units: int


@dataclass(frozen=True, eq=False)
class BattleForm:
    """Everything make_battle checks of a battle but its two armies, checked once: every
    battle is made through a form (make_battle: BattleForm.of(...).battle(attacker,
    defender)), and the battles of a batch that differ only in their armies share one
    (battlecalc.batch), each distinct army read once (army).  `deferred`: the first check
    of the options that failed after make_battle reads the armies ((its place in make_battle's
    order, the error)), raised by battle where make_battle raises it, so that a battle with two
    faults is refused for the one make_battle meets first."""

    rules: Ruleset
    attacker_rules: Ruleset
    defender_rules: Ruleset
    sea: bool
    attacker_tech: tuple[str, ...]
    defender_tech: tuple[str, ...]
    dice: str
    deferred: tuple[int, BattleInputError] | None = None
    landing: dict[str, int] = field(default_factory=dict)
    bombard: dict[str, int] = field(default_factory=dict)
    start: Start = START
    attacker_submerge: str = "never"
    defender_submerge: str = "never"
    keep_land: int = 0
    aa_last: bool = False
    attacker_order: LossOrder | None = None  # (before with_enemy_subs: battle() sets it)
    defender_order: LossOrder | None = None
    retreat: Mapping | None = None  # check_retreat's policy, checked (None: no retreat)
    optimal_retreat: bool = False
    # the reactions' arguments (reactions.check_reactions reads the attacker's army), or None
    reaction_args: tuple | None = None
    objective: Objective | None = None  # (where no reaction is given: found once here)
    optimize: Any = None
    territory_value: Any = None
    extras: tuple = ()  # Battle.extras

    def __post_init__(self):
        object.__setattr__(self, "_orders", {})  # (role, enemy subs) -> LossOrder
        object.__setattr__(self, "_retreats", {})  # (attacker size, defender size) -> Retreat
        object.__setattr__(self, "_armies", {})  # (side, army key) -> _Army

    @classmethod
    def of(cls, rules, sea=False, attacker_tech=None, defender_tech=None,
           attacker_submerge="never", defender_submerge="never", landing=None, bombard=None,
           attacker_ool=None, defender_ool=None, keep_land=0, aa_last=False, retreat=None,
           dice="standard", start_round=1, start_step="start", hits_on_attacker=0,
           hits_on_defender=0, bombard_hits=0, attacker_waiting=None, defender_waiting=None,
           optimize=None, territory_value=None, scramble_from=None, scramble=None,
           kamikaze=None, kamikaze_targets=None, die_law=None) -> BattleForm:
        """The form of make_battle's arguments but the armies (make_battle's)."""
        ruleset = load_rules(rules)
        dice = check_choice("dice", dice.replace("-", "_") if isinstance(dice, str) else dice,
                            DICE_MODELS)
        if die_law is not None:
            # (the battle's rules are the edition played with that die: Ruleset.die)
            ruleset = ruleset.with_die_law(check_die_law(die_law, ruleset, dice))
        elif ruleset.die_law is not None:  # (a Ruleset given with its die)
            check_die_law(ruleset.die_law, ruleset, dice)
        sea = check_flag("sea", sea)
        a_tech = check_techs(attacker_tech, "attacker")
        d_tech = check_techs(defender_tech, "defender")
        a_rules, d_rules = ruleset.with_techs(a_tech), ruleset.with_techs(d_tech)
        form = dict(rules=ruleset, attacker_rules=a_rules, defender_rules=d_rules, sea=sea,
                    attacker_tech=a_tech, defender_tech=d_tech, dice=dice)
        step = 8
        try:
            landing_army = army_counts(landing, ruleset, "landing")
            bombard_army = army_counts(bombard, ruleset, "bombard")
            step = 9
            _check_amphibious(ruleset, a_rules, sea, landing_army, bombard_army)
            form.update(landing=landing_army, bombard=bombard_army)
            step = 11
            start = check_start(ruleset, sea, bool(landing_army), start_round, start_step,
                                hits_on_attacker, hits_on_defender, bombard_hits,
                                attacker_waiting, defender_waiting)
            form["start"] = start
            step = 13
            a_submerge = check_choice("attacker_submerge", attacker_submerge,
                                      SUBMERGE_POLICIES)
            d_submerge = check_choice("defender_submerge", defender_submerge,
                                      SUBMERGE_POLICIES)
            if not sea and (a_submerge != "never" or d_submerge != "never"):
                raise BattleInputError("submerge policies apply to sea battles only (--sea)")
            if (a_submerge != "never" or d_submerge != "never") \
                    and ruleset.flags["submerge_timing"] == "never":
                raise BattleInputError(f"submarines never submerge in {ruleset.id}: "
                                       "use the submerge policy never")
            form.update(attacker_submerge=a_submerge, defender_submerge=d_submerge)
            step = KEEP_LAND
            keep_land = check_int("keep_land", keep_land, 0)
            if keep_land and sea:
                raise BattleInputError("keep_land applies to land battles, not to sea battles")
            form["keep_land"] = keep_land
            step = 15  # (keep_land against the attacker's land units: battle())
            if check_flag("aa_last", aa_last):
                if not any(u.is_aa and u.can_be_casualty for u in ruleset.units.values()):
                    raise BattleInputError(f"aa_last: AA guns are never casualties in "
                                           f"{ruleset.id}")
                if sea:
                    raise BattleInputError("aa_last applies to land battles")
            form["aa_last"] = bool(aa_last)
            step = 17
            form["attacker_order"] = parse_loss_order(
                check_order(attacker_ool, "attacker_ool"), ruleset, "attack",
                keep_land=keep_land)
            form["defender_order"] = parse_loss_order(
                check_order(defender_ool, "defender_ool"), ruleset, "defense",
                aa_last=bool(aa_last))
            step = 18
            policy = check_retreat(retreat, sea, 0, 0)  # (its checks; sizes only clamp it)
            if policy:  # (clamped to the armies' sizes by battle())
                form.update(retreat=asdict(retreat) if isinstance(retreat, Retreat)
                            else dict(retreat), optimal_retreat=policy.optimal)
            step = REACTIONS
            given = (scramble_from, scramble, kamikaze, kamikaze_targets)
            if any(value is not None for value in given):
                form.update(reaction_args=given, optimize=optimize,
                            territory_value=territory_value)
            else:  # (no reactions: what follows them checked here, once)
                step = 20
                form["objective"] = _objective(policy, a_submerge, d_submerge, NO_REACTIONS,
                                               optimize, territory_value, sea)
        except BattleInputError as exc:
            return cls(**form, deferred=(step, exc))
        return cls(**form)

    def army(self, value: Army, side: str) -> _Army:
        """A side's army read as make_battle reads it (army_counts: its errors raised), and
        what the battle checks of it; each distinct army (notation or {unit: int}) once."""
        key = _army_key(value)
        found = None if key is None else self._armies.get((side, key))
        if found is None:
            found = self._read_army(value, side)
            if key is not None:
                self._armies[(side, key)] = found
        return found

    def _read_army(self, value: Army, side: str) -> _Army:
        ruleset = self.rules
        counts = army_counts(value, ruleset, side)
        attacker = side == "attacker"
        if attacker and self.landing:
            counts = {n: counts.get(n, 0) + self.landing.get(n, 0) for n in ruleset.units
                      if counts.get(n, 0) + self.landing.get(n, 0)}
        units = ruleset.units
        # (the units in the battle: standing, and chosen as casualties where it starts in a
        # round)
        present = _plus(counts, self.start.attacker_waiting if attacker
                        else self.start.defender_waiting)
        domain_error = attack_error = None
        try:
            _check_domain(ruleset, self.sea, side, present)
        except BattleInputError as exc:
            domain_error = exc
        if attacker:
            try:
                _check_attacks(self.attacker_rules, present)
            except BattleInputError as exc:
                attack_error = exc
        land = sum(n for u, n in counts.items() if units[u].is_land) if attacker else 0
        return _Army(counts, any(units[name].submarine for name in counts), domain_error,
                     attack_error, land)

    def battle(self, attacker: Army, defender: Army) -> Battle:
        """The Battle make_battle makes of the form's arguments and these armies, or its
        error (in make_battle's order)."""
        a, d = self.army(attacker, "attacker"), self.army(defender, "defender")
        deferred = self.deferred
        if deferred is not None and deferred[0] < DOMAINS:
            raise deferred[1]
        for error in (a.domain_error, d.domain_error, a.attack_error):
            if error is not None:
                raise error
        if deferred is not None and deferred[0] <= KEEP_LAND:
            raise deferred[1]
        a_army, d_army = a.counts, d.counts
        if self.keep_land > a.land_units:
            raise BattleInputError(
                f"keep_land {quoted(self.keep_land)} is more than the attacker's {a.land_units} "
                "land units")
        if deferred is not None:
            raise deferred[1]
        retreat = self._retreat(a_army, d_army)
        reactions, objective = NO_REACTIONS, self.objective
        if self.reaction_args is not None:
            reactions = check_reactions(self.rules, self.sea, a_army, *self.reaction_args,
                                        army_counts)
            objective = _objective(retreat, self.attacker_submerge, self.defender_submerge,
                                   reactions, self.optimize, self.territory_value, self.sea)
        if self.landing or self.attacker_tech or self.defender_tech or self.start:
            retreat = self._warnings(a_army, d_army, retreat)
        return _battle_of((self.rules, self.attacker_rules, self.defender_rules, a_army, d_army,
                           self.sea, self.attacker_tech, self.defender_tech,
                           self.attacker_submerge, self.defender_submerge, self.landing,
                           self.bombard, self._overland(a_army),
                           self._order("attack", d.subs), self._order("defense", a.subs),
                           retreat, self.dice, self.start, objective, reactions, (),
                           self.extras))

    def _overland(self, a_army: dict[str, int]) -> dict[str, int]:
        """The attacker's units that came overland (its army less the landing)."""
        if not self.landing:
            return a_army
        return {n: c - self.landing.get(n, 0) for n, c in a_army.items()
                if c - self.landing.get(n, 0)}

    def _order(self, role: str, enemy_subs: bool) -> LossOrder:
        found = self._orders.get((role, enemy_subs))
        if found is None:
            order = self.attacker_order if role == "attack" else self.defender_order
            found = self._orders[(role, enemy_subs)] = order.with_enemy_subs(enemy_subs)
        return found

    def _retreat(self, a_army: dict[str, int], d_army: dict[str, int]) -> Retreat:
        if self.retreat is None:
            return _NO_RETREAT
        sizes = (sum(a_army.values()), sum(d_army.values()))
        found = self._retreats.get(sizes)
        if found is None:  # (its thresholds clamped to the armies' sizes)
            found = self._retreats[sizes] = check_retreat(self.retreat, self.sea, *sizes)
        return found

    def _warnings(self, a_army: dict[str, int], d_army: dict[str, int],
                  retreat: Retreat) -> Retreat:
        """make_battle's warnings (BattleInputWarning) of a battle with an amphibious
        assault, technologies or a start, and its retreat (none where it can never be
        taken: an amphibious assault no attacker may withdraw from)."""
        ruleset = self.rules
        if retreat and self.landing and not _may_withdraw(ruleset, a_army,
                                                          self._overland(a_army)):
            _warn(_NO_AMPHIBIOUS_RETREAT[ruleset.flags["amphibious_retreat"]].format(
                edition=ruleset.id))
            if not retreat.optimal:  # (an optimal one finds no decision: fought to the end)
                retreat = _NO_RETREAT  # it can never happen: the battle is fought to the end
        for side, techs, army, role in (("attacker", self.attacker_tech,
                                         {**a_army, **self.bombard}, "attack"),
                                        ("defender", self.defender_tech, d_army, "defense")):
            for tech in techs:
                if not tech_affects(ruleset, tech, army, role):
                    _warn(f"{side} technology {tech} changes nothing here: it changes no unit "
                          f"the {side} has, in its role")
        start = self.start
        if start and retreat.after is not None and retreat.after < start.round:
            # (a battle that starts in round N fights round N before its first retreat point)
            _warn(f"retreat_after {retreat.after}: the battle starts in round {start.round}, "
                  f"so the attacker retreats at the end of round {start.round}")
        return retreat


def _objective(retreat: Retreat, a_submerge: str, d_submerge: str, reactions,
               optimize: Any, territory_value: Any, sea: bool) -> Objective | None:
    """The battle's Objective (check_objective), after the check of the decisions it
    solves together."""
    submerging = "optimal" in (a_submerge, d_submerge)
    if submerging and retreat.air_loss is not None:  # (before the message below, pinned)
        raise BattleInputError(
            "optimal submerging is solved with the attacker's retreat optimal (retreat_policy "
            "optimal) or none: it cannot be combined with retreat_air_loss")
    if submerging and retreat and not retreat.optimal:
        raise BattleInputError(
            "optimal submerging is solved with the attacker's retreat optimal (retreat_policy "
            "optimal) or none: it cannot be combined with retreat_after, retreat_when_left, "
            "retreat_below or strafe")
    return check_objective(optimize, territory_value, sea,
                           retreat.optimal or submerging or bool(reactions))


def _army_key(value: Any):
    """A hashable key of army notation or a {name: int} dict (None: of another kind)."""
    if type(value) is str:
        return value
    if type(value) is dict and set(map(type, value)) == _STR \
            and set(map(type, value.values())) == _INT:
        return tuple(value.items())
    return None


_STR, _INT = {str}, {int}
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
    form, run = simulate_form(args)
    if isinstance(form, BattleForm):
        return form.battle(args["attacker"], args["defender"]), run
    options = form
    return make_formula_spec(args["attacker"], args["defender"], rules=args["rules"],
                             **{k: v for k, v in options.items() if v is not None}), run


def simulate_form(args: Mapping[str, Any]) -> tuple[BattleForm | dict, RunSpec]:
    """simulate_spec's checks of every argument but the armies (attacker, defender): the
    BattleForm that makes the battle of any armies, and the RunSpec; for a formula edition,
    its options checked so far (simulate_spec reads the rest with the armies)."""
    options = args["formula_options"]
    if not options.keys().isdisjoint(KEYWORD_SPELLINGS):
        args, options = _spelled(args)
    added = _added_options()
    unknown = set(options) - set(FORMULA_OPTIONS) - added.keys()
    if unknown:
        raise TypeError(f"simulate() got unexpected keyword arguments: {sorted(unknown)}")
    extras = ()
    if added:  # (options the table has that no check here reads: carried to the result)
        extras = tuple((name, check_option(option, args.get(name, options.get(name))))
                       for name, option in added.items())
        options = {k: v for k, v in options.items() if k not in added}
    run = make_run(args["method"], args["trials"], args["seed"], args["progress"],
                   args["rounds_distribution"])
    ruleset = load_rules(args["rules"])
    if ruleset.model == "formula":
        used = [name for name, default in DICE_ONLY.items() if _given(args[name], default)]
        if used:
            raise BattleInputError(
                f"{', '.join(used)} do not apply to the {ruleset.id} edition (formula combat)")
        return options, run
    given = [k for k, v in options.items() if v is not None]
    if given:
        raise BattleInputError(
            f"{', '.join(given)} apply to formula-combat editions only, not to {ruleset.id}")
    retreat = {"after": args["retreat_after"], "when_left": args["retreat_when_left"],
               "only_air": args["retreat_when_only_air"], "below": args["retreat_below"],
               "strafe": args["strafe"], "air_loss": args["retreat_air_loss"],
               "optimal": check_retreat_policy(args["retreat_policy"]) == "optimal"}
    form = BattleForm.of(ruleset, **{name: args[name] for name in _FORM_ARGUMENTS},
                         retreat=retreat)
    if extras:
        form = dataclasses.replace(form, extras=extras)
    return form, run


# the options this module checks and reads (the table's at import): an option added to the
# table after it (battlecalc.options.OPTIONS) is one nothing here reads, checked by its
# kind and bounds (check_option) and carried to the result as it is (Battle.extras)
_READ_OPTIONS = frozenset(o.name for o in OPTIONS)


def _added_options() -> dict:
    """The options of the table (options.OPTIONS, now) that this module does not read, by
    name."""
    table = options_module.OPTIONS
    if len(table) == len(_READ_OPTIONS):
        return {}
    return {o.name: o for o in table if o.name not in _READ_OPTIONS}


def check_option(option, value: Any) -> Any:
    """A value of an option by what the table says of it (its default where None): a whole
    number within lo..hi, a flag, a finite number, one of its choices, or text; the
    BattleInputError naming it otherwise."""
    if value is None:
        return option.default
    kind, name = option.kind, option.name
    if kind in ("int", "trials"):
        return check_int(name, value, option.lo if option.lo is not None else -2**63,
                         option.hi)
    if kind == "bool":
        return check_flag(name, value)
    if kind == "float":
        if is_bool(value) or not isinstance(value, numbers.Real) or not is_finite(value):
            raise BattleInputError(f"{name} must be a finite number, got {quoted(value)}")
        return float(value)
    if kind == "choice":
        return check_choice(name, value, option.choices)
    if not isinstance(value, str):
        raise BattleInputError(f"{name} must be text, got {quoted(value)}")
    return value


# BattleForm.of's arguments among simulate's (the armies aside; the retreat options come as
# one policy)
_FORM_ARGUMENTS = tuple(name for name in DICE_ONLY
                        if name.split("_")[0] not in ("retreat", "strafe"))


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
    "kamikaze_targets", "retreat_air_loss", "die_law")}


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
