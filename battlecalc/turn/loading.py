"""A save read once for the turn (:class:`TurnSave`, :func:`load`) and a player's reach on it
(:func:`reach`), re-exported by battlecalc.turn (a module of its own: the planner's modules
import them without importing the package's __init__)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import BattleInputError, quoted
from .board import board_for
from .reach import Reach, reach_of


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
