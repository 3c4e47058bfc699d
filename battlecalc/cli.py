"""Command-line interface: parse, call the library, format.  Bad input exits 2 with one line.

Importing this module must stay cheap (``battlecalc --help`` answers in a blink): the library
(numpy, numba, pandas, the engine) is imported inside the commands, and the option
declarations use only the constants below and the list of edition files.
"""

from __future__ import annotations

import os
import sys
import time
import warnings

import click
from click.core import ParameterSource

from . import list_editions  # the library's API (battlecalc.list_editions): no engine code
from .options import BY_NAME, OPTIONS, Option, flag_message, read  # light: no engine code
from .output import OutputError, json_safe, one_line, open_destination, printable

FORMATS = ("table", "json", "csv")
DISTRIBUTIONS = ("survivors", "ipc", "rounds", "swing", "policy", "reactions")
FORMULA_DISTRIBUTIONS = ("ipc", "rounds")  # loss points and exchanges
PROGRESS_DELAY_S = 1.0  # a progress bar appears once its step has run this long
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a program stopped by Ctrl-C


class _Interrupted(Exception):
    """Ctrl-C inside a command; carried past click, which would print "Aborted!" and exit 1."""


class _OneLineErrors(click.Group):
    """Print usage and input errors as a single ``Error: ...`` line, exit status 2."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise _Interrupted from None

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.exceptions.NoArgsIsHelpError as exc:
            click.echo(exc.ctx.get_help() if exc.ctx else str(exc), err=True)
            sys.exit(2)
        except click.ClickException as exc:
            # one line: click lists choices on extra lines, rules files list every problem
            _say(f"Error: {' '.join(exc.format_message().split())}")
            sys.exit(exc.exit_code)
        except (_Interrupted, KeyboardInterrupt, click.exceptions.Abort):
            click.echo("Aborted.", err=True)
            sys.exit(EXIT_INTERRUPTED)
        except BrokenPipeError:
            # the reader went away (`battlecalc ... | head -1`): stop quietly
            _silence_stdout()
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass  # not a real file descriptor (under a test runner): nothing will be flushed


class _SectionedCommand(click.Command):
    """A command whose ``--help`` lists its options in titled sections, in a given order.

    ``sections`` is ``((title, (parameter name, ...)), ...)``; options not named in any
    section are listed last under "Other options".
    """

    COL_MAX = 30

    def __init__(self, *args, sections=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.sections = tuple(sections)

    def format_options(self, ctx, formatter):
        records = {}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is not None:
                records[param.name] = record
        placed = {name for _, names in self.sections for name in names}
        groups = [(title, [records[name] for name in names if name in records])
                  for title, names in self.sections]
        groups.append(("Other options", [r for n, r in records.items() if n not in placed]))
        # one description column for all sections: pad one term of each to the widest
        width = min(max((len(term) for term, _ in records.values()), default=0), self.COL_MAX)
        for title, rows in groups:
            if rows:
                rows[0] = (rows[0][0].ljust(width), rows[0][1])
                with formatter.section(title):
                    formatter.write_dl(rows, col_max=self.COL_MAX)


class _OptionType(click.ParamType):
    """A value of an option of the table (battlecalc.options), read by options.read; its
    errors name the flag."""

    def __init__(self, option):
        self.option = option
        self.name = {"trials": "N", "int": "N", "float": "P", "exchanges": "N|until-done"}.get(
            option.kind, "TEXT")

    def get_metavar(self, param, ctx=None):
        if self.option.choices:
            return f"[{'|'.join(c.replace('_', '-') for c in self.option.choices)}]"
        return self.name

    def convert(self, value, param, ctx):
        if not isinstance(value, str):
            return value  # a default from the table
        if self.option.kind in ("army", "armies") and not value.strip():
            return value  # given but empty: the library says which side has no units
        from .errors import BattleInputError

        try:
            typed = read(self.option, value)
            # a repeated option (--wave) gives one army at a time
            return typed[0] if self.option.kind == "armies" and typed else typed
        except BattleInputError as exc:
            message = str(exc)
            if param is not None and message.startswith(f"{self.option.name} "):
                message = param.opts[0] + message[len(self.option.name):]
            raise click.UsageError(flag_message(message), ctx) from None


def _table_option(name: str, **changes):
    """The click option of simulate's keyword `name`, from the table (changes: help, default,
    ... where a command means something more specific)."""
    opt = BY_NAME[name]
    declarations = [opt.flag, *opt.aliases, *([opt.short] if opt.short else []), name]
    settings = {"help": opt.help}
    if opt.kind == "bool":
        settings.update(is_flag=True, default=False)
    elif opt.kind == "armies":
        settings.update(multiple=True, type=_OptionType(opt))
    else:
        settings.update(type=_OptionType(opt), default=opt.default,
                        show_default=opt.default is not None)
    settings.update(changes)
    return click.option(*declarations, **settings)


def _table_options(*names: str, **changes):
    """One decorator for the options `names` of the table, in that order; changes:
    ``{name: {help: ...}}``."""
    decorators = [_table_option(name, **changes.get(name, {})) for name in names]

    def apply(function):
        for decorator in reversed(decorators):
            function = decorator(function)
        return function

    return apply


def _given_options(ctx: click.Context, values: dict, names) -> dict:
    """simulate's keywords the user gave (the others keep simulate's defaults)."""
    return {name: values[name] for name in names if _given(ctx, name)}


# the command line's options of simulate: every keyword with a flag (--rules is rules_option)
RUN_OPTIONS = tuple(o.name for o in OPTIONS if o.flag and o.name != "rules")
# plan's: those that describe a dice battle (--attacker and --defender are plan's own)
PLAN_OPTIONS = tuple(o.name for o in OPTIONS if o.flag and o.battle and o.applies & {
    "land", "sea", "amphibious"} and o.name not in ("rules", "attacker", "defender"))
METHOD_OPTIONS = ("method", "trials", "seed")
_MAX_COST = Option("max_cost", "float")  # plan's own


def _fail(exc: Exception):
    """A library error at the click edge: its keywords become flags (keep_land -> --keep-land,
    and the command's own: plan's max_cost -> --max-cost)."""
    ctx = click.get_current_context(silent=True)
    own = {} if ctx is None else {
        p.name: max(p.opts, key=len) for p in ctx.command.params if p.name and p.opts}
    raise click.UsageError(flag_message(str(exc), own)) from None


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class _Progress:
    """Draws the library's ``progress(done, total, what)`` calls on stderr, on a terminal only.

    ``what`` names the step ("trials", "exact solve", "compiling kernels (first run only)");
    a 2-argument call means "trials".  A step with a size (``total > 0``) gets a bar once it
    has run :data:`PROGRESS_DELAY_S`; a step without one (``total == 0``) gets its label at
    once.  The line is cleared when a step ends (``done >= total > 0``), when another step
    starts, and by :meth:`close`, so nothing is left behind on the terminal.
    """

    WIDTH = 30
    REDRAW_S = 0.1

    def __init__(self, stream=None, clock=time.monotonic):
        self.enabled = _stderr_is_terminal() if stream is None else True
        self.stream = stream
        self.clock = clock
        self.what = None
        self.step_started = 0.0
        self.drawn_at = None  # clock time of the last drawing; None: nothing on screen

    def __call__(self, done: int, total: int, what: str | None = None) -> None:
        if not self.enabled:
            return
        what = what or "trials"
        now = self.clock()
        if what != self.what:
            self._clear()
            self.what, self.step_started = what, now
        if total <= 0:
            if self.drawn_at is None:
                self._draw(f"{what}...", now)
            return
        if done >= total:
            self._clear()
            return
        if self.drawn_at is None and now - self.step_started < PROGRESS_DELAY_S:
            return
        if self.drawn_at is not None and now - self.drawn_at < self.REDRAW_S:
            return
        fraction = max(0.0, min(done / total, 1.0))
        filled = int(fraction * self.WIDTH)
        bar = "#" * filled + "-" * (self.WIDTH - filled)
        self._draw(f"{what} [{bar}] {fraction:4.0%}  {done:,}/{total:,}", now)

    def _out(self):
        return self.stream if self.stream is not None else sys.stderr

    def _draw(self, text: str, now: float) -> None:
        self.drawn_at = now  # first: a Ctrl-C during the write still gets the line cleared
        out = self._out()
        out.write(f"\r{text}\x1b[K")
        out.flush()

    def _clear(self) -> None:
        if self.drawn_at is not None:
            out = self._out()
            out.write("\r\x1b[K")
            out.flush()
            self.drawn_at = None

    def close(self) -> None:
        if self.enabled:
            self._clear()


def _destination(output: str | None, inputs=()):
    """The checked output destination; done before any computing.  `inputs`: the files the
    command reads (--rules-file), which it must not write over."""
    try:
        return open_destination(output, inputs)
    except OutputError as exc:
        _fail(exc)


def _for_reader(text: str, fmt: str | None) -> str:
    """A command's text as written: a table (for a terminal) with its control characters
    escaped, JSON with every one escaped (output.printable, output.json_safe); CSV and other
    text (an edition's TOML) as they are."""
    if fmt == "table":
        return printable(text)
    if fmt == "json":
        return json_safe(text)
    return text


def _say(line: str) -> None:
    """One line on stderr (an error, a warning, a note), its control characters escaped
    (newlines too: a name read from a file makes no second line)."""
    click.echo(one_line(line), err=True)


def _emit(text: str, destination, fmt: str | None) -> None:
    """Write a command's text (fmt: its --format; None: text of no format) to its
    destination."""
    text = _for_reader(text, fmt)
    if destination.kind == "stdout":
        click.echo(text.rstrip("\n"))
        return
    try:
        destination.write(text)
    except OutputError as exc:
        _fail(exc)


def _ruleset(edition: str | None, rules_file: str | None, required: bool = True):
    """The Ruleset named by --rules or read from --rules-file (exactly one of them)."""
    from . import load_rules, load_rules_file  # (the library's API: battlecalc.load_rules)
    from .errors import BattleInputError

    if edition is not None and rules_file is not None:
        raise click.UsageError("--rules and --rules-file cannot be used together; give one")
    if edition is None and rules_file is None:
        if not required:
            return None
        raise click.UsageError(
            "Missing option '--rules' (an edition id: see `battlecalc rules`) or "
            "'--rules-file' (an edition file)"
        )
    if edition is not None:
        try:
            return load_rules(edition)
        except BattleInputError as exc:
            _fail(exc)
        except (ValueError, RecursionError) as exc:  # a broken shipped file (bad TOML)
            raise click.UsageError(f"cannot read edition {edition}: {exc}") from None
    if rules_file == "":
        raise click.UsageError("--rules-file: the path is empty")
    # the loader reads regular files only, at most MAX_RULES_FILE_BYTES (a FIFO, /dev/zero
    # or a huge file is refused unread), for this file and for every `base =` below it
    try:
        return load_rules_file(rules_file)
    except BattleInputError as exc:
        _fail(exc)
    except UnicodeDecodeError:
        raise click.UsageError(f"cannot read rules file {rules_file}: not UTF-8 text") from None
    except ValueError as exc:
        raise click.UsageError(f"cannot read rules file {rules_file}: {exc}") from None
    except RecursionError:
        raise click.UsageError(
            f"cannot read rules file {rules_file}: tables nested too deeply"
        ) from None
    except OSError as exc:
        raise click.UsageError(f"cannot read rules file {rules_file}: {exc.strerror}") from None


def _given(ctx: click.Context, name: str) -> bool:
    """Whether the user gave option `name` (on the command line or through the environment)."""
    return ctx.get_parameter_source(name) in (ParameterSource.COMMANDLINE,
                                              ParameterSource.ENVIRONMENT)


def _ignored_options(ctx: click.Context, method: str, result) -> list[str]:
    """One warning line per option that the run did not use (options.ignored_options)."""
    from .options import ignored_options

    given = {name for name in ("seed", "trials", "exchange_cap") if _given(ctx, name)}
    return [f"Warning: {line}" for line in ignored_options(
        given, method, result, spell=lambda name: "--" + name.replace("_", "-"))]


rules_option = click.option(
    "--rules", "rules", type=click.Choice(list_editions()), default=None,
    help="Edition id (see `battlecalc rules`).",
)
rules_file_option = click.option(
    "--rules-file", "rules_file", type=str, default=None, metavar="PATH",
    help="A custom edition file (TOML, as in battlecalc/rules/) instead of --rules.",
)
format_option = click.option(
    "--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True,
    help="Output format.",
)
output_option = click.option(
    "--output", "-o", type=str, default=None, metavar="FILE",
    help="Write to FILE instead of standard output (a file is replaced atomically; a "
    "symlink's target is replaced; a device or FIFO is written to; - is standard output).",
)

RUN_SECTIONS = (
    ("Edition and armies", ("rules", "rules_file", "attacker", "defender", "sea",
                            "attacker_tech", "defender_tech")),
    ("Method", ("method", "dice", "die_law", "trials", "seed", "threads")),
    ("Policies: orders of losses, retreats, submerging",
     ("attacker_ool", "defender_ool", "keep_land", "aa_last", "retreat_after",
      "retreat_when_left", "retreat_when_only_air", "retreat_below", "retreat_air_loss",
      "strafe", "attacker_submerge", "defender_submerge")),
    ("Decisions solved: the optimal retreat, scramble and kamikaze (1940-2e)",
     ("retreat_policy", "optimize", "territory_value", "scramble_from", "scramble", "kamikaze",
      "kamikaze_targets")),
    ("Amphibious assault", ("landing", "bombard")),
    ("Waves and counter-attack", ("waves", "counterattack")),
    ("Where the battle starts (a save in progress)",
     ("start_round", "start_step", "hits_on_attacker", "hits_on_defender", "bombard_hits",
      "attacker_waiting", "defender_waiting")),
    ("Formula edition only", ("attacker_level", "defender_level", "counter", "hatred",
                              "loss_multiplier", "exchanges", "exchange_cap", "flips")),
    ("Output", ("fmt", "distribution", "output", "plot_path")),
)


@click.group(cls=_OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="battlecalc")
def cli():
    """battlecalc: battle odds for Axis & Allies-family games."""
    _warnings_as_lines()


def _warnings_as_lines() -> None:
    """Input accepted but ignored (errors.BattleInputWarning): one ``Warning: ...`` line on
    stderr each time; other warnings as Python shows them."""
    from .errors import BattleInputWarning

    if getattr(warnings.showwarning, "battlecalc", False):
        return
    default = warnings.showwarning
    shown: set[str] = set()  # once each (a plan solves many battles)

    def show(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, BattleInputWarning):
            if str(message) not in shown:
                shown.add(str(message))
                _say(f"Warning: {message}")
        else:
            default(message, category, filename, lineno, file, line)

    show.battlecalc = True
    warnings.showwarning = show
    warnings.simplefilter("always", BattleInputWarning)


threads_option = click.option(
    "--threads", type=click.IntRange(1, 1024), default=None,
    help="Kernel threads for Monte Carlo and exact block solves (default: BATTLECALC_THREADS, "
    "else the usable cores; results do not depend on it).")


def _set_threads(threads: int | None) -> None:
    """Size the engine's thread pool (None: BATTLECALC_THREADS, else the usable cores)."""
    from .api import set_threads  # the engine's pool, through the API (not kernels.jit)
    from .errors import BattleInputError

    try:
        set_threads(threads)
    except BattleInputError as exc:
        _fail(exc)


@cli.command(cls=_SectionedCommand, sections=RUN_SECTIONS)
@rules_option
@rules_file_option
@_table_options(*RUN_OPTIONS)
@click.option("--distribution", type=click.Choice(DISTRIBUTIONS),
              default=None, help="With --format csv: write this distribution instead of the "
              "one-row summary (formula edition: ipc or rounds).")
@threads_option
@format_option
@output_option
@click.option("--plot", "plot_path", default=None, help="Also draw the result into FILE.png "
              "or FILE.svg (needs battlecalc[plot]).")
@click.pass_context
def run(ctx, rules, rules_file, distribution, threads, fmt, output, plot_path, **values):
    """Odds of one battle (or of several waves and a counter-attack)."""
    if plot_path is not None:
        from . import plot

        if problem := plot.check_plot_path(plot_path, inputs=[rules_file, output]):
            raise click.UsageError(problem)
    ruleset = _ruleset(rules, rules_file)
    options = _given_options(ctx, values, RUN_OPTIONS)
    method = values["method"]
    waves, counterattack = options.get("waves", ()), options.get("counterattack")
    if options.get("attacker") is None and options.get("landing") is None:
        raise click.UsageError("Missing option '--attacker' (the attacking army).")
    if options.get("defender") is None:
        raise click.UsageError("Missing option '--defender' (the defending army).")
    if distribution and fmt != "csv":
        raise click.UsageError(
            f"--distribution needs --format csv (--format csv --distribution {distribution})"
        )
    if distribution and ruleset.model == "formula" and distribution not in FORMULA_DISTRIBUTIONS:
        raise click.UsageError(
            f"the {distribution} distribution does not exist for formula combat ({ruleset.id}); "
            "use --distribution ipc (loss points) or rounds (exchanges)"
        )
    if distribution and (waves or counterattack is not None):
        raise click.UsageError("--distribution is not available with --wave or --counterattack")
    if plot_path is not None and (waves or counterattack is not None):
        raise click.UsageError("--plot draws one battle: it is not available with --wave or "
                               "--counterattack")
    destination = _destination(output, [rules_file])  # before any computing: costs nothing

    from . import api, waves  # the engine: numpy, numba, pandas (waves: its sequences solver)
    from .errors import BattleInputError

    assert api.SEQUENCES["solve"] is waves.simulate_waves  # (api.simulate solves waves too)

    _set_threads(threads)
    progress = _Progress()
    try:
        result = api.simulate(
            rules=rules if rules is not None else ruleset, progress=progress,
            rounds_distribution=distribution == "rounds", **options)
    except BattleInputError as exc:
        _fail(exc)
    finally:
        progress.close()
    for line in _ignored_options(ctx, method, result):
        _say(line)
    if fmt == "json":
        text = result.to_json()
    elif fmt == "csv":
        if distribution:
            text = result.distribution_csv(distribution)
            if not text and distribution == "policy":
                raise click.UsageError("the policy distribution is the table of the optimal "
                                       "retreat: it needs --retreat optimal")
            if not text and distribution == "reactions":
                raise click.UsageError("the reactions distribution is the table of the "
                                       "scramble and kamikaze choices: it needs "
                                       "--scramble-from or --kamikaze")
            if not text:
                raise click.UsageError(
                    f"the {distribution} distribution is not available for this method"
                )
        else:
            text = result.to_csv()
    else:
        text = result.table()
    _emit(text, destination, fmt)
    if plot_path is not None:
        try:
            plot.save_plot(result, plot_path)
        except OSError as exc:
            raise click.UsageError(f"cannot write {plot_path}: {exc.strerror}") from None
        except OutputError as exc:
            _fail(exc)


RAID_SECTIONS = (
    ("Edition, raiders and target", ("rules", "rules_file", "attacker", "defender",
                                     "target_value", "facility", "aa", "attacker_tech",
                                     "defender_tech", "attacker_ool", "dice", "die_law")),
    ("A raid in progress", ("start_step", "hits_on_attacker")),
    ("Method", ("method", "trials", "seed", "threads")),
    ("Output", ("fmt", "distribution", "output")),
)


@cli.command(cls=_SectionedCommand, sections=RAID_SECTIONS)
@rules_option
@rules_file_option
@click.option("--attacker", "-a", required=True, help='Bombers, and escorts where the edition '
              'has an air battle (1940-2e), e.g. "3 bomber 2 fighter".')
@click.option("--defender", "-d", default=None,
              help="Interceptors, where the edition has an air battle (1940-2e fighters).")
@click.option("--target-value", type=int, default=None, metavar="N",
              help="The territory's production value: the damage cap depends on it (Revised, "
              "AA50, 1942-2e).")
@click.option("--facility", default=None, metavar="KIND", help="What is bombed, where the "
              "edition has facilities: major, minor, airbase or navalbase (1940-2e).")
@click.option("--aa", is_flag=True, help="The territory has an AA gun (Classic, Revised, AA50; "
              "1942-2e and 1940-2e targets always fire their built-in AA).")
@click.option("--start-step", default="start", metavar="STEP",
              help="A raid in progress: aa_fire (the air battle over), aa_casualties (the AA "
              "rolled, --hits-on-attacker hits to take) or bombing (the AA over).")
@click.option("--hits-on-attacker", type=int, default=0, metavar="N",
              help="The AA's hits on the bombers, not yet taken (--start-step aa_casualties).")
@_table_options("attacker_tech", "defender_tech", "attacker_ool", "dice", "die_law",
                *METHOD_OPTIONS,
                attacker_tech={"help": "Attacker technologies, comma separated "
                               "(heavy_bombers, jets, ...)."},
                defender_tech={"help": "Defender technologies (jets, radar, ...)."},
                attacker_ool={"help": "Order of losses of the bombers and escorts (as for run)."},
                dice={"help": "Dice model."},
                method={"help": "exact, Monte Carlo (mc), or auto (exact)."},
                trials={"help": "Monte Carlo trials."})
@threads_option
@click.option("--distribution", type=click.Choice(("damage",)), default=None,
              help="With --format csv: the law of the damage instead of the one-row summary.")
@format_option
@output_option
@click.pass_context
def raid(ctx, rules, rules_file, attacker, defender, target_value, facility, aa, start_step,
         hits_on_attacker, attacker_tech, defender_tech, attacker_ool, dice, die_law, method,
         trials, seed, threads, distribution, fmt, output):
    """Odds of a strategic bombing raid: the damage dealt and the units each side loses."""
    ruleset = _ruleset(rules, rules_file)
    if distribution and fmt != "csv":
        raise click.UsageError(
            f"--distribution needs --format csv (--format csv --distribution {distribution})")
    destination = _destination(output, [rules_file])

    from .errors import BattleInputError
    from .raids import raid as run_raid  # the engine: numpy, pandas (numba for an air battle)

    _set_threads(threads)
    progress = _Progress()
    try:
        result = run_raid(
            rules=rules if rules is not None else ruleset, attacker=attacker, defender=defender,
            target_value=target_value, facility=facility, aa=aa, trials=trials, seed=seed,
            method=method, attacker_tech=attacker_tech, defender_tech=defender_tech,
            attacker_ool=attacker_ool, dice=dice, progress=progress, start_step=start_step,
            hits_on_attacker=hits_on_attacker, die_law=die_law)
    except BattleInputError as exc:
        _fail(exc)
    finally:
        progress.close()
    for line in [*_ignored_options(ctx, result.method, result),
                 *(f"Warning: {note}" for note in result.notes)]:
        _say(line)
    if fmt == "json":
        text = result.to_json()
    elif fmt == "csv":
        text = result.distribution_csv(distribution) if distribution else result.to_csv()
    else:
        text = result.table()
    _emit(text, destination, fmt)


@cli.command()
@rules_option
@rules_file_option
@click.option("--defender", "-d", default=None, help="The defending army (with --defend: the "
              "defender's units already there, may be omitted).")
@click.option("--attacker", "-a", default=None, help="With --defend: the attacking army. "
              "Otherwise: units sent in any case, on top of the pool.")
@click.option("--pool", required=True, help='Units available, each up to its count, e.g. '
              '"8 inf 4 art 4 tank 3 ftr 2 bmb".')
@click.option("--goal", default="takes_territory>=0.9", show_default=True,
              help="KEY>=VALUE or KEY<=VALUE on any outcome key of the JSON result; several "
              "separated by commas.")
@click.option("--minimize", type=click.Choice(("cost", "loss")), default=None,
              help="cost (IPC value of the units taken from the pool; the default) or loss "
              "(expected IPC lost by the planner's side).")
@click.option("--maximize", type=click.Choice(("swing",)), default=None,
              help="swing: the planner's side's expected TUV swing.")
@click.option("--top", type=click.IntRange(1, 1000), default=5, show_default=True,
              help="How many plans to list.")
@click.option("--defend", is_flag=True, help="Plan a defence: the cheapest addition from the "
              "pool to --defender that meets the goal against --attacker.")
@click.option("--max-cost", type=_OptionType(_MAX_COST), default=None, metavar="IPC",
              help="Leave out forces that cost more.")
@click.option("--search", type=click.Choice(("auto", "monotone", "exhaustive")), default="auto",
              show_default=True, help="auto: prune by monotonicity where it holds; monotone: "
              "prune anyway; exhaustive: solve every force.")
@_table_options(*PLAN_OPTIONS, trials={"default": 100_000, "help": "Monte Carlo trials per force."},
                seed={"help": "One seed for every force."})
@threads_option
@format_option
@output_option
@click.pass_context
def plan(ctx, rules, rules_file, defender, attacker, pool, goal, minimize, maximize, top, defend,
         max_cost, search, threads, fmt, output, **values):
    """The cheapest attack (or, with --defend, defence) from a pool that meets a goal.

    Lists the best plans and the next best (--top), each with its outcome. Assumes that
    adding a unit never lowers a side's chances (see docs/planning.md); where that does not hold
    (--retreat-below, other goals, orders of losses that depend on the force) every force is
    solved.
    """
    if minimize and maximize:
        raise click.UsageError("give --minimize or --maximize, not both")
    ruleset = _ruleset(rules, rules_file)
    destination = _destination(output, [rules_file])
    from .errors import BattleInputError
    from .planner import plan as plan_battle

    _set_threads(threads)

    progress = _Progress()  # on a terminal: compiling notice, then the search's progress
    try:
        result = plan_battle(
            rules=rules if rules is not None else ruleset, defender=defender,
            attacker=attacker, pool=pool, goal=goal, objective=maximize or minimize or "cost",
            top=top, defend=defend, max_cost=max_cost, search=search,
            progress=progress,
            # plan's own default of trials (100,000 a force) when --trials is not given
            **{**_given_options(ctx, values, PLAN_OPTIONS), "trials": values["trials"]})
    except BattleInputError as exc:
        _fail(exc)
    finally:
        progress.close()
    text = {"json": result.to_json, "csv": result.to_csv, "table": result.table}[fmt]()
    _emit(text, destination, fmt)


def _unit_rows(ruleset) -> list[dict]:
    rows = []
    for unit in ruleset.units.values():
        abilities = []
        if unit.hp > 1:
            abilities.append(f"{unit.hp} hits")
        if unit.is_aa:
            shots = f"{unit.aa_shots} shots/gun" if ruleset.flags["aa_dice"] == "per_gun" else (
                "1 shot/aircraft")
            abilities.append(f"AA at {unit.aa_value} ({shots})")
        for support in ruleset.supports:
            if support.giver == unit.name:
                abilities.append(f"+{support.bonus} on attack to {support.count} "
                                 f"{' or '.join(support.targets)}")
        if unit.submarine:
            abilities.append("submarine")
        if unit.anti_sub:
            abilities.append("anti-sub")
        if unit.bombard:
            abilities.append(f"bombards at {unit.bombard}")
        if unit.carrier_capacity:
            abilities.append(f"carries {unit.carrier_capacity} fighters")
        if unit.transport:
            abilities.append("transport")
        if not unit.can_attack:
            abilities.append("cannot attack")
        if not unit.can_be_casualty:
            abilities.append("never a casualty")
        if unit.raid_dice:
            dice = ("1 die" if unit.raid_dice == 1 else f"best of {unit.raid_dice} dice"
                    if unit.raid_best_die else f"{unit.raid_dice} dice")
            bonus = f" +{unit.raid_bonus}" if unit.raid_bonus else ""
            where = f" ({', '.join(unit.raid_targets)} only)" if unit.raid_targets else ""
            abilities.append(f"raids: {dice}{bonus}{where}")
        if ruleset.flags["air_battle"] and (unit.air_attack or unit.air_defense):
            abilities.append(f"air battle {unit.air_attack}/{unit.air_defense}")
        if unit.defenceless:
            abilities.append("lost when alone")
        rows.append({
            "name": unit.name, "aliases": ",".join(unit.aliases), "cost": unit.cost,
            "attack": unit.attack, "defense": unit.defense, "hp": unit.hp,
            "domain": unit.domain, "abilities": "; ".join(abilities),
        })
    return rows


def _rows_text(rows: list[dict], fmt: str) -> str:
    if fmt == "json":
        import json

        return json.dumps(rows, indent=2, ensure_ascii=False)
    if fmt == "csv":
        from .results import rows_csv

        return rows_csv(rows)
    widths = {k: max(len(k), *(len(str(r[k])) for r in rows)) for k in rows[0]}
    lines = ["  ".join(k.ljust(widths[k]) for k in rows[0])]
    lines += ["  ".join(str(r[k]).ljust(widths[k]) for k in r).rstrip() for r in rows]
    return "\n".join(lines)


@cli.command()
@rules_option
@rules_file_option
@format_option
@output_option
def units(rules, rules_file, fmt, output):
    """Unit table of an edition: names, aliases, cost, attack, defence, abilities."""
    ruleset = _ruleset(rules, rules_file)
    destination = _destination(output, [rules_file])
    _emit(_rows_text(_unit_rows(ruleset), fmt), destination, fmt)


def _edition_row(edition_id: str, load_rules) -> dict:
    """One line of `battlecalc rules`; a broken edition file is listed as such, not fatal."""
    from .errors import BattleInputError

    try:
        ruleset = load_rules(edition_id)
    except (BattleInputError, ValueError, RecursionError) as exc:
        problem = " ".join(str(exc).split())
        return {"id": edition_id, "name": "(invalid edition file)", "description": problem}
    return {"id": edition_id, "name": ruleset.name, "description": ruleset.description}


@cli.command(name="rules")
@click.option("--rules", "edition", type=click.Choice(list_editions()), default=None,
              help="Show one edition's rule flags and technologies.")
@rules_file_option
@format_option
def rules_command(edition, rules_file, fmt):
    """Editions battlecalc knows, or one edition's rule flags and technologies."""
    from . import RULE_FLAGS, load_rules

    ruleset = _ruleset(edition, rules_file, required=False)
    if ruleset is None:
        rows = [_edition_row(edition_id, load_rules) for edition_id in list_editions()]
        click.echo(_for_reader(_rows_text(rows, fmt), fmt))
        return
    formula_model = ruleset.model == "formula"
    rows = [{"kind": "flag", "name": name, "value": str(value),
             "meaning": RULE_FLAGS[name][2]} for name, value in ruleset.flags.items()
            if name.startswith("formula_") == formula_model]
    rows += [{"kind": "tech", "name": tech.name, "value": "", "meaning": tech.description}
             for tech in ruleset.techs.values()]
    rows += [{"kind": "facility", "name": f.name, "value": str(f.max_damage),
              "meaning": f"{f.description or f.name}: a raid deals it at most this damage"}
             for f in ruleset.facilities.values()]
    click.echo(_for_reader(_rows_text(rows, fmt), fmt))


@cli.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; anything but this machine's own prints a warning.")
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True)
@click.option("--workers", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Server processes sharing the port (each warms its kernels and keeps its "
              "own cache of exact answers).")
@click.option("--watch", default=None, metavar="DIR",
              help="A folder of TripleA saves (TripleA's autosave folder): the newest complete "
              "save is the page's live board, every pending battle solved, pushed to each "
              "open page as TripleA writes it.")
@click.option("--allow-host", "allow_hosts", multiple=True, metavar="NAME",
              help="Also answer requests that name the server NAME (Host header; repeatable): "
              "it answers its loopback names, its address and, on 0.0.0.0, this machine's "
              "names and addresses.")
def serve(host, port, workers, watch, allow_hosts):
    """A local web page: armies, options, odds and charts (needs battlecalc[web])."""
    try:
        from .web.server import serve as serve_page
    except ImportError as exc:
        raise click.UsageError(f"serve needs the web extra: pip install 'battlecalc[web]' "
                               f"({exc})") from None
    from .errors import BattleInputError

    try:
        # checks that it can listen there, and the folder, before the warm-up
        serve_page(host, port, workers, watch=watch, allow_hosts=allow_hosts)
    except BattleInputError as exc:
        _fail(exc)
    except KeyboardInterrupt:  # Ctrl-C, the way a server stops: no "Aborted."
        pass
    # (uvicorn raises the Ctrl-C it caught again once it has shut down, but asyncio's runner
    # may take it as a cancel of a task that then ends quietly: the server returns instead)
    _say("battlecalc: stopped")


@cli.command()
@click.argument("battles", type=click.Path(dir_okay=False))
@click.option("--output", "-o", type=click.Path(dir_okay=False), default=None,
              help="Write the results to FILE (.csv or .parquet, atomically); default: CSV on "
              "standard output.")
@click.option("--vary", multiple=True, metavar="KEY=VALUES",
              help="Run each battle for every value: attacker.infantry=1..20, trials=1e4,1e5, "
              "attacker_ool=cheapest|weakest (repeatable: every combination).")
@_table_options("seed", seed={"help": "Sweep seed: a row without a seed gets one derived "
                               "from it and the row number. Default: random."})
@click.option("--workers", "-w", type=click.IntRange(1, 1024), default=None,
              help="Local worker processes (default: the CPU count, and this process alone for "
              "at most 64 battles; 1 runs in this process).")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="Run on this Dask distributed scheduler (tcp://host:8786) instead.")
@click.option("--chunk-size", type=click.IntRange(1, 100_000), default=None,
              help="Battles per task (default: automatic, at most 32).")
def sweep(battles, output, vary, seed, workers, scheduler, chunk_size):
    """Odds of every battle of a CSV or Parquet table, one result row per battle."""
    # imported when the command runs; its heavy parts (worker processes, dask, pyarrow) load
    # only inside these calls
    from .errors import BattleInputError
    from .sweeper import check_output, option_lookalikes, read_battles, write_table
    from .sweeper import sweep as run_sweep

    progress = _Progress()
    try:
        if output:
            check_output(output, inputs=[battles])  # a bad path, or the input itself: now
        frame = read_battles(battles)
        for note in option_lookalikes(frame.columns):
            _say(f"Note: {note}")
        table = run_sweep(frame, vary=vary, seed=seed, workers=workers, scheduler=scheduler,
                          chunk_size=chunk_size, progress=progress)
        progress.close()
        if output:
            write_table(table, output, inputs=[battles])
        else:
            click.echo(table.to_csv(index=False), nl=False)
    except BattleInputError as exc:
        _fail(exc)
    finally:
        progress.close()
    failed = int(table["error"].notna().sum())
    if failed:
        click.echo(f"{failed} of {len(table)} battles failed (see the error column)", err=True)


GAME_SECTIONS = (
    ("Save and edition", ("save", "rules", "rules_file", "territory", "attack", "show_all")),
    ("Method", ("method", "dice", "die_law", "trials", "seed")),
    ("Policies: orders of losses, retreats, submerging",
     ("attacker_ool", "defender_ool", "keep_land", "aa_last", "retreat_after",
      "retreat_when_left", "retreat_when_only_air", "retreat_below", "retreat_air_loss",
      "strafe", "attacker_submerge", "defender_submerge")),
    ("Decisions solved: the optimal retreat, scramble and kamikaze (1940-2e)",
     ("retreat_policy", "optimize", "territory_value", "scramble_from", "scramble", "kamikaze",
      "kamikaze_targets")),
    ("Output", ("fmt", "output")),
)


def _game_options() -> tuple[str, ...]:
    from .options import game_options  # (not triplea.game: its save reader costs 30 ms)

    return game_options()


@cli.command(cls=_SectionedCommand, sections=GAME_SECTIONS)
@click.argument("save")
@rules_option
@rules_file_option
@click.option("--territory", default=None, metavar="NAME",
              help="One place only: its battle, or with --attack the odds of that attack on "
              "its units (any territory or sea zone, attacked or not).")
@click.option("--attack", default=None, metavar="ARMY",
              help='With --territory: an attack to solve against its units, e.g. "3 inf 2 tank".')
@click.option("--all", "show_all", is_flag=True,
              help="Also list every territory's units (table; CSV: one row per nation and unit).")
@_table_options(*_game_options())
@format_option
@output_option
@click.pass_context
def game(ctx, save, rules, rules_file, territory, attack, show_all, fmt, output, **values):
    """Read a TripleA save (.tsvg): the game, its edition, and every pending battle solved."""
    ruleset = _ruleset(rules, rules_file, required=False)
    destination = _destination(output, [save, rules_file])
    options = _given_options(ctx, values, _game_options())

    from .errors import BattleInputError
    from .triplea import read_game

    try:
        result = read_game(save, rules=ruleset, territory=territory, attack=attack, **options)
    except BattleInputError as exc:
        _fail(exc)
    if fmt == "json":
        text = result.to_json()
    elif fmt == "csv":
        text = result.territories_csv() if show_all else result.to_csv()
    else:
        text = result.table(show_territories=show_all or territory is not None)
    _emit(text, destination, fmt)


READ_TIME_LIMIT_S = 20.0  # watch: reading one save (as the web server reads an upload)
READ_MEMORY = 1024 ** 3  # the address space of the process that reads it


@cli.command()
@click.argument("folder", metavar="DIR")
@click.option("--once", is_flag=True, help="Print the board of the newest complete save now and "
              "exit (default: print it again at each new save, until Ctrl-C).")
@click.option("--interval", type=click.FloatRange(0.05, 60), default=0.5, show_default=True,
              metavar="SECONDS", help="How often the folder is looked at.")
@click.option("--name", "pattern", default="*", show_default=True, metavar="PATTERN",
              help="Only saves whose name matches (any case), e.g. 'autosaveBefore*'.")
@click.option("--format", "fmt", type=click.Choice(("table", "json")), default="table",
              show_default=True, help="Output format (json: one board per line; with --once "
              "indented).")
def watch(folder, once, interval, pattern, fmt):
    """Watch a folder of TripleA saves (TripleA's autosave folder): the newest complete save's
    battles, each solved from where it stands, sorted by TUV at risk, with what changed since
    the save before and the luck so far."""
    import asyncio
    import json

    from .errors import BattleInputError
    from .triplea.board import board_table, changes
    from .triplea.watch import SETTLE_S, SaveFolder
    from .web.live import solve_here
    from .web.saves import read_in_child  # the server's reader: a child under limits

    try:
        saves = SaveFolder(folder, pattern=pattern)
    except BattleInputError as exc:
        _fail(exc)
    progress = _Progress()
    previous, noted, unreadable = None, 0, None
    try:
        if not once:
            _say(f"watching {saves.shown} for TripleA saves (Ctrl-C stops)")
        deadline = time.monotonic() + SETTLE_S + 2 * interval
        while True:
            try:
                found = saves.poll()
            except OSError as exc:  # the folder gone, or no longer listed: say so, look again
                problem = f"cannot read {saves.shown}: {exc.strerror or exc}"
                if once:
                    raise BattleInputError(problem) from None
                if problem != unreadable:
                    _say(f"Note: {problem}; looking again every {interval:g} s")
                found, unreadable = None, problem
            else:
                unreadable = None
            for note in saves.notes_since(noted):
                _say(f"Note: {note}")
            noted = saves.said
            if found is None:
                if once and time.monotonic() > deadline:
                    named = "" if pattern == "*" else f" named {pattern}"
                    raise BattleInputError(f"no complete TripleA save (.tsvg){named} in "
                                           f"{saves.shown}")
                time.sleep(min(interval, SETTLE_S) if once else interval)
                continue
            try:
                board = asyncio.run(read_in_child(found.raw, READ_TIME_LIMIT_S, READ_MEMORY))
            except BattleInputError as exc:
                if once:
                    raise BattleInputError(f"{found.name}: {exc}") from None
                _say(f"Note: {found.name} could not be read: {exc}")
                continue
            board["file"] = found.name
            board["modified"] = time.strftime("%H:%M:%S", time.localtime(found.mtime_ns / 1e9))
            solve_here(board, progress)
            progress.close()
            board["changes"] = changes(previous, board)
            previous = board
            if fmt == "json":  # (names from the save: DEL and C1 escaped, as run's JSON)
                click.echo(json_safe(json.dumps(board, indent=2 if once else None,
                                                ensure_ascii=False)))
            else:  # (each line of the table escaped: board_table)
                click.echo(printable(board_table(board)) + ("" if once else "\n"), nl=False)
            if once:
                return
            sys.stdout.flush()
    except BattleInputError as exc:
        _fail(exc)
    except KeyboardInterrupt:
        pass
    finally:
        progress.close()
        saves.close()


TURN_FORMATS = ("text", "json", "moves")
# the planner's options (its defaults: battlecalc.turn.plan.plan_turn's)
TURN_PLAN_OPTIONS = ("objective", "min_win", "counter", "territory_values", "only", "exclude",
                     "keep", "top", "time_budget")


@cli.command()
@click.argument("save")
@click.option("--reach", "show_reach", is_flag=True,
              help="List every legal attack of the player's units in its combat move: per "
              "class of units (territory, type, movement left), each territory it may attack "
              "and the movement that takes (docs/turn.md).")
@click.option("--player", default=None, metavar="NAME",
              help="The player (TripleA's name; default: the save's player to move).")
@click.option("--objective", type=click.Choice(("value", "swing", "hold")), default="value",
              show_default=True, help="What the plan maximises: value (E[TUV swing] + "
              "production x P(take), summed over its battles), swing (E[TUV swing]), hold "
              "(with the counter-attack: the swing of both battles + production x P(take "
              "and hold)).")
@click.option("--min-win", type=click.FloatRange(0, 1), default=0.8, show_default=True,
              metavar="P", help="Every territory the plan attacks is taken with at least "
              "this probability.")
@click.option("--counter", type=click.Choice(("none", "max", "alive")), default=None,
              help="The enemy's counter-attack on each territory taken: none (the attacks "
              "alone), max (every enemy unit that can reach it in its next turn), alive (as "
              "max, less the units the plan destroys with P >= --min-win). Default: none, "
              "max under --objective hold.")
@click.option("--territory-values", default=None, metavar="FILE",
              help='A JSON file {"territory": IPC} counted when a territory is taken, '
              "instead of its production.")
@click.option("--only", default=None, metavar="T,..", help="Attack only these territories.")
@click.option("--exclude", default=None, metavar="T,..", help="Never attack these.")
@click.option("--keep", multiple=True, metavar='"N UNIT@TERRITORY"',
              help='Units that stay home, e.g. "3 infantry@Russia" (repeatable).')
@click.option("--top", type=click.IntRange(1, 20), default=1, show_default=True,
              help="Also show the next best plans.")
@click.option("--time-budget", type=click.FloatRange(0, 3600, min_open=True), default=30.0,
              show_default=True, metavar="S",
              help="Seconds for the search; the best plan found is kept, and said proven "
              "optimal or not.")
@click.option("--format", "fmt", type=click.Choice(TURN_FORMATS), default="text",
              show_default=True, help='Output format: text, json ({"value", "battles": '
              '[{"target", "attackers", "p_win", "p_take", "swing", "value", ...}], ...}) or '
              'moves ([{"unit", "count", "from", "to"}] in TripleA\'s names). With --reach: '
              'text or json ({"TERRITORY / TYPE xN": {target: movement needed}}).')
@output_option
def turn(save, show_reach, player, objective, min_win, counter, territory_values, only,
         exclude, keep, top, time_budget, fmt, output):
    """A player's combat move in a TripleA save (.tsvg): the plan worth the most, every
    battle solved exactly (docs/turn.md); with --reach, its legal attacks."""
    ctx = click.get_current_context()
    if show_reach:
        given = [f"--{name.replace('_', '-')}" for name in TURN_PLAN_OPTIONS
                 if _given(ctx, name)]
        if given:
            raise click.UsageError(f"{', '.join(given)}: the plan's options, not --reach's")
        if fmt == "moves":
            raise click.UsageError("--format moves is the plan's: --reach lists attacks as "
                                   "text or json")
    destination = _destination(output, [save] + ([territory_values] if territory_values
                                                 else []))

    from .errors import BattleInputError

    if show_reach:
        from .turn import turn_reach

        try:
            result = turn_reach(save, player=player)
        except BattleInputError as exc:
            _fail(exc)
        if fmt == "json":
            for key, why in result.unsupported():
                _say(f"Note: unsupported: {key}: {why}")
            for note in result.board.notes:
                _say(f"Note: {note}")
            _emit(result.to_json(), destination, "json")
        else:
            _emit(result.table(), destination, "table")
        return

    from .turn import plan_turn

    progress = _Progress()
    try:
        plan = plan_turn(save, player, objective=objective, min_win=min_win, counter=counter,
                         territory_values=territory_values, only=only, exclude=exclude,
                         keep=list(keep) or None, top=top, time_budget=time_budget,
                         progress=lambda text: progress(0, 0, text))
    except BattleInputError as exc:
        _fail(exc)
    finally:
        progress.close()
    if fmt == "json":
        _emit(plan.to_json(), destination, "json")
    elif fmt == "moves":
        for note in plan.notes:
            _say(f"Note: {note}")
        _emit(plan.moves_json(), destination, "json")
    else:
        _emit(plan.table(), destination, "table")


@cli.group()
def edition():
    """Edition files from elsewhere: `battlecalc edition import GAME.xml -o FILE.toml`."""


@edition.command(name="import")
@click.argument("game_file", metavar="GAME.xml")
@output_option
@click.option("--lenient", is_flag=True, help="Leave out what battlecalc cannot model (a "
              "warning each) instead of refusing the file.")
@click.option("--id", "edition_id", default=None, metavar="ID",
              help="The edition's id (default: from the game's name).")
def edition_import(game_file, output, lenient, edition_id):
    """A TripleA map's game file (XML), or a save, as an edition file (TOML) for
    --rules-file."""
    destination = _destination(output, [game_file])

    from .errors import BattleInputError
    from .triplea.mapfile import import_edition

    try:
        imported = import_edition(game_file, lenient=lenient, edition_id=edition_id)
    except BattleInputError as exc:
        _fail(exc)
    for warning in imported.warnings:
        _say(f"Warning: {warning}")
    _emit(imported.text, destination, None)
    if destination.kind != "stdout":
        _say(f"{imported.game}: an edition on the rules of {imported.base} written to "
             f"{output}")


@cli.command()
@click.argument("save")
@rules_option
@format_option
@output_option
@click.option("--plot", "plot_path", default=None, help="Also draw each battle's swing against "
              "its law into FILE.png or FILE.svg (needs battlecalc[plot]).")
def luck(save, rules, fmt, output, plot_path):
    """The luck of a TripleA game: its combat dice and battles against their laws."""
    if plot_path is not None:
        from .plot import check_plot_path

        if problem := check_plot_path(plot_path, inputs=[save, output]):
            raise click.UsageError(problem)
    destination = _destination(output, [save])

    from .errors import BattleInputError
    from .triplea.luck import read_luck

    try:
        result = read_luck(save, rules=rules)
    except BattleInputError as exc:
        _fail(exc)
    text = {"json": result.to_json, "csv": result.to_csv}.get(fmt, result.table)()
    _emit(text, destination, fmt)
    if plot_path is not None:
        from .triplea.luck import save_luck_plot

        try:
            save_luck_plot(result, plot_path)
        except BattleInputError as exc:
            _fail(exc)


def main():
    cli()
