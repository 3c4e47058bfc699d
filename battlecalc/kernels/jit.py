"""Kernels are plain Python until they are worth compiling.

Kernel functions are marked with :func:`kernel` and stay ordinary Python functions, so a small
exact solve runs without importing numba at all (importing numba alone costs about 0.3 s, more
than a small battle takes in Python).  :func:`compiled` compiles every marked function of the
kernel modules with numba, once per process, and rebinds the module globals to the compiled
dispatchers, so a kernel calling another kernel reaches the compiled one.  The
Python functions and the compiled ones are the same source: one implementation, two speeds.

Compiled code is cached on disk (``cache=True``).  Where no cache folder is writable (a read-only
install with an unwritable HOME), the cache moves to a temporary folder, and if even that
fails, kernels are compiled without a cache.
"""

from __future__ import annotations

import concurrent.futures
import importlib
import os
import tempfile
import threading

KERNEL_MODULES = ("battlecalc.kernels.rules", "battlecalc.kernels.montecarlo",
                  "battlecalc.kernels.exact", "battlecalc.kernels.formula")
_MARK = "_battlecalc_kernel"
_state: dict = {"compiled": False}
_compiling = threading.Lock()  # compiled() may be called from several threads (the server)


def kernel(func=None, *, inline: bool = False, nogil: bool = False):
    """Mark a function as a kernel (compiled by :func:`compiled`, Python before that).
    nogil: it releases the GIL, so :func:`threads` can run it on several cores."""

    def mark(f):
        setattr(f, _MARK, {"inline": "always" if inline else "never", "nogil": nogil})
        return f

    return mark(func) if func is not None else mark


def threads(function, n_items: int, *args) -> None:
    """Run function(first, last, *args) over contiguous ranges of range(n_items), one range
    per thread (numba's thread count, which --threads sets).  Kernels run this way write only
    their own items' outputs, so the results do not depend on the number of threads.  Plain
    threads rather than numba's parallel loops: those cost seconds of compiling each."""
    import numba

    n_threads = max(1, min(numba.get_num_threads(), n_items))
    bounds = [n_items * i // n_threads for i in range(n_threads + 1)]
    if n_threads == 1:
        function(0, n_items, *args)
        return
    with concurrent.futures.ThreadPoolExecutor(n_threads) as pool:
        for future in [pool.submit(function, bounds[i], bounds[i + 1], *args)
                       for i in range(n_threads)]:
            future.result()


def is_compiled() -> bool:
    return _state["compiled"]


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
    """Compile every kernel module with numba (once) and return the module namespace."""
    if _state["compiled"]:
        return
    with _compiling:
        if not _state["compiled"]:
            _compile_modules()


def _compile_modules() -> None:
    import numba

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
