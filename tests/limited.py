"""Running a hostile input in a child process under limits: an address-space limit
(``resource.setrlimit``, set by the child on itself before it imports anything of battlecalc)
and a timeout, so that a regression (a parser taking gigabytes, or minutes) fails its test
instead of taking the machine down.  The child reports its own peak resident memory (Linux's
VmHWM, of its own process image: ``ru_maxrss`` would count the test process it was forked
from) and the parent times it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEMORY_MB = 1024  # address space of the child: numba's compiled kernels fit (a solve needs them)
TIMEOUT_S = 60.0
# the child: limit itself, report its peak at exit (to the file in argv[2]), then run the
# command line (argv[3] "cli": battlecalc's; "python": the code in argv[4], its arguments after)
CHILD = """
import atexit, resource, sys
limit = int(sys.argv[1]) << 20
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
report = sys.argv[2]

def peak():
    with open("/proc/self/status") as status:
        kb = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    with open(report, "w") as out:
        out.write(str(kb))

atexit.register(peak)
kind = sys.argv[3]
if kind == "cli":
    sys.argv = ["battlecalc", *sys.argv[4:]]
    from battlecalc.cli import main
    main()
else:
    code = sys.argv[4]
    sys.argv = ["-c", *sys.argv[5:]]
    exec(compile(code, "<probe>", "exec"), {"__name__": "__main__"})
"""


@dataclass
class Finished:
    exit_code: int | None  # None: killed at the timeout
    stdout: str
    stderr: str
    seconds: float  # wall time of the child, its start-up included
    peak_mb: float  # its peak resident memory (NaN: it did not exit by itself)

    @property
    def returncode(self) -> int:
        """The exit status (-9 where it was killed at the timeout)."""
        return -9 if self.exit_code is None else self.exit_code

    @property
    def peak_rss(self) -> int | None:
        """The peak resident memory in bytes (None: it did not exit by itself)."""
        return None if self.peak_mb != self.peak_mb else int(self.peak_mb * 2**20)

    def json(self):
        """The last line of standard output, as JSON (a probe's answer)."""
        return json.loads(self.stdout.strip().splitlines()[-1])


def _run(kind: str, args: list[str], memory_mb: int = MEMORY_MB, timeout: float = TIMEOUT_S
         ) -> Finished:
    with tempfile.TemporaryDirectory() as folder:
        report = os.path.join(folder, "peak")
        out_path, err_path = os.path.join(folder, "out"), os.path.join(folder, "err")
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            started = time.perf_counter()
            try:
                code = subprocess.run([sys.executable, "-c", CHILD, str(memory_mb), report, kind,
                                       *args], stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                      cwd=REPO, timeout=timeout).returncode
            except subprocess.TimeoutExpired:
                code = None
            seconds = time.perf_counter() - started
        peak_mb = int(open(report).read()) / 1024 if os.path.exists(report) else float("nan")
        with open(out_path, "rb") as out, open(err_path, "rb") as err:
            return Finished(code, out.read().decode(errors="replace"),
                            err.read().decode(errors="replace"), seconds, peak_mb)


def cli_limited(*args: str, **limits) -> Finished:
    """`battlecalc ARGS...` in a child process under the limits."""
    return _run("cli", list(args), **limits)


def run_limited(*args: str, timeout: float = TIMEOUT_S, address_space: int = 3 * 2**30
                ) -> Finished:
    """`battlecalc ARGS...` under an address-space cap of `address_space` bytes (numba, LLVM
    and numpy reserve about 1.5 GB they never touch: tests assert on the peak resident memory),
    killed at the timeout."""
    return _run("cli", list(args), memory_mb=address_space >> 20, timeout=timeout)


def python_limited(code: str, *args: str, **limits) -> Finished:
    """`python -c CODE ARGS...` in a child process under the limits."""
    return _run("python", [code, *args], **limits)


def assert_refused(done: Finished, fragment: str | None = None) -> str:
    """The CLI's refusal: exit status 2, one ``Error: ...`` line on stderr, nothing on stdout,
    no traceback."""
    assert done.exit_code == 2, (done.exit_code, done.stderr[-2000:])
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), done.stderr[-2000:]
    if fragment is not None:
        assert fragment in lines[0], lines[0]
    return lines[0]
