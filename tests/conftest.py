"""The suite's shared machinery: the import path of the test helpers, the fixtures every file
uses (the command line in-process, a battle planned under a solver variant, Monte Carlo held to
an exact answer, fresh caches, checks in a fresh interpreter), the opt-in CPU profile and the
slow tier.

Layout: tests/solver (the solver wing: its plans, variants, exact and Monte Carlo drivers,
batches, threads and final law), tests/kernels (the njit kernels), tests/references (the
independent references, importing nothing of the package, and their own tests), and
test_<module>.py for the rest; tests/battles.py is the battle catalogue, tests/helpers.py what
the fixtures are built on, tests/fresh_checks.py the checks a fresh interpreter runs."""

import gc
import os
import sys

import pytest

TESTS = os.path.dirname(os.path.abspath(__file__))
# numba's allocation counts, on before numba starts (tests/kernels/test_plain.py holds every
# solve to freeing what it allocates; counting costs nothing measurable)
os.environ.setdefault("NUMBA_NRT_STATS", "1")
# the helpers (helpers, battles, webserver, golden) and the references (reference,
# sea_reference, ...) are imported by their module names from every folder of the suite
for _folder in (os.path.join(TESTS, "references"), TESTS):
    if _folder not in sys.path:
        sys.path.insert(0, _folder)

import helpers  # noqa: E402


@pytest.fixture
def invoke():
    """`battlecalc ARGS` in-process: invoke("run", "-a", "1 inf", ...) -> click's Result."""
    return helpers.invoke


@pytest.fixture
def plan_of():
    """plan_of(battle, **variant) -> helpers.Planned: the battle checked and compiled as
    simulate does and planned by solver.choose under a variant (choose's keywords, Limits
    fields); .plan, .compiled, .result()."""
    return helpers.plan_of


@pytest.fixture
def assert_mc_agrees():
    """assert_mc_agrees(mc_result, exact, k=4): Monte Carlo within k standard errors of exact
    (helpers.assert_mc_agrees)."""
    return helpers.assert_mc_agrees


@pytest.fixture
def fresh_caches():
    """No kept battle and no side table before the test or after it (api.forget_compiled):
    the test checks and compiles as for battles never seen."""
    from battlecalc import api

    api.forget_compiled()
    yield
    api.forget_compiled()


@pytest.fixture(scope="session")
def _fresh_results(request):
    """Every fresh-interpreter check the session's tests ask for (marker `fresh`), run once:
    one interpreter for the checks of compiled kernels and one under
    BATTLECALC_PLAIN_KERNELS=1 (tests/fresh_checks.py), their answers by check name."""
    import fresh_checks

    wanted = {mark.args[0] for item in request.session.items
              for mark in item.iter_markers("fresh")}
    return fresh_checks.run(wanted)


@pytest.fixture
def fresh(request, _fresh_results):
    """The answer of the fresh-interpreter check the test names (@pytest.mark.fresh(NAME)),
    as JSON data; the checks run together, once a session (tests/fresh_checks.py)."""
    mark = request.node.get_closest_marker("fresh")
    assert mark is not None, "name the check: @pytest.mark.fresh(NAME)"
    answer = _fresh_results[mark.args[0]]
    if isinstance(answer, dict) and "error" in answer and len(answer) == 1:
        pytest.fail(f"fresh check {mark.args[0]} failed:\n{answer['error']}", pytrace=False)
    return answer


# Opt-in CPU profile of the suite: BATTLECALC_TEST_PROFILE=path writes, per test file and for
# each test, the CPU time (user + sys of this process, of its finished children and
# of its running descendants, with psutil) spent in setup, call and teardown, and the cost of
# collection, to `path` at the end of the session.  A browser's processes are counted while
# they run; what they spent is lost when they end unwaited (the last browser test shows it
# negative).
_PROFILE = os.environ.get("BATTLECALC_TEST_PROFILE")
if _PROFILE:
    import resource
    import time
    from collections import defaultdict

    import pytest

    def _live_children() -> float:
        # descendants still running (a browser, a server): their CPU so far
        try:
            import psutil
        except ImportError:
            return 0.0
        total = 0.0
        for child in psutil.Process().children(recursive=True):
            try:
                t = child.cpu_times()
                total += t.user + t.system + t.children_user + t.children_system
            except psutil.Error:
                pass
        return total

    def _cpu():
        own = time.process_time()
        ch = resource.getrusage(resource.RUSAGE_CHILDREN)
        return own + ch.ru_utime + ch.ru_stime + _live_children()

    _costs = defaultdict(float)
    _tests = defaultdict(float)
    _start = {"session": _cpu()}

    def pytest_collection_finish(session):
        _start["collected"] = _cpu()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item, nextitem):
        t0 = _cpu()
        yield
        spent = _cpu() - t0
        _costs[item.location[0]] += spent
        _tests[item.nodeid] += spent

    def pytest_sessionfinish(session, exitstatus):
        end = _cpu()
        with open(_PROFILE, "w") as out:
            out.write(f"collection {_start.get('collected', end) - _start['session']:.2f}\n")
            out.write(f"total {end - _start['session']:.2f}\n")
            out.write(f"this process {time.process_time():.2f}\n")
            for path, spent in sorted(_costs.items(), key=lambda kv: -kv[1]):
                out.write(f"file {spent:8.2f} {path}\n")
            top = sorted(_tests.items(), key=lambda kv: -kv[1])
            for nodeid, spent in top:
                out.write(f"test {spent:8.3f} {nodeid}\n")


# The slow tier: tests marked `slow` (the browser, tests that start processes or servers, Dask
# clusters, fuzzers and the long statistical runs) cost most of the suite's CPU.  A plain
# `pytest` leaves them out and says so in its header; `pytest --slow` or BATTLECALC_SLOW_TESTS=1
# (which .ci/run sets, so CI runs every test) takes them in, and so does naming a test file or
# test on the command line, or a `-m` expression that names the marker.
def pytest_configure(config):
    config.addinivalue_line(
        "markers", "fresh(name): the test reads the answer of the fresh-interpreter check "
                   "`name` (tests/fresh_checks.py) through the `fresh` fixture")


def pytest_addoption(parser):
    parser.addoption("--slow", action="store_true",
                     help="also run the slow tier (tests marked slow); "
                          "BATTLECALC_SLOW_TESTS=1 does the same")


def _slow_tier(config) -> bool:
    if config.getoption("--slow") or os.environ.get("BATTLECALC_SLOW_TESTS", "") not in ("", "0"):
        return True
    if "slow" in (config.getoption("markexpr") or ""):
        return True
    return any("::" in arg or arg.endswith(".py") for arg in config.args)


def pytest_report_header(config):
    if _slow_tier(config):
        return "slow tier: on"
    return ("slow tier: off (tests marked slow are deselected; "
            "--slow or BATTLECALC_SLOW_TESTS=1 runs them)")


def pytest_collection_modifyitems(config, items):
    if not _slow_tier(config):
        slow = [item for item in items if item.get_closest_marker("slow")]
        if slow:
            config.hook.pytest_deselected(items=slow)
            items[:] = [item for item in items if not item.get_closest_marker("slow")]
    # what collection built (modules, parameters, fixtures' data) lives to the end: moved out
    # of reach of the garbage collector's full passes, which then scan only what tests make
    gc.collect()
    gc.freeze()
