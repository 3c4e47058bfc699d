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
