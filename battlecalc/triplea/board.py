"""The live board: a TripleA save's pending battles as the page and ``battlecalc watch`` show them.

Two halves, so that the save is parsed where the caller wants it (the web server: in a child
process under limits, battlecalc.web.saves) and the battles are solved where the engine is:

* :func:`read_board` (no engine, no numba): the game, each pending battle with the page's
  query that loads it into the form -- its armies as they stand, its start state (where a
  battle in progress stands, ``start_of``), the save's Low Luck switch and technologies, as
  ``battlecalc game`` solves it --, the TUV each side has at stake, every territory with the
  query that loads its units as the defender (the CLI's ``game --territory T --attack A``),
  and the history's dice and fought battles (``battlecalc luck``), unjudged;
* solving, where the engine is (battlecalc.web.live: solve_board on the server's, solve_here
  in this process): each battle's odds from its query, the luck of each fought battle from
  its exact law (:func:`judge_luck`), the turn's summary (:func:`turn_summary`);
  :func:`changes` marks what changed since the board before.

The battles' order is by what is at stake (:func:`by_stake`: TUV at risk, most first).
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import BattleInputError
from ..output import one_line

FORM_KINDS = ("land", "sea", "amphibious", "raid")  # the battle kinds the page's form runs
ODDS_KEYS = ("method", "attacker_win", "defender_win", "draw", "takes_territory", "tuv_swing",
             "attacker_ipc_loss", "defender_ipc_loss", "mean_rounds", "trials", "seed",
             "expected_damage")
START_KEYS = ("start_round", "start_step", "hits_on_attacker", "hits_on_defender",
              "bombard_hits", "attacker_waiting", "defender_waiting")
BOARD_SEED = "1"  # the page's seed (its form sends seed=1): the board's numbers are the form's


# ---------------------------------------------------------------- reading (no engine)


def read_board(path, max_inflated: int | None = None) -> dict[str, Any]:
    """The board of the save at `path`, unsolved (see the module's documentation): parsed
    once, for the game and for its history.  BattleInputError for what is not a save
    battlecalc reads; a history it cannot read leaves ``luck`` with an ``error``."""
    from ..rules import load_rules
    from .game import game_of_save
    from .save import MAX_STREAM_BYTES, _objects, save_of_objects

    objects = _objects(path, MAX_STREAM_BYTES if max_inflated is None else max_inflated)
    data = save_of_objects(objects, path)
    game = game_of_save(data, solve=False)
    ruleset = load_rules(game.edition)
    board = {"game": game.game, "edition": game.edition, "round": game.round,
             "step": game.step, "player": game.player, "low_luck": game.low_luck,
             "battles": [battle_entry(b, data, ruleset, game.low_luck) for b in game.battles],
             "territories": [territory_entry(t, data, ruleset, game.low_luck)
                             for t in data.territories]}
    try:
        board["luck"] = luck_history(objects, data, ruleset)
    except BattleInputError as exc:
        board["luck"] = {"error": " ".join(str(exc).replace(str(path), "the save").split())}
    return board


def _tuv(army: Mapping[str, int], ruleset) -> int:
    """The cost of the units of `army` that can be lost (an AA gun that is never a casualty,
    a site, is not at stake)."""
    return sum(ruleset.units[u].cost * n for u, n in army.items()
               if ruleset.units[u].can_be_casualty)


def _save_options(attacker_nations, defender_nations, data, ruleset, low_luck) -> dict:
    """The options `battlecalc game` gives a battle of the save (game._solve): Low Luck and
    each side's technologies."""
    from .game import _techs

    options: dict[str, Any] = {}
    if low_luck:
        options["dice"] = "low_luck"
    techs = _techs([n for n in attacker_nations if n in data.techs], data, ruleset)
    if techs:
        options["attacker_tech"] = ",".join(techs)
    techs = _techs(defender_nations, data, ruleset)
    if techs:
        options["defender_tech"] = ",".join(techs)
    return options


def battle_entry(b, data, ruleset, low_luck: bool) -> dict[str, Any]:
    """One pending battle (a game.GameBattle, unsolved) for the board: its armies (notation),
    nations, start state and ``query`` (the page's URL query that loads it into the form, as
    it stands; None for a kind the form does not run, or a step battlecalc does not solve
    from), the TUV at stake."""
    from ..army import format_army
    from .game import start_of

    armies = {role: format_army(getattr(b, role)) if getattr(b, role) else ""
              for role in ("attacker", "defender", "landing", "bombard")}
    entry: dict[str, Any] = {
        "territory": b.territory, "kind": b.kind, "attacker_nations": b.attacker_nations,
        "defender_nations": b.defender_nations, **armies,
        "in_progress": b.in_progress is not None, "query": None,
        "stands": (b.in_progress or {}).get("stands"), "start": {}, "options": {},
        "attacker_tuv": _tuv(_plus(b.attacker, b.landing), ruleset),
        "defender_tuv": _tuv(b.defender, ruleset), "note": b.note, "error": None}
    entry["tuv_at_risk"] = entry["attacker_tuv"] + entry["defender_tuv"]
    if b.kind not in FORM_KINDS:
        entry["note"] = {"air": "an air battle before a raid: battlecalc raid covers it"
                         }.get(b.kind, f"a {b.kind} battle: not on the board")
        return entry
    if b.kind == "raid":
        return _raid_entry(entry, b, data, ruleset, low_luck)
    waiting = b.sides.defending_waiting if b.sides is not None else []
    if not b.defender and not waiting:
        entry["note"] = "no defending unit: the attacker takes the place unopposed"
        return entry
    options = _save_options(b.attacker_nations, b.defender_nations, data, ruleset, low_luck)
    start: dict[str, Any] = {}
    if b.sides is not None and b.sides.in_progress is not None:
        try:
            start = start_of(b.record, b.sides, b.kind, ruleset)
        except BattleInputError as exc:
            entry["error"] = " ".join(str(exc).split())
            return entry
    entry["options"], entry["start"] = options, start
    params = {"rules": ruleset.id, **({"kind": b.kind} if b.kind != "land" else {}),
              **{role: text for role, text in armies.items() if text}, **options}
    if b.scramble_from:  # the air bases in reach, as game solves it (scramble.air_bases)
        params["scramble_from"] = "; ".join(format_army(a.aircraft) for a in b.scramble_from)
        entry["scramble_from"] = [a.to_dict() for a in b.scramble_from]
    if b.kamikaze:
        entry["kamikaze"] = b.kamikaze
    for key, value in start.items():
        params[key] = format_army(value) if isinstance(value, Mapping) else str(value)
    entry["query"] = urllib.parse.urlencode(params)
    return entry


def _raid_entry(entry: dict[str, Any], b, data, ruleset, low_luck: bool) -> dict[str, Any]:
    """A bombing raid of the board, as `battlecalc game` solves it (game._solve_raid): the
    target's production and facility, the AA gun where the edition's raids face one, the
    interceptors, a raid after its AA roll from where it stands; the inputs the edition
    ignores are left out (the same odds, no notes)."""
    from ..army import format_army
    from .game import FACILITY_KINDS, SITE_UNITS, raid_position

    site = b.site
    sites = [u.type for u in site.units if u.type in SITE_UNITS]
    facility = next((FACILITY_KINDS[t] for t in sites if t in FACILITY_KINDS), None)
    guns = {u for u in b.defender if ruleset.units[u].aa_value}
    defender = {u: c for u, c in b.defender.items() if u not in guns}
    fire = b.sides.fire if b.sides is not None else None
    try:
        start = raid_position(fire, b.territory, ruleset)
    except BattleInputError as exc:
        entry["error"] = str(exc)
        return entry
    if start.get("start_step") in ("aa_fire", "aa_casualties", "bombing"):
        entry["stands"] = f"raid: {start['start_step']}"
        defender = {}  # (the air battle is over)
    options = _save_options(b.attacker_nations, b.defender_nations, data, ruleset, low_luck)
    params = {"rules": ruleset.id, "kind": "raid", "attacker": format_army(b.attacker),
              **({"defender": format_army(defender)} if defender else {})}
    if ruleset.flags["raid_damage_cap"] in ("target_value_per_bomber", "twice_target_value"):
        params["target_value"] = str(site.production)
    if facility is not None and ruleset.facilities:
        params["facility"] = facility
    if guns and ruleset.flags["raid_aa"] == "territory_gun":
        params["aa"] = "1"
    params.update(options)
    params.update({k: str(v) for k, v in start.items()})
    entry["options"], entry["start"] = options, start
    entry["defender_tuv"] = _tuv(defender, ruleset)
    entry["tuv_at_risk"] = entry["attacker_tuv"] + entry["defender_tuv"]
    entry["query"] = urllib.parse.urlencode(params)
    return entry


def _plus(a: Mapping[str, int], b: Mapping[str, int]) -> dict[str, int]:
    out = dict(a)
    for unit, n in b.items():
        out[unit] = out.get(unit, 0) + n
    return out


def territory_entry(t, data, ruleset, low_luck: bool) -> dict[str, Any]:
    """A territory or sea zone for the page's picker: its owner, its units (combat units in
    the edition's names, every nation) and the query that loads them as the defender of a
    battle of its kind (land or sea), with the save's Low Luck and the defenders'
    technologies: what ``battlecalc game --territory T --attack A`` solves once an attacker is
    given."""
    from ..army import format_army
    from .game import _army

    entry: dict[str, Any] = {"name": t.name, "owner": t.owner, "water": t.water,
                             "units": "", "nations": [], "query": None}
    try:
        defender, _, nations = _army(t.units, ruleset)
    except BattleInputError as exc:
        entry["error"] = " ".join(str(exc).split())
        return entry
    entry["units"], entry["nations"] = format_army(defender) if defender else "", nations
    params = {"rules": ruleset.id, **({"kind": "sea"} if t.water else {}),
              **({"defender": entry["units"]} if defender else {}),
              **_save_options([], nations, data, ruleset, low_luck)}
    entry["query"] = urllib.parse.urlencode(params)
    return entry


def luck_history(objects, data, ruleset) -> dict[str, Any]:
    """The history's dice (all, per nation, other rolls) and its fought battles in the
    edition's armies, unjudged (what ``battlecalc luck`` reads before it solves each battle;
    luck.read_luck)."""
    from .luck import fought_battles

    dice, by_nation, other, fought, pending = fought_battles(objects, data, ruleset)
    water = {t.name for t in data.territories if t.water}
    battles = [{"territory": f.territory, "round": f.round,
                "attacker_nations": f.attacker_nations, "defender_nations": f.defender_nations,
                "attacker": f.attacker, "defender": f.defender, "sea": f.territory in water,
                "attacker_lost_tuv": f.attacker_lost_tuv,
                "defender_lost_tuv": f.defender_lost_tuv} for f in fought]
    return {"game": data.game, "edition": ruleset.id, "dice": dice.to_dict(),
            "dice_by_nation": {n: t.to_dict() for n, t in by_nation.items()},
            "other_rolls": other.to_dict(), "fought": battles, "pending": pending}


# ---------------------------------------------------------------- solving (the caller's engine)


def solve_params(query: str, **more: str) -> dict[str, str]:
    """The request the page's form makes of a board's query (and `more` parameters: the
    attack on a territory): the kind as simulate's parameters (a sea battle: sea=1; a raid
    goes to battlecalc.raid: endpoint_of), and the form's seed (the page sends seed=1 unless
    told otherwise)."""
    params = {**dict(urllib.parse.parse_qsl(query, keep_blank_values=True)), **more}
    if params.pop("kind", None) == "sea":
        params["sea"] = "1"
    params.setdefault("seed", BOARD_SEED)
    return params


def endpoint_of(battle: Mapping[str, Any]) -> str:
    """What solves a board's battle: "raid" (battlecalc.raid) or "run" (simulate)."""
    return "raid" if battle.get("kind") == "raid" else "run"


def odds_of(result: Mapping[str, Any]) -> dict[str, Any]:
    """The board's figures of a battle's result (its JSON object)."""
    return {k: result.get(k) for k in ODDS_KEYS}


def judge_luck(history: Mapping[str, Any],
               solve: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
    """The luck of the history's fought battles (battlecalc luck): `solve(kwargs)` returns a
    battle's exact Result (with its swing_law), or raises BattleInputError (the battle is
    then listed as not judged).  Returns the shape of luck.Luck.to_dict() (and "pending")."""
    from .luck import FoughtBattle, battle_luck, luck_totals

    if "error" in history:
        return dict(history)
    judged, pending = [], list(history.get("pending", []))
    for f in history.get("fought", []):
        try:
            result = solve({"rules": history["edition"], "attacker": f["attacker"],
                            "defender": f["defender"], "sea": f["sea"], "method": "exact"})
        except BattleInputError as exc:
            pending.append({"territory": f["territory"], "round": f["round"],
                            "reason": " ".join(str(exc).split())})
            continue
        battle = FoughtBattle(f["territory"], f["round"], f["attacker_nations"],
                              f["defender_nations"], f["attacker"], f["defender"],
                              f["attacker_lost_tuv"], f["defender_lost_tuv"])
        judged.append(battle_luck(battle, result.swing_law, result.tuv_swing))
    return {"game": history["game"], "edition": history["edition"], "dice": history["dice"],
            "dice_by_nation": history["dice_by_nation"], "other_rolls": history["other_rolls"],
            "battles": judged, "totals": luck_totals(judged), "pending": pending}


def by_stake(battles: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The battles, most TUV at risk first (then by territory)."""
    return sorted(battles, key=lambda b: (-b.get("tuv_at_risk", 0), b["territory"]))


def turn_summary(board: Mapping[str, Any]) -> str:
    """One line: the round, who moves, the battles, the TUV at stake and the sum of the
    expected swings (positive: in the attackers' favour)."""
    head = f"Round {board['round']}" + (f", {board['player']} to move" if board.get("player")
                                         else "")
    battles = board.get("battles", [])
    if not battles:
        return f"{head}: no battle pending"
    solved = [b for b in battles if b.get("odds")]
    at_risk = sum(b.get("tuv_at_risk", 0) for b in battles)
    line = (f"{head}: {len(battles)} battle{'s' if len(battles) != 1 else ''}, "
            f"{at_risk} TUV at risk")
    if solved:
        swing = sum(b["odds"]["tuv_swing"] for b in solved)
        attackers = list(dict.fromkeys(n for b in solved for n in b["attacker_nations"]))
        line += (f"; expected swing {swing:+.2f} TUV for {', '.join(attackers) or 'the attacker'}"
                 + ("" if len(solved) == len(battles) else
                    f" ({len(solved)} of {len(battles)} battles solved)"))
    return line


def changes(previous: Mapping[str, Any] | None, current: dict[str, Any]) -> dict[str, Any]:
    """What changed since the board `previous` (None: the first one): per battle of `current`
    its ``change`` ("new", "changed" or None) and ``changed`` (what, in words); the board's
    ``changes``: the save, round and step before, and the battles gone.  A save of another game
    (another game or edition) is compared with nothing: ``other`` names the game before."""
    game = (current.get("game"), current.get("edition"))
    other = previous is not None and (previous.get("game"), previous.get("edition")) != game
    if previous is None or other:
        for b in current.get("battles", []):
            b["change"], b["changed"] = None, []
        if other:
            return {"since": None, "gone": [],
                    "other": {k: previous.get(k) for k in ("game", "edition", "file")}}
        return {"since": None, "gone": []}
    before = {b["territory"]: b for b in previous.get("battles", [])}
    now = {b["territory"] for b in current.get("battles", [])}
    for b in current.get("battles", []):
        old = before.get(b["territory"])
        if old is None:
            b["change"], b["changed"] = "new", ["new since the last save"]
            continue
        what = []
        for role in ("attacker", "landing", "bombard", "defender"):
            if old.get(role) != b.get(role):
                what.append(f"{role}: {old.get(role) or 'none'} \u2192 {b.get(role) or 'none'}")
        if old.get("stands") != b.get("stands"):
            what.append(f"now {b.get('stands') or 'not begun'}")
        a, c = (old.get("odds") or {}), (b.get("odds") or {})
        if a.get("attacker_win") is not None and c.get("attacker_win") is not None \
                and abs(a["attacker_win"] - c["attacker_win"]) >= 5e-5:
            what.append(f"attacker wins {100 * a['attacker_win']:.2f}% \u2192 "
                        f"{100 * c['attacker_win']:.2f}%")
        b["change"], b["changed"] = ("changed" if what else None), what
    since = {k: previous.get(k) for k in ("file", "round", "step", "player")}
    return {"since": since, "gone": [t for t in before if t not in now]}


def board_table(board: Mapping[str, Any]) -> str:
    """The board as text (battlecalc watch): the game, the turn's summary, each battle by
    stake with its odds, what changed, the luck so far; every line with its control
    characters escaped (output.one_line)."""
    lines = [f"{board['game']} (edition {board['edition']}), round {board['round']}, step "
             f"{board['step']}" + (f", {board['player']} to move" if board.get("player") else "")
             + (", low luck" if board.get("low_luck") else "")
             + (f"  [{board['file']}]" if board.get("file") else ""),
             turn_summary(board)]
    gone = (board.get("changes") or {}).get("gone") or []
    if gone:
        lines.append(f"  since the last save: {', '.join(gone)} no longer pending")
    other = (board.get("changes") or {}).get("other")
    if other:
        lines.append(f"  a save of another game (the one before: {other['game']}, "
                     f"{other['edition']}): nothing compared with it")
    for b in by_stake(board.get("battles", [])):
        mark = {"new": " [new]", "changed": " [changed]"}.get(b.get("change") or "", "")
        lines.append("")
        lines.append(f"{b['territory']}: {b['kind']} battle, {', '.join(b['attacker_nations'])}"
                     f" attack {', '.join(b['defender_nations']) or 'an empty territory'}, "
                     f"{b.get('tuv_at_risk', 0)} TUV at risk{mark}")
        if b.get("stands"):
            lines.append(f"  in progress: {b['stands']}")
        attacker = b["attacker"] or "nothing"
        if b.get("landing"):
            attacker = (f"{b['attacker']} and " if b["attacker"] else "") + \
                f"{b['landing']} landing from transports"
        if b.get("bombard"):
            attacker += f" (bombarding: {b['bombard']})"
        lines.append(f"  {attacker}  vs  {b['defender'] or 'nothing'}")
        odds = b.get("odds")
        if odds and odds.get("expected_damage") is not None:
            lines.append(f"  expected damage {odds['expected_damage']:.2f} IPC  bombers lost "
                         f"{odds['attacker_ipc_loss']:.2f} IPC  expected swing "
                         f"{odds['tuv_swing']:+.2f} TUV  ({odds['method']})")
        elif odds:
            lines.append(f"  attacker wins {100 * odds['attacker_win']:.2f}%  defender wins "
                         f"{100 * odds['defender_win']:.2f}%  takes territory "
                         f"{100 * odds['takes_territory']:.2f}%  expected swing "
                         f"{odds['tuv_swing']:+.2f} TUV  ({odds['method']})")
        for what in b.get("changed") or []:
            if b.get("change") == "changed":
                lines.append(f"  changed: {what}")
        for key in ("note", "error"):
            if b.get(key):
                lines.append(f"  {key}: {b[key]}")
    luck = board.get("luck") or {}
    if luck.get("error"):
        lines += ["", f"luck: {luck['error']}"]
    elif luck:
        lines += ["", "luck so far (combat dice of the history):"]
        for nation, t in {"all": luck["dice"], **luck.get("dice_by_nation", {})}.items():
            z = "" if t["z"] is None else f", z {t['z']:+.2f}"
            lines.append(f"  {nation}: {t['dice']} dice, {t['hits']} hit"
                         f"{'' if t['hits'] == 1 else 's'}, expected "
                         f"{t['expected_hits']:.2f}{z}")
        for j in luck.get("battles", []):
            lines.append(f"  round {j['round']} {j['territory']}: expected swing "
                         f"{j['expected_tuv_swing']:+.2f}, actual {j['actual_tuv_swing']:+d}, "
                         f"percentile {j['percentile']:.3f}")
        for j in luck.get("pending", []):
            lines.append(f"  round {j['round']} {j['territory']}: not judged ({j['reason']})")
    # (each line one line: a name read from the save with a newline or ESC in it is escaped)
    return "\n".join(map(one_line, lines)) + "\n"
