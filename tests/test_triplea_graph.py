"""A save's object graph, each value's type checked as it is read (issue 29 items 5, 11, 17).

The hostile saves are the shared West Russia save edited as a fuzzer would, in its Java
object stream (tests/java_stream.py: a field nulled, a reference pointed elsewhere, a text
where a number or a Boolean was, objects added), the rest of the stream intact.  Each is read
by `battlecalc game` or `luck` in a child process under memory limits (tests/limited.py):
one line naming the path of what is wrong, exit status 2, never a traceback.  Before, these
gave tracebacks (TypeError, KeyError, RecursionError) or a wrong answer.
"""

from __future__ import annotations

import json
import struct

import pytest
from java_stream import Stream, reference, save_bytes, string
from limited import assert_refused, cli_limited
from test_triplea import LAND_COMBAT, SAVES, javaobj  # noqa: F401  (javaobj: skips with them)

from battlecalc.triplea import read_game
from battlecalc.triplea.save import _class_name, _javaobj, _Reader

pytestmark = pytest.mark.skipif(not SAVES.is_dir(), reason="TripleA fixtures not found")
NOT_READ = "not a TripleA save this version of battlecalc reads: "


class Land:
    """The West Russia save's stream and the objects the edits below need."""

    def __init__(self):
        _, beans = _javaobj()
        self.stream = s = Stream.of_save(LAND_COMBAT)
        self.reader = r = _Reader(beans)
        self.game_data = next(o for o in s.contents if _class_name(o).endswith(".GameData"))
        state = next(o for o in s.contents
                     if _class_name(o).endswith(".BattleExtendedDelegateState"))
        (self.battle,) = r.elements(r.get(state, "battleTracker", "pendingBattles"))
        self.territories = r.get(self.game_data, "map", "territories")
        self.writers = r.get(self.game_data, "gameHistory", "writers")

    def territory(self, name: str):
        return next(t for t in self.reader.elements(self.territories)
                    if self.reader.text(t, "name") == name)

    def null_reference(self, obj, field: str) -> bytes:
        """`obj`'s field, a reference where `obj` is written out, made null."""
        span = self.stream.field(obj, self.reader.get(obj, field))
        assert self.stream.data[span.start] == 0x71
        return self.stream.replace(span, b"\x70")


@pytest.fixture(scope="module")
def land():
    return Land()


def _written(tmp_path, data: bytes, name="edited.tsvg"):
    path = tmp_path / name
    path.write_bytes(save_bytes(data))
    return path


# ------------------------------------------------------------ item 5: game


def _unit_type_null(land):
    units = land.reader.elements(land.reader.get(land.territory("Eastern Canada"),
                                                 "unitCollection", "units"))
    return land.null_reference(units[0], "type")


def _attacking_unit_owner_null(land):
    units = land.reader.elements(land.reader.get(land.battle, "attackingUnits"))
    unit = next(u for u in units if land.stream.data[land.stream.field(
        u, land.reader.get(u, "owner")).start] == 0x71)
    return land.null_reference(unit, "owner")


def _site_a_player(land):
    r, s = land.reader, land.stream
    span = s.field(land.battle, r.get(land.battle, "battleSite"))
    return s.replace(span, reference(r.get(land.battle, "attacker").handle))


def _site_off_the_map(land):
    """West Russia's place in the map's list of territories given to its neighbour in the
    list: the battle's site is no territory of the map."""
    s = land.stream
    spans = s.children(s.definition(land.territories))
    at = next(i for i, span in enumerate(spans) if span.content is land.territory("West Russia"))
    return s.replace(spans[at], reference(spans[at - 1].content.handle))


BROKEN_GRAPHS = {
    "a territory unit's type null": (
        _unit_type_null, "GameData.map.territories[0] ('Eastern Canada').unitCollection.units[0]"
        ".type: expected a UnitType, found null"),
    "an attacking unit's owner null": (
        _attacking_unit_owner_null, "('West Russia').unitCollection.units[9].owner: expected a "
        "GamePlayer, found null"),
    "a battle's site a player": (
        _site_a_player, "BattleExtendedDelegateState.battleTracker.pendingBattles[0].battleSite: "
        "expected a Territory, found a GamePlayer"),
    "a battle's site off the map": (
        _site_off_the_map, "BattleExtendedDelegateState.battleTracker.pendingBattles[0]."
        "battleSite: 'West Russia' is not a territory of the map"),
}


@pytest.mark.parametrize("case", list(BROKEN_GRAPHS))
def test_a_broken_graph_is_refused_with_its_path(tmp_path, land, case):
    """Before: tracebacks from `game` (TypeError on the null owner, KeyError on the site)."""
    build, fragment = BROKEN_GRAPHS[case]
    path = _written(tmp_path, build(land))
    line = assert_refused(cli_limited("game", str(path)), fragment)
    assert NOT_READ in line
    assert_refused(cli_limited("game", str(path), "--all", "--format", "csv"), fragment)


# ------------------------------------------------------------ item 11: Low Luck's type


def _low_luck(land, value: bytes, new_handles: int) -> bytes:
    """The Low Luck property (a BooleanProperty, its boolean last) made `value`."""
    r, s = land.reader, land.stream
    table = r.get(r.get(land.game_data, "properties"), "editableProperties")
    return s.replace(s.field(table, table["Low Luck"]), value, new_handles)


def test_low_luck_is_read_as_tripleas_boolean(tmp_path, land):
    """TripleA reads the switch as a Boolean (GameProperties.get casts it); the text "false"
    turned low luck on (a non-empty string is true).  Now a Boolean is read as it is and
    anything else is refused with its path."""
    s = land.stream
    table = land.reader.get(land.reader.get(land.game_data, "properties"), "editableProperties")
    span = s.field(table, table["Low Luck"])
    assert s.data[span.end - 1] == 0  # its value: false
    on = _written(tmp_path, s.replace(span, s.data[span.start:span.end - 1] + b"\x01", 1), "on")
    assert read_game(on, solve=False).low_luck is True
    assert read_game(LAND_COMBAT, solve=False).low_luck is False
    for text in ("false", "true", "yes"):
        path = _written(tmp_path, _low_luck(land, string(text), 1), f"{text}.tsvg")
        assert_refused(cli_limited("game", str(path)),
                       f"GameData.properties.editableProperties['Low Luck']: expected true or "
                       f"false, found the text {text!r} (TripleA reads it as a Boolean)")


# ------------------------------------------------------------ items 5 and 17: luck


def _writers_wrap_themselves(land):
    """The history's writers put inside an unmodifiable list whose inner collection is the
    list itself (a new object before the writers' list, which it holds as its `list`)."""
    s = land.stream
    span = s.definition(land.writers)
    wrapper = next(x.content.classdesc for x in s.spans if x.start < span.start
                   and x.type_code == 0x73 and getattr(getattr(x.content, "classdesc", None),
                                                      "name", "")
                   == "java.util.Collections$UnmodifiableList")
    handle = next(h for p, h in s.handles if p >= span.start)  # the new object's
    return s.edit(span.start, span.start,
                  b"\x73\x71" + struct.pack(">i", wrapper.handle) + reference(handle), 1)


def _utf(text: str) -> bytes:
    data = text.encode()
    return struct.pack(">H", len(data)) + data


def _class(name: str, fields: list[tuple[str, str, str | None]]) -> tuple[bytes, int]:
    """A new class description (serializable, no superclass): its bytes and the handles it
    makes (itself, and a string for each object field's type)."""
    out = b"\x72" + _utf(name) + bytes(8) + b"\x02" + struct.pack(">h", len(fields))
    for code, field, type_name in fields:
        out += code.encode() + _utf(field) + (string(type_name) if type_name else b"")
    return out + b"\x78\x70", 1 + sum(1 for *_, t in fields if t)


def _hash_map(map_class: int, key: bytes, value: bytes) -> bytes:
    """A one-entry java.util.HashMap of the class description at handle `map_class`."""
    return (b"\x73\x71" + struct.pack(">i", map_class) + struct.pack(">fi", 0.75, 12)
            + b"\x77\x08" + struct.pack(">ii", 16, 1) + key + value + b"\x78")


def _battle_record(land, attacker_lost: int | str, defender_lost: int = 18) -> bytes:
    """West Russia's battle record added to the (empty) battleRecordsList: {round 1:
    BattleRecords {Russians: {id: BattleRecord}}}, as TripleA keeps it once a battle is over;
    `attacker_lost` a text for a record of the wrong type."""
    r, s = land.reader, land.stream
    records = r.get(r.get(land.game_data, "battleRecordsList"), "battleRecords")
    span = s.definition(records)
    one = next(x.content for x in s.spans if x.start < span.start
               and type(x.content).__name__ == "JavaInt" and x.content.value == 1)
    proxy, proxy_handles = _class(
        "games.strategy.triplea.delegate.data.BattleRecords$SerializationProxy",
        [("L", "records", "Ljava/util/Map;")])
    text = isinstance(attacker_lost, str)
    fields = [("I", "defenderLostTuv", None),
              ("L", "attackerLostTuv", "Ljava/lang/String;") if text
              else ("I", "attackerLostTuv", None),
              ("L", "battleSite", "Lgames/strategy/engine/data/Territory;")]
    if not text:
        fields = [fields[1], fields[0], fields[2]]
    record, record_handles = _class("games.strategy.triplea.delegate.data.BattleRecord", fields)
    values = (string(attacker_lost) if text else struct.pack(">i", attacker_lost))
    values = (struct.pack(">i", defender_lost) + values if text
              else values + struct.pack(">i", defender_lost))
    values += reference(land.territory("West Russia").handle)
    map_class = records.classdesc.handle
    entry = _hash_map(map_class, reference(r.get(land.battle, "attacker").handle),
                      _hash_map(map_class, string("a battle id"),
                                b"\x73" + record + values))
    new = reference(one.handle) + b"\x73" + proxy + entry
    handles = proxy_handles + 1 + 2 + 1 + record_handles + 1 + (1 if text else 0)
    return s.edit(span.end - 1, span.end - 1, new, handles)


def _russian_roll(land):
    """The history node of the Russians' volley in West Russia, and its DiceRoll."""
    r = land.reader
    for writer in r.elements(land.writers):
        roll = r.opt(writer, "renderingData")
        if _class_name(roll).endswith(".DiceRoll") and str(r.opt(writer, "text") or ""
                                                           ).startswith("Russians roll"):
            return writer, roll
    raise AssertionError("no Russian roll")


def _neutral_roll(land):
    """The Russians' roll said to be Neutral's ("Neutral roll dice for ..."), as TripleA writes
    the rolls of a territory no player owns."""
    writer, _ = _russian_roll(land)
    text = land.reader.get(writer, "text")
    span = land.stream.field(writer, text)
    return land.stream.replace(span, string("Neutral" + str(text)[len("Russians"):]), 1)


def _roll_with_its_player(land, player: str):
    """The Russians' roll as TripleA writes it from 2.6 on: a version (1) before the dice and
    the player's name after the hits (DiceRoll.writeExternal)."""
    _, roll = _russian_roll(land)
    dice, block = land.stream.children(land.stream.definition(roll))
    assert dice.type_code == 0x75 and block.type_code == 0x77
    named = Stream(land.stream.edit(block.end, block.end, string(player), 1))
    dice = next(x for x in named.spans if x.start == dice.start)
    return named.edit(dice.start, dice.start, b"\x77\x04" + struct.pack(">i", 1), 0)


def _luck_json(path) -> dict:
    done = cli_limited("luck", str(path), "--format", "json")
    assert done.exit_code == 0, done.stderr
    return json.loads(done.stdout)


def test_luck_refuses_a_history_that_contains_itself(tmp_path, land):
    """Before: RecursionError (a traceback)."""
    path = _written(tmp_path, _writers_wrap_themselves(land))
    assert_refused(cli_limited("luck", str(path)),
                   "GameData.gameHistory.writers: a collection that contains itself")


def test_luck_refuses_a_battle_record_of_the_wrong_type(tmp_path, land):
    """Before: TypeError (a traceback) on attackerLostTuv as a String."""
    path = _written(tmp_path, _battle_record(land, "3"))
    assert_refused(cli_limited("luck", str(path)),
                   "GameData.battleRecordsList.battleRecords[1].records['Russians'][0]."
                   "attackerLostTuv: expected a number, found the text '3'")


def test_luck_says_which_battles_are_pending(tmp_path, land):
    """West Russia is being fought: no battle record yet.  Before: "no battle fought in the
    history".  With the record TripleA keeps once it is over (attacker lost 3 TUV, defender
    18), the battle is judged and nothing is pending."""
    luck = _luck_json(LAND_COMBAT)
    assert luck["battles"] == []
    assert luck["pending"] == [{"territory": "West Russia", "round": 1, "reason":
                                "no battle record yet: the battle is not over"}]
    table = cli_limited("luck", str(LAND_COMBAT)).stdout
    assert "no battle fought" not in table
    assert ("no battle judged yet\n  round 1 West Russia: not judged (no battle record yet: "
            "the battle is not over)\n") in table
    recorded = _luck_json(_written(tmp_path, _battle_record(land, 3)))
    assert recorded["pending"] == []
    (battle,) = recorded["battles"]
    assert (battle["territory"], battle["actual_tuv_swing"]) == ("West Russia", 15)


def _adds_up(luck: dict) -> None:
    for key in ("rolls", "dice", "hits"):
        assert sum(t[key] for t in luck["dice_by_nation"].values()) == luck["dice"][key], key
    assert sum(t["expected_hits"] for t in luck["dice_by_nation"].values()) == pytest.approx(
        luck["dice"]["expected_hits"], abs=1e-12)


def test_a_neutral_roll_has_its_line(tmp_path, land):
    """Before: a roll by a nation outside the player list (Neutral) had no line of its own,
    so the nations' lines did not add up to the total."""
    luck = _luck_json(_written(tmp_path, _neutral_roll(land)))
    assert set(luck["dice_by_nation"]) == {"Neutral"}
    assert luck["dice_by_nation"]["Neutral"]["dice"] == 11
    _adds_up(luck)


def test_a_roll_saved_by_tripleA_2_6_is_read(tmp_path, land):
    """From TripleA 2.6 a DiceRoll is written with a version first and its player last.
    Before: the version was read as the hits and the hits as half of the expectation; now
    the roll reads as the 2.0 one (1 hit, 3.5 expected) and its player names the line."""
    luck = _luck_json(_written(tmp_path, _roll_with_its_player(land, "Neutral")))
    assert luck["dice"]["hits"] == 1 and luck["dice"]["dice"] == 11
    assert luck["dice"]["expected_hits"] == pytest.approx(3.5, abs=1e-12)
    assert set(luck["dice_by_nation"]) == {"Neutral"}
    _adds_up(luck)
    game = read_game(_written(tmp_path, _roll_with_its_player(land, "Russians"), "game.tsvg"),
                     solve=False)
    (battle,) = game.battles
    assert battle.in_progress["fired"] == {"defending": False, "nation": "Russians",
                                           "dice": 11, "hits": 1}
