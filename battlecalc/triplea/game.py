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
from .save import BattleRecord, SaveData, TerritoryRecord, UnitRecord, read_save

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
# run's options a game's battles take (the armies, the kind and the waves come from the save)
NOT_GAME_OPTIONS = frozenset({"rules", "attacker", "defender", "sea", "landing", "bombard",
                              "waves", "counterattack", "progress", "rounds_distribution"})
MIXED_KEYS = ("attacker_win", "defender_win", "draw", "stalemate", "retreat", "takes_territory",
              "mean_rounds", "attacker_ipc_loss", "defender_ipc_loss", "tuv_swing")


def game_options() -> tuple[str, ...]:
    """The keywords of simulate that a game's battles take (the option table's dice options)."""
    from ..options import OPTIONS

    return tuple(o.name for o in OPTIONS if o.flag and o.applies & {"land", "sea", "amphibious"}
                 and o.name not in NOT_GAME_OPTIONS)


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
    result: dict | None = None
    ipc_loss: dict[str, float] = field(default_factory=dict)  # nation -> expected IPC lost
    note: str | None = None
    site: Any = field(default=None, repr=False, compare=False)  # the TerritoryRecord
    sides: Any = field(default=None, repr=False, compare=False)  # _Sides: units as they stand

    def to_dict(self) -> dict[str, Any]:
        return {"territory": self.territory, "kind": self.kind,
                "attacker_nations": self.attacker_nations,
                "defender_nations": self.defender_nations,
                "attacker": self.attacker, "defender": self.defender,
                "bombard": self.bombard, "landing": self.landing,
                "attacker_units": self.attacker_units, "defender_units": self.defender_units,
                "in_progress": self.in_progress, "ipc_loss": self.ipc_loss,
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
            lines.extend(["", _battle_lines(b)])
        return "\n".join(lines) + "\n"


def _battle_lines(b: GameBattle) -> str:
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
    return "\n".join(lines)


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
    if ruleset is None:
        ruleset = load_rules(edition_of(data))
    low_luck = bool(data.properties.get("Low Luck"))
    places = {t.name: t for t in data.territories}
    battles = []
    if territory is not None and territory not in places:
        close = [n for n in places if n.lower() == territory.lower()]
        hint = f"; did you mean {close[0]!r}?" if close else ""
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
    """The units of a battle where it stands, and how it stands."""

    attacking: list
    defending: list
    landing: list
    bombarding: list
    in_progress: dict | None = None
    pending_fire: Any = None  # a FireState whose hits are still to be taken


def _sides(record: BattleRecord) -> _Sides:
    """The units standing.  TripleA's attackingUnits and defendingUnits hold them already: a
    casualty chosen leaves them for the side's waiting-to-die list (MustFightBattle
    markCasualties), a unit removed goes from both to ``killed`` (cleanupKilledUnits); only
    the landed units (amphibiousLandAttackers) keep their dead."""
    landing = _minus(_minus(record.landing, record.killed), record.attacking_waiting_to_die)
    attacking = _minus(record.attacking, tuple(landing))
    defending = list(record.defending)
    sides = _Sides(attacking, defending, landing, list(record.bombarding))
    if not record.started and record.round <= 1 and not record.killed:
        return sides
    stands = f"round {record.round}"
    fire = record.fire
    if record.killed:
        stands += f", {len(record.killed)} units killed so far"
    if fire is not None:
        who = fire.firing_nation or ("the defender" if fire.defending else "the attacker")
        stands += (f"; {who} fired ({fire.dice} dice, {fire.hits} hit"
                   f"{'' if fire.hits == 1 else 's'}), next: {fire.next_step or 'casualties'}")
        sides.pending_fire = fire
    else:
        stands += "; solved from the units still standing"
    sides.in_progress = {"round": record.round, "stands": stands,
                         "killed": len(record.killed),
                         "fired": None if fire is None else {
                             "defending": fire.defending, "nation": fire.firing_nation,
                             "dice": fire.dice, "hits": fire.hits}}
    return sides


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
    battle.sides, battle.site = sides, place
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
    if not battle.defender and battle.kind != "raid":
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
        battle.result = _solve_in_progress(battle, sides, ruleset, kwargs)
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
    result = raid(rules=ruleset, attacker=battle.attacker, defender=defender,
                  target_value=site.production, facility=facility if ruleset.facilities
                  else None, aa=aa, **keep)
    battle.result = result.to_dict()


def _apply_casualties(force: dict[str, int], hits: int, ruleset, order_text, role: str
                      ) -> dict[str, int]:
    """`force` after `hits` casualties in its order of losses (damage before kills)."""
    from ..orders import casualty_steps, parse_loss_order

    order = parse_loss_order(order_text, ruleset, role)
    left = dict(force)
    for name, what in casualty_steps(force, ruleset.units, order, ruleset.supports)[:hits]:
        left[name] -= 1
        if what == "damage":
            damaged = ruleset.units[name].damaged_form
            left[damaged] = left.get(damaged, 0) + 1
    return {u: c for u, c in left.items() if c > 0}


def _solve_in_progress(battle: GameBattle, sides: _Sides, ruleset, kwargs: dict) -> dict:
    """The odds from where the battle stands.  Rounds already fought are over; a volley whose
    dice are rolled has its hits taken now.  If the attacker has fired and the defender has
    not, the defender's volley still comes in this round from all its units (casualties fire
    back): its law is the attacker's survivors after one round of a battle of the same units
    that the attacker leaves at its end (retreat_after=1); each such outcome then continues as
    a fresh battle from the next round, and the odds are their mixture.  Round-1 fire (AA,
    bombardment, surprise strikes) is not repeated: non-casualty AA guns leave the sides.
    """
    import time

    from ..api import simulate

    started = time.perf_counter()
    rounds_done = battle.in_progress["round"]
    fire = sides.pending_fire
    attacker = dict(battle.attacker)
    for unit, count in battle.landing.items():  # landed units fight on as attackers
        attacker[unit] = attacker.get(unit, 0) + count
    defender = dict(battle.defender)
    base = {k: v for k, v in kwargs.items() if k not in ("attacker", "defender", "landing",
                                                         "bombard")}
    if base.get("retreat_after") is not None:
        if base["retreat_after"] <= rounds_done:
            raise BattleInputError(f"--retreat-after {base['retreat_after']}: the battle in "
                                   f"{battle.territory} is already in round {rounds_done}")
        base["retreat_after"] -= rounds_done
    has_subs = any(ruleset.units[u].submarine for u in (*attacker, *defender))

    def no_spent_aa(force):
        return {u: c for u, c in force.items()
                if not (ruleset.units[u].aa_value and not ruleset.units[u].can_be_casualty)}

    notes = []
    if battle.landing:
        notes.append("landed units fight on as attackers (their retreat rule is not kept)")
    if fire is not None and fire.defending:  # its casualties wait to die: gone already
        attacker = _apply_casualties(attacker, fire.hits, ruleset, base.get("attacker_ool"),
                                     "attack")
        volley = [(1.0, attacker)]
    elif fire is not None and not fire.defending and not has_subs:
        left_defender = _apply_casualties(defender, fire.hits, ruleset,
                                          base.get("defender_ool"), "defense")
        probe = simulate(**{**base, "attacker": attacker, "defender": no_spent_aa(defender),
                            "retreat_after": 1, "retreat_below": None, "strafe": None,
                            "retreat_when_left": None, "retreat_when_only_air": False})
        law = probe.attacker_law
        volley = [(float(p), {u: int(n) for u, n in zip(law.units, row, strict=True) if n})
                  for row, p in zip(law.survivors, law.probability, strict=True)]
        defender = left_defender
    else:
        if fire is not None:  # a sub's surprise strike: its casualties do not fire back
            notes.append("the dice of the current step are not counted: solved from the "
                         "units standing before them")
        volley = [(1.0, attacker)]
    if fire is not None:  # this round's fire is over: its AA guns have fired
        defender = no_spent_aa(defender)
    parts = []  # (weight, attacker IPC lost so far, defender's, component Result or None, ...)
    for p, force in volley:
        if fire is not None:
            force = no_spent_aa(force)
        a_now = _lost(dict(Counter(battle.attacker) + Counter(battle.landing)), force, ruleset)
        d_now = _lost(battle.defender, defender, ruleset)
        result = (simulate(**{**base, "attacker": force, "defender": defender})
                  if force and defender else None)
        parts.append((p, a_now, d_now, result, force))
    template = next((r for _, _, _, r, _ in parts if r is not None), None)
    if template is None:  # every continuation is over: run's keys from the battle's armies
        template = simulate(**{**base, "method": "exact", "defender": dict(battle.defender),
                               "attacker": dict(Counter(battle.attacker)
                                                + Counter(battle.landing))})
    from ..army import format_army

    out = _mixture(parts, defender, battle, ruleset, rounds_done, template,
                   sum(attacker.values()))
    out.update(attacker=format_army(attacker), defender=format_army(defender),
               from_round=rounds_done, continuations=len(volley), notes=notes,
               elapsed_s=time.perf_counter() - started)
    return out


STDERR_KEYS = ("attacker_win", "defender_win", "draw", "stalemate", "retreat", "takes_territory",
               "attacker_ipc_loss", "defender_ipc_loss", "tuv_swing", "mean_rounds")
PROPORTION_KEYS = ("attacker_win", "defender_win", "draw", "stalemate", "retreat",
                   "takes_territory")


def _mixture(parts, defender: dict, battle: GameBattle, ruleset, rounds_done: int,
             template, size: int) -> dict:
    """The object of ``run --format json`` for a mixture of fresh battles: `parts` are
    (weight, IPC the attacker lost so far, the defender's, the continuation's Result or None
    where the battle is over, the attacker's units); size: the attacker's units now.  Means
    are mixed; the standard error of a Monte Carlo mixture is sqrt(sum w_i^2 se_i^2)
    (independent runs; the weights are taken as given, a Monte Carlo volley's own error is
    not counted) and its ci95 is the normal interval clipped to [0, 1]; an exact mixture has
    stderr 0 and ci95 (p, p) as an exact run.  The survivor laws are mixed; the percentiles,
    units kept and likely end states are read from the mixed laws."""
    import numpy as np

    from ..results import Z95, SideLaw

    exact = template.method == "exact"
    mixed = dict.fromkeys(MIXED_KEYS, 0.0)
    variance = dict.fromkeys(STDERR_KEYS, 0.0)
    pruned = 0.0
    a_rows, d_rows = [], []  # (survivors {unit: n}, IPC lost, probability)
    a_keys: set[str] = set()
    d_keys: set[str] = set()
    for p, a_now, d_now, result, force in parts:
        if result is None:
            land = any(ruleset.units[u].domain == "land" for u in force)
            outcome = ("draw" if not force and not defender else
                       "defender_win" if not force else "attacker_win")
            mixed[outcome] += p
            if outcome == "attacker_win" and land and battle.kind != "sea":
                mixed["takes_territory"] += p
            mixed["mean_rounds"] += p * rounds_done
            mixed["attacker_ipc_loss"] += p * a_now
            mixed["defender_ipc_loss"] += p * d_now
            a_rows.append((force, a_now, p))
            d_rows.append((defender, d_now, p))
            a_keys |= {u for u in force if ruleset.units[u].can_be_casualty}
            d_keys |= {u for u in defender if ruleset.units[u].can_be_casualty}
            continue
        for key in PROPORTION_KEYS:
            mixed[key] += p * getattr(result, key)
        mixed["mean_rounds"] += p * (rounds_done + result.mean_rounds)
        mixed["attacker_ipc_loss"] += p * (a_now + result.attacker_ipc_loss)
        mixed["defender_ipc_loss"] += p * (d_now + result.defender_ipc_loss)
        for key in STDERR_KEYS:
            variance[key] += p * p * result.stderr[key] ** 2
        pruned += p * (result.pruned or 0.0)
        for rows, law, now in ((a_rows, result.attacker_law, a_now),
                               (d_rows, result.defender_law, d_now)):
            rows.extend((law.counts(i), now + float(law.ipc_lost[i]), p * float(q))
                        for i, q in enumerate(law.probability))
        a_keys |= set(result.attacker_survivors)
        d_keys |= set(result.defender_survivors)
    mixed["tuv_swing"] = mixed["defender_ipc_loss"] - mixed["attacker_ipc_loss"]
    mixed = {k: round(v, 15) for k, v in mixed.items()}

    def law_of(rows, keys) -> SideLaw:
        units = tuple(u for u in ruleset.units if u in keys)
        survivors = np.array([[row.get(u, 0) for u in units] for row, _, _ in rows],
                             dtype=np.int64).reshape(len(rows), len(units))
        ipc = np.array([c for _, c, _ in rows], dtype=np.float64)
        weight = np.array([w for _, _, w in rows], dtype=np.float64)
        merged: dict = {}
        for row, cost, w in zip(map(tuple, survivors), ipc, weight, strict=True):
            merged[(row, cost)] = merged.get((row, cost), 0.0) + w
        order = sorted(merged, key=lambda k: -merged[k])
        ipc_values = np.array([c for _, c in order])
        if ipc_values.size and np.all(ipc_values == np.round(ipc_values)):
            ipc_values = ipc_values.astype(np.int64)
        return SideLaw(units, np.array([r for r, _ in order], dtype=np.int64).reshape(
            len(order), len(units)), ipc_values, np.array([merged[k] for k in order]))

    a_law, d_law = law_of(a_rows, a_keys), law_of(d_rows, d_keys)
    stderr = {k: 0.0 if exact else math.sqrt(v) for k, v in variance.items()}
    ci95 = {k: (mixed[k], mixed[k]) if exact else
            (max(0.0, mixed[k] - Z95 * stderr[k]), min(1.0, mixed[k] + Z95 * stderr[k]))
            for k in PROPORTION_KEYS}
    out = template.to_dict()
    out.update(mixed)
    out.update(
        attacker_survivors={u: float(a_law.probability @ a_law.survivors[:, j])
                            for j, u in enumerate(a_law.units)},
        defender_survivors={u: float(d_law.probability @ d_law.survivors[:, j])
                            for j, u in enumerate(d_law.units)},
        stderr=stderr, ci95={k: list(v) for k, v in ci95.items()},
        pruned=pruned if exact else None,
        attacker_keeps_at_least=a_law.keeps_at_least(size),
        likely_outcomes={"attacker": a_law.likely(), "defender": d_law.likely()},
        attacker_ipc_loss_percentiles=a_law.ipc_percentiles(),
        defender_ipc_loss_percentiles=d_law.ipc_percentiles())
    return out


def _lost(start: dict, left: dict, ruleset) -> int:
    """IPC value of `start` minus that of `left` (a damaged unit keeps its value)."""
    cost = {u: ruleset.units[u].cost for u in ruleset.units}
    return sum(cost[u] * n for u, n in start.items()) - sum(cost[u] * n for u, n in left.items())


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
