"""numba judges a cached kernel fresh by its own source file only, while kernels inline and call
kernels and constants of the other kernel files: an edit of the round model (kernels/round_model.py)
once left the Monte Carlo kernel's stale compiled code in use, with wrong odds.  Every kernel's
cache is keyed on all the kernel files (jit._track_kernel_sources); these tests check the key
without compiling anything."""

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import battlecalc

PACKAGE = Path(battlecalc.__file__).parent

PROBE = textwrap.dedent("""
    import numba
    from numba.core import caching
    from battlecalc.kernels import jit, montecarlo

    jit._track_kernel_sources(numba)
    kernel = caching.CompileResultCacheImpl(montecarlo.next_uniform)._locator

    def elsewhere():  # a function outside battlecalc/kernels keeps numba's own locator
        return 1

    other = caching.CompileResultCacheImpl(elsewhere)._locator
    print(type(kernel).__name__, type(other).__name__)
    print(repr(kernel.get_source_stamp()))
""")


def _probe(root: Path) -> tuple[str, str, str]:
    script = root / "probe.py"
    script.write_text(PROBE)
    env = {**os.environ, "PYTHONPATH": str(root), "NUMBA_CACHE_DIR": str(root / "cache")}
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                         text=True, timeout=120, check=True).stdout.splitlines()
    kernel_locator, other_locator = out[0].split()
    return kernel_locator, other_locator, out[1]


@pytest.mark.slow
def test_a_kernel_cache_goes_stale_when_another_kernel_file_changes(tmp_path):
    shutil.copytree(PACKAGE, tmp_path / "battlecalc",
                    ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    kernel_locator, other_locator, before = _probe(tmp_path)
    assert kernel_locator.startswith("KernelSources")
    assert not other_locator.startswith("KernelSources")
    assert _probe(tmp_path)[2] == before  # nothing changed: the cache stays fresh

    rules = tmp_path / "battlecalc" / "kernels" / "rules.py"  # not the Monte Carlo file
    rules.write_text(rules.read_text() + "\n# an edit of the round model\n")
    assert _probe(tmp_path)[2] != before
