"""Independent, slow, obviously-correct reference for the legal attacks of a combat move
(issue 41): ``reach_reference(path, player=None, *, as_next_turn=False, owners=None)``.

It imports nothing of the ``battlecalc`` package.  The rules are TripleA's releases 2.0 to 2.6
(the shared saves are 2.0).  It reads the save with javaobj-py3 itself
(its own walk of the object graph, below) and checks routes as TripleA's validators do, one
whole route at a time, written from MoveValidator.validateMove (validateFirst, validateCombat,
validateNonEnemyUnitsOnPath, validateBasic) and AirMovementValidator.validateAirCanLand:

* every simple route from the class's territory of at most its movement (an aircraft's: its
  movement plus its air bases' bonus) is enumerated, depth first, with no search short cut:
  a route is kept when every check of the validators, transcribed in their order, passes for
  the whole route; the movement a target needs is the fewest steps of a kept route (for
  aircraft, plus the way back);
* the way back of an aircraft is canFindLand as written: the territories within its movement
  left over flyable ground (getNeighborsByMovementCost), the landable ones, each reached by a
  breadth-first route (getRouteForUnit).

The package searches each class's targets breadth first with per-step predicates; this module
enumerates routes and judges each whole: the two meet only in TripleA's rules.  What it does
not model it refuses (raises ``Refused``) or reports in ``unsupported``, as the package does;
the tests compare both.

The board a player plans from (the save's step, the combat move's start: alreadyMoved 0 and
the bonus of MoveDelegate.giveBonusMovement; or the next turn) follows docs/turn.md.
"""

from __future__ import annotations

import gzip
import logging
from collections import Counter, deque
from fractions import Fraction

NEUTRAL_STEPS = {"TechnologyDelegate", "TechActivationDelegate", "PurchaseDelegate",
                 "BidPurchaseDelegate", "NoPUPurchaseDelegate", "PoliticsDelegate",
                 "UserActionDelegate", "EndRoundDelegate"}
GROUPS = {"controlled", "controlledNoWater", "original", "originalNoWater", "all", "map",
          "enemy"}
# TripleA's predefined advances and the TechAttachment field that says a player holds one
TECH_OF_CLASS = {"LongRangeAircraftAdvance": "longRangeAir", "ParatroopersAdvance":
                 "paratroopers", "MechanizedInfantryAdvance": "mechanizedInfantry",
                 "SuperSubsAdvance": "superSub", "JetPowerAdvance": "jetPower",
                 "ImprovedShipyardsAdvance": "shipyards", "AaRadarAdvance": "aaRadar",
                 "HeavyBomberAdvance": "heavyBomber", "RocketsAdvance": "rocket",
                 "ImprovedArtillerySupportAdvance": "improvedArtillerySupport",
                 "IncreasedFactoryProductionAdvance": "increasedFactoryProduction",
                 "WarBondsAdvance": "warBonds", "IndustrialTechnologyAdvance":
                 "industrialTechnology", "DestroyerBombardTechAdvance": "destroyerBombard"}


class Refused(Exception):
    """The save, player or map is one the reference (like the package) does not plan from."""


# ---------------------------------------------------------------- reading the save


def _objects(path):
    import io

    from javaobj.v2.core import JavaStreamParser
    from javaobj.v2.transformers import DefaultObjectTransformer

    logging.getLogger("javaobj").setLevel(logging.CRITICAL)
    with open(path, "rb") as file:
        data = gzip.decompress(file.read())
    return JavaStreamParser(io.BytesIO(data), [DefaultObjectTransformer()]).run()


def f(obj, name, default=None):
    """A field of a javaobj instance (any class of its hierarchy)."""
    for values in getattr(obj, "field_data", {}).values():
        for desc, value in values.items():
            if desc.name == name:
                return value
    return default


def s(value):
    return None if value is None else str(value)


def items(coll):
    """The elements of a Java collection as javaobj gives it."""
    if coll is None:
        return []
    if isinstance(coll, dict):
        return list(coll.values())
    if isinstance(coll, list | tuple):
        return list(coll)
    inner = f(coll, "c", None) or f(coll, "list", None) or f(coll, "m", None)
    if inner is not None:
        return items(inner)
    out = []
    for data in (getattr(coll, "annotations", None) or {}).values():
        out += [x for x in data if hasattr(x, "classdesc")]
    return out


def cls(obj):
    return str(obj.classdesc.name)


def name(obj):
    return None if obj is None else s(f(obj, "name"))


def int_map(obj):
    values = f(obj, "mapValues") if obj is not None else None
    return {name(k): getattr(v, "value", v) for k, v in (values or {}).items()}


def big_decimal(value):
    if value is None:
        return Fraction(0)
    big = f(value, "intVal")
    magnitude = bytes(b & 0xFF for b in f(big, "magnitude"))
    return Fraction(f(big, "signum") * int.from_bytes(magnitude, "big"), 10 ** f(value, "scale"))


def boolean(obj, field):
    return bool(f(obj, field, False))


def read(path):
    """The facts the rules read, as plain dicts and tuples."""
    objects = _objects(path)
    gd = next(o for o in objects if hasattr(o, "classdesc") and cls(o).endswith(".GameData"))
    # the delegates: '<DelegateStart>', name, display, class, '<DelegateData>', state
    delegate_class, states = {}, {}
    for i, o in enumerate(objects):
        if not hasattr(o, "classdesc") and str(o) == "<DelegateStart>":
            delegate_class[str(objects[i + 1])] = str(objects[i + 3]).rsplit(".", 1)[-1]
            states.setdefault(str(objects[i + 3]).rsplit(".", 1)[-1], objects[i + 5])
    seq = f(gd, "sequence")
    steps = []
    for st in items(f(seq, "steps")):
        props = {}
        for data in (getattr(f(st, "properties"), "annotations", None) or {}).values():
            texts = [str(x) for x in data if type(x).__name__ == "JavaString"
                     or isinstance(x, str)]
            props.update(dict(zip(texts[::2], texts[1::2], strict=False)))
        steps.append({"name": s(f(st, "name")), "player": name(f(st, "player")),
                      "delegate": delegate_class.get(s(f(st, "delegateName")),
                                                     s(f(st, "delegateName"))),
                      "props": props, "runs": f(st, "runCount", 0),
                      "max_runs": f(st, "maxRunCount", -1)})
    players = {}
    for p in items(f(f(gd, "playerList"), "players")):
        atts = f(p, "attachments") or {}
        ta = atts.get("techAttachment")
        tech = {str(fd.name) for values in getattr(ta, "field_data", {}).values()
                for fd, v in values.items() if v is True}
        generic = {str(k) for k, v in (f(ta, "genericTech") or {}).items()
                   if getattr(v, "value", v) is True}
        ra = atts.get("rulesAttachment")
        restriction = f(ra, "movementRestrictionTerritories") if ra is not None else None
        pa = atts.get("playerAttachment")
        limits = pa is not None and any(items(f(pa, k)) for k in ("movementLimit",
                                                                  "attackingLimit"))
        triggers = []
        for att in atts.values():
            if cls(att).endswith(".TriggerAttachment"):
                triggers.append(att)
        players[name(p)] = {
            "pus": int_map(f(f(p, "resources"), "resources")).get("PUs", 0),
            "tech": tech, "generic": generic,
            "restriction_type": s(f(ra, "movementRestrictionType")) if ra is not None else None,
            "restriction": None if restriction is None else [str(x) for x in restriction],
            "limits": limits, "triggers": triggers,
            "held": [name(f(u, "type")) for u in items(f(f(p, "unitsHeld"), "units"))]}
    tech_state = states.get("TechnologyDelegate")
    pending = {name(k): [name(a) for a in items(v)]
               for k, v in (f(tech_state, "techs") or {}).items()} if tech_state else {}
    advances = []
    for adv in items(f(f(gd, "technologyFrontier"), "techs")):
        kind = cls(adv).rsplit(".", 1)[-1]
        inner = f(adv, "advance") if kind == "GenericTechAdvance" else None
        if inner is not None:
            kind = cls(inner).rsplit(".", 1)[-1]
        prop = TECH_OF_CLASS.get(kind, "?" + kind) if kind != "GenericTechAdvance" else None
        ab = (f(adv, "attachments") or {}).get("techAbilityAttachment")
        advances.append({"name": name(adv), "prop": prop,
                         "movement": int_map(f(ab, "movementBonus")) if ab else {},
                         "blitz": {name(k) for k, v in (f(ab, "unitAbilitiesGained") or {})
                                   .items() if "canBlitz" in {str(x) for x in items(v)}}
                         if ab else set(),
                         "airborne": boolean(ab, "airborneForces") if ab else False})
    types = {}
    for tname, ut in (f(f(gd, "unitTypeList"), "unitTypes") or {}).items():
        a = (f(ut, "attachments") or {}).get("unitAttachment")
        lim = [f(f(a, k), "first") for k in ("movementLimit", "attackingLimit")]
        types[str(tname)] = {
            "movement": f(a, "movement", 0), "air": boolean(a, "isAir"),
            "sea": boolean(a, "isSea"), "blitz": boolean(a, "canBlitz"),
            "infra": boolean(a, "isInfrastructure"),
            "no_cm": boolean(a, "canNotMoveDuringCombatMove"),
            "gives": int_map(f(a, "givesMovement")),
            "carrier_capacity": f(a, "carrierCapacity", -1),
            "carrier_cost": f(a, "carrierCost", -1), "kamikaze": boolean(a, "isKamikaze"),
            "suicide": boolean(a, "isSuicideOnAttack"),
            "fuel": {k: v for k, v in {**int_map(f(a, "fuelCost")),
                                       **int_map(f(a, "fuelFlatCost"))}.items() if v},
            "damageable": boolean(a, "canBeDamaged"),
            "max_damage": f(a, "maxOperationalDamage", -1),
            "land_transport": boolean(a, "isLandTransport"),
            "land_transportable": boolean(a, "isLandTransportable"),
            "air_transport": boolean(a, "isAirTransport"),
            "air_transportable": boolean(a, "isAirTransportable"),
            "receives": [str(x).split(":") for x in items(f(a, "receivesAbilityWhenWith"))],
            "requires": bool(items(f(a, "requiresUnitsToMove"))),
            "limits": [getattr(x, "value", x) for x in lim if x is not None]}
    territories, order, canals = {}, [], []
    unit_id = {}
    for t in items(f(f(gd, "map"), "territories")):
        atts = f(t, "attachments") or {}
        ta = atts.get("territoryAttachment")
        units = []
        for u in items(f(f(t, "unitCollection"), "units")):
            unit_id[id(u)] = len(unit_id)
            units.append({"id": unit_id[id(u)], "type": name(f(u, "type")),
                          "owner": name(f(u, "owner")),
                          "moved": big_decimal(f(u, "alreadyMoved")),
                          "bonus": f(u, "bonusMovement", 0), "damage": f(u, "unitDamage", 0),
                          "carried": f(u, "transportedBy") is not None,
                          "submerged": boolean(u, "submerged"),
                          "in_combat": boolean(u, "wasInCombat")})
        for key, att in atts.items():
            if str(key).startswith("canalAttachment"):
                excluded = f(att, "excludedUnits")
                canals.append({"name": s(f(att, "canalName")), "zone": name(t),
                               "lands": [name(x) for x in items(f(att, "landTerritories"))],
                               "excluded": None if excluded is None else
                               {name(x) for x in items(excluded)},
                               "no_cm": boolean(att, "canNotMoveThroughDuringCombatMove")})
        territories[name(t)] = {
            "water": boolean(t, "water"), "owner": name(f(t, "owner")), "units": units,
            "impassable": boolean(ta, "isImpassable") if ta is not None else False,
            "air_base": boolean(ta, "airBase") if ta is not None else False,
            "effects": [name(e) for e in items(f(ta, "territoryEffect"))] if ta else []}
        order.append(name(t))
    neighbors = {name(k): {name(x) for x in items(v)}
                 for k, v in (f(f(gd, "map"), "connections") or {}).items()}
    relations = {}
    for key, rel in (f(f(gd, "relationships"), "relationships") or {}).items():
        a = (f(f(rel, "relationshipType"), "attachments") or {})["relationshipTypeAttachment"]
        relations[frozenset((name(f(key, "player1")), name(f(key, "player2"))))] = {
            k: s(f(a, k)) or "default" for k in (
                "archeType", "canMoveLandUnitsOverOwnedLand", "canMoveAirUnitsOverOwnedLand",
                "canLandAirUnitsOnOwnedLand", "canMoveIntoDuringCombatMove",
                "canMoveThroughCanals")}
    props = {}
    gp = f(gd, "properties")
    for table in ("constantProperties", "editableProperties"):
        for k, v in (f(gp, table) or {}).items():
            value = f(v, "value", v) if hasattr(v, "classdesc") else v
            props[str(k)] = getattr(value, "value", value)
    effects = {}
    for ename, effect in (f(gd, "territoryEffectList") or {}).items():
        ea = (f(effect, "attachments") or {}).get("territoryEffectAttachment")
        effects[str(ename)] = ea is not None and (
            bool(int_map(f(ea, "movementCostModifier"))) or bool(items(f(ea, "noBlitz")))
            or bool(items(f(ea, "unitsNotAllowed"))))
    bt = f(states.get("BattleDelegate"), "battleTracker")
    battles = []
    for b in items(f(bt, "pendingBattles")):
        kind = f(b, "battleType")
        battles.append({"site": name(f(b, "battleSite")), "attacker": name(f(b, "attacker")),
                        "type": str(getattr(kind, "value", kind)),
                        "units": {unit_id[id(u)] for u in items(f(b, "attackingUnits"))
                                  if id(u) in unit_id}})
    move_state = states.get("MoveDelegate")
    here = states.get(steps[f(seq, "currentIndex")]["delegate"])
    step_started = True
    while here is not None and hasattr(here, "classdesc"):
        if f(here, "startBaseStepsFinished") is not None:
            step_started = bool(f(here, "startBaseStepsFinished"))
            break
        here = f(here, "superState")
    return {
        "game": s(f(gd, "gameName")), "round": f(seq, "round"), "steps": steps,
        "index": f(seq, "currentIndex"), "players": players, "pending": pending,
        "advances": advances, "types": types, "territories": territories, "order": order,
        "neighbors": neighbors, "relations": relations, "props": props, "canals": canals,
        "effects": effects,
        "conquered": {name(x) for x in items(f(bt, "conquered"))},
        "blitzed": {name(x) for x in items(f(bt, "blitzed"))},
        "fought": {name(x) for x in items(f(bt, "foughtBattles"))},
        "battles": battles, "step_started": step_started,
        "started": move_state is not None and f(move_state, "needToInitialize") is False}


# ---------------------------------------------------------------- the rules


class Rules:
    """TripleA's Matches and RelationshipTracker as the validators use them, for `player` on
    the board `g` (read(), prepared by prepare())."""

    def __init__(self, g, player):
        self.g, self.p = g, player
        self.t = g["territories"]
        self.props = g["props"]

    def prop(self, key):
        return bool(self.props.get(key))

    def rel(self, a, b=None):
        first, second = (self.p, a) if b is None else (a, b)
        return self.g["relations"][frozenset((first, second))]

    def flag(self, other, key, default):
        value = self.rel(other)[key]
        return default if value == "default" else value == "true"

    def war(self, other):
        return self.rel(other)["archeType"] == "war"

    def allied(self, other):
        return self.rel(other)["archeType"] == "allied"

    def null(self, owner):
        return owner not in self.g["players"]

    def land_over(self, owner):
        return self.flag(owner, "canMoveLandUnitsOverOwnedLand",
                         self.war(owner) or self.allied(owner))

    def air_over(self, owner):
        return self.flag(owner, "canMoveAirUnitsOverOwnedLand",
                         self.war(owner) or self.allied(owner))

    def land_air(self, owner):
        return self.flag(owner, "canLandAirUnitsOnOwnedLand", self.allied(owner))

    def into_combat(self, name_):
        t = self.t[name_]
        if t["owner"] == self.p or (self.null(t["owner"]) and t["water"]):
            return True
        return self.rel(t["owner"])["canMoveIntoDuringCombatMove"] in ("default", "true")

    def enemy_unit(self, u):
        return self.war(u["owner"])

    def is_enemy_t(self, name_):
        o = self.t[name_]["owner"]
        return o != self.p and self.war(o)

    def is_friendly_t(self, name_):
        t = self.t[name_]
        return t["water"] or t["owner"] == self.p or self.allied(t["owner"])

    def neutral_land(self, name_):
        return not self.t[name_]["water"] and self.null(self.t[name_]["owner"])

    def impassable(self, name_):
        return not self.t[name_]["water"] and self.t[name_]["impassable"]

    def listed(self):
        info = self.g["players"][self.p]
        names = info["restriction"]
        if names is None:
            return None
        out = set()
        for i, n in enumerate(names):
            if n == "each":
                continue
            if n in GROUPS:
                break
            if i == 0 and n.lstrip("-").isdigit():
                continue
            out.add(n)
        return out

    def passable_not_restricted(self, name_):
        if self.impassable(name_):
            return False
        if not self.prop("Movement By Territory Restricted"):
            return True
        listed = self.listed()
        if listed is None:
            return True
        return (self.g["players"][self.p]["restriction_type"] == "allowed") == (name_ in listed)

    def restricted_route(self, route):
        """validateMovementRestrictedByTerritory: an error for this route?"""
        if not self.prop("Movement By Territory Restricted"):
            return False
        listed = self.listed()
        if listed is None:
            return False
        kind = self.g["players"][self.p]["restriction_type"]
        if kind == "allowed":
            return any(x not in listed for x in route)
        if kind == "disallowed":
            return any(x in listed for x in route)
        return False

    def blitzable(self, name_):
        t = self.t[name_]
        if t["water"]:
            return False
        if self.null(t["owner"]) and not self.prop("Neutrals Are Blitzable"):
            return False
        if name_ in self.g["conquered"] and name_ not in self.g["blitzed"]:
            return False
        infra_ok = not self.prop("WW2V2") and not self.prop(
            "Blitz Through Factories And AA Restricted")
        return all(not self.enemy_unit(u) or (infra_ok and self.g["types"][u["type"]]["infra"])
                   for u in t["units"])

    def air_can_fly_over(self, name_):
        passable_air = self.prop("Neutral Flyover Allowed") and not self.prop(
            "Neutrals Are Impassable")
        if not passable_air and self.neutral_land(name_):
            return False
        return self.passable_not_restricted(name_) and not (
            not self.t[name_]["water"] and not self.air_over(self.t[name_]["owner"]))

    def air_can_land(self, name_):
        t = self.t[name_]
        if t["water"] or name_ in self.g["conquered"] or self.null(t["owner"]):
            return False
        return self.air_over(t["owner"]) and self.land_air(t["owner"])

    def air_base(self, name_):
        return 1 if self.t[name_]["air_base"] else 0

    def canal_fails(self, route, unit_type):
        """validateCanal for one unit: its failure on the route, None where it passes."""
        on_route = []
        for c in self.g["canals"]:
            zones = [x["zone"] for x in self.g["canals"] if x["name"] == c["name"]]
            if any(a in zones and b in zones for a, b in zip(route, route[1:], strict=False)):
                on_route.append(c)
        result = None
        control_all = self.prop("Control All Canals Between Territories To Pass")
        for t in route:
            failure = None
            for c in [c for c in on_route if c["zone"] == t]:
                excluded = c["excluded"] if c["excluded"] is not None else {
                    k for k, v in self.g["types"].items() if v["air"]}
                if unit_type in excluded:
                    failure = None
                elif c["no_cm"]:
                    failure = "combat move"
                else:
                    failure = None
                    for land in c["lands"]:
                        owner = self.t[land]["owner"]
                        if owner != self.p and not self.flag(owner, "canMoveThroughCanals",
                                                             self.allied(owner)):
                            failure = "control"
                            break
                        if land in self.g["conquered"]:
                            failure = "held"
                            break
                if control_all != (failure is None):
                    break
            if failure is not None:
                result = failure
        return result


def prepare(g, player, as_next_turn=False, owners=None):
    """The board the player plans from (docs/turn.md), in place: or Refused."""
    steps, index = g["steps"], g["index"]
    if player is None:
        player = steps[index]["player"]
        if player is None:
            raise Refused("no player to move")
    if player not in g["players"]:
        raise Refused(f"player {player!r} is not in this game")
    if g["props"].get("EditMode"):
        raise Refused("edit mode")

    def combat(step):
        if step["delegate"] not in ("MoveDelegate", "move"):
            return False
        if "combatMove" in step["props"]:
            return step["props"]["combatMove"].lower() == "true"
        if step["props"].get("nonCombatMove", "").lower() == "true":
            return False
        return step["name"].endswith("CombatMove") and not step["name"].endswith(
            "NonCombatMove")

    order = [(index + k) % len(steps) for k in range(len(steps))]
    if as_next_turn:
        target = next((i for i in order if combat(steps[i]) and steps[i]["player"] == player),
                      None)
        if target is None:
            raise Refused("no combat move")
        started = False
        g["conquered"], g["blitzed"], g["fought"], g["battles"] = set(), set(), set(), []
    elif combat(steps[index]) and steps[index]["player"] == player:
        target, started = index, g["started"]
        if not started:
            _triggers(g, player, order, target)
    else:
        if steps[index]["delegate"] not in NEUTRAL_STEPS:
            raise Refused(f"the save is at step {steps[index]['name']}")
        target = None
        for i in order:
            if combat(steps[i]) and steps[i]["player"] == player:
                target = i
                break
            if steps[i]["max_runs"] != -1 and steps[i]["runs"] >= steps[i]["max_runs"]:
                continue
            if steps[i]["delegate"] not in NEUTRAL_STEPS:
                raise Refused(f"the save is at step {steps[index]['name']}: "
                              f"{steps[i]['name']} comes first")
        if target is None:
            raise Refused("no combat move")
        started = False
        _triggers(g, player, order, target)
    for place, owner in (owners or {}).items():
        g["territories"][place]["owner"] = owner
    info = g["players"][player]
    held = [a for a in g["advances"] if (a["prop"] in info["tech"] if a["prop"] else
                                         a["name"] in info["generic"])
            or (not started and a["name"] in g["pending"].get(player, []))]
    g["held"] = held
    g["player"] = player
    g["committed"] = set()
    if started:
        where = {u["id"]: n for n, t in g["territories"].items() for u in t["units"]}
        g["committed"] = {uid for b in g["battles"] if b["attacker"] == player
                          for uid in b["units"] if where.get(uid) == b["site"]}
    else:
        for t in g["territories"].values():
            for u in t["units"]:
                if u["owner"] == player:
                    u["moved"] = Fraction(0)
    _features(g, player)
    step = steps[target]
    give = step["props"]["giveBonusMovement"].lower() == "true" if \
        "giveBonusMovement" in step["props"] else (step["name"].endswith("CombatMove")
                                                   and not step["name"].endswith("NonCombatMove"))
    if not started and give:
        _bonus(g, player)
    return player


def _triggers(g, player, order, target):
    if not g["props"].get("Use Triggers"):
        return
    before, after = [], []
    for i in order:  # BaseTripleADelegate: "before" at a step's start, "after" at its end
        if i != order[0] or not g["step_started"]:
            before.append(g["steps"][i]["name"])
        if i == target:
            break
        after.append(g["steps"][i]["name"])
    moving = {"placement", "removeUnits", "changeOwnership", "unitProperty",
              "territoryProperty", "relationshipTypeProperty", "territoryEffectProperty",
              "tech", "playerProperty", "activateTrigger"}
    at_start = {"playerProperty", "relationshipTypeProperty", "territoryProperty",
                "territoryEffectProperty", "removeUnits", "changeOwnership", "placement"}
    for owner, info in g["players"].items():
        for t in info["triggers"]:
            if f(t, "uses", -1) == 0:
                continue
            when = [(s(f(w, "first")), s(f(w, "second"))) for w in items(f(t, "when"))]
            kinds = set()
            for k in moving | {"relationshipChange"}:
                v = f(t, k)
                if v is None or v is False or v == "":
                    continue
                if hasattr(v, "classdesc") and not isinstance(v, dict | list) and not items(v) \
                        and not f(v, "mapValues"):
                    continue
                if isinstance(v, dict | list | tuple) and not v:
                    continue
                kinds.add(k)
            if when:
                fires = any((a == "after" and x in after) or (a == "before" and x in before)
                            for a, x in when)
            else:
                fires = owner == player and bool(kinds & at_start)
            if not fires:
                continue
            if "relationshipChange" in kinds and not any(
                    player in str(c).split(":")[:2] for c in items(f(t, "relationshipChange"))):
                kinds.discard("relationshipChange")
            if kinds & (moving | {"relationshipChange"}):
                raise Refused(f"trigger {name(t)}")


def _features(g, player):
    types = g["types"]
    mine = {u["type"] for t in g["territories"].values() for u in t["units"]
            if u["owner"] == player}
    movable = [k for k in mine if not types[k]["sea"] and types[k]["movement"] > 0
               and not types[k]["no_cm"]]
    if g["props"].get("Use Fuel Cost") and any(types[k]["fuel"] for k in movable):
        raise Refused("fuel")
    used = {e for t in g["territories"].values() for e in t["effects"]}
    if any(g["effects"].get(e) for e in used):
        raise Refused("territory effects")
    if any(x < 2**31 - 1 for k in movable for x in types[k]["limits"]) or \
            g["players"][player]["limits"]:
        raise Refused("stacking limits")
    if g["props"].get("Neutral Flyover Allowed") and not g["props"].get(
            "Neutrals Are Impassable") and g["props"].get("neutralCharge", 0):
        raise Refused("neutral flyover charge")


def _disabled(g, u):
    k = g["types"][u["type"]]
    return (k["damageable"] and bool(g["props"].get(
        "Damage From Bombing Done To Units Instead Of Territories"))
        and k["max_damage"] >= 0 and u["damage"] > k["max_damage"])


def _bonus(g, player):
    """MoveDelegate.resetAndGiveBonusMovement, unit by unit."""
    r = Rules(g, player)
    give = bool(g["props"].get("Units May Give Bonus Movement"))
    types = g["types"]
    result = {}
    for tname, t in g["territories"].items():
        for u in t["units"]:
            result[u["id"]] = 0
            if not give or not (u["owner"] == player or r.allied(u["owner"])):
                continue

            def gives(x, u=u):
                return ((x["owner"] == player or r.allied(x["owner"])) and not _disabled(g, x)
                        and not x["carried"] and types[x["type"]]["gives"]
                        and types[x["type"]]["gives"].get(u["type"], 0) != 0)

            here = [x for x in t["units"] if gives(x)]
            ut = types[u["type"]]
            land_near = [n for n in g["neighbors"].get(tname, ())
                         if not g["territories"][n]["water"]]
            sea_near = [n for n in g["neighbors"].get(tname, ())
                        if g["territories"][n]["water"]]

            def is_land(x):
                return not types[x["type"]]["sea"] and not types[x["type"]]["air"]

            eligible = bool(here) or (ut["sea"] and any(
                gives(x) and is_land(x) for n in land_near for x in g["territories"][n]["units"]))
            if not eligible:
                continue
            pool = list(here)
            if ut["sea"]:
                pool += [x for n in land_near for x in g["territories"][n]["units"]
                         if gives(x) and is_land(x)]
            elif not ut["air"]:
                pool += [x for n in sea_near for x in g["territories"][n]["units"]
                         if gives(x) and types[x["type"]]["sea"]]
            best = max((types[x["type"]]["gives"][u["type"]] for x in pool), default=None)
            if best is not None and best != 0:
                result[u["id"]] = max(best, -movement_of(g, u))
    for t in g["territories"].values():
        for u in t["units"]:
            u["bonus"] = result[u["id"]]


def movement_of(g, u):
    extra = sum(a["movement"].get(u["type"], 0) for a in g["held"]) \
        if u["owner"] == g["player"] else 0
    return max(0, g["types"][u["type"]]["movement"] + extra)


def can_blitz(g, unit_type):
    return g["types"][unit_type]["blitz"] or any(unit_type in a["blitz"] for a in g["held"])


def simple_routes(g, start, length):
    """Every simple route from `start` of 1..length steps (lists, start first)."""
    found = []
    stack = [[start]]
    while stack:
        route = stack.pop()
        if len(route) > 1:
            found.append(route)
        if len(route) - 1 < length:
            for n in sorted(g["neighbors"].get(route[-1], ())):
                if n not in route:
                    stack.append([*route, n])
    return found


def land_route_ok(g, r, route, unit, escorted=False):
    """validateMove for one land unit on `route` in a combat move: alone, or `escorted` by a
    unit it receives canBlitz from (receivesAbilityWhenWith) moving along."""
    start, steps, end = route[0], route[1:], route[-1]
    middle = route[1:-1]
    t = g["territories"]
    blitzer = can_blitz(g, unit["type"]) or escorted
    # validateFirst: disabled, restriction, land over owned land
    if _disabled(g, unit) or r.restricted_route(route):
        return False
    for x in steps:
        if not t[x]["water"] and not r.land_over(t[x]["owner"]):
            return False
    # validateCombat
    if not all(r.into_combat(x) for x in steps):
        return False
    contested = not r.prop("All Units Can Attack From Contested Territories") and \
        not t[start]["water"] and any(r.is_enemy_t(x) for x in steps) and \
        (not middle or any(r.is_enemy_t(x) for x in middle))
    if contested and t[start]["owner"] != r.p and r.war(t[start]["owner"]):
        if not r.blitzable(start) or not can_blitz(g, unit["type"]):
            return False  # (Matches.unitCanBlitz: no escort counted here)
    if contested and not (t[start]["owner"] != r.p and r.war(t[start]["owner"])) and \
            not r.blitzable(start):
        return False
    if g["types"][unit["type"]]["no_cm"]:
        return False
    # (TripleA 2.x: isNeutralsBlitzable = blitzable and not impassable)
    neutrals_blitzable = r.prop("Neutrals Are Blitzable") and not r.prop(
        "Neutrals Are Impassable")
    if any(not t[x]["water"] and r.null(t[x]["owner"]) for x in middle) and \
            not neutrals_blitzable:
        return False
    enemy, all_blitzable = 0, True
    for x in middle:
        if t[x]["water"]:
            continue
        if (t[x]["owner"] != r.p and r.war(t[x]["owner"])) or x in g["conquered"]:
            enemy += 1
            all_blitzable = all_blitzable and r.blitzable(x)
    if enemy and not all_blitzable:
        return False
    if all_blitzable and not blitzer:
        start_fought = start in g["conquered"] or start in g["blitzed"]
        clean = not start_fought and not any(not r.is_friendly_t(x) for x in middle) and \
            not any(x in g["fought"] or x in g["blitzed"] for x in middle)
        if not (clean and not unit["in_combat"]):
            return False
    if any(x in g["conquered"] and x not in g["blitzed"] for x in middle):
        return False
    # validateNonEnemyUnitsOnPath
    for x in middle:
        if any(r.enemy_unit(u) and not g["types"][u["type"]]["infra"] and not u["submerged"]
               for u in t[x]["units"]):
            return False
    # validateBasic
    if movement_left(g, unit) < len(steps):
        return False
    if t[end]["water"] or any(t[x]["water"] for x in steps):
        return False  # no transports
    if any(r.impassable(x) for x in steps):
        return False
    if not neutral_charge_ok(g, r, steps):
        return False
    return not violates_neutrality(r, steps)


def violates_neutrality(r, steps):
    """validateBasic, TripleA 2.x: "Neutrals Are Impassable", neutrals not blitzable, and a
    neutral land step: "Cannot violate neutrality"."""
    blitzable = r.prop("Neutrals Are Blitzable") and not r.prop("Neutrals Are Impassable")
    return r.prop("Neutrals Are Impassable") and not blitzable and any(
        r.neutral_land(x) for x in steps)


def neutral_charge_ok(g, r, steps):
    empty = [x for x in steps if r.neutral_land(x) and not g["territories"][x]["units"]]
    return g["players"][r.p]["pus"] >= len(empty) * int(g["props"].get("neutralCharge", 0) or 0)


def air_out_ok(g, r, route, unit):
    """validateMove for one aircraft on `route`, but for validateAirCanLand."""
    start, steps, middle = route[0], route[1:], route[1:-1]
    t = g["territories"]
    if _disabled(g, unit) or r.restricted_route(route):
        return False
    for x in steps:
        if not t[x]["water"] and not r.air_over(t[x]["owner"]):
            return False
    if not all(r.into_combat(x) for x in steps):
        return False
    if (not r.prop("Neutral Flyover Allowed") or r.prop("Neutrals Are Impassable")) and \
            any(r.neutral_land(x) for x in middle):
        return False  # (TripleA 2.x: the middle steps only)
    left = movement_left(g, unit) + r.air_base(start) + r.air_base(route[-1])
    if left < 0 or left < len(steps):
        return False
    if any(r.impassable(x) for x in steps):
        return False
    if not neutral_charge_ok(g, r, steps) or violates_neutrality(r, steps):
        return False
    return r.canal_fails(route, unit["type"]) is None


def can_find_land(g, r, unit, current, left):
    """AirMovementValidator.canFindLand: a landable territory within `left`, by a route over
    flyable territories (getNeighborsByMovementCost, then getRouteForUnit)."""
    if left < 0 or left == 0:
        return None
    # getNeighborsByMovementCost: territories within floor(left) over flyable ones
    within = {}
    frontier, seen = [current], {current}
    for depth in range(1, int(left) + 1):
        nxt = []
        for node in frontier:
            for n in g["neighbors"].get(node, ()):
                if n not in seen and r.air_can_fly_over(n):
                    seen.add(n)
                    within[n] = depth
                    nxt.append(n)
        frontier = nxt
    best = None
    for spot in within:
        if not r.air_can_land(spot):
            continue
        # getRouteForUnit: breadth first over (spot or flyable), canals checked per step
        dist = {current: 0}
        queue = deque([current])
        while queue:
            node = queue.popleft()
            for n in g["neighbors"].get(node, ()):
                if n in dist or not (n == spot or r.air_can_fly_over(n)):
                    continue
                if r.canal_fails([node, n], unit["type"]) is not None:
                    continue
                dist[n] = dist[node] + 1
                queue.append(n)
        if spot in dist and dist[spot] <= left and (best is None or dist[spot] < best):
            best = dist[spot]
    return best


def movement_left(g, u):
    return movement_of(g, u) + u["bonus"] - u["moved"]


def is_target(g, r, name_, air):
    t = g["territories"][name_]
    has_enemy = any(r.enemy_unit(u) for u in t["units"])
    if t["water"]:
        return air and has_enemy
    return r.is_enemy_t(name_) or has_enemy


def unsupported(g, r, place, unit):
    k = g["types"][unit["type"]]
    t = g["territories"][place]
    mine = [u for x in g["territories"].values() for u in x["units"] if u["owner"] == r.p]
    if k["sea"] or unit["carried"] or t["water"] or k["kamikaze"] or k["suicide"] or \
            (k["air"] and g["props"].get("Kamikaze Airplanes")) or k["requires"]:
        return True
    tech = g["players"][r.p]["tech"] | {a["prop"] for a in g["held"] if a["prop"]}
    if "mechanizedInfantry" in tech and k["land_transportable"] and any(
            g["types"][u["type"]]["land_transport"] for u in mine):
        return True
    return "paratroopers" in tech and k["air_transportable"] and any(
        g["types"][u["type"]]["air_transport"] for u in mine)


def reach_reference(path, player=None, *, as_next_turn=False, owners=None, game=None):
    """{class key: {target: movement}} of the classes modelled, and the keys refused, as
    (mapping, unsupported keys)."""
    g = read(path) if game is None else game
    player = prepare(g, player, as_next_turn, owners)
    r = Rules(g, player)
    # classes: territory, type, movement left, state
    groups = {}
    for place in g["order"]:
        for u in g["territories"][place]["units"]:
            if u["owner"] != player:
                continue
            state = (u["id"] in g["committed"], u["carried"], u["in_combat"], _disabled(g, u))
            groups.setdefault((place, u["type"]), {}).setdefault(
                (movement_left(g, u), state), []).append(u)
    mapping, refused = {}, []
    for (place, unit_type), by_left in groups.items():
        for (left, state), units in sorted(by_left.items(), key=lambda i: (-i[0][0], i[0][1])):
            key = f"{place} / {unit_type} x{len(units)}"
            if len(by_left) > 1:
                words = [f"{int(left)} left"] + [w for flag, w in zip(state, (
                    "committed", "carried", "after combat", "disabled"), strict=True) if flag]
                key += f" ({', '.join(words)})"
            while key in mapping or key in refused:
                key += " #2" if "#" not in key else ""
            unit = units[0]
            if unsupported(g, r, place, unit):
                refused.append(key)
                continue
            mapping[key] = targets_of(g, r, place, unit, state[0], left, units)
    return mapping, refused


def targets_of(g, r, place, unit, committed, left, units):
    k = g["types"][unit["type"]]
    if committed or left <= 0:
        return {}
    found = {}
    if k["air"]:
        bases = r.air_base(place) + (1 if any(x["air_base"] for x in
                                              g["territories"].values()) else 0)
        for route in simple_routes(g, place, int(left) + bases):
            end = route[-1]
            if not is_target(g, r, end, air=True) or not air_out_ok(g, r, route, unit):
                continue
            steps = len(route) - 1
            if r.air_can_land(end):
                need = max(steps - r.air_base(place) - r.air_base(end), 0)
            else:
                back = can_find_land(g, r, unit, end, left - steps)
                if back is None:
                    continue
                need = steps + back
            found[end] = min(found.get(end, need), need)
        return found
    escorted = {giver for ability, giver in k["receives"] if ability == "canBlitz"}
    for route in simple_routes(g, place, int(left)):
        end = route[-1]
        if not is_target(g, r, end, air=False):
            continue
        if land_route_ok(g, r, route, unit):
            found[end] = min(found.get(end, len(route) - 1), len(route) - 1)
        elif escorted and not can_blitz(g, unit["type"]):
            givers_here = [u for u in g["territories"][place]["units"]
                           if u["owner"] == r.p and u["type"] in escorted
                           and u["id"] not in g["committed"] and can_blitz(g, u["type"])
                           and movement_left(g, u) >= len(route) - 1
                           and land_route_ok(g, r, route, u)]
            if givers_here and land_route_ok(g, r, route, unit, escorted=True):
                found[end] = min(found.get(end, len(route) - 1), len(route) - 1)
    return found


def counts(mapping):
    return Counter(len(v) for v in mapping.values())


def moves_problems(path, moves, player=None, *, game=None):
    """The problems of a list of moves ``[{"unit", "count", "from", "to"}]`` (TripleA's names)
    of the player's combat move, checked together on this reference's own reach; [] where
    they are legal (issue 44's check of ``battlecalc turn --format moves``):

    * every move's units are the player's units of that type in that territory, and the
      classes there whose targets (reach_reference's, recomputed) include its destination can
      serve every move from there at once: for every set of the moves of one territory and
      type, the units they ask for are at most those of the classes reaching one of their
      destinations (Hall's condition, the units given to moves once each);
    * a move whose units blitz only with an escort (receivesAbilityWhenWith: no legal route
      for them alone) has as many of their givers moving from the same territory to the same
      destination."""
    import itertools
    import re

    g = read(path) if game is None else game
    mapping, _ = reach_reference(path, player, game=g)
    player = g["player"]
    r = Rules(g, player)
    classes = {}
    for key, targets in mapping.items():
        m = re.match(r"^(.*) / (\S+) x(\d+)", key)
        classes.setdefault((m.group(1), m.group(2)), []).append((int(m.group(3)), targets))
    problems = []
    groups = {}
    for i, move in enumerate(moves):
        where = (move["from"], move["unit"])
        if where not in classes or move["count"] < 1:
            problems.append(f"move {i}: the {player} have no {move['unit']} that may move in "
                            f"{move['from']}")
            continue
        groups.setdefault(where, []).append(i)
    for where, indices in groups.items():
        for size in range(1, len(indices) + 1):
            for group in itertools.combinations(indices, size):
                ends = {moves[i]["to"] for i in group}
                wanted = sum(moves[i]["count"] for i in group)
                held = sum(n for n, targets in classes[where] if ends & set(targets))
                if wanted > held:
                    problems.append(f"moves {list(group)}: {wanted} {where[1]} from {where[0]} "
                                    f"to {sorted(ends)}, {held} there reach them")
    for i, move in enumerate(moves):
        kind = g["types"].get(move["unit"])
        if kind is None or can_blitz(g, move["unit"]):
            continue
        givers = {giver for ability, giver in kind["receives"] if ability == "canBlitz"}
        if not givers:
            continue
        unit = next((u for u in g["territories"][move["from"]]["units"]
                     if u["owner"] == player and u["type"] == move["unit"]), None)
        alone = unit is not None and any(
            route[-1] == move["to"] and land_route_ok(g, r, route, unit)
            for route in simple_routes(g, move["from"], int(movement_left(g, unit))))
        if not alone:
            escort = sum(m["count"] for m in moves if m["from"] == move["from"]
                         and m["to"] == move["to"] and m["unit"] in givers)
            if escort < move["count"]:
                problems.append(f"move {i}: {move['count']} {move['unit']} blitz to "
                                f"{move['to']} only escorted, and {escort} givers go along")
    return problems
