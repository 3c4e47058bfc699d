"""The enemy's answer: the counter-attack on each territory the plan takes (issue 44).

``max`` (TripleA's AI's own model): a territory taken is counter-attacked by every unit of
every player at war with the mover that can reach it in that player's next turn
(:func:`battlecalc.turn.reach` with ``as_next_turn=True``: the board as it stands, nothing
conquered, that player's units at full movement and with their bases' bonus), on the board
with that territory the mover's and its defenders gone; each player's units join one army.
Land and air units only, as part 1 models them: ships (and their bombardment), transports'
cargo and aircraft on carriers do not counter-attack here.

``alive``: as ``max``, less the units standing where the plan destroys every defender with
probability at least min-win (:meth:`CounterForces.force`'s `without`).

A player with no combat move in the game's sequence (Global 1940's UK_Pacific) never attacks;
a player whose movement the model refuses (fuel, stacking limits) is refused by name.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass

from ..errors import BattleInputError
from .board import TurnInputError


@dataclass(frozen=True)
class CounterSource:
    """`count` enemy units of TripleA type `unit_type` (the edition's `unit`) owned by `owner`
    in `territory` that can reach the front in their next turn."""

    owner: str
    territory: str
    unit_type: str
    unit: str
    count: int


class CounterForces:
    """Each front's counter-attackers under ``max``, found once (:meth:`sources`), and the
    army of ``max`` or ``alive`` (:meth:`force`)."""

    def __init__(self, theatre):
        self.theatre = theatre
        self._sources: dict[str, tuple[CounterSource, ...]] = {}
        self.notes: list[str] = []
        from .board import is_combat_move

        board = theatre.board
        steps = theatre.save.movement.steps
        self.enemies = []
        for other in board.players:
            if other == board.player or not board.relationship(other).war:
                continue
            if not any(u.owner == other for t in board.territories.values() for u in t.units):
                continue
            if not any(is_combat_move(s) and s.player == other for s in steps):
                self.notes.append(f"the {other} have no combat move in the game's sequence: "
                                  "they never counter-attack")
                continue
            self.enemies.append(other)
        self.reaches = 0  # reach computations made (each an enemy's next turn on one board)

    def sources(self, front: str) -> tuple[CounterSource, ...]:
        if front not in self._sources:
            self._sources[front] = self._find(front)
        return self._sources[front]

    def force(self, front: str, without: frozenset = frozenset()) -> dict:
        """The counter-attacking army on `front` (edition names, the edition's order), less
        the units standing in the territories of `without`."""
        counts: Counter = Counter()
        for source in self.sources(front):
            if source.territory not in without:
                counts[source.unit] += source.count
        return {u: counts[u] for u in self.theatre.ruleset.units if counts.get(u)}

    def owners(self, front: str, without: frozenset = frozenset()) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s.owner for s in self.sources(front)
                                   if s.territory not in without))

    def _find(self, front: str) -> tuple[CounterSource, ...]:
        from ..triplea.game import edition_unit
        from .loading import reach

        theatre = self.theatre
        board = theatre.board
        movement = theatre.save.movement
        place = movement.territories[front]
        # the front taken: the mover's, its defenders (every unit at war with the mover) gone
        kept = tuple(u for u in place.units if u.owner == board.player
                     or not board.relationship(u.owner).war)
        taken = dataclasses.replace(movement, territories={
            **movement.territories, front: dataclasses.replace(place, units=kept)})
        found = []
        for enemy in self.enemies:
            try:
                enemy_reach = reach(taken, enemy, as_next_turn=True,
                                    owners={front: board.player})
            except TurnInputError as exc:
                raise TurnInputError(f"the counter-attack of the {enemy}: {exc}") from None
            self.reaches += 1
            for c in enemy_reach.classes:
                uc = c.unit_class
                if c.unsupported is not None or front not in c.targets:
                    continue
                try:
                    unit = edition_unit(uc.unit_type, 0, theatre.ruleset)
                except BattleInputError as exc:
                    raise TurnInputError(f"the counter-attack of the {enemy} on {front}: "
                                         f"{exc}") from None
                if unit is not None:
                    found.append(CounterSource(enemy, uc.territory, uc.unit_type, unit,
                                               uc.count))
        return tuple(found)
