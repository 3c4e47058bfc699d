"""Inputs accepted but changing nothing warn (errors.BattleInputWarning; the CLI prints
``Warning: ...``) and are not announced as if they applied; a formula edition's default level is
its min_level (issue 16 points 11, 12 and 17)."""

from __future__ import annotations

import warnings

import pytest
from helpers import invoke
from reference import exact_land

import battlecalc
from battlecalc.errors import BattleInputError, BattleInputWarning

KEYS = ("attacker_win", "defender_win", "draw", "retreat", "attacker_ipc_loss",
        "defender_ipc_loss", "mean_rounds")


def _edition(tmp_path, body: str, base: str, name: str = "custom"):
    path = tmp_path / f"{name}.toml"
    path.write_text(f'format = 1\nid = "{name}"\nname = "{name}"\nbase = "{base}"\n{body}',
                    encoding="utf-8")
    return path


def _no_input_warnings(**kwargs):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = battlecalc.simulate(**kwargs)
    assert not [w for w in seen if issubclass(w.category, BattleInputWarning)]
    return result


# --- point 12: technologies that cannot affect their side ---------------------------------------

def test_techs_that_cannot_affect_their_side_warn():
    with pytest.warns(BattleInputWarning, match="defender technology heavy_bombers changes "
                      "nothing here"):
        plain = battlecalc.simulate(rules="revised", attacker="3 inf", defender="2 inf 1 bmb",
                                    defender_tech="heavy_bombers", method="exact")
    assert plain.attacker_win == battlecalc.simulate(
        rules="revised", attacker="3 inf", defender="2 inf 1 bmb", method="exact").attacker_win
    with pytest.warns(BattleInputWarning, match="attacker technology jets"):  # no fighter
        battlecalc.simulate(rules="1942-2e", attacker="3 inf", defender="2 inf",
                            attacker_tech="jets", method="exact")
    # where they apply: no warning (bombarding ships count as the attacker's)
    _no_input_warnings(rules="revised", attacker="1 tank", landing="2 inf", bombard="2 dd",
                       defender="3 inf", attacker_tech="combined_bombardment", method="exact")
    _no_input_warnings(rules="revised", attacker="2 bmb", defender="2 inf",
                       attacker_tech="heavy_bombers", method="exact")
    _no_input_warnings(rules="1942-2e", attacker="2 inf 1 art", defender="2 inf",
                       attacker_tech="improved_artillery", method="exact")
    result = invoke("run", "--rules", "revised", "-a", "3 inf", "-d", "2 inf",
                    "--defender-tech", "jets", "-m", "exact")
    assert result.exit_code == 0, result.output
    assert result.stderr.count("Warning: defender technology jets changes nothing") == 1


# --- point 11: Classic amphibious assaults never retreat --------------------------------------

def test_an_amphibious_retreat_that_cannot_happen_warns_and_is_not_announced():
    kwargs = dict(attacker="1 ftr", landing="2 inf", defender="3 inf", method="exact")
    for edition in ("classic", "revised"):
        attacker = "1 tank" if edition == "revised" else kwargs["attacker"]  # revised: air only
        with pytest.warns(BattleInputWarning, match="the retreat policy is ignored"):
            r = battlecalc.simulate(rules=edition, **{**kwargs, "attacker": attacker},
                                    retreat_after=1)
        fought = battlecalc.simulate(rules=edition, **{**kwargs, "attacker": attacker})
        for key in KEYS:
            assert getattr(r, key) == pytest.approx(getattr(fought, key), abs=1e-12), key
        assert r.policies["retreat_after"] is None and "retreats" not in r.table()
    # against the independent reference: Classic's amphibious attacker fights to the end
    expected = exact_land("classic", {"fighter": 1}, {"infantry": 3},
                          landing={"infantry": 2}, retreat_after=1)
    with pytest.warns(BattleInputWarning):
        r = battlecalc.simulate(rules="classic", **kwargs, retreat_after=1)
    assert r.attacker_win == pytest.approx(float(expected["attacker_win"]), abs=1e-9)
    result = invoke("run", "--rules", "classic", "-a", "1 ftr", "--landing", "2 inf", "-d",
                    "3 inf", "--retreat-after", "1", "-m", "exact")
    assert result.exit_code == 0, result.output
    assert "Warning: the retreat policy is ignored: no attacker retreats from an amphibious " \
           "assault in classic" in result.stderr
    assert "retreats" not in result.stdout


def test_an_amphibious_retreat_that_can_happen_is_kept():
    r = _no_input_warnings(rules="revised", attacker="1 ftr", landing="2 inf",
                           defender="3 inf", retreat_after=1, method="exact")
    assert r.retreat > 0 and "attacker retreats after round 1" in r.table()
    r = _no_input_warnings(rules="1942-2e", attacker="1 tank", landing="2 inf",
                           defender="3 inf", retreat_after=1, method="exact")
    assert r.retreat > 0


# --- point 17: a formula edition whose levels start above 1 ------------------------------------

def test_the_default_level_is_the_editions_min_level(tmp_path):
    path = _edition(tmp_path, "[formula]\nmin_level = 5\nlevel_thresholds = [6, 9]\n",
                    base="formula")
    r = battlecalc.simulate(rules=path, attacker="3 army", defender="2 army", method="exact")
    explicit = battlecalc.simulate(rules=path, attacker="3 army", defender="2 army",
                                   attacker_level=5, defender_level=5, method="exact")
    assert r.attacker_win == explicit.attacker_win and "levels 5 v 5" in r.table()
    with pytest.raises(BattleInputError, match="between 5 and 10, got 2"):
        battlecalc.simulate(rules=path, attacker="3 army", defender="2 army", attacker_level=2)
