"""Kernels are plain Python until they are worth compiling.

Kernel functions are marked with :func:`kernel` and stay ordinary Python functions, so a small
exact solve runs without importing numba at all (importing numba alone costs about 0.3 s, more
than a small battle takes in Python).  :func:`compiled` compiles every marked function of the
kernel modules with numba, once per process, and rebinds the module globals to the compiled
dispatchers, so a kernel calling another kernel reaches the compiled one.  The
Python functions and the compiled ones are the same source: one implementation, two speeds.

Compiled code is cached on disk (``cache=True``).  Where no cache folder is writable (a read-only
install with an unwritable HOME), the cache moves to a temporary folder, and if even that
fails, kernels are compiled without a cache.  numba judges a cached kernel fresh by its own
source file only, but a kernel inlines and calls kernels and constants of the other kernel
files: every kernel's cache is keyed on all the kernel files (:func:`_track_kernel_sources`), so
an edit of one (say the round model) never leaves another running stale compiled code.

``BATTLECALC_PLAIN_KERNELS=1`` keeps every kernel
in plain Python (nothing is compiled, numba is not imported): slow, for tests and coverage.

Kernels run on the engine's own threads (:func:`threads`, :func:`call`): one persistent pool of
:func:`thread_count` threads, which :func:`set_threads` (``--threads``) or ``BATTLECALC_THREADS``
sizes, by default the cores this process may use.  numba's own thread pool is never started
(no kernel uses its parallel loops).  The calling thread only waits, so Ctrl-C reaches it at
once; drivers keep each kernel call short (about a quarter of a second) so that the work
in flight when it comes ends soon too.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import importlib
import os
import queue
import tempfile
import threading

KERNEL_MODULES = ("battlecalc.kernels.rules", "battlecalc.kernels.montecarlo",
                  "battlecalc.kernels.exact", "battlecalc.kernels.formula")
_MARK = "_battlecalc_kernel"
_state: dict = {"compiled": False}


def kernel(func=None, *, inline: bool = False, nogil: bool = False, refs: bool = True):
    """Mark a function as a kernel (compiled by :func:`compiled`, Python before that).
    nogil: it releases the GIL, so :func:`threads` can run it on several cores.
    refs False: compiled without reference counting (numba's ``_nrt=False``), for a kernel
    called per state pair that makes no array and returns none: every array it is handed
    stays alive by its caller's reference, and each call saves an atomic increment and
    decrement of every array argument and view (numba's NRT_incref / NRT_decref, which its
    pruning leaves in a kernel of many branches).  Making an array there fails to compile.
    (A kernel that does not say inherits the setting of its caller, and numba compiles it
    once for each: a kernel reached from both kinds, such as the round model's rules that
    the exact and Monte Carlo kernels share, is marked too, so that it is compiled once.)"""

    def mark(f):
        options = {"inline": "always" if inline else "never", "nogil": nogil}
        if not refs:
            options["_nrt"] = False
        setattr(f, _MARK, options)
        return f

    return mark(func) if func is not None else mark


# ---------------------------------------------------------------------------------------------
# The engine's threads: one persistent pool, sized by set_threads / BATTLECALC_THREADS

THREADS_ENV = "BATTLECALC_THREADS"
PLAIN_ENV = "BATTLECALC_PLAIN_KERNELS"  # "1": never compile, every kernel stays plain Python
MAX_THREADS = 1024
RANGES_PER_THREAD = 4  # jit.threads: pieces of work a thread, for balance
_locks = {"pool": threading.Lock(), "compile": threading.Lock()}
_pool: dict = {"size": None, "workers": None}  # size None: not chosen yet (the default)


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _checked_count(value, where: str) -> int:
    from ..errors import BattleInputError, quoted

    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_THREADS:
        raise BattleInputError(
            f"{where} must be a whole number of threads (1 to {MAX_THREADS}), got "
            f"{quoted(value)}")
    return value


def default_threads() -> int:
    """BATTLECALC_THREADS if set (BattleInputError if it is not a thread count), else the
    cores this process may run on."""
    value = os.environ.get(THREADS_ENV, "").strip()
    if not value:
        return usable_cores()
    try:
        count = int(value)
    except ValueError:
        count = 0
    if not 1 <= count <= MAX_THREADS:
        _checked_count(value, THREADS_ENV)  # raises, quoting the text as it was written
    return count


def set_threads(n: int | None = None) -> int:
    """Run kernels on n threads from now on (None: default_threads()); returns the count.

    Results do not depend on it: work is split into chunks of a fixed size, whatever the
    count.  BattleInputError for anything but a whole number 1..MAX_THREADS."""
    size = default_threads() if n is None else _checked_count(n, "threads")
    with _locks["pool"]:
        if size != _pool["size"] and _pool["workers"] is not None:
            _pool["workers"].close()  # its threads end after the work they hold
            _pool["workers"] = None
        _pool["size"] = size
    return size


def thread_count() -> int:
    """The number of threads kernels run on (set_threads, else default_threads())."""
    size = _pool["size"]
    return size if size is not None else set_threads(None)


class _Workers:
    """A fixed set of daemon threads running submitted calls in order of submission.

    Daemon threads: after Ctrl-C the process exits at once, without waiting for the kernel
    call a thread is in (which would finish within about a second anyway)."""

    def __init__(self, size: int):
        self.queue: queue.SimpleQueue = queue.SimpleQueue()
        self.threads = [threading.Thread(target=self._work, daemon=True,
                                         name=f"battlecalc-kernels-{i}") for i in range(size)]
        for thread in self.threads:
            thread.start()

    def _work(self) -> None:
        while (item := self.queue.get()) is not None:
            future, function, args = item
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(function(*args))
                except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller
                    future.set_exception(exc)
            del item, future, function, args  # no reference to the arrays kept while idle

    def submit(self, function, *args) -> concurrent.futures.Future:
        future: concurrent.futures.Future = concurrent.futures.Future()
        self.queue.put((future, function, args))
        return future

    def close(self) -> None:
        for _ in self.threads:
            self.queue.put(None)


def _submit_all(calls) -> list:
    """Submit [(function, args)] to the pool (created or resized here); the futures."""
    thread_count()  # the size, chosen now if it was not
    with _locks["pool"]:
        if _pool["workers"] is None:
            _pool["workers"] = _Workers(_pool["size"])
        return [_pool["workers"].submit(function, *args) for function, args in calls]


def _forget_pool_after_fork() -> None:
    # a forked child has none of its parent's threads: it starts a pool of its own if it needs
    _locks.update(pool=threading.Lock(), compile=threading.Lock())
    _pool["workers"] = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool_after_fork)


def _wait(futures) -> None:
    """Wait for every future (a wait Ctrl-C interrupts at once), then raise the first error;
    on an error or Ctrl-C the ranges not started yet are dropped."""
    try:
        for future in futures:
            future.result()
    except BaseException:
        for future in futures:
            future.cancel()
        raise


def _as_plain_python(function):
    """function run as plain Python: numpy's uint64 scalars (the random streams) wrap around
    as compiled code does, but warn about it; silenced here (numpy's error state is per
    thread, so this runs in the thread that calls the kernel)."""

    def run(*args):
        import numpy as np

        with np.errstate(over="ignore"):
            return function(*args)

    return run


def threads(function, n_items: int, *args, short: bool = False) -> None:
    """Run function(first, last, *args) over contiguous ranges of range(n_items), a few ranges
    per thread of the pool (thread_count()).  Kernels run this way write only their own
    items' outputs, so the results do not depend on the number of threads.  Compiled kernels
    (which must release the GIL: kernel(nogil=True)) run on the pool even for one range, so
    that the calling thread keeps answering Ctrl-C, unless the caller says the call is short
    (handing it to a pool thread costs about 0.1 ms); plain Python ones run in the caller when
    there is one range.  Plain threads rather than numba's parallel loops: those cost seconds
    of compiling each, and numba's own thread pool."""
    n_threads = max(1, min(thread_count(), n_items))
    if not is_compiled():
        function = _as_plain_python(function)
    if n_threads == 1 and (short or not is_compiled()):
        function(0, n_items, *args)
        return
    # a few ranges a thread, taken in turn by whichever thread is free: a thread the system
    # holds back (a busy machine) or a slower range does not leave the others waiting
    n_ranges = 1 if n_threads == 1 else min(n_items, RANGES_PER_THREAD * n_threads)
    bounds = [n_items * i // n_ranges for i in range(n_ranges + 1)]
    _wait(_submit_all([(function, (bounds[i], bounds[i + 1], *args))
                       for i in range(n_ranges)]))


def call(function, *args, short: bool = False):
    """function(*args) on a pool thread when kernels are compiled (a nogil kernel: the caller
    keeps answering Ctrl-C), in the calling thread when they are not or the call is short;
    its return value."""
    thread_count()  # a bad BATTLECALC_THREADS is refused whichever thread runs the call
    if not is_compiled():
        return _as_plain_python(function)(*args)
    if short:
        return function(*args)
    [future] = _submit_all([(function, args)])
    _wait([future])
    return future.result()


_overloads: dict = {}  # (dispatcher, numba's fingerprint of the arguments) -> entry point


def overload(dispatcher, args):
    """The compiled code `dispatcher` runs for arguments of the types of `args` (the same
    shapes of tuples, dtypes and layouts of arrays, kinds of numbers), callable as
    dispatcher(*args), or None where it has none compiled for exactly those types.

    For a caller that makes many calls with arguments of one set of types (the exact solver
    of a kept battle, battlecalc.api): a dispatcher types every argument of every call, about
    4 us for the exact solver's 30 arrays in nested tuples, more than a tiny battle's solve.
    The overload is found by the exact signature of the arguments, the one the dispatcher
    would run (it prefers an exact match), once per fingerprint of them (numba's own, from
    their type codes, dtypes and layouts: numba._dispatcher.compute_fingerprint, about 3 us
    for those tuples; typing them and hashing the signature cost far more)."""
    try:
        from numba._dispatcher import compute_fingerprint

        key = (dispatcher, compute_fingerprint(args))
        entry = _overloads.get(key)
        if entry is None:
            compiled_result = dispatcher.overloads.get(
                tuple(map(dispatcher.typeof_pyval, args)))
            if compiled_result is None:
                return None
            entry = _overloads[key] = compiled_result.entry_point
    except (ImportError, AttributeError, TypeError, ValueError, NotImplementedError):
        return None  # not a numba dispatcher, or arguments numba cannot fingerprint
    return entry


def plain_kernels() -> bool:
    """BATTLECALC_PLAIN_KERNELS=1: kernels are never compiled (slow; for tests and coverage)."""
    return os.environ.get(PLAIN_ENV, "").strip() == "1"


def is_compiled() -> bool:
    return _state["compiled"]


def kernel_sources_digest() -> str:
    """A digest of every source file of battlecalc/kernels (the code a kernel may reach)."""
    folder = os.path.dirname(os.path.abspath(__file__))
    digest = hashlib.sha256()
    for name in sorted(os.listdir(folder)):
        if name.endswith(".py"):
            with open(os.path.join(folder, name), "rb") as f:
                digest.update(name.encode() + b"\0" + f.read() + b"\0")
    return digest.hexdigest()


def _track_kernel_sources(numba) -> None:
    """Make the cache of a function defined in battlecalc/kernels fresh only while every kernel
    file is unchanged: numba's locators, each with a source stamp that adds the kernel files'
    digest, put in front for those functions alone (other numba code keeps its own)."""
    from numba.core import caching

    if getattr(caching.CacheImpl, "_battlecalc_tracked", False):
        return
    folder = os.path.dirname(os.path.abspath(__file__))
    stamp = kernel_sources_digest()

    def tracking(locator):
        class KernelSourcesLocator(locator):
            @classmethod
            def from_function(cls, py_func, py_file):
                if os.path.dirname(os.path.abspath(py_file)) != folder:
                    return None
                return super().from_function(py_func, py_file)

            def get_source_stamp(self):
                return (super().get_source_stamp(), stamp)

        KernelSourcesLocator.__name__ = f"KernelSources{locator.__name__}"
        return KernelSourcesLocator

    caching.CacheImpl._locator_classes = [
        *(tracking(c) for c in caching.CacheImpl._locator_classes),
        *caching.CacheImpl._locator_classes]
    caching.CacheImpl._battlecalc_tracked = True


def _jit(numba, func, options):
    try:
        return numba.njit(cache=True, **options)(func)
    except RuntimeError as exc:  # "cannot cache function ...: no locator available"
        if "cache" not in str(exc):
            raise
    fallback = os.path.join(tempfile.gettempdir(), f"battlecalc-numba-{os.getuid()}")
    try:
        os.makedirs(fallback, exist_ok=True)
        numba.config.CACHE_DIR = fallback
        return numba.njit(cache=True, **options)(func)
    except (OSError, RuntimeError):
        return numba.njit(cache=False, **options)(func)


def cache_is_cold(dispatcher) -> bool:
    """True when a compiled kernel is not on disk yet (calling it compiles it, seconds)."""
    cache_file = getattr(getattr(dispatcher, "_cache", None), "_cache_file", None)
    path = getattr(cache_file, "_index_path", None)
    return path is not None and not os.path.exists(path)


def compiling_notice(dispatcher, progress) -> None:
    """Tell progress(done, total, what) that the kernel is about to be compiled, if it is."""
    if progress is not None and cache_is_cold(dispatcher):
        progress(0, 0, "compiling kernels (first run only)")


def compiled():
    """Compile every kernel module with numba (once; thread-safe: a second caller waits for
    the first) and rebind the module globals to the compiled dispatchers.  Does nothing under
    BATTLECALC_PLAIN_KERNELS=1."""
    if _state["compiled"] or plain_kernels():
        return
    with _locks["compile"]:
        if _state["compiled"]:
            return
        import numba

        _track_kernel_sources(numba)
        modules = [importlib.import_module(name) for name in KERNEL_MODULES]
        jitted = {}
        for module in modules:
            for obj in list(vars(module).values()):
                options = getattr(obj, _MARK, None)
                if options is not None and getattr(obj, "__module__", None) == module.__name__:
                    jitted[id(obj)] = _jit(numba, obj, options)
        for module in modules:
            for name, obj in list(vars(module).items()):
                if id(obj) in jitted:
                    setattr(module, name, jitted[id(obj)])
        _state["compiled"] = True
