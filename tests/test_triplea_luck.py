"""The luck of a TripleA game: the dice of a real history, and the luck arithmetic of battles
checked by hand (battlecalc.triplea.luck)."""

from __future__ import annotations

import json
import math

import pytest
from cli_helpers import assert_usage_error, invoke
from test_triplea import LAND_COMBAT, SAVES, START, javaobj  # noqa: F401  (skips with them)

from battlecalc import simulate
from battlecalc.triplea.luck import FoughtBattle, battle_luck, luck_totals, read_luck

pytestmark = pytest.mark.skipif(not SAVES.is_dir(), reason="TripleA fixtures not found")


def test_dice_of_the_west_russia_history():
    """The history holds the Russians' technology roll ('6,6,4,1 ... gets 2 hits') and their
    first volley in West Russia ('6,2,2,6,6,6,4,4,6,1,6': one 1, a hit).  By hand: 5 infantry
    at 1, 1 infantry (with the artillery) and the artillery at 2, 3 tanks and a fighter at 3."""
    luck = read_luck(LAND_COMBAT)
    probabilities = [1 / 6] * 5 + [2 / 6] * 2 + [3 / 6] * 4
    expected = sum(probabilities)
    variance = sum(p * (1 - p) for p in probabilities)
    assert expected == pytest.approx(3.5)
    assert luck.dice["rolls"] == 1 and luck.dice["dice"] == 11 and luck.dice["hits"] == 1
    assert luck.dice["expected_hits"] == pytest.approx(expected, abs=1e-12)
    assert luck.dice["z"] == pytest.approx((1 - expected) / math.sqrt(variance), abs=1e-12)
    assert luck.dice_by_nation == {"Russians": luck.dice}
    assert (luck.other_rolls["rolls"], luck.other_rolls["dice"],
            luck.other_rolls["hits"]) == (1, 4, 2)
    assert luck.battles == []  # West Russia is not over: no battle record yet


def test_luck_of_two_battles_by_hand():
    """1 infantry against 1 infantry (Revised): the attacker hits on 1, the defender on 1-2.
    Per round the battle ends with probability 1 - (5/6)(4/6) = 16/36: the attacker wins
    with 1/4, the defender with 5/8, both die with 1/8.  TUV swing +3, -3 or 0; expected
    3 (1/4 + 1/8) - 3 (5/8 + 1/8) = -9/8."""
    law = simulate("revised", "1 inf", "1 inf", method="exact")
    values, probabilities = law.swing_law
    assert dict(zip(values.tolist(), probabilities.tolist(), strict=True)) == pytest.approx(
        {3: 1 / 4, 0: 1 / 8, -3: 5 / 8}, abs=1e-12)
    assert law.tuv_swing == pytest.approx(-9 / 8, abs=1e-12)
    won = FoughtBattle("Karelia", 1, ["Russians"], ["Germans"], {"infantry": 1},
                       {"infantry": 1}, attacker_lost_tuv=0, defender_lost_tuv=3)
    lost = FoughtBattle("Karelia", 2, ["Germans"], ["Russians"], {"infantry": 1},
                        {"infantry": 1}, attacker_lost_tuv=3, defender_lost_tuv=0)
    first = battle_luck(won, law.swing_law, law.tuv_swing)
    second = battle_luck(lost, law.swing_law, law.tuv_swing)
    assert first["actual_tuv_swing"] == 3 and first["luck"] == pytest.approx(33 / 8)
    assert first["percentile"] == pytest.approx(3 / 4 + 1 / 4 / 2)  # P(<3) + P(=3)/2
    assert second["luck"] == pytest.approx(-3 + 9 / 8)
    assert second["percentile"] == pytest.approx(5 / 8 / 2)
    totals = luck_totals([first, second])
    # the Russians won as attacker (+33/8) and held as defender (+15/8)
    assert totals == pytest.approx({"Russians": 6.0, "Germans": -6.0})


def test_cli_luck():
    result = invoke("luck", str(LAND_COMBAT), "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert {"dice", "battles"} <= set(data)
    assert set(data["dice"]) >= {"rolls", "dice", "hits", "expected_hits"}
    table = invoke("luck", str(START))
    assert "no battle fought in the history" in table.stdout
    assert_usage_error(invoke("luck", "/etc/hostname"), "not gzip data")


def test_plot_of_the_battles(tmp_path):
    pytest.importorskip("matplotlib")
    from battlecalc.triplea.luck import Luck, plot_luck

    law = simulate("revised", "1 inf", "1 inf", method="exact")
    won = FoughtBattle("Karelia", 1, ["Russians"], ["Germans"], {"infantry": 1},
                       {"infantry": 1}, attacker_lost_tuv=0, defender_lost_tuv=3)
    battle = battle_luck(won, law.swing_law, law.tuv_swing)
    # the law {-3: 5/8, 0: 1/8, +3: 1/4}: its 10th percentile is -3, its 90th +3
    assert (battle["swing_p10"], battle["swing_p90"]) == (-3, 3)
    luck = Luck("g", "revised", {}, {}, {}, [battle, battle])
    figure = plot_luck(luck)
    (points,) = [line for line in figure.axes[0].lines if line.get_gid() == "actual"]
    assert list(points.get_ydata()) == [3, 3]
    path = tmp_path / "luck.png"
    result = invoke("luck", str(LAND_COMBAT), "--plot", str(path))
    assert result.exit_code == 0, result.output
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert_usage_error(invoke("luck", str(LAND_COMBAT), "--plot", str(tmp_path / "x.gif")),
                       "must end in .png or .svg")
