"""Every legal attack of a player's units in a combat move, as TripleA's validators allow it
(MoveValidator.validateMove in a combat move and AirMovementValidator.validateAirCanLand),
land and air units only.  The rules are those of TripleA's releases 2.0 to 2.6 (the shared
saves are 2.0); where its newest source differs, the released rule is kept (docs/turn.md).

The player's units are grouped in classes (:class:`UnitClass`): the units of one type in one
territory with the same movement left (and the same state: committed to a battle or not).
For each class, every territory it may attack (:class:`Target`): a land territory owned by a
nation the player is at war with, or one holding units of such a nation; for aircraft also a
sea zone holding such units.  The movement a target needs is the shortest legal route's cost
(each step costs 1: territory effects on movement are refused by board.py), for aircraft the
way out plus the shortest way back to a territory where they may land.

A route of a land unit is legal when (the TripleA checks in brackets):

* every step is land the player's land units may move over (validateFirstRoute:
  canMoveLandUnitsOverOwnedLand), may enter in a combat move (validateCombat:
  canMoveIntoDuringCombatMove), is not impassable (validateBasic), is no neutral under
  "Neutrals Are Impassable" (validateBasic: "Cannot violate neutrality"), and keeps to the
  movement restriction ("Movement By Territory Restricted", the start included);
* every middle step holds no enemy unit but infrastructure (validateNonEnemyUnitsOnPath), was
  not conquered this turn without a blitz, is no neutral unless neutrals are blitzable
  ("Neutrals Are Blitzable" and not "Neutrals Are Impassable":
  nonAirPassingThroughNeutralTerritory), and, where it is enemy or conquered, is blitzable
  (territoryIsBlitzable: empty of enemy units, the factories and AA guns included under "WW2V2"
  or "Blitz Through Factories And AA Restricted");
* a unit that cannot blitz (canBlitz, a technology's ability, or receivesAbilityWhenWith with
  its giver moving along) passes only friendly middle steps not fought over this turn, from a
  start not conquered this turn, and not after a battle (wasInCombat);
* from a start owned by an enemy, or a friendly start with enemy units in it (not blitzable),
  a route into enemy territory is refused where it has no middle step or an enemy one
  (validateCombat: the contested start), unless "All Units Can Attack From Contested
  Territories";
* the empty neutrals on it cost ``neutralCharge`` each, paid from the player's PUs
  (canPayToCrossNeutralTerritory); the unit has the movement (validateBasic).

An aircraft's route: every step may be flown over (canMoveAirUnitsOverOwnedLand), entered in a
combat move, is passable, no neutral under "Neutrals Are Impassable", and keeps to the
restriction; no neutral middle step unless "Neutral Flyover Allowed" and not "Neutrals Are
Impassable"; canals closed to its type stop it
(validateCanal); its movement, plus 1 for each end with an air base (TerritoryAttachment
airBase), covers the way out; and where the target is no territory it may land in, the
movement left after the way out covers the way back to one (canFindLand): land owned by the
player or a nation whose land its aircraft may fly over and land on (airCanLandOn...), not
conquered this turn.

Refused by name, per class ("unsupported: ..."): sea units, units carried by a transport or a
carrier, aircraft at sea, kamikaze and suicide units, units that need others to move
(requiresUnitsToMove), units that may ride land or air transports (mechanized infantry,
paratroopers); and per target, attacks an aircraft could only make by landing on a carrier.
"""

from __future__ import annotations

import dataclasses
import json
from collections import defaultdict
from dataclasses import dataclass, field

from .board import Board


@dataclass(frozen=True)
class UnitClass:
    """Units of one type in one territory with the same movement left and state.  `key` is
    "TERRITORY / TYPE xN" (TripleA's names), with the movement left and the state added where
    one territory holds more than one class of a type; `units` are the units' keys."""

    key: str
    territory: str
    unit_type: str
    count: int
    movement_left: int
    kind: str  # "land", "air" or "sea"
    committed: bool = False
    units: tuple[int, ...] = ()


@dataclass(frozen=True)
class Target:
    """A territory a class may attack.  `movement`: what it needs; `route`: a shortest legal
    way there (start first); for aircraft `landing` and `back`: the nearest territory to land
    in and its distance (None, 0: the target itself is one); `escort`: unit types one of
    which must move along the same route, one per unit (receivesAbilityWhenWith)."""

    territory: str
    movement: int
    route: tuple[str, ...]
    landing: str | None = None
    back: int = 0
    escort: tuple[str, ...] = ()


@dataclass(frozen=True)
class ClassReach:
    unit_class: UnitClass
    targets: dict = field(default_factory=dict)  # territory -> Target
    unsupported: str | None = None  # why the class is not modelled
    notes: tuple[str, ...] = ()  # targets left out, with why


@dataclass(frozen=True)
class Reach:
    """A player's classes and the legal attacks of each (see the module's documentation)."""

    board: Board
    classes: tuple[ClassReach, ...]

    @property
    def player(self) -> str:
        return self.board.player

    def mapping(self) -> dict:
        """{class key: {target: movement needed}} of the classes modelled (`turn --reach
        --format json`)."""
        return {c.unit_class.key: {t: target.movement for t, target in sorted(c.targets.items())}
                for c in self.classes if c.unsupported is None}

    def unsupported(self) -> list[tuple[str, str]]:
        """(class key, why) of every class not modelled, and of every note of a class."""
        found = [(c.unit_class.key, c.unsupported) for c in self.classes if c.unsupported]
        found += [(c.unit_class.key, note) for c in self.classes for note in c.notes]
        return found

    def find(self, territory: str, unit_type: str) -> list[ClassReach]:
        return [c for c in self.classes if c.unit_class.territory == territory
                and c.unit_class.unit_type == unit_type]

    def to_dict(self) -> dict:
        b = self.board
        return {"game": b.game, "round": b.round, "step": b.step, "player": b.player,
                "moment": b.moment, "reach": self.mapping(),
                "classes": [_class_dict(c) for c in self.classes],
                "unsupported": [{"class": k, "why": w} for k, w in self.unsupported()],
                "notes": list(b.notes)}

    def to_json(self) -> str:
        return json.dumps(self.mapping(), indent=2, ensure_ascii=False)

    def table(self) -> str:
        b = self.board
        lines = [f"{b.game}, round {b.round}, step {b.step}: the {b.player}' attacks "
                 f"({b.moment})"]
        for c in self.classes:
            uc = c.unit_class
            head = f"  {uc.key}"
            if c.unsupported:
                lines.append(f"{head}: unsupported: {c.unsupported}")
                continue
            if not c.targets:
                why = "committed to its battle" if uc.committed else (
                    "no movement left" if uc.movement_left <= 0 else "no target")
                lines.append(f"{head}: {why}")
            else:
                parts = [f"{t} {target.movement}" + (
                    f" (with {' or '.join(target.escort)})" if target.escort else "")
                    for t, target in sorted(c.targets.items())]
                lines.append(f"{head} ({uc.movement_left} left): " + ", ".join(parts))
            for note in c.notes:
                lines.append(f"    unsupported: {note}")
        for note in b.notes:
            lines.append(f"  note: {note}")
        return "\n".join(lines) + "\n"


def _class_dict(c: ClassReach) -> dict:
    uc = c.unit_class
    return {"key": uc.key, "territory": uc.territory, "unit": uc.unit_type, "count": uc.count,
            "movement_left": uc.movement_left, "kind": uc.kind, "committed": uc.committed,
            "unsupported": c.unsupported, "notes": list(c.notes),
            "targets": {t: {"movement": x.movement, "route": list(x.route),
                            "landing": x.landing, "back": x.back, "escort": list(x.escort)}
                        for t, x in sorted(c.targets.items())}}


# ---------------------------------------------------------------- classes


def unit_classes(board: Board) -> list[UnitClass]:
    """The player's units grouped by territory, type, movement left and state."""
    groups: dict[tuple, list] = defaultdict(list)
    for name, t in board.territories.items():
        for u in t.units:
            if u.owner != board.player:
                continue
            left = board.movement_left(u)
            state = (u.committed, u.transported, u.was_in_combat, board.is_disabled(u))
            groups[(name, u.type, left, state)].append(u.key)
    by_place = defaultdict(list)
    for (name, kind, left, state), keys in groups.items():
        by_place[(name, kind)].append((left, state, keys))
    classes = []
    for (name, type_name), found in by_place.items():
        found.sort(key=lambda item: (-item[0], item[1]))
        for left, state, keys in found:
            if left != int(left):
                from .board import TurnInputError

                raise TurnInputError(f"a {type_name} in {name} has {left} movement left, not a "
                                     "whole number: fractional movement is not modelled")
            key = f"{name} / {type_name} x{len(keys)}"
            if len(found) > 1:
                extra = [f"{int(left)} left"]
                extra += [word for flag, word in zip(state, (
                    "committed", "carried", "after combat", "disabled"), strict=True) if flag]
                key += f" ({', '.join(extra)})"
            kind = board.unit_type(type_name)
            classes.append(UnitClass(
                key=key, territory=name, unit_type=type_name, count=len(keys),
                movement_left=int(left),
                kind="sea" if kind.is_sea else "air" if kind.is_air else "land",
                committed=state[0], units=tuple(keys)))
    keys_seen: dict[str, int] = defaultdict(int)
    unique = []
    for c in classes:  # (two classes alike in every shown part: numbered)
        keys_seen[c.key] += 1
        if keys_seen[c.key] > 1:
            c = dataclasses.replace(c, key=f"{c.key} #{keys_seen[c.key]}")
        unique.append(c)
    order = {name: i for i, name in enumerate(board.territories)}
    unique.sort(key=lambda c: (order[c.territory], c.unit_type, -c.movement_left, c.key))
    return unique


# ---------------------------------------------------------------- the rules


def attack_target(board: Board, name: str, air: bool) -> bool:
    """A territory whose entry is an attack: enemy land, or units of a nation at war with the
    player (a sea zone only for aircraft)."""
    t = board.territories[name]
    if t.water:
        return air and board.has_enemy_units(name)
    return board.enemy_territory(name) or board.has_enemy_units(name)


def _empty_neutral(board: Board, name: str) -> bool:
    """MoveDelegate.getEmptyNeutral's test: no unit at all, land owned by the null player."""
    return board.neutral_land(name) and not board.territories[name].units


def _search(board: Board, start: str, limit: int, step_ok, middle_ok, *, end_ok=None,
            edge_ok=None, neutral_budget: int | None = None) -> dict:
    """{territory: (steps, route)} of the shortest routes from `start` (at most `limit`
    steps) whose every step passes step_ok(t), whose middle steps pass middle_ok(t), whose
    edges pass edge_ok(a, b), with at most `neutral_budget` empty neutrals among the steps,
    ending where end_ok(t, steps) allows (a breadth-first search: the first route found to a
    territory is a shortest one)."""
    found: dict[str, tuple[int, tuple[str, ...]]] = {}
    frontier = [(start, 0, (start,))]
    seen = {(start, 0)}
    for steps in range(1, limit + 1):
        following = []
        for node, used, route in frontier:
            for near in board.neighbors.get(node, ()):
                if near in route or not step_ok(near):
                    continue
                if edge_ok is not None and not edge_ok(node, near):
                    continue
                spent = used + (1 if neutral_budget is not None
                                and _empty_neutral(board, near) else 0)
                if neutral_budget is not None and spent > neutral_budget:
                    continue
                path = (*route, near)
                if near not in found and (end_ok is None or end_ok(near, steps)):
                    found[near] = (steps, path)
                if middle_ok(near) and (near, spent) not in seen:
                    seen.add((near, spent))
                    following.append((near, spent, path))
        frontier = following
        if not frontier:
            break
    return found


def _neutral_budget(board: Board) -> int | None:
    charge = int(board.properties.get("neutralCharge", 0) or 0)
    if charge <= 0:
        return None
    return max(board.pus, 0) // charge


def _contested_block(board: Board, start: str, can_blitz: bool) -> bool:
    """validateCombat's contested start: True where routes into enemy territory with no middle
    step, or an enemy one, are refused for this (land) unit."""
    if board.territories[start].water or board.properties.get(
            "All Units Can Attack From Contested Territories"):
        return False
    owner = board.owner(start)
    if owner != board.player and board.at_war(owner):
        return not board.blitzable(start) or not can_blitz
    return not board.blitzable(start)


def land_routes(board: Board, start: str, movement: int, can_blitz: bool,
                was_in_combat: bool = False, contested_blitz: bool | None = None) -> dict:
    """{target: (movement, route)} of a land unit at `start` with `movement` left that can
    blitz or not (`contested_blitz`: whether it can blitz by itself, for the contested
    start's rule, which counts no escort; default `can_blitz`)."""
    block = _contested_block(board, start,
                             can_blitz if contested_blitz is None else contested_blitz)
    if not can_blitz and (start in board.conquered or start in board.blitzed
                          or was_in_combat):
        return {}  # not a blitzing unit: stays where it fought, or after its battle
    if not board.route_restriction_ok(start):
        return {}
    neutrals_stop = not board.neutrals_blitzable()

    def step_ok(name: str) -> bool:
        t = board.territories[name]
        return (not t.water and board.relationship(t.owner).can_move_land_over()
                and board.can_move_into_during_combat_move(name)
                and not board.impassable(name) and board.route_restriction_ok(name)
                and not board.violates_neutrality(name))

    def middle_ok(name: str) -> bool:
        t = board.territories[name]
        if any(board.enemy_unit(u) and not board.unit_type(u.type).infrastructure
               and not u.submerged for u in t.units):
            return False  # validateNonEnemyUnitsOnPath
        if board.conquered_not_blitzed(name):
            return False  # hasConqueredNonBlitzedNonWaterOnRoute
        if neutrals_stop and board.is_null(t.owner):
            return False  # nonAirPassingThroughNeutralTerritory
        enemy_like = (t.owner != board.player and board.at_war(t.owner)) or \
            name in board.conquered
        if enemy_like and not board.blitzable(name):
            return False  # "Cannot blitz on that route"
        if not can_blitz and (not board.friendly_territory(name) or board.fought_over(name)):
            return False  # NOT_ALL_UNITS_CAN_BLITZ
        if block and board.enemy_territory(name):
            return False  # the contested start
        return True

    def end_ok(name: str, steps: int) -> bool:
        if not attack_target(board, name, air=False):
            return False
        return not (block and steps < 2 and board.enemy_territory(name))

    return _search(board, start, movement, step_ok, middle_ok, end_ok=end_ok,
                   neutral_budget=_neutral_budget(board))


def air_routes(board: Board, start: str, type_name: str, movement: int, moved: bool
               ) -> tuple[dict, dict]:
    """({target: Target}, {target: out steps} of targets only a carrier landing would allow)
    for an aircraft at `start` with `movement` left (`moved`: it has moved this turn)."""
    flyover_stops = not board.properties.get("Neutral Flyover Allowed") or bool(
        board.properties.get("Neutrals Are Impassable"))
    del moved  # (TripleA's newest source also stops aircraft that moved from a neutral)
    if not board.route_restriction_ok(start):
        return {}, {}

    def step_ok(name: str) -> bool:
        t = board.territories[name]
        if not t.water and not board.relationship(t.owner).can_move_air_over():
            return False
        return (board.can_move_into_during_combat_move(name) and not board.impassable(name)
                and board.route_restriction_ok(name) and not board.violates_neutrality(name))

    def middle_ok(name: str) -> bool:
        return not (flyover_stops and board.neutral_land(name))

    def edge_ok(a: str, b: str) -> bool:
        if not (board.territories[a].water and board.territories[b].water):
            return True
        return board.canal_blocks(a, b, type_name) is None

    out = _search(board, start, movement + 2, step_ok, middle_ok, edge_ok=edge_ok,
                  neutral_budget=_neutral_budget(board))
    back_cache: dict[str, tuple[int, str] | None] = {}
    targets, carrier_only = {}, {}
    for name, (steps, route) in sorted(out.items()):
        if not attack_target(board, name, air=True):
            continue
        bonus = board.air_base_bonus(start) + board.air_base_bonus(name)
        if steps > movement + bonus:
            continue
        if board.air_can_land(name):
            targets[name] = Target(name, max(steps - bonus, 0), route)
            continue
        left = movement - steps
        if name not in back_cache:
            back_cache[name] = _way_back(board, name, type_name, movement)
        back = back_cache[name]
        if back is not None and left >= 1 and back[0] <= left:
            targets[name] = Target(name, steps + back[0], route, landing=back[1], back=back[0])
        elif left >= 0 and _carrier_within(board, name, left):
            carrier_only[name] = steps  # a carrier could take it: not modelled
    return targets, carrier_only


def _carrier_within(board: Board, start: str, left: int) -> bool:
    """Whether a carrier could take an aircraft at `start` with `left` movement: a sea zone
    within reach (the start included) and a carrier of the player anywhere (to move there) or
    one of an ally already in that sea zone (AirMovementValidator's landing spots)."""
    zones = {start} if board.territories[start].water else set()
    if left >= 1:
        zones |= {name for name in _search(board, start, left, board.air_can_fly_over,
                                            board.air_can_fly_over)
                  if board.territories[name].water}
    return bool(zones) and (board.carriers_anywhere or bool(zones & board.allied_carriers))


def _way_back(board: Board, start: str, type_name: str, limit: int) -> tuple[int, str] | None:
    """(steps, territory) of the nearest territory an aircraft at `start` may land in, over
    territories it may fly over (AirMovementValidator.canFindLand), within `limit`."""

    def edge_ok(a: str, b: str) -> bool:
        if not (board.territories[a].water and board.territories[b].water):
            return True
        return board.canal_blocks(a, b, type_name) is None

    routes = _search(board, start, limit, board.air_can_fly_over, board.air_can_fly_over,
                     edge_ok=edge_ok)
    best = None
    for name, (steps, _) in routes.items():
        if board.air_can_land(name) and (best is None or (steps, name) < best):
            best = (steps, name)
    return best


def _unsupported(board: Board, uc: UnitClass) -> str | None:
    kind = board.unit_type(uc.unit_type)
    units = [u for u in board.territories[uc.territory].units if u.key in uc.units]
    if kind.is_sea:
        return "sea units are not modelled in this version"
    if any(u.transported for u in units):
        return "carried by a transport or a carrier: transports are not modelled"
    if kind.is_air and board.territories[uc.territory].water:
        return "aircraft at sea (on a carrier): carriers are not modelled"
    if board.territories[uc.territory].water:
        return "land units at sea (on a transport): transports are not modelled"
    if kind.kamikaze:
        return "a kamikaze unit (isKamikaze) may attack without landing: not modelled"
    if kind.suicide_on_attack:
        return "a suicide unit (isSuicideOnAttack) need not land: not modelled"
    if kind.is_air and board.properties.get("Kamikaze Airplanes"):
        return "the game's Kamikaze Airplanes rule lets aircraft attack without landing: " \
               "not modelled"
    if kind.requires_units_to_move:
        return "it needs other units to move (requiresUnitsToMove): not modelled"
    if "mechanizedInfantry" in board.tech_flags and kind.land_transportable and any(
            board.unit_type(u.type).land_transport for t in board.territories.values()
            for u in t.units if u.owner == board.player):
        return "it may ride a land transport (mechanized infantry): not modelled"
    if "paratroopers" in board.tech_flags and kind.air_transportable and any(
            board.unit_type(u.type).air_transport for t in board.territories.values()
            for u in t.units if u.owner == board.player):
        return "it may be carried by an air transport (paratroopers): not modelled"
    return None


def reach_of(board: Board) -> Reach:
    """Every class of the board's player and its legal attacks (module documentation)."""
    classes = unit_classes(board)
    found = []
    for uc in classes:
        why = _unsupported(board, uc)
        if why is not None:
            found.append(ClassReach(uc, unsupported=why))
            continue
        found.append(_class_reach(board, uc, classes))
    return Reach(board=board, classes=tuple(found))


def _class_reach(board: Board, uc: UnitClass, classes: list[UnitClass]) -> ClassReach:
    kind = board.unit_type(uc.unit_type)
    sample = next(u for u in board.territories[uc.territory].units if u.key == uc.units[0])
    if uc.committed or uc.movement_left <= 0 or board.is_disabled(sample):
        return ClassReach(uc)
    if not kind.is_air and kind.not_in_combat_move:
        return ClassReach(uc)  # "Cannot move AA guns in combat movement phase"
    if kind.is_air:
        targets, carrier_only = air_routes(board, uc.territory, uc.unit_type,
                                           uc.movement_left, sample.moved > 0)
        notes = ()
        if carrier_only and kind.carrier_cost != -1:
            notes = (f"attacks it could only make by landing on a carrier (carriers are not "
                     f"modelled): {', '.join(sorted(carrier_only))}",)
        return ClassReach(uc, targets, notes=notes)
    own_blitz = board.can_blitz(uc.unit_type)
    routes = land_routes(board, uc.territory, uc.movement_left, own_blitz,
                         sample.was_in_combat)
    targets = {name: Target(name, steps, route) for name, (steps, route) in routes.items()}
    givers = tuple(sorted({giver for ability, giver in kind.receives_ability
                           if ability == "canBlitz"}))
    if givers and not own_blitz:
        escorted = land_routes(board, uc.territory, uc.movement_left, True,
                               sample.was_in_combat, contested_blitz=own_blitz)
        for name, (steps, route) in escorted.items():
            if name in targets and targets[name].movement <= steps:
                continue
            able = [g for g in givers if any(
                c.territory == uc.territory and c.unit_type == g and not c.committed
                and c.movement_left >= steps and board.can_blitz(g) for c in classes)]
            if able:
                targets[name] = Target(name, steps, route, escort=tuple(able))
    return ClassReach(uc, targets)
