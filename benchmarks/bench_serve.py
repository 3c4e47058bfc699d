"""Load on `battlecalc serve`: concurrent small requests on loopback, and warm latency.

Run:  python benchmarks/bench_serve.py [--requests 200] [--sequential 50] [--workers 2]

Starts `python -m battlecalc serve [--workers N]` on a free loopback port (and waits for the
warm-up of every worker process),
then
  1. sends --sequential small battles one after the other (with `distributions=1`, as the
     page asks) and prints the median and p99 latency: the "answers while you type" figure;
  2. sends --requests small battles at once (one thread and connection each, released
     together) and prints errors (must be 0), p50, p99 and the longest latency.
Every request has a 60 s timeout and the whole run a deadline; the server is stopped at the
end.  Traffic goes to 127.0.0.1 only.  Prints, never asserts (the error count sets the exit
status).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse

MAX_REQUESTS = 1000
DEADLINE_S = 600.0
REQUEST_TIMEOUT_S = 60.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def small_battles(n: int) -> list[dict]:
    """n small battles of every kind (land, sea, amphibious, Monte Carlo, formula)."""
    kinds = [
        lambda i: {"rules": "1942-2e", "attacker": f"{1 + i % 4} inf 1 art 1 tank",
                   "defender": f"{2 + i % 3} inf 1 tank"},
        lambda i: {"rules": "revised", "attacker": f"{1 + i % 3} inf 1 arm 1 ftr",
                   "defender": f"{1 + i % 4} inf 1 aa"},
        lambda i: {"rules": "1942-2e", "sea": "1", "attacker": f"{1 + i % 3} sub 1 dd",
                   "defender": "1 dd 1 tt"},
        lambda i: {"rules": "1942-2e", "attacker": "1 tank", "landing": f"{1 + i % 3} inf",
                   "bombard": "1 bb", "defender": "2 inf"},
        lambda i: {"rules": "revised", "attacker": f"{1 + i % 5} inf", "defender": "2 inf",
                   "method": "mc", "trials": "20000", "seed": str(i)},
        lambda i: {"rules": "formula", "attacker": f"{1 + i % 4} army", "defender": "2 army"},
    ]
    return [kinds[i % len(kinds)](i) for i in range(n)]


def get(port: int, params: dict) -> tuple[int, float, dict]:
    path = "/api/run?" + urllib.parse.urlencode(params)
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT_S)
    try:
        connection.request("GET", path, headers={"X-Battlecalc-Client": "bench_serve"})
        response = connection.getresponse()
        body = response.read()
        return response.status, time.perf_counter() - started, json.loads(body)
    finally:
        connection.close()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def start_server(port: int, workers: int = 1) -> subprocess.Popen:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    server = subprocess.Popen(
        [sys.executable, "-m", "battlecalc", "serve", "--port", str(port),
         "--workers", str(workers)], cwd=root,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    started = time.perf_counter()
    while True:
        if server.poll() is not None:
            raise SystemExit(f"the server stopped: {server.stderr.read()}")
        if time.perf_counter() - started > 300:
            server.kill()
            raise SystemExit("the server did not start within 300 s")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                break
        except OSError:
            time.sleep(0.2)
    print(f"page up after {time.perf_counter() - started:.1f} s")
    # the kernels warm up in the background (in each worker): measure from the end of the
    # last warm-up
    warm = 0
    for line in server.stderr:
        warm += "kernels warm" in line
        if warm == workers:
            break
    else:
        raise SystemExit("the server stopped during its warm-up")
    print(f"kernels warm after {time.perf_counter() - started:.1f} s ({line.strip()})")
    return server


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--sequential", type=int, default=50)
    parser.add_argument("--workers", type=int, default=1, help="server processes (serve "
                        "--workers)")
    args = parser.parse_args()
    n = min(args.requests, MAX_REQUESTS)
    deadline = time.monotonic() + DEADLINE_S
    port = free_port()
    server = start_server(port, args.workers)
    print(f"{args.workers} worker process(es)")
    errors = 0
    try:
        # 1. warm latency, one request at a time, as the page asks (with distributions)
        battle = {"rules": "1942-2e", "attacker": "3 inf 1 art 1 tank",
                  "defender": "4 inf 1 tank", "distributions": "1"}
        get(port, battle)
        latencies, solved = [], []
        for _ in range(min(args.sequential, MAX_REQUESTS)):
            if time.monotonic() > deadline:
                break
            status, seconds, data = get(port, battle)
            errors += status != 200
            latencies.append(seconds)
            solved.append(data.get("elapsed_s", 0.0))
        print(f"\nsequential: {len(latencies)} requests, {battle['attacker']} v "
              f"{battle['defender']} (exact, with distributions)")
        print(f"  end to end   p50 {1000 * statistics.median(latencies):6.1f} ms   "
              f"p99 {1000 * percentile(latencies, 0.99):6.1f} ms")
        print(f"  solve (simulate's elapsed_s) p50 {1000 * statistics.median(solved):6.1f} ms"
              "   (repeats after the first are answered from the server's cache)")
        # 1b. the same, each request a battle not asked before (nothing from the cache)
        fresh = []
        for i in range(min(args.sequential, MAX_REQUESTS)):
            if time.monotonic() > deadline:
                break
            other = {**battle, "attacker": f"{3 + i % 10} inf 1 art 1 tank",
                     "defender": f"{4 + i // 10} inf 1 tank"}
            status, seconds, _ = get(port, other)
            errors += status != 200
            fresh.append(seconds)
        print(f"sequential, {len(fresh)} different battles of that size (not cached)")
        print(f"  end to end   p50 {1000 * statistics.median(fresh):6.1f} ms   "
              f"p99 {1000 * percentile(fresh, 0.99):6.1f} ms")

        # 2. n requests at once
        battles = small_battles(n)
        results: list = [None] * n
        gate = threading.Barrier(n)

        def one(i: int) -> None:
            gate.wait()
            try:
                status, seconds, data = get(port, battles[i])
                results[i] = (status, seconds, data.get("error"))
            except Exception as exc:  # a refused or dropped connection is an error
                results[i] = (None, float("nan"), repr(exc))

        threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(max(1.0, deadline - time.monotonic()))
        wall = time.perf_counter() - started
        failed = [r for r in results if r is None or r[0] != 200]
        errors += len(failed)
        ok = [r[1] for r in results if r is not None and r[0] == 200]
        print(f"\nconcurrent: {n} small requests at once (land, sea, amphibious, Monte Carlo "
              "20,000 trials, formula; repeated exact battles answered from the cache)")
        print(f"  errors {len(failed)}   wall {wall:.2f} s   ({n / wall:.0f} requests/s)")
        if ok:
            print(f"  latency p50 {1000 * statistics.median(ok):6.1f} ms   "
                  f"p99 {1000 * percentile(ok, 0.99):6.1f} ms   max {1000 * max(ok):6.1f} ms")
        for status, _, message in [f for f in failed if f is not None][:5]:
            print(f"  error: HTTP {status}: {message}")
    finally:
        server.terminate()
        try:
            server.wait(15)
        except subprocess.TimeoutExpired:
            server.kill()
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
