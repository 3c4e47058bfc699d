"""battlecalc: battle odds for Axis & Allies-family games, exact where feasible, Monte Carlo
(numba) where not.

The public names load on first use (PEP 562), so that ``import battlecalc.cli`` (and with it
``battlecalc --help``) does not pay for numba, numpy and pandas.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

_PUBLIC = {
    "Battle": "api",
    "make_battle": "api",
    "simulate": "waves",
    "solve_many": "batch",
    "set_threads": "api",
    "thread_count": "api",
    "format_army": "army",
    "parse_army": "army",
    "BattleInputError": "errors",
    "Result": "results",
    "RaidResult": "raids",
    "raid": "raids",
    "list_editions": "rules",
    "load_rules": "rules",
    "load_rules_file": "rules",
    "RULE_FLAGS": "rules",
    "plan": "planner",
    "sweep": "sweeper",
    "read_game": "triplea",
    "turn_reach": "turn",
    "plan_turn": "turn",
}

__all__ = [
    "Battle",
    "BattleInputError",
    "RaidResult",
    "RULE_FLAGS",
    "Result",
    "format_army",
    "list_editions",
    "load_rules",
    "load_rules_file",
    "make_battle",
    "parse_army",
    "plan",
    "plan_turn",
    "raid",
    "read_game",
    "set_threads",
    "simulate",
    "solve_many",
    "sweep",
    "thread_count",
    "turn_reach",
]
__version__ = "0.1.0"

if TYPE_CHECKING:  # pragma: no cover - for type checkers and editors only
    from .api import Battle, make_battle, set_threads, thread_count
    from .army import format_army, parse_army
    from .batch import solve_many
    from .errors import BattleInputError
    from .planner import plan
    from .raids import RaidResult, raid
    from .results import Result
    from .rules import RULE_FLAGS, list_editions, load_rules, load_rules_file
    from .sweeper import sweep
    from .triplea import read_game
    from .turn import plan_turn, turn_reach
    from .waves import simulate


def __getattr__(name: str):
    if name in _PUBLIC:
        value = getattr(importlib.import_module(f".{_PUBLIC[name]}", __name__), name)
        globals()[name] = value  # later look-ups skip this function
        return value
    try:  # submodules: battlecalc.api, battlecalc.rules, ... after a bare `import battlecalc`
        return importlib.import_module(f".{name}", __name__)
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_PUBLIC))
