"""The private numba APIs battlecalc uses (kernels/numba_private.py), each exercised here, so
that a numba release that changes one fails a test rather than a user's run.

* numba.core.caching.CacheImpl._locator_classes (track_kernel_sources): a kernel's cache is
  found by battlecalc's locators, stamped with the digest of every kernel file; a function
  elsewhere keeps numba's own.
* Dispatcher.overloads, Dispatcher.typeof_pyval, CompileResult.entry_point and
  numba._dispatcher.compute_fingerprint (overload): the compiled entry point a dispatcher would
  run for arguments of given types, called straight.
"""

from __future__ import annotations

import numpy as np
import pytest

from battlecalc.kernels import jit, montecarlo, numba_private
from battlecalc.kernels.exact import sweep

pytestmark = pytest.mark.skipif(jit.plain_kernels(), reason="BATTLECALC_PLAIN_KERNELS=1: "
                                "nothing is compiled, numba is not imported")


@pytest.fixture(scope="module")
def caching():
    jit.compiled()  # (installs the locators, once a process)
    from numba.core import caching

    return caching


def test_kernel_caches_are_stamped_with_every_kernel_file(caching):
    assert caching.CacheImpl._battlecalc_tracked
    classes = caching.CacheImpl._locator_classes
    ours = [c for c in classes if c.__name__.startswith("KernelSources")]
    assert ours and classes[:len(ours)] == ours  # in front: tried first
    kernel = caching.CompileResultCacheImpl(montecarlo.next_uniform.py_func)._locator
    assert type(kernel).__name__.startswith("KernelSources")
    own, stamp = kernel.get_source_stamp()
    assert stamp == jit.kernel_sources_digest()
    # (numba's own stamp of the file, as numba's locator gives it)
    plain = type(kernel).__mro__[1].from_function(montecarlo.next_uniform.py_func,
                                                  montecarlo.__file__)
    assert own == plain.get_source_stamp()
    # a kernel of a subfolder too
    deep = caching.CompileResultCacheImpl(sweep._solve_blocks.py_func)._locator
    assert type(deep).__name__.startswith("KernelSources")
    assert deep.get_source_stamp()[1] == stamp


def test_a_function_elsewhere_keeps_numbas_own_locator(caching):
    def elsewhere():  # a function outside battlecalc/kernels
        return 1

    locator = caching.CompileResultCacheImpl(elsewhere)._locator
    assert not type(locator).__name__.startswith("KernelSources")


def test_tracking_is_installed_once(caching):
    before = list(caching.CacheImpl._locator_classes)
    numba_private.track_kernel_sources("another stamp", jit.in_kernels)
    assert caching.CacheImpl._locator_classes == before


def test_overload_is_the_dispatchers_exact_match():
    import numba

    @numba.njit
    def twice(x, pair):
        return 2 * x + pair[0]

    overload = numba_private.overload
    assert overload(twice, (1, (2, 3))) is None  # nothing compiled yet
    assert twice(1.5, (2, 3)) == 5.0 and twice(1, (2.0, 3)) == 4.0
    by_float, by_int = overload(twice, (1.5, (2, 3))), overload(twice, (1, (2.0, 3)))
    assert by_float is not None and by_int is not None and by_float is not by_int
    assert by_float(2.5, (1, 1)) == 6.0 and by_int(3, (0.5, 1)) == 6.5
    assert overload(twice, (np.zeros(2), (1, 1))) is None  # no array overload
    assert overload(len, ([1],)) is None  # not a dispatcher
    # found once per fingerprint of the arguments
    assert overload(twice, (7.5, (0, 0))) is by_float
