"""A TripleA save as battlecalc sees it: the edition, every territory's units, every pending
battle in the edition's unit names, each solved with the options of ``battlecalc run``.

TripleA's unit names become the edition's (:data:`UNIT_NAMES`: ``armour`` is ``tank``,
``aaGun`` is ``aa``; an edition imported by ``battlecalc edition import`` has TripleA's names
as its ids, and they stay); factories, harbours and airfields are sites, not combat units
(:data:`SITE_UNITS`); a battleship or carrier with a hit is the edition's damaged unit.  The
save's Low Luck switch and each nation's technologies are applied unless the caller gives
``dice`` or techs.  Allied stacks fight as one side; each side lists its units per nation, and
each nation's expected IPC loss is the side's expected loss of each unit type shared among the
nations by their number of units of that type (casualties of a type are taken from any nation).

A battle in progress is solved from where it stands (:func:`_solve_in_progress`): the units
already killed or waiting to die are gone, and where a fire step's dice are rolled, their hits
are taken and the other side's volley (still due in that round) is solved before the next
round starts.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..errors import BattleInputError
from ..options import NOT_GAME_OPTIONS, game_options  # noqa: F401  (re-exported)
from ..output import one_line
from .save import BattleRecord, SaveData, TerritoryRecord, UnitRecord, read_save
from .scramble import air_bases, kamikaze_threat, scramble_open, with_scrambled

# TripleA's game name -> battlecalc edition
EDITIONS_BY_GAME = {
    "World War II Revised": "revised",
    "World War II v5 1942 Second Edition": "1942-2e",
    "World War II Global 1940 2nd Edition": "1940-2e",
    "World War II Europe 1940 2nd Edition": "1940-2e",
    "World War II Pacific 1940 2nd Edition": "1940-2e",
    "World War II v3 1941": "aa50",
    "World War II v3 1942": "aa50",
    "World War II Classic": "classic",
}
# TripleA's unit names that differ from the edition's
UNIT_NAMES = {"armour": "tank", "aaGun": "aa", "mech_infantry": "mech_infantry",
              "tactical_bomber": "tactical_bomber"}
# TripleA units that are places rather than combatants: a raid's target, the AA gun's site
SITE_UNITS = frozenset({"factory", "factory_major", "factory_minor", "factory_upgrade",
                        "harbour", "airfield"})
FACILITY_KINDS = {"factory_major": "major", "factory_minor": "minor", "airfield": "airbase",
                  "harbour": "navalbase"}
KINDS = ("land", "sea", "amphibious", "raid")
MIXED_KEYS = ("attacker_win", "defender_win", "draw", "stalemate", "retreat", "takes_territory",
              "mean_rounds", "attacker_ipc_loss", "defender_ipc_loss", "tuv_swing")


@dataclass
class GameBattle:
    territory: str
    kind: str
    attacker_nations: list[str]
    defender_nations: list[str]
    attacker: dict[str, int]
    defender: dict[str, int]
    bombard: dict[str, int]
    landing: dict[str, int]
    attacker_units: list[dict]  # [{nation, unit, count}] in the edition's names
    defender_units: list[dict]
    in_progress: dict | None = None
    scramble_from: list | None = None  # the AirBases that may scramble into it (scramble.py)
    kamikaze: dict | None = None  # {nation, tokens} that may strike it (scramble.py)
    result: dict | None = None
    ipc_loss: dict[str, float] = field(default_factory=dict)  # nation -> expected IPC lost
    note: str | None = None
    site: Any = field(default=None, repr=False, compare=False)  # the TerritoryRecord
    sides: Any = field(default=None, repr=False, compare=False)  # _Sides: units as they stand
    record: Any = field(default=None, repr=False, compare=False)  # the save's BattleRecord

    def to_dict(self) -> dict[str, Any]:
        return {"territory": self.territory, "kind": self.kind,
                "attacker_nations": self.attacker_nations,
                "defender_nations": self.defender_nations,
                "attacker": self.attacker, "defender": self.defender,
                "bombard": self.bombard, "landing": self.landing,
                "attacker_units": self.attacker_units, "defender_units": self.defender_units,
                "in_progress": self.in_progress,
                "scramble_from": None if self.scramble_from is None
                else [b.to_dict() for b in self.scramble_from],
                "kamikaze": self.kamikaze,
                "ipc_loss": self.ipc_loss,
                "note": self.note, "result": self.result}


@dataclass
class Game:
    game: str
    edition: str
    round: int
    step: str
    player: str | None
    territories: list[dict]
    battles: list[GameBattle]
    low_luck: bool = False
    engine_version: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"game": self.game, "edition": self.edition, "round": self.round,
                "step": self.step, "player": self.player, "low_luck": self.low_luck,
                "territories": self.territories,
                "battles": [b.to_dict() for b in self.battles]}

    def to_json(self) -> str:
        import json

        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    def to_csv(self) -> str:
        """One row per battle: place, kind, nations, armies and the main odds."""
        from ..army import format_army
        from ..results import rows_csv

        columns = ["territory", "kind", "attacker_nations", "defender_nations", "attacker",
                   "defender", "bombard", "landing", "in_progress_round", "method",
                   *MIXED_KEYS, "ipc_loss_by_nation"]
        rows = []
        for b in self.battles:
            result = b.result or {}
            rows.append({
                "territory": b.territory, "kind": b.kind,
                "attacker_nations": ",".join(b.attacker_nations),
                "defender_nations": ",".join(b.defender_nations),
                "attacker": format_army(b.attacker), "defender": format_army(b.defender),
                "bombard": format_army(b.bombard), "landing": format_army(b.landing),
                "in_progress_round": (b.in_progress or {}).get("round", ""),
                "method": result.get("method", ""),
                **{k: result.get(k, "") for k in MIXED_KEYS},
                "ipc_loss_by_nation": ";".join(f"{n}={v:.3f}" for n, v in b.ipc_loss.items()),
            })
        return rows_csv(rows, columns)

    def territories_csv(self) -> str:
        """One row per territory, nation, unit type and hits (TripleA's unit names)."""
        from ..results import rows_csv

        return rows_csv([{"territory": t["name"], "owner": t["owner"], "water": t["water"], **u}
                         for t in self.territories for u in t["units"]],
                        ["territory", "owner", "water", "nation", "unit", "count", "hits"])

    def table(self, show_territories: bool = False) -> str:
        lines = [f"{self.game} (edition {self.edition}), round {self.round}, step {self.step}"
                 + (f", {self.player} to move" if self.player else "")
                 + (", low luck" if self.low_luck else "")]
        if show_territories:
            lines.append("")
            for t in self.territories:
                units = ", ".join(f"{u['nation']} {u['count']} {u['unit']}"
                                  + (f" ({u['hits']} hit)" if u["hits"] else "")
                                  for u in t["units"])
                lines.append(f"  {t['name']} [{t['owner'] or 'no owner'}]: {units or '-'}")
        if not self.battles:
            lines.append("no battle pending")
        for b in self.battles:
            lines.extend(["", *_battle_lines(b)])
        # (each line one line: names read from the save with a newline in them are escaped)
        return "\n".join(map(one_line, lines)) + "\n"


def _battle_lines(b: GameBattle) -> list[str]:
    from ..army import format_army

    def side(units):
        by_nation: dict[str, dict[str, int]] = {}
        for u in units:
            by_nation.setdefault(u["nation"], {})[u["unit"]] = u["count"]
        return "; ".join(f"{n}: {format_army(a)}" for n, a in by_nation.items())

    lines = [f"{b.territory}: {b.kind} battle, {', '.join(b.attacker_nations)} attack "
             f"{', '.join(b.defender_nations) or 'an empty territory'}"]
    if b.in_progress:
        lines.append(f"  in progress: {b.in_progress['stands']}")
    lines.append(f"  attacker  {side(b.attacker_units)}")
    if b.landing:
        lines.append(f"  landing   {format_army(b.landing)}")
    if b.bombard:
        lines.append(f"  bombard   {format_army(b.bombard)}")
    lines.append(f"  defender  {side(b.defender_units) or '-'}")
    for base in b.scramble_from or ():
        lines.append(f"  scramble  from {base.territory}: {side(base.units)}")
    if b.result and (b.result.get("decisions") or {}).get("scrambled"):
        lines.append(f"  scrambled {b.result['decisions']['scrambled']} (the defender's best)")
    if b.note:
        lines.append(f"  note: {b.note}")
    r = b.result
    if r is not None and "attacker_win" in r:
        lines.append(f"  attacker wins {r['attacker_win']:.4f}  defender wins "
                     f"{r['defender_win']:.4f}  draw {r['draw']:.4f}  takes territory "
                     f"{r['takes_territory']:.4f}  ({r['method']})")
        lines.append("  IPC lost  " + ", ".join(f"{n} {v:.2f}" for n, v in b.ipc_loss.items())
                     + f"; TUV swing {r['tuv_swing']:+.2f}")
        a, d = ("/".join(f"{v:g}" for v in r[f"{s}_ipc_loss_percentiles"].values())
                for s in ("attacker", "defender"))
        lines.append(f"  IPC lost percentiles 10/50/90   attacker {a}   defender {d}")
    elif r is not None and "expected_damage" in r:  # a raid (RaidResult.to_dict)
        spread = "/".join(f"{v:g}" for v in r["damage_percentiles"].values())
        lines.append(f"  raid: expected damage {r['expected_damage']:.3f}  damage percentiles "
                     f"10/50/90 {spread}  bombers over the target "
                     f"{r['bombers_over_target']:.3f}  ({r['method']})")
        lines.append(f"  IPC lost  attacker {r['attacker_ipc_loss']:.2f}, defender "
                     f"{r['defender_ipc_loss']:.2f}")
    elif r is not None:  # a result of another kind: every kind says it has one
        lines.append(f"  result: {r.get('method', 'solved')} (see --format json)")
    return lines


# ---------------------------------------------------------------- mapping


def edition_of(data: SaveData) -> str:
    try:
        return EDITIONS_BY_GAME[data.game]
    except KeyError:
        raise BattleInputError(
            f"the TripleA game {data.game!r} maps to no edition of battlecalc (known: "
            f"{', '.join(sorted(EDITIONS_BY_GAME))}); give --rules or --rules-file") from None


def edition_unit(tripleA_name: str, hits: int, ruleset) -> str | None:
    """The edition's unit for a TripleA unit (None for a site: factory, harbour, ...)."""
    if tripleA_name in SITE_UNITS:
        return None
    name = tripleA_name  # an imported edition's id, else the shipped name or an alias
    if name not in ruleset.units:
        name = UNIT_NAMES.get(name, name)
        name = ruleset.aliases.get(name.lower(), name) if name not in ruleset.units else name
    if name not in ruleset.units:
        raise BattleInputError(
            f"unit {tripleA_name!r} of the save cannot be modelled in {ruleset.id}: it has no "
            f"such unit (units: {', '.join(ruleset.units)})")
    if hits > 0 and ruleset.units[name].hp > 1:
        damaged = ruleset.units[name].damaged_form or f"damaged_{name}"
        if damaged in ruleset.units:
            return damaged
    return name


def _territory_dict(t: TerritoryRecord) -> dict:
    counts = Counter((u.owner, u.type, u.hits) for u in t.units)
    return {"name": t.name, "owner": t.owner, "water": t.water,
            "units": [{"nation": n, "unit": u, "count": c, "hits": h}
                      for (n, u, h), c in sorted(counts.items(), key=lambda i: (
                          str(i[0][0]), i[0][1], i[0][2]))]}


def _army(units, ruleset) -> tuple[dict[str, int], list[dict], list[str]]:
    """({edition unit: count}, [{nation, unit, count}], nations) of combat units."""
    army: Counter = Counter()
    per_nation: Counter = Counter()
    nations: list[str] = []
    for u in units:
        name = edition_unit(u.type, u.hits, ruleset)
        if name is None:
            continue
        army[name] += 1
        per_nation[(u.owner, name)] += 1
        if u.owner not in nations:
            nations.append(u.owner)
    ordered = {n: army[n] for n in ruleset.units if army[n]}
    rows = [{"nation": nation, "unit": unit, "count": c}
            for nation in nations for unit in ordered if (c := per_nation[(nation, unit)])]
    return ordered, rows, nations


def _minus(units: tuple[UnitRecord, ...], gone: tuple[UnitRecord, ...]) -> list[UnitRecord]:
    left = Counter((u.owner, u.type) for u in gone)
    kept = []
    for u in units:
        if left[(u.owner, u.type)]:
            left[(u.owner, u.type)] -= 1
        else:
            kept.append(u)
    return kept


def _kind(record: BattleRecord, water: bool) -> str:
    if record.battle_type in ("BOMBING_RAID", "AIR_RAID"):
        return "raid"
    if record.battle_type == "AIR_BATTLE":
        return "air"
    if water:
        return "sea"
    return "amphibious" if record.amphibious or record.landing else "land"


def _techs(nations, data: SaveData, ruleset) -> list[str]:
    """The technologies of the side's nations that the edition knows (LHTR heavy bombers where
    the save's switch says so)."""
    found: list[str] = []
    for nation in nations:
        for tech in data.techs.get(nation, ()):
            if tech == "heavy_bombers" and data.properties.get("LHTR Heavy Bombers") \
                    and "lhtr_heavy_bombers" in ruleset.techs:
                tech = "lhtr_heavy_bombers"
            if tech in ruleset.techs and tech not in found:
                found.append(tech)
    return found


# ---------------------------------------------------------------- reading and solving


def read_game(path, *, rules=None, solve: bool = True, territory: str | None = None,
              attack: str | None = None, max_inflated: int | None = None, **options) -> Game:
    """Read the TripleA save at `path`: the game, its edition, every territory's units and
    every pending battle, each solved (``solve``) with simulate's `options` (method, trials,
    seed, dice, orders of losses, retreats, ...).

    max_inflated: a lower cap on the decompressed save (bytes; the web server's uploads).
    rules: an edition id or Ruleset instead of the one the game maps to; territory: one
    place only (its battle, or with `attack` the odds of that attack, in the edition's army
    notation, on the territory's units).  Raises BattleInputError for a file that is not a
    readable TripleA save, a game that maps to no edition, or units the edition lacks.
    """
    from ..rules import load_rules

    allowed = set(game_options())
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise BattleInputError(f"read_game takes no option {', '.join(unknown)} (its options: "
                               f"{', '.join(sorted(allowed))})")
    _check_arguments(path, solve, territory, attack, max_inflated)
    # an edition id, a path or a Ruleset: load_rules refuses anything else, before the read
    ruleset = None if rules is None else load_rules(rules)
    data = read_save(path) if max_inflated is None else read_save(path, max_inflated)
    return game_of_save(data, rules=ruleset, solve=solve, territory=territory, attack=attack,
                        **options)


def territory_suggestions(name: str, names) -> list[str]:
    """The save's territories a player may have meant by `name`: the same name in another case,
    the same words in another order (TripleA names sea zones "110 Sea Zone", players say "Sea
    Zone 110"), else the closest spellings (at most three)."""
    import difflib

    def words(text: str) -> list[str]:
        return sorted(text.lower().replace("-", " ").split())

    names = list(names)
    for same in (lambda n: n.lower() == name.lower(), lambda n: words(n) == words(name)):
        found = [n for n in names if same(n)]
        if found:
            return found[:3]
    lowered = {n.lower(): n for n in names}
    return [lowered[n] for n in difflib.get_close_matches(name.lower(), list(lowered), n=3,
                                                           cutoff=0.75)]


def game_of_save(data: SaveData, *, rules=None, solve: bool = True,
                 territory: str | None = None, attack: str | None = None, **options) -> Game:
    """read_game's work on a save already read (save.read_save): its game, battles solved."""
    from ..rules import load_rules

    # an edition id, a path or a Ruleset: load_rules refuses anything else
    ruleset = load_rules(edition_of(data) if rules is None else rules)
    low_luck = bool(data.properties.get("Low Luck"))
    places = {t.name: t for t in data.territories}
    battles = []
    if territory is not None and territory not in places:
        close = territory_suggestions(territory, places)
        hint = "" if not close else f"; did you mean {close[0]!r}?" if len(close) == 1 else \
            f"; did you mean one of {', '.join(repr(n) for n in close)}?"
        raise BattleInputError(f"no territory {territory!r} in this save{hint}")
    for record in data.battles:
        if territory is not None and record.territory != territory:
            continue
        battles.append(_game_battle(record, places[record.territory], data, ruleset))
    if territory is not None and attack is not None:
        battles = [_attack_on(places[territory], attack, data, ruleset)]
    elif attack is not None:
        raise BattleInputError("an attack needs the territory it is made on (--territory)")
    if solve:
        for battle in battles:
            _solve(battle, data, ruleset, low_luck, dict(options))
    shown = [t for t in data.territories if territory is None or t.name == territory]
    return Game(game=data.game, edition=ruleset.id, round=data.round,
                step=data.step_display or data.step, player=data.player,
                territories=[_territory_dict(t) for t in shown], battles=battles,
                low_luck=low_luck, engine_version=data.engine_version)


def _check_arguments(path, solve, territory, attack, max_inflated) -> None:
    """read_game's own arguments, each of its type (a wrong one was a Python error later, or
    `solve="no"` solved)."""
    import os

    from ..errors import quoted
    from .save import MAX_STREAM_BYTES

    if not isinstance(path, str | os.PathLike):
        raise BattleInputError(f"path: expected the path of a TripleA save, got {quoted(path)}")
    if not isinstance(solve, bool):
        raise BattleInputError(f"solve: expected True or False, got {quoted(solve)}")
    for name, value in (("territory", territory), ("attack", attack)):
        if value is not None and not isinstance(value, str):
            raise BattleInputError(f"{name}: expected text, got {quoted(value)}")
    if max_inflated is not None and (isinstance(max_inflated, bool)
                                     or not isinstance(max_inflated, int)
                                     or not 1 <= max_inflated <= MAX_STREAM_BYTES):
        raise BattleInputError(f"max_inflated: expected a number of bytes 1..{MAX_STREAM_BYTES}"
                               f" (a lower cap on the decompressed save), got "
                               f"{quoted(max_inflated)}")


@dataclass
class _Sides:
    """The units of a battle where it stands (standing, and chosen as casualties: waiting),
    and how it stands."""

    attacking: list
    defending: list
    landing: list
    bombarding: list
    attacking_waiting: list = field(default_factory=list)
    defending_waiting: list = field(default_factory=list)
    in_progress: dict | None = None
    fire: Any = None  # the FireState it stands in


def _sides(record: BattleRecord) -> _Sides:
    """The units standing and waiting.  TripleA's attackingUnits and defendingUnits hold the
    standing ones: a casualty chosen leaves them for the side's waiting-to-die list
    (MustFightBattle markCasualties), a unit removed goes from both to ``killed``
    (cleanupKilledUnits); only the landed units (amphibiousLandAttackers) keep their dead.
    At a fire's notify step (its phase "mark") the casualties it chose are still standing:
    they are moved to waiting (docs/in-progress.md)."""
    fire = record.fire
    a_wait, d_wait = list(record.attacking_waiting_to_die), list(record.defending_waiting_to_die)
    attacking, defending = list(record.attacking), list(record.defending)
    if fire is not None and fire.phase == "mark" and fire.killed:
        if fire.defending or fire.kind in ("aa", "raid_aa"):  # chosen among the attacker's
            attacking = _minus(tuple(attacking), fire.killed)
            a_wait += [u for u in fire.killed if u not in a_wait]
        else:
            defending = _minus(tuple(defending), fire.killed)
            d_wait += [u for u in fire.killed if u not in d_wait]
    landing = _minus(_minus(record.landing, record.killed), tuple(a_wait))
    attacking = _minus(tuple(attacking), tuple(landing))
    sides = _Sides(attacking, defending, landing, list(record.bombarding), a_wait, d_wait,
                   fire=fire)
    if not record.started and record.round <= 1 and not record.killed:
        return sides
    stands = f"round {record.round}"
    if record.killed:
        stands += f", {len(record.killed)} units killed so far"
    if fire is not None:
        who = fire.firing_nation or ("the defender" if fire.defending else "the attacker")
        if fire.phase == "roll":
            stands += f"; {who} to fire ({fire.kind})"
        else:
            stands += (f"; {who} fired ({fire.dice} dice, {fire.hits} hit"
                       f"{'' if fire.hits == 1 else 's'})"
                       + (", casualties chosen" if fire.phase == "mark"
                          else f", next: {fire.next_step or 'casualties'}"))
    sides.in_progress = {"round": record.round, "stands": stands,
                         "killed": len(record.killed), "step": fire.step if fire else "",
                         "fired": None if fire is None else {
                             "defending": fire.defending, "nation": fire.firing_nation,
                             "dice": fire.dice, "hits": fire.hits}}
    return sides


# where a battle in progress stands (a FireState's kind, who fires, its phase) -> the start
# step of battlecalc (spec.Start), the hits it carries ("attacker": on the attacker) and
# whether its chosen casualties stay waiting (docs/in-progress.md, L1-L16, S4-S15)
_LAND_FIRE = {
    ("aa", False, "roll"): ("start", None), ("aa", True, "roll"): ("start", None),
    ("aa", False, "select"): ("aa_casualties", "attacker"),
    ("aa", True, "select"): ("aa_casualties", "attacker"),
    ("aa", False, "mark"): ("bombard_fire", None), ("aa", True, "mark"): ("bombard_fire", None),
    ("bombard", False, "roll"): ("bombard_fire", None),
    ("bombard", False, "select"): ("bombard_casualties", "defender"),
    ("bombard", False, "mark"): ("attacker_fire", None),
    ("general", False, "roll"): ("attacker_fire", None),
    ("general", False, "select"): ("defender_fire", "defender"),
    ("general", False, "mark"): ("defender_fire", None),
    ("general", True, "roll"): ("defender_fire", None),
    ("general", True, "select"): ("general_casualties", "attacker"),
    ("general", True, "mark"): ("end_of_round", None),
}
_SEA_FIRE = {
    ("strike", False, "roll"): ("attacker_strike", None),
    ("strike", False, "select"): ("defender_strike", "defender"),
    ("strike", False, "mark"): ("defender_strike", None),
    ("strike", True, "roll"): ("defender_strike", None),
    ("strike", True, "select"): ("strike_casualties", "attacker"),
    ("strike", True, "mark"): ("attacker_fire", None),
    **{k: v for k, v in _LAND_FIRE.items() if k[0] == "general"},
}


def start_of(record: BattleRecord, sides: _Sides, kind: str, ruleset) -> dict[str, Any]:
    """The start keywords of simulate (spec.Start) for a battle as it stands in a save: {} for
    one not begun.  BattleInputError, naming TripleA's step, for a step battlecalc does not
    solve from."""
    if sides.in_progress is None:
        return {}
    fire = sides.fire
    where = f"{record.territory} stands at TripleA's step {fire.step if fire else '?'}"
    out: dict[str, Any] = {"start_round": record.round}
    a_wait = _army(sides.attacking_waiting, ruleset)[0]
    d_wait = _army(sides.defending_waiting, ruleset)[0]
    if fire is None:
        # between steps (a retreat or submerge question; 2.0's unnamed steps): the start of the
        # round, or its end where casualties are chosen and not yet removed
        if a_wait or d_wait:
            out["start_step"] = "end_of_round"
    else:
        table = _SEA_FIRE if kind == "sea" else _LAND_FIRE
        found = table.get((fire.kind, fire.defending, fire.phase))
        if found is None:
            raise BattleInputError(
                f"{where} ({fire.kind} fire, {fire.phase}): battlecalc does not solve a "
                "battle from there (docs/in-progress.md)")
        step, hits = found
        if step == "attacker_fire" and record.round > 1 and not (a_wait or d_wait):
            step = "start"
        out["start_step"] = step
        if hits is not None and fire.hits:
            out[f"hits_on_{hits}"] = fire.hits
    if a_wait:
        out["attacker_waiting"] = a_wait
    if d_wait:
        out["defender_waiting"] = d_wait
    return out


def _game_battle(record: BattleRecord, place: TerritoryRecord, data: SaveData,
                 ruleset) -> GameBattle:
    kind = _kind(record, place.water)
    sides = _sides(record)
    attacker, attacker_rows, attacker_nations = _army(sides.attacking, ruleset)
    landing, landing_rows, landing_nations = _army(sides.landing, ruleset)
    bombard, _, _ = _army(sides.bombarding, ruleset)
    defender, defender_rows, defender_nations = _army(sides.defending, ruleset)
    rows = attacker_rows + [r for r in landing_rows if r not in attacker_rows]
    nations = attacker_nations + [n for n in landing_nations if n not in attacker_nations]
    if record.attacker and record.attacker not in nations:
        nations.insert(0, record.attacker)
    if record.defender and record.defender not in defender_nations and defender:
        defender_nations.insert(0, record.defender)
    battle = GameBattle(record.territory, kind, nations, defender_nations, attacker, defender,
                        bombard, landing, rows, defender_rows, sides.in_progress)
    if sides.in_progress is not None:
        # (the units chosen as casualties count among the nations' units: losses from here)
        _, a_rows, _ = _army([*sides.attacking, *sides.landing, *sides.attacking_waiting],
                             ruleset)
        _, d_rows, _ = _army([*sides.defending, *sides.defending_waiting], ruleset)
        battle.attacker_units, battle.defender_units = a_rows, d_rows
    battle.sides, battle.site, battle.record = sides, place, record
    if kind == "sea" and sides.in_progress is None:  # (the reactions come before a battle)
        notes = []
        if scramble_open(record, data, ruleset):
            bases, notes = air_bases(record, data, ruleset, edition_unit)
            battle.scramble_from = bases or None
        battle.kamikaze = k = kamikaze_threat(record, place, data, ruleset)
        if k:
            notes.append(f"the {k['nation']} may strike with up to {k['tokens']} kamikaze "
                         "token(s) before the battle: solved without them (run --kamikaze N "
                         "weighs N)")
        battle.note = "; ".join(notes) or None
    return battle


def _attack_on(place: TerritoryRecord, attack: str, data: SaveData, ruleset) -> GameBattle:
    from ..army import parse_army

    attacker = parse_army(attack, ruleset)
    defender, rows, nations = _army(place.units, ruleset)
    battle = GameBattle(place.name, "sea" if place.water else "land", ["(given attack)"],
                        nations, dict(attacker), defender, {}, {},
                        [{"nation": "(given attack)", "unit": u, "count": c}
                         for u, c in attacker.items()], rows,
                        note="a given attack on the territory's units")
    battle.site = place
    return battle


def _solve(battle: GameBattle, data: SaveData, ruleset, low_luck: bool, options: dict) -> None:
    from ..api import simulate

    if battle.kind == "air":
        battle.note = "an air battle before a raid: not solved (battlecalc raid covers it)"
        return
    if not battle.defender and battle.kind != "raid" and not (
            battle.sides is not None and battle.sides.defending_waiting):
        battle.note = "no defending unit: the attacker takes the place unopposed"
        return
    if low_luck and "dice" not in options:
        options["dice"] = "low_luck"
    nations_a = [n for n in battle.attacker_nations if n in data.techs]
    if "attacker_tech" not in options and (techs := _techs(nations_a, data, ruleset)):
        options["attacker_tech"] = techs
    if "defender_tech" not in options and (techs := _techs(battle.defender_nations, data,
                                                            ruleset)):
        options["defender_tech"] = techs
    if battle.kind == "raid":
        _solve_raid(battle, ruleset, options)
        return
    kwargs = dict(rules=ruleset, attacker=battle.attacker or None, defender=battle.defender,
                  sea=battle.kind == "sea", **options)
    if battle.kind == "amphibious":
        kwargs.update(landing=battle.landing or None, bombard=battle.bombard or None)
    sides = battle.sides
    if sides is not None and sides.in_progress is not None:
        # one solve from where the battle stands (battlecalc.starts)
        start = start_of(battle.record, sides, battle.kind, ruleset)
        sides.in_progress["start"] = start
        try:
            result = simulate(**kwargs, **start)
        except BattleInputError as exc:
            raise BattleInputError(f"{battle.territory} (in progress, round "
                                   f"{sides.in_progress['round']}): {exc}") from None
        battle.result = {**result.to_dict(), "from_round": sides.in_progress["round"],
                         "start": start}
    elif battle.scramble_from:
        # the defender's best scramble from the bases in reach (battlecalc.reactions)
        result = simulate(**kwargs, scramble_from=[b.aircraft for b in battle.scramble_from])
        battle.result = result.to_dict()
        sent = result.decisions["scrambled"]
        if sent and sent != "nothing":
            from ..army import parse_army

            battle.defender_units = with_scrambled(battle.defender_units,
                                                   battle.scramble_from,
                                                   parse_army(sent, ruleset))
            battle.defender_nations += list(dict.fromkeys(
                r["nation"] for r in battle.defender_units
                if r["nation"] not in battle.defender_nations))
    else:
        battle.result = simulate(**kwargs).to_dict()
    battle.ipc_loss = _ipc_by_nation(battle, ruleset)


def _solve_raid(battle: GameBattle, ruleset, options: dict) -> None:
    from ..raids import raid

    site = battle.site
    sites = [u.type for u in site.units if u.type in SITE_UNITS]
    facility = next((FACILITY_KINDS[s] for s in sites if s in FACILITY_KINDS), None)
    keep = {k: options[k] for k in ("method", "trials", "seed", "dice", "attacker_tech",
                                    "defender_tech", "attacker_ool") if k in options}
    guns = {u for u in battle.defender if ruleset.units[u].aa_value}  # aa, or aaGun imported
    aa = bool(guns)
    defender = {u: c for u, c in battle.defender.items() if u not in guns} or None
    fire = battle.sides.fire if battle.sides is not None else None
    position = raid_position(fire, battle.territory, ruleset)
    keep.update(position)
    if position.get("start_step") in ("aa_fire", "aa_casualties", "bombing"):
        step = position["start_step"]
        battle.sides.in_progress = battle.sides.in_progress or {"round": 1}
        battle.in_progress = {**(battle.in_progress or {}), "stands": f"raid: {step}",
                              "start": {"start_step": step,
                                        "hits_on_attacker": keep.get("hits_on_attacker", 0)}}
        defender = None  # (the air battle is over)
    result = raid(rules=ruleset, attacker=battle.attacker, defender=defender,
                  target_value=site.production, facility=facility if ruleset.facilities
                  else None, aa=aa, **keep)
    battle.result = result.to_dict()


def raid_position(fire, territory: str, ruleset) -> dict[str, Any]:
    """raid()'s start keywords for a raid in progress standing at `fire` (a FireState;
    docs/in-progress.md R1-R12; {} for a raid not begun): its AA to fire (aa_fire), rolled
    (aa_casualties, the hits to take), its casualties chosen (bombing: they are out of the
    bombers standing), its bombing to come (bombing); its air battle about to be fought (the
    interceptors to launch, or the attackers to fire: the raid from its start, the
    interceptors standing taken as given).  BattleInputError
    naming TripleA's step where nothing is left to solve (its bombing dice rolled, the raid
    over) or where battlecalc does not solve from (an air battle under way)."""
    if fire is None:
        return {}
    if fire.kind == "raid_aa" or (fire.kind == "bombing" and fire.phase == "roll"):
        step = ("aa_fire" if fire.kind == "raid_aa" and fire.phase == "roll" else
                "aa_casualties" if fire.kind == "raid_aa" and fire.phase == "select" else
                "bombing")
        return {"start_step": step, **({"hits_on_attacker": fire.hits}
                                        if step == "aa_casualties" else {})}
    if fire.kind == "interceptors" or (fire.kind == "air_battle" and fire.phase == "roll"
                                       and not fire.defending):
        return {"start_step": "air_battle" if ruleset.flags["air_battle"] else "start"}
    if fire.kind == "bombing":
        raise BattleInputError(f"{territory}: a raid whose bombing dice are rolled (TripleA's "
                               f"step {fire.step}): its damage is known, nothing is left to "
                               "solve")
    if fire.kind == "raid_over":
        raise BattleInputError(f"{territory}: a raid after its bombing (TripleA's step "
                               f"{fire.step}): its damage is known, nothing is left to solve")
    raise BattleInputError(f"{territory}: a raid's air battle under way (TripleA's step "
                           f"{fire.step}) is not solved from where it stands")


def _ipc_by_nation(battle: GameBattle, ruleset) -> dict[str, float]:
    """Each nation's expected IPC loss: per unit type, the side's expected loss of that type
    (start count minus expected survivors, times its cost) shared by unit counts."""
    r = battle.result or {}
    out: dict[str, float] = {}
    for rows, survivors in ((battle.attacker_units, r.get("attacker_survivors", {})),
                            (battle.defender_units, r.get("defender_survivors", {}))):
        total = Counter()
        for row in rows:
            total[row["unit"]] += row["count"]
        for row in rows:
            unit = ruleset.units[row["unit"]]
            kept = unit.cost * survivors.get(row["unit"], 0.0)
            damaged = unit.damaged_form
            if damaged and damaged not in total:  # hit in this battle, still afloat
                kept += ruleset.units[damaged].cost * survivors.get(damaged, 0.0)
            lost = max(unit.cost * total[row["unit"]] - kept, 0.0)
            out[row["nation"]] = out.get(row["nation"], 0.0) + lost * row["count"] / total[
                row["unit"]]
    return {n: round(v, 12) + 0.0 for n, v in out.items() if not math.isnan(v)}
