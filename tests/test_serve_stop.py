"""`battlecalc serve` stops quietly (issue 43, friction 9): Ctrl-C in its terminal printed
"Aborted." (and the child compiling the kernels a traceback), SIGTERM a traceback of the
request cut short by the graceful shutdown's time limit.  Each case here starts a server in a
terminal of its own (a pseudo-terminal: Ctrl-C reaches the server and its child as typed)
from an empty numba cache, so that the warm-up's child is compiling and a Monte Carlo request
waits for its kernel, then stops it."""

from __future__ import annotations

import fcntl
import os
import select
import signal
import socket
import sys
import termios
import threading
import time
import urllib.request

import pytest

pty = pytest.importorskip("pty")
pytest.importorskip("uvicorn")

pytestmark = pytest.mark.slow

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOISE = ("Aborted", "Traceback", "ERROR", "Task was destroyed", "Exception")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _serve_then_stop(tmp_path, stop) -> tuple[str, int]:
    """Output and wait status of a server stopped by stop(pid, terminal) while a request
    runs."""
    port = _free_port()
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba"), "PYTHONPATH": ROOT}
    env.pop("BATTLECALC_PLAIN_KERNELS", None)
    folder = tmp_path / "saves"
    folder.mkdir()
    # the terminal's other end stays open here too, so that what the server writes as it
    # exits is read whatever the moment its end of the terminal closes
    terminal, slave = pty.openpty()
    pid = os.fork()
    if pid == 0:  # the child: the server, in the new terminal, a page following its board
        os.close(terminal)
        os.setsid()
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
        for fd in (0, 1, 2):
            os.dup2(slave, fd)
        os.execve(sys.executable, [sys.executable, "-m", "battlecalc", "serve", "--port",
                                   str(port), "--watch", str(folder)], env)
    out = bytearray()

    def read(seconds: float, until: bytes | None = None) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and (until is None or until not in out):
            ready, _, _ = select.select([terminal], [], [], 0.1)
            if ready:
                try:
                    out.extend(os.read(terminal, 65536))
                except OSError:  # the server gone
                    return

    try:
        read(60, b"serving http")
        assert b"serving http" in out, out.decode(errors="replace")
        read(5)  # (the child is compiling the kernels by now)
        url = (f"http://127.0.0.1:{port}/api/run?rules=1942-2e&attacker=6+inf+3+art"
               "&defender=8+inf&method=mc&trials=9000000&seed=1")
        request = urllib.request.Request(url, headers={"X-Battlecalc-Client": "tests",
                                                       "Accept": "application/x-ndjson"})

        board = urllib.request.Request(f"http://127.0.0.1:{port}/api/watch",
                                       headers={"X-Battlecalc-Client": "tests"})

        def ask(what) -> None:
            try:
                with urllib.request.urlopen(what, timeout=60) as answer:
                    answer.read()
            except OSError:
                pass

        for what in (board, request):
            threading.Thread(target=ask, args=(what,), daemon=True).start()
        read(2.5)
        stop(pid, terminal)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            read(0.5)
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                read(0.5)
                return out.decode(errors="replace"), status
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        pytest.fail(f"the server did not stop: {out.decode(errors='replace')}")
    finally:
        os.close(terminal)
        os.close(slave)


def test_ctrl_c_stops_the_server_with_one_line(tmp_path):
    text, status = _serve_then_stop(tmp_path, lambda pid, terminal: os.write(terminal, b"\x03"))
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, (status, text)
    assert "battlecalc: stopped" in text
    for word in NOISE:
        assert word not in text, text


def test_sigterm_stops_the_server_without_a_traceback(tmp_path):
    text, status = _serve_then_stop(tmp_path, lambda pid, terminal: os.kill(pid,
                                                                            signal.SIGTERM))
    assert (os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM) or (
        os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0), (status, text)
    for word in NOISE:
        assert word not in text, text
