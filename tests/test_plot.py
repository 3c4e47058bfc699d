"""Pictures: the laws behind the charts (battlecalc.plot.distributions), Result.plot() and
`battlecalc run --plot`."""

from __future__ import annotations

import os
import struct
import xml.etree.ElementTree as ET

import pytest
from helpers import MC_TRIALS, assert_mc_agrees, invoke

import battlecalc
from battlecalc.plot import PANEL_TITLES, distributions

BATTLE = ["run", "--rules", "revised", "-a", "2 inf 1 art", "-d", "2 inf"]


def test_laws_of_one_infantry_against_one():
    # revised 1 inf (attack 1) v 1 inf (defence 2): per round A hits 1/6, D hits 2/6;
    # P(attacker wins) = (1/6 * 4/6) / (1 - 5/6 * 4/6) = 1/4, P(draw) = (1/6 * 2/6) / (4/9) = 1/8
    r = battlecalc.simulate(rules="revised", attacker="1 inf", defender="1 inf", method="exact",
                            rounds_distribution=True)
    laws = distributions(r)
    (a0, pa0), (a1, pa1) = laws["attacker"]["units_left"]
    assert (a0, a1) == (0, 1) and pa0 == pytest.approx(0.75) and pa1 == pytest.approx(0.25)
    (d0, pd0), (d1, pd1) = laws["defender"]["units_left"]
    assert pd1 == pytest.approx(0.625) and pd0 == pytest.approx(0.375)
    assert [v for v, _ in laws["attacker"]["ipc_lost"]] == [0, 3]
    # swing = defender's loss - attacker's: +3 (attacker wins), 0 (draw), -3 (defender wins)
    swing = dict((v, p) for v, p in laws["tuv_swing"])
    assert swing == pytest.approx({-3: 0.625, 0: 0.125, 3: 0.25})
    # rounds: the battle ends in round k with probability (4/9)(5/9)^(k-1)
    rounds = dict((k, p) for k, p in laws["rounds"])
    assert rounds[1] == pytest.approx(4 / 9) and rounds[2] == pytest.approx(4 / 9 * 5 / 9)
    assert laws["attacker"]["top"][0] == {"survivors": "nothing", "ipc_lost": 3,
                                          "probability": pytest.approx(0.75)}


def test_monte_carlo_laws_and_formula_uses_loss_points():
    trials = MC_TRIALS
    r = battlecalc.simulate(rules="revised", attacker="2 inf", defender="1 inf", method="mc",
                            trials=trials, seed=2)
    exact = battlecalc.simulate(rules="revised", attacker="2 inf", defender="1 inf",
                                method="exact")
    laws = distributions(r)
    # the Monte Carlo TUV-swing law: each value's share within 4 standard errors of exact
    want = dict(map(tuple, distributions(exact)["tuv_swing"]))
    got = dict(map(tuple, laws["tuv_swing"]))
    assert set(got) <= set(want)
    assert_mc_agrees({v: got.get(v, 0.0) for v in want}, want, probabilities=want, means=(),
                     slack=0.0, trials=trials)
    assert sum(p for _, p in laws["rounds"]) == pytest.approx(1)
    f = battlecalc.simulate(rules="formula", attacker="3 army", defender="2 army", exchanges=1)
    laws = distributions(f)
    assert laws["labels"] == {"ipc_lost": "loss points", "rounds": "exchanges"}
    assert dict(map(tuple, laws["attacker"]["ipc_lost"])) == pytest.approx(
        f.attacker_loss_points_distribution)


def titles(figure) -> list[str]:
    return [ax.get_title() for ax in figure.axes]


def test_result_plot_returns_a_figure_with_the_panels():
    pytest.importorskip("matplotlib")
    r = battlecalc.simulate(rules="1942-2e", attacker="3 inf 1 art 1 tank",
                            defender="4 inf 1 tank", method="exact")
    figure = r.plot()
    assert titles(figure) == list(PANEL_TITLES)
    outcome = figure.axes[0]
    widths = {t.get_text(): b.get_width() for t, b in zip(outcome.get_yticklabels(),
                                                          outcome.patches, strict=True)}
    assert widths["attacker wins"] == pytest.approx(r.attacker_win)
    assert widths["defender wins"] == pytest.approx(r.defender_win)
    survivors = figure.axes[1]
    heights = sorted((round(b.get_x() + b.get_width() / 2), b.get_height())
                     for b in survivors.patches)
    law = [tuple(p) for p in distributions(r)["attacker"]["units_left"]]
    # (units left, probability) pairs; compared flat, as pytest.approx takes no nesting
    assert [n for n, _ in heights] == [n for n, _ in law]
    assert [p for _, p in heights] == pytest.approx([p for _, p in law])


def png_size(path) -> tuple[int, int]:
    with open(path, "rb") as handle:
        head = handle.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


@pytest.mark.slow
def test_run_plot_writes_png_and_svg(tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "odds.png"
    result = invoke(*BATTLE, "--plot", str(png))
    assert result.exit_code == 0, result.output
    assert "attacker wins" in result.stdout  # the table is still printed
    width, height = png_size(png)
    assert width > 800 and height > 500
    svg = tmp_path / "odds.svg"
    result = invoke(*BATTLE, "--method", "mc", "--trials", "20000",
                    "--seed", "1", "--plot", str(svg), "--format", "json")
    assert result.exit_code == 0, result.output
    texts = [t.text or "" for t in ET.parse(svg).iter() if t.tag.endswith("text")]
    for title in PANEL_TITLES:
        assert title in texts
    assert os.stat(svg).st_mode & 0o777 == 0o666 & ~current_umask()


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@pytest.mark.parametrize(("name", "fragment"), [
    ("odds.pdf", "must end in .png or .svg"),
    ("odds", "must end in .png or .svg"),
    ("missing/odds.png", "does not exist"),
    ("", "needs a file name"),
])
def test_bad_plot_path_exits_2_before_any_work(tmp_path, name, fragment):
    path = str(tmp_path / name) if name else ""
    result = invoke(*BATTLE, "--plot", path)
    assert result.exit_code == 2
    assert result.stdout == ""  # refused before the battle ran
    (line,) = result.stderr.splitlines()
    assert line.startswith("Error: ") and fragment in line
    assert os.listdir(tmp_path) == []


def test_plot_into_a_folder_is_refused(tmp_path):
    (tmp_path / "dir.png").mkdir()
    result = invoke(*BATTLE, "--plot", str(tmp_path / "dir.png"))
    assert result.exit_code == 2 and "is a folder" in result.stderr


def test_a_failing_write_is_one_error_line_and_leaves_nothing(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    import errno

    from matplotlib.figure import Figure

    def full(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Figure, "savefig", full)
    result = invoke(*BATTLE, "--plot", str(tmp_path / "odds.png"))
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (
        f"Error: cannot write {tmp_path / 'odds.png'}: No space left on device")
    assert os.listdir(tmp_path) == []  # no file, no temporary left behind
