"""The page in a real browser: headless Chromium driven by Playwright, against a server on a
free loopback port.  The numbers on the page must be `battlecalc.simulate`'s.

Needs Debian's `chromium` (`apt-get install chromium`) and Playwright for Python (in the dev
extra); Playwright's own browser download is never used.  Without a browser the tests skip,
unless BATTLECALC_REQUIRE_BROWSER=1 (CI) makes that a failure.  A screenshot of the page is
saved under test-artifacts/.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import urllib.parse
from pathlib import Path

import pytest

import battlecalc

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from webserver import running_server  # noqa: E402

INSTALL_HINT = ("no browser for the browser tests: install Debian's chromium "
                "(apt-get install chromium) and Playwright (pip install -e '.[dev]'); "
                "or set BATTLECALC_CHROMIUM to a Chromium binary")
LAUNCH_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync"]
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
SETTLE_MS = 60_000


def _no_browser(reason: str):
    if os.environ.get("BATTLECALC_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{reason} (BATTLECALC_REQUIRE_BROWSER=1)", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def _chromium() -> str | None:
    for candidate in (os.environ.get("BATTLECALC_CHROMIUM"), "chromium", "chromium-browser",
                      "google-chrome"):
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)
    return None


try:
    from playwright.sync_api import sync_playwright
except ImportError:
    _no_browser(INSTALL_HINT)
CHROMIUM = _chromium()
if CHROMIUM is None:
    _no_browser(INSTALL_HINT)


@pytest.fixture(scope="module")
def base():
    with running_server() as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as playwright, tempfile.TemporaryDirectory() as profile:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=LAUNCH_FLAGS,
            viewport={"width": 1400, "height": 1000})
        yield context
        context.close()


@pytest.fixture
def page(browser):
    page = browser.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    yield page
    page.close()
    # a blocked script or style (the page's CSP), a failed asset or a JS error shows here;
    # 400 answers for bad input are expected and logged as failed resources
    assert [p for p in problems if "400 (Bad Request)" not in p] == []


def settle(page, state: str = "idle") -> None:
    """Wait until the page has the answer to its current battle (or its error)."""
    page.wait_for_selector(f"body[data-state={state}]", state="attached", timeout=SETTLE_MS)


def shown_outcomes(page) -> dict[str, tuple[float, str]]:
    rows = page.locator("#outcomes tr[data-key]")
    return {rows.nth(i).get_attribute("data-key"): (
        float(rows.nth(i).get_attribute("data-value")),
        rows.nth(i).locator("td.value").text_content()) for i in range(rows.count())}


def shown_numbers(page) -> dict[str, tuple[float, str]]:
    cells = page.locator("#numbers [data-value], #survivors [data-value]")
    return {cells.nth(i).get_attribute("data-key"): (
        float(cells.nth(i).get_attribute("data-value")), cells.nth(i).text_content())
        for i in range(cells.count())}


def assert_page_shows(page, result) -> None:
    """Every number on the page is the result's, as a value and as the text shown."""
    outcomes = shown_outcomes(page)
    assert {"attacker_win", "defender_win", "draw", "stalemate"} <= set(outcomes)
    for key, (value, text) in outcomes.items():
        assert value == getattr(result, key), key
        assert text == f"{100 * getattr(result, key):.2f}%", key
    numbers = shown_numbers(page)
    pm = result.method != "exact"
    for key in ("attacker_ipc_loss", "defender_ipc_loss", "tuv_swing", "mean_rounds"):
        value, text = numbers[key]
        assert value == getattr(result, key), key
        shown = f"{value:+.3f}" if key == "tuv_swing" else f"{value:.3f}"
        if pm and key in result.stderr and result.stderr[key]:
            shown += f" ± {1.959963984540054 * result.stderr[key]:.3f}"
        assert text == shown, key
    for side in ("attacker", "defender"):
        survivors = getattr(result, f"{side}_survivors")
        for unit, mean in survivors.items():
            value, text = numbers[f"{side}_survivors.{unit}"]
            assert value == mean and text == f"{mean:.3f}"
    assert page.get_attribute("#method", "data-value") == result.method


def stepper(page, side: str, unit: str):
    return page.locator(f"#army-{side}-{unit}")


def test_enter_a_battle_change_options_and_share_it(base, page):
    page.goto(base + "/?rules=1942-2e")
    settle(page, "error")  # no armies yet
    assert page.text_content("#error") == "the attacker has no units"
    for _ in range(3):
        page.click('#army-attacker button[aria-label="more infantry"]')
    page.click('#army-attacker button[aria-label="more artillery"]')
    stepper(page, "attacker", "tank").fill("1")
    stepper(page, "defender", "infantry").fill("4")
    stepper(page, "defender", "tank").fill("1")
    settle(page)
    assert page.text_content("#notation-attacker") == "3 infantry, 1 artillery, 1 tank"
    battle = dict(rules="1942-2e", attacker="3 inf 1 art 1 tank", defender="4 inf 1 tank")
    plain = battlecalc.simulate(**battle, method="exact")
    assert_page_shows(page, plain)

    # an option changes the answer: retreat after round 1
    page.fill("#opt-retreat_after", "1")
    settle(page)
    retreating = battlecalc.simulate(**battle, method="exact", retreat_after=1)
    assert retreating.retreat > 0.5 and retreating.attacker_win < plain.attacker_win
    assert_page_shows(page, retreating)
    assert shown_outcomes(page)["retreat"][0] == retreating.retreat

    # Monte Carlo with a seed: the same numbers as simulate's, intervals shown
    page.select_option("#opt-method", "mc")
    page.fill("#opt-trials", "20000")
    page.fill("#opt-seed", "5")
    settle(page)
    sampled = battlecalc.simulate(**battle, method="mc", trials=20000, seed=5, retreat_after=1)
    assert_page_shows(page, sampled)
    low, high = sampled.ci95["attacker_win"]
    assert page.locator('#outcomes tr[data-key="attacker_win"] td.ci').text_content() == (
        f"[{100 * low:.2f}%, {100 * high:.2f}%]")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "web-page.png"), full_page=True)

    # the URL holds the whole battle: a reload and a new tab show the same one
    url = page.url
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
    assert query["attacker"] == ["3 infantry, 1 artillery, 1 tank"]
    assert query["method"] == ["mc"] and query["retreat_after"] == ["1"]
    assert page.get_attribute("#share", "href").endswith(urllib.parse.urlsplit(url).query)
    page.reload()
    settle(page)
    assert_page_shows(page, sampled)
    assert stepper(page, "attacker", "infantry").input_value() == "3"
    assert stepper(page, "defender", "tank").input_value() == "1"
    assert page.input_value("#opt-retreat_after") == "1"
    other = page.context.new_page()
    other.goto(url)
    settle(other)
    assert_page_shows(other, sampled)
    other.close()


def test_sea_battle_from_the_form(base, page):
    page.goto(base + "/?rules=1942-2e")
    settle(page, "error")
    page.check('input[name=kind][value=sea]')
    stepper(page, "attacker", "submarine").fill("2")
    stepper(page, "attacker", "destroyer").fill("1")
    stepper(page, "defender", "destroyer").fill("1")
    stepper(page, "defender", "carrier").fill("1")
    stepper(page, "defender", "fighter").fill("1")
    page.select_option("#opt-defender_submerge", "first-chance")
    settle(page)
    assert "sea=1" in page.url
    result = battlecalc.simulate(rules="1942-2e", sea=True, attacker="2 sub 1 dd",
                                 defender="1 dd 1 cv 1 ftr", defender_submerge="first-chance",
                                 seed=1)
    assert_page_shows(page, result)
    assert page.locator('#outcomes tr[data-key="takes_territory"]').count() == 0
    # the charts are drawn: survivors, IPC lost, TUV swing (exact), no rounds law
    titles = page.locator(".chart h3").all_text_contents()
    assert titles == ["Attacker survivors", "Defender survivors", "Keeps at least N units",
                      "IPC lost", "TUV swing", "Rounds"]
    assert page.locator('[data-chart="TUV swing"] rect').count() > 3


def test_amphibious_assault_and_formula_edition_from_urls(base, page):
    query = urllib.parse.urlencode({
        "rules": "1942-2e", "kind": "amphibious", "attacker": "1 tank 1 ftr",
        "landing": "3 inf 1 art", "bombard": "1 bb 1 ca", "defender": "3 inf 1 tank 1 aa",
        "attacker_tech": "jets"})
    page.goto(f"{base}/?{query}")
    settle(page)
    result = battlecalc.simulate(rules="1942-2e", attacker="1 tank 1 ftr",
                                 landing="3 inf 1 art", bombard="1 bb 1 ca",
                                 defender="3 inf 1 tank 1 aa", attacker_tech="jets")
    assert_page_shows(page, result)
    assert stepper(page, "landing", "infantry").input_value() == "3"
    assert page.is_checked("#opt-attacker_tech-jets")

    page.goto(f"{base}/?rules=formula&attacker=3+army&defender=2+army&exchanges=until-done")
    settle(page)
    formula = battlecalc.simulate(rules="formula", attacker="3 army", defender="2 army",
                                  exchanges="until-done", seed=1)
    for key in ("attacker_win", "defender_win", "draw", "stalemate"):
        assert shown_outcomes(page)[key][0] == getattr(formula, key)
    assert shown_numbers(page)["attacker_loss_points"][0] == formula.attacker_loss_points
    page.fill("#opt-attacker_level", "6")
    settle(page)
    stronger = battlecalc.simulate(rules="formula", attacker="3 army", defender="2 army",
                                   exchanges="until-done", attacker_level=6, seed=1)
    assert stronger.attacker_win > formula.attacker_win
    assert shown_outcomes(page)["attacker_win"][0] == stronger.attacker_win


def test_bad_input_shows_the_libraries_message(base, page):
    page.goto(base + "/?rules=revised&attacker=2+infanty&defender=1+inf")
    settle(page, "error")
    with pytest.raises(battlecalc.BattleInputError) as error:
        battlecalc.simulate(rules="revised", attacker="2 infanty", defender="1 inf")
    assert page.text_content("#error") == " ".join(str(error.value).split())
