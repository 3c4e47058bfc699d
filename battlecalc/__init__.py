"""battlecalc: battle odds for Axis & Allies-family games, exact where feasible, Monte Carlo
(numba) where not."""

from .api import Battle, make_battle, simulate
from .army import format_army, parse_army
from .errors import BattleInputError
from .results import Result
from .rules import list_editions, load_rules
from .sweep import sweep  # the function; the module stays importable as battlecalc.sweep

__all__ = [
    "Battle",
    "BattleInputError",
    "Result",
    "format_army",
    "list_editions",
    "load_rules",
    "make_battle",
    "parse_army",
    "simulate",
    "sweep",
]
__version__ = "0.1.0"
