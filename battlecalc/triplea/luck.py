"""The luck of a TripleA game: its dice and its battles against their laws (issue 17 item 2).

From the save's history (``gameHistory``: rounds, steps, events and their children, in order):

* every ``DiceRoll`` record: its dice (each packed as value << 16 | rolledAt << 8 | type,
  value 0-based, a combat die hitting when value < rolledAt), its hits and the expected hits
  TripleA stored with it; per nation (the event's text begins with the nation that rolled).
  Rolls whose stored expectation is 0 (technology research: a 6 hits) are counted apart, as
  ``other_rolls``;
* every battle fought: the ``Battle in X`` event, its ``N attack with`` / ``N defend with``
  children (the units at the start) and the battle record TripleA kept for it
  (``battleRecordsList``: the TUV each side lost).

:func:`battle_luck` is the arithmetic, on plain data: the expected TUV swing of the battle's
exact law, the actual swing, and its mid-rank percentile in the law (P(swing < actual) +
P(swing = actual) / 2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..errors import BattleInputError, quoted
from ..output import one_line
from .save import DiceRecord, SaveFormatError, _class_name, _javaobj, _objects, _Reader, dice_roll

UNKNOWN_ROLLER = "(unknown)"  # a roll whose text names no nation
MAX_NATION_CHARS = 40  # a longer "nation" at the head of a roll's text is not taken as one


@dataclass
class DiceTally:
    rolls: int = 0
    dice: int = 0
    hits: int = 0
    expected_hits: float = 0.0
    variance: float = 0.0

    def add(self, dice: int, hits: int, expected: float, variance: float) -> None:
        self.rolls += 1
        self.dice += dice
        self.hits += hits
        self.expected_hits += expected
        self.variance += variance

    def to_dict(self) -> dict[str, Any]:
        z = (self.hits - self.expected_hits) / math.sqrt(self.variance) if self.variance else None
        return {"rolls": self.rolls, "dice": self.dice, "hits": self.hits,
                "expected_hits": round(self.expected_hits, 12), "z": z}


@dataclass
class FoughtBattle:
    territory: str
    round: int
    attacker_nations: list[str]
    defender_nations: list[str]
    attacker: dict[str, int]
    defender: dict[str, int]
    attacker_lost_tuv: int | None = None
    defender_lost_tuv: int | None = None


@dataclass
class Luck:
    game: str
    edition: str
    dice: dict
    dice_by_nation: dict
    other_rolls: dict
    battles: list[dict] = field(default_factory=list)
    totals: dict = field(default_factory=dict)
    # battles of the history not judged: [{territory, round, reason}] (one in progress has no
    # battle record yet)
    pending: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"game": self.game, "edition": self.edition, "dice": self.dice,
                "dice_by_nation": self.dice_by_nation, "other_rolls": self.other_rolls,
                "battles": self.battles, "totals": self.totals, "pending": self.pending}

    def to_json(self) -> str:
        import json

        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    def to_csv(self) -> str:
        from ..results import rows_csv

        columns = ["nation", "rolls", "dice", "hits", "expected_hits", "z"]
        return rows_csv([{"nation": nation, **{k: tally[k] for k in columns[1:]}}
                         for nation, tally in {"all": self.dice, **self.dice_by_nation}.items()],
                        columns)

    def table(self) -> str:
        def line(name, t):
            z = "" if t["z"] is None else f"  z {t['z']:+.2f}"
            return (f"  {name:12} {t['rolls']:4d} rolls {t['dice']:5d} dice {t['hits']:5d} hits"
                    f"  expected {t['expected_hits']:.2f}{z}")

        lines = [f"{self.game} (edition {self.edition}): combat dice of the history",
                 line("all", self.dice)]
        lines += [line(n, t) for n, t in self.dice_by_nation.items()]
        if self.other_rolls["rolls"]:
            lines.append(f"  other rolls (technology): {self.other_rolls['rolls']} rolls, "
                         f"{self.other_rolls['dice']} dice, {self.other_rolls['hits']} hits")
        if not self.battles and not self.pending:
            lines.append("no battle fought in the history")
        elif not self.battles:
            lines.append("no battle judged yet")
        for b in self.battles:
            lines.append(f"  round {b['round']} {b['territory']}: expected swing "
                         f"{b['expected_tuv_swing']:+.2f}, actual {b['actual_tuv_swing']:+d}, "
                         f"percentile {b['percentile']:.3f}")
        for b in self.pending:
            lines.append(f"  round {b['round']} {b['territory']}: not judged ({b['reason']})")
        # (each line one line: names read from the save with a newline in them are escaped)
        return "\n".join(map(one_line, lines)) + "\n"


def plot_luck(luck: Luck):
    """A matplotlib Figure: per battle, its law's 10-90% band of TUV swing, the expected
    swing (a line) and the actual one (a dot)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    figure = Figure(figsize=(8, 4.5))
    ax = figure.subplots()
    battles = luck.battles
    for i, b in enumerate(battles):
        ax.vlines(i, b["swing_p10"], b["swing_p90"], color="0.75", linewidth=8)
        ax.hlines(b["expected_tuv_swing"], i - 0.3, i + 0.3, color="tab:blue")
    ax.plot(range(len(battles)), [b["actual_tuv_swing"] for b in battles], "o",
            color="tab:red", label="actual swing", gid="actual")
    ax.set_xticks(range(len(battles)),
                  [f"{b['territory']}\nround {b['round']}" for b in battles], fontsize=7)
    ax.axhline(0, color="0.5", linewidth=0.5)
    ax.set_ylabel("TUV swing (defender's loss minus attacker's)")
    ax.set_title(f"{luck.game}: each battle's swing against its law (10-90% band, expected)")
    if not battles:
        ax.text(0.5, 0.5, "no battle fought in the history", ha="center",
                transform=ax.transAxes)
    figure.tight_layout()
    return figure


def save_luck_plot(luck: Luck, path: str) -> None:
    """Write :func:`plot_luck` to `path` (.png or .svg) through the one writer."""
    import io
    import os

    from ..output import open_destination

    destination = open_destination(path)
    buffer = io.BytesIO()
    plot_luck(luck).savefig(buffer, format=os.path.splitext(path)[1].lower()[1:], dpi=110)
    destination.write_bytes(buffer.getvalue())


def _die_probability(packed: int, sides: int) -> float:
    rolled_at = (packed >> 8) & 0xFF
    return min(max(rolled_at / sides, 0.0), 1.0)


def roll_tally(packed_dice: list[int], hits: int, expected: float, sides: int = 6
               ) -> tuple[int, int, float, float]:
    """(dice, hits, expected hits, variance) of one combat roll."""
    probabilities = [_die_probability(d, sides) for d in packed_dice]
    return len(packed_dice), hits, expected, sum(p * (1 - p) for p in probabilities)


def battle_luck(battle: FoughtBattle, law: tuple, expected_swing: float) -> dict[str, Any]:
    """The luck of one battle: `law` is (swing values, probabilities) of the TUV swing
    (defender's loss minus attacker's)."""
    actual = battle.defender_lost_tuv - battle.attacker_lost_tuv
    values, probabilities = law
    below = float(sum(p for v, p in zip(values, probabilities, strict=True) if v < actual))
    equal = float(sum(p for v, p in zip(values, probabilities, strict=True) if v == actual))
    order = sorted(range(len(values)), key=lambda i: values[i])
    cumulative, band = 0.0, {}
    for i in order:  # the 10th and 90th percentiles of the law, for the plot
        cumulative += float(probabilities[i])
        for q in (10, 90):
            if q not in band and cumulative >= q / 100 - 1e-12:
                band[q] = float(values[i])
    return {"territory": battle.territory, "round": battle.round,
            "swing_p10": band.get(10), "swing_p90": band.get(90),
            "nations": {"attacker": battle.attacker_nations,
                        "defender": battle.defender_nations},
            "attacker": battle.attacker, "defender": battle.defender,
            "expected_tuv_swing": expected_swing, "actual_tuv_swing": actual,
            "luck": actual - expected_swing, "percentile": below + equal / 2}


def luck_totals(battles: list[dict]) -> dict[str, float]:
    """Per nation (the side it fought on) the sum of actual minus expected swing: an
    attacking nation gains the swing, a defending one loses it."""
    totals: dict[str, float] = {}
    for b in battles:
        for nation in b["nations"]["attacker"]:
            totals[nation] = totals.get(nation, 0.0) + b["luck"]
        for nation in b["nations"]["defender"]:
            totals[nation] = totals.get(nation, 0.0) - b["luck"]
    return totals


def read_luck(path, *, rules=None) -> Luck:
    """The dice and battles of the save's history, and each battle's luck (against the laws of
    TripleA's dice, which are fair: a ruleset with a die law is refused)."""
    if getattr(rules, "die_law", None) is not None:
        raise BattleInputError(
            "a save's luck is measured against TripleA's dice, which are fair: no die_law")
    from ..api import simulate
    from ..rules import load_rules
    from .game import edition_of
    from .save import save_of_objects

    objects = _objects(path)  # read and unpacked once: the save and its history
    data = save_of_objects(objects, path)
    ruleset = load_rules(rules or edition_of(data)) if not hasattr(rules, "units") else rules
    try:
        dice, by_nation, other, fought, pending = fought_battles(objects, data, ruleset)
    except SaveFormatError as exc:
        raise SaveFormatError(f"{path}: {exc}") from None
    water = {t.name for t in data.territories if t.water}
    battles = []
    for battle in fought:
        result = simulate(rules=ruleset, attacker=battle.attacker, defender=battle.defender,
                          sea=battle.territory in water, method="exact")
        battles.append(battle_luck(battle, result.swing_law, result.tuv_swing))
    return Luck(data.game, ruleset.id, dice.to_dict(),
                {n: t.to_dict() for n, t in by_nation.items()}, other.to_dict(), battles,
                luck_totals(battles), pending)


def fought_battles(objects: list, data, ruleset) -> tuple:
    """The history of a save's objects (and its GameData `data`): its dice (all, per nation,
    other rolls: DiceTally), its battles fought with their armies in the edition's units
    (FoughtBattle, attacker and defender as {unit: count}), and those it cannot judge
    ({territory, round, reason}: not over, or a side without combat units).  What read_luck
    judges and the board shows (board.luck_history).  SaveFormatError for a history this
    reader cannot read."""
    from .game import _army

    _, beans = _javaobj()
    try:
        dice, by_nation, other, fought = _history(_Reader(beans), objects, list(data.techs))
    except SaveFormatError:
        raise
    except (AttributeError, TypeError, ValueError, KeyError, IndexError,
            RecursionError) as exc:  # a backstop: the reader checks what it reads
        raise SaveFormatError(f"not a TripleA history this version of battlecalc reads "
                              f"({type(exc).__name__})") from None
    battles, pending = [], []
    for battle in fought:
        if battle.attacker_lost_tuv is None:
            pending.append({"territory": battle.territory, "round": battle.round,
                            "reason": "no battle record yet: the battle is not over"})
            continue
        attacker, _, _ = _army(battle.attacker, ruleset)
        defender, _, _ = _army(battle.defender, ruleset)
        if not attacker or not defender:
            pending.append({"territory": battle.territory, "round": battle.round,
                            "reason": "a side without combat units in the history"})
            continue
        battle.attacker, battle.defender = attacker, defender
        battles.append(battle)
    return dice, by_nation, other, battles, pending


def _history(reader: _Reader, objects: list, nations: list[str]):
    game_data = next(o for o in objects if _class_name(o) == "games.strategy.engine.data.GameData")
    with reader.at("GameData"):
        sides = reader.optional_number(game_data, "diceSides", 6)
        if sides < 2:
            raise reader.error(f"dice of {sides} sides", "diceSides")
        with reader.at("gameHistory", "writers"):
            writers = reader.elements(reader.get(game_data, "gameHistory", "writers"))
            tallies = _tallies(reader, writers, nations, sides)
        with reader.at("battleRecordsList", "battleRecords"):
            _battle_records(reader, game_data, tallies[3])
    return tallies


def _roller(dice: DiceRecord, text: str, nations: list[str]) -> str:
    """Who rolled: the player TripleA stored with the roll (from 2.6 on), else the nation the
    event's text begins with ("Germans roll dice for ..."), a player or not (Neutral)."""
    if dice.player:
        return dice.player
    known = max((n for n in nations if text.startswith(n + " ")), key=len, default=None)
    if known is not None:
        return known
    name = text.split(" roll", 1)[0].strip() if " roll" in text else ""
    return name if 0 < len(name) <= MAX_NATION_CHARS else UNKNOWN_ROLLER


def _tallies(reader: _Reader, writers: list, nations: list[str], sides: int):
    dice, other = DiceTally(), DiceTally()
    by_nation: dict[str, DiceTally] = {}
    fought: list[FoughtBattle] = []
    round_no, current = 1, None
    for i, writer in enumerate(writers):
        with reader.at(f"[{i}]"):
            reader.fields(writer)  # a history node: an object
            kind = _class_name(writer).rsplit(".", 1)[-1]
            if kind == "RoundHistorySerializer":
                round_no = reader.optional_number(writer, "roundNo", round_no)
                continue
            text = (reader.optional_text(writer, "text")
                    or reader.optional_text(writer, "eventName") or "")
            rendering = reader.opt(writer, "renderingData")
            if kind == "EventHistorySerializer":
                current = None
                if text.startswith("Battle in "):
                    current = FoughtBattle(text[len("Battle in "):], round_no, [], [], [], [])
                    fought.append(current)
            if current is not None and kind == "EventChildWriter" and isinstance(rendering,
                                                                                 list):
                units = []
                for j, unit in enumerate(rendering):
                    if _class_name(unit).endswith(".Unit"):
                        with reader.at("renderingData", f"[{j}]"):
                            units.append(reader.unit(unit))
                if " attack with " in text:
                    current.attacker = units
                    current.attacker_nations = sorted({u.owner for u in units})
                elif " defend with " in text:
                    current.defender = units
                    current.defender_nations = sorted({u.owner for u in units})
            if rendering is not None and _class_name(rendering).endswith(".DiceRoll"):
                with reader.at("renderingData"):
                    roll = dice_roll(reader, rendering)
                    if roll.hits is None or roll.expected is None:
                        raise reader.error("a dice roll without its hits")
                tally = roll_tally(list(roll.packed), roll.hits, roll.expected, sides)
                if roll.expected > 0:
                    dice.add(*tally)
                    by_nation.setdefault(_roller(roll, text, nations), DiceTally()).add(*tally)
                else:
                    other.add(len(roll.packed), roll.hits, 0.0, 0.0)
    return dice, by_nation, other, fought


def _battle_records(reader: _Reader, game_data, fought: list[FoughtBattle]) -> None:
    """The TUV each side lost, from battleRecordsList ({round: BattleRecords}, whose records
    are {player: {id: BattleRecord}})."""
    records = reader.opt(reader.get(game_data, "battleRecordsList"), "battleRecords") or {}
    if not isinstance(records, dict):
        raise reader.error(f"expected a map, found {reader.describe(records)}")
    for round_no, per_round in records.items():
        with reader.at(f"[{quoted(round_no)}]"):
            round_no = getattr(round_no, "value", round_no)  # a java.lang.Integer
            if isinstance(round_no, bool) or not isinstance(round_no, int):
                raise reader.error(f"expected a round number, found "
                                   f"{reader.describe(round_no)}")
            table = reader.opt(per_round, "records") or {}
            if not isinstance(table, dict):
                raise reader.error(f"expected a map, found {reader.describe(table)}", "records")
            for player, by_id in table.items():
                with reader.at("records"):
                    nation = reader.name_of(player, "GamePlayer")
                for part, record in reader.each(by_id):
                    with reader.at("records", f"[{quoted(nation)}]", part):
                        with reader.at("battleSite"):
                            site = reader.name_of(reader.opt(record, "battleSite"),
                                                  "Territory")
                        lost = (reader.number(record, "attackerLostTuv"),
                                reader.number(record, "defenderLostTuv"))
                    for battle in fought:
                        if battle.territory == site and battle.round == round_no \
                                and battle.attacker_lost_tuv is None:
                            battle.attacker_lost_tuv, battle.defender_lost_tuv = lost
                            break


__all__ = ["BattleInputError", "DiceTally", "FoughtBattle", "Luck", "battle_luck",
           "luck_totals", "read_luck", "roll_tally"]
