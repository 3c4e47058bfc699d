"""Command line, issue 10: Ctrl-C, warnings for ignored options, errors before work, grouped
`run --help`, `--rules-file`, progress on a terminal, and a `--help` that loads no engine."""

from __future__ import annotations

import contextlib
import io
import json
import os
import pty
import re
import signal
import subprocess
import sys
import threading
import time

import hostile_saves
import pytest
from helpers import assert_usage_error, invoke
from tiers import sampled

import battlecalc.api
import battlecalc.cli as cli_module
from battlecalc.cli import cli

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXACT_1V1 = ["run", "--rules", "revised", "-a", "1 inf", "-d", "1 inf", "--method", "exact"]
FORMULA_3V2 = ["run", "--rules", "formula", "-a", "3 army", "-d", "2 army"]


@pytest.fixture
def battle_must_not_run(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the battle ran although the input was refused")

    monkeypatch.setattr(battlecalc.api, "simulate", refuse)


# --- Ctrl-C --------------------------------------------------------------------------------------


def test_ctrl_c_exits_130_with_one_line(monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(battlecalc.api, "simulate", interrupted)
    result = invoke(*EXACT_1V1)
    assert result.exit_code == 130
    assert result.stderr == "Aborted.\n"
    assert result.stdout == ""


def test_ctrl_c_during_progress_clears_the_progress_line(monkeypatch):
    monkeypatch.setattr(cli_module, "_stderr_is_terminal", lambda: True)

    def interrupted(*args, progress=None, **kwargs):
        progress(0, 0, "exact solve")
        raise KeyboardInterrupt

    monkeypatch.setattr(battlecalc.api, "simulate", interrupted)
    result = invoke(*EXACT_1V1)
    assert result.exit_code == 130
    assert result.stderr == "\rexact solve...\x1b[K\r\x1b[KAborted.\n"


# `python -m battlecalc ARGS` with Ctrl-C as an interactive shell leaves it to a foreground job.
# An ignored SIGINT is inherited, and Python then installs no handler of its own: pytest run in
# the background of a script (`pytest &`) or under /usr/bin/time ignores SIGINT, and so did the
# child, which went on for a minute after SIGINT, its main thread simply waiting.
AS_FROM_A_SHELL = ("import runpy, signal, sys; "
                   "signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT]); "
                   "signal.signal(signal.SIGINT, signal.default_int_handler); "
                   "sys.argv[0] = 'battlecalc'; "
                   "runpy.run_module('battlecalc', run_name='__main__')")


def test_sigint_to_a_long_monte_carlo_run():
    # a real Ctrl-C: SIGINT to a run of 10 billion trials of a large sea battle once its
    # progress bar shows on the terminal (stderr is a pseudo-terminal); kernel calls of about
    # a quarter of a second let it stop within a second (fixed calls of 2 million trials took
    # up to 8 s to answer here)
    master, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-c", AS_FROM_A_SHELL, "run", "--rules", "1942-2e", "--sea",
         "-a", "30 sub 20 dd 8 cv 16 ftr 10 bb", "-d", "30 sub 20 dd 8 cv 16 ftr 8 bb",
         "--method", "mc", "--trials", "1e10", "--seed", "1"],
        cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=terminal,
        env={**os.environ, "PYTHONFAULTHANDLER": "1"},  # SIGABRT dumps every thread's stack
    )
    os.close(terminal)
    # the terminal is read all along, as a real one is: a pseudo-terminal nobody reads fills
    # up, and the child then blocks writing its progress bar or "Aborted." (this test hung so)
    received = bytearray()

    def drain():
        with contextlib.suppress(OSError):  # EIO: the terminal closed with the process
            while chunk := os.read(master, 65536):
                received.extend(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 120
        while b"trials [" not in received:
            assert time.monotonic() < deadline and process.poll() is None, bytes(received)
            time.sleep(0.05)
        sent = time.monotonic()
        process.send_signal(signal.SIGINT)
        try:
            out, _ = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:  # say where it hangs: the stacks of its threads
            process.send_signal(signal.SIGABRT)
            reader.join(5)
            raise AssertionError(bytes(received[-6000:]).decode(errors="replace")) from None
        stopped_after = time.monotonic() - sent
        reader.join(10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        reader.join(5)
        os.close(master)
    seen = bytes(received)
    assert process.returncode == 130, seen
    assert stopped_after < 3.0, stopped_after  # 0.3-0.6 s measured on a loaded 2-core machine
    assert seen.endswith(b"\r\x1b[KAborted.\r\n"), seen[-100:]  # bar cleared, one line
    assert out == b""


def test_reader_gone_is_a_quiet_exit():
    # `battlecalc units ... | true`: the pipe is closed before battlecalc writes
    process = subprocess.Popen([sys.executable, "-m", "battlecalc", "units", "--rules", "revised"],
                               cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.close()
    err = process.stderr.read()
    process.stderr.close()
    assert process.wait(timeout=60) == 1
    assert err == b""


# --- ignored options are not silent ----------------------------------------------------------


@pytest.mark.parametrize(("extra", "warning"), [
    (["--seed", "5"], "Warning: --seed is ignored with --method exact (no dice are rolled)"),
    (["--trials", "100"], "Warning: --trials is ignored with --method exact (no dice are rolled)"),
    (["-s", "5", "-n", "1e6"],
     "Warning: --seed and --trials are ignored with --method exact (no dice are rolled)"),
])
def test_seed_and_trials_with_exact_warn_once(extra, warning):
    result = invoke(*EXACT_1V1, "--format", "json", *extra)
    assert result.exit_code == 0
    assert result.stderr == warning + "\n"
    assert json.loads(result.stdout)["attacker_win"] == pytest.approx(0.25, abs=1e-12)


@pytest.mark.parametrize("args", [
    EXACT_1V1,  # nothing given that goes unused
    [*EXACT_1V1[:-1], "mc", "--seed", "5", "--trials", "1000"],
    [*EXACT_1V1[:-2], "--seed", "5"],  # auto: the seed is used if auto picks Monte Carlo
])
def test_no_warning_when_nothing_is_ignored(args):
    result = invoke(*args)
    assert result.exit_code == 0
    assert result.stderr == ""


def test_exchange_cap_without_until_done_warns():
    result = invoke(*FORMULA_3V2, "--exchanges", "2", "--exchange-cap", "5", "--format", "json")
    assert result.exit_code == 0
    assert result.stderr == (
        "Warning: --exchange-cap is ignored: it applies to --exchanges until-done\n"
    )
    assert json.loads(result.stdout)["exchanges"] == 2


def test_exchange_cap_with_until_done_is_used():
    result = invoke(*FORMULA_3V2, "--exchanges", "until-done", "--exchange-cap", "1",
                    "--format", "json")
    assert result.exit_code == 0
    assert result.stderr == ""
    data = json.loads(result.stdout)
    # capped at one exchange: the same odds as --exchanges 1 (22/36 for the attacker)
    assert data["exchange_cap"] == 1
    assert data["attacker_win"] == pytest.approx(22 / 36, abs=1e-12)


def test_exchange_cap_with_a_dice_edition_is_an_error():
    assert_usage_error(invoke(*EXACT_1V1, "--exchange-cap", "5"), "formula-combat editions only")


# --- errors before work ------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["survivors", "swing"])
def test_formula_survivors_and_swing_are_refused_before_the_run(which, battle_must_not_run):
    line = assert_usage_error(
        invoke(*FORMULA_3V2, "--format", "csv", "--distribution", which),
        f"the {which} distribution does not exist for formula combat (formula)",
    )
    assert "use --distribution ipc (loss points) or rounds (exchanges)" in line


@pytest.mark.parametrize("which", ["survivors", "ipc", "rounds", "swing"])
def test_distribution_without_csv_is_refused_before_the_run(which, battle_must_not_run):
    line = assert_usage_error(invoke(*EXACT_1V1, "--distribution", which),
                            "--distribution needs --format csv")
    assert f"--format csv --distribution {which}" in line


@pytest.mark.parametrize("which", ["ipc", "rounds"])
def test_formula_distributions_that_exist(which):
    result = invoke(*FORMULA_3V2, "--exchanges", "1", "--format", "csv", "--distribution", which)
    assert result.exit_code == 0, result.output
    header = result.stdout.splitlines()[0]
    assert header == ("side,loss_points,probability" if which == "ipc"
                      else "exchanges,probability")


def test_rules_and_rules_file_together(tmp_path, battle_must_not_run):
    path = write_edition(tmp_path)
    assert_usage_error(invoke("run", "--rules", "revised", "--rules-file", str(path), "-a", "1 inf",
                            "-d", "1 inf"), "--rules and --rules-file cannot be used together")


@pytest.mark.parametrize("command", ["run", "units"])
def test_neither_rules_nor_rules_file(command, battle_must_not_run):
    args = [command] + (["-a", "1 inf", "-d", "1 inf"] if command == "run" else [])
    assert_usage_error(invoke(*args), "Missing option '--rules' (an edition id: see `battlecalc "
                                    "rules`) or '--rules-file' (an edition file)")


# --- run --help ----------------------------------------------------------------------------------


def test_run_help_groups_options_in_sections():
    out = invoke("run", "--help").stdout
    titles = [line[:-1] for line in out.splitlines() if line and not line.startswith(" ")
              and line.endswith(":")]
    assert titles == ["Edition and armies", "Method",
                      "Policies: orders of losses, retreats, submerging",
                      "Decisions solved: the optimal retreat, scramble and kamikaze (1940-2e)",
                      "Amphibious assault",
                      "Waves and counter-attack",
                      "Where the battle starts (a save in progress)", "Formula edition only",
                      "Output", "Other options"]
    sections = {}
    for line in out.splitlines():
        if line[:-1] in titles:
            current = sections.setdefault(line[:-1], [])
        elif line.startswith("  -") and titles[0] in sections:
            current.append(line.split()[0].rstrip(","))
    assert sections["Amphibious assault"] == ["--landing", "--bombard"]
    assert sections["Formula edition only"][:2] == ["--attacker-level", "--defender-level"]
    assert "--rules-file" in sections["Edition and armies"]
    assert sections["Output"] == ["--format", "--distribution", "-o", "--plot"]
    assert sections["Other options"] == ["-h"]


def test_every_run_option_is_in_a_section():
    command = cli.commands["run"]
    named = [name for _, names in command.sections for name in names]
    assert len(named) == len(set(named))
    assert set(named) == {p.name for p in command.params}


@pytest.mark.fresh("help_loads_no_engine")
def test_help_loads_no_engine(fresh):
    # (a fresh interpreter, tests/fresh_checks.py: what `--help` left unloaded)
    assert fresh == []


@pytest.mark.fresh("small_run_loads_what_it_needs")
def test_a_small_run_loads_only_what_it_needs(fresh):
    # (a fresh interpreter: a command imports what it needs when it needs it, so that a
    # small battle's process starts quickly; 1 inf v 1 inf in Revised: the attacker wins 1/4)
    attacker_win, loaded = fresh
    assert attacker_win == pytest.approx(0.25, abs=1e-12) and loaded == []


@pytest.mark.fresh("dice_edition_tables_load_no_engine")
def test_dice_edition_tables_load_no_engine(fresh):
    # (`battlecalc rules` without --rules still does: validating formula.toml imports
    # battlecalc.formula, whose __init__ imports its numba engine)
    assert fresh == []


# --- --rules-file ------------------------------------------------------------------------------


def write_edition(folder, edition="revised", new_id="custom", replace=()):
    """A copy of a shipped edition file under another id, with text replacements."""
    text = (cli_module_rules_folder() / f"{edition}.toml").read_text(encoding="utf-8")
    lines = [f'id = "{new_id}"' if line.startswith("id = ") else line
             for line in text.splitlines()]
    text = "\n".join(lines) + "\n"
    for old, new in replace:
        assert old in text
        text = text.replace(old, new, 1)
    path = folder / f"{new_id}.toml"
    path.write_text(text, encoding="utf-8")
    return path


def cli_module_rules_folder():
    from importlib import resources
    from pathlib import Path

    return Path(str(resources.files("battlecalc.rules")))


def strong_infantry_edition(tmp_path):
    # infantry attacking at 2: 1 inf v 1 inf is then symmetric, each side hitting on 1/3;
    # P(attacker wins) = (1/3)(2/3) / (1 - (2/3)^2) = 2/5, draw (1/3)^2 / (5/9) = 1/5
    text = (cli_module_rules_folder() / "revised.toml").read_text(encoding="utf-8")
    start = text.index("[units.infantry]")
    block_end = text.index("[units.", start + 1)
    block = text[start:block_end]
    assert "attack = 1" in block
    text = text[:start] + block.replace("attack = 1", "attack = 2") + text[block_end:]
    text = "\n".join('id = "strong"' if line.startswith("id = ") else line
                     for line in text.splitlines()) + "\n"
    path = tmp_path / "strong.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_run_with_a_rules_file(tmp_path):
    path = strong_infantry_edition(tmp_path)
    result = invoke("run", "--rules-file", str(path), "-a", "1 inf", "-d", "1 inf",
                    "--method", "exact", "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["rules"] == "strong"
    assert data["attacker_win"] == pytest.approx(2 / 5, abs=1e-12)
    assert data["defender_win"] == pytest.approx(2 / 5, abs=1e-12)
    assert data["draw"] == pytest.approx(1 / 5, abs=1e-12)


def test_rules_file_does_not_shadow_the_shipped_edition(tmp_path):
    # a file whose id is "revised" changes nothing for a later --rules revised
    path = strong_infantry_edition(tmp_path)
    text = path.read_text(encoding="utf-8").replace('id = "strong"', 'id = "revised"')
    path.write_text(text, encoding="utf-8")
    assert invoke("run", "--rules-file", str(path), "-a", "1 inf", "-d", "1 inf",
                  "--method", "exact").exit_code == 0
    data = json.loads(invoke(*EXACT_1V1, "--format", "json").stdout)
    assert data["attacker_win"] == pytest.approx(1 / 4, abs=1e-12)


def test_formula_rules_file(tmp_path):
    path = write_edition(tmp_path, "formula", "my-formula")
    result = invoke("run", "--rules-file", str(path), "-a", "3 army", "-d", "2 army",
                    "--exchanges", "1", "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["rules"] == "my-formula"
    assert data["attacker_win"] == pytest.approx(22 / 36, abs=1e-12)
    assert_usage_error(invoke("run", "--rules-file", str(path), "-a", "3 army", "-d", "2 army",
                            "--format", "csv", "--distribution", "swing"),
                     "does not exist for formula combat (my-formula)")


def test_units_and_rules_with_a_rules_file(tmp_path):
    path = strong_infantry_edition(tmp_path)
    rows = json.loads(invoke("units", "--rules-file", str(path), "--format", "json").stdout)
    infantry = next(row for row in rows if row["name"] == "infantry")
    assert (infantry["attack"], infantry["defense"]) == (2, 2)
    out = invoke("rules", "--rules-file", str(path)).stdout
    assert any(line.split()[:3] == ["flag", "aa_dice", "per_aircraft"]
               for line in out.splitlines())


@pytest.mark.parametrize(("content", "fragment"), [
    (b"format = 1\nid = [\n", "not valid TOML"),
    (b"\xff\xfe\x00garbage", "not UTF-8"),
    (b'format = 1\nid = "x"\nname = "x"\n[units.inf]\ncost = 3\nattack = 9\ndefense = 2\n'
     b'domain = "land"\n', "x.units.inf.attack: expected an integer 0..6, got 9"),
    (b'format = 1\nid = "x"\nname = "x"\nbogus = 1\n[units.inf]\ncost = 3\nattack = 1\n'
     b'defense = 2\ndomain = "land"\n', "x.bogus: unknown key"),
    (b"", "expected 1, got None"),
], ids=["bad-toml", "not-utf8", "bad-value", "unknown-key", "empty"])
def test_bad_rules_file_is_one_error_line(tmp_path, battle_must_not_run, content, fragment):
    path = tmp_path / "bad.toml"
    path.write_bytes(content)
    for command in (["run", "-a", "1 inf", "-d", "1 inf"], ["units"], ["rules"]):
        line = assert_usage_error(invoke(*command, "--rules-file", str(path)), fragment)
        assert "Traceback" not in line


def test_rules_file_error_names_the_file(tmp_path, battle_must_not_run):
    path = tmp_path / "bad.toml"
    path.write_bytes(b"format = 1\nid = [\n")
    assert_usage_error(invoke("units", "--rules-file", str(path)), str(path))


@pytest.mark.parametrize(("make", "fragment"), [
    (lambda tmp: str(tmp / "missing.toml"), "missing.toml: no such file"),
    (lambda tmp: str(tmp), "not a regular file"),
    (lambda tmp: "", "--rules-file: the path is empty"),
    (lambda tmp: "/dev/zero", "not a regular file"),
], ids=["missing", "directory", "empty-path", "dev-zero"])
def test_unreadable_rules_file(tmp_path, battle_must_not_run, make, fragment):
    assert_usage_error(invoke("units", "--rules-file", make(tmp_path)), fragment)


def test_oversized_rules_file(tmp_path, battle_must_not_run):
    path = tmp_path / "big.toml"
    path.write_bytes(b"#" * (battlecalc.rules.MAX_RULES_FILE_BYTES + 1))
    assert_usage_error(invoke("units", "--rules-file", str(path)),
                       "more than an edition file needs")


def test_fifo_as_rules_file_does_not_hang(tmp_path, battle_must_not_run):
    fifo = tmp_path / "rules.toml"
    os.mkfifo(fifo)
    assert_usage_error(invoke("units", "--rules-file", str(fifo)), "not a regular file")


def test_rules_listing_survives_a_broken_edition_file(monkeypatch):
    import battlecalc.rules

    real = battlecalc.rules.load_rules

    def broken_formula(edition):
        if edition == "formula":
            import tomllib

            return tomllib.loads("id = [")
        return real(edition)

    monkeypatch.setattr(battlecalc, "load_rules", broken_formula)  # (the CLI's: the API's)
    result = invoke("rules")
    assert result.exit_code == 0, result.output
    rows = {line.split()[0]: line for line in result.stdout.splitlines()[1:]}
    assert sorted(rows) == ["1940-2e", "1942-2e", "aa50", "classic", "formula", "revised"]
    assert "(invalid edition file)" in rows["formula"]
    assert "(invalid edition file)" not in rows["revised"]


def test_broken_shipped_edition_is_one_error_line(monkeypatch, battle_must_not_run):
    import tomllib

    import battlecalc.rules

    monkeypatch.setattr(battlecalc, "load_rules", lambda edition: tomllib.loads("id = ["))
    assert_usage_error(invoke(*EXACT_1V1), "cannot read edition revised")


# --- progress on a terminal ------------------------------------------------------------------


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_progress_bar_after_the_delay_then_cleared():
    stream, clock = io.StringIO(), Clock()
    progress = cli_module._Progress(stream=stream, clock=clock)
    progress(0, 1000, "trials")
    clock.now = 0.5
    progress(100, 1000, "trials")
    assert stream.getvalue() == ""  # under a second: nothing drawn
    clock.now = 1.2
    progress(500, 1000, "trials")
    assert stream.getvalue() == "\rtrials [###############---------------]  50%  500/1,000\x1b[K"
    clock.now = 1.25
    progress(600, 1000, "trials")  # too soon after the last drawing
    assert stream.getvalue().count("\r") == 1
    clock.now = 2.0
    progress(1000, 1000, "trials")  # done: the line is cleared
    assert stream.getvalue().endswith("\r\x1b[K")
    progress.close()
    assert stream.getvalue().count("\r\x1b[K") == 1


def test_progress_label_for_a_step_without_a_size():
    stream, clock = io.StringIO(), Clock()
    progress = cli_module._Progress(stream=stream, clock=clock)
    progress(0, 0, "compiling kernels (first run only)")
    assert stream.getvalue() == "\rcompiling kernels (first run only)...\x1b[K"
    progress(0, 0, "compiling kernels (first run only)")  # drawn once
    clock.now = 3.0
    progress(0, 0, "exact solve")  # another step: the old line is cleared, the new one drawn
    assert stream.getvalue().endswith("\r\x1b[K\rexact solve...\x1b[K")
    progress.close()
    assert stream.getvalue().endswith("\rexact solve...\x1b[K\r\x1b[K")


def test_progress_two_argument_calls_mean_trials():
    stream, clock = io.StringIO(), Clock()
    progress = cli_module._Progress(stream=stream, clock=clock)
    progress(0, 10)
    clock.now = 5.0
    progress(3, 10)
    assert stream.getvalue().startswith("\rtrials [#########-")


@pytest.mark.slow
def test_no_progress_when_stderr_is_not_a_terminal(monkeypatch):
    monkeypatch.setattr(cli_module, "PROGRESS_DELAY_S", 0.0)
    result = invoke("run", "--rules", "revised", "-a", "1 inf", "-d", "1 inf", "--method", "mc",
                    "--trials", "2e5", "--seed", "1", "--format", "json")
    assert result.exit_code == 0
    assert result.stderr == ""


@pytest.mark.slow
def test_progress_from_the_library_on_a_fake_terminal(monkeypatch):
    monkeypatch.setattr(cli_module, "_stderr_is_terminal", lambda: True)
    monkeypatch.setattr(cli_module, "PROGRESS_DELAY_S", 0.0)
    monkeypatch.setattr(cli_module._Progress, "REDRAW_S", 0.0)
    result = invoke("run", "--rules", "revised", "-a", "1 inf", "-d", "1 inf", "--method", "mc",
                    "--trials", "2e5", "--seed", "1", "--format", "json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["trials"] == 200_000
    # the Monte Carlo kernel reports after each call (the first: a chunk of 16,384 trials a
    # thread): a bar, then a clean line
    assert "\rtrials [" in result.stderr
    assert "/200,000" in result.stderr
    assert result.stderr.endswith("\r\x1b[K")


def test_progress_with_a_stub_library(monkeypatch):
    monkeypatch.setattr(cli_module, "_stderr_is_terminal", lambda: True)
    monkeypatch.setattr(cli_module, "PROGRESS_DELAY_S", 0.0)
    real = battlecalc.api.simulate

    def stub(*args, progress=None, **kwargs):
        progress(0, 0, "compiling kernels (first run only)")
        progress(0, 0, "retreat-below table")
        progress(2, 4, "exact solve")
        progress(4, 4, "exact solve")
        progress(1, 2)  # the 2-argument form
        return real(*args, **kwargs)

    monkeypatch.setattr(battlecalc.api, "simulate", stub)
    result = invoke(*EXACT_1V1, "--format", "json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["attacker_win"] == pytest.approx(0.25, abs=1e-12)
    drawn = [part.removesuffix("\x1b[K") for part in result.stderr.split("\r") if part]
    assert [d for d in drawn if d] == [
        "compiling kernels (first run only)...",
        "retreat-below table...",
        "exact solve [###############---------------]  50%  2/4",
        "trials [###############---------------]  50%  1/2",
    ]
    assert result.stderr.endswith("\r\x1b[K")


# --- control characters from files (issue 29, item 10) ----------------------------------------
# A name read from a save or an edition file reaches the terminal escaped: a table or a message
# shows ``\x1b``, never the character (which could set the window title, clear the screen or
# move the cursor); JSON and CSV carry the name unchanged, JSON with every control escaped.

TERRITORY = "West \x1b]0;pwned\x07\x1b[2JRussia\x9b31m\x7f\r"  # OSC title, clear, C1 CSI, DEL, CR
SHOWN_TERRITORY = r"West \x1b]0;pwned\x07\x1b[2JRussia\x9b31m\x7f\x0d"
NATION = "Rus\x1b[31msians"
GAME = "World War II Revised\x1b[2J"
RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # every control but \t and \n


@pytest.fixture
def hostile_save(tmp_path):
    if not hostile_saves.LAND_BATTLE.is_file():
        pytest.skip("the shared TripleA saves are absent")
    data = hostile_saves.stream()
    for old, new in (("West Russia", TERRITORY), ("Russians", NATION),
                     ("World War II Revised", GAME)):
        data = hostile_saves.renamed(data, old, new)
    path = tmp_path / "hostile.tsvg"
    path.write_bytes(hostile_saves.save_bytes(data))
    return path


def on_a_terminal(*args: str):
    # color=True: click passes escape sequences on as it does to a terminal (to a pipe it
    # strips some, ESC [ ... m and the like, but not a title's ESC ] ... BEL)
    return invoke(*args, color=True)


# (each reads a save: "game" in the quick tier, "game --all" and "luck" in the slow)
@pytest.mark.parametrize("args", sampled([
    (["game", "--rules", "revised"],), (["game", "--rules", "revised", "--all"],),
    (["luck", "--rules", "revised"],)], 3, ids=["game", "game --all", "luck"]))
def test_a_table_escapes_the_control_characters_of_names_from_a_save(hostile_save, args,
                                                                     tmp_path):
    result = on_a_terminal(*args[:1], str(hostile_save), *args[1:])
    assert result.exit_code == 0, result.output
    assert RAW_CONTROL.search(result.output) is None, repr(result.output)
    assert result.stdout.startswith(r"World War II Revised\x1b[2J (edition revised)")
    if args[0] == "game":  # (luck names the game only: this save's history has no battle)
        assert SHOWN_TERRITORY in result.stdout
        assert r"Rus\x1b[31msians attack Germans" in result.stdout
    # the same table written to a file (to be shown with cat): escaped alike
    written = tmp_path / "table.txt"
    result = on_a_terminal(*args[:1], str(hostile_save), *args[1:], "-o", str(written))
    assert result.exit_code == 0, result.output
    text = written.read_text(encoding="utf-8")
    assert RAW_CONTROL.search(text) is None
    assert text.startswith(r"World War II Revised\x1b[2J (edition revised)")


def test_json_and_csv_carry_names_from_a_save_unchanged(hostile_save):
    import csv

    result = on_a_terminal("game", str(hostile_save), "--rules", "revised", "--format", "json")
    assert result.exit_code == 0, result.output
    assert RAW_CONTROL.search(result.stdout) is None  # escaped as \u001b, \u009b, \u007f
    data = json.loads(result.stdout)
    assert (data["game"], data["player"]) == (GAME, NATION)
    assert [b["territory"] for b in data["battles"]] == [TERRITORY]
    result = on_a_terminal("game", str(hostile_save), "--rules", "revised", "--format", "csv")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout, newline="")))
    assert [row["territory"] for row in rows] == [TERRITORY]
    assert rows[0]["attacker_nations"] == NATION


def test_an_error_line_escapes_names_from_a_save_and_from_an_edition_file(hostile_save,
                                                                          tmp_path):
    result = on_a_terminal("game", str(hostile_save))  # the game's name maps to no edition
    line = assert_usage_error(result, r"the TripleA game 'World War II Revised\x1b[2J' maps "
                                      "to no edition")
    assert RAW_CONTROL.search(line) is None
    # a unit named with an escape in an edition file: the loader's message quotes the key
    edition = write_edition(tmp_path, new_id="evil",
                            replace=[("[units.infantry]", '[units."inf\\u001b]0;pwned\\u0007"]')])
    result = on_a_terminal("units", "--rules-file", str(edition))
    line = assert_usage_error(result, r"evil.units.inf\x1b]0;pwned\x07: unit name")
    assert RAW_CONTROL.search(line) is None


# --- names with a newline (issue 42, item 10) -----------------------------------------------------
# printable() keeps newline and tab (a table's own lines), so a name read from a file with a
# newline in it started a line of its own ("West Russia\nattacker wins 100.00%": a forged
# line); `watch` printed its board and the file's name raw, and its JSON with DEL and C1 raw;
# `edition import` said its status line with the game's name raw.  Now every line holding
# names is escaped whole (output.one_line), and so is every line on stderr.

FORGED = "attacker wins 100.00%  (exact)"
LF_TERRITORY = f"West Russia\n  {FORGED}\x1b]0;pwned\x07"
LF_GAME = "World War II Revised\nforged line\x1b[2J"
LF_FILE = "autosave\x1b]0;pwned\x07\x9b2J.tsvg"


def _newline_save(tmp_path, game: bool):
    """The West Russia save with names of a newline and escapes (the game's too where `game`:
    it then maps to no edition), in a folder of its own, under a name of escapes."""
    if not hostile_saves.LAND_BATTLE.is_file():
        pytest.skip("the shared TripleA saves are absent")
    data = hostile_saves.stream()
    for old, new in (("West Russia", LF_TERRITORY), ("Russians", NATION),
                     *([("World War II Revised", LF_GAME)] if game else [])):
        data = hostile_saves.renamed(data, old, new)
    folder = tmp_path / "autoSave"
    folder.mkdir()
    path = folder / LF_FILE
    path.write_bytes(hostile_saves.save_bytes(data))
    os.utime(path, (1_000, 1_000))
    return path


@pytest.fixture
def newline_save(tmp_path):
    return _newline_save(tmp_path, game=True)


@pytest.fixture
def watched_newline_save(tmp_path):
    return _newline_save(tmp_path, game=False)


def _no_forged_line(text: str) -> None:
    assert RAW_CONTROL.search(text) is None, repr(text)
    assert not any(line.lstrip().startswith(("attacker wins 100", "forged"))
                   for line in text.splitlines()), text


@pytest.mark.parametrize("args", sampled([(["game", "--rules", "revised"],),
                                          (["game", "--rules", "revised", "--all"],),
                                          (["luck", "--rules", "revised"],)], 3,
                                         ids=["game", "game --all", "luck"]))
def test_a_name_with_a_newline_makes_no_line_of_its_own(newline_save, args):
    result = on_a_terminal(*args[:1], str(newline_save), *args[1:])
    assert result.exit_code == 0, result.output
    _no_forged_line(result.stdout)
    assert result.stdout.startswith(r"World War II Revised\x0aforged line\x1b[2J (edition")
    if args[0] == "game":
        assert r"West Russia\x0a  attacker wins 100.00%  (exact)\x1b]0;pwned\x07: land " \
               "battle" in result.stdout


def test_edition_import_says_the_game_s_name_in_one_line(newline_save, tmp_path):
    written = tmp_path / "imported.toml"
    result = on_a_terminal("edition", "import", str(newline_save), "-o", str(written))
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [
        rf"World War II Revised\x0aforged line\x1b[2J: an edition on the rules of revised "
        f"written to {written}"]


@pytest.mark.slow  # (watch reads the save in a child process)
def test_watch_escapes_its_board_and_the_file_s_name(watched_newline_save):
    newline_save = watched_newline_save
    result = on_a_terminal("watch", str(newline_save.parent), "--once", "--interval", "0.1")
    assert result.exit_code == 0, result.output
    _no_forged_line(result.stdout)
    first = result.stdout.splitlines()[0]
    assert first.startswith(r"World War II Revised (edition revised), round 1")
    assert first.endswith(r"[autosave\x1b]0;pwned\x07\x9b2J.tsvg]")
    assert r"West Russia\x0a  attacker wins 100.00%  (exact)\x1b]0;pwned\x07: land battle" \
        in result.stdout
    # JSON: every control escaped (DEL and C1 too: \u009b), the names unchanged once read
    result = on_a_terminal("watch", str(newline_save.parent), "--once", "--interval", "0.1",
                           "--format", "json")
    assert result.exit_code == 0, result.output
    assert RAW_CONTROL.search(result.stdout) is None, repr(result.stdout[:300])
    board = json.loads(result.stdout)
    assert (board["file"], board["player"]) == (LF_FILE, NATION)
    assert [b["territory"] for b in board["battles"]] == [LF_TERRITORY]


@pytest.mark.slow  # (watch reads the save in a child process)
def test_watch_notes_name_a_file_in_one_line(watched_newline_save):
    """A note names a file: a name with a newline and escapes (a save that cannot be read)."""
    newline_save = watched_newline_save
    bad = newline_save.parent / "broken\nNote: forged\x1b[2J.tsvg"
    bad.write_bytes(b"not gzip")
    os.utime(bad, (2_000, 2_000))
    result = on_a_terminal("watch", str(newline_save.parent), "--once", "--interval", "0.1")
    assert result.exit_code == 0, result.output
    assert r"Note: broken\x0aNote: forged\x1b[2J.tsvg: not read, its gzip data is damaged" \
        in result.stderr.splitlines()
    assert not any(line.startswith("Note: forged") for line in result.stderr.splitlines())
