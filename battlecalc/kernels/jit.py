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
files: every kernel's cache is keyed on all the kernel files, subfolders included
(:func:`kernel_sources_digest`, numba_private.track_kernel_sources), so an edit of one (say the
round model) never leaves another running stale compiled code.

``BATTLECALC_PLAIN_KERNELS=1`` keeps every kernel
in plain Python (nothing is compiled, numba is not imported): slow, for tests and coverage.

This module is the marker and the compile registry; the threads kernels run on are
battlecalc.solver.threads'.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import tempfile
import threading

# every module of kernels compile() compiles (and rebinds), callees before their callers
KERNEL_MODULES = ("battlecalc.kernels.round_model", "battlecalc.kernels.montecarlo",
                  "battlecalc.kernels.exact.pairs", "battlecalc.kernels.exact.fire",
                  "battlecalc.kernels.exact.sweep", "battlecalc.kernels.batch",
                  "battlecalc.kernels.formula")
FOLDER = os.path.dirname(os.path.abspath(__file__))  # the kernels' folder (and subfolders)
_MARK = "_battlecalc_kernel"
_state: dict = {"compiled": False}


def kernel(func=None, *, inline: bool = False, nogil: bool = False, refs: bool = True):
    """Mark a function as a kernel (compiled by :func:`compiled`, Python before that).
    nogil: it releases the GIL, so solver.threads can run it on several cores.
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


PLAIN_ENV = "BATTLECALC_PLAIN_KERNELS"  # "1": never compile, every kernel stays plain Python
_locks = {"compile": threading.Lock()}


def _forget_lock_after_fork() -> None:
    _locks.update(compile=threading.Lock())


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_lock_after_fork)


def plain_kernels() -> bool:
    """BATTLECALC_PLAIN_KERNELS=1: kernels are never compiled (slow; for tests and coverage)."""
    return os.environ.get(PLAIN_ENV, "").strip() == "1"


def is_compiled() -> bool:
    return _state["compiled"]


def plain(function):
    """A kernel as plain Python, compiled or not (the same source: the same answers)."""
    return getattr(function, "py_func", function)


def kernel_sources() -> list[str]:
    """The source files of battlecalc/kernels and its subfolders (the code a kernel may
    reach), as paths relative to the folder, sorted."""
    found = []
    for top, folders, names in os.walk(FOLDER):
        folders[:] = sorted(f for f in folders if f != "__pycache__")
        found += [os.path.relpath(os.path.join(top, n), FOLDER) for n in names
                  if n.endswith(".py")]
    return sorted(found)


def kernel_sources_digest() -> str:
    """A digest of every source file of battlecalc/kernels, subfolders included."""
    digest = hashlib.sha256()
    for name in kernel_sources():
        with open(os.path.join(FOLDER, name), "rb") as f:
            digest.update(name.encode() + b"\0" + f.read() + b"\0")
    return digest.hexdigest()


def in_kernels(path: str) -> bool:
    """Whether a source file lies in battlecalc/kernels or one of its subfolders."""
    return os.path.abspath(path).startswith(FOLDER + os.sep)


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

        from .numba_private import track_kernel_sources

        track_kernel_sources(kernel_sources_digest(), in_kernels)
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
