"""What the page is built from, and how a request becomes `simulate` keyword arguments.

Nothing here imports the web stack: :func:`page_spec` is plain data (editions, battle kinds,
options) and :func:`parse_params` turns query-string or JSON values into the arguments of
:func:`battlecalc.simulate`.  The page builds its whole form from :func:`page_spec`, so a new
option (``dice``, a raid kind, a planner field) is one entry in :data:`OPTIONS` or
:data:`KINDS`; a new keyword argument of ``simulate`` is accepted by the API at once (its
default value tells how to read it from a query string).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping
from typing import Any

from .. import api
from ..errors import BattleInputError
from ..orders import PRESETS
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


def _army(name: str, value: Any) -> str | dict:
    """Army notation, or a JSON object {unit: count}."""
    if isinstance(value, Mapping):
        return dict(value)
    return _text(name, value)


def _integer(name: str, value: Any) -> int:
    if isinstance(value, bool):
        raise ParamError(f"{name} must be a whole number, got {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    text = _text(name, value).strip() if isinstance(value, str) else None
    if text is not None and text.lstrip("+-").isdigit() and len(text) <= 30:
        return int(text)
    raise ParamError(f"{name} must be a whole number, got {value!r}")


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool):
        raise ParamError(f"{name} must be a number, got {value!r}")
    if isinstance(value, (int, float)):
        number = float(value)
    else:
        try:
            number = float(_text(name, value).strip()[:40])
        except ValueError:
            raise ParamError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(number):
        raise ParamError(f"{name} must be a finite number, got {value!r}")
    return number


def _trials(name: str, value: Any) -> int:
    """Like the CLI: 100000, 100_000, 100,000 or 1e5."""
    if isinstance(value, str):
        value = value.replace("_", "").replace(",", "").strip()
        if "e" in value.lower() or "." in value:
            value = _number(name, value)
    number = _number(name, value) if isinstance(value, float) else value
    if isinstance(number, float) and not number.is_integer():
        raise ParamError(f"{name} must be a whole number of trials, got {value!r}")
    return _integer(name, number)


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _boolean(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise ParamError(f"{name} must be true or false (1/0), got {value!r}")


def _techs(name: str, value: Any) -> str | list:
    if isinstance(value, list):
        return [_text(name, v) for v in value]
    return _text(name, value)


def _exchanges(name: str, value: Any) -> int | str:
    return value if isinstance(value, int) and not isinstance(value, bool) else _text(name, value)


READERS: dict[str, Callable[[str, Any], Any]] = {
    "rules": _text, "attacker": _army, "defender": _army, "landing": _army, "bombard": _army,
    "sea": _boolean, "trials": _trials, "seed": _integer, "method": _text,
    "attacker_tech": _techs, "defender_tech": _techs,
    "attacker_submerge": _text, "defender_submerge": _text,
    "attacker_ool": _text, "defender_ool": _text, "keep_land": _integer, "aa_last": _boolean,
    "retreat_after": _integer, "retreat_when_left": _integer, "retreat_when_only_air": _boolean,
    "retreat_below": _number, "strafe": _integer, "rounds_distribution": _boolean,
    # formula combat
    "attacker_level": _integer, "defender_level": _integer, "counter": _integer,
    "hatred": _boolean, "loss_multiplier": _integer, "exchanges": _exchanges,
    "exchange_cap": _integer, "flips": _text,
}
NOT_PARAMETERS = {"progress"}  # simulate arguments a request cannot set
EXTRA_PARAMETERS = {"distributions": _boolean}  # the server's own: add the charts' laws


def _reader_for_default(default: Any) -> Callable[[str, Any], Any]:
    """How to read a simulate argument this module does not know yet, from its default."""
    if isinstance(default, bool):
        return _boolean
    if isinstance(default, int):
        return _integer
    if isinstance(default, float):
        return _number
    return _army  # text, or a JSON object passed through


def simulate_parameters() -> dict[str, Callable[[str, Any], Any]]:
    """Every argument of :func:`battlecalc.simulate` a request may set, with its reader."""
    readers = {}
    for name, parameter in inspect.signature(api.simulate).parameters.items():
        if name in NOT_PARAMETERS or parameter.kind is inspect.Parameter.VAR_KEYWORD:
            continue
        readers[name] = READERS.get(name) or _reader_for_default(parameter.default)
    for name in api.FORMULA_OPTIONS:
        readers[name] = READERS.get(name, _army)
    return readers


def parse_params(raw: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(simulate keyword arguments, server options) from a query string or JSON object.

    Empty values mean "not given" (a form's empty field); unknown names are refused.
    """
    readers = simulate_parameters()
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

# Battle kinds: the army fields each shows, the parameters it sets and the endpoint that
# answers it (a raid kind would bring its own).  `models`: the edition models that have it.
KINDS: list[dict[str, Any]] = [
    {"id": "land", "label": "Land", "models": ["dice"], "armies": ["attacker", "defender"],
     "params": {}, "endpoint": "/api/run"},
    {"id": "sea", "label": "Sea", "models": ["dice"], "armies": ["attacker", "defender"],
     "params": {"sea": True}, "endpoint": "/api/run"},
    {"id": "amphibious", "label": "Amphibious", "models": ["dice"],
     "armies": ["attacker", "landing", "bombard", "defender"], "params": {},
     "endpoint": "/api/run"},
    {"id": "formula", "label": "Formula battle", "models": ["formula"],
     "armies": ["attacker", "defender"], "params": {}, "endpoint": "/api/run"},
]
ARMY_LABELS = {
    "attacker": "Attacker", "defender": "Defender",
    "landing": "Landing from transports", "bombard": "Bombarding ships",
}

# Every form field but the armies.  kind: choice | int | float | bool | text | trials | techs;
# `when` restricts where it shows (edition models, battle kinds, methods); `default` is the
# form's value (a field at its default is left out of the URL and of the request);
# `suggestions` offer values for a text field; `group` is the fieldset it sits in.  A field at
# its default is not sent either, as the default is simulate's, unless `send_default` says the
# form's default differs from simulate's (the seed: a fixed one, so numbers do not jitter).
OPTIONS: list[dict[str, Any]] = [
    {"name": "method", "label": "method", "group": "Method", "kind": "choice",
     "choices": list(api.METHODS), "default": "auto",
     "help": "auto: exact when the battle is small enough, else Monte Carlo"},
    {"name": "trials", "label": "trials", "group": "Method", "kind": "trials",
     "default": str(api.DEFAULT_TRIALS), "when": {"methods": ["auto", "mc"]},
     "help": "Monte Carlo trials (1e6, 1,000,000)"},
    {"name": "seed", "label": "seed", "group": "Method", "kind": "int", "default": "1",
     "send_default": True, "min": 0, "when": {"methods": ["auto", "mc"]},
     "help": "same seed, same numbers; empty: a new random seed each time"},
    {"name": "dice", "label": "dice", "group": "Method", "kind": "choice",
     "choices": ["standard", "low_luck"], "default": "standard", "when": {"models": ["dice"]},
     "help": "low luck: each fire step's strength gives sure hits, one die rolls for the rest"},
    {"name": "rounds_distribution", "label": "law of rounds (exact)", "group": "Method",
     "kind": "bool", "default": False, "when": {"models": ["dice"], "methods": ["auto", "exact"]},
     "help": "the exact solver also computes how many rounds the battle lasts"},
    {"name": "attacker_tech", "label": "attacker", "group": "Technologies", "kind": "techs",
     "default": "", "when": {"models": ["dice"]}},
    {"name": "defender_tech", "label": "defender", "group": "Technologies", "kind": "techs",
     "default": "", "when": {"models": ["dice"]}},
    {"name": "attacker_ool", "label": "attacker order of losses", "group": "Orders of losses",
     "kind": "text", "default": "", "suggestions": list(PRESETS), "when": {"models": ["dice"]},
     "help": "a preset, units to lose first ('bomber,tank') or '*^infantry;*^fighter'"},
    {"name": "defender_ool", "label": "defender order of losses", "group": "Orders of losses",
     "kind": "text", "default": "", "suggestions": list(PRESETS), "when": {"models": ["dice"]}},
    {"name": "keep_land", "label": "attacker keeps last N land units", "group": "Orders of losses",
     "kind": "int", "default": "0", "min": 0, "when": {"kinds": ["land", "amphibious"]}},
    {"name": "aa_last", "label": "defender loses AAA last", "group": "Orders of losses",
     "kind": "bool", "default": False, "when": {"kinds": ["land", "amphibious"]}},
    {"name": "retreat_after", "label": "retreat after round", "group": "Retreat", "kind": "int",
     "default": "", "min": 1, "when": {"models": ["dice"]}},
    {"name": "retreat_when_left", "label": "retreat with units left <=", "group": "Retreat",
     "kind": "int", "default": "", "min": 0, "when": {"models": ["dice"]}},
    {"name": "retreat_when_only_air", "label": "retreat when only aircraft left",
     "group": "Retreat", "kind": "bool", "default": False,
     "when": {"kinds": ["land", "amphibious"]}},
    {"name": "retreat_below", "label": "retreat when chance of winning <", "group": "Retreat",
     "kind": "float", "default": "", "min": 0, "max": 1, "step": 0.05,
     "when": {"models": ["dice"]}},
    {"name": "strafe", "label": "strafe: retreat when defender units <=", "group": "Retreat",
     "kind": "int", "default": "", "min": 0, "when": {"models": ["dice"]}},
    {"name": "attacker_submerge", "label": "attacker subs submerge", "group": "Submarines",
     "kind": "choice", "choices": list(api.SUBMERGE_POLICIES), "default": "never",
     "when": {"kinds": ["sea"]}},
    {"name": "defender_submerge", "label": "defender subs submerge", "group": "Submarines",
     "kind": "choice", "choices": list(api.SUBMERGE_POLICIES), "default": "never",
     "when": {"kinds": ["sea"]}},
    {"name": "attacker_level", "label": "attacker level", "group": "Formula", "kind": "int",
     "default": "1", "min": 1, "max": 10, "when": {"models": ["formula"]}},
    {"name": "defender_level", "label": "defender level", "group": "Formula", "kind": "int",
     "default": "1", "min": 1, "max": 10, "when": {"models": ["formula"]}},
    {"name": "counter", "label": "counter points", "group": "Formula", "kind": "int",
     "default": "0", "min": 0, "when": {"models": ["formula"]}},
    {"name": "hatred", "label": "national hatred (+1)", "group": "Formula", "kind": "bool",
     "default": False, "when": {"models": ["formula"]}},
    {"name": "loss_multiplier", "label": "loss multiplier", "group": "Formula", "kind": "int",
     "default": "1", "min": 1, "max": 10, "when": {"models": ["formula"]}},
    {"name": "exchanges", "label": "exchanges", "group": "Formula", "kind": "text",
     "default": "1", "suggestions": ["1", "2", "3", "until-done"],
     "when": {"models": ["formula"]}},
    {"name": "exchange_cap", "label": "exchange cap (until-done)", "group": "Formula",
     "kind": "int", "default": "", "min": 1, "when": {"models": ["formula"]}},
    {"name": "flips", "label": "flips", "group": "Formula", "kind": "choice",
     "choices": ["", "A2", "A1"], "default": "", "when": {"models": ["formula"]},
     "help": "empty: the edition's rule"},
]

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
    return roles


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
        "flags": dict(ruleset.flags),
        "formula": dict(ruleset.formula) if ruleset.formula is not None else None,
        "roles": _roles(ruleset),
    }


def page_spec(limits: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Everything the page builds its form and results from (JSON-ready)."""
    return {
        "editions": [edition_data(e) for e in list_editions()],
        "kinds": KINDS,
        "army_labels": ARMY_LABELS,
        "options": OPTIONS,
        "outcomes": OUTCOMES,
        "numbers": NUMBERS,
        "limits": dict(limits or {}),
    }
