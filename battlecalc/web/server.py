"""`battlecalc serve`: one page, its two assets and a JSON API, on Starlette and uvicorn.

Routes (nothing else is served, and no path ever reaches the file system):

    GET  /                   the page (static/index.html)
    GET  /static/app.js      its script;  GET /static/app.css  its style sheet
    GET  /api/spec           editions (units, costs, techs, rule flags), battle kinds, options
    GET  /api/run?...        one battle: the arguments of battlecalc.simulate, armies as
    POST /api/run            notation (waves and a counter-attack too); returns the CLI's
                             `--format json` object (`distributions=1` adds the charts' laws
                             under "distributions")
    GET|POST /api/raid       a bombing raid: the arguments of battlecalc.raid; `raid`'s JSON
    GET|POST /api/plan       the planner: the arguments of battlecalc.plan; `plan`'s JSON
    POST /api/game           a TripleA save as the body (at most MAX_SAVE_UPLOAD): its board
                             (game_battles, solved by live.solve_board): each battle with the
                             page query that loads it as it stands, and its odds; territories,
                             the luck so far, the turn's summary
    GET  /api/board          serve --watch DIR: the live board's state (battlecalc.web.live)
    GET|POST /api/turn/reach a player's legal attacks in the watched (GET) or uploaded (POST)
                             save (battlecalc.web.turn)
    GET|POST /api/turn/plan  the plan of the turn in the watched (GET) or uploaded (POST) save,
                             its progress streamed with Accept: application/x-ndjson
                             (battlecalc.web.turn)
    GET  /api/watch          the same, as server-sent events at each change (404 without
                             --watch)

Every path under /api/ but /api/spec answers only requests with the header
``X-Battlecalc-Client`` (any value; ``X-Battlecalc-Page`` counts too), which the page sends and
a page of another origin cannot (PageOnly): 403 otherwise, before any body is read.
Bad input answers 400 with ``{"error": message}``, the message of the CLI's ``Error:`` line;
what the CLI would warn of (an input accepted but ignored, a raid's note, trials and seed with
method exact, no edition named) comes with the answer as ``"warnings": [line, ...]``.
Work per request is bounded: Monte Carlo trials are capped and stopped at a time limit,
``method=exact`` is solved only where ``auto`` would solve exactly, and battles run on a
small thread pool (pending requests beyond a bound get 503).  Work follows the user: a
request whose client has gone (the connection closed), or that a newer request of the same
page replaces (headers ``X-Battlecalc-Page: <id>`` and ``X-Battlecalc-Request: <number>``), is
stopped at its next progress report (a Monte Carlo chunk, a planner candidate).  An uploaded
save is read by a child process beside the pool, under a time and memory limit, killed when
its client goes (battlecalc.web.saves); a few at once, more wait, beyond a bound 503.  With
``Accept: application/x-ndjson`` an answer streams its progress, then the answer (_stream);
a battle's first line says what will run (``"method"``) and whether kernels compile first
(``"compiling"``), and the time limit counts from the first work done where they compile.
``serve --workers N`` runs N processes on the one socket; each keeps a cache of exact answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import functools
import json
import os
import socket
import subprocess
import sys
import threading
import time
import traceback
from collections import Counter, OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from typing import Any
from urllib.parse import parse_qsl

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route

from .. import api, solver
from ..errors import BattleInputError, collected_warnings, quoted
from ..options import NO_EDITION_WARNING, ignored_options
from ..plot import distributions
from ..results import OUTCOME_KEYS, proportion_statistics
from ..rules import list_editions, load_rules
from ..waves import simulate_with  # (and the sequences solver api.simulate uses)
from .live import solve_board
from .saves import (  # noqa: F401  (game_battles, MAX_SAVE_INFLATED: the server's, as before)
    MAX_SAVE_INFLATED,
    MAX_SAVE_UPLOAD,
    ChildGone,
    game_battles,
    read_in_child,
)
from .spec import ParamError, page_spec, parse_params, plan_parameters, raid_parameters
from .warm import WARM_UP  # (the warm-up battles: the server's, as before)
from .warm import solve as _warm_solve
from .work import Busy as _Busy
from .work import Cancelled

MAX_BODY_BYTES = 64 * 1024
MAX_TRIALS = 10_000_000
MAX_FORMULA_TRIALS = 1_000_000  # formula trials are slower: a lower cap besides the time limit
TIME_LIMIT_S = 20.0
WORKERS = 4
MAX_PENDING = 1024  # queued requests (cheap: parsed parameters); beyond: 503
CACHE_SIZE = 512  # exact answers kept per process (a repeated exact battle is not solved again)
MAX_CACHED_BYTES = 256 * 1024  # larger answers (big laws, long plans) are not kept
MAX_PAGES = 4096  # pages whose latest request is remembered (to cancel the one it replaces)
GAME_TIME_LIMIT_S = 20.0  # reading one uploaded save (a real one: under a second)
GAME_WORKERS = 2  # uploads read at once, each in a process of its own (saves.read_in_child)
MAX_GAME_PENDING = 8  # uploads received and waiting for a reader besides those read; beyond: 503
# upload bodies arriving at once (each held as it comes, at most MAX_SAVE_UPLOAD); beyond: 503,
# unread.  As many as may be read and wait, so that uploads sent together are all taken; each
# must arrive within GAME_BODY_S and never stall GAME_BODY_IDLE_S (else 408): 8 stalled bodies
# kept every upload out with 503 for as long as they stayed open
MAX_GAME_RECEIVING = GAME_WORKERS + MAX_GAME_PENDING
GAME_BODY_S = 20.0  # a real save arrives in milliseconds (a few hundred kB, local)
GAME_BODY_IDLE_S = 5.0
GAME_MEMORY = 1024 * 1024 * 1024  # the address space of the process reading one upload
# The API's costly endpoints answer requests that carry one of these headers: the page sends
# X-Battlecalc-Client (and X-Battlecalc-Page with its runs).  A page of another origin cannot
# send a custom header without a CORS preflight, which this server never allows: it sends no
# Access-Control-* header (PageOnly)
CLIENT_HEADERS = (b"x-battlecalc-client", b"x-battlecalc-page")
FREE_PATHS = ("/api/spec",)  # under /api/: answered to anyone (the editions, from memory)
NOT_FROM_THE_PAGE = (
    "this API answers battlecalc's page and clients that send the header X-Battlecalc-Client "
    "(any value, e.g. curl -H 'X-Battlecalc-Client: 1'); a page of another site cannot send it")
LOOPBACK = ("127.0.0.1", "localhost", "::1")
NOT_WATCHING = "this server watches no folder: start it with battlecalc serve --watch DIR"
GRACEFUL_S = 3.0  # at Ctrl-C, requests and open board streams get this long to end
ASSETS = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/static/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/static/app.css": ("app.css", "text/css; charset=utf-8"),
}
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
}

COMPILING = "compiling kernels (first run only)"  # battlecalc.kernels.jit.COMPILING
# a Monte Carlo request whose kernel the child compiling the kernels has not reached waits
# for it at most this long (Engine._await_child), looking every CHILD_POLL_S
CHILD_WAIT_S = 30.0
CHILD_POLL_S = 0.1


class TooMuchWork(BattleInputError):
    """A request over the server's limits (HTTP 400, with a hint)."""


class _Stop(Exception):
    """Raised from a progress callback to stop a run."""


class Latest:
    """The latest request of each page (by the page's id): a newer one cancels the older."""

    def __init__(self, size: int = MAX_PAGES):
        self.size = size
        self.pages: OrderedDict[str, tuple[int, threading.Event]] = OrderedDict()
        self.lock = threading.Lock()

    def begin(self, page: str | None, number: int | None, cancel: threading.Event) -> None:
        if page is None or number is None:
            return
        with self.lock:
            previous = self.pages.get(page)
            if previous is not None and previous[0] > number:  # an older one, come late
                cancel.set()
                return
            if previous is not None and previous[1] is not cancel:
                previous[1].set()
            self.pages[page] = (number, cancel)
            self.pages.move_to_end(page)
            while len(self.pages) > self.size:
                self.pages.popitem(last=False)

    def end(self, page: str | None, cancel: threading.Event) -> None:
        with self.lock:
            if page in self.pages and self.pages[page][1] is cancel:
                del self.pages[page]


def running_estimate(outcomes, done: int) -> dict[str, Any]:
    """The outcomes' proportions so far out of `done` trials, each with its 95% Wilson
    interval, as the final result computes them: {"estimate": {key: p}, "ci95": {key: [lo,
    hi]}} (keys: attacker_win, defender_win, draw, stalemate, retreat)."""
    values = {key: float(outcomes[i]) / done for i, key in enumerate(OUTCOME_KEYS)}
    _, ci95 = proportion_statistics(values, done)
    return {"estimate": values, "ci95": {key: list(ci95[key]) for key in values}}


def _one_line(exc: BaseException) -> str:
    """The message as the CLI's `Error:` line shows it (whitespace folded)."""
    return " ".join(str(exc).split())


class Engine:
    """Runs battles on a bounded thread pool, within the server's limits."""

    def __init__(self, workers: int = WORKERS, max_trials: int = MAX_TRIALS,
                 max_formula_trials: int = MAX_FORMULA_TRIALS,
                 time_limit: float = TIME_LIMIT_S, max_pending: int = MAX_PENDING,
                 warm_up_battles: list[dict[str, Any]] | None = None,
                 warm_up_hook: Callable[[dict[str, Any]], None] | None = None,
                 cache_size: int = CACHE_SIZE, game_time_limit: float = GAME_TIME_LIMIT_S,
                 game_workers: int = GAME_WORKERS, max_game_pending: int = MAX_GAME_PENDING,
                 game_memory: int = GAME_MEMORY, max_game_receiving: int = MAX_GAME_RECEIVING,
                 game_body_s: float = GAME_BODY_S, game_body_idle_s: float = GAME_BODY_IDLE_S):
        self.pool = ThreadPoolExecutor(workers, thread_name_prefix="battlecalc")
        self.workers = workers
        # method=exact: each battle's plan refuses where auto would take Monte Carlo
        self.exact_solve = functools.partial(
            api.solve, limits=dataclasses.replace(solver.LIMITS, exact_only_where_auto=True))
        self.max_trials = max_trials
        self.max_formula_trials = max_formula_trials
        self.time_limit = time_limit
        self.max_pending = max_pending
        self.pending = 0
        self.warm_up_s: float | None = None
        self.warm_up_problems: list[str] = []
        self.warm_up_battles = WARM_UP if warm_up_battles is None else warm_up_battles
        self.warm_up_hook = warm_up_hook  # called before each warm-up battle (tests)
        self.warm = threading.Event()  # set when the warm-up has finished
        self.builder: subprocess.Popen | None = None  # the child filling numba's cache
        # requests running: the warm-up lets them go first (it waits until none runs before
        # each of its battles); a request compiles what it needs itself where the warm-up
        # has not reached it yet (numba compiles one function at a time)
        self._requests = 0
        self._requests_done = threading.Condition()
        # exact answers by request (deterministic: no seed, no trials); LRU
        self.cache: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self.cache_size = cache_size
        self.cache_lock = threading.Lock()
        self.cache_hits = 0
        # uploaded saves: read by child processes beside the pool (saves.read_in_child)
        self.game_time_limit = game_time_limit
        self.game_workers = game_workers
        self.max_game_pending = max_game_pending
        self.game_memory = game_memory
        self.game_pending = 0  # uploads received: read, or waiting for a reader
        self.max_game_receiving = max_game_receiving
        self.game_body_s, self.game_body_idle_s = game_body_s, game_body_idle_s
        self.game_receiving = 0  # upload bodies arriving
        # what came in (the event loop counts): requests refused for want of the page's header
        # (PageOnly), and requests let through to work, by endpoint (run, raid, plan, game)
        self.refused = 0
        self.started: Counter[str] = Counter()
        # the server stopping (Ctrl-C, SIGTERM): every request's work stops at its next
        # progress report or wait, so that the graceful shutdown ends within its time
        self.stopping = threading.Event()
        self._running: set[threading.Event] = set()
        self._running_lock = threading.RLock()  # (stop_all may run in a signal handler)
        self._stop_future: asyncio.Future | None = None  # (_stopped)

    def saves_full(self) -> bool:
        """Whether an upload received now would be refused (503): game_workers being read and
        max_game_pending waiting already (/api/game and /api/turn/* alike)."""
        return self.game_pending >= self.game_workers + self.max_game_pending

    def limits(self) -> dict[str, Any]:
        return {"max_trials": self.max_trials, "max_formula_trials": self.max_formula_trials,
                "time_limit_s": self.time_limit, "max_body_bytes": MAX_BODY_BYTES,
                "max_save_bytes": MAX_SAVE_UPLOAD, "game_time_limit_s": self.game_time_limit,
                "game_readers": self.game_workers, "max_game_waiting": self.max_game_pending,
                "max_game_receiving": self.max_game_receiving,
                "game_body_s": self.game_body_s, "game_body_idle_s": self.game_body_idle_s}

    def check(self, kwargs: dict[str, Any]) -> None:
        """Refuse, before any work, what is over the limits."""
        check_edition(kwargs.get("rules", "revised"))
        trials = kwargs.get("trials", api.DEFAULT_TRIALS)
        formula = load_rules(kwargs.get("rules", "revised")).model == "formula"
        cap = self.max_formula_trials if formula else self.max_trials
        if isinstance(trials, int) and trials > cap:
            raise TooMuchWork(
                f"trials: at most {cap:,} per request on this server, got {trials:,}; "
                "use the command line (battlecalc run) for more"
            )

    def compute(self, kwargs: dict[str, Any], with_laws: bool, what: str = "run",
                cancel: threading.Event | None = None,
                report: Callable[..., None] | None = None) -> dict[str, Any]:
        """One battle, raid or plan (in a worker thread): the JSON object, plus its laws if
        asked.  Cancelled when `cancel` is set (before it starts, or at its next progress
        report)."""
        cancel = cancel or threading.Event()
        if cancel.is_set() or self.stopping.is_set():
            raise Cancelled()
        with self._running_lock:
            self._running.add(cancel)
        try:
            return self._compute(kwargs, with_laws, what, cancel, report)
        finally:
            with self._running_lock:
                self._running.discard(cancel)

    def stop_all(self) -> None:
        """The server stops: every request running stops at its next progress report or wait
        (thread-safe: from a signal handler)."""
        self.stopping.set()
        with self._running_lock:
            running = list(self._running)
            future = self._stop_future
        for cancel in running:
            cancel.set()
        if future is not None and not future.get_loop().is_closed():
            future.get_loop().call_soon_threadsafe(
                lambda: future.done() or future.set_result(None))

    def _compute(self, kwargs: dict[str, Any], with_laws: bool, what: str,
                 cancel: threading.Event,
                 report: Callable[..., None] | None) -> dict[str, Any]:
        key = json.dumps([what, with_laws, kwargs], sort_keys=True, default=repr)
        with self.cache_lock:
            if key in self.cache:
                self.cache.move_to_end(key)
                self.cache_hits += 1
                return json.loads(self.cache[key])
        with self._requests_done:
            self._requests += 1
        try:
            if cancel.is_set():
                raise Cancelled()
            with collected_warnings() as said:  # this thread's BattleInputWarnings
                result = self._simulate(kwargs, what, cancel, report)
        finally:
            with self._requests_done:
                self._requests -= 1
                self._requests_done.notify_all()
        data = result.to_dict()
        # what the command line warns about, as it words it (its flags as the parameters)
        if "rules" not in kwargs and what in ("run", "raid"):  # the library's default
            said.insert(0, NO_EDITION_WARNING)
        said += [note for note in getattr(result, "notes", ()) if note not in said]
        if what == "run":
            said += ignored_options(set(kwargs), kwargs.get("method", "auto"), result)
        if said:
            data["warnings"] = said
        if with_laws:
            data["distributions"] = distributions(result)
        text = json.dumps(data) if data.get("method") == "exact" and not data.get("seed") \
            else None
        if text is not None and len(text) <= MAX_CACHED_BYTES:
            with self.cache_lock:
                self.cache[key] = text
                while len(self.cache) > self.cache_size:
                    self.cache.popitem(last=False)
        return data

    def _simulate(self, kwargs: dict[str, Any], kind: str = "run",
                  cancel: threading.Event | None = None,
                  report: Callable[..., None] | None = None):
        cancel = cancel or threading.Event()

        def stop_if_cancelled() -> None:
            if cancel.is_set():
                raise Cancelled()

        solve = {"run": api.simulate, "raid": _raid, "plan": _plan}[kind]
        # the time limit counts the work, not the compiling of the kernels (a minute or two
        # on a first run): where they are not compiled yet, it starts with the first report
        # of work done
        deadline = [None if api.kernels_cold() else time.monotonic() + self.time_limit]

        # a running estimate only of one battle (a wave's or a raid's air battle's counts are
        # not the answer's)
        one_battle = kind == "run" and not kwargs.get("waves") and not kwargs.get("counterattack")

        def watch(done: int, total: int, what: str = "trials", *_, outcomes=None) -> None:
            stop_if_cancelled()
            if report is not None:
                if not total:  # a notice: "compiling kernels (first run only)[: kernel]"
                    report(done, total, what, {"compiling": what.startswith(COMPILING)})
                elif outcomes is not None and one_battle and done:
                    report(done, total, what, running_estimate(outcomes, done))
                else:
                    report(done, total, what)
            if deadline[0] is None and done:
                deadline[0] = time.monotonic() + self.time_limit
            if deadline[0] is not None and time.monotonic() > deadline[0] and done < total:
                raise _Stop(f"{done:,} of {total:,} {what}")

        ruleset = load_rules(kwargs.get("rules", "revised"))
        if report is not None and one_battle and ruleset.model == "dice":
            self._tell_plan(kwargs, report)
        if one_battle and ruleset.model == "dice":
            self._await_child(kwargs, watch, cancel)
        try:
            if ruleset.model == "dice" and kwargs.get("method") == "exact" and kind == "run":
                # exact only where `auto` would solve exactly: the choice of each battle's
                # plan refuses where auto would take Monte Carlo (solver.ExactRefused)
                try:
                    return simulate_with(self.exact_solve, **kwargs, progress=watch)
                except solver.ExactRefused:
                    raise TooMuchWork(
                        "battle too large to solve exactly on this server (method auto would "
                        "use Monte Carlo); use method=mc or method=auto"
                    ) from None
            # formula battles too: their Monte Carlo reports progress like the dice kernel's
            return solve(**kwargs, progress=watch)
        except _Stop as stop:
            # (a run of trials: fewer of them; choices, waves, a plan, a table: less work)
            hint = ("ask for fewer trials" if str(stop).endswith(" trials") else
                    "ask for less (fewer choices, waves or units), or use the command line")
            raise TooMuchWork(
                f"stopped at the server's time limit of {self.time_limit:g} s after {stop}; "
                f"{hint}") from None

    def _await_child(self, kwargs: dict[str, Any], watch: Callable[..., None],
                     cancel: threading.Event | None = None) -> None:
        """A Monte Carlo battle whose kernel is cold while the child (build_in_child) builds
        the kernels: wait, at most CHILD_WAIT_S, for the child to put it in numba's cache
        (it compiles Monte Carlo's first: battlecalc.web.warm), then load it, rather than
        compile it here beside the child, on a core the child's compiling shares (each
        compile the slower, and the same kernel compiled twice).  watch hears of the wait as
        of compiling."""
        builder = self.builder
        if builder is None or builder.poll() is not None:
            return
        kernel = api.monte_carlo_kernel(**kwargs)
        if kernel is None:
            return
        watch(0, 0, COMPILING)
        give_up = time.monotonic() + CHILD_WAIT_S
        while builder.poll() is None and time.monotonic() < give_up:
            if cancel is not None and cancel.wait(CHILD_POLL_S):
                raise Cancelled()  # (the client gone, a newer request, the server stopping)
            if cancel is None:
                time.sleep(CHILD_POLL_S)
            if not api.kernel_cold(kernel):
                return

    @staticmethod
    def _tell_plan(kwargs: dict[str, Any], report: Callable[..., None]) -> None:
        """Tell a streaming client what will run before it runs: a progress line of no work
        with the method the solver chooses (battlecalc.api.choose) and whether its kernels
        compile first.  Nothing where the battle does not check (the run says why)."""
        try:
            battle, run, compiled = api.prepare(**kwargs)
            method = api.choose(battle, run, compiled).method
        except (BattleInputError, ValueError, RecursionError):
            return
        compiling = api.kernels_cold(method)
        what = COMPILING if compiling else "exact solve" if method == "exact" else "trials"
        report(0, 0, what, {"method": method, "compiling": compiling,
                            "trials": None if method == "exact" else run.trials})

    async def run(self, kwargs: dict[str, Any], with_laws: bool, what: str = "run",
                  cancel: threading.Event | None = None,
                  report: Callable[..., None] | None = None) -> dict[str, Any]:
        self.check(kwargs)
        if self.pending >= self.max_pending:
            raise _Busy()
        self.pending += 1
        try:
            loop = asyncio.get_running_loop()
            work = loop.run_in_executor(self.pool, self.compute, kwargs, with_laws, what,
                                        cancel, report)
            stopped = self._stopped(loop)
            await asyncio.wait({work, stopped}, return_when=asyncio.FIRST_COMPLETED)
            if work.done():
                return work.result()
            # the server stops: the answer ends now (the work stops at its next report; a
            # kernel numba compiles meanwhile finishes in its thread), so that the graceful
            # shutdown is not cut short with a traceback
            work.add_done_callback(lambda done: done.cancelled() or done.exception())
            raise Cancelled()
        finally:
            self.pending -= 1

    def _stopped(self, loop: asyncio.AbstractEventLoop) -> asyncio.Future:
        """A future of `loop` done when the server stops (stop_all)."""
        with self._running_lock:
            future = self._stop_future
            if future is None or future.get_loop() is not loop:
                future = self._stop_future = loop.create_future()
                if self.stopping.is_set():
                    future.set_result(None)
        return future

    def warm_up(self) -> float:
        """Run the warm-up battles once (compiles or loads every kernel); returns the seconds
        taken.  A warm-up battle the library refuses is noted in `warm_up_problems`, not
        fatal.  Requests may run meanwhile: each warm-up battle waits until none is running."""
        started = time.perf_counter()
        self.warm_up_problems = []
        api.compile_kernels()  # small battles would otherwise run as plain Python
        for battle in self.warm_up_battles:
            if self.warm_up_hook is not None:
                self.warm_up_hook(battle)
            with self._requests_done:
                self._requests_done.wait_for(lambda: self._requests == 0)
            try:
                _warm_solve(battle)
            except BattleInputError as exc:
                self.warm_up_problems.append(f"{battle}: {_one_line(exc)}")
                print(f"battlecalc: warm-up battle refused: {self.warm_up_problems[-1]}",
                      file=sys.stderr, flush=True)
        self.warm_up_s = time.perf_counter() - started
        return self.warm_up_s

    def build_in_child(self) -> None:
        """Fill numba's cache with the warm-up battles' kernels in a child process
        (battlecalc.web.warm; its lines on this process's stderr), and wait for it: meanwhile
        this process answers, small battles in plain Python (solver.plan.kernels_for) and
        Monte Carlo with the kernel it compiles for itself.  A child that fails is said on
        stderr; warm_up then compiles what is missing here."""
        try:
            self.builder = subprocess.Popen(
                [sys.executable, "-m", "battlecalc.web.warm"], stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL, text=True)
            self.builder.communicate(json.dumps(self.warm_up_battles))
        except (OSError, ValueError) as exc:  # (ValueError: closed by close() meanwhile)
            print(f"battlecalc: could not compile the kernels in a child process: {exc}",
                  file=sys.stderr, flush=True)
            return
        # (killed, or stopped by Ctrl-C with the server: nothing to say)
        if self.builder.returncode not in (0, -2, -9, -15, 130) and not self.stopping.is_set():
            print(f"battlecalc: compiling the kernels in a child process failed (exit "
                  f"{self.builder.returncode}); compiling them here", file=sys.stderr,
                  flush=True)

    def start_warm_up(self) -> threading.Thread:
        """Run :meth:`build_in_child`, then :meth:`warm_up` (loading what the child compiled),
        in a background thread: the server answers meanwhile.  Say on stderr when it is done,
        and set `warm`."""

        def run() -> None:
            started = time.perf_counter()
            cpu = _cpu_seconds()
            try:
                self.build_in_child()
                self.warm_up()
                seconds = time.perf_counter() - started
                print(f"battlecalc: kernels warm in {seconds:.1f} s ({_cpu_seconds() - cpu:.1f}"
                      " s of CPU, the child's included); battles run concurrently",
                      file=sys.stderr, flush=True)
            except Exception:  # a bug: say so; requests compile what they need themselves
                traceback.print_exc(file=sys.stderr)
            finally:
                self.warm.set()

        thread = threading.Thread(target=run, name="battlecalc-warm-up", daemon=True)
        thread.start()
        return thread

    def close(self) -> None:
        self.stop_all()
        self.pool.shutdown(wait=False, cancel_futures=True)
        builder = self.builder
        if builder is not None and builder.poll() is None:
            builder.kill()  # (the cache keeps what it finished)
            builder.wait()


def _cpu_seconds() -> float:
    """This process's CPU seconds and those of its children waited for (the warm-up's)."""
    try:
        import resource
    except ImportError:  # (not POSIX)
        return 0.0
    own, children = (resource.getrusage(who) for who in (resource.RUSAGE_SELF,
                                                          resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _raid(**kwargs):
    from ..raids import raid

    return raid(**kwargs)


def _plan(**kwargs):
    from ..planner import plan

    return plan(**kwargs)


ENDPOINTS = {"run": None, "raid": raid_parameters(), "plan": plan_parameters()}


SHIPPED_EDITIONS = frozenset(list_editions())


def check_edition(rules: Any) -> None:
    """Requests name shipped editions only, by id: `simulate` would read a path as an edition
    file, and no file of the server is a request's to read (not even to learn that it exists).
    The message is the same whatever the path names."""
    if not isinstance(rules, str) or rules not in SHIPPED_EDITIONS:
        raise BattleInputError(
            f"rules: unknown edition {quoted(rules)}; this server runs the shipped editions, "
            f"by id: {', '.join(sorted(SHIPPED_EDITIONS))}")


def check_request(kwargs: dict[str, Any], extra: dict[str, Any]) -> None:
    """Refuse, before any work, what the server cannot answer (the CLI refuses it too)."""
    if extra.get("distributions") and (kwargs.get("waves") or kwargs.get("counterattack")):
        raise BattleInputError(
            "distributions are not available with waves or a counter-attack (the laws are "
            "those of one battle); leave distributions out")


def _bad_request_message(exc: BaseException) -> str:
    """The 400 message of an input error, of a ValueError raised on a request's values, and of
    input nested too deeply to read (RecursionError)."""
    if isinstance(exc, RecursionError):
        return "the request is nested too deeply to read"
    return _one_line(exc) or type(exc).__name__


STREAM_TYPE = "application/x-ndjson"
PROGRESS_EVERY_S = 0.25  # at most this often a progress line


def _stream(answer, request: Request, params: dict[str, Any],
            cancel: threading.Event) -> Response:
    """The answer as lines of JSON (``Accept: application/x-ndjson``): ``{"progress": done,
    "total": total, "what": "trials"}`` while it runs, then ``{"status": 200, "result": {...}}``
    (the object the plain request answers) or ``{"status": 400, "error": "..."}``.  A Monte
    Carlo run of one battle adds to each progress line its running estimate: ``"estimate":
    {"attacker_win": p, ...}, "ci95": {"attacker_win": [lo, hi], ...}`` (running_estimate).  A
    client that goes away stops the run at its next chunk."""
    from starlette.responses import StreamingResponse

    loop = asyncio.get_running_loop()
    updates: asyncio.Queue = asyncio.Queue()
    last = [0.0]

    def report(done: int, total: int, what: str,
               estimate: dict[str, Any] | None = None) -> None:  # in the worker thread
        now = time.monotonic()
        if not total or now - last[0] >= PROGRESS_EVERY_S:  # a notice (total 0): always
            if total:
                last[0] = now
            line = {"progress": done, "total": total, "what": what, **(estimate or {})}
            loop.call_soon_threadsafe(updates.put_nowait, line)

    async def lines():
        task = asyncio.ensure_future(answer(request, params, cancel, report, watch=False))
        try:
            while not task.done():
                getter = asyncio.ensure_future(updates.get())
                await asyncio.wait({task, getter}, return_when=asyncio.FIRST_COMPLETED)
                if getter.done():
                    yield json.dumps(getter.result()) + "\n"
                else:
                    getter.cancel()
            status, data = task.result()
            last_line = {"status": status, "result": data} if status == 200 else {
                "status": status, **data}
            yield json.dumps(last_line) + "\n"
        finally:
            cancel.set()  # the client has gone (or it is over): stop at the next chunk

    return StreamingResponse(lines(), media_type=STREAM_TYPE,
                             headers={**SECURITY_HEADERS, "Cache-Control": "no-store"})


class _TooLarge(Exception):
    pass


async def _upload_body(request: Request, seconds: float, idle: float) -> bytearray:
    """An upload's body: _TooLarge past MAX_SAVE_UPLOAD, TimeoutError (its message the 408's)
    where it has not all arrived within `seconds`, or no part of it for `idle` seconds."""
    raw = bytearray()
    deadline = time.monotonic() + seconds
    chunks = request.stream().__aiter__()
    while True:
        wait = min(idle, deadline - time.monotonic())
        try:
            chunk = await asyncio.wait_for(chunks.__anext__(), max(wait, 0.0))
        except StopAsyncIteration:
            return raw
        except TimeoutError:
            whole = time.monotonic() >= deadline
            raise TimeoutError(
                f"the save did not arrive within {seconds:g} s" if whole else
                f"the save stopped arriving for {idle:g} s; send it again") from None
        raw += chunk
        if len(raw) > MAX_SAVE_UPLOAD:
            raise _TooLarge()


async def _client_gone(request: Request) -> None:
    """Return when the client closes its connection (the body is read by then)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


async def _watch_disconnect(request: Request, cancel: threading.Event) -> None:
    """Set `cancel` when the client closes its connection (the body is read by then)."""
    await _client_gone(request)
    cancel.set()


async def _acquire(slots: asyncio.Semaphore, gone: asyncio.Future) -> bool:
    """Take one of `slots`, unless `gone` is done first (False: none taken)."""
    slot = asyncio.ensure_future(slots.acquire())
    await asyncio.wait({slot, gone}, return_when=asyncio.FIRST_COMPLETED)
    if not slot.done():
        slot.cancel()
        await asyncio.gather(slot, return_exceptions=True)
    if slot.done() and not slot.cancelled():
        if not gone.done():
            return True
        slots.release()
    return False


def _json(data: Any, status: int = 200) -> Response:
    return Response(json.dumps(data), status_code=status, media_type="application/json",
                    headers={**SECURITY_HEADERS, "Cache-Control": "no-store"})


def _error(message: str, status: int = 400) -> Response:
    return _json({"error": message}, status)


async def _read_body(request: Request) -> bytes | None:
    """The body, or None when it is over MAX_BODY_BYTES."""
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > MAX_BODY_BYTES):
        return None
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            return None
    return bytes(body)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """Query or form parameters, or json.loads's object hook: a name given twice is refused,
    not silently the last."""
    params: dict[str, Any] = {}
    for name, value in pairs:
        if name in params:
            raise ParamError(f"parameter {name!r} given more than once")
        params[name] = value
    return params


MAX_JSON_DIGITS = 1000  # of an integer in a JSON body (Python refuses more than 4,300)


def _json_int(text: str) -> int:
    """An integer of a JSON body; ParamError past MAX_JSON_DIGITS digits (no option needs
    them, and Python's own refusal reads as a body that is not JSON)."""
    digits = len(text.lstrip("-"))
    if digits > MAX_JSON_DIGITS:
        raise ParamError(f"the request body holds an integer of {digits:,} digits (at most "
                         f"{MAX_JSON_DIGITS:,})")
    return int(text)


async def _request_params(request: Request) -> dict[str, Any] | Response:
    if request.method in ("GET", "HEAD"):  # HEAD: a GET whose body the server leaves out
        return _unique_keys(request.query_params.multi_items())
    body = await _read_body(request)
    if body is None:
        return _error(f"request body over {MAX_BODY_BYTES:,} bytes", 413)
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind == "application/x-www-form-urlencoded":
        return _unique_keys(parse_qsl(body.decode("utf-8", "replace"),
                                       keep_blank_values=True))
    try:
        params = json.loads(body or b"{}", object_pairs_hook=_unique_keys,
                            parse_int=_json_int)
    except ParamError as exc:
        return _error(str(exc))
    except (ValueError, UnicodeDecodeError):
        return _error("the request body must be a JSON object of simulate's arguments")
    except RecursionError:
        return _error("the request body is nested too deeply to read")
    if not isinstance(params, dict):
        return _error("the request body must be a JSON object of simulate's arguments")
    return params


WILDCARDS = ("0.0.0.0", "::", "")  # bound to every address of the machine


def _host_of(header: str) -> str:
    """The host of a Host header, without its port and brackets, in lower case."""
    host = header.strip().lower()
    if host.startswith("["):  # [::1]:8000
        return host[1:].split("]")[0]
    if host.count(":") == 1:
        return host.split(":")[0]
    return host


@functools.lru_cache(maxsize=256)
def is_local_address(host: str) -> bool:
    """Whether `host` is an IP address of this machine (a socket binds to it: the system
    says so, for every interface, without listing them)."""
    import ipaddress

    try:
        address = ipaddress.ip_address(host.split("%")[0])
    except ValueError:
        return False
    family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.bind((host, 0))
    except OSError:
        return False
    return True


def _host_allowed(header: str, allowed: set[str] | None, local: bool = False) -> bool:
    """Host header check (a defence against DNS rebinding: a page of another site whose
    name resolves to this machine sends its own name); None allows every host (tests).
    local: any IP address of this machine is allowed too (a server on every address: a page
    sent with an address as its Host is of this machine, not another site)."""
    if allowed is None:
        return True
    host = _host_of(header)
    return host in allowed or (local and is_local_address(host))


def machine_names() -> set[str]:
    """This machine's own names: its host name and fully qualified name (lower case)."""
    names = set()
    for name in (socket.gethostname(), socket.getfqdn()):
        if name:
            names.add(name.lower().rstrip("."))
    return names


def allowed_hosts(host: str, allow: tuple[str, ...] = ()) -> set[str]:
    """Host names the server answers to when bound to `host`: the loopback names, the
    address it is bound to, the names given (`serve --allow-host NAME`), and where it is
    bound to every address (0.0.0.0, ::) this machine's own names (and, HostCheck, any of
    its addresses).  Never every host: a rebinding page's name is none of these."""
    names = {*LOOPBACK, *(_host_of(name) for name in allow if name.strip())}
    if host in WILDCARDS:
        return names | machine_names()
    return names | {host.strip("[]").lower()}


class HostCheck:
    """ASGI middleware: answer 400 to requests whose Host header names another server
    (allowed_hosts; `local`: any IP address of this machine too)."""

    def __init__(self, app, hosts: set[str] | None, local: bool = False):
        self.app = app
        self.hosts = hosts
        self.local = local

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            header = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
            if not _host_allowed(header, self.hosts, self.local):
                await _error("unknown Host header", 400)(scope, receive, send)
                return
        await self.app(scope, receive, send)


class PageOnly:
    """ASGI middleware: the API's costly endpoints (every path under /api/ but FREE_PATHS)
    answer only requests that carry one of CLIENT_HEADERS.  A page of another origin can send a
    form, load an image or call fetch(..., {mode: "no-cors"}), but not with a custom header:
    that needs a CORS preflight, which this server never grants.  Such a request is refused
    with 403 here, before its body is read or its parameters parsed, and counted in
    `engine.refused`."""

    def __init__(self, app, engine: Engine):
        self.app = app
        self.engine = engine

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope["path"].startswith("/api/") \
                and scope["path"] not in FREE_PATHS \
                and not any(name in CLIENT_HEADERS for name, _ in scope["headers"]):
            self.engine.refused += 1
            await _error(NOT_FROM_THE_PAGE, 403)(scope, receive, send)
            return
        await self.app(scope, receive, send)


def create_app(engine: Engine | None = None, warm: bool = True,
               host: str = "127.0.0.1", watch=None,
               watch_interval: float | None = None, allow_hosts: tuple[str, ...] = ()
               ) -> Starlette:
    """The ASGI app.  warm: run the warm-up battles from start-up, in the background (the
    page and /api/spec answer at once; a battle asked for meanwhile compiles what it needs);
    host: the address it is bound to (with allow_hosts, the names of `serve --allow-host`,
    sets the Host header names it answers: allowed_hosts); watch: a folder
    of TripleA saves (a path, or a battlecalc.triplea.watch.SaveFolder) whose newest save is
    the live board (battlecalc.web.live), looked at every `watch_interval` seconds."""
    from .live import INTERVAL_S, MAX_SUBSCRIBERS, LiveBoard

    engine = engine or Engine()
    static = resources.files("battlecalc.web") / "static"
    assets = {path: (static.joinpath(name).read_bytes(), media)
              for path, (name, media) in ASSETS.items()}
    if watch is not None and not hasattr(watch, "poll"):
        from ..triplea.watch import SaveFolder

        watch = SaveFolder(watch)
    spec_body = json.dumps(page_spec({**engine.limits(), "watching": None if watch is None
                                      else watch.shown}))

    async def asset(request: Request) -> Response:
        body, media = assets[request.url.path]
        return Response(body, media_type=media,
                        headers={**SECURITY_HEADERS, "Cache-Control": "no-cache"})

    async def spec(request: Request) -> Response:
        return Response(spec_body, media_type="application/json",
                        headers={**SECURITY_HEADERS, "Cache-Control": "no-cache"})

    latest = Latest()

    async def answer(request: Request, params: dict[str, Any], cancel: threading.Event,
                     report: Callable[..., None] | None = None,
                     watch: bool = True) -> tuple[int, dict[str, Any]]:
        """(HTTP status, JSON object) of one request whose parameters are read."""
        what = request.url.path.rsplit("/", 1)[-1]
        page = request.headers.get("x-battlecalc-page")
        page = page[:100] if page else None
        number = request.headers.get("x-battlecalc-request", "")
        watcher = None
        try:
            kwargs, extra = parse_params(params, ENDPOINTS[what])
            if what != "run" and extra.get("distributions"):
                raise ParamError(f"distributions are not available for /api/{what}")
            if what == "plan" and "rules" not in kwargs:
                raise ParamError("rules: give an edition id (the planner has no default)")
            check_request(kwargs, extra)
            latest.begin(page, int(number) if number.isdigit() and len(number) < 19 else None,
                         cancel)
            if watch:
                watcher = asyncio.ensure_future(_watch_disconnect(request, cancel))
            data = await engine.run(kwargs, bool(extra.get("distributions")), what, cancel,
                                    report)
        except Cancelled:
            return 409, {"error": "cancelled: the client has gone or a newer request replaced "
                                  "this one"}
        except BattleInputError as exc:
            return 400, {"error": _one_line(exc)}
        except (ValueError, RecursionError) as exc:  # values the readers let through
            print(f"battlecalc: request refused: {type(exc).__name__}: {_one_line(exc)}",
                  file=sys.stderr, flush=True)
            return 400, {"error": _bad_request_message(exc)}
        except _Busy:
            return 503, {"error": "the server is busy; try again in a moment"}
        except Exception:  # a bug: say so, keep serving
            traceback.print_exc(file=sys.stderr)
            return 500, {"error": "internal error (see the server's output)"}
        finally:
            if watcher is not None:
                watcher.cancel()
            latest.end(page, cancel)
        return 200, data

    async def run(request: Request) -> Response:
        cancel = threading.Event()
        engine.started[request.url.path.rsplit("/", 1)[-1]] += 1
        try:
            params = await _request_params(request)
        except BattleInputError as exc:
            return _error(_one_line(exc))
        if isinstance(params, Response):
            return params
        if STREAM_TYPE in request.headers.get("accept", ""):
            return _stream(answer, request, params, cancel)
        status, data = await answer(request, params, cancel)
        return _json(data, status)

    game_slots = asyncio.Semaphore(engine.game_workers)
    live = None if watch is None else LiveBoard(
        watch, engine, game_slots, INTERVAL_S if watch_interval is None else watch_interval)

    BUSY_READING = "the server is busy reading saves; try again in a moment"

    async def save_upload(request: Request) -> bytes | Response:
        """The TripleA save in a request's body, or the response refusing it: at most
        engine.max_game_receiving bodies arrive at once, each within engine.game_body_s and
        never stalled for engine.game_body_idle_s (408); refused unread (503) when
        engine.saves_full().  /api/game's and /api/turn/*'s one reader of an upload."""
        declared = request.headers.get("content-length")
        too_large = f"a save of at most {MAX_SAVE_UPLOAD >> 20} MiB"
        if declared is not None and (not declared.isdigit() or int(declared) > MAX_SAVE_UPLOAD):
            return _error(too_large, 413)
        if engine.game_receiving >= engine.max_game_receiving or engine.saves_full():
            return _error(BUSY_READING, 503)
        engine.game_receiving += 1
        try:
            raw = await _upload_body(request, engine.game_body_s, engine.game_body_idle_s)
        except _TooLarge:
            return _error(too_large, 413)
        except TimeoutError as late:
            return _error(str(late), 408)
        except ClientDisconnect:
            return _error("cancelled: the client has gone", 409)
        finally:
            engine.game_receiving -= 1
        if not raw:
            return _error("send the TripleA save (.tsvg) as the request body")
        return bytes(raw)

    async def game(request: Request) -> Response:
        """POST /api/game: the body is a TripleA save (save_upload); answers its battles
        (game_battles), read by a child process under the server's limits
        (saves.read_in_child): stopped at the time limit or when the client goes away.  Once
        received, beyond engine.game_workers at once an upload waits, beyond
        engine.max_game_pending waiting it is refused (503)."""
        raw = await save_upload(request)
        if isinstance(raw, Response):
            return raw
        if engine.saves_full():
            return _error(BUSY_READING, 503)
        engine.game_pending += 1
        gone = None
        try:
            gone = asyncio.ensure_future(_client_gone(request))
            if not await _acquire(game_slots, gone):
                raise ChildGone()
            try:
                engine.started["game"] += 1
                data = await read_in_child(raw, engine.game_time_limit, engine.game_memory,
                                           gone)
            finally:
                game_slots.release()
            stop = threading.Event()  # the client gone: the battles stop at their next report
            gone.add_done_callback(lambda _: stop.set())
            data = await solve_board(engine, data, stop)
        except (ClientDisconnect, ChildGone, Cancelled):  # nobody reads the answer
            return _error("cancelled: the client has gone", 409)
        except BattleInputError as exc:
            return _error(_one_line(exc))
        except Exception:  # a bug: say so, keep serving
            traceback.print_exc(file=sys.stderr)
            return _error("internal error (see the server's output)", 500)
        finally:
            engine.game_pending -= 1
            if gone is not None:
                gone.cancel()
        return _json(data)

    async def turn_reach(request: Request) -> Response:
        """GET|POST /api/turn/reach: a player's legal attacks (battlecalc.web.turn)."""
        from .turn import reach_answer

        return await reach_answer(request, engine, live, game_slots, respond=_json,
                                  acquire=_acquire, client_gone=_client_gone,
                                  upload=save_upload, not_watching=NOT_WATCHING)

    async def turn_plan(request: Request) -> Response:
        """GET|POST /api/turn/plan: the plan of the turn (battlecalc.web.turn)."""
        from .turn import plan_answer

        return await plan_answer(request, engine, live, game_slots, respond=_json,
                                 acquire=_acquire, client_gone=_client_gone,
                                 upload=save_upload, not_watching=NOT_WATCHING,
                                 stream_type=STREAM_TYPE,
                                 headers=SECURITY_HEADERS)

    async def board(request: Request) -> Response:
        """GET /api/board: the live board's state (live.LiveBoard.state)."""
        if live is None:
            return _error(NOT_WATCHING, 404)
        return _json(live.state())  # (its board bounded: live.MAX_BOARD_BYTES)

    class WatchStream:
        """GET /api/watch: the live board's states as server-sent events, the current one
        first (live.LiveBoard.events); at most MAX_SUBSCRIBERS pages at once.  An ASGI app:
        a stream still open when the server stops ends with it (uvicorn cancels it after
        GRACEFUL_S), quietly."""

        async def __call__(self, scope, receive, send):
            from starlette.responses import StreamingResponse

            wake = None
            if live is None:
                response = _error(NOT_WATCHING, 404)
            elif len(live.subscribers) >= MAX_SUBSCRIBERS:
                response = _error("too many pages follow the board; close one and reload", 503)
            else:  # (its place taken now, before the response starts: the cap holds)
                wake = live.subscribe()
                response = StreamingResponse(
                    live.events(wake), media_type="text/event-stream",
                    headers={**SECURITY_HEADERS, "Cache-Control": "no-store",
                             "X-Accel-Buffering": "no"})
            try:
                await response(scope, receive, send)
            except asyncio.CancelledError:  # the server stopping with the page still open
                with contextlib.suppress(Exception):
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
            finally:
                if wake is not None:  # (the stream never started: its place is freed)
                    live.unsubscribe(wake)

    async def not_found(request: Request, exc: Exception) -> Response:
        return _error("not found", 404)

    async def not_allowed(request: Request, exc: Exception) -> Response:
        return _error("method not allowed", 405)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        if warm:
            engine.start_warm_up()
        if live is not None:
            live.start()
        yield
        if live is not None:
            await live.stop()
        engine.close()

    routes = [Route(path, asset, methods=["GET", "HEAD"]) for path in ASSETS]
    routes += [Route("/api/spec", spec, methods=["GET", "HEAD"]),
               *(Route(f"/api/{what}", run, methods=["GET", "POST"]) for what in ENDPOINTS),
               Route("/api/game", game, methods=["POST"]),
               Route("/api/board", board, methods=["GET", "HEAD"]),
               Route("/api/turn/reach", turn_reach, methods=["GET", "POST"]),
               Route("/api/turn/plan", turn_plan, methods=["GET", "POST"]),
               Route("/api/watch", WatchStream(), methods=["GET"])]
    app = Starlette(routes=routes, lifespan=lifespan,
                    middleware=[Middleware(HostCheck, hosts=allowed_hosts(host, allow_hosts),
                                           local=host in WILDCARDS),
                                Middleware(PageOnly, engine=engine)],
                    exception_handlers={404: not_found, 405: not_allowed})
    app.state.engine = engine
    app.state.live = live
    return app


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to (host, port), for uvicorn to serve on; BattleInputError with one line
    when the host is unknown, the port in use or the address not this machine's.  Done before
    anything else: uvicorn would find out only after the app is built and its warm-up begun,
    and exit 3 with a message of its own."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET  # as uvicorn chooses
    shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:
        address = socket.getaddrinfo(host.strip("[]"), port, family, socket.SOCK_STREAM)[0][4]
    except (socket.gaierror, UnicodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise BattleInputError(f"cannot listen on {quoted(host)}: unknown host ({reason}); "
                               "give an address of this machine, e.g. --host 127.0.0.1") from None
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does
        sock.bind(address)
    except OSError as exc:
        sock.close()
        reason = {
            errno.EADDRINUSE: "the port is in use (another server?); choose another --port",
            errno.EADDRNOTAVAIL: "not an address of this machine",
            errno.EACCES: "permission denied (ports below 1024 need privileges)",
        }.get(exc.errno, exc.strerror or str(exc))
        raise BattleInputError(f"cannot listen on {shown}: {reason}") from None
    return sock


HOST_VARIABLE = "BATTLECALC_SERVE_HOST"  # the address, for each worker process's app
ALLOW_VARIABLE = "BATTLECALC_SERVE_ALLOW_HOSTS"  # --allow-host names, separated by spaces


def warm_up_words(estimate: float | None = None) -> str:
    """The start line's words on the warm-up: how long it takes, from what numba's cache
    holds (warm.estimate_seconds: seconds of one core's work, about its wall time on a quiet
    machine)."""
    from .warm import START_SECONDS, estimate_seconds

    seconds = estimate_seconds() if estimate is None else estimate
    if seconds <= START_SECONDS:
        return "loading the kernels in the background (a few seconds)"
    about = f"about {10 * round(seconds / 10):.0f} s" if seconds < 150 else \
        f"about {seconds / 60:.0f} minutes"
    return (f"compiling the kernels in the background, first run only ({about} on one core); "
            "battles asked for meanwhile are answered: small ones in plain Python")


def worker_app() -> Starlette:
    """The app of one worker process of ``serve --workers N`` (uvicorn's factory)."""
    return create_app(host=os.environ.get(HOST_VARIABLE, "127.0.0.1"),
                      allow_hosts=tuple(os.environ.get(ALLOW_VARIABLE, "").split()))


def check_allow_hosts(names) -> tuple[str, ...]:
    """serve's --allow-host names: host names or addresses (letters, digits, '.', '-', ':',
    '[]'), no port; BattleInputError otherwise."""
    import re

    checked = []
    for name in names or ():
        text = str(name).strip()
        if not re.fullmatch(r"[A-Za-z0-9.\-]+|\[?[0-9A-Fa-f:.]+\]?", text) or len(text) > 253:
            raise BattleInputError(f"--allow-host: {quoted(name)} is not a host name or an "
                                   "address (give it without a port, e.g. --allow-host "
                                   "mypc.local)")
        checked.append(text.strip("[]").lower())
    return tuple(checked)


def serve(host: str = "127.0.0.1", port: int = 8000, workers: int = 1,
          watch: str | None = None, allow_hosts: tuple[str, ...] = ()) -> None:
    """Run the server until Ctrl-C (the `battlecalc serve` command).  BattleInputError, before
    any work, when it cannot listen there.  workers > 1: that many processes share the one
    socket (uvicorn's supervisor), each with its own engine, limits and cache.  watch: a
    folder of TripleA saves whose newest save is the page's live board (one process only)."""
    import uvicorn

    if not isinstance(workers, int) or isinstance(workers, bool) or not 1 <= workers <= 64:
        raise BattleInputError(f"workers must be a whole number from 1 to 64, got {workers!r}")
    allow_hosts = check_allow_hosts(allow_hosts)
    folder = None
    if watch is not None:
        if workers > 1:
            raise BattleInputError("--watch runs in one server process: leave out --workers")
        from ..triplea.watch import SaveFolder

        folder = SaveFolder(watch)  # a folder that is not one: refused before listening
    sock = listening_socket(host, port)
    if host not in LOOPBACK:
        names = sorted(allowed_hosts(host, allow_hosts))
        print(f"Warning: listening on {host}, not on this machine only: anyone who can reach "
              "it can run battles here (there is no login).  It answers requests that name "
              f"it as {', '.join(names)}"
              + (" or any address of this machine" if host in WILDCARDS else "")
              + "; give other names with --allow-host NAME.", file=sys.stderr, flush=True)
    shown = f"[{host}]" if ":" in host else host
    print(f"battlecalc: serving http://{shown}:{port}/  (Ctrl-C stops); {warm_up_words()}",
          file=sys.stderr, flush=True)
    try:
        if workers > 1:
            from uvicorn.supervisors import Multiprocess

            os.environ[HOST_VARIABLE] = host
            os.environ[ALLOW_VARIABLE] = " ".join(allow_hosts)
            config = uvicorn.Config("battlecalc.web.server:worker_app", factory=True,
                                    host=host, port=port, workers=workers,
                                    log_level="warning", access_log=False, lifespan="on",
                                    server_header=False)
            Multiprocess(config, sockets=[sock]).run()
            return
        if folder is not None:
            print(f"battlecalc: watching {folder.shown} for TripleA saves (the newest complete "
                  "one is the page's live board)", file=sys.stderr, flush=True)
        app = create_app(host=host, watch=folder, allow_hosts=allow_hosts)
        config = uvicorn.Config(app, host=host, port=port, log_level="warning",
                                access_log=False, lifespan="on", server_header=False,
                                timeout_graceful_shutdown=GRACEFUL_S)

        class Server(uvicorn.Server):
            def handle_exit(self, sig, frame):  # Ctrl-C: the pages' board streams end first
                if app.state.live is not None:
                    app.state.live.close_streams_threadsafe()
                app.state.engine.stop_all()  # and the requests' work, at its next report
                super().handle_exit(sig, frame)

        Server(config).run(sockets=[sock])  # the socket checked above, no second bind
    finally:
        sock.close()
