"""The only code of battlecalc that uses numba's private APIs, three of them, each tested
(tests/kernels/test_numba_private.py) so that a numba release that changes them fails a test
rather than a user's run; pyproject.toml bounds numba below its next major version.

* :func:`track_kernel_sources`: numba judges a cached kernel fresh by its own source file
  only; kernels inline and call kernels of the other kernel files, so their caches are stamped
  with a digest of every kernel file (numba.core.caching.CacheImpl._locator_classes).
* :func:`cached_overloads`: the overloads numba's cache holds for a dispatcher, valid for its
  source and this CPU (the cache's index, numba.core.caching.IndexDataCacheFile._load_index).
* :func:`overload`: the compiled entry point a dispatcher would run for arguments of given
  types, found once per fingerprint of them (numba._dispatcher.compute_fingerprint), so that a
  caller making many calls with arguments of one set of types skips the dispatcher's typing of
  every argument (about 4 us for the exact solver's 30 arrays, more than a tiny battle's
  solve).
"""

from __future__ import annotations

from collections.abc import Callable


def track_kernel_sources(stamp: str, in_kernels: Callable[[str], bool]) -> None:
    """Make the cache of a function defined in a file where in_kernels(path) holds fresh only
    while `stamp` (the digest of every kernel file) is unchanged: numba's locators, each with a
    source stamp that adds it, put in front for those functions alone (other numba code keeps
    its own).  Once per process."""
    from numba.core import caching

    if getattr(caching.CacheImpl, "_battlecalc_tracked", False):
        return

    def tracking(locator):
        class KernelSourcesLocator(locator):
            @classmethod
            def from_function(cls, py_func, py_file):
                if not in_kernels(py_file):
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


def cached_overloads(dispatcher) -> int:
    """How many compiled overloads numba's cache holds for a dispatcher (cache=True) that
    are valid now (its source stamp, numba's version) and built for this CPU: 0 where the
    first call compiles.  0 as well where the dispatcher has no cache or it cannot be read."""
    cache_file = getattr(getattr(dispatcher, "_cache", None), "_cache_file", None)
    if cache_file is None:
        return 0
    try:
        index = cache_file._load_index()  # {} where absent, stale or of another numba
        if not index:
            return 0
        from numba.core.registry import cpu_target

        magic = cpu_target.target_context.codegen().magic_tuple()
    except Exception:  # noqa: BLE001 - an unreadable cache is a cold one
        return 0
    return sum(1 for key in index if isinstance(key, tuple) and len(key) > 1
               and key[1] == magic)


_overloads: dict = {}  # (dispatcher, numba's fingerprint of the arguments) -> entry point


def overload(dispatcher, args):
    """The compiled code `dispatcher` runs for arguments of the types of `args` (the same
    shapes of tuples, dtypes and layouts of arrays, kinds of numbers), callable as
    dispatcher(*args), or None where it has none compiled for exactly those types, or where
    `dispatcher` is not a numba dispatcher (plain Python kernels).

    The overload is found by the exact signature of the arguments, the one the dispatcher
    would run (it prefers an exact match), once per fingerprint of them (numba's own, from
    their type codes, dtypes and layouts, about 3 us for the exact solver's tuples; typing
    them and hashing the signature cost far more)."""
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
