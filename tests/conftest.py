import os
import sys

# tests/reference.py is imported as `reference` by the tests
sys.path.insert(0, os.path.dirname(__file__))


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
    if _slow_tier(config):
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow")]
