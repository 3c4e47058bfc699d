"""First use on a fresh install: the README's commands on a fresh clone, a fresh venv and empty
caches, for one revision or several in turn (issue 28, Must show 1).

Run:  python benchmarks/bench_cold.py REV [REV ...] [--runs 2] [--sequence] [--keep]
      [--work DIR] [--only NAME,...] [--json PATH]
e.g.  python benchmarks/bench_cold.py d05ee80 HEAD       (before / after, in one run)
      python benchmarks/bench_cold.py d05ee80 d05ee80    (the same code twice: the noise)

For each revision (a commit: uncommitted changes are not seen), once:
  1. a fresh clone of this repository (``git clone``, then the commit checked out) in a work
     folder outside the repository (``--work``, default a new temporary folder; removed unless
     ``--keep``);
  2. a fresh virtual environment (``python -m venv``, this Python), and in the clone only the
     README's install command, ``pip install -e '.[dev]'`` (quiet), with a new, empty HOME (the
     user's: the commands get the same one) and pip's download cache outside it: its wall and
     CPU are reported too (work moved to install time shows there);
  3. the clone, the HOME and the venv as the install left them are noted (the clone and the
     HOME copied aside, the venv's file list kept).
Then ``--runs`` times, the revisions in turn (A B, then B A, ...), each command below as its own
process, on the state the install left: before each command every file of the clone or the HOME
created since the install is deleted (numba's cache in the clone's ``__pycache__`` folders,
bytecode, caches under HOME) and every file of theirs changed since is copied back; a new venv
file is deleted, a changed one reported (not restored).  Each command gets a new empty TMPDIR
(numba's fallback cache), cwd = the HOME, PATH with the venv's bin first, and no NUMBA_*,
BATTLECALC_*, PYTHON* or XDG_* variables.  ``--sequence`` resets only before the first command
of a run, so the commands share their caches in order, like a new user's first session.

Commands (the README's examples, exactly):
  run land   battlecalc run --rules 1942-2e --attacker "6 inf, 2 art, 2 tank, 2 ftr"
             --defender "8 inf 1 tank 1 aa"
  run sea    battlecalc run --rules 1942-2e --sea -a "2 sub 1 dd 1 ftr"
             -d "1 cv 2 ftr 1 dd 1 tt"
  run mc     battlecalc run --rules revised -a "3inf 1art 2arm 1bmb" -d "4inf 1aa" --method mc
             --trials 1e6 --seed 7
  plan       battlecalc plan --rules 1942-2e -d "6 inf 2 art 1 tank 1 aa"
             --pool "10 inf 5 art 5 tank 4 ftr 2 bmb" --goal "takes_territory>=0.9" --top 3
  sweep      battlecalc sweep battles.csv --vary attacker.infantry=0..6 --seed 1 -o results.csv
             (the README's table of three battles written to battles.csv in the HOME first)
  serve      battlecalc serve --port P (loopback), then, as a first visitor's page would:
             GET /api/spec until it answers ("page"); GET /api/run with the page's example
             battle (1942-2e, 3 inf 1 art 2 tank 1 ftr v 5 inf 1 tank 1 aa, distributions=1):
             "small" is the time from start until it is answered; then a big Monte Carlo
             request (the big land battle, 1942-2e, 30 inf 10 art 10 tank 8 ftr 4 bmb v
             40 inf 5 art 5 tank 6 ftr, 1,000,000 trials, seed 1): "big MC" its own time and
             status (the server may refuse it while it compiles); then the server's "kernels
             warm" line is awaited (at most 600 s from start: "warm" is when it came) and the
             same big request is sent again: "big MC warm" its time, then the README's optimal
             retreat (1942-2e, 6 inf 2 art 2 tank v 8 inf 2 tank, retreat_policy optimal, as
             the page sends it): "retreat warm" its time.  "warm CPU" is the server's CPU and
             its waited children's (the child compiling the kernels) when the "kernels warm"
             line came (/proc/PID/stat: the requests above included), and "announced" the
             seconds its start line said ("about 80 s"; "about a minute": 60).  The server is
             then stopped (SIGINT); its CPU covers all of that.
CPU is user + system of the command and every process it waited for (this script's
RUSAGE_CHILDREN before and after), wall from start to exit (serve: to the answers above).  Each
command's output is checked against the README's figures (land 84.60%, sea 29.14%, mc 98.95%,
plan's first force "10 infantry, 4 artillery", sweep's "7 of 21 battles failed" on stderr); a
mismatch is printed, never asserted.

The machine is shared (2 cores, other engineers' jobs): every run is printed with the 1-minute
load average at its start, then the median and the range per revision and command.  Only
figures of one invocation compare (the revisions alternate within it).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

from timing import cpu_model

ROOT = Path(__file__).resolve().parents[1]
INSTALL = ["pip", "install", "-q", "-e", ".[dev]"]
COMMANDS = {
    "run land": (["run", "--rules", "1942-2e", "--attacker", "6 inf, 2 art, 2 tank, 2 ftr",
                  "--defender", "8 inf 1 tank 1 aa"], "84.60%"),
    "run sea": (["run", "--rules", "1942-2e", "--sea", "-a", "2 sub 1 dd 1 ftr",
                 "-d", "1 cv 2 ftr 1 dd 1 tt"], "29.14%"),
    "run mc": (["run", "--rules", "revised", "-a", "3inf 1art 2arm 1bmb", "-d", "4inf 1aa",
                "--method", "mc", "--trials", "1e6", "--seed", "7"], "98.95%"),
    "plan": (["plan", "--rules", "1942-2e", "-d", "6 inf 2 art 1 tank 1 aa",
              "--pool", "10 inf 5 art 5 tank 4 ftr 2 bmb", "--goal", "takes_territory>=0.9",
              "--top", "3"], "10 infantry, 4 artillery"),
    "sweep": (["sweep", "battles.csv", "--vary", "attacker.infantry=0..6", "--seed", "1",
               "-o", "results.csv"], "7 of 21 battles failed"),
}
README_BATTLES = """label,rules,attacker,defender,method,trials,seed
Karelia,1942-2e,2 art 2 tank 1 ftr,5 inf 1 art 1 aa,,,
Egypt,revised,1 tank 1 bmb,2 inf 1 art 1 tank,mc,1e5,7
typo,revised,3 inf,2 infanty,,,
"""
SERVE = "serve"
RETREAT = {"rules": "1942-2e", "attacker": "6 inf 2 art 2 tank", "defender": "8 inf 2 tank",
           "retreat_policy": "optimal", "distributions": "1"}
SMALL = {"rules": "1942-2e", "attacker": "3 infantry, 1 artillery, 2 tank, 1 fighter",
         "defender": "5 infantry, 1 tank, 1 aa", "distributions": "1"}
BIG_MC = {"rules": "1942-2e", "attacker": "30 inf 10 art 10 tank 8 ftr 4 bmb",
          "defender": "40 inf 5 art 5 tank 6 ftr", "method": "mc", "trials": "1000000",
          "seed": "1"}
SERVE_DEADLINE_S = 600.0
COMMAND_TIMEOUT_S = 900.0


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def load1() -> float:
    return os.getloadavg()[0]


def git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def resolve(rev: str) -> str:
    out = subprocess.run(["git", "rev-parse", "--verify", f"{rev}^{{commit}}"], cwd=ROOT,
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"unknown revision {rev!r}: {out.stderr.strip()}")
    return out.stdout.strip()


def files_of(tree: Path, skip_git: bool = True) -> dict[str, tuple[int, int]]:
    """relative path -> (size, mtime_ns) of every file (and symlink) under tree."""
    out = {}
    for folder, dirs, names in os.walk(tree):
        if skip_git and ".git" in dirs:
            dirs.remove(".git")
        for name in names:
            path = os.path.join(folder, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            out[os.path.relpath(path, tree)] = (st.st_size, st.st_mtime_ns)
    return out


class Install:
    """One revision's fresh clone and venv, and the state the install left them in."""

    def __init__(self, rev: str, sha: str, work: Path, index: int):
        self.rev, self.sha = rev, sha
        self.base = work / f"{index}-{sha[:12]}"
        self.clone, self.venv = self.base / "clone", self.base / "venv"
        self.home = self.base / "home"  # the user's HOME: new at the install, kept after it
        self.pristine = self.base / "pristine"  # the clone as the install left it
        self.home_pristine = self.base / "home-pristine"  # and the HOME
        self.warned: set[str] = set()

    def env(self, tmp: Path) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("NUMBA_", "BATTLECALC_", "PYTHON", "VIRTUAL_ENV", "XDG_"))}
        env.update(HOME=str(self.home), TMPDIR=str(tmp), VIRTUAL_ENV=str(self.venv),
                   PATH=f"{self.venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
        return env

    def build(self) -> dict:
        self.base.mkdir(parents=True)
        subprocess.run(["git", "clone", "-q", "--no-checkout", str(ROOT), str(self.clone)],
                       check=True)
        if subprocess.run(["git", "checkout", "-q", "--detach", self.sha], cwd=self.clone,
                          capture_output=True).returncode != 0:
            git("fetch", "-q", str(ROOT), self.sha, cwd=self.clone)
            git("checkout", "-q", "--detach", self.sha, cwd=self.clone)
        subprocess.run([sys.executable, "-m", "venv", str(self.venv)], check=True)
        self.home.mkdir()
        tmp = Path(tempfile.mkdtemp(prefix="tmp-", dir=self.base))
        # pip's own download cache outside the HOME (it is not the project's to keep)
        env = dict(self.env(tmp), PIP_CACHE_DIR=str(self.base / "pip-cache"))
        cpu0, started = children_cpu(), time.monotonic()
        done = subprocess.run([str(self.venv / "bin" / INSTALL[0]), *INSTALL[1:]],
                              cwd=self.clone, env=env, capture_output=True, text=True)
        wall, cpu = time.monotonic() - started, children_cpu() - cpu0
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(self.base / "pip-cache", ignore_errors=True)
        if done.returncode != 0:
            sys.exit(f"{self.rev}: pip install failed:\n{done.stderr[-3000:]}")
        shutil.copytree(self.clone, self.pristine, symlinks=True,
                        ignore=shutil.ignore_patterns(".git"))
        shutil.copytree(self.home, self.home_pristine, symlinks=True)
        self.clone_files = files_of(self.pristine)
        self.home_files = files_of(self.home_pristine, skip_git=False)
        self.venv_files = files_of(self.venv)
        self.installed = {"clone": len(self.clone_files), "home": len(self.home_files)}
        versions = subprocess.run(
            [str(self.venv / "bin" / "python"), "-c",
             "import sys, numba, numpy; print(sys.version.split()[0], numba.__version__, "
             "numpy.__version__)"], capture_output=True, text=True, cwd=self.base).stdout.split()
        return {"install_wall_s": wall, "install_cpu_s": cpu,
                "python": versions[0] if versions else "?",
                "numba": versions[1] if len(versions) > 1 else "?",
                "numpy": versions[2] if len(versions) > 2 else "?"}

    def reset(self) -> list[str]:
        """Back to the state the install left (the clone and the HOME restored: files created
        since deleted, files changed since copied back); returns venv files changed since (not
        restored: only new ones are deleted there), each named once."""
        restore(self.clone, self.pristine, self.clone_files)
        restore(self.home, self.home_pristine, self.home_files, skip_git=False)
        changed = []
        now = files_of(self.venv)
        for rel in now.keys() - self.venv_files.keys():
            os.unlink(self.venv / rel)
        for rel, stat in self.venv_files.items():
            if now.get(rel, stat) != stat and rel not in self.warned:
                self.warned.add(rel)
                changed.append(rel)
        return changed


def restore(tree: Path, pristine: Path, files: dict, skip_git: bool = True) -> None:
    """tree back to its copy `pristine` (whose files are `files`)."""
    now = files_of(tree, skip_git)
    for rel in now.keys() - files.keys():
        os.unlink(tree / rel)
    for rel, stat in files.items():
        if now.get(rel) != stat:
            target = tree / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.is_symlink() or target.exists():
                target.unlink()
            shutil.copy2(pristine / rel, target, follow_symlinks=False)
    remove_empty_dirs(tree, {str(Path(p).parent) for p in files})


def remove_empty_dirs(tree: Path, keep: set[str]) -> None:
    for folder, dirs, names in os.walk(tree, topdown=False):
        rel = os.path.relpath(folder, tree)
        if ".git" in Path(rel).parts or rel == "." or rel in keep:
            continue
        if not names and not dirs:
            try:
                os.rmdir(folder)
            except OSError:
                pass


def fresh_tmp(install: Install) -> Path:
    return Path(tempfile.mkdtemp(prefix="tmp-", dir=install.base))


def run_command(install: Install, name: str) -> dict:
    args, expected = COMMANDS[name]
    tmp = fresh_tmp(install)
    if name == "sweep":  # the README's table, where the command runs
        (install.home / "battles.csv").write_text(README_BATTLES)
    try:
        load = load1()
        cpu0, started = children_cpu(), time.monotonic()
        try:
            done = subprocess.run([str(install.venv / "bin" / "battlecalc"), *args],
                                  cwd=install.home, env=install.env(tmp), capture_output=True,
                                  text=True, timeout=COMMAND_TIMEOUT_S)
            rc, out, err = done.returncode, done.stdout, done.stderr
        except subprocess.TimeoutExpired as exc:
            rc, out, err = "timeout", exc.stdout or "", exc.stderr or ""
        wall, cpu = time.monotonic() - started, children_cpu() - cpu0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    out = out if isinstance(out, str) else out.decode(errors="replace")
    err = err if isinstance(err, str) else err.decode(errors="replace")
    note = "" if expected in out + err else f"expected {expected!r} not in its output"
    if rc != 0:
        note = f"exit {rc}: {err.strip().splitlines()[-1] if err.strip() else ''}"
    return {"cpu_s": cpu, "wall_s": wall, "rc": rc, "load1": load, "note": note}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def get(port: int, path: str, params: dict | None = None,
        timeout: float = 300.0) -> tuple[int, dict | str]:
    query = f"{path}?{urllib.parse.urlencode(params)}" if params else path
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        # (as the page does: the server answers its API only to clients that say so)
        conn.request("GET", query, headers={"X-Battlecalc-Client": "page"})
        response = conn.getresponse()
        body = response.read().decode(errors="replace")
        try:
            return response.status, json.loads(body)
        except ValueError:
            return response.status, body
    finally:
        conn.close()


def tree_cpu(pid: int) -> float | None:
    """CPU seconds of process `pid` and of its children it has waited for (/proc)."""
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / os.sysconf("SC_CLK_TCK")


def announced_seconds(line: str) -> float | None:
    """The warm-up's duration a start line announces: "about 80 s", "about 2 minutes", "about a
    minute"; "a few seconds": 5."""
    import re

    match = re.search(r"about (\d+|a) (s|seconds?|minutes?)\b", line)
    if match:
        count = 1 if match[1] == "a" else int(match[1])
        return count * (60 if match[2].startswith("minute") else 1)
    return 5.0 if "a few seconds" in line else None


def run_serve(install: Install) -> dict:
    """battlecalc serve: page up, first small battle, a big Monte Carlo request cold and warm."""
    tmp = fresh_tmp(install)
    port = free_port()
    lines: list[tuple[float, str]] = []
    load = load1()
    cpu0, started = children_cpu(), time.monotonic()
    env = dict(install.env(tmp), PYTHONUNBUFFERED="1")  # its lines as they come
    server = subprocess.Popen([str(install.venv / "bin" / "battlecalc"), "serve", "--port",
                               str(port)], cwd=install.home, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def read() -> None:
        assert server.stdout
        for line in server.stdout:
            lines.append((time.monotonic() - started, line.rstrip()))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    out: dict = {"load1": load, "note": ""}
    deadline = started + SERVE_DEADLINE_S
    try:
        while time.monotonic() < deadline:  # the page's first request
            if server.poll() is not None:
                raise RuntimeError(f"serve exited {server.returncode}")
            try:
                status, _ = get(port, "/api/spec", timeout=5.0)
                if status == 200:
                    break
            except (OSError, http.client.HTTPException):
                pass
            time.sleep(0.05)
        out["page_s"] = time.monotonic() - started
        status, body = get(port, "/api/run", SMALL, timeout=SERVE_DEADLINE_S)
        out["small_s"] = time.monotonic() - started
        out["small_status"] = status
        if status != 200:
            out["note"] += f"small battle: {status} {str(body)[:200]}; "
        sent = time.monotonic()
        status, body = get(port, "/api/run", BIG_MC, timeout=SERVE_DEADLINE_S)
        out["big_mc_s"] = time.monotonic() - sent
        out["big_mc_status"] = status
        if status != 200:
            error = body.get("error") if isinstance(body, dict) else body
            out["note"] += f"big MC cold: {status} {str(error)[:160]}; "
        while time.monotonic() < deadline and not any("kernels warm" in t for _, t in lines):
            if server.poll() is not None:
                break
            time.sleep(0.1)
        warm = [t for t, text in lines if "kernels warm" in text]
        out["warm_s"] = warm[0] if warm else None
        out["warm_cpu_s"] = tree_cpu(server.pid)
        start_line = next((text for _, text in lines if "serving http" in text), "")
        out["estimate_s"] = announced_seconds(start_line)
        sent = time.monotonic()
        status, body = get(port, "/api/run", BIG_MC, timeout=SERVE_DEADLINE_S)
        out["big_mc_warm_s"] = time.monotonic() - sent
        out["big_mc_warm_status"] = status
        if status != 200:
            out["note"] += f"big MC warm: {status}; "
        sent = time.monotonic()
        status, body = get(port, "/api/run", RETREAT, timeout=SERVE_DEADLINE_S)
        out["retreat_warm_s"] = time.monotonic() - sent
        if status != 200:
            out["note"] += f"retreat warm: {status} {str(body)[:160]}; "
        elif abs(body.get("retreat", 0) - 0.7214) > 1e-4:  # the README's 72.14%
            out["note"] += f"retreat warm: retreat {body.get('retreat')}, not 72.14%; "
        out["wall_s"] = time.monotonic() - started
    except Exception as exc:  # noqa: BLE001 - a benchmark prints what went wrong
        out["note"] += f"{type(exc).__name__}: {exc}; "
        out.setdefault("wall_s", time.monotonic() - started)
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGINT)
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        reader.join(timeout=5)
        out["cpu_s"] = children_cpu() - cpu0
        out["rc"] = server.returncode
        shutil.rmtree(tmp, ignore_errors=True)
    out["log"] = [f"{t:7.2f} s  {text}" for t, text in lines[:20]]
    return out


def fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def row_text(run: int, label: str, name: str, r: dict) -> str:
    text = f"{run:>3} {label:<10} {name:<9} {fmt(r.get('cpu_s')):>8} {fmt(r.get('wall_s')):>8}"
    if name == SERVE:
        text += (f"  page {fmt(r.get('page_s'))} s, small {fmt(r.get('small_s'))} s, "
                 f"big MC {fmt(r.get('big_mc_s'))} s ({r.get('big_mc_status', '-')}), "
                 f"warm {fmt(r.get('warm_s'), 1)} s ({fmt(r.get('warm_cpu_s'), 1)} s CPU, "
                 f"announced {fmt(r.get('estimate_s'), 0)} s), big MC warm "
                 f"{fmt(r.get('big_mc_warm_s'))} s ({r.get('big_mc_warm_status', '-')}), "
                 f"retreat warm {fmt(r.get('retreat_warm_s'), 3)} s")
    text += f"  load {r['load1']:.2f}"
    if r.get("note"):
        text += f"  NOTE {r['note']}"
    return text


def spread(values: list[float]) -> str:
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    if len(values) == 1:
        return f"{values[0]:.2f}"
    return f"{statistics.median(values):.2f} [{min(values):.2f}-{max(values):.2f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("revs", nargs="+", help="revisions, e.g. d05ee80 HEAD")
    parser.add_argument("--runs", type=int, default=2, help="runs of every command per revision")
    parser.add_argument("--sequence", action="store_true",
                        help="reset to the fresh install only before each run's first command")
    parser.add_argument("--only", help="commands to run, comma-separated, of: "
                        + ", ".join([*COMMANDS, SERVE]))
    parser.add_argument("--work", help="work folder (outside the repository; default: new temp)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    parser.add_argument("--json", metavar="PATH", help="write every run as JSON")
    args = parser.parse_args()
    names = [*COMMANDS, SERVE]
    if args.only:
        names = [n.strip() for n in args.only.split(",")]
        unknown = set(names) - {*COMMANDS, SERVE}
        if unknown:
            parser.error(f"unknown commands {sorted(unknown)}")
    work = Path(args.work).resolve() if args.work else Path(tempfile.mkdtemp(prefix="bench-cold-"))
    if work == ROOT or ROOT in work.parents:
        parser.error("--work must be outside the repository")
    work.mkdir(parents=True, exist_ok=True)
    print(f"CPU {cpu_model()}, {os.cpu_count()} cores; {sys.executable} "
          f"({sys.version.split()[0]}); work {work}; load {os.getloadavg()}", flush=True)
    installs = []
    try:
        for index, rev in enumerate(args.revs):
            sha = resolve(rev)
            install = Install(rev, sha, work, index)
            info = install.build()
            install.info = info
            installs.append(install)
            print(f"{rev} = {sha[:12]}: install {info['install_wall_s']:.1f} s wall, "
                  f"{info['install_cpu_s']:.1f} s CPU; Python {info['python']}, numba "
                  f"{info['numba']}, numpy {info['numpy']}; files the install left in the "
                  f"HOME: {install.installed['home']}", flush=True)
        labels = [f"{i}:{inst.rev}" if args.revs.count(inst.rev) > 1 else inst.rev
                  for i, inst in enumerate(installs)]
        print(f"\n{'run':>3} {'revision':<10} {'command':<9} {'CPU s':>8} {'wall s':>8}")
        results: list[dict] = []
        for run in range(1, args.runs + 1):
            order = list(range(len(installs)))
            if run % 2 == 0:
                order.reverse()
            for i in order:
                install = installs[i]
                for position, name in enumerate(names):
                    if not args.sequence or position == 0:
                        for rel in install.reset():
                            print(f"    note: {labels[i]}: venv file changed since the "
                                  f"install, not restored: {rel}")
                    r = run_serve(install) if name == SERVE else run_command(install, name)
                    r.update(run=run, rev=labels[i], sha=install.sha, command=name)
                    results.append(r)
                    print(row_text(run, labels[i], name, r), flush=True)
        print(f"\nsummary: median [min-max] of {args.runs} run(s); CPU {cpu_model()}"
              f"{'; commands in sequence, caches shared' if args.sequence else ''}")
        print(f"{'command':<22}" + "".join(f" {label:>26}" for label in labels))
        measures = [("CPU s", "cpu_s"), ("wall s", "wall_s")]
        for name in names:
            for title, key in measures + ([("small answered s", "small_s"),
                                            ("big MC s", "big_mc_s"),
                                            ("kernels warm s", "warm_s"),
                                            ("warm CPU s", "warm_cpu_s"),
                                            ("announced s", "estimate_s"),
                                            ("big MC warm s", "big_mc_warm_s"),
                                            ("retreat warm s", "retreat_warm_s")]
                                           if name == SERVE else []):
                cells = [spread([r.get(key) for r in results
                                 if r["rev"] == label and r["command"] == name])
                         for label in labels]
                print(f"{name + ' ' + title:<22}" + "".join(f" {c:>26}" for c in cells))
        for label, install in zip(labels, installs, strict=True):
            print(f"{label}: install (pip install -e '.[dev]') {install.info['install_wall_s']:.1f}"
                  f" s wall, {install.info['install_cpu_s']:.1f} s CPU")
        if args.json:
            payload = {"cpu": cpu_model(), "revs": labels,
                       "installs": {label: {"sha": inst.sha, **inst.info}
                                    for label, inst in zip(labels, installs, strict=True)},
                       "results": results}
            Path(args.json).write_text(json.dumps(payload, indent=1))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"kept {work}")


if __name__ == "__main__":
    main()
