"""The suite's two tiers, by a rule (a pytest plugin, loaded by tests/conftest.py).

**quick** (plain `pytest`, what a contributor runs): in-process tests only, each well under
a second of CPU.  **slow** (`pytest --slow`, or BATTLECALC_SLOW_TESTS=1, which .ci/run sets; or
a test file or test named on the command line; or a `-m` expression naming `slow`): the rest.

The rule, applied at collection (`pytest_collection_modifyitems`): a test is slow when

* it, a fixture it uses (directly or through other fixtures), or a function of the tests'
  own that either of them calls (followed from helper to helper, never into the package)
  starts a process, a server or a browser: it uses `subprocess`, `multiprocessing`, a process
  pool, `os.fork`, a Dask cluster, Playwright, or a helper declared with `starts(...)` below
  (webserver.running_server, a server in a thread of the test process). So are the `fresh`
  checks (two fresh interpreters) and tests/limited.py's memory-limited children;
* it fuzzes (a Hypothesis test);
* or it is marked `slow` by hand, for what no rule can see: a test whose package call starts
  a process (a sweep on local workers), a long statistical run (200,000 trials or more),
  a battle too big for the quick tier.

Two guards keep the quick tier honest:

* a quick test that starts a process fails (`os.fork`, `posix_spawn` and the fork-exec of
  `subprocess` and `multiprocessing` are watched while it runs), naming what it started: the
  rule did not see it, so mark it slow;
* with BATTLECALC_FAIL_SLOW=SECONDS (.ci/run sets 1), a quick test whose call, or whose
  setup, takes more than SECONDS of CPU (user + system of the test process and its children)
  fails, as scipy's CI runs its quick tier with `--fail-slow`.

BATTLECALC_TEST_PROFILE=FILE writes the CPU time of each test file and each test (setup, call
and teardown) to FILE at the end of the session.
"""

from __future__ import annotations

import dis
import functools
import gc
import importlib.util
import inspect
import os
import resource
import sys
import time
import types
from collections import defaultdict

import pytest

THIS = os.path.abspath(__file__)
FAIL_SLOW_ENV = "BATTLECALC_FAIL_SLOW"
SLOW_ENV = "BATTLECALC_SLOW_TESTS"
PROFILE_ENV = "BATTLECALC_TEST_PROFILE"

# names whose use starts a process or a browser: modules (also when imported inside a
# function) and attributes (`os.fork`, `concurrent.futures.ProcessPoolExecutor`, ...)
PROCESS_NAMES = frozenset({
    "subprocess", "multiprocessing", "pty", "fork", "forkpty", "posix_spawn", "posix_spawnp",
    "spawnv", "spawnve", "ProcessPoolExecutor", "LocalCluster", "sync_playwright",
    "async_playwright",
})
_STARTS = "__tier_starts__"


def starts(what: str):
    """Declare that a helper or a fixture of the tests starts `what` (a server, a browser, a
    process): every test that uses it, directly or through a fixture or a helper, is slow."""
    def declare(function):
        setattr(function, _STARTS, what)
        return function
    return declare


def sampled(cases, every: int, ids=None) -> list:
    """A battery of cases (tuples of a test's arguments) as its parameters: every `every`-th case
    (the first, then every `every`-th after it, so that each edition of a battery built edition
    by edition keeps some) in the quick tier, the others in the slow tier: the same test on
    more cases, where CI runs it."""
    slow = pytest.mark.slow(reason=f"the rest of a battery whose every {every}th case is quick")
    return [pytest.param(*case, id=None if ids is None else ids[i],
                         marks=() if i % every == 0 else slow)
            for i, case in enumerate(cases)]


@functools.cache
def _code_names(code: types.CodeType) -> frozenset[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return frozenset(names)


_IMPORT_NAME, _EXTENDED_ARG = dis.opmap["IMPORT_NAME"], dis.EXTENDED_ARG


@functools.cache
def _imported(code: types.CodeType) -> frozenset[str]:
    """The modules a function imports inside itself (``import fresh_checks`` in a fixture),
    read from its bytecode's IMPORT_NAME instructions."""
    found, raw, extended = set(), code.co_code, 0
    for i in range(0, len(raw) if _IMPORT_NAME in raw[::2] else 0, 2):
        op, arg = raw[i], raw[i + 1] | extended
        extended = arg << 8 if op == _EXTENDED_ARG else 0
        if op == _IMPORT_NAME:
            found.add(code.co_names[arg])
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found |= _imported(const)
    return frozenset(found)


def _test_module(name: str, folders: tuple[str, ...]):
    """The tests' own module `name` (a helper such as fresh_checks or limited), imported if it
    is not yet; None for any other module."""
    module = sys.modules.get(name)
    if module is None:
        if "." in name:  # (finding a.b imports a: the tests' helpers are top-level modules)
            return None
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            return None
        if spec is None or not (spec.origin or "").startswith(folders):
            return None
        module = importlib.import_module(name)
    return module if _in_tests(module, folders) else None


def _in_tests(thing, folders: tuple[str, ...]) -> bool:
    """Whether a function or a module is the tests' own (in `folders`; this file aside)."""
    code = getattr(thing, "__code__", None)
    path = code.co_filename if code is not None else getattr(thing, "__file__", None) or ""
    return path.startswith(folders) and path != THIS


def what_it_starts(function, folders: tuple[str, ...], seen: set | None = None) -> str | None:
    """What `function` starts (a process, a server, a browser), as the rule sees it: its own
    declaration (`starts`), a process name it uses, or the same of a function of the tests
    (in `folders`) it uses; None when it starts nothing the rule can see."""
    seen = set() if seen is None else seen
    declared = getattr(function, _STARTS, None) if inspect.isfunction(function) else None
    function = inspect.unwrap(getattr(function, "__func__", function))
    if id(function) in seen or not inspect.isfunction(function):
        return None
    seen.add(id(function))
    declared = declared or getattr(function, _STARTS, None)
    if declared:
        return declared
    if not _in_tests(function, folders):
        return None
    names = _code_names(function.__code__)
    used = sorted(names & PROCESS_NAMES)
    if used:
        return f"{function.__qualname__} uses {used[0]}"
    closure = []
    for cell in function.__closure__ or ():
        try:
            closure.append(cell.cell_contents)
        except ValueError:  # an empty cell
            pass
    values = closure
    imported = _imported(function.__code__)
    for name in sorted(names):
        value = function.__globals__.get(name)
        if value is None and name in imported:  # imported inside the function
            value = _test_module(name, folders)
        if isinstance(value, types.ModuleType):  # a helper module of the tests: what it uses
            if _in_tests(value, folders):
                values += [getattr(value, attr, None) for attr in sorted(names)]
        else:
            values.append(value)
    for value in values:
        if inspect.isfunction(value) or inspect.ismethod(value):
            found = what_it_starts(value, folders, seen)
            if found:
                return found
    return None


_WHY = pytest.StashKey[dict]()


def why_slow(item) -> str | None:
    """Why the rule puts `item` in the slow tier (None: it does not).  Read once for each test
    function and set of fixtures, not once for each of its parameters (the quick tier's
    rule at collection: 0.71 s of CPU -> 0.16 s at ad58580)."""
    function = getattr(item, "obj", None)
    if function is None:
        return None
    if getattr(function, "is_hypothesis_test", False):
        return "fuzzes (Hypothesis)"
    info = getattr(item, "_fixtureinfo", None)
    fixtures = tuple((name, tuple(info.name2fixturedefs.get(name, ()) if info else ()))
                     for name in getattr(item, "fixturenames", ()))
    known, clean = item.config.stash.setdefault(_WHY, ({}, set()))
    key = (getattr(function, "__func__", function), fixtures)
    if key not in known:
        known[key] = _why_slow(function, fixtures, test_folders(item.config), clean)
    return known[key]


def _why_slow(function, fixtures, folders, clean: set) -> str | None:
    """`clean`: the functions (ids) a reading that found nothing went through, which start
    nothing, to be passed by (a reading that found something may have left a function
    unfinished, on the way back to one that finds it later)."""
    seen = set(clean)
    found = _starts(function, fixtures, folders, seen)
    if found is None:
        clean |= seen
    return found


def _starts(function, fixtures, folders, seen: set) -> str | None:
    found = what_it_starts(function, folders, seen)
    if found:
        return found
    for name, definitions in fixtures:
        for definition in definitions:
            found = what_it_starts(definition.func, folders, seen)
            if found:
                return f"fixture {name}: {found}"
    return None


_FOLDERS = pytest.StashKey[tuple]()


def test_folders(config) -> tuple[str, ...]:
    """The folders of the tests' own code (testpaths, else the root folder), each with a
    trailing separator: the rule follows helpers there, never into the package or libraries."""
    if _FOLDERS not in config.stash:
        paths = config.getini("testpaths") or ["."]
        config.stash[_FOLDERS] = tuple(os.path.join(str((config.rootpath / p).resolve()), "")
                                       for p in paths)
    return config.stash[_FOLDERS]


# ---------------------------------------------------------------------------------------------
# the tiers


def pytest_addoption(parser):
    parser.addoption("--slow", action="store_true",
                     help="also run the slow tier (tests that start processes, servers or "
                          "browsers, fuzz, or are marked slow); BATTLECALC_SLOW_TESTS=1 does "
                          "the same")


def slow_tier(config) -> bool:
    if config.getoption("--slow") or os.environ.get(SLOW_ENV, "") not in ("", "0"):
        return True
    if "slow" in (config.getoption("markexpr") or ""):
        return True
    return any("::" in arg or arg.endswith(".py") for arg in config.args)


@pytest.fixture
def full_size(request) -> bool:
    """Whether a test costly only by its size runs at its full size: True in the slow tier
    (`pytest --slow`, a file or a test named), False in the quick tier, which runs it smaller
    with the same assertions (a random battery of fewer battles)."""
    return slow_tier(request.config)


def pytest_report_header(config):
    limit = fail_slow(config)
    guard = f"; a quick test over {limit:g} s of CPU fails" if limit else ""
    if slow_tier(config):
        return "slow tier: on" + guard
    return ("slow tier: off (tests that start processes, servers or browsers, fuzz or are marked "
            "slow are deselected; --slow or BATTLECALC_SLOW_TESTS=1 runs them)" + guard)


@pytest.hookimpl(tryfirst=True)  # (before `-m` reads the marks)
def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.get_closest_marker("slow") is None:
            reason = why_slow(item)
            if reason:
                item.add_marker(pytest.mark.slow(reason=reason))
    if not slow_tier(config):
        slow = [item for item in items if item.get_closest_marker("slow")]
        if slow:
            config.hook.pytest_deselected(items=slow)
            items[:] = [item for item in items if not item.get_closest_marker("slow")]


# The garbage collector: what collection built (modules, parameters, fixtures' data) and what
# each test module left (the engine's caches, compiled kernels) lives on, and a full pass
# would scan it all again.  So it is moved out of the collector's reach (gc.freeze) after
# collection and after each module, once the module's garbage is collected; and the young
# generation is collected every 100,000 new objects instead of 700, from the start (collection
# too: its 5,000 items made about 1,800 young collections at 700).  The quick tier's garbage
# collection: 4.6 s of CPU -> 2.0 s (at f3b6d2d, on the EPYC); 3.9-4.1 s at ad58580 (20,000
# after collection) -> 1.8 s (100,000 from the start; timed by gc.callbacks).
GC_YOUNG = 100_000


def young_threshold() -> None:
    young, *older = gc.get_threshold()
    gc.set_threshold(max(young, GC_YOUNG), *older)


def pytest_collection_finish(session):
    gc.collect()
    gc.freeze()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    yield from _timed(item, "teardown")
    if nextitem is None or getattr(nextitem, "module", None) is not getattr(item, "module", None):
        gc.collect()
        gc.freeze()


# ---------------------------------------------------------------------------------------------
# the guards: no process, and (on demand) no more than a second of CPU, in a quick test


_FAIL_SLOW = pytest.StashKey[float]()


def fail_slow(config) -> float:
    """The CPU budget of a quick test's setup and call, in seconds (0: none), read from
    BATTLECALC_FAIL_SLOW once a session."""
    if _FAIL_SLOW not in config.stash:
        value = os.environ.get(FAIL_SLOW_ENV, "")
        try:
            config.stash[_FAIL_SLOW] = float(value) if value else 0.0
        except ValueError:
            raise pytest.UsageError(f"{FAIL_SLOW_ENV}={value!r}: give seconds of CPU") from None
    return config.stash[_FAIL_SLOW]


def cpu_seconds() -> float:
    """CPU of this process (every thread) and of its waited-for children, user + system."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


class _ProcessWatch:
    """While on, records every process started by os.fork, os.posix_spawn[p] or the
    fork-exec behind subprocess and multiprocessing (the call still goes ahead)."""

    def __init__(self):
        import _posixsubprocess

        self.started: list[str] = []
        self.targets = [(os, name) for name in ("fork", "forkpty", "posix_spawn", "posix_spawnp")
                        if hasattr(os, name)] + [(_posixsubprocess, "fork_exec")]
        self.originals = [getattr(owner, name) for owner, name in self.targets]

    def __enter__(self):
        for (owner, name), original in zip(self.targets, self.originals, strict=True):
            setattr(owner, name, self._watched(name, original))
        return self

    def __exit__(self, *exc):
        for (owner, name), original in zip(self.targets, self.originals, strict=True):
            setattr(owner, name, original)

    def _watched(self, name, original):
        def watched(*args, **kwargs):
            shown = args[0] if name != "fork" and args else ""
            if isinstance(shown, list | tuple):
                shown = " ".join(os.fsdecode(a) for a in shown)[:120]
            self.started.append(f"{name}({shown})" if shown else f"{name}()")
            return original(*args, **kwargs)
        return watched


def _quick(item) -> bool:
    return item.get_closest_marker("slow") is None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if not _quick(item):
        yield
        return
    with _ProcessWatch() as watch:
        item.stash[_STARTED] = watch.started
        yield


_STARTED = pytest.StashKey[list]()
_CPU = pytest.StashKey[dict]()


def _timed(item, phase: str):
    start = cpu_seconds()
    outcome = yield
    item.stash.setdefault(_CPU, {})[phase] = cpu_seconds() - start
    return outcome


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    yield from _timed(item, "setup")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    yield from _timed(item, "call")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not _quick(item) or report.failed or report.skipped:
        return
    problems = []
    started = item.stash.get(_STARTED, [])
    if started:
        problems.append(
            f"a quick test started {len(started)} process(es): {', '.join(started[:3])}. "
            "The quick tier runs in process (tests/tiers.py): mark the test "
            "@pytest.mark.slow, or start the process through a helper declared with "
            "tiers.starts(...)")
        started.clear()
    limit = fail_slow(item.config)
    spent = item.stash.get(_CPU, {}).get(call.when, 0.0)
    if limit and call.when in ("setup", "call") and spent > limit:
        problems.append(
            f"the {call.when} of a quick test took {spent:.2f} s of CPU, more than "
            f"{FAIL_SLOW_ENV}={limit:g}: make it cheaper (share its setup, a smaller case "
            "with the same meaning) or mark it @pytest.mark.slow")
    if problems:
        report.outcome = "failed"
        report.longrepr = "\n".join(problems)


# ---------------------------------------------------------------------------------------------
# the opt-in CPU profile: BATTLECALC_TEST_PROFILE=FILE


def _live_children() -> float:
    """CPU so far of the descendants still running (a browser, a server): found through
    /proc/self/task/*/children, which costs nothing when there are none."""
    pids, total = _children(os.getpid()), 0.0
    ticks = os.sysconf("SC_CLK_TCK")
    while pids:
        pid = pids.pop()
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # utime, stime, cutime, cstime: fields 14-17 of stat (11-14 after the name)
        total += sum(int(f) for f in fields[11:15]) / ticks
        pids += _children(pid)
    return total


def _children(pid: int) -> list[int]:
    found = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as children:
                found += [int(p) for p in children.read().split()]
        except OSError:
            pass
    return found


class Profile:
    def __init__(self, path: str):
        self.path = path
        self.files: dict[str, float] = defaultdict(float)
        self.tests: dict[str, float] = defaultdict(float)
        self.start = self.cpu()
        self.collected = None

    @staticmethod
    def cpu() -> float:
        return cpu_seconds() + _live_children()

    def pytest_collection_finish(self, session):
        self.collected = self.cpu()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        start = self.cpu()
        yield
        spent = self.cpu() - start
        self.files[item.location[0]] += spent
        self.tests[item.nodeid] += spent

    def pytest_sessionfinish(self, session, exitstatus):
        end = self.cpu()
        collected = self.collected if self.collected is not None else end
        with open(self.path, "w") as out:
            out.write(f"collection {collected - self.start:.2f}\n")
            out.write(f"total {end - self.start:.2f}\n")
            out.write(f"this process {time.process_time():.2f}\n")
            for path, spent in sorted(self.files.items(), key=lambda kv: -kv[1]):
                out.write(f"file {spent:8.2f} {path}\n")
            for nodeid, spent in sorted(self.tests.items(), key=lambda kv: -kv[1]):
                out.write(f"test {spent:8.3f} {nodeid}\n")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "fresh(name): the test reads the answer of the fresh-interpreter check "
                   "`name` (tests/fresh_checks.py) through the `fresh` fixture")
    fail_slow(config)  # a bad value is a usage error at once
    young_threshold()
    path = os.environ.get(PROFILE_ENV)
    if path and not config.pluginmanager.has_plugin("battlecalc-profile"):
        config.pluginmanager.register(Profile(path), "battlecalc-profile")


if sys.platform != "linux":  # pragma: no cover - the profile reads /proc
    def _live_children() -> float:  # noqa: F811
        return 0.0
