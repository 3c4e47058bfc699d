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

from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import BattleInputError, quoted
from .board import Board, TurnInputError, board_for
from .moves import Move, MoveCheck, check_moves, parse_moves
from .reach import ClassReach, Reach, Target, UnitClass, reach_of

__all__ = ["Board", "ClassReach", "Move", "MoveCheck", "Reach", "Target", "TurnInputError",
           "TurnSave", "UnitClass", "board_for", "check_moves", "load", "parse_moves",
           "reach", "turn_reach"]


@dataclass(frozen=True)
class TurnSave:
    """A save read once: its battles' view (`save`) and its movement's (`movement`)."""

    path: str
    save: object  # battlecalc.triplea.save.SaveData
    movement: object  # battlecalc.triplea.movement.MovementSave


def load(path, max_inflated: int | None = None) -> TurnSave:
    """Read the TripleA save at `path` once, within the save reader's budget (BattleInputError
    for anything that is not a readable save); `max_inflated`: a lower cap on the
    decompressed stream (the web server's)."""
    import os

    from ..triplea.movement import movement_of_objects
    from ..triplea.save import MAX_STREAM_BYTES, _objects, save_of_objects

    if not isinstance(path, str | os.PathLike):
        raise BattleInputError(f"save: expected the path of a TripleA save, got {quoted(path)}")
    objects = _objects(path, MAX_STREAM_BYTES if max_inflated is None else max_inflated)
    return TurnSave(str(path), save_of_objects(objects, path),
                    movement_of_objects(objects, path))


def reach(save, player: str | None = None, *, as_next_turn: bool = False,
          owners: Mapping[str, str] | None = None) -> Reach:
    """The legal attacks of `player` (default: the save's player to move) in `save` (a
    TurnSave, a MovementSave or a path).  as_next_turn: as at the start of the player's next
    turn, the board as it stands (nothing conquered, no battle pending, the player's units at
    full movement with their bases' bonus); owners: {territory: player} set first."""
    movement = _movement(save)
    if not isinstance(as_next_turn, bool):
        raise BattleInputError(f"as_next_turn: expected True or False, got "
                               f"{quoted(as_next_turn)}")
    if owners is not None and not isinstance(owners, Mapping):
        raise BattleInputError(f"owners: expected {{territory: player}}, got {quoted(owners)}")
    board = board_for(movement, player, as_next_turn=as_next_turn, owners=owners)
    return reach_of(board)


def turn_reach(save, player: str | None = None) -> Reach:
    """Every legal attack of `player` (default: the save's player to move) in the TripleA
    save at `save`, per class of units: ``turn_reach(path).mapping()`` is ``battlecalc turn
    SAVE --reach --format json``."""
    if player is not None and not isinstance(player, str):
        raise BattleInputError(f"player: expected a player's name, got {quoted(player)}")
    return reach(save, player)


def _movement(save):
    import os

    from ..triplea.movement import MovementSave, read_movement

    if isinstance(save, TurnSave):
        return save.movement
    if isinstance(save, MovementSave):
        return save
    if not isinstance(save, str | os.PathLike):
        raise BattleInputError(f"save: expected the path of a TripleA save, got {quoted(save)}")
    return read_movement(save)
