"""A battlecalc web server on a free loopback port, in a thread of the test process (so it
shares numba's compiled kernels with the other tests), for the API and browser tests."""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import threading
import time
import urllib.parse

import uvicorn
from tiers import starts

from battlecalc.web.server import Engine, create_app


@starts("a server (webserver.running_server)")  # the slow tier (tests/tiers.py)
@contextlib.contextmanager
def running_server(engine: Engine | None = None, warm: bool = False, timeout: float = 300.0,
                   **app_options):
    """Yield the base URL (http://127.0.0.1:PORT) of a started server; stop it afterwards.
    app_options: create_app's (watch, watch_interval)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = create_app(engine, warm=warm, **app_options)
    # (an open board stream would hold the server's shutdown: it waits 2 s for it at most)
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                            access_log=False, lifespan="on", timeout_graceful_shutdown=2)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(15)
        sock.close()


def without_time(data: dict) -> dict:
    """An answer without its time (`elapsed_s`), which no two runs share."""
    return {k: v for k, v in data.items() if k != "elapsed_s"}


# what the page sends with its API requests, and a client must (battlecalc.web.server.PageOnly)
CLIENT = {"X-Battlecalc-Client": "tests"}


def request(base: str, method: str, path: str, body: bytes | None = None,
            headers: dict[str, str] | None = None, client: bool = True,
            ) -> tuple[int, dict[str, str], bytes]:
    """One raw HTTP request (the path is sent exactly as given): status, headers, body.
    client: with the header of the page's requests (CLIENT)."""
    parts = urllib.parse.urlsplit(base)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=120)
    try:
        connection.request(method, path, body=body,
                           headers={**(CLIENT if client else {}), **(headers or {})})
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def get_json(base: str, path: str) -> tuple[int, dict]:
    status, _, body = request(base, "GET", path)
    return status, json.loads(body)


def run_query(base: str, **params) -> tuple[int, dict]:
    """GET /api/run with the parameters as a query string."""
    return get_json(base, "/api/run?" + urllib.parse.urlencode(params))


# A server in a child process under a memory limit, for tests whose input could make a server
# eat memory (an upload that a regression would read in the server itself).  No warm-up: small
# battles run as plain Python until kernels are compiled (battlecalc.kernels.jit).
_SERVE_CHILD = """
import json, resource, socket, sys
limit, options = int(sys.argv[1]), json.loads(sys.argv[2])
app_options = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
import uvicorn
from battlecalc.web.server import Engine, create_app
sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
sock.bind(("127.0.0.1", 0))
print(sock.getsockname()[1], flush=True)
config = uvicorn.Config(create_app(Engine(**options), warm=False, **app_options),
                        log_level="warning", access_log=False, lifespan="on",
                        timeout_graceful_shutdown=2)
uvicorn.Server(config).run(sockets=[sock])
"""


@contextlib.contextmanager
def server_process(address_space: int = 3 * 2**30, timeout: float = 60.0,
                   app_options: dict | None = None, **engine_options):
    """Yield (base URL, pid) of a server in a child process whose address space is capped;
    engine_options: keywords of Engine; app_options: create_app's (watch, watch_interval)."""
    import subprocess
    import sys

    child = subprocess.Popen(
        [sys.executable, "-c", _SERVE_CHILD, str(address_space), json.dumps(engine_options),
         json.dumps(app_options or {})],
        stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    try:
        port = int(child.stdout.readline())
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + timeout
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if child.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the test server did not start") from None
                time.sleep(0.05)
        yield base, child.pid
    finally:
        child.terminate()
        try:
            child.wait(15)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        child.stdout.close()


def status_kb(pid: int, field: str) -> int:
    """A figure of /proc/PID/status in kB (VmHWM: the peak resident memory; VmRSS: now)."""
    with open(f"/proc/{pid}/status") as status:
        line = next(line for line in status if line.startswith(field + ":"))
    return int(line.split()[1])


def children(pid: int) -> list[str]:
    """The command lines of the processes whose parent is `pid`."""
    import os

    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
            if parent == pid:
                with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                    found.append(cmdline.read().replace(b"\0", b" ").decode())
        except (OSError, ValueError, IndexError):  # gone meanwhile
            continue
    return found
