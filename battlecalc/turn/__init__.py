"""The turn: every legal attack of a player in a TripleA save's combat move (issue 41), the
ground of the turn planner (issue 44).  No kernels: plain Python over the board.

The API (docs/turn.md says it with examples):

* :func:`load` reads a save once (its object stream within the save reader's budget) into a
  :class:`TurnSave`: ``.save`` (battlecalc.triplea.save.SaveData: the game, units, battles) and
  ``.movement`` (battlecalc.triplea.movement.MovementSave: what movement reads);
* :func:`reach` gives a player's :class:`~battlecalc.turn.reach.Reach`: its unit classes
  (:class:`~battlecalc.turn.reach.UnitClass`: place, TripleA unit type, count, movement left,
  committed or not) and for each every target it may attack
  (:class:`~battlecalc.turn.reach.Target`: the movement it needs, a shortest legal route, the
  landing of aircraft, an escort where one is needed), or why the class is not modelled;
  ``as_next_turn=True`` gives any player's reach as at the start of its next turn (the
  counter-attack), ``owners=`` changes owners first (the territories a plan takes);
* :func:`check_moves` checks a list of moves ``[{"unit", "count", "from", "to"}]`` together;
* :func:`turn_reach` (``battlecalc.turn_reach``) is ``reach(load(save), player)``.

Everything this cannot plan from is one :class:`~battlecalc.errors.BattleInputError` line.
"""

from __future__ import annotations

from ..errors import BattleInputError, quoted
from .board import Board, TurnInputError, board_for
from .loading import TurnSave, load, reach
from .moves import Move, MoveCheck, check_moves, parse_moves
from .reach import ClassReach, Reach, Target, UnitClass, reach_of  # noqa: F401

__all__ = ["Board", "ClassReach", "Move", "MoveCheck", "Reach", "Target", "TurnInputError",
           "TurnPlan", "TurnSave", "UnitClass", "board_for", "check_moves", "load",
           "parse_moves", "plan_turn", "reach", "turn_reach"]


def turn_reach(save, player: str | None = None) -> Reach:
    """Every legal attack of `player` (default: the save's player to move) in the TripleA
    save at `save`, per class of units: ``turn_reach(path).mapping()`` is ``battlecalc turn
    SAVE --reach --format json``."""
    if player is not None and not isinstance(player, str):
        raise BattleInputError(f"player: expected a player's name, got {quoted(player)}")
    return reach(save, player)


def plan_turn(save, player: str | None = None, **options):
    """The combat move worth the most (battlecalc.turn.plan.plan_turn: its options and
    model); ``battlecalc.plan_turn``."""
    from .plan import plan_turn as planned

    return planned(save, player, **options)


def __getattr__(name: str):
    if name == "TurnPlan":
        from .plan import TurnPlan

        return TurnPlan
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


