"""Inputs accepted but ignored: said, on every surface (issue 30, frictions 4 and 9).

The library says it with a BattleInputWarning, or, in a thread that collects them (the web
server's: errors.collected_warnings), into that thread's list, since Python's warning filters
and showwarning are the process's."""

from __future__ import annotations

import threading
import warnings

import pytest

import battlecalc
from battlecalc.errors import BattleInputWarning, collected_warnings
from battlecalc.options import ignored_options


def _said(call) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [str(w.message) for w in caught if issubclass(w.category, BattleInputWarning)]


def test_every_result_of_simulate_and_raid_names_its_edition_given_or_not():
    # friction 9: both default to Revised; every way a result is shown names the edition
    # (the web API also warns a request that names none: test_live)
    for result in (battlecalc.simulate(attacker="1 inf", defender="1 inf"),
                   battlecalc.raid(attacker="1 bomber", target_value=3),
                   battlecalc.simulate(attacker="1 inf", defender="1 inf", waves=["1 inf"])):
        assert result.rules == "revised"
        assert result.table().startswith("revised: ")
        assert result.to_dict()["rules"] == "revised"
        header, row = result.to_csv().splitlines()[:2]
        assert dict(zip(header.split(","), row.split(","), strict=False))["rules"] == "revised"
        assert "rules='revised'" in repr(result)


AMPHIBIOUS_RETREAT = ("the retreat policy is ignored: only aircraft may retreat from an "
                      "amphibious assault in revised, and the attacker has none (the battle is "
                      "fought to the end)")


def test_a_thread_that_collects_warnings_gets_them_and_python_sees_none():
    battle = dict(rules="revised", attacker="1 tank", landing="2 inf", defender="2 inf",
                  retreat_after=1)
    assert _said(lambda: battlecalc.simulate(**battle)) == [AMPHIBIOUS_RETREAT]
    collected = {}

    def run(name):
        with collected_warnings() as said:
            battlecalc.simulate(**battle)
            battlecalc.simulate(**battle)  # each once
            if name == "plain":
                said.clear()
                battlecalc.simulate(rules="revised", attacker="1 inf", defender="1 inf")
        collected[name] = list(said)

    def both():
        threads = [threading.Thread(target=run, args=(name,)) for name in ("retreat", "plain")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    assert _said(both) == []
    assert collected == {"retreat": [AMPHIBIOUS_RETREAT], "plain": []}


def test_a_raid_drops_its_air_battle_s_warnings_where_they_are_collected():
    # the air battle's technology warnings are not the raid's (raids._air_battle ignores them)
    raid = dict(rules="1940-2e", attacker="2 bomber 1 fighter", defender="1 fighter",
                facility="major", attacker_tech="heavy_bombers", method="exact")
    with collected_warnings() as said:
        battlecalc.raid(**raid)
    assert said == []


@pytest.mark.parametrize(("given", "method", "flags", "words"), [
    ({"seed", "trials"}, "exact", True,
     ["--seed and --trials are ignored with --method exact (no dice are rolled)"]),
    ({"seed"}, "exact", False, ["seed is ignored with method exact (no dice are rolled)"]),
    ({"seed", "trials"}, "auto", False, []),
])
def test_ignored_options_speak_the_caller_s_names(given, method, flags, words):
    spell = (lambda name: "--" + name.replace("_", "-")) if flags else (lambda name: name)
    assert ignored_options(given, method, None, spell) == words
