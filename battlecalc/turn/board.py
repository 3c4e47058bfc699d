"""The board as movement sees it: a save's territories, owners, neighbours and units, and the
state of the turn (this turn's conquered, blitzed and fought-over territories, the pending
battles and their attackers), for one player at one moment (:class:`Board`).

:func:`board_for` builds the board a player plans from:

* a save **during the player's combat move** (its move delegate started): the units as they
  stand, ``alreadyMoved`` and ``bonusMovement`` as saved, the battle tracker as saved; units
  that moved into a pending battle are committed to it;
* a save **before the player's combat move** (every step from the save's to the combat move is
  one that moves no unit: technology, technology activation, purchase, bid purchase, politics,
  user actions, end of round): the board as TripleA's MoveDelegate will start the combat move
  (``MoveDelegate.start``): ``alreadyMoved`` 0 (TripleA resets it at the end of every
  non-combat move, ``resetUnitStateAtEnd``), every ``bonusMovement`` reset and given again by
  the units that give movement (``giveBonusMovement``, "Units May Give Bonus Movement"), the
  technologies bought and not yet activated held;
* **the player's next turn** (``as_next_turn``, the counter-attack model of issue 44): the
  board as it stands, with nothing conquered, blitzed or fought over (TripleA clears the battle
  tracker at every end of turn), no pending battle, the player's units at full movement and
  with the bonus of its bases, and the owners the caller gives (the territories a plan takes).

Anything else is refused with one line (:class:`~battlecalc.errors.BattleInputError`): a save
at another step (named), a player not in the game, and the map features the movement model
does not take (fuel, territory effects on movement, stacking limits, edit mode, triggers that
may still change the board before the combat move).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction

from ..errors import BattleInputError, quoted

# Delegates whose steps move no unit on the board: a save at one of them, before the player's
# combat move, plans as the combat move will start
BOARD_NEUTRAL_DELEGATES = frozenset({
    "TechnologyDelegate", "TechActivationDelegate", "PurchaseDelegate", "BidPurchaseDelegate",
    "NoPUPurchaseDelegate", "PoliticsDelegate", "UserActionDelegate", "EndRoundDelegate"})
MOVE_DELEGATE = "MoveDelegate"
# trigger changes that can move, add, remove or re-rule what movement reads
BOARD_TRIGGER_KINDS = frozenset({"placement", "removeUnits", "changeOwnership", "unitProperty",
                                 "territoryProperty", "relationshipTypeProperty",
                                 "territoryEffectProperty", "tech", "playerProperty",
                                 "activateTrigger"})  # (fires other triggers, whenever theirs)
# MoveDelegate.start fires a player's triggers that have no "when" of these kinds
START_TRIGGER_KINDS = frozenset({"playerProperty", "relationshipTypeProperty",
                                 "territoryProperty", "territoryEffectProperty", "removeUnits",
                                 "changeOwnership", "placement"})


class TurnInputError(BattleInputError):
    """A save, player or map the movement model does not plan from (one line, exit 2)."""


def _truthy(text) -> bool:
    return str(text).strip().lower() == "true"


def is_combat_move(step) -> bool:
    """GameStepPropertiesHelper.isCombatMove: the step's ``combatMove`` property, else its name
    (ends in CombatMove, not NonCombatMove), for a step of TripleA's MoveDelegate."""
    if step.delegate != MOVE_DELEGATE and step.delegate != "move":
        return False
    if "combatMove" in step.properties:
        return _truthy(step.properties["combatMove"])
    if _truthy(step.properties.get("nonCombatMove", "false")):
        return False
    return step.name.endswith("CombatMove") and not step.name.endswith("NonCombatMove")


def gives_bonus_movement(step) -> bool:
    """GameStepPropertiesHelper.isGiveBonusMovement: the step's property, else a combat move
    by its name."""
    if "giveBonusMovement" in step.properties:
        return _truthy(step.properties["giveBonusMovement"])
    return step.name.endswith("CombatMove") and not step.name.endswith("NonCombatMove")


def _describe(step) -> str:
    """A step for a message: its name, and what it is of whom ("battle of the Russians")."""
    kind = step.display
    if not kind and is_combat_move(step):
        kind = "combat move"
    elif not kind and step.name.endswith("NonCombatMove"):
        kind = "non-combat move"
    if not kind:
        words = re.findall(r"[A-Z][a-z]*|[a-z]+", step.delegate.removesuffix("Delegate"))
        kind = " ".join(w.lower() for w in words) or step.delegate
    what = kind
    return f"{step.name} ({what} of the {step.player})" if step.player else \
        f"{step.name} ({what})"


@dataclass(frozen=True)
class Unit:
    """A unit on the board: `moved` is TripleA's alreadyMoved, `bonus` its bonusMovement;
    `committed`: it moved into a pending battle where it stands and stays in it."""

    key: int
    type: str
    owner: str
    moved: Fraction = Fraction(0)
    bonus: int = 0
    hits: int = 0
    damage: int = 0
    transported: bool = False
    submerged: bool = False
    was_in_combat: bool = False
    committed: bool = False


@dataclass(frozen=True)
class Territory:
    name: str
    water: bool
    owner: str
    units: tuple[Unit, ...]
    production: int = 0
    impassable: bool = False
    air_base: bool = False
    effects: tuple[str, ...] = ()


@dataclass(frozen=True)
class Board:
    """One player's view of the board at the start of (or during) its combat move.  Built by
    :func:`board_for`; the rules it is read with are :mod:`battlecalc.turn.reach`'s."""

    game: str
    round: int
    step: str  # the save's step (its name)
    player: str  # whose movement this board is for
    moment: str  # "combat move" (during it), "before combat move", "next turn"
    territories: dict  # name -> Territory, in the map's order
    neighbors: dict  # name -> tuple of names
    unit_types: dict  # name -> battlecalc.triplea.movement.UnitTypeMovement
    relationships: dict  # frozenset pair -> battlecalc.triplea.movement.Relationship
    players: tuple[str, ...]
    properties: dict
    pus: int = 0
    techs: tuple = ()  # the player's advances held (battlecalc.triplea.movement.Advance)
    tech_flags: frozenset = frozenset()
    restriction_type: str | None = None
    restriction: frozenset | None = None  # the listed territories (movement restriction)
    canals: tuple = ()
    conquered: frozenset = frozenset()
    blitzed: frozenset = frozenset()
    fought: frozenset = frozenset()
    battles: tuple = ()  # battlecalc.triplea.movement.PendingBattle
    carriers_anywhere: bool = False  # the player has a carrier, or new ones to place
    allied_carriers: frozenset = frozenset()  # sea zones with an ally's carrier
    notes: tuple[str, ...] = ()  # what the board leaves out, in words
    owners_changed: dict = field(default_factory=dict)  # the owners the caller gave

    # ------------------------------------------------------------ relationships
    def relationship(self, other: str, player: str | None = None):
        me = self.player if player is None else player
        pair = frozenset((me, other))
        try:
            return self.relationships[pair]
        except KeyError:
            raise TurnInputError(f"the save has no relationship between {me} and {other}"
                                 ) from None

    def at_war(self, other: str) -> bool:
        return self.relationship(other).war

    def allied(self, other: str) -> bool:
        return self.relationship(other).allied

    def is_null(self, owner: str) -> bool:
        """TripleA's null player (neutral, unowned): an owner that is no player of the game."""
        return owner not in self.players

    # ------------------------------------------------------------ units
    def unit_type(self, name: str):
        try:
            return self.unit_types[name]
        except KeyError:
            raise TurnInputError(f"unit type {quoted(name)} has no unitAttachment in the save"
                                 ) from None

    def movement(self, unit: Unit) -> int:
        """UnitAttachment.getMovement(owner): the type's movement plus the owner's technology
        bonus, at least 0 (the owner is the board's player for the units that move)."""
        bonus = sum(a.movement_bonus.get(unit.type, 0) for a in self.techs) \
            if unit.owner == self.player else 0
        return max(0, self.unit_type(unit.type).movement + bonus)

    def movement_left(self, unit: Unit) -> Fraction:
        """Unit.getMovementLeft: movement + bonusMovement - alreadyMoved."""
        return self.movement(unit) + unit.bonus - unit.moved

    def can_blitz(self, type_name: str) -> bool:
        """UnitAttachment.getCanBlitz(player): canBlitz, or a technology's canBlitz ability."""
        return self.unit_type(type_name).can_blitz or any(
            "canBlitz" in a.abilities.get(type_name, ()) for a in self.techs)

    def is_disabled(self, unit: Unit) -> bool:
        """Matches.unitIsDisabled: a damageable unit past its maxOperationalDamage, where
        bombing damages units."""
        kind = self.unit_type(unit.type)
        return (kind.can_be_damaged and bool(self.properties.get(
            "Damage From Bombing Done To Units Instead Of Territories"))
            and kind.max_operational_damage >= 0 and unit.damage > kind.max_operational_damage)

    def enemy_unit(self, unit: Unit) -> bool:
        return self.at_war(unit.owner)

    # ------------------------------------------------------------ territories
    def owner(self, name: str) -> str:
        return self.territories[name].owner

    def enemy_territory(self, name: str) -> bool:
        """Matches.isTerritoryEnemy: not the player's, owned by a nation it is at war with."""
        owner = self.owner(name)
        return owner != self.player and self.at_war(owner)

    def friendly_territory(self, name: str) -> bool:
        """Matches.isTerritoryFriendly: water, the player's, or an ally's."""
        t = self.territories[name]
        return t.water or t.owner == self.player or self.allied(t.owner)

    def neutral_land(self, name: str) -> bool:
        """Matches.territoryIsNeutralButNotWater: land owned by the null player."""
        t = self.territories[name]
        return not t.water and self.is_null(t.owner)

    def has_enemy_units(self, name: str) -> bool:
        return any(self.enemy_unit(u) for u in self.territories[name].units)

    def impassable(self, name: str) -> bool:
        """Matches.territoryIsImpassable: land whose attachment says isImpassable."""
        t = self.territories[name]
        return not t.water and t.impassable

    def restricted(self, name: str) -> bool:
        """not Matches.territoryIsPassableAndNotRestricted's restriction part ("Movement By
        Territory Restricted" and the player's rulesAttachment)."""
        if not self.properties.get("Movement By Territory Restricted") \
                or self.restriction is None:
            return False
        return (self.restriction_type == "allowed") != (name in self.restriction)

    def route_restriction_ok(self, name: str) -> bool:
        """MoveValidator.validateMovementRestrictedByTerritory for one territory of a route
        (its start included): inside the listed territories where the type is "allowed",
        outside them where it is "disallowed"."""
        if not self.properties.get("Movement By Territory Restricted") \
                or self.restriction is None:
            return True
        if self.restriction_type == "allowed":
            return name in self.restriction
        if self.restriction_type == "disallowed":
            return name not in self.restriction
        return True

    def passable(self, name: str) -> bool:
        """Matches.territoryIsPassableAndNotRestricted."""
        return not self.impassable(name) and not self.restricted(name)

    def conquered_not_blitzed(self, name: str) -> bool:
        return name in self.conquered and name not in self.blitzed

    def blitzable(self, name: str) -> bool:
        """Matches.territoryIsBlitzable: land, not neutral unless "Neutrals Are Blitzable",
        not conquered this turn unless blitzed, and no enemy unit but infrastructure where
        neither "WW2V2" nor "Blitz Through Factories And AA Restricted" is on."""
        t = self.territories[name]
        if t.water:
            return False
        if self.is_null(t.owner) and not self.properties.get("Neutrals Are Blitzable"):
            return False
        if self.conquered_not_blitzed(name):
            return False
        infrastructure_passes = not self.properties.get("WW2V2") and not self.properties.get(
            "Blitz Through Factories And AA Restricted")
        return all(not self.enemy_unit(u)
                   or (infrastructure_passes and self.unit_type(u.type).infrastructure)
                   for u in t.units)

    def fought_over(self, name: str) -> bool:
        """Matches.territoryWasFoughtOver: a battle fought there, or blitzed, this turn."""
        return name in self.fought or name in self.blitzed

    def can_move_into_during_combat_move(self, name: str) -> bool:
        """Matches.territoryOwnerRelationshipTypeCanMoveIntoDuringCombatMove."""
        t = self.territories[name]
        if t.owner == self.player or (self.is_null(t.owner) and t.water):
            return True
        return self.relationship(t.owner).can_move_into_during_combat_move()

    def neutrals_blitzable(self) -> bool:
        """MoveValidator.isNeutralsBlitzable (TripleA 2.x): "Neutrals Are Blitzable" and not
        "Neutrals Are Impassable"."""
        return bool(self.properties.get("Neutrals Are Blitzable")) and not bool(
            self.properties.get("Neutrals Are Impassable"))

    def violates_neutrality(self, name: str) -> bool:
        """validateBasic's "Cannot violate neutrality" (TripleA 2.x): a neutral land step under
        "Neutrals Are Impassable" (where neutrals are not blitzable, which that implies)."""
        return bool(self.properties.get("Neutrals Are Impassable")) \
            and not self.neutrals_blitzable() and self.neutral_land(name)

    def neutrals_passable_by_air(self) -> bool:
        """AirMovementValidator.areNeutralsPassableByAir."""
        return bool(self.properties.get("Neutral Flyover Allowed")) and not bool(
            self.properties.get("Neutrals Are Impassable"))

    def air_can_fly_over(self, name: str) -> bool:
        """Matches.airCanFlyOver."""
        t = self.territories[name]
        if not self.neutrals_passable_by_air() and self.neutral_land(name):
            return False
        return self.passable(name) and not (
            not t.water and not self.relationship(t.owner).can_move_air_over())

    def air_can_land(self, name: str) -> bool:
        """Matches.airCanLandOnThisAlliedNonConqueredLandTerritory: land, not conquered this
        turn, owned by a player (not the null one) whose land the player's aircraft may fly
        over and land on."""
        t = self.territories[name]
        if t.water or name in self.conquered or self.is_null(t.owner):
            return False
        rel = self.relationship(t.owner)
        return rel.can_move_air_over() and rel.can_land_air()

    def air_base_bonus(self, name: str) -> int:
        """The +1 of TerritoryAttachment.airBase (Matches.unitHasEnoughMovementForRoute)."""
        return 1 if self.territories[name].air_base else 0

    def canal_blocks(self, a: str, b: str, type_name: str) -> str | None:
        """Why a unit of `type_name` may not pass from sea zone `a` to `b` (None: it may):
        MoveValidator.validateCanal for one step (the canals joining the two zones)."""
        found = [c for c in self.canals if c.zone in (a, b)]
        names = {c.name for c in found if c.zone == a} & {c.name for c in found if c.zone == b}
        if not names:
            return None
        control_all = bool(self.properties.get(
            "Control All Canals Between Territories To Pass"))
        for zone in (a, b):
            failure = None
            for canal in (c for c in found if c.zone == zone and c.name in names):
                failure = self._canal_failure(canal, type_name)
                if control_all != (failure is None):
                    break
            if failure is not None:
                return failure
        return None

    def _canal_failure(self, canal, type_name: str) -> str | None:
        excluded = canal.excluded
        if excluded is None:  # TripleA's default: every air unit type passes
            if self.unit_type(type_name).is_air:
                return None
        elif type_name in excluded:
            return None
        if canal.no_combat_move:
            return f"can only move through {canal.name} during non-combat move"
        for land in canal.land_territories:
            if not self.relationship(self.owner(land)).can_move_through_canals() \
                    and self.owner(land) != self.player:
                return f"must control {canal.name} to move through"
            if land in self.conquered:
                return f"must control {canal.name} for an entire turn to move through"
        return None

    def pending_battle_at(self, name: str, bombing: bool = False) -> bool:
        return any(b.territory == name and (bombing or b.battle_type not in (
            "BOMBING_RAID", "AIR_RAID")) for b in self.battles)


# ---------------------------------------------------------------- building a board


def board_for(save, player: str | None = None, *, as_next_turn: bool = False,
              owners: Mapping[str, str] | None = None) -> Board:
    """The board `player` (default: the save's player to move) plans its combat move from
    (module documentation), from a save read by battlecalc.triplea.movement.read_movement.
    `as_next_turn`: as at the start of the player's next turn; `owners`: {territory: player}
    given to other owners first (the territories a plan takes).  TurnInputError for a save,
    player or map the model does not plan from."""
    if player is None:
        player = save.step.player
        if player is None:
            raise TurnInputError(f"the save is at step {_describe(save.step)}, which no player "
                                 "moves in: give the player (--player)")
    if not isinstance(player, str) or player not in save.player_info:
        raise TurnInputError(f"player {quoted(player)} is not in this game (players: "
                             f"{', '.join(save.players)})")
    if save.properties.get("EditMode"):
        raise TurnInputError("the save is in edit mode, where TripleA checks no move: the "
                             "movement model plans legal moves only")
    info = save.player_info[player]
    territories = dict(save.territories)
    changed = {}
    for name, owner in (owners or {}).items():
        if name not in territories:
            raise TurnInputError(f"owners: no territory {quoted(name)} in this save")
        if owner not in save.player_info:
            raise TurnInputError(f"owners: {quoted(owner)} is no player of this game")
        changed[name] = owner
    if as_next_turn:
        combat = _next_combat_move(save, player)
        moment, started = "next turn", False
        tracker = (frozenset(), frozenset(), frozenset(), ())
    else:
        combat, started = _planning_step(save, player)
        moment = "combat move" if started else "before combat move"
        tracker = (save.conquered, save.blitzed, save.fought, save.battles)
        if not started:
            _check_triggers(save, player, combat)
    held = set(info.pending_advances) if not started else set()
    advances = tuple(a for a in save.advances if info.holds(a) or (
        a.name in held))
    board = Board(
        game=save.game, round=save.round, step=save.step.name, player=player, moment=moment,
        territories={}, neighbors=save.neighbors, unit_types=save.unit_types,
        relationships=save.relationships, players=save.players, properties=save.properties,
        pus=info.pus, techs=advances, tech_flags=info.tech_flags | frozenset(
            a.property for a in advances if a.property),
        restriction_type=info.restriction_type,
        restriction=None if info.restriction is None else _listed(info.restriction, save),
        canals=save.canals, conquered=tracker[0], blitzed=tracker[1], fought=tracker[2],
        battles=tracker[3], owners_changed=changed)
    committed = _committed_units(save, player) if started else frozenset()
    for name, t in territories.items():
        units = tuple(Unit(
            key=u.key, type=u.type, owner=u.owner,
            moved=u.already_moved if started or u.owner != player else Fraction(0),
            bonus=u.bonus_movement, hits=u.hits, damage=u.unit_damage,
            transported=u.transported, submerged=u.submerged, was_in_combat=u.was_in_combat,
            committed=u.key in committed) for u in t.units)
        board.territories[name] = Territory(
            name=name, water=t.water, owner=changed.get(name, t.owner), units=units,
            production=t.production, impassable=t.impassable, air_base=t.air_base,
            effects=t.effects)
    _check_features(board, save)
    if not started and gives_bonus_movement(save.steps[combat]):
        board = _with_bonus_movement(board)
    notes = []
    if any(a.airborne_forces for a in advances):
        notes.append(f"{player} hold airborne forces: the attacks of the airborne move step "
                     "(TripleA's SpecialMoveDelegate) are not listed")
    owned = any(board.unit_type(u.type).carrier_capacity != -1 and u.owner == player
                for t in board.territories.values() for u in t.units)
    new_carriers = any(board.unit_type(kind).carrier_capacity != -1
                       for kind in info.units_held) and bool(
        board.properties.get("LHTR Carrier production rules")
        or board.properties.get("Land existing fighters on new carriers"))
    allied_at = frozenset(
        name for name, t in board.territories.items() if t.water and any(
            board.unit_type(u.type).carrier_capacity != -1 and u.owner != player
            and board.allied(u.owner) for u in t.units))
    return dataclasses.replace(board, carriers_anywhere=owned or new_carriers,
                               allied_carriers=allied_at, notes=tuple(notes))


def _listed(names: tuple[str, ...], save) -> frozenset:
    """AbstractRulesAttachment.getListedTerritories(list, true, true): the names up to a group
    keyword, "each" and a leading count skipped."""
    found = set()
    for i, name in enumerate(names):
        if name == "each":
            continue
        if name in ("controlled", "controlledNoWater", "original", "originalNoWater", "all",
                    "map", "enemy"):
            break
        if i == 0 and name.lstrip("-").isdigit():
            continue
        if name not in save.territories:
            raise TurnInputError(f"the movement restriction names {quoted(name)}, no "
                                 "territory of the map")
        found.add(name)
    return frozenset(found)


def _committed_units(save, player: str) -> frozenset:
    """The player's units that moved into a pending battle where they stand: TripleA keeps a
    land unit there ("Cannot move units out of battle zone"); the planner keeps every one."""
    where = {u.key: name for name, t in save.territories.items() for u in t.units}
    return frozenset(key for b in save.battles if b.attacker == player
                     for key in b.attacking if where.get(key) == b.territory)


def _steps_from(save, start: int):
    """The sequence's steps from `start` on, once round (the next round after the last)."""
    count = len(save.steps)
    for offset in range(count):
        yield (start + offset) % count


def _planning_step(save, player: str) -> tuple[int, bool]:
    """(index of the combat move the player plans, whether it has started): the save's step
    is the player's combat move, or every step until it moves no unit."""
    here = save.step
    if is_combat_move(here) and here.player == player:
        return save.step_index, save.move_started
    if here.delegate not in BOARD_NEUTRAL_DELEGATES:
        raise TurnInputError(
            f"the save is at step {_describe(here)}: battlecalc turn plans from a save before "
            f"the combat move of the {player} (technology, purchase, politics) or during it")
    for index in _steps_from(save, save.step_index):
        step = save.steps[index]
        if is_combat_move(step) and step.player == player:
            return index, False
        if step.max_run_count != -1 and step.run_count >= step.max_run_count:
            continue  # run already as often as it runs (the bids of the first round)
        if step.delegate not in BOARD_NEUTRAL_DELEGATES:
            raise TurnInputError(
                f"the save is at step {_describe(here)}, and step {_describe(step)} comes "
                f"before the combat move of the {player}: battlecalc turn plans from a save "
                "before it (technology, purchase, politics) or during it")
    raise TurnInputError(f"{player} has no combat move in the game's sequence")


def _next_combat_move(save, player: str) -> int:
    for index in _steps_from(save, save.step_index):
        if is_combat_move(save.steps[index]) and save.steps[index].player == player:
            return index
    raise TurnInputError(f"{player} has no combat move in the game's sequence")


def _check_triggers(save, player: str, combat: int) -> None:
    """Refuse a save where a trigger may still change the board before the combat move starts
    ("Use Triggers"): one of a when of a step to come, or of the player's without a when that
    MoveDelegate.start fires."""
    if not save.properties.get("Use Triggers"):
        return
    coming = []
    for offset, i in enumerate(_steps_from(save, save.step_index)):
        if offset or not save.step_started:  # its start still to come (the save's: unless run)
            coming.append(("before", save.steps[i].name))
        if i == combat:
            break
        coming.append(("after", save.steps[i].name))  # its end still to come
    for trigger in save.triggers:
        if trigger.uses == 0:
            continue
        if trigger.when:
            fires = any(w in coming for w in trigger.when)
        else:
            fires = trigger.player == player and bool(trigger.kinds & START_TRIGGER_KINDS)
        if not fires:
            continue
        kinds = trigger.kinds & BOARD_TRIGGER_KINDS
        if "relationshipChange" in trigger.kinds and any(
                player in change.split(":")[:2] for change in trigger.relationship_changes):
            kinds |= {"relationshipChange"}
        if kinds:
            raise TurnInputError(
                f"trigger {trigger.name} may change the board before the combat move of the "
                f"{player} ({', '.join(sorted(kinds))}; its conditions are not evaluated): not "
                "modelled")


def _check_features(board: Board, save) -> None:
    """Refuse the map features the model does not take where they touch the player's units."""
    player = board.player
    movers = {u.type for t in board.territories.values() for u in t.units
              if u.owner == player}
    movable = sorted(name for name in movers if not board.unit_type(name).is_sea
                     and board.unit_type(name).movement > 0
                     and not board.unit_type(name).not_in_combat_move)
    if save.properties.get("Use Fuel Cost"):
        fuelled = [name for name in movable if any(board.unit_type(name).fuel_cost.values())
                   or any(board.unit_type(name).fuel_flat_cost.values())]
        if fuelled:
            kind = board.unit_type(fuelled[0])
            cost = ", ".join(f"{n} {r}" for r, n in {**kind.fuel_cost,
                                                      **kind.fuel_flat_cost}.items())
            raise TurnInputError(
                f"the game charges fuel for movement (Use Fuel Cost; {fuelled[0]}: {cost}): "
                "not modelled")
    used = {e for t in board.territories.values() for e in t.effects}
    for effect in sorted(used):
        parts = save.territory_effects.get(effect, ())
        if parts:
            where = next(t.name for t in board.territories.values() if effect in t.effects)
            raise TurnInputError(
                f"territory effect {quoted(effect)} ({where}, ...) changes movement "
                f"({', '.join(parts)}): territory effects on movement are not modelled")
    limited = [name for name in movable if any(
        limit is not None and limit < 2**31 - 1 for limit in (
            board.unit_type(name).movement_limit, board.unit_type(name).attacking_limit))]
    if limited or save.player_info[player].stacking_limits:
        what = limited[0] if limited else f"the playerAttachment of the {player}"
        raise TurnInputError(f"stacking limits on movement ({what}: movementLimit or "
                             "attackingLimit) are not modelled")
    if board.neutrals_passable_by_air() and save.properties.get("neutralCharge", 0):
        raise TurnInputError("aircraft pay to fly over neutrals here (Neutral Flyover Allowed "
                             "with a neutralCharge): not modelled")


def _with_bonus_movement(board: Board) -> Board:
    """MoveDelegate.resetAndGiveBonusMovement: every unit's bonusMovement reset to 0, then, with
    "Units May Give Bonus Movement", giveBonusMovementToUnits in every territory: a unit allied
    to the player, with an allied giver (givesMovement for its type, not disabled) beside it --
    for a sea unit, also on a neighbouring land; for a land unit, also in a neighbouring sea --
    gets the largest bonus given (at least minus its movement)."""
    give = bool(board.properties.get("Units May Give Bonus Movement"))
    territories = {}
    for name, t in board.territories.items():
        units = []
        for u in t.units:
            bonus = _bonus(board, name, u) if give else None
            units.append(dataclasses.replace(u, bonus=0 if bonus is None else bonus))
        territories[name] = dataclasses.replace(t, units=tuple(units))
    return dataclasses.replace(board, territories=territories)


def _bonus(board: Board, name: str, unit: Unit) -> int | None:
    player = board.player
    if unit.owner != player and not board.allied(unit.owner):
        return None
    kind = board.unit_type(unit.type)

    def givers(place: str, land: bool | None):
        for g in board.territories[place].units:
            gk = board.unit_type(g.type)
            if land is True and (gk.is_sea or gk.is_air):
                continue
            if land is False and not gk.is_sea:
                continue
            if (g.owner == player or board.allied(g.owner)) and not board.is_disabled(g) \
                    and not g.transported and gk.gives_movement.get(unit.type, 0) != 0:
                yield gk.gives_movement[unit.type]

    found = list(givers(name, None))
    if not found and not (kind.is_sea and any(
            next(givers(n, True), None) is not None for n in board.neighbors.get(name, ())
            if not board.territories[n].water)):
        return None  # unitCanBeGivenBonusMovementByFacilitiesInItsTerritory
    if kind.is_sea:
        for n in board.neighbors.get(name, ()):
            if not board.territories[n].water:
                found.extend(givers(n, True))
    elif not kind.is_air:
        for n in board.neighbors.get(name, ()):
            if board.territories[n].water:
                found.extend(givers(n, False))
    if not found:
        return None
    bonus = max(found)
    if bonus == 0:
        return None
    return max(bonus, -board.movement(unit))
