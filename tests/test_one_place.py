"""An option added to the table of options (battlecalc.options.OPTIONS) in one place reaches
every surface: simulate and solve_many read it, check it by what the table says of it (its
kind and bounds) and carry it to the result (its JSON, its row) though no code reads it;
the command line, the web API and the sweep, built from the table, take it as they take
every other option.  The fixture adds a dummy option, as a developer adding one would."""

from __future__ import annotations

import pytest

import battlecalc
from battlecalc import BattleInputError, options

DUMMY = options.Option(
    "dummy_note", "int", 0, applies=options.DICE_KINDS, flag="--dummy-note", lo=0, hi=9,
    label="dummy note", help="A note carried to the result (a test's option).")


@pytest.fixture
def dummy_option(monkeypatch):
    """The table with DUMMY in it, and the surfaces built from the table made again (as a
    process started with it would make them); as it was afterwards."""
    monkeypatch.setattr(options, "OPTIONS", (*options.OPTIONS, DUMMY))
    monkeypatch.setattr(options, "BY_NAME", {**options.BY_NAME, DUMMY.name: DUMMY})
    yield DUMMY


BATTLE = dict(rules="1942-2e", attacker="3 inf 1 tank", defender="3 inf", method="exact")


def test_simulate_checks_and_carries_an_added_option(dummy_option):
    result = battlecalc.simulate(**BATTLE, dummy_note=7)
    assert result.to_dict()["dummy_note"] == 7 and result.flat_row()["dummy_note"] == 7
    assert result.attacker_win == battlecalc.simulate(**BATTLE).attacker_win  # (it is inert)
    assert battlecalc.simulate(**BATTLE).to_dict()["dummy_note"] == 0  # its default
    with pytest.raises(BattleInputError, match="dummy_note must be between 0 and 9, got 10"):
        battlecalc.simulate(**BATTLE, dummy_note=10)
    with pytest.raises(BattleInputError, match="dummy_note must be a whole number"):
        battlecalc.simulate(**BATTLE, dummy_note="x")


def test_an_option_not_in_the_table_is_refused():
    with pytest.raises(TypeError, match="dummy_note"):
        battlecalc.simulate(**BATTLE, dummy_note=7)


def test_solve_many_takes_an_added_option(dummy_option):
    frame = battlecalc.solve_many([{**BATTLE, "dummy_note": 3}, BATTLE,
                                   {**BATTLE, "attacker": "2 inf 2 tank", "dummy_note": 5}])
    assert list(frame["dummy_note"]) == [3, 0, 5]
    want = battlecalc.simulate(**BATTLE, dummy_note=3).flat_row()
    assert {k: frame.iloc[0][k] for k in want if not k.endswith("_s")} == {
        k: v for k, v in want.items() if not k.endswith("_s")}
    with pytest.raises(BattleInputError, match="battle 0: dummy_note must be between"):
        battlecalc.solve_many([{**BATTLE, "dummy_note": -1}])
    import pandas as pd

    read = battlecalc.solve_many(pd.DataFrame([{**BATTLE, "dummy_note": "4"}]))
    assert list(read["dummy_note"]) == [4]  # (a cell read as the table says)


@pytest.fixture
def surfaces(dummy_option, monkeypatch):
    """The surfaces with DUMMY in the table: the web API's readers and the sweep read the
    table as they are called; the command line's commands are made from it when its module
    is loaded (a process started with the option has them so): made again, and again from
    the table as it was afterwards."""
    import importlib

    import battlecalc.cli
    import battlecalc.sweeper
    import battlecalc.web.spec

    made = {"cli": importlib.reload(battlecalc.cli), "spec": battlecalc.web.spec,
            "sweeper": battlecalc.sweeper}
    try:
        yield made
    finally:
        monkeypatch.undo()
        importlib.reload(battlecalc.cli)


def test_the_command_line_takes_an_added_option(surfaces):
    import json

    from click.testing import CliRunner

    cli = surfaces["cli"].cli
    args = ["run", "--rules", "1942-2e", "-a", "3 inf 1 tank", "-d", "3 inf", "--method",
            "exact", "--format", "json"]
    done = CliRunner().invoke(cli, [*args, "--dummy-note", "7"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["dummy_note"] == 7
    assert "--dummy-note" in CliRunner().invoke(cli, ["run", "--help"]).stdout
    refused = CliRunner().invoke(cli, [*args, "--dummy-note", "10"])
    assert refused.exit_code == 2 and refused.stdout == ""
    assert refused.stderr.strip().splitlines() == [
        "Error: --dummy-note must be between 0 and 9, got 10"]


def test_the_web_api_takes_an_added_option(surfaces):
    spec = surfaces["spec"]
    kwargs, _ = spec.parse_params({"rules": "1942-2e", "attacker": "3 inf 1 tank",
                                   "defender": "3 inf", "method": "exact", "dummy_note": "4"})
    assert kwargs["dummy_note"] == 4  # (read as the table says: a whole number)
    assert battlecalc.simulate(**kwargs).to_dict()["dummy_note"] == 4
    with pytest.raises(spec.ParamError, match="dummy_note must be a whole number"):
        spec.parse_params({"dummy_note": "four"})


def test_the_sweep_takes_an_added_option(surfaces):
    frame = surfaces["sweeper"].sweep([{**BATTLE, "dummy_note": 2}], vary=["dummy_note=3,5"],
                                      workers=1)
    assert list(frame["dummy_note"]) == [3, 5]
    assert list(frame["attacker_win"]) == [battlecalc.simulate(**BATTLE).attacker_win] * 2
