"""The leaves of the plan: each candidate battle solved exactly, through
:func:`battlecalc.solve_many`, and kept (:class:`Leaves`, memoised per front, force and
counter force).

A leaf is the battle a force fights on a front (with the front's committed units), and, where
the counter model asks for one, the counter-attack on the land units holding the territory
taken, chained on the law of the attack's survivors as ``simulate(..., counterattack=...)``
chains it (the engine's waves: captured AA guns where the rules keep them; aircraft have
left).  An empty territory is no battle: a force with a land unit takes it (P(take) 1, swing
0), and its counter-attack is the battle of the counter force against those land units
(every one of them walked in), fought as a counter-attack is (default orders of losses, no
retreat, the counter side's technologies).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Leaf:
    """One candidate battle's answer.  Probabilities and expected IPC, the attack alone
    (`p_win`, `p_take`, `swing`: the defender's expected IPC loss minus the attacker's, at
    the edition's costs) and with the counter-attack (`p_hold`: taken and not retaken;
    `swing_all`: both battles' losses), None without a counter-attack model."""

    p_win: float
    p_take: float
    p_destroyed: float  # every defender destroyed (the attacker wins, or both sides die)
    swing: float
    attacker_loss: float
    defender_loss: float
    p_hold: float | None = None
    swing_all: float | None = None
    battle: bool = True  # a battle was fought (False: an empty territory walked into)


Counter = tuple  # ((unit, n), ...) of a counter-attacking army, () for none
Force = tuple  # counts over Theatre.types


class Leaves:
    """The leaves of one plan, solved in batches through solve_many and kept."""

    def __init__(self, theatre, progress: Callable[[str], None] | None = None,
                 counter_owners: Callable[[str], tuple] | None = None):
        self.theatre = theatre
        # the players who counter-attack a front (their technologies join the defender's)
        self.counter_owners = counter_owners or (lambda front: ())
        self.memo: dict[tuple, Leaf] = {}
        self.solves = 0  # leaves solved (each a battle, or a battle and its counter-attack)
        self.battles = 0  # battles solve_many was given
        self.seconds = 0.0  # spent in solve_many
        self.progress = progress

    @staticmethod
    def key(front: str, force: Force, counter: Counter | None) -> tuple:
        return (front, force, counter)

    def get(self, front: str, force: Force, counter: Counter | None = None) -> Leaf:
        return self.memo[(front, force, counter)]

    def known(self, front: str, force: Force, counter: Counter | None = None) -> bool:
        return (front, force, counter) in self.memo

    def solve(self, wanted: Iterable[tuple]) -> int:
        """Solve the (front, force, counter) leaves not yet known, together (one solve_many
        call); counter None: no counter model, () a counter model and nobody to
        counter-attack.  Returns how many were new."""
        from ..batch import solve_many
        from ..errors import collected_warnings

        theatre = self.theatre
        new, battles, places = [], [], []
        seen = set()
        for front_name, force, counter in wanted:
            key = (front_name, tuple(force), counter)
            if key in self.memo or key in seen:
                continue
            seen.add(key)
            front = theatre.fronts[front_name]
            battle = self._battle(front, key[1], counter)
            new.append(key)
            if battle is None:
                places.append(None)
            else:
                places.append(len(battles))
                battles.append(battle)
        if not new:
            return 0
        rows = None
        if battles:
            started = time.perf_counter()
            with collected_warnings():  # (a technology one side cannot use: no matter here)
                rows = solve_many(battles)
            self.seconds += time.perf_counter() - started
            self.battles += len(battles)
            rows = {name: rows[name].to_numpy() for name in rows.columns
                    if name in _COLUMNS}
        for key, place in zip(new, places, strict=True):
            self.memo[key] = self._leaf(theatre.fronts[key[0]], key[1], key[2], rows, place)
        self.solves += len(new)
        if self.progress is not None:
            self.progress(f"{self.solves:,} battles solved")
        return len(new)

    # ------------------------------------------------------------ one battle

    def _battle(self, front, force: Force, counter: Counter | None) -> dict | None:
        """solve_many's battle for a leaf (None: no battle is fought)."""
        theatre = self.theatre
        army = theatre.army(front, force)
        options = theatre.battle_options(front)
        if counter:
            tech = _counter_tech(theatre, front, self.counter_owners(front.name))
            if tech:
                options["defender_tech"] = list(tech)
        if not front.empty:
            battle = {"attacker": army, "defender": dict(front.defender), **options}
            if counter:
                battle["counterattack"] = dict(counter)
            return battle
        if not counter:
            return None
        occupiers = _land(theatre, army)
        if not occupiers:
            return None
        # the counter-attack on the units that walked in, as waves fight one (the counter
        # side's technologies attack, the mover's defend; default orders, no retreat)
        battle = {"attacker": dict(counter), "defender": occupiers, **options}
        battle.pop("attacker_tech", None)
        battle.pop("defender_tech", None)
        if options.get("defender_tech"):
            battle["attacker_tech"] = options["defender_tech"]
        if theatre.attacker_tech:
            battle["defender_tech"] = list(theatre.attacker_tech)
        return battle

    def _leaf(self, front, force: Force, counter: Counter | None, rows, place) -> Leaf:
        theatre = self.theatre
        has_land = theatre.has_land(front, force)
        if front.empty:
            take = 1.0 if has_land else 0.0
            if counter is None:
                return Leaf(take, take, 1.0, 0.0, 0.0, 0.0, battle=False)
            if place is None:  # nobody counter-attacks (or nothing holds it)
                return Leaf(take, take, 1.0, 0.0, 0.0, 0.0, take, 0.0, battle=False)
            retakes = float(rows["takes_territory"][place])
            lost_enemy = float(rows["attacker_ipc_loss"][place])
            lost_mine = float(rows["defender_ipc_loss"][place])
            return Leaf(take, take, 1.0, 0.0, 0.0, 0.0, take * (1.0 - retakes),
                        lost_enemy - lost_mine, battle=False)
        if counter:
            get = _getter(rows, place, "wave1.")
            take = get("takes_territory")
            return Leaf(get("attacker_win"), take, get("attacker_win") + get("draw"),
                        get("defender_ipc_loss") - get("attacker_ipc_loss"),
                        get("attacker_ipc_loss"), get("defender_ipc_loss"),
                        float(rows["holds"][place]), float(rows["tuv_swing"][place]))
        get = _getter(rows, place, "")
        leaf = Leaf(get("attacker_win"), get("takes_territory"),
                    get("attacker_win") + get("draw"), get("tuv_swing"),
                    get("attacker_ipc_loss"), get("defender_ipc_loss"))
        if counter is not None:  # a counter model with nobody to counter-attack
            leaf = Leaf(*_fields(leaf)[:6], p_hold=leaf.p_take, swing_all=leaf.swing)
        return leaf


_COLUMNS = frozenset({
    "attacker_win", "draw", "takes_territory", "tuv_swing", "attacker_ipc_loss",
    "defender_ipc_loss", "holds", "wave1.attacker_win", "wave1.draw", "wave1.takes_territory",
    "wave1.attacker_ipc_loss", "wave1.defender_ipc_loss"})


def _getter(rows, place: int, prefix: str):
    def get(name: str) -> float:
        value = float(rows[prefix + name][place])
        if np.isnan(value):  # pragma: no cover - every row has its columns
            raise AssertionError(f"solve_many gave no {prefix + name}")
        return value

    return get


def _fields(leaf: Leaf) -> tuple:
    return (leaf.p_win, leaf.p_take, leaf.p_destroyed, leaf.swing, leaf.attacker_loss,
            leaf.defender_loss)


def _land(theatre, army: dict) -> dict:
    units = theatre.ruleset.units
    return {u: n for u, n in army.items() if units[u].domain == "land"}


def _counter_tech(theatre, front, owners: tuple) -> tuple:
    """The defender side's technologies in a battle with a counter-attack: the defending
    nations' and the counter-attacking nations' (simulate plays a counter-attack with the
    defender side's technologies)."""
    from .theatre import techs_of

    return techs_of((*front.defender_nations, *owners), theatre.save.save, theatre.ruleset)
