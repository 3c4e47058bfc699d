"""The engine's threads: one persistent pool of :func:`thread_count` threads, which
:func:`set_threads` (``--threads``) or ``BATTLECALC_THREADS`` sizes, by default the cores this
process may use.  Kernels run on it (:func:`threads`, :func:`call`); numba's own thread pool is
never started (no kernel uses its parallel loops).  The calling thread only waits, so Ctrl-C
reaches it at once; drivers keep each kernel call short (about a quarter of a second) so that
the work in flight when it comes ends soon too.
"""

from __future__ import annotations

import concurrent.futures
import os
import queue
import threading

from ..errors import BattleInputError, quoted
from ..kernels import jit

THREADS_ENV = "BATTLECALC_THREADS"
MAX_THREADS = 1024
RANGES_PER_THREAD = 4  # threads(): pieces of work a thread, for balance
_locks = {"pool": threading.Lock()}
_pool: dict = {"size": None, "workers": None}  # size None: not chosen yet (the default)


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _checked_count(value, where: str) -> int:
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
    _locks.update(pool=threading.Lock())
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


def threads(function, n_items: int, *args, short: bool = False,
            compiled: bool | None = None) -> None:
    """Run function(first, last, *args) over contiguous ranges of range(n_items), a few ranges
    per thread of the pool (thread_count()).  Kernels run this way write only their own
    items' outputs, so the results do not depend on the number of threads.  Compiled kernels
    (which must release the GIL: kernel(nogil=True)) run on the pool even for one range, so
    that the calling thread keeps answering Ctrl-C, unless the caller says the call is short
    (handing it to a pool thread costs about 0.1 ms); plain Python ones run in the caller when
    there is one range.  Plain threads rather than numba's parallel loops: those cost seconds
    of compiling each, and numba's own thread pool.  compiled: whether the kernel runs
    compiled (default: whether the kernels are, jit.is_compiled(); a solve in plain Python
    in a process that has compiled them says False: jit.kernels)."""
    n_threads = max(1, min(thread_count(), n_items))
    if compiled is None:
        compiled = jit.is_compiled()
    if not compiled:
        function = _as_plain_python(function)
    if n_threads == 1 and (short or not compiled):
        function(0, n_items, *args)
        return
    # a few ranges a thread, taken in turn by whichever thread is free: a thread the system
    # holds back (a busy machine) or a slower range does not leave the others waiting
    n_ranges = 1 if n_threads == 1 else min(n_items, RANGES_PER_THREAD * n_threads)
    bounds = [n_items * i // n_ranges for i in range(n_ranges + 1)]
    _wait(_submit_all([(function, (bounds[i], bounds[i + 1], *args))
                       for i in range(n_ranges)]))


def call(function, *args, short: bool = False, compiled: bool | None = None):
    """function(*args) on a pool thread when kernels are compiled (a nogil kernel: the caller
    keeps answering Ctrl-C), in the calling thread when they are not or the call is short;
    its return value.  compiled: as threads()."""
    thread_count()  # a bad BATTLECALC_THREADS is refused whichever thread runs the call
    if compiled is None:
        compiled = jit.is_compiled()
    if not compiled:
        return _as_plain_python(function)(*args)
    if short:
        return function(*args)
    [future] = _submit_all([(function, args)])
    _wait([future])
    return future.result()


