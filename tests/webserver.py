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

from battlecalc.web.server import Engine, create_app


@contextlib.contextmanager
def running_server(engine: Engine | None = None, warm: bool = False, timeout: float = 300.0):
    """Yield the base URL (http://127.0.0.1:PORT) of a started server; stop it afterwards."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = create_app(engine, warm=warm)
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                            access_log=False, lifespan="on")
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


def request(base: str, method: str, path: str, body: bytes | None = None,
            headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    """One raw HTTP request (the path is sent exactly as given): status, headers, body."""
    parts = urllib.parse.urlsplit(base)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=120)
    try:
        connection.request(method, path, body=body, headers=headers or {})
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
