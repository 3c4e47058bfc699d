"""Run battlecalc in a child process under a memory limit, and measure it: for tests of
hostile inputs, where a regression could otherwise eat the machine's memory.

The child caps its own address space (``resource.setrlimit(RLIMIT_AS)``) before it imports
battlecalc (no ``preexec_fn``: the test process may run threads, a test server's), and reports
its own peak resident memory (VmHWM) as it exits.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

# numba, LLVM and numpy reserve about 1.5 GB of address space that they never touch: the
# limit is a safety net well above that; tests assert on the peak resident memory
ADDRESS_SPACE = 3 * 2**30

_CHILD = ("import atexit, resource, runpy, sys\n"
          "limit, report = int(sys.argv.pop(1)), sys.argv.pop(1)\n"
          "resource.setrlimit(resource.RLIMIT_AS, (limit, limit))\n"
          "def peak():\n"
          "    with open('/proc/self/status') as status, open(report, 'w') as out:\n"
          "        out.write(next(line for line in status if line.startswith('VmHWM:')))\n"
          "atexit.register(peak)\n"
          "sys.argv[0] = 'battlecalc'\n"
          "runpy.run_module('battlecalc', run_name='__main__')\n")


@dataclass(frozen=True)
class Finished:
    returncode: int  # negative: killed by that signal (-9 at the timeout)
    stdout: str
    stderr: str
    peak_rss: int | None  # bytes: the child's largest resident set (None: it was killed)
    seconds: float


def run_limited(*args: str, timeout: float = 60.0, address_space: int = ADDRESS_SPACE,
                cwd: str | os.PathLike | None = None) -> Finished:
    """``battlecalc ARGS`` in a child process whose address space is capped; killed at the
    timeout.  Its peak resident memory is its own VmHWM, written as it exits (os.wait4's
    ru_maxrss would count the test process's memory, which a forked child shares until exec);
    None when it did not exit by itself."""
    with tempfile.TemporaryDirectory() as folder:
        out, err, report = (os.path.join(folder, name) for name in ("out", "err", "peak"))
        started = time.monotonic()
        with open(out, "wb") as stdout, open(err, "wb") as stderr:
            child = subprocess.Popen(
                [sys.executable, "-c", _CHILD, str(address_space), report, *args],
                stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr, cwd=cwd)
            try:
                child.wait(timeout)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
        seconds = time.monotonic() - started
        peak = None
        if os.path.exists(report):
            with open(report) as handle:
                peak = int(handle.read().split()[1]) * 1024  # "VmHWM:  123 kB"
        with open(out, "rb") as stdout, open(err, "rb") as stderr:
            return Finished(child.returncode, stdout.read().decode("utf-8", "replace"),
                            stderr.read().decode("utf-8", "replace"), peak, seconds)
