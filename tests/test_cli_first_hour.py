"""The command line's first hour (issue 43, friction 10)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import invoke

from battlecalc.triplea.game import territory_suggestions

SAVES = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures" / "triplea" / "saves"
GLOBAL = SAVES / "wwii_global_2nd_edition_during_g1_politics.tsvg"


def test_a_territory_named_as_players_say_it_gets_the_saves_name():
    names = ["110 Sea Zone", "11 Sea Zone", "Germany", "Western Germany", "Sea Zone"]
    assert territory_suggestions("Sea Zone 110", names) == ["110 Sea Zone"]
    assert territory_suggestions("sea zone 110", names) == ["110 Sea Zone"]
    assert territory_suggestions("GERMANY", names) == ["Germany"]
    assert territory_suggestions("germny", names) == ["Germany"]
    assert territory_suggestions("Moscow", names) == []


@pytest.mark.slow
@pytest.mark.skipif(not GLOBAL.exists(), reason="the shared TripleA saves are absent")
def test_game_suggests_triplea_s_name_of_a_sea_zone():
    result = invoke("game", str(GLOBAL), "--territory", "Sea Zone 110", "--attack", "1 dd")
    assert result.exit_code == 2
    assert result.stderr == ("Error: no territory 'Sea Zone 110' in this save; did you mean "
                             "'110 Sea Zone'?\n")
    assert result.stdout == ""


README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_readme_says_to_make_a_virtual_environment_and_what_jq_is():
    """Debian's pip refuses to install outside a virtual environment, and one example pipes
    into jq: the README says both where a new user reads them."""
    lines = README.read_text().splitlines()
    install = lines.index("pip install -e '.[dev]'")
    near = " ".join(lines[install:install + 8])
    assert "python3 -m venv .venv" in near and ". .venv/bin/activate" in near
    piped = next(i for i, line in enumerate(lines) if line.startswith("$ ") and "| jq " in line)
    before = " ".join(lines[piped - 4:piped])
    assert "jq" in before and "install jq" in before
