"""A save's game data as the map file would state it, for :mod:`battlecalc.triplea.mapfile`.

A save carries the unit attachments it was started from (``unitTypeList``), the production
rules and frontiers and the properties.  TripleA turns some XML options into others when it
loads a map: a submarine (``isSub``) is saved as ``isFirstStrike`` + ``canEvade``, and
``artillery`` support as a generated ``UnitSupportAttachment``; they are read back here.
"""

from __future__ import annotations

from .gamefile import GameFile
from .save import SaveFormatError, _class_name, _javaobj, _objects, _Reader

# UnitAttachment fields read (the XML options of the same name)
UNIT_FIELDS = ("attack", "defense", "hitPoints", "attackRolls", "defenseRolls", "isAir", "isSea",
               "isDestroyer", "canBombard", "bombard", "chooseBestRoll", "artillery",
               "artillerySupportable", "isInfrastructure", "isConstruction", "isKamikaze",
               "isSuicideOnAttack", "isSuicideOnDefense", "isSuicideOnHit", "isMarine",
               "isFirstStrike", "canEvade", "canProduceUnits")
# UnitAttachment fields of AA fire -> the XML options they are set by
AA_FIELDS = {"isAaForCombatOnly": "isAAforCombatOnly", "attackAa": "attackAA",
             "maxAaAttacks": "maxAAattacks", "maxRoundsAa": "maxRoundsAA",
             "mayOverStackAa": "mayOverStackAA", "offensiveAttackAa": "offensiveAttackAA",
             "attackAaMaxDieSides": "attackAAmaxDieSides", "targetsAa": "targetsAA"}


def _text(value) -> str:
    value = getattr(value, "value", value)  # java.lang.Integer and friends
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def save_game_file(path) -> GameFile:
    objects = _objects(path)
    _, beans = _javaobj()
    reader = _Reader(beans)
    try:
        return _game_file(reader, objects)
    except SaveFormatError as exc:
        raise SaveFormatError(f"{path}: {exc}") from None
    except (AttributeError, TypeError, ValueError, KeyError, IndexError, RecursionError) as exc:
        raise SaveFormatError(f"{path}: not a TripleA save this version of battlecalc reads "
                              f"({type(exc).__name__})") from None


def _game_file(reader: _Reader, objects) -> GameFile:
    from .save import _properties

    game_data = next((o for o in objects
                      if _class_name(o) == "games.strategy.engine.data.GameData"), None)
    if game_data is None:
        raise SaveFormatError("not a TripleA save: no GameData in the stream")
    units, supports = [], []
    unit_types = reader.get(game_data, "unitTypeList", "unitTypes") or {}
    for name, unit_type in unit_types.items():
        for attachment_name, attachment in (reader.opt(unit_type, "attachments") or {}).items():
            kind = _class_name(attachment)
            values = reader.fields(attachment)
            if kind.endswith(".UnitAttachment"):
                options = {f: _text(values[f]) for f in UNIT_FIELDS if f in values}
                for java_name, option in AA_FIELDS.items():
                    value = values.get(java_name)
                    if java_name == "targetsAa" and value is not None:
                        value = ":".join(sorted(reader.name_of(u) or ""
                                                for u in reader.elements(value)))
                    if value is not None:
                        options[option] = _text(value)
                if options.get("isFirstStrike") == "true" and options.get("canEvade") == "true":
                    options["isSub"] = "true"  # how TripleA saves an XML submarine
                    del options["isFirstStrike"], options["canEvade"]
                if options.get("canProduceUnits") == "true":
                    options["isFactory"] = "true"
                units.append((str(name), options))
            elif kind.endswith(".UnitSupportAttachment"):
                targets = [reader.name_of(u) for u in reader.elements(values.get("unitType"))]
                players = reader.elements(values.get("players"))
                supports.append((str(attachment_name), str(name), {
                    "unitType": ":".join(sorted(t for t in targets if t)),
                    "side": _text(values.get("side", "")), "dice": _text(values.get("dice", "")),
                    "bonus": _text(values.get("bonus", 1)),
                    "number": _text(values.get("number", 1)),
                    "players": ":".join(reader.name_of(p) or "" for p in players)}))
    costs: dict[str, int] = {}
    frontiers = reader.get(game_data, "productionFrontierList", "productionFrontiers") or {}
    ordered = list(frontiers.get("production", None) and reader.elements(
        reader.get(frontiers["production"], "rules")) or [])
    rules = reader.get(game_data, "productionRuleList", "productionRules") or {}
    for rule in [*ordered, *rules.values()]:
        cost = reader.opt(reader.get(rule, "costs"), "mapValues") or {}
        result = reader.opt(reader.get(rule, "results"), "mapValues") or {}
        pus = [getattr(v, "value", v) for r, v in cost.items() if reader.name_of(r) == "PUs"]
        if len(result) == 1 and len(pus) == 1:
            (unit, quantity), = result.items()
            quantity = getattr(quantity, "value", quantity)
            unit_name = reader.name_of(unit)
            if isinstance(quantity, int) and quantity > 0 and unit_name not in costs:
                costs[unit_name] = int(pus[0]) // quantity
    properties = {k: _text(v) for k, v in _properties(
        reader, reader.get(game_data, "properties")).items()}
    return GameFile(reader.text(game_data, "gameName"), properties, units, supports, costs)
