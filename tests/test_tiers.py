"""The tiers' rule and guards (tests/tiers.py), each run on a small suite of its own in
process (pytester): what the rule puts in the slow tier, the quick test that starts a process
failing, and the quick test over its CPU budget failing only when BATTLECALC_FAIL_SLOW asks."""

import sys

import pytest
import tiers

# a small suite: a fixture that starts a server (declared), a helper that uses subprocess, a
# Hypothesis test (as @given marks it: importing Hypothesis itself costs a third of a second), a
# test marked by hand, and two quick tests
SUITE = '''
import subprocess

import pytest
from tiers import starts


@starts("a server")
def serve():
    return "http://127.0.0.1:1"


@pytest.fixture
def base():
    return serve()


@pytest.fixture
def through_base(base):
    return base


def _child():
    return subprocess.run


def test_uses_the_server(through_base):
    pass


def test_calls_a_helper_that_starts_a_child():
    _child()


def test_fuzzes():
    pass


test_fuzzes.is_hypothesis_test = True  # (what hypothesis.given sets)


@pytest.mark.slow
def test_marked_by_hand():
    pass


def test_quick():
    pass


def test_also_quick(tmp_path):
    pass
'''

# a quick test the rule cannot see starting a process: the fork-exec behind subprocess is
# called without arguments (it raises before any process starts, after the guard saw the call)
HIDDEN_START = '''
import pytest


def test_starts_a_process_the_rule_cannot_see():
    module = __import__("_posix" + "subprocess")
    with pytest.raises(TypeError):
        getattr(module, "fork_" + "exec")()
'''

BURNS = '''
import time

import pytest


def burn(seconds):
    start = time.process_time()
    while time.process_time() - start < seconds:
        pass


@pytest.fixture
def costly_setup():
    burn(0.03)


def test_costly():
    burn(0.03)


def test_costly_setup(costly_setup):
    pass


@pytest.mark.slow
def test_costly_but_slow():
    burn(0.03)


def test_cheap():
    pass
'''


@pytest.fixture
def suite(pytester, monkeypatch):
    """pytester, with the environment of a plain `pytest` (the tiers' variables unset), no
    plugin loaded but tiers."""
    for name in (tiers.SLOW_ENV, tiers.FAIL_SLOW_ENV, tiers.PROFILE_ENV):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # (tiers only: -p tiers)
    pytester.syspathinsert(pytester.path)
    return pytester


def _outcomes(result) -> dict[str, str]:
    reports = result.getreports("pytest_runtest_logreport")
    outcomes = {}
    for report in reports:
        name = report.nodeid.split("::")[-1]
        if report.failed or name not in outcomes:
            outcomes[name] = report.outcome
    return outcomes


def test_the_rule_puts_what_starts_a_server_a_child_or_fuzzes_in_the_slow_tier(suite):
    suite.makepyfile(test_suite=SUITE)
    quick = suite.inline_run("-p", "tiers", "-p", "no:cacheprovider")
    assert _outcomes(quick) == {"test_quick": "passed", "test_also_quick": "passed"}
    deselected = {item.name for call in quick.getcalls("pytest_deselected")
                  for item in call.items}
    assert deselected == {"test_uses_the_server", "test_calls_a_helper_that_starts_a_child",
                          "test_fuzzes", "test_marked_by_hand"}
    both = suite.inline_run("-p", "tiers", "-p", "no:cacheprovider", "--slow")
    both.assertoutcome(passed=6)


def test_a_helper_module_imported_inside_a_fixture_is_followed(suite):
    """A fixture that imports a helper of the tests inside itself (as conftest's `fresh` imports
    fresh_checks), the helper not yet imported by anything: the rule imports and reads it."""
    suite.makepyfile(tiers_probe_helper="import subprocess\n\n\ndef run():\n"
                                        "    return subprocess.run\n")
    suite.makeconftest("import pytest\n\n\n@pytest.fixture\ndef probe():\n"
                       "    import tiers_probe_helper\n\n    return tiers_probe_helper.run()\n")
    suite.makepyfile(test_probe="def test_uses_the_probe(probe):\n    pass\n\n\n"
                                "def test_quick():\n    pass\n")
    assert "tiers_probe_helper" not in sys.modules
    items, _ = suite.inline_genitems("-p", "tiers", "-p", "no:cacheprovider", "--slow")
    reasons = {item.name: tiers.why_slow(item) for item in items}
    assert reasons == {"test_uses_the_probe": "fixture probe: run uses subprocess",
                       "test_quick": None}
    sys.modules.pop("tiers_probe_helper", None)


def test_why_slow_names_the_fixture_or_the_helper(suite):
    suite.makepyfile(test_suite=SUITE)
    items, _ = suite.inline_genitems("-p", "tiers", "-p", "no:cacheprovider", "--slow")
    reasons = {item.name: tiers.why_slow(item) for item in items}
    assert reasons["test_uses_the_server"] == "fixture base: a server"  # (through_base's)
    assert reasons["test_calls_a_helper_that_starts_a_child"] == "_child uses subprocess"
    assert reasons["test_fuzzes"] == "fuzzes (Hypothesis)"
    assert reasons["test_quick"] is None and reasons["test_also_quick"] is None


def test_a_quick_test_that_starts_a_process_fails(suite, request):
    suite.makepyfile(test_hidden=HIDDEN_START)
    result = suite.inline_run("-p", "tiers", "-p", "no:cacheprovider")
    # (this test's own guard saw the same call, which started nothing)
    request.node.stash[tiers._STARTED].clear()
    (failed,) = result.getfailures()
    assert "a quick test started 1 process(es): fork_exec()" in str(failed.longrepr)
    assert "@pytest.mark.slow" in str(failed.longrepr)


def test_the_same_test_in_the_slow_tier_passes(suite, request):
    suite.makepyfile(test_hidden="import pytest\npytestmark = pytest.mark.slow\n" + HIDDEN_START)
    result = suite.inline_run("-p", "tiers", "-p", "no:cacheprovider", "--slow")
    request.node.stash[tiers._STARTED].clear()
    result.assertoutcome(passed=1)


def test_a_quick_test_over_its_cpu_budget_fails_when_asked(suite, monkeypatch):
    suite.makepyfile(test_burns=BURNS)
    plain = suite.inline_run("-p", "tiers", "-p", "no:cacheprovider")
    assert _outcomes(plain) == {"test_costly": "passed", "test_costly_setup": "passed",
                                "test_cheap": "passed"}
    monkeypatch.setenv(tiers.FAIL_SLOW_ENV, "0.01")
    guarded = suite.inline_run("-p", "tiers", "-p", "no:cacheprovider", "--slow")
    assert _outcomes(guarded) == {"test_costly": "failed", "test_costly_setup": "failed",
                                  "test_costly_but_slow": "passed", "test_cheap": "passed"}
    messages = {r.nodeid.split("::")[-1]: str(r.longrepr)
                for r in guarded.getreports("pytest_runtest_logreport") if r.failed}
    assert "the call of a quick test took 0.0" in messages["test_costly"]
    assert "the setup of a quick test took 0.0" in messages["test_costly_setup"]
    assert f"{tiers.FAIL_SLOW_ENV}=0.01" in messages["test_costly"]


def test_a_bad_budget_is_a_usage_error(suite, monkeypatch):
    suite.makepyfile(test_burns=BURNS)
    monkeypatch.setenv(tiers.FAIL_SLOW_ENV, "one second")
    result = suite.runpytest_inprocess("-p", "tiers", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*BATTLECALC_FAIL_SLOW='one second': give seconds of CPU*"])
