"""A TripleA map's game file (``GAME.xml``) as a battlecalc edition file (TOML).

What the file states is read: each unit's ``unitAttachment`` (attack, defense, hitPoints,
attackRolls/defenseRolls, isAir/isSea, isSub, isDestroyer, canBombard, chooseBestRoll,
attackAA), its cost from the ``productionRule`` that buys it, the supports (``artillery`` /
``artillerySupportable`` and ``UnitSupportAttachment``) and the rule switches (``<property>``).
The rules the file does not spell out (the order of fire steps, how surprise strikes work)
are the engine's: the edition written is based on the shipped edition whose rules the game
follows (``base =``: the game's name, else its WW2V2/WW2V3 switches), and states every value
the file gives, so that a difference from the shipped edition is visible in the file and
changes the odds only by what the map says.  AA fire is read from the file: the AA unit's
options (TripleA's old ``isAA`` or ``isAAforCombatOnly``, ``attackAA``, ``maxAAattacks``,
``isInfrastructure``) and the properties "Choose AA Casualties" and "Roll AA Individually"
give the unit's ``aa_value``, ``aa_shots`` and ``can_be_casualty`` and the rule flags
``aa_dice`` and ``aa_casualties`` (:func:`_aa_gun`, :func:`_aa_rules`); AA that battlecalc
cannot model (more rounds, chosen targets, over-stacking, attacking AA) is refused naming the
unit.

Units are named as TripleA names them (``armour``, ``aaGun``, ``infantry``): a unit whose
battlecalc name differs says which unit of the base it is (``base_unit = "tank"``), and the
base's name and aliases are its aliases, so armies may be written either way (``3 armour``,
``3 tank``).  Results and ``battlecalc game`` on the imported edition name units by these ids.
Units of the base that TripleA has no type for (``damaged_battleship``) keep the base's name.
A feature the engine cannot model (a unit without counterpart in the base, suicide or kamikaze
units, a support the base lacks, ...) is refused with the list of what is missing, or with
``lenient`` left out with a warning per item.

An edition file imported before TripleA's names became the ids (battlecalc's names as ids,
TripleA's as aliases) is an ordinary edition file and loads as it did.

A game file is read within a budget (:class:`MapBudget`), as a save is
(:mod:`battlecalc.triplea.save`): ElementTree builds an object of some hundred bytes for each
element, so 16 MB of ``<a/>`` would take gigabytes.  The XML is fed to a pull parser in chunks
and its events counted as they come: elements and attributes, nesting, the length of an
attribute value or a text, and the seconds spent.  The four maps of the shared fixtures and
triplea-maps' ``WW2v4.xml`` hold at most 5,149 elements and 12,085 attributes (Global 1940 2nd
Edition, 447 kB), nest 5 deep, hold texts of at most 27,570 characters (the game notes) and
read in about 0.01 s.
"""

from __future__ import annotations

import re
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from xml.parsers import expat

from ..errors import BattleInputError
from ..files import read_input
from ..rules import _TYPEABLE
from .game import EDITIONS_BY_GAME, SITE_UNITS, UNIT_NAMES
from .gamefile import GameFile

MAX_XML_BYTES = 16 * 1024 * 1024
XML_CHUNK_BYTES = 64 * 1024  # fed to the parser at a time: the budget is checked per chunk
# unit options that change a battle in ways battlecalc does not model
UNMODELLED_OPTIONS = {
    "isSuicide": "suicide units", "isSuicideOnAttack": "suicide attackers",
    "isSuicideOnDefense": "suicide defenders", "isSuicideOnHit": "units dying when they hit",
    "isKamikaze": "kamikaze units", "isFirstStrike": "first-strike units other than subs",
    "isMarine": "marines (amphibious attack bonus)", "canEvade": "evading units",
    "attackingLimit": "limits on attacking units",
}
# rule switches that matter to a battle, reported in the edition file's header
COMBAT_PROPERTIES = (
    "WW2V2", "WW2V3", "Low Luck", "Two hit battleship", "Submersible Subs",
    "Defending Subs Sneak Attack", "Attacker Retreat Planes", "Partial Amphibious Retreat",
    "Naval Bombard Casualties Return Fire", "Naval Bombard Casualties Return Fire Restricted",
    "Transport Casualties Restricted", "Choose AA Casualties", "Roll AA Individually",
    "Super Sub Defence Bonus", "LHTR Heavy Bombers", "Heavy Bomber Dice Rolls",
    "Units Repair Hits End Turn", "Air Attack Sub Restricted", "Sub Retreat Before Battle",
)


@dataclass(frozen=True)
class MapBudget:
    """What reading one game file (XML) may cost, against the real maps of the module
    docstring."""

    items: int = 200_000  # elements and attributes: 11x the largest real map (17,234)
    depth: int = 50  # nested elements (real: 5)
    text_chars: int = 1 << 20  # one attribute value or text (real: 27,570 at most)
    seconds: float = 10.0  # (real: 0.01 s)


MAP_BUDGET = MapBudget()


@dataclass
class ImportedEdition:
    text: str  # the TOML
    base: str
    game: str
    warnings: list[str] = field(default_factory=list)


def _read_xml(path, budget: MapBudget = MAP_BUDGET) -> ET.Element:
    raw = read_input(path, MAX_XML_BYTES, "a TripleA game file")
    try:
        if _declares_entities(raw):  # entity expansion: refused before anything is expanded
            raise BattleInputError(f"{path}: XML entity declarations are not read")
        root = _parse_within(raw, budget)
    except ET.ParseError as exc:
        raise BattleInputError(f"{path} is not a TripleA game file: XML error ({exc})"
                               ) from None
    except _PastBudget as exc:
        raise BattleInputError(f"{path} is refused: {exc}, past what a real TripleA game file "
                               "holds") from None
    if root is None or root.tag != "game" or root.find("info") is None:
        raise BattleInputError(f"{path} is not a TripleA game file: no <game> with <info>")
    return root


class _PastBudget(Exception):
    pass


class _Found(Exception):
    pass


def _declares_entities(raw: bytes) -> bool:
    """Whether the document type of the XML `raw` declares an entity (general or parameter),
    in any encoding the parser reads (a UTF-16 file's ``<!ENTITY`` is no UTF-8 bytes).
    Entities are declared in the document type, which comes before the root element: the
    parser stops there, having expanded nothing (a declared entity is refused at its
    declaration, before any reference to it is read).  ET.ParseError where the prolog is not
    XML."""
    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)

    def found(*_):
        raise _Found()

    class _Root(Exception):
        pass

    def root(*_):
        raise _Root()

    parser.EntityDeclHandler = found
    parser.UnparsedEntityDeclHandler = found
    parser.StartElementHandler = root
    try:
        for at in range(0, len(raw), XML_CHUNK_BYTES):
            parser.Parse(raw[at:at + XML_CHUNK_BYTES], False)
        parser.Parse(b"", True)
    except _Found:
        return True
    except _Root:
        return False
    except (expat.ExpatError, ValueError) as exc:  # (ValueError: "multi-byte encodings are
        raise ET.ParseError(str(exc)) from None      # not supported", an encoding it lacks)
    return False


def _parse_within(raw: bytes, budget: MapBudget) -> ET.Element | None:
    """The root element of the XML `raw`, its events counted against `budget` chunk by chunk
    (a chunk holds at most some 16,000 elements: the overshoot is bounded)."""
    parser = ET.XMLPullParser(events=("start", "end"))
    deadline = time.monotonic() + budget.seconds
    root, depth, items = None, 0, 0
    for at in range(0, len(raw), XML_CHUNK_BYTES):
        parser.feed(raw[at:at + XML_CHUNK_BYTES])
        for event, element in parser.read_events():
            if event == "end":
                depth -= 1
                if len(element.text or "") > budget.text_chars:
                    raise _PastBudget(f"a text of more than {budget.text_chars:,} characters")
                continue
            root = element if root is None else root
            depth += 1
            items += 1 + len(element.attrib)
            if items > budget.items:
                raise _PastBudget(f"more than {budget.items:,} XML elements and attributes")
            if depth > budget.depth:
                raise _PastBudget(f"elements nested more than {budget.depth} deep")
            if any(len(v) > budget.text_chars for v in element.attrib.values()):
                raise _PastBudget(f"an attribute of more than {budget.text_chars:,} "
                                  "characters")
        if time.monotonic() > deadline:
            raise _PastBudget(f"not read in {budget.seconds:g} s")
    parser.close()
    return root


def _options(attachment: ET.Element) -> dict[str, str]:
    return {o.get("name", ""): o.get("value", "") for o in attachment.findall("option")}


def _int(value: str, what: str) -> int:
    if not re.fullmatch(r"-?[0-9]{1,6}", value.strip()):
        raise BattleInputError(f"{what}: expected a whole number, found {value!r}")
    return int(value)


def _true(value: str | None) -> bool:
    return (value or "").strip().lower() == "true"


def _base_of(game: str, properties: dict[str, str]) -> str:
    if game in EDITIONS_BY_GAME:
        return EDITIONS_BY_GAME[game]
    if _true(properties.get("WW2V3")):
        return "1942-2e"
    if _true(properties.get("WW2V2")):
        return "revised"
    return "classic"


def _xml_game_file(path) -> GameFile:
    root = _read_xml(path)
    units, supports = [], []
    for attachment in root.iter("attachment"):
        java_class = attachment.get("javaClass", "")
        if java_class.endswith(".UnitAttachment"):
            units.append((attachment.get("attachTo", ""), _options(attachment)))
        elif java_class.endswith(".UnitSupportAttachment"):
            supports.append((attachment.get("name", ""), attachment.get("attachTo", ""),
                             _options(attachment)))
    return GameFile(root.find("info").get("name", ""),
                     {p.get("name", ""): p.get("value", "")
                      for p in root.iter("property") if p.get("name")},
                     units, supports, _costs(root))


def import_edition(path, *, lenient: bool = False, edition_id: str | None = None
                   ) -> ImportedEdition:
    """The edition file (TOML text) of the TripleA game file (XML) or save (.tsvg, whose
    game data carries the same unit attachments) at `path`; BattleInputError listing what
    cannot be modelled unless `lenient` (then each is a warning)."""
    from ..rules import load_rules
    from .save import MAX_SAVE_BYTES

    # a regular file of a save's size at most (never a FIFO, which would block), then its
    # kind by content: a save is gzip data
    gzipped = read_input(path, MAX_SAVE_BYTES, "a TripleA game file or save")[:2] == b"\x1f\x8b"
    if gzipped:
        from .savefile import save_game_file

        source = save_game_file(path)
    else:
        source = _xml_game_file(path)
    game, properties, costs = source.game, source.properties, source.costs
    base_id = _base_of(game, properties)
    base = load_rules(base_id)
    missing: list[str] = []
    units: dict[str, dict] = {}
    names: dict[str, str] = {}  # TripleA name -> edition name
    artillery, supportable = [], []
    guns: dict[str, dict] = {}  # TripleA name -> its AA in a battle
    for tname, options in source.units:
        if tname in SITE_UNITS or (tname != "aaGun" and any(_true(options.get(k)) for k in (
                "isFactory", "isInfrastructure", "isConstruction"))):
            continue
        name = UNIT_NAMES.get(tname, tname)
        name = base.aliases.get(name.lower(), name) if name not in base.units else name
        if name not in base.units:
            missing.append(f"unit {tname}: no such unit in {base_id}")
            continue
        if name in units:
            other = next(t for t, n in names.items() if n == name)
            missing.append(f"unit {tname}: the same unit of {base_id} ({name}) as {other}")
            continue
        names[tname] = name
        for option, what in UNMODELLED_OPTIONS.items():
            value = options.get(option)
            if value is not None and value.strip().lower() not in ("false", "0", ""):
                missing.append(f"unit {tname}: {what} ({option})")
        if _true(options.get("artillery")):
            artillery.append(tname)
        if _true(options.get("artillerySupportable")):
            supportable.append(tname)
        units[name] = _unit_entry(tname, name, options, costs, base)
        gun = _aa_gun(tname, options, base.die_size, missing)
        if gun is not None:
            guns[tname] = gun
            units[name].update(_aa_entry(gun))
        elif base.units[name].aa_value:  # the base's AA unit fires no AA here
            units[name]["aa_value"] = 0
    rules = _aa_rules(guns, properties, missing)
    # the supports are checked against the base's (which the edition keeps through `base`)
    _supports(source.supports, artillery, supportable, names, base, missing)
    ids = {}  # the base's unit -> its id here: TripleA's name where it can be one
    for tname, name in names.items():
        typeable = _TYPEABLE.match(tname) and base.aliases.get(tname.lower(), name) == name
        ids[name] = tname if typeable else name
        units[name] = {**({"base_unit": name} if ids[name] != name else {}),
                       "aliases": sorted({name, *base.units[name].aliases} - {ids[name].lower()}),
                       **units[name]}
    if missing and not lenient:
        raise BattleInputError(
            f"{path}: {len(missing)} features battlecalc cannot model (use --lenient to leave "
            f"them out): " + "; ".join(missing))
    warnings = [f"left out: {item}" for item in missing]
    return ImportedEdition(_toml(path, game, base_id, base, units, ids, rules,
                                 properties, edition_id), base_id, game, warnings)


def _costs(root: ET.Element) -> dict[str, int]:
    """{unit: IPC cost} from the production rules of the first production frontier (the
    standard purchase list; technologies' cheaper lists come after), then any other rule."""
    rules: dict[str, tuple[str, int]] = {}
    for rule in root.iter("productionRule"):
        results = rule.findall("result")
        cost = [c for c in rule.findall("cost") if c.get("resource") == "PUs"]
        if len(results) == 1 and len(cost) == 1:
            quantity = _int(results[0].get("quantity", "1"), "productionRule quantity")
            if quantity > 0:
                rules[rule.get("name", "")] = (results[0].get("resourceOrUnit", ""), _int(
                    cost[0].get("quantity", "0"), "productionRule cost") // quantity)
    frontier = root.find(".//productionFrontier")
    ordered = [] if frontier is None else [r.get("name", "") for r in
                                           frontier.findall("frontierRules")]
    costs: dict[str, int] = {}
    for name in [*ordered, *rules]:
        if name in rules and rules[name][0] not in costs:
            costs[rules[name][0]] = rules[name][1]
    return costs


def _unit_entry(tname: str, name: str, options: dict, costs: dict, base) -> dict:
    def number(option, default):
        value = options.get(option)
        return default if value is None else _int(value, f"unit {tname}: {option}")

    entry: dict = {}
    entry["attack"] = number("attack", 0)
    entry["defense"] = number("defense", 0)
    hp = number("hitPoints", 1)
    if base.units[name].hp > 1 or hp > 1 or not name.startswith("damaged_"):
        entry["hp"] = hp
    entry["attack_dice"] = number("attackRolls", 1)
    entry["defense_dice"] = number("defenseRolls", 1)
    entry["domain"] = "air" if _true(options.get("isAir")) else (
        "sea" if _true(options.get("isSea")) else "land")
    entry["submarine"] = _true(options.get("isSub"))
    entry["anti_sub"] = _true(options.get("isDestroyer"))
    if _true(options.get("chooseBestRoll")):
        entry["best_die"] = True
    if _true(options.get("canBombard")):
        entry["bombard"] = number("bombard", entry["attack"]) if options.get(
            "bombard", "-1") != "-1" else entry["attack"]
    else:
        entry["bombard"] = 0
    if tname in costs:
        entry["cost"] = costs[tname]
    return entry


def _aa_gun(tname: str, options: dict, die_size: int, missing: list[str]) -> dict | None:
    """The unit's AA fire in a battle, from its unitAttachment with TripleA's defaults:
    ``{"aa_value", "aa_shots" (None: one die per aircraft), "can_be_casualty"}``; None for a
    unit that fires no AA in combat.  TripleA's old ``isAA`` stands for isAAforCombatOnly (and
    the AA of raids and fly-overs) and isInfrastructure: never a casualty.  What battlecalc's
    AA cannot do is added to `missing`, naming the unit."""
    old_style = _true(options.get("isAA"))
    if not (old_style or _true(options.get("isAAforCombatOnly"))):
        return None

    def number(option, default):
        value = options.get(option)
        return default if value is None else _int(value, f"unit {tname}: {option}")

    its = f"unit {tname}: its AA"
    shots = number("maxAAattacks", -1)
    if shots == 0:
        return None  # rolls no die
    if shots < -1:
        missing.append(f"{its} rolls {shots} dice (maxAAattacks)")
    if number("maxRoundsAA", 1) != 1:
        missing.append(f"{its} fires in rounds after the first (maxRoundsAA)")
    if _true(options.get("mayOverStackAA")):
        missing.append(f"{its} may roll more dice than there are aircraft (mayOverStackAA)")
    if (options.get("targetsAA") or "").strip():
        missing.append(f"{its} fires at chosen unit types (targetsAA)")
    if number("offensiveAttackAA", 0) > 0:
        missing.append(f"{its} fires when attacking (offensiveAttackAA)")
    if number("attackAAmaxDieSides", -1) not in (-1, die_size):
        missing.append(f"{its} rolls another die than the battle's (attackAAmaxDieSides)")
    return {"aa_value": number("attackAA", 1), "aa_shots": None if shots == -1 else shots,
            "can_be_casualty": not (old_style or _true(options.get("isInfrastructure")))}


def _aa_entry(gun: dict) -> dict:
    """The edition's fields of an AA unit (one that is never a casualty is never lost first
    nor for want of other units: AA50's gun)."""
    entry = {"aa_value": gun["aa_value"], "aa_shots": gun["aa_shots"] or 0,
             "can_be_casualty": gun["can_be_casualty"]}
    if not gun["can_be_casualty"]:
        entry.update(defenceless=False, loss_rank=0)
    return entry


def _aa_rules(guns: dict[str, dict], properties: dict[str, str], missing: list[str]) -> dict:
    """The rule flags of AA fire (`aa_dice`, `aa_casualties`) the file's AA units and
    properties state.  "Choose AA Casualties" lets the attacker choose; otherwise TripleA
    takes the aircraft hit at random, or with "Roll AA Individually" rolls each die at its own
    aircraft: either way a uniformly random set of the aircraft shot at (`own_aircraft`)."""
    if not guns:
        return {}
    per_aircraft = sorted(t for t, gun in guns.items() if gun["aa_shots"] is None)
    if per_aircraft and len(per_aircraft) < len(guns):
        per_gun = sorted(set(guns) - set(per_aircraft))
        missing.append(f"AA: {', '.join(per_aircraft)} roll one die per aircraft, "
                       f"{', '.join(per_gun)} a number per gun (maxAAattacks)")
    return {"aa_dice": "per_aircraft" if per_aircraft else "per_gun",
            "aa_casualties": "attacker_chooses" if _true(properties.get("Choose AA Casualties"))
            else "own_aircraft"}


def _supports(attachments, artillery, supportable, names, base, missing) -> list[tuple]:
    """(giver, (targets...)) of the file, in the edition's names, checked against the base."""
    found: dict[str, set[str]] = {}
    for giver in artillery:
        found.setdefault(names.get(giver, giver), set()).update(
            names.get(t, t) for t in supportable)
    for support_name, giver, options in attachments:
        if "offence" not in options.get("side", "") or options.get("dice") != "strength" \
                or options.get("bonus", "1") != "1" or options.get("number", "1") != "1":
            missing.append(f"support {support_name}: a kind of support other than "
                           "+1 attack to one unit")
            continue
        if options.get("players", "").strip() == "":
            continue  # given to no player: a technology's support (mechanized infantry)
        targets = [t for t in options.get("unitType", "").split(":") if t]
        found.setdefault(names.get(giver, giver), set()).update(names.get(t, t) for t in targets)
    have = {s.giver: set(s.targets) for s in base.supports}
    for giver, targets in sorted(found.items()):
        if giver not in have or not targets <= have[giver]:
            missing.append(f"support {giver} -> {', '.join(sorted(targets))}: not in the "
                           f"rules of {base.id}")
    return sorted((g, tuple(sorted(t))) for g, t in found.items())


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "imported"


def _shown(text) -> str:
    """Text of the file for a comment: as it is if printable, else its repr (a newline or
    another control character would end the comment or make the TOML invalid)."""
    text = str(text)
    return text if text.isprintable() else repr(text)


def _toml(path, game, base_id, base, units, ids, rules, properties, edition_id) -> str:
    """The edition file: its values written by a TOML writer (tomli-w), the file's own text
    in the comments above them on one line each (:func:`_shown`), so that nothing of the file
    can break out of its string or comment; then read back, which
    must give the values written, and loaded as ``--rules-file`` would load it: an edition
    the loader would refuse is refused here, with its message, and never written."""
    import tomllib
    from pathlib import Path

    import tomli_w

    from ..rules import RulesFileError, _parse

    edition = {"base": base_id, "format": 1, "id": edition_id or _slug(game),
               "name": f"{game} (TripleA map)",
               "description": f"TripleA game {game}, on the rules of {base_id}",
               **({"rules": rules} if rules else {}),
               "units": {ids[name]: units[name] for name in base.units if name in units}}
    lines = [f"# Imported from {_shown(Path(path).name)} (TripleA game {game!r}) by "
             "`battlecalc edition import`.",
             f"# Rules not stated in the file are those of {base_id}; every unit value the file",
             "# states is written below, each unit under TripleA's name (base_unit: the unit of",
             f"# {base_id} it is, whose names type it too).  The file's rule switches that matter",
             "# to a battle:"]
    lines += [f"#   {name} = {_shown(properties[name])}" for name in COMBAT_PROPERTIES
              if name in properties]
    text = "\n".join(lines) + "\n" + tomli_w.dumps(edition)
    if tomllib.loads(text) != edition:
        raise BattleInputError(f"{path}: the edition written from it does not read back as "
                               "written (a fault of battlecalc's; please report it)")
    try:
        _parse(lambda: text, f"{path}: the edition imported from it")
    except RulesFileError as exc:
        raise BattleInputError(f"{exc} (the loader refuses it)") from None
    return text
