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

After :func:`compiled`, the plain Python kernels stay at hand (:func:`kernels`: copies of the
kernel modules whose kernels call each other as plain Python), so that one process may solve a
battle with compiled kernels (Monte Carlo, say) and a small one in plain Python while the
exact solver's kernels are not compiled yet (solver.plan.kernels_for decides, per solve, from
what is compiled already, what numba's cache holds (:func:`on_disk`) and what the process has
spent in plain Python).  A compile that takes long says so as it goes (:func:`compiling`: each
kernel numba compiles, of how many).

``BATTLECALC_PLAIN_KERNELS=1`` keeps every kernel
in plain Python (nothing is compiled, numba is not imported): slow, for tests and coverage.

This module is the marker and the compile registry; the threads kernels run on are
battlecalc.solver.threads'.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import os
import tempfile
import threading
import types

# every module of kernels compile() compiles (and rebinds), callees before their callers
KERNEL_MODULES = ("battlecalc.kernels.builder", "battlecalc.kernels.round_model",
                  "battlecalc.kernels.montecarlo", "battlecalc.kernels.exact.pairs",
                  "battlecalc.kernels.exact.fire", "battlecalc.kernels.exact.sweep",
                  "battlecalc.kernels.batch", "battlecalc.kernels.formula")
FOLDER = os.path.dirname(os.path.abspath(__file__))  # the kernels' folder (and subfolders)
_MARK = "_battlecalc_kernel"
# compiled: the kernel modules' globals are numba dispatchers (compiled()); everywhere: every
# solve runs compiled kernels from now on (compiled() asked so: a server warmed up, a test)
_state: dict = {"compiled": False, "everywhere": False}
_plain_modules: dict = {}  # module name -> its plain Python kernels, once compiled() has run


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
    """BATTLECALC_PLAIN_KERNELS=1: kernels are never compiled (slow; for tests and coverage).
    Read from the environment once a process (as numba reads its own: a process runs with
    it or without it; os.environ's look-up cost a small battle's choice a third)."""
    plain = _state.get("plain")
    if plain is None:
        plain = _state["plain"] = os.environ.get(PLAIN_ENV, "").strip() == "1"
    return plain


def is_compiled() -> bool:
    """Whether compiled() has run: the kernel modules' kernels are numba dispatchers."""
    return _state["compiled"]


def compiled_everywhere() -> bool:
    """Whether every solve runs compiled kernels (compiled(everywhere=True) has run)."""
    return _state["everywhere"]


def kernels(module, compiled: bool = True):
    """The kernel module a solve calls: the module itself (its compiled dispatchers once
    compiled() has run), or with compiled False a copy of it whose kernels are the plain
    Python functions and call plain Python kernels (made once, whether or not compiled() has
    run: a plain solve never reads the modules' globals, which compiled() may rebind in
    another thread meanwhile)."""
    if compiled or plain_kernels():
        return module
    copies = _plain_modules.get(module.__name__)
    if copies is None:
        with _locks["compile"]:  # (not while compiled() rebinds)
            if not _plain_modules:
                _plain_modules.update(_plain_copies(
                    [importlib.import_module(name) for name in KERNEL_MODULES]))
        copies = _plain_modules[module.__name__]
    return copies


def _plain(obj):
    """A kernel's plain Python function (itself, or a dispatcher's py_func)."""
    return getattr(obj, "py_func", obj)


def _plain_copies(modules) -> dict:
    """Copies of the kernel modules (types.ModuleType, by name) whose kernels are copies of
    the plain Python functions with the copies' globals: every name bound to a kernel or to
    a kernel module there is bound to its copy, so they call each other as plain Python."""
    copies = {m.__name__: types.ModuleType(m.__name__, m.__doc__) for m in modules}
    by_globals = {id(vars(m)): vars(copies[m.__name__]) for m in modules}
    for m in modules:
        vars(copies[m.__name__]).update(vars(m))
    plain = {}  # id of a kernel (its function or its dispatcher) -> its copy
    for m in modules:
        for obj in vars(m).values():
            f = _plain(obj)
            if getattr(f, _MARK, None) is not None and f.__module__ == m.__name__:
                copy = types.FunctionType(f.__code__, by_globals[id(f.__globals__)],
                                          f.__name__, f.__defaults__, f.__closure__)
                copy.__dict__.update(f.__dict__)
                copy.__module__, copy.__qualname__ = f.__module__, f.__qualname__
                plain[id(obj)] = plain[id(f)] = copy
    for copy in copies.values():
        space = vars(copy)
        for name, obj in list(space.items()):
            if id(obj) in plain:
                space[name] = plain[id(obj)]
            elif isinstance(obj, types.ModuleType) and obj.__name__ in copies:
                space[name] = copies[obj.__name__]
    return copies


def kernel_sources(folder: str = FOLDER) -> list[str]:
    """The source files of battlecalc/kernels and its subfolders (the code a kernel may
    reach), as paths relative to the folder, sorted (folder: another copy of it)."""
    found = []
    for top, folders, names in os.walk(folder):
        folders[:] = sorted(f for f in folders if f != "__pycache__")
        found += [os.path.relpath(os.path.join(top, n), folder) for n in names
                  if n.endswith(".py")]
    return sorted(found)


def kernel_sources_digest(folder: str = FOLDER) -> str:
    """A digest of every source file of battlecalc/kernels, subfolders included (folder:
    another copy of it)."""
    digest = hashlib.sha256()
    for name in kernel_sources(folder):
        with open(os.path.join(folder, name), "rb") as f:
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
    """True when a compiled kernel is not on disk for this source and CPU (calling it
    compiles it, seconds), and not compiled in this process either."""
    from .numba_private import cached_overloads

    return not getattr(dispatcher, "overloads", None) and cached_overloads(dispatcher) == 0


def loaded(module_name: str, name: str) -> bool:
    """Whether the kernel module_name.name is compiled (or loaded from the cache) in this
    process already: calling it compiled costs nothing more (for the argument types it was
    compiled for)."""
    if not _state["compiled"]:
        return False
    return bool(getattr(getattr(importlib.import_module(module_name), name), "overloads", None))


_disk_checks: dict = {}  # (module name, kernel name) -> a dispatcher that only reads its cache


def on_disk(module_name: str, name: str) -> bool:
    """Whether numba's cache holds the kernel module_name.name compiled from these kernel
    sources for this CPU: loading it costs a fraction of a second, compiling it seconds or
    a minute.  (Imports numba: for a process that would compile otherwise.)"""
    if plain_kernels():
        return False
    module = importlib.import_module(module_name)
    dispatcher = getattr(module, name)
    if not _state["compiled"]:  # a dispatcher of the plain kernel, to read its cache
        dispatcher = _disk_checks.get((module_name, name))
        if dispatcher is None:
            import numba

            from .numba_private import track_kernel_sources

            track_kernel_sources(kernel_sources_digest(), in_kernels)
            function = getattr(module, name)
            dispatcher = _disk_checks[module_name, name] = _jit(numba, function,
                                                                getattr(function, _MARK))
    return not cache_is_cold(dispatcher)


COMPILING = "compiling kernels (first run only)"


def _reachable(function) -> list:
    """The kernels numba compiles apart when it compiles `function` (itself included): those
    it names, directly or as an attribute of a kernel module, and theirs, but the inlined
    ones (compiled into their callers).  (What a branch numba prunes would call is counted
    too: an upper bound.)"""
    modules = {name: importlib.import_module(name) for name in KERNEL_MODULES}
    seen, found, todo = set(), [], [_plain(function)]
    while todo:
        f = todo.pop()
        if id(f) in seen:
            continue
        seen.add(id(f))
        options = getattr(f, _MARK, None)
        if options is None:
            continue
        if options["inline"] != "always" or not found:
            found.append(f)
        space = f.__globals__
        names = set(f.__code__.co_names)
        for code in f.__code__.co_consts:  # (nested code: comprehensions)
            if isinstance(code, types.CodeType):
                names |= set(code.co_names)
        for n in names:
            obj = space.get(n)
            if isinstance(obj, types.ModuleType) and obj.__name__ in modules:
                todo += [_plain(getattr(obj, a)) for a in names if hasattr(obj, a)]
            elif obj is not None:
                todo.append(_plain(obj))
    return found


@contextlib.contextmanager
def compiling(dispatcher, progress):
    """Around the first call of a kernel: where numba compiles it now (its cache cold),
    progress(0, 0, COMPILING) at once, then progress(0, 0, f"{COMPILING}: {name} ({k} of at
    most {n})") as numba starts each kernel it compiles for it (n: _reachable's count),
    from the thread that compiles it.  Nothing where progress is None or the kernel is
    loaded or on disk."""
    if progress is None or not cache_is_cold(dispatcher):
        yield
        return
    from numba.core import event

    progress(0, 0, COMPILING)
    total = len(_reachable(dispatcher))
    state = {"thread": None, "done": 0}
    entry = _plain(dispatcher)

    class Listener(event.Listener):
        def on_start(self, ev):
            compiled_now = ev.data["dispatcher"]
            py_func = getattr(compiled_now, "py_func", None)
            if state["thread"] is None and py_func is not None and py_func.__code__ is \
                    entry.__code__:
                state["thread"] = threading.get_ident()
            if (state["thread"] != threading.get_ident() or py_func is None
                    or not in_kernels(py_func.__code__.co_filename)):
                return
            state["done"] += 1
            progress(0, 0, f"{COMPILING}: {py_func.__name__} "
                           f"({min(state['done'], total)} of at most {total})")

        def on_end(self, ev):
            pass

    with event.install_listener("numba:compile", Listener()):
        yield


def compiling_notice(dispatcher, progress) -> None:
    """Tell progress(done, total, what) that the kernel is about to be compiled, if it is."""
    if progress is not None and cache_is_cold(dispatcher):
        progress(0, 0, COMPILING)


def compiled(everywhere: bool = True):
    """Compile every kernel module with numba (once; thread-safe: a second caller waits for
    the first) and rebind the module globals to the compiled dispatchers (numba compiles
    each kernel when it is first called, or loads it from its cache); the plain Python
    kernels stay at hand (kernels()).  everywhere: every solve runs compiled kernels from now
    on (else each solve's plan says: solver.plan.kernels_for).  Does nothing under
    BATTLECALC_PLAIN_KERNELS=1."""
    if plain_kernels():
        return
    if not _state["compiled"]:
        with _locks["compile"]:
            if not _state["compiled"]:
                _compile_all()
    if everywhere:
        _state["everywhere"] = True


def _compile_all() -> None:
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
