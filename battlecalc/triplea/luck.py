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

from ..errors import BattleInputError
from .save import SaveFormatError, _class_name, _javaobj, _objects, _Reader, block_bytes


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

    def to_dict(self) -> dict[str, Any]:
        return {"game": self.game, "edition": self.edition, "dice": self.dice,
                "dice_by_nation": self.dice_by_nation, "other_rolls": self.other_rolls,
                "battles": self.battles, "totals": self.totals}

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
        if not self.battles:
            lines.append("no battle fought in the history")
        for b in self.battles:
            lines.append(f"  round {b['round']} {b['territory']}: expected swing "
                         f"{b['expected_tuv_swing']:+.2f}, actual {b['actual_tuv_swing']:+d}, "
                         f"percentile {b['percentile']:.3f}")
        return "\n".join(lines) + "\n"


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
    """The dice and battles of the save's history, and each battle's luck."""
    from ..api import simulate
    from ..rules import load_rules
    from .game import _army, edition_of
    from .save import save_of_objects

    objects = _objects(path)  # read and unpacked once: the save and its history
    data = save_of_objects(objects, path)
    ruleset = load_rules(rules or edition_of(data)) if not hasattr(rules, "units") else rules
    _, beans = _javaobj()
    reader = _Reader(beans)
    try:
        dice, by_nation, other, fought = _history(reader, objects, list(data.techs))
    except SaveFormatError:
        raise
    except (AttributeError, TypeError, ValueError, KeyError, IndexError) as exc:
        raise SaveFormatError(f"{path}: not a TripleA history this version of battlecalc "
                              f"reads ({type(exc).__name__})") from None
    battles = []
    for battle in fought:
        if battle.attacker_lost_tuv is None:
            continue
        attacker, _, _ = _army(battle.attacker, ruleset)
        defender, _, _ = _army(battle.defender, ruleset)
        if not attacker or not defender:
            continue
        result = simulate(rules=ruleset, attacker=attacker, defender=defender,
                          sea=battle.territory in {t.name for t in data.territories if t.water},
                          method="exact")
        battle.attacker, battle.defender = attacker, defender
        battles.append(battle_luck(battle, result.swing_law, result.tuv_swing))
    return Luck(data.game, ruleset.id, dice.to_dict(),
                {n: t.to_dict() for n, t in by_nation.items()}, other.to_dict(), battles,
                luck_totals(battles))


def _history(reader: _Reader, objects: list, nations: list[str]):
    game_data = next(o for o in objects if _class_name(o) == "games.strategy.engine.data.GameData")
    sides = reader.opt(game_data, "diceSides", 6) or 6
    writers = reader.elements(reader.get(game_data, "gameHistory", "writers"))
    dice, other = DiceTally(), DiceTally()
    by_nation: dict[str, DiceTally] = {}
    fought: list[FoughtBattle] = []
    round_no, current = 1, None

    def nation_of(text: str) -> str | None:
        return max((n for n in nations if text.startswith(n + " ")), key=len, default=None)

    for writer in writers:
        kind = _class_name(writer).rsplit(".", 1)[-1]
        if kind == "RoundHistorySerializer":
            round_no = reader.opt(writer, "roundNo", round_no)
            continue
        text = str(reader.opt(writer, "text") or reader.opt(writer, "eventName") or "")
        rendering = reader.opt(writer, "renderingData")
        if kind == "EventHistorySerializer":
            current = None
            if text.startswith("Battle in "):
                current = FoughtBattle(text[len("Battle in "):], round_no, [], [], [], [])
                fought.append(current)
        if current is not None and kind == "EventChildWriter" and isinstance(rendering, list):
            units = [u for u in rendering if _class_name(u).endswith(".Unit")]
            if " attack with " in text:
                current.attacker = [reader.unit(u) for u in units]
                current.attacker_nations = sorted({u.owner for u in current.attacker})
            elif " defend with " in text:
                current.defender = [reader.unit(u) for u in units]
                current.defender_nations = sorted({u.owner for u in current.defender})
        if rendering is not None and _class_name(rendering).endswith(".DiceRoll"):
            packed, hits, expected = _roll(reader, rendering)
            tally = roll_tally(packed, hits, expected, sides)
            if expected > 0:
                dice.add(*tally)
                nation = nation_of(text)
                if nation is not None:
                    by_nation.setdefault(nation, DiceTally()).add(*tally)
            else:
                other.add(len(packed), hits, 0.0, 0.0)
    _battle_records(reader, game_data, fought)
    return dice, by_nation, other, fought


def _roll(reader: _Reader, roll) -> tuple[list[int], int, float]:
    import struct

    packed: list[int] = []
    block = b""
    for data in (roll.annotations or {}).values():
        for item in data:
            if isinstance(item, list | tuple):
                packed = [int(v) for v in item]
            else:
                block += block_bytes(item)
    if len(block) < 12:
        raise SaveFormatError("not a TripleA history this version of battlecalc reads: a "
                              "dice roll without its hits")
    hits, expected = struct.unpack(">id", block[:12])
    if not math.isfinite(expected):
        raise SaveFormatError("a dice roll's expected hits are not a number")
    return packed, hits, expected


def _battle_records(reader: _Reader, game_data, fought: list[FoughtBattle]) -> None:
    """The TUV each side lost, from battleRecordsList ({round: BattleRecords}, whose records
    are {player: {id: BattleRecord}})."""
    records = reader.opt(reader.get(game_data, "battleRecordsList"), "battleRecords") or {}
    for round_no, per_round in records.items():
        table = reader.opt(per_round, "records") or {}
        for by_id in table.values():
            for record in reader.elements(by_id):
                site = reader.name_of(reader.opt(record, "battleSite"))
                for battle in fought:
                    if battle.territory == site and battle.round == round_no \
                            and battle.attacker_lost_tuv is None:
                        battle.attacker_lost_tuv = reader.opt(record, "attackerLostTuv")
                        battle.defender_lost_tuv = reader.opt(record, "defenderLostTuv")
                        break


__all__ = ["BattleInputError", "DiceTally", "FoughtBattle", "Luck", "battle_luck",
           "luck_totals", "read_luck", "roll_tally"]
