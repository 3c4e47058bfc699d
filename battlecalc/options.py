"""Every option of :func:`battlecalc.simulate`, once: the table the other surfaces read.

Each :class:`Option` says what the keyword is (its kind and default), which battles it applies
to (``land``, ``sea``, ``amphibious``, ``formula``, or ``waves`` for the keywords that chain
battles), how the command line spells it (flag, short flag, help) and how the page labels it.
The spec checks (battlecalc.spec), the click options of ``run``/``plan``/``raid``/``sweep``,
the planner's keywords, the sweep's columns, the web API's readers and form, and the options
waves carry to later battles are all derived from :data:`OPTIONS`.

:func:`read` is the one reader of a loose value: command-line text, a query-string or JSON
value, a CSV cell.  Text is read strictly: ASCII digits only (Python's ``int`` takes ``'²'``
and other Unicode digits, ``str.isdigit`` says yes to them) and at most :data:`MAX_NUMBER_TEXT`
characters for a number.  Its errors name the option by its keyword (``keep_land must be ...``);
the command line rewrites them into flags with :func:`flag_message`.

Light on purpose (the standard library only): the command line builds its options from this
module without loading the engine.
"""

from __future__ import annotations

import decimal
import math
import numbers
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .die_law import read_die_law
from .errors import BattleInputError, quoted

METHODS = ("auto", "exact", "mc")
DEFAULT_TRIALS = 1_000_000
SUBMERGE_POLICIES = ("never", "when-only-subs-left", "first-chance", "optimal")
RETREAT_POLICIES = ("optimal",)  # retreat_policy (None: the fixed retreat options, if any)
OBJECTIVES = ("tuv", "win", "takes", "value")  # optimize: what the decisions are taken for
# territory_value: the IPC a territory is worth to the attacker (a whole map holds a few
# hundred); bounded so that it stays a float's whole number (10**400 was an OverflowError)
MAX_TERRITORY_VALUE = 1_000_000
DICE_MODELS = ("standard", "low_luck")  # battlecalc.dice
FLIP_RULES = ("A2", "A1")
UNTIL_DONE = "until-done"
# where in its round a battle starts (battlecalc.spec.Start; docs/in-progress.md): the step to
# come, land and sea (each kind takes its own; "start": the round's start)
LAND_STEPS = ("start", "aa_fire", "aa_casualties", "bombard_fire", "bombard_casualties",
              "attacker_fire", "defender_fire", "general_casualties", "end_of_round")
SEA_STEPS = ("start", "attacker_strike", "defender_strike", "strike_casualties",
             "attacker_fire", "defender_fire", "general_casualties", "end_of_round")
START_STEPS = tuple(dict.fromkeys(LAND_STEPS + SEA_STEPS))

# a request without an edition gets Revised's rules (simulate's and raid's default): the web
# server says so with its answer (every result names its edition: `rules`)
NO_EDITION_WARNING = ("no edition given (rules): the Revised rules are used; name the "
                      "edition (battlecalc.list_editions()) to be sure of the rules")
DICE_KINDS = frozenset({"land", "sea", "amphibious"})  # battles of the dice model
LAND_KINDS = frozenset({"land", "amphibious"})
ALL_KINDS = DICE_KINDS | {"formula"}
MAX_NUMBER_TEXT = 40  # characters of a number written as text
FLOAT_EXACT = 2**53  # whole floats above this may be another number than the one written
TRUE_WORDS = frozenset({"true", "t", "yes", "y", "1", "on"})
FALSE_WORDS = frozenset({"false", "f", "no", "n", "0", "off"})
_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")

# kinds: how a value is read and checked
KINDS = ("edition", "army", "armies", "bool", "int", "trials", "float", "choice", "techs",
         "order", "exchanges", "callable", "die_law")


@dataclass(frozen=True)
class Option:
    """One keyword of simulate.

    applies: the battles it concerns (``land``, ``sea``, ``amphibious``, ``formula``;
    ``waves`` for those that chain battles); battle: whether it describes the battle (then
    ``plan`` and later waves take it too), as opposed to how it is reported; carried: whether
    later waves take it unchanged (armies, the seed and the trials are set per battle).
    flag/short: the command line's spelling (None: no flag of its own), aliases its other
    spellings; label: the page's.
    choices: the accepted values in the API's spelling (``-`` and ``_`` are read alike).
    lo/hi: bounds of a whole number (checked by battlecalc.spec).
    """

    name: str
    kind: str
    default: Any = None
    applies: frozenset = ALL_KINDS
    flag: str | None = None
    short: str | None = None
    help: str = ""
    label: str | None = None
    choices: tuple[str, ...] = ()
    battle: bool = True
    carried: bool = True
    lo: int | None = None
    hi: int | None = None
    aliases: tuple[str, ...] = ()  # the command line's other spellings of flag

    @property
    def dice_only(self) -> bool:
        """Refused by formula editions."""
        return self.applies <= DICE_KINDS

    @property
    def formula_only(self) -> bool:
        return self.applies == frozenset({"formula"})


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _option(name: str, kind: str, default: Any = None, *, flag: str | bool = True,
            **fields: Any) -> Option:
    return Option(name, kind, default, flag=_flag(name) if flag is True else flag or None,
                  **fields)


OPTIONS: tuple[Option, ...] = (
    _option("rules", "edition", "revised", label="edition",
            help="Edition id (see `battlecalc rules`)."),
    _option("attacker", "army", short="-a", label="Attacker", carried=False,
            help='Attacking army, e.g. "3 inf, 1 art, 2 tank".'),
    _option("defender", "army", short="-d", label="Defender", carried=False,
            help='Defending army, e.g. "4inf 1arm 1aa".'),
    _option("sea", "bool", False, applies=frozenset({"sea"}),
            help="A sea battle (default: a land battle)."),
    _option("trials", "trials", DEFAULT_TRIALS, short="-n", label="trials", carried=False,
            lo=1, help="Monte Carlo trials (1e6, 1_000_000 and 1,000,000 all work)."),
    _option("seed", "int", None, short="-s", label="seed", carried=False, lo=0, hi=2**63 - 1,
            help="Random seed; the same seed gives the same numbers. Default: random "
            "(reported)."),
    _option("method", "choice", "auto", short="-m", label="method", choices=METHODS,
            help="exact solver, Monte Carlo (mc), or exact when small enough (auto)."),
    _option("attacker_tech", "techs", applies=DICE_KINDS, label="attacker",
            help="Attacker technologies, comma separated (heavy_bombers, jets, super_subs, "
            "...; see `battlecalc rules --rules R`)."),
    _option("defender_tech", "techs", applies=DICE_KINDS, label="defender",
            help="Defender technologies, comma separated."),
    _option("progress", "callable", flag=False, battle=False, carried=False,
            help="Called as progress(done, total, what) while a battle runs."),
    _option("attacker_submerge", "choice", "never", applies=frozenset({"sea"}),
            choices=SUBMERGE_POLICIES, label="attacker subs submerge",
            help="When the attacker's submarines submerge (sea battles); optimal: wherever "
            "that is best for it by --optimize."),
    _option("defender_submerge", "choice", "never", applies=frozenset({"sea"}),
            choices=SUBMERGE_POLICIES, label="defender subs submerge",
            help="When the defender's submarines submerge (sea battles); optimal: wherever "
            "that is worst for the attacker by --optimize."),
    _option("landing", "army", applies=frozenset({"amphibious"}), carried=False,
            label="Landing from transports",
            help="Land units coming from transports (attackers on top of --attacker, which "
            "may then be omitted)."),
    _option("bombard", "army", applies=frozenset({"amphibious"}), carried=False,
            label="Bombarding ships", help="Ships bombarding in round 1 (needs --landing)."),
    _option("attacker_ool", "order", applies=DICE_KINDS, label="attacker order of losses",
            help="Attacker's order of losses: a preset (cheapest, weakest, smart), units to "
            "lose first ('bomber,tank') or TripleA's '*^infantry;*^fighter;1^infantry'."),
    _option("defender_ool", "order", applies=DICE_KINDS, label="defender order of losses",
            help="Defender's order of losses (as above)."),
    _option("keep_land", "int", 0, applies=LAND_KINDS, lo=0,
            label="attacker keeps last N land units",
            help="The attacker loses its last N land units only after every aircraft."),
    _option("aa_last", "bool", False, applies=LAND_KINDS, label="defender loses AAA last",
            help="The defender loses its AAA last (1942 2E)."),
    _option("retreat_after", "int", applies=DICE_KINDS, lo=1, hi=1000,
            label="retreat after round",
            help="The attacker retreats after round R if the battle is undecided."),
    _option("retreat_when_left", "int", applies=DICE_KINDS, lo=0,
            label="retreat with units left <=",
            help="The attacker retreats when it has N or fewer units left."),
    _option("retreat_when_only_air", "bool", False, applies=LAND_KINDS,
            label="retreat when only aircraft left",
            help="The attacker retreats when no land unit is left."),
    _option("retreat_below", "float", applies=DICE_KINDS,
            label="retreat when chance of winning <",
            help="The attacker retreats when its chance of winning falls below P."),
    _option("retreat_air_loss", "float", applies=DICE_KINDS,
            label="retreat when chance of losing every aircraft >",
            help="The attacker retreats at the end of a round when the chance that fighting "
            "on, with no further retreat, loses every one of its aircraft is above P (exact, "
            "per state; an attacker with no aircraft left never retreats by it)."),
    _option("strafe", "int", applies=DICE_KINDS, lo=0,
            label="strafe: retreat when defender units <=",
            help="The attacker retreats once the defender has N or fewer units left."),
    # decisions solved (issue 31): the optimal retreat and what it is taken for
    _option("retreat_policy", "choice", applies=DICE_KINDS, flag="--retreat",
            choices=RETREAT_POLICIES, label="retreat",
            help="optimal: the attacker retreats wherever that is worth more than fighting "
            "on (by --optimize), found by backward induction over the battle's states."),
    _option("optimize", "choice", applies=DICE_KINDS, choices=OBJECTIVES,
            label="decisions optimize", aliases=("--objective",),
            help="What the decisions are taken for, from the attacker's side: tuv (expected "
            "TUV swing, the default), win (chance of winning), takes (chance of taking the "
            "territory), value (TUV swing + --territory-value when taken)."),
    _option("territory_value", "int", applies=LAND_KINDS, lo=0, hi=MAX_TERRITORY_VALUE,
            label="territory value (IPC)",
            help="With --optimize value: the IPC the territory is worth to the attacker, "
            "counted when it is taken."),
    # the defender's reactions to a sea attack, 1940-2e (battlecalc.reactions): the first
    # battle's only (a later wave meets what is left)
    _option("scramble_from", "army", applies=frozenset({"sea"}), carried=False,
            label="air base next to the zone: aircraft",
            help="Fighters and tactical bombers on an operative air base next to the attacked "
            "sea zone (1940-2e): the defender may scramble up to 3 of them; every number is "
            'solved, e.g. "3 ftr 1 tac"; several bases separated by ";", each sending up to '
            '3: "2 ftr; 1 ftr 1 tac".'),
    _option("scramble", "army", applies=frozenset({"sea"}), carried=False, label="scrambled",
            help="What the defender scrambles: best (the choice worst for the attacker by "
            '--optimize; the default), none, or the aircraft, e.g. "2 ftr".'),
    _option("kamikaze", "int", applies=frozenset({"sea"}), carried=False, lo=0,
            label="kamikaze tokens",
            help="Japan's kamikaze tokens spent on this battle (1940-2e kamikaze zones): each "
            "strikes one of the attacker's surface warships before the battle, a hit on 1-2."),
    _option("kamikaze_targets", "order", applies=frozenset({"sea"}), carried=False,
            label="kamikaze targets",
            help='The tokens on each unit struck, e.g. "battleship:2, cruiser:1" (default: the '
            "placing worst for the attacker by --optimize)."),
    _option("rounds_distribution", "bool", False, flag=False, battle=False, carried=False,
            label="law of rounds (exact)",
            help="The exact solver also computes the law of the number of rounds "
            "(the command line: --format csv --distribution rounds)."),
    _option("dice", "choice", "standard", applies=DICE_KINDS, label="dice",
            choices=DICE_MODELS,
            help="Dice: every die rolled, or low luck (each fire step's strength gives sure "
            "hits, one die rolls for the rest)."),
    _option("die_law", "die_law", applies=DICE_KINDS, label="biased die (faces 1-6)",
            help='A biased die: the chances of its faces 1..6, exact fractions or decimals '
            'summing to 1, e.g. "1/4,1/6,1/6,1/6,1/6,1/12" (a unit of value v hits on faces '
            "1..v; not with low luck)."),
    # a battle that starts where it stands (a save in progress; battlecalc.spec.Start)
    _option("start_round", "int", 1, applies=DICE_KINDS, lo=1, hi=1000, battle=False,
            carried=False, label="starts in round",
            help="The round the battle starts in: from round 2 on, nothing that fires in "
            "round 1 only fires (AA, bombardment)."),
    _option("start_step", "choice", "start", applies=DICE_KINDS, choices=START_STEPS,
            battle=False, carried=False, label="starts at step",
            help="Where in its round the battle starts (a save in progress): the step to come "
            "(docs/in-progress.md)."),
    _option("hits_on_attacker", "int", 0, applies=DICE_KINDS, lo=0, battle=False,
            carried=False, label="hits on the attacker to take",
            help="Hits rolled at the attacker, not yet taken (with --start-step)."),
    _option("hits_on_defender", "int", 0, applies=DICE_KINDS, lo=0, battle=False,
            carried=False, label="hits on the defender to take",
            help="Hits rolled at the defender, not yet taken (with --start-step)."),
    _option("bombard_hits", "int", 0, applies=frozenset({"amphibious"}), lo=0, battle=False,
            carried=False, label="bombardment hits to take",
            help="Round 1's bombardment hits, not yet taken, joining the attacker's general "
            "fire (editions where bombardment casualties fire back; with --start-step)."),
    _option("attacker_waiting", "army", applies=DICE_KINDS, battle=False, carried=False,
            label="attacker casualties chosen",
            help="Attacking units chosen as casualties, not yet removed (with --start-step)."),
    _option("defender_waiting", "army", applies=DICE_KINDS, battle=False, carried=False,
            label="defender casualties chosen",
            help="Defending units chosen as casualties, not yet removed: they still fire "
            "where the rules let them (with --start-step)."),
    _option("waves", "armies", applies=frozenset({"waves"}), flag="--wave", battle=False,
            carried=False, label="further waves, one army a line",
            help="A further wave on the defender's survivors (repeatable; sent only while "
            "the territory is not yet taken)."),
    _option("counterattack", "army", applies=frozenset({"waves"}), battle=False,
            carried=False, label="counter-attack",
            help="The defender side's counter-attack on the attacker's land units left in the "
            "territory taken."),
    # formula combat (extra keywords of simulate; their defaults are the edition's)
    _option("attacker_level", "int", applies=frozenset({"formula"}), label="attacker level",
            help="The attacker's military level 1-10."),
    _option("defender_level", "int", applies=frozenset({"formula"}), label="defender level",
            help="The defender's military level 1-10."),
    _option("counter", "int", applies=frozenset({"formula"}), lo=0, label="counter points",
            help="The attacker's counter points."),
    _option("hatred", "bool", applies=frozenset({"formula"}), label="national hatred (+1)",
            help="National hatred, +1 to the attacker's value."),
    _option("loss_multiplier", "int", applies=frozenset({"formula"}), lo=1,
            label="loss multiplier", help="Multiply both sides' losses (Kursk: 2)."),
    _option("exchanges", "exchanges", applies=frozenset({"formula"}), label="exchanges",
            help="Number of exchanges, or until-done."),
    _option("exchange_cap", "int", applies=frozenset({"formula"}), lo=1,
            label="exchange cap (until-done)", help="Most exchanges for --exchanges until-done."),
    _option("flips", "choice", applies=frozenset({"formula"}), choices=FLIP_RULES,
            label="flips", help="Flip/removal reading (default: the edition's flag)."),
)
BY_NAME: dict[str, Option] = {option.name: option for option in OPTIONS}
FORMULA_OPTIONS = tuple(o.name for o in OPTIONS if o.formula_only)
# the keywords that describe a dice battle, as plan and later waves take them
BATTLE_OPTIONS = tuple(o.name for o in OPTIONS if o.battle and o.applies & DICE_KINDS)
# run's options a TripleA game's battles take (the armies, the kind and the waves come from the
# save; the reactions are one sea battle's own): `battlecalc game` and read_game
NOT_GAME_OPTIONS = frozenset({"rules", "attacker", "defender", "sea", "landing", "bombard",
                              "waves", "counterattack", "progress", "rounds_distribution",
                              "start_round", "start_step", "hits_on_attacker",
                              "hits_on_defender", "bombard_hits", "attacker_waiting",
                              "defender_waiting", "scramble_from", "scramble", "kamikaze",
                              "kamikaze_targets"})


def game_options() -> tuple[str, ...]:
    """The keywords of simulate that a game's battles take (the option table's dice options)."""
    return tuple(o.name for o in OPTIONS if o.flag and o.applies & DICE_KINDS
                 and o.name not in NOT_GAME_OPTIONS)


def option(name: str) -> Option:
    return BY_NAME[name]


# ---------------------------------------------------------------------------------------------
# Reading a loose value


def is_bool(value: Any) -> bool:
    """A bool or a numpy bool (numpy is not imported for this)."""
    numpy = sys.modules.get("numpy")
    return isinstance(value, bool) or (numpy is not None and isinstance(value, numpy.bool_))


def is_empty(value: Any) -> bool:
    """None, blank text or a NaN (an empty cell of a table): the option is not given."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return True
    return (isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral)
            and math.isnan(value))


def _fail(name: str, what: str, value: Any) -> BattleInputError:
    return BattleInputError(f"{name} must be {what}, got {quoted(value)}")


def _number_text(name: str, text: str, what: str) -> str:
    text = text.strip()
    if len(text) > MAX_NUMBER_TEXT:
        raise BattleInputError(
            f"{name} must be {what} of at most {MAX_NUMBER_TEXT} characters, got {quoted(text)}")
    return text


def read_whole(name: str, value: Any, separators: bool = False) -> int:
    """A whole number from an int, an integral float or text (``12``, ``12.0``, ``1e5``;
    with separators also ``100_000`` and ``100,000``); ASCII digits only."""
    what = "a whole number"
    if is_bool(value):
        raise _fail(name, what, value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        if not math.isfinite(value) or value != int(value):
            raise _fail(name, what, value)
        if abs(value) > FLOAT_EXACT:  # 1234567890123456789.0 is 1234567890123456768
            raise BattleInputError(
                f"{name}: {quoted(value)} is a floating-point number too large to be exact; "
                "give it as an integer")
        return int(value)
    if not isinstance(value, str):
        raise _fail(name, what, value)
    text = _number_text(name, value, what)
    if separators:
        text = text.replace("_", "").replace(",", "")
    if _INTEGER.fullmatch(text):
        return int(text)
    if _DECIMAL.fullmatch(text):
        number = decimal.Decimal(text)  # exactly: "1234567890123456789.0" is that number
        if number.adjusted() <= MAX_NUMBER_TEXT and number == number.to_integral_value():
            return int(number)
    raise _fail(name, what, value)


def read_number(name: str, value: Any) -> float:
    """A finite number from an int, a float or ASCII decimal text (``0.5``, ``5e-1``)."""
    what = "a finite number"
    if is_bool(value):
        raise _fail(name, what, value)
    if isinstance(value, numbers.Real):
        try:
            number = float(value)
        except OverflowError:  # an int (or Fraction) beyond a float: 10**400
            raise _fail(name, f"{what} (at most about {sys.float_info.max:.1e})",
                        value) from None
    elif isinstance(value, str):
        text = _number_text(name, value, what)
        if not _DECIMAL.fullmatch(text):
            raise _fail(name, what, value)
        number = float(text)
    else:
        raise _fail(name, what, value)
    if not math.isfinite(number):
        raise _fail(name, what, value)
    return number


def read_flag(name: str, value: Any) -> bool:
    """true/false, yes/no, y/n, t/f, on/off, 1/0 (any case), or a bool, 0 or 1."""
    if is_bool(value):
        return bool(value)
    if isinstance(value, numbers.Real) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text.endswith(".0"):  # a column of flags with gaps, read back as floats
            text = text[:-2]
        if text in TRUE_WORDS:
            return True
        if text in FALSE_WORDS:
            return False
    raise _fail(name, "true or false (yes/no, 1/0)", value)


def read_choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    """One of `choices`, with ``-`` and ``_`` read alike (``low-luck`` is ``low_luck``)."""
    if isinstance(value, str):
        wanted = value.strip().replace("-", "_")
        for choice in choices:
            if choice.replace("-", "_") == wanted:
                return choice
    raise BattleInputError(f"{name} must be one of {', '.join(choices)}, got {quoted(value)}")


def _text_or_list(name: str, value: Any, what: str) -> str | list[str]:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return [v.strip() for v in value]
    raise _fail(name, what, value)


def ignored_options(given, method: str, result=None,
                    spell=lambda name: name) -> list[str]:
    """What a run given the options named in `given` did not use, one line each (besides the
    BattleInputWarnings of the battle's checks): the command line prints them as
    ``Warning: ...`` lines, the web server answers them as ``warnings``.  method: the method
    asked for; result: the run's result; spell(name): how the caller names an option (the
    command line: its flag)."""
    lines = []
    if method == "exact":
        unused = [spell(name) for name in ("seed", "trials") if name in given]
        if unused:
            verb = "is" if len(unused) == 1 else "are"
            lines.append(f"{' and '.join(unused)} {verb} ignored with {spell('method')} exact "
                         "(no dice are rolled)")
    if "exchange_cap" in given and getattr(result, "exchanges", None) != UNTIL_DONE:
        lines.append(f"{spell('exchange_cap')} is ignored: it applies to {spell('exchanges')} "
                     f"{UNTIL_DONE}")
    return lines


def read(opt: Option | str, value: Any) -> Any:
    """`value` (text from a command line, a query string or a CSV cell, or an already typed
    value from JSON or a table) as the type of simulate's keyword `opt`; None when empty
    (None, blank text, NaN: the option's default).  Raises BattleInputError naming the
    keyword.  Bounds and choices of meaning (an edition's units, a level range) are
    battlecalc.spec's to check; choices listed in the table are checked here."""
    opt = BY_NAME[opt] if isinstance(opt, str) else opt
    if is_empty(value):
        return None
    name, kind = opt.name, opt.kind
    if kind == "bool":
        return read_flag(name, value)
    if kind == "int":
        return read_whole(name, value)
    if kind == "trials":
        return read_whole(name, value, separators=True)
    if kind == "float":
        return read_number(name, value)
    if kind == "choice":
        return read_choice(name, value, opt.choices)
    if kind == "exchanges":
        if isinstance(value, str) and value.strip().replace("_", "-").lower() == UNTIL_DONE:
            return UNTIL_DONE
        try:
            return read_whole(name, value)
        except BattleInputError:
            raise _fail(name, f"a whole number or {UNTIL_DONE}", value) from None
    if kind == "army":
        if isinstance(value, Mapping):
            return dict(value)
        if isinstance(value, str):
            return value.strip()
        raise _fail(name, "army notation or a {unit: count} mapping", value)
    if kind == "armies":
        if isinstance(value, (str, Mapping)):
            value = [value]
        if isinstance(value, (list, tuple)) and all(isinstance(v, (str, Mapping))
                                                    for v in value):
            return [v.strip() if isinstance(v, str) else dict(v) for v in value]
        raise _fail(name, "a list of armies", value)
    if kind == "techs":
        return _text_or_list(name, value, "text or a list of technology names")
    if kind == "order":
        return _text_or_list(name, value, "text or a list of unit names")
    if kind == "die_law":
        return read_die_law(value)
    if kind == "edition":
        if isinstance(value, str):
            return value.strip()
        raise _fail(name, "an edition id or the path of an edition file", value)
    raise BattleInputError(f"{name} cannot be given as text")


# ---------------------------------------------------------------------------------------------
# Naming options the caller's way


def _flag_pattern() -> re.Pattern:
    named = sorted((o.name for o in OPTIONS if o.flag), key=len, reverse=True)
    # keywords with an underscore are unambiguous anywhere; one-word keywords (trials, seed,
    # dice, sea, ...) are ordinary words too, so only where a message names them
    # ("trials must be", "seed: ...")
    spaced = [n for n in named if "_" in n]
    plain = [n for n in named if "_" not in n]
    return re.compile(
        rf"(?<![\w-])(?:({'|'.join(spaced)})(?![\w-])|({'|'.join(plain)})(?=\s+must\b|:))")


_FLAG_NAMES = {}  # the table (OPTIONS) -> _flag_pattern() of it


def flag_message(message: str, flags: Mapping[str, str] | None = None) -> str:
    """A library message with its keywords written as command-line flags (``keep_land must
    be ...`` -> ``--keep-land must be ...``); `flags`: a command's own keywords and flags
    (plan's ``max_cost``: ``--max-cost``), rewritten where a message names them."""
    pattern = _FLAG_NAMES.get(OPTIONS)
    if pattern is None:  # (the table's pattern, made once: an option added has its own)
        pattern = _FLAG_NAMES[OPTIONS] = _flag_pattern()
    message = pattern.sub(lambda m: BY_NAME[m.group(1) or m.group(2)].flag, message)
    for name, flag in (flags or {}).items():
        if name not in BY_NAME:
            message = re.sub(rf"(?<![\w-]){re.escape(name)}(?=\s+must\b|:)", flag, message)
    return message
