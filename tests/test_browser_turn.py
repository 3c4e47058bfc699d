"""The page's "Plan this turn" in a real browser (issue 44): a save dropped on the page shows
the plan of the player to move, as battlecalc.plan_turn makes it; its controls re-plan; a card
loads its battle into the form; a save copied into the watched folder updates the plan.

The browser, the server and the tab are tests/test_browser.py's (its fixtures, imported);
slow, as they are."""

from __future__ import annotations

import json
import shutil

import pytest
import test_browser
from test_browser import SETTLE_MS, START_SAVE, needs_saves, page_width, settle
from webserver import running_server

# test_browser's fixtures, here by their names
base, browser, _tab, page = (test_browser.base, test_browser.browser, test_browser._tab,
                             test_browser.page)

pytest.importorskip("scipy", reason="scipy (battlecalc[turn]) absent")

from battlecalc.turn import plan_turn  # noqa: E402

pytestmark = [pytest.mark.slow, needs_saves]


def _plan_shown(page) -> dict:
    page.wait_for_selector("#turn-plan[data-state=done]", timeout=SETTLE_MS)
    return page.evaluate("""() => ({
        value: Number(document.querySelector('#plan-value').dataset.value),
        title: document.querySelector('#plan-title').textContent,
        cards: [...document.querySelectorAll('#plan-battles li.plan-battle')].map(c => ({
            target: c.dataset.territory, value: Number(c.dataset.value),
            p_take: Number(c.querySelector('[data-key=p_take]').dataset.value),
            counter: (c.querySelector('.counter') || {}).textContent || null})),
        moves: [...document.querySelectorAll('#plan-moves li[data-to]')].map(m => m.textContent),
    })""")


def test_a_dropped_save_shows_its_plan_and_its_controls_replan(base, page):
    plan = plan_turn(START_SAVE, counter="none")
    page.goto(base + "/")
    settle(page)
    page.set_input_files("#save-file", START_SAVE)
    shown = _plan_shown(page)
    assert shown["title"] == "Plan this turn: the Russians"
    assert shown["value"] == pytest.approx(plan.value, abs=1e-9)
    assert [(c["target"], c["p_take"]) for c in shown["cards"]] == [
        (b.target, pytest.approx(b.p_take, abs=1e-12)) for b in plan.battles]
    assert shown["moves"] == [f"{m['count']} {m['unit']}: {m['from']} \u2192 {m['to']}"
                              for m in plan.moves]
    assert "proven optimal" in page.text_content("#plan-summary")
    assert page_width(page)[0] <= page_width(page)[1]
    # a card loads its battle into the form: the plan's armies, solved as the CLI solves them
    west = next(b for b in plan.battles if b.target == "West Russia")
    with page.expect_request(lambda r: "/api/run" in r.url) as asked:
        page.click("#plan-battles li[data-territory='West Russia'] a.game-battle")
    body = json.loads(asked.value.post_data)
    assert (body["attacker"], body["defender"]) == ("9 infantry, 1 artillery, 1 tank",
                                                    "3 infantry, 1 artillery, 1 tank")
    settle(page)
    assert float(page.get_attribute("#outcomes tr[data-key=takes_territory]",
                                    "data-value")) == pytest.approx(west.p_take, abs=1e-12)
    # the controls: hold with the counter-attack of every enemy unit in reach
    page.select_option("#plan-objective", "hold")
    page.wait_for_selector("#turn-plan[data-state=planning]", timeout=SETTLE_MS)
    shown = _plan_shown(page)
    held = plan_turn(START_SAVE, objective="hold", counter="max")
    assert page.input_value("#plan-counter") == "max"
    assert shown["value"] == pytest.approx(held.value, abs=1e-9)
    assert [c["target"] for c in shown["cards"]] == ["West Russia"]
    assert shown["cards"][0]["counter"] == ("counter-attack: 6 infantry, 1 artillery, 3 tank, "
                                            "6 fighter, 1 bomber")


def test_a_save_copied_into_the_watched_folder_updates_the_plan(page, tmp_path):
    from save_edits import chain, written
    from test_triplea import START

    germans = written(tmp_path, chain(START, lambda e: e.step("germanTech")), "germans.tsvg")
    folder = tmp_path / "watched"
    folder.mkdir()
    with running_server(watch=str(folder), watch_interval=0.1) as url:
        page.goto(url + "/")
        page.wait_for_selector("#board:not([hidden])", timeout=SETTLE_MS)
        shutil.copy(START_SAVE, folder / "autosave.tsvg")
        shown = _plan_shown(page)
        assert shown["title"] == "Plan this turn: the Russians"
        assert shown["value"] == pytest.approx(plan_turn(START_SAVE).value, abs=1e-9)
        page.evaluate("window.notReloaded = true")
        shutil.copy(germans, folder / "autosave2.tsvg")
        page.wait_for_selector("#plan-title:has-text('the Germans')", timeout=3 * SETTLE_MS)
        shown = _plan_shown(page)
        assert shown["value"] == pytest.approx(plan_turn(germans).value, abs=1e-9)
        assert shown["cards"] and page.evaluate("window.notReloaded") is True
        page.goto("about:blank")
