"""Every answer of the golden (tests/golden.py) equal to the last bit: the engine room's
restructuring changes no answer by accident."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

import golden
import numpy as np
import pytest

from battlecalc.kernels import jit

with open(golden.FIXTURE) as _f:
    CASES = json.load(_f)["cases"]

# the golden was recorded where long double is x87's 80 bits (x86-64 Linux or macOS), in which
# dice.convolve adds; a double under MSVC and 128 bits on ARM change the last bits
pytestmark = pytest.mark.skipif(np.finfo(np.longdouble).nmant != 63,
                                reason="the golden's hit laws were added in 80-bit long double")


@pytest.fixture(scope="module", autouse=True)
def _compiled():
    jit.compiled()  # (recorded with compiled kernels)


# the one battle of the golden too big for the quick tier (tests/tiers.py): 600 units, its
# tables built in the test, 0.77-1.18 s of CPU where a quick test may take 1 s
# (BATTLECALC_FAIL_SLOW=1 failed on it 1 run in 3); pytest --slow and golden.py --check run it
BIG_CASES = frozenset({958})


@pytest.mark.filterwarnings("ignore::battlecalc.errors.BattleInputWarning")
@pytest.mark.parametrize("case", [
    pytest.param(c, id=f"{c['id']}-{c['group']}-{c['variant']}", marks=pytest.mark.slow(
        reason="a battle too big for the quick tier: 600 units, about 1 s of CPU"))
    if c["id"] in BIG_CASES else pytest.param(c, id=f"{c['id']}-{c['group']}-{c['variant']}")
    for c in CASES])
def test_answer_is_bit_identical(case):
    assert golden.digest(golden.solve_case(case)) == case["digest"], case["headline"]


# OpenBLAS's plainest kernel for the machine's architecture (numpy's wheels pick one per CPU)
PLAINEST_BLAS = {"x86_64": "Prescott", "AMD64": "Prescott", "aarch64": "ARMV8", "arm64": "ARMV8"}


def _dispatched_cpu_features() -> list[str]:
    """The CPU features numpy picks code by (SIMD exp, log, power...) that this CPU has."""
    try:
        from numpy._core import _multiarray_umath as umath
    except ImportError:  # numpy 1.x
        from numpy.core import _multiarray_umath as umath
    found = getattr(umath, "__cpu_features__", {})
    return [name for name in getattr(umath, "__cpu_dispatch__", ()) if found.get(name)]


# glibc's pow (a float's **) and exp, log... come in FMA and AVX2 variants picked by CPU, whose
# last bits differ: without them (both spellings: glibc 2.33 dropped the _Usable)
NO_FMA = "glibc.cpu.hwcaps=" + ",".join(
    f"-{name}{suffix}" for name in ("AVX2", "FMA", "FMA4", "AVX512F") for suffix in ("", "_Usable"))


def test_answers_are_the_same_whatever_code_numpy_picks_for_the_cpu():
    """Every third case of the golden again, in a process where numpy runs its baseline code
    (no AVX2 or AVX-512 exp/log/power), OpenBLAS its plainest kernel and glibc its maths
    without FMA: the same digests. Recorded on an AMD EPYC, the golden once differed in 592
    of 992 answers on an Intel Xeon (the order of BLAS's sums, and numpy's SIMD exp and power,
    are the CPU's)."""
    env = dict(os.environ, NPY_DISABLE_CPU_FEATURES=" ".join(_dispatched_cpu_features()),
               GLIBC_TUNABLES=NO_FMA)
    env.pop("NPY_ENABLE_CPU_FEATURES", None)  # (numpy refuses both at once)
    if platform.machine() in PLAINEST_BLAS:
        env["OPENBLAS_CORETYPE"] = PLAINEST_BLAS[platform.machine()]
    done = subprocess.run([sys.executable, golden.__file__, "--check", "--every", "3"],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert ", 0 differ" in done.stdout
