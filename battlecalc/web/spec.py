"""What the page is built from, and how a request becomes `simulate` keyword arguments.

Nothing here imports the web stack: :func:`page_spec` is plain data (editions, battle kinds,
options) and :func:`parse_params` turns query-string or JSON values into the arguments of
:func:`battlecalc.simulate`.  The page builds its whole form from :func:`page_spec`, so a new
option (``dice``, a raid kind, a planner field) is one entry in :data:`OPTIONS` or
:data:`KINDS`; a keyword argument of ``simulate`` is read as its entry in the table of options
(:mod:`battlecalc.options`) says, and the "same numbers" command line uses its flag.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .. import options as options_module
from ..errors import BattleInputError, quoted
from ..options import BY_NAME, DICE_KINDS, LAND_STEPS, SEA_STEPS, Option, read
from ..options import OPTIONS as TABLE
from ..orders import PRESETS
from ..raids import RAID_STEPS, raid_units
from ..rules import list_editions, load_rules

MAX_TEXT = 2_000  # characters in one text parameter


class ParamError(BattleInputError):
    """A request parameter that cannot be read (HTTP 400)."""


# ---------------------------------------------------------------------------------------------
# Reading parameters: query strings carry text, JSON bodies carry typed values


def _text(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ParamError(f"{name} must be text, got {value!r}")
    if len(value) > MAX_TEXT:
        raise ParamError(f"{name} is longer than {MAX_TEXT} characters")
    return value


def _reader(option: Option) -> Callable[[str, Any], Any]:
    """A request value of `option`, read by battlecalc.options.read (text capped at
    MAX_TEXT characters)."""

    def read_value(name: str, value: Any) -> Any:
        for text in value if isinstance(value, list) else [value]:
            if isinstance(text, str):
                _text(name, text)
        try:
            return read(option, value)
        except BattleInputError as exc:
            raise ParamError(str(exc)) from None

    return read_value


NOT_PARAMETERS = {"progress"}  # simulate arguments a request cannot set
# every keyword of simulate (battlecalc.options) with its reader
READERS: dict[str, Callable[[str, Any], Any]] = {
    o.name: _reader(o) for o in TABLE if o.name not in NOT_PARAMETERS}
EXTRA_PARAMETERS = {"distributions": _reader(Option("distributions", "bool"))}  # the server's
# own: add the charts' laws


# the arguments of battlecalc.raid and battlecalc.plan, read as the command line reads them
_RAID_OWN = (Option("target_value", "int"), Option("facility", "army"), Option("aa", "bool"))
# a raid in progress (battlecalc.raids.RAID_STEPS), read apart from simulate's start_step
_RAID_START = {"start_step": _reader(Option("start_step", "choice", choices=RAID_STEPS)),
               "hits_on_attacker": _reader(Option("hits_on_attacker", "int", lo=0))}
RAID_PARAMETERS = ("rules", "attacker", "defender", "target_value", "facility", "aa", "trials",
                   "seed", "method", "attacker_tech", "defender_tech", "attacker_ool", "dice",
                   "start_step", "hits_on_attacker", "die_law")
_PLAN_OWN = (Option("pool", "army"), Option("goal", "order"),
             Option("objective", "choice", choices=("cost", "loss", "swing")),
             Option("top", "int"), Option("defend", "bool"), Option("max_cost", "float"),
             Option("search", "choice", choices=("auto", "monotone", "exhaustive")))
# the keywords of simulate that plan passes on for every force (as `battlecalc plan` takes)
PLAN_OPTIONS = tuple(o.name for o in TABLE if o.flag and o.battle and o.applies & DICE_KINDS
                     and o.name not in ("attacker", "defender", "landing", "bombard"))
PLAN_PARAMETERS = ("rules", "defender", "pool", "goal", "objective", "top", "defend",
                   "attacker", "max_cost", "sea", "method", "trials", "seed", "search",
                   "landing", "bombard", *PLAN_OPTIONS)
_OWN_READERS = {o.name: _reader(o) for o in (*_RAID_OWN, *_PLAN_OWN)}


def _facility(name: str, value: Any) -> str:
    """A raid's facility: its name, as text (a list or an object is no name)."""
    if not isinstance(value, str):
        raise ParamError(f"{name} must be the name of a facility (text), got {quoted(value)}")
    return _text(name, value).strip()


_OWN_READERS["facility"] = _facility


def simulate_parameters() -> dict[str, Callable[[str, Any], Any]]:
    """Every argument of :func:`battlecalc.simulate` a request may set, with its reader (the
    table's now: an option added to it is one)."""
    table = options_module.OPTIONS
    if table is TABLE:
        return dict(READERS)
    return {**READERS, **{o.name: _reader(o) for o in table
                          if o.name not in READERS and o.name not in NOT_PARAMETERS}}


def raid_parameters() -> dict[str, Callable[[str, Any], Any]]:
    """Every argument of :func:`battlecalc.raid` a request may set (but progress)."""
    return {n: _RAID_START.get(n) or READERS.get(n) or _OWN_READERS[n]
            for n in RAID_PARAMETERS}


def plan_parameters() -> dict[str, Callable[[str, Any], Any]]:
    """Every argument of :func:`battlecalc.plan` a request may set (but progress)."""
    return {n: READERS.get(n) or _OWN_READERS[n] for n in dict.fromkeys(PLAN_PARAMETERS)}


def parse_params(raw: Mapping[str, Any],
                 readers: Mapping[str, Callable[[str, Any], Any]] | None = None,
                 ) -> tuple[dict[str, Any], dict[str, Any]]:
    """(keyword arguments, server options) from a query string or JSON object; readers: the
    endpoint's parameters (default: simulate's).

    Empty values mean "not given" (a form's empty field); unknown names are refused.
    """
    readers = simulate_parameters() if readers is None else readers
    kwargs: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for name, value in raw.items():
        if value is None or (isinstance(value, str) and not value.strip()):
            continue
        if name in readers:
            kwargs[name] = readers[name](name, value)
        elif name in EXTRA_PARAMETERS:
            extra[name] = EXTRA_PARAMETERS[name](name, value)
        else:
            shown = name if len(name) <= 40 else name[:40] + "..."
            raise ParamError(
                f"unknown parameter {shown!r}; parameters: "
                f"{', '.join([*readers, *EXTRA_PARAMETERS])}"
            )
    return kwargs, extra


# ---------------------------------------------------------------------------------------------
# The page's form, as data

# Battle kinds: the army fields each shows, the parameters it sets, the endpoint that answers
# it and the command line that gives the same numbers.  `models`: the edition models that
# have it.  An option is shown and sent only for the kinds its `when` names (from the
# `applies` of the table of options, battlecalc.options), and only in editions whose
# `options` list it (edition_data).
KINDS: list[dict[str, Any]] = [
    {"id": "land", "label": "Land", "models": ["dice"], "armies": ["attacker", "defender"],
     "params": {}, "endpoint": "/api/run", "command": "run"},
    {"id": "sea", "label": "Sea", "models": ["dice"], "armies": ["attacker", "defender"],
     "params": {"sea": True}, "endpoint": "/api/run", "command": "run"},
    {"id": "amphibious", "label": "Amphibious", "models": ["dice"],
     "armies": ["attacker", "landing", "bombard", "defender"], "params": {},
     "endpoint": "/api/run", "command": "run"},
    {"id": "raid", "label": "Bombing raid", "models": ["dice"],
     "armies": ["attacker", "defender"], "params": {}, "endpoint": "/api/raid",
     "command": "raid"},
    {"id": "plan", "label": "Plan an attack", "models": ["dice"],
     "armies": ["pool", "attacker", "defender"], "params": {}, "endpoint": "/api/plan",
     "command": "plan", "battle": "land"},
    {"id": "plan_sea", "label": "Plan a sea attack", "models": ["dice"],
     "armies": ["pool", "attacker", "defender"], "params": {"sea": True},
     "endpoint": "/api/plan", "command": "plan", "battle": "sea"},
    {"id": "plan_amphibious", "label": "Plan an amphibious assault", "models": ["dice"],
     "armies": ["pool", "attacker", "landing", "bombard", "defender"], "params": {},
     "endpoint": "/api/plan", "command": "plan", "battle": "amphibious"},
    {"id": "formula", "label": "Formula battle", "models": ["formula"],
     "armies": ["attacker", "defender"], "params": {}, "endpoint": "/api/run",
     "command": "run"},
]
ARMY_LABELS = {
    "attacker": "Attacker", "defender": "Defender",
    "landing": "Landing from transports", "bombard": "Bombarding ships",
    "pool": "Units available (the planner picks from these)",
}
# per kind, where the label above does not say it
KIND_ARMY_LABELS = {
    "raid": {"attacker": "Raiders (bombers, escorts)", "defender": "Interceptors"},
    "plan": {"attacker": "Sent in any case (optional)", "defender": "Defender"},
    "plan_sea": {"attacker": "Sent in any case (optional)", "defender": "Defender"},
    "plan_amphibious": {"pool": "Units available to attack overland or from the air (the "
                                "planner picks from these)",
                        "attacker": "Sent in any case (optional)", "defender": "Defender"},
}
# the planner's armies when it plans a defence (the `defend` option): the pool defends
DEFEND_ARMY_LABELS = {"pool": "Units available to add to the defence (the planner picks from "
                              "these)",
                      "attacker": "Attacker (the threat)",
                      "defender": "Defending already (optional)"}
PLAN_KINDS = ("plan", "plan_sea", "plan_amphibious")
# the battle each planner kind plans (the kinds of the table of options)
PLAN_BATTLES = {"plan": "land", "plan_sea": "sea", "plan_amphibious": "amphibious"}
BATTLE_KINDS = ("land", "sea", "amphibious", "formula")

# Every form field but the armies, from the table of options (battlecalc.options): its label,
# choices and command-line flag, and where it applies (`when`: battle kinds; methods).
# kind: choice | int | float | bool | text | trials | techs | armies;
# `default` is the form's value (a field at its default is left out of the URL and of the
# request, as the default is the library's, unless `send_default` says the form's default
# differs: the seed, a fixed one, so numbers do not jitter; formula options default to the
# edition's values); `suggestions` offer values for a text field; `group` is the fieldset it
# sits in; `values_flags`: the command line's words for each value (plan's objective).
_FORM_KINDS = {"bool": "bool", "int": "int", "float": "float", "trials": "trials",
               "choice": "choice", "techs": "techs", "order": "text", "exchanges": "text",
               "army": "text", "armies": "armies", "die_law": "text"}


def _kinds_of(option: Option) -> list[str]:
    """The page's kinds where a keyword of simulate, raid or plan applies (the planner's
    page is a land battle's: no submerge policies there)."""
    if option.name not in BY_NAME:  # raid's and plan's own
        return [k for k, names in (("raid", RAID_PARAMETERS), *((p, PLAN_PARAMETERS)
                                                                for p in PLAN_KINDS))
                if option.name in names]
    applies = option.applies | (DICE_KINDS - {"sea"} if option.name == "counterattack" else
                                DICE_KINDS if option.name == "waves" else set())
    kinds = [k for k in BATTLE_KINDS if k in applies]
    if option.name in RAID_PARAMETERS:
        kinds.append("raid")
    if option.name in PLAN_PARAMETERS and option.name not in ("landing", "bombard", "sea"):
        kinds += [p for p in PLAN_KINDS if PLAN_BATTLES[p] in option.applies]
    return kinds


def _field(name: str, group: str, **page: Any) -> dict[str, Any]:
    option = BY_NAME.get(name) or next(o for o in (*_RAID_OWN, *_PLAN_OWN) if o.name == name)
    kinds = page.pop("kinds", None) or _kinds_of(option)
    when = {"kinds": kinds, **page.pop("when", {})}
    default = False if option.kind == "bool" else "" if option.default is None \
        else str(option.default)
    field = {"name": name, "label": option.label or name.replace("_", " "), "group": group,
             "kind": _FORM_KINDS[option.kind], "default": default, "flag": option.flag,
             "when": when}
    if option.choices:
        field["choices"] = list(option.choices)
    field.update(page)
    return field


MC = {"methods": ["auto", "mc"]}
OPTIONS: list[dict[str, Any]] = [
    _field("method", "Method",
           help="auto: exact when the battle is small enough, else Monte Carlo"),
    _field("trials", "Method", when=MC, default="",
           help="Monte Carlo trials (1e6, 1,000,000); empty: 1,000,000 (the planner: "
           "100,000 per force)"),
    _field("seed", "Method", default="1", send_default=True, min=0, when=MC,
           help="same seed, same numbers; empty: a new random seed each time"),
    _field("dice", "Method", help="low luck: each fire step's strength gives sure hits, one "
           "die rolls for the rest"),
    _field("die_law", "Method", suggestions=["1/6,1/6,1/6,1/6,1/6,1/6",
                                             "1/4,1/6,1/6,1/6,1/6,1/12"],
           help="a biased die: the chances of faces 1 to 6, exact fractions or decimals that "
           "sum to 1 (a unit of value v hits on faces 1..v); empty: a fair die; not with low "
           "luck"),
    _field("rounds_distribution", "Method", kinds=["land", "sea", "amphibious"],
           when={"methods": ["auto", "exact"], "waves": False},
           help="the exact solver also computes how many rounds the battle lasts"),
    _field("goal", "Planner", default="takes_territory>=0.9", flag="--goal", kind="goal",
           label="goal", defaults_by_kind={"plan_sea": "attacker_win>=0.9"},
           help="choose the figure, the comparison and the value; every goal must hold"),
    _field("objective", "Planner", default="cost", label="best plan: least",
           values_flags={"cost": "--minimize cost", "loss": "--minimize loss",
                         "swing": "--maximize swing"},
           help="cost: IPC of the units taken; loss: expected IPC lost; swing: the largest "
           "TUV swing"),
    _field("top", "Planner", default="5", min=1, max=20, label="plans listed", flag="--top"),
    _field("defend", "Planner", label="plan a defence (the pool defends)", flag="--defend"),
    _field("max_cost", "Planner", label="at most IPC", min=0, flag="--max-cost"),
    _field("search", "Planner", default="auto", flag="--search",
           help="auto: where a stronger force is sure to do better, skip the forces the "
           "search rules out; monotone: skip them anyway; exhaustive: solve every force"),
    _field("target_value", "Raid", min=0, label="target's production value",
           flag="--target-value", help="it caps the damage"),
    _field("facility", "Raid", label="facility bombed", flag="--facility",
           choices_from="facilities"),
    _field("aa", "Raid", label="the territory has an AA gun", flag="--aa"),
    _field("attacker_tech", "Technologies"),
    _field("defender_tech", "Technologies"),
    _field("attacker_ool", "Orders of losses", suggestions=list(PRESETS),
           help="a preset, units to lose first ('bomber,tank') or '*^infantry;*^fighter'"),
    _field("defender_ool", "Orders of losses", suggestions=list(PRESETS)),
    _field("keep_land", "Orders of losses", min=0),
    _field("aa_last", "Orders of losses"),
    _field("retreat_after", "Retreat", min=1),
    _field("retreat_when_left", "Retreat", min=0),
    _field("retreat_when_only_air", "Retreat"),
    _field("retreat_below", "Retreat", percent=True,
           help="retreat when the attacker's chance of winning from where the battle stands "
           "is below this (in percent, as the planner's goals; sent as a fraction)"),
    _field("retreat_air_loss", "Retreat", percent=True,
           help="retreat when the chance that fighting on to the end, with no further "
           "retreat, loses every one of the attacker's aircraft is above this (in percent; "
           "sent as a fraction)"),
    _field("strafe", "Retreat", min=0),
    _field("retreat_policy", "Retreat", choices=["", "optimal"],
           help="optimal: the attacker retreats wherever that is worth more than fighting on "
           "(the fields above stay empty); the policy is shown with the odds"),
    _field("optimize", "Retreat", choices=["", *BY_NAME["optimize"].choices],
           help="what the decisions are taken for: TUV swing (the default), the chance of "
           "winning, of taking the territory, or the TUV swing plus the territory's value"),
    _field("territory_value", "Retreat", min=0, kinds=["land", "amphibious"],
           help="with optimize value: the territory's IPC, counted when it is taken"),
    _field("attacker_submerge", "Submarines"),
    _field("defender_submerge", "Submarines"),
    _field("scramble_from", "Scramble and kamikaze",
           help="fighters and tactical bombers on an air base next to the sea zone; every "
           "number it may scramble (up to 3) is solved; several bases separated by ;"),
    _field("scramble", "Scramble and kamikaze", suggestions=["best", "none"],
           help="best (empty): the choice worst for the attacker; none; or the aircraft"),
    _field("kamikaze", "Scramble and kamikaze", min=0,
           help="kamikaze tokens spent here: each strikes a surface warship before the battle"),
    _field("kamikaze_targets", "Scramble and kamikaze",
           help="e.g. battleship:2, cruiser:1 (empty: the placing worst for the attacker)"),
    _field("waves", "Waves and counter-attack",
           help="each wave attacks the defender's survivors while the territory is not taken"),
    _field("counterattack", "Waves and counter-attack",
           help="the defender side's army that strikes back at the units that took the "
           "territory"),
    _field("start_round", "Where the battle starts (a save in progress)", min=1,
           help="the round it is in: from round 2 on, nothing that fires in round 1 only "
           "fires"),
    _field("start_step", "Where the battle starts (a save in progress)",
           choices_by_kind={"land": list(LAND_STEPS), "amphibious": list(LAND_STEPS),
                            "sea": list(SEA_STEPS), "raid": list(RAID_STEPS)},
           help="the step to come in that round"),
    _field("hits_on_attacker", "Where the battle starts (a save in progress)", min=0,
           help="hits rolled at the attacker, its casualties not chosen yet"),
    _field("hits_on_defender", "Where the battle starts (a save in progress)", min=0,
           help="hits rolled at the defender, its casualties not chosen yet"),
    _field("bombard_hits", "Where the battle starts (a save in progress)", min=0,
           kinds=["amphibious"]),
    _field("attacker_waiting", "Where the battle starts (a save in progress)",
           help="units chosen as casualties, not yet removed (2 inf)"),
    _field("defender_waiting", "Where the battle starts (a save in progress)",
           help="units chosen as casualties, not yet removed; they fire back where the rules "
           "let them"),
    _field("attacker_level", "Formula", default="1", min=1, max=10),
    _field("defender_level", "Formula", default="1", min=1, max=10),
    _field("counter", "Formula", default="0", min=0),
    _field("hatred", "Formula"),
    _field("loss_multiplier", "Formula", default="1", min=1, max=10),
    _field("exchanges", "Formula", default="1", suggestions=["1", "2", "3", "until-done"]),
    _field("exchange_cap", "Formula", min=1),
    _field("flips", "Formula", choices=["", *BY_NAME["flips"].choices],
           help="empty: the edition's rule"),
]
# the command-line flag of every keyword (the page writes the "same numbers" command line)
FLAGS = {o.name: o.flag for o in TABLE if o.flag}
FLAGS.update({f["name"]: f["flag"] for f in OPTIONS if f.get("flag")})
FLAGS["pool"] = "--pool"

# Results: the outcome rows (key, label), and the scalar keys shown as numbers; any other
# scalar key of a response is listed too, so new result fields show up without code.
OUTCOMES = [
    ["attacker_win", "attacker wins"], ["defender_win", "defender wins"],
    ["draw", "draw (both die)"], ["stalemate", "stalemate"], ["retreat", "retreat"],
    ["takes_territory", "takes territory"],
]
NUMBERS = [
    ["attacker_ipc_loss", "IPC lost, attacker"], ["defender_ipc_loss", "IPC lost, defender"],
    ["tuv_swing", "TUV swing"], ["mean_rounds", "rounds (mean)"],
    ["attacker_loss_points", "loss points, attacker"],
    ["defender_loss_points", "loss points, defender"],
    ["mean_exchanges", "exchanges (mean)"], ["undecided", "undecided"], ["capped", "capped"],
]


# the planner's goal builder: each figure a goal may bound (planner.GOAL_KEYS), its label and
# whether it is a probability (shown and typed in percent, sent as a fraction)
GOAL_FIGURES = [
    ["takes_territory", "takes the territory", True], ["attacker_win", "attacker wins", True],
    ["defender_win", "defender wins", True], ["draw", "draw", True],
    ["stalemate", "stalemate", True], ["retreat", "retreat", True],
    ["tuv_swing", "TUV swing", False], ["attacker_ipc_loss", "IPC lost, attacker", False],
    ["defender_ipc_loss", "IPC lost, defender", False], ["mean_rounds", "rounds (mean)", False],
]


def _roles(ruleset) -> dict[str, dict[str, list[str]]]:
    """Units each army field of each battle kind offers, in the edition's order."""
    units = list(ruleset.units.values())
    if ruleset.model != "dice":
        names = [u.name for u in units]
        return {"formula": {"attacker": names, "defender": names}}
    bombard_by_tech = {name for tech in ruleset.techs.values()
                       for name, change in tech.changes.items() if change.get("bombard")}

    def pick(domains, attack=False):
        return [u.name for u in units if u.domain in domains and (u.can_attack or not attack)]

    roles = {
        "land": {"attacker": pick(("land", "air"), attack=True),
                 "defender": pick(("land", "air"))},
        "amphibious": {"attacker": pick(("land", "air"), attack=True),
                       "landing": pick(("land",), attack=True),
                       "bombard": [u.name for u in units if u.domain == "sea"
                                   and (u.bombard or u.name in bombard_by_tech)],
                       "defender": pick(("land", "air"))},
    }
    if any(u.domain == "sea" for u in units):
        roles["sea"] = {"attacker": pick(("sea", "air"), attack=True),
                        "defender": pick(("sea", "air"))}
    bombers, escorts, interceptors = raid_units(ruleset)
    if bombers:
        roles["raid"] = {"attacker": [*bombers, *escorts]}
        if interceptors:
            roles["raid"]["defender"] = interceptors
    # the planner's kinds: the pool attacks (or, planning a defence, defends: defend_pool)
    for plan, battle in PLAN_BATTLES.items():
        if battle in roles:
            roles[plan] = {**roles[battle], "pool": roles[battle]["attacker"],
                           "defend_pool": roles[battle]["defender"]}
    return roles


def _options_of(ruleset) -> list[str]:
    """The form's fields that apply to an edition (the kinds and methods are the page's to
    check): no AAA-last where AA guns are never casualties, no technologies where there are
    none, the raid's target value, facility and AA gun where its rules ask for them."""
    if ruleset.model != "dice":
        return [f["name"] for f in OPTIONS if "formula" in f["when"]["kinds"]]
    units = ruleset.units.values()
    leave_out = set()
    if not any(u.is_aa and u.can_be_casualty for u in units):
        leave_out.add("aa_last")
    if not ruleset.techs:
        leave_out |= {"attacker_tech", "defender_tech"}
    if not any(u.submarine for u in units):
        leave_out |= {"attacker_submerge", "defender_submerge"}
    if ruleset.flags["raid_damage_cap"] not in ("target_value_per_bomber", "twice_target_value"):
        leave_out.add("target_value")
    if not ruleset.facilities:
        leave_out.add("facility")
    if ruleset.flags["raid_aa"] != "territory_gun":
        leave_out.add("aa")
    if not ruleset.flags["scramble"]:
        leave_out |= {"scramble_from", "scramble"}
    if not ruleset.flags["kamikaze"]:
        leave_out |= {"kamikaze", "kamikaze_targets"}
    return [f["name"] for f in OPTIONS if f["name"] not in leave_out
            and set(f["when"]["kinds"]) - {"formula"}]


def _raid_techs(ruleset) -> list[str]:
    """The technologies that change a bombing raid: those that change its bombers, escorts,
    interceptors or AA guns (improved artillery or super submarines change none of them)."""
    if ruleset.model != "dice":
        return []
    bombers, escorts, interceptors = raid_units(ruleset)
    raiding = {*bombers, *escorts, *interceptors,
               *(u.name for u in ruleset.units.values() if u.is_aa)}
    return [t.name for t in ruleset.techs.values() if raiding & set(t.changes)]


def edition_data(edition: str) -> dict[str, Any]:
    """One edition for the page: units (with costs), technologies, rule flags, armies."""
    ruleset = load_rules(edition)
    return {
        "id": ruleset.id,
        "name": ruleset.name,
        "description": ruleset.description,
        "model": ruleset.model,
        "units": [
            {"name": u.name, "aliases": list(u.aliases), "cost": u.cost, "attack": u.attack,
             "defense": u.defense, "domain": u.domain, "hp": u.hp}
            for u in ruleset.units.values()
        ],
        "aliases": dict(ruleset.aliases),
        "techs": [{"name": t.name, "description": t.description}
                  for t in ruleset.techs.values()],
        "raid_techs": _raid_techs(ruleset),
        "flags": dict(ruleset.flags),
        "formula": dict(ruleset.formula) if ruleset.formula is not None else None,
        "roles": _roles(ruleset),
        "options": _options_of(ruleset),
        "facilities": list(ruleset.facilities or []),
    }


def page_spec(limits: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Everything the page builds its form and results from (JSON-ready)."""
    return {
        "editions": [edition_data(e) for e in list_editions()],
        "kinds": KINDS,
        "army_labels": ARMY_LABELS,
        "kind_army_labels": KIND_ARMY_LABELS,
        "options": OPTIONS,
        "defend_army_labels": DEFEND_ARMY_LABELS,
        "goal_figures": GOAL_FIGURES,
        "flags": FLAGS,
        "outcomes": OUTCOMES,
        "numbers": NUMBERS,
        "limits": dict(limits or {}),
    }
