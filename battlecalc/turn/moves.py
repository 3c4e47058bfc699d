"""A list of moves checked against the movement model: :func:`check_moves`.

A move is ``{"unit": TripleA unit type, "count": n, "from": territory, "to": territory}``:
`count` units of that type leave `from` for `to` in the player's combat move.  The moves are
legal together when the units they need exist -- each unit moves once, uncommitted, of a class
(:class:`~battlecalc.turn.reach.UnitClass`) that may attack `to` (its reach lists `to`) -- and
every unit whose route needs an escort (receivesAbilityWhenWith: a mechanized infantry that
blitzes with an armour) has one of its givers moving from the same territory to the same one
with the movement that route takes (TripleA makes such units one move, one route).

Each move is checked on the board the reach was computed on; moves do not block one another in
TripleA's combat move (a blitz takes empty territory, which other units may then pass, and
aircraft land where they could at the start of the turn), so their order does not matter.
Units are given to moves by a maximum flow from the classes to the moves.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..errors import BattleInputError, quoted
from .reach import Reach

MOVE_KEYS = ("unit", "count", "from", "to")
MAX_MOVES = 10_000


@dataclass(frozen=True)
class Move:
    unit: str
    count: int
    origin: str
    to: str

    def to_dict(self) -> dict:
        return {"unit": self.unit, "count": self.count, "from": self.origin, "to": self.to}


@dataclass(frozen=True)
class MoveCheck:
    """`legal`: every move may be made; `problems`: one line per move that may not (its index
    first); `supplied`: per move, the classes (keys) that supply its units and how many."""

    legal: bool
    problems: tuple[str, ...]
    supplied: tuple[dict, ...]


def parse_moves(moves: Iterable[Mapping]) -> list[Move]:
    """Moves from their dicts, each checked to have exactly the four keys, a whole positive
    count and texts (BattleInputError naming the move otherwise)."""
    if isinstance(moves, str | bytes | Mapping) or not isinstance(moves, Iterable):
        raise BattleInputError(f"moves: expected a list of moves, got {quoted(moves)}")
    found = []
    for i, move in enumerate(moves):
        if i >= MAX_MOVES:
            raise BattleInputError(f"moves: more than {MAX_MOVES:,} moves")
        if not isinstance(move, Mapping) or set(move) != set(MOVE_KEYS):
            raise BattleInputError(f"moves[{i}]: expected an object with the keys "
                                   f"{', '.join(MOVE_KEYS)}, got {quoted(move)}")
        count = move["count"]
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise BattleInputError(f"moves[{i}].count: expected a whole number of units, 1 or "
                                   f"more, got {quoted(count)}")
        for key in ("unit", "from", "to"):
            if not isinstance(move[key], str):
                raise BattleInputError(f"moves[{i}].{key}: expected text, got "
                                       f"{quoted(move[key])}")
        found.append(Move(move["unit"], count, move["from"], move["to"]))
    return found


def check_moves(reach: Reach, moves: Iterable[Mapping]) -> MoveCheck:
    """Whether `moves` (a list of ``{"unit", "count", "from", "to"}``) are legal together for
    the reach's player on the reach's board (module documentation)."""
    parsed = parse_moves(moves)
    board = reach.board
    problems: list[str] = []
    supplied: list[dict] = [{} for _ in parsed]
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, move in enumerate(parsed):
        where = f"moves[{i}] ({move.count} {move.unit} {move.origin} -> {move.to})"
        if move.origin not in board.territories:
            problems.append(f"{where}: no territory {quoted(move.origin)}")
        elif move.to not in board.territories:
            problems.append(f"{where}: no territory {quoted(move.to)}")
        elif move.unit not in board.unit_types:
            problems.append(f"{where}: no unit type {quoted(move.unit)}")
        elif not reach.find(move.origin, move.unit):
            problems.append(f"{where}: the {board.player} have no {move.unit} there")
        else:
            groups[(move.origin, move.unit)].append(i)
    for (origin, unit), indices in groups.items():
        classes = reach.find(origin, unit)
        _supply(board, parsed, indices, classes, problems, supplied)
    _check_escorts(reach, parsed, supplied, problems)
    problems.sort(key=lambda line: int(line.split("]", 1)[0].split("[", 1)[1]))
    return MoveCheck(legal=not problems, problems=tuple(problems), supplied=tuple(supplied))


def _supply(board, moves, indices, classes, problems, supplied) -> None:
    """Give the group's moves units of the classes that reach their targets (a maximum flow;
    classes needing no escort for a target first)."""
    for i in indices:
        move = moves[i]
        able = [c for c in classes if c.unsupported is None and move.to in c.targets]
        if not able:
            why = _why_not(board, move, classes)
            problems.append(f"moves[{i}] ({move.count} {move.unit} {move.origin} -> "
                            f"{move.to}): {why}")
    feasible = [i for i in indices if any(c.unsupported is None and moves[i].to in c.targets
                                          for c in classes)]
    usable = [c for c in classes if c.unsupported is None and not c.unit_class.committed]
    edges = {i: [c.unit_class.key for c in usable if moves[i].to in c.targets]
             for i in feasible}
    capacity = {c.unit_class.key: c.unit_class.count for c in usable}
    flow = _max_flow({i: moves[i].count for i in feasible}, edges, capacity)
    for i in feasible:
        got = {key: n for (j, key), n in sorted(flow.items()) if j == i and n}
        supplied[i] = got
        short = moves[i].count - sum(got.values())
        if short:
            have = sum(capacity[key] for key in edges[i])
            problems.append(f"moves[{i}] ({moves[i].count} {moves[i].unit} {moves[i].origin} "
                            f"-> {moves[i].to}): {short} more than the {have} {moves[i].unit} "
                            f"there that can reach it, the other moves served")


def _max_flow(demand: dict, edges: dict, capacity: dict) -> dict:
    """{(move, class): units} of a maximum flow from the moves (each wanting `demand`) to the
    classes (each holding `capacity`), along `edges` (the classes that reach a move's target):
    augmenting paths found breadth first (Edmonds-Karp), one unit at a time."""
    flow: dict[tuple, int] = defaultdict(int)
    sent: dict = defaultdict(int)  # per move
    held: dict = defaultdict(int)  # per class
    while True:
        start = [("move", i) for i in demand if sent[i] < demand[i]]
        parent = {node: None for node in start}
        queue, end = list(start), None
        while queue and end is None:
            node = queue.pop(0)
            kind, name = node
            if kind == "move":
                for key in edges[name]:
                    nxt = ("class", key)
                    if nxt not in parent:
                        parent[nxt] = node
                        if held[key] < capacity[key]:
                            end = nxt
                            break
                        queue.append(nxt)
            else:  # a full class: a unit it gives a move may go to another class's
                for (i, key), n in list(flow.items()):
                    nxt = ("move", i)
                    if key == name and n > 0 and nxt not in parent:
                        parent[nxt] = node
                        queue.append(nxt)
        if end is None:
            return flow
        held[end[1]] += 1
        node = end
        while parent[node] is not None:
            before = parent[node]
            if node[0] == "class":
                flow[(before[1], node[1])] += 1
            else:
                flow[(node[1], before[1])] -= 1
            node = before
        sent[node[1]] += 1


def _why_not(board, move, classes) -> str:
    if all(c.unsupported for c in classes):
        return f"unsupported: {classes[0].unsupported}"
    if all(c.unit_class.committed for c in classes):
        return "those units are committed to the battle there"
    if move.to == move.origin:
        return "not a move"
    return (f"not a territory the {move.unit} there may attack (their reach: "
            f"{', '.join(sorted({t for c in classes for t in c.targets})) or 'none'})")


def _check_escorts(reach: Reach, moves: list[Move], supplied: list[dict],
                   problems: list[str]) -> None:
    """Units whose target needs an escort: at least as many givers on the same from -> to,
    each with the movement the route takes."""
    by_key = {c.unit_class.key: c for c in reach.classes}
    needs: dict[tuple, list] = defaultdict(list)  # (from, to, escort types) -> [(i, n, steps)]
    for i, move in enumerate(moves):
        for key, n in supplied[i].items():
            target = by_key[key].targets.get(move.to)
            if target is not None and target.escort:
                needs[(move.origin, move.to, target.escort)].append((i, n, target.movement))
    for (origin, to, escort), receivers in needs.items():
        steps = max(s for _, _, s in receivers)
        givers = sum(count for j, other in enumerate(moves)
                     if other.origin == origin and other.to == to and other.unit in escort
                     for key, count in supplied[j].items()
                     if by_key[key].unit_class.movement_left >= steps)
        wanted = sum(n for _, n, _ in receivers)
        if givers < wanted:
            i = receivers[0][0]
            problems.append(
                f"moves[{i}] ({moves[i].count} {moves[i].unit} {origin} -> {to}): {wanted} "
                f"of the units moving there blitz only with one {' or '.join(escort)} each "
                f"moving along (receivesAbilityWhenWith), and {givers} do")
