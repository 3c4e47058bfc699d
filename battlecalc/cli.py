"""Command-line interface: parse, call the library, format.  Bad input exits 2 with one line."""

from __future__ import annotations

import json
import math
import os
import sys
import tempfile
import time

import click

from . import api
from .errors import BattleInputError
from .rules import RULE_FLAGS, list_editions, load_rules
from .sea import SUBMERGE_POLICIES

FORMATS = ("table", "json", "csv")


class _OneLineErrors(click.Group):
    """Print usage and input errors as a single ``Error: ...`` line, exit status 2."""

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
            click.echo(f"Error: {' '.join(exc.format_message().split())}", err=True)
            sys.exit(exc.exit_code)
        except click.exceptions.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


class _Trials(click.ParamType):
    """A trial count: 100000, 100_000, 100,000 or 1e5."""

    name = "N"

    def convert(self, value, param, ctx):
        if isinstance(value, int):
            return value
        text = str(value).replace("_", "").replace(",", "").strip()
        try:
            number = float(text) if ("e" in text.lower() or "." in text) else int(text)
        except ValueError:
            self.fail(f"{value!r} is not a number of trials", param, ctx)
        if not math.isfinite(number) or number != int(number):
            self.fail(f"{value!r} is not a whole number of trials", param, ctx)
        return int(number)


def _fail(exc: BattleInputError):
    raise click.UsageError(str(exc)) from None


def write_atomically(path: str, text: str) -> None:
    """Write the whole file or nothing: a temporary file in the same folder, then rename."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise click.UsageError(f"cannot write {path}: folder {folder} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=".battlecalc-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise click.UsageError(f"cannot write {path}: {exc.strerror}") from None


def _emit(text: str, output: str | None) -> None:
    if output:
        write_atomically(output, text if text.endswith("\n") else text + "\n")
    else:
        click.echo(text.rstrip("\n"))


class _Progress:
    """A progress bar on stderr, shown only when stderr is a terminal and a run passes 1 s."""

    def __init__(self):
        self.started = time.perf_counter()
        self.bar = None
        self.shown = 0

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            if not sys.stderr.isatty() or time.perf_counter() - self.started < 1.0:
                return
            self.bar = click.progressbar(length=total, label="trials", file=sys.stderr)
            self.bar.__enter__()
        self.bar.update(done - self.shown)
        self.shown = done

    def close(self):
        if self.bar is not None:
            self.bar.__exit__(None, None, None)


rules_option = click.option(
    "--rules", "rules", type=click.Choice(list_editions()), required=True,
    help="Edition id (see `battlecalc rules`).",
)
format_option = click.option(
    "--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True,
    help="Output format.",
)
output_option = click.option(
    "--output", "-o", type=click.Path(dir_okay=False), default=None,
    help="Write to FILE (atomically) instead of standard output.",
)


@click.group(cls=_OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="battlecalc")
def cli():
    """battlecalc: battle odds for Axis & Allies-family games."""


@cli.command()
@rules_option
@click.option("--attacker", "-a", default=None, help='Attacking army, e.g. "3 inf, 1 art, 2 tank".')
@click.option("--defender", "-d", default=None, help='Defending army, e.g. "4inf 1arm 1aa".')
@click.option("--sea", is_flag=True, help="A sea battle (default: a land battle).")
@click.option("--trials", "-n", type=_Trials(), default=api.DEFAULT_TRIALS, show_default=True,
              help="Monte Carlo trials (1e6, 1_000_000 and 1,000,000 all work).")
@click.option("--seed", "-s", type=int, default=None,
              help="Random seed; the same seed gives the same numbers. Default: random (reported).")
@click.option("--method", "-m", type=click.Choice(api.METHODS), default="auto", show_default=True,
              help="exact solver, Monte Carlo (mc), or exact when small enough (auto).")
@click.option("--attacker-tech", default="", help="Attacker technologies, comma separated "
              "(heavy_bombers, jets, super_subs, ...; see `battlecalc rules --rules R`).")
@click.option("--defender-tech", default="", help="Defender technologies, comma separated.")
@click.option("--distribution", type=click.Choice(("survivors", "ipc", "rounds", "swing")),
              default=None, help="With --format csv: write this distribution instead of the "
              "one-row summary.")
@click.option("--threads", type=click.IntRange(1, 1024), default=None,
              help="Worker threads for Monte Carlo (results do not depend on it).")
@click.option("--landing", default=None, help="Amphibious assault: land units coming from "
              "transports (attackers on top of --attacker, which may then be omitted).")
@click.option("--bombard", default=None, help="Amphibious assault: ships bombarding in round 1.")
@click.option("--attacker-submerge", type=click.Choice(SUBMERGE_POLICIES), default="never",
              show_default=True, help="When the attacker's submarines submerge (sea battles).")
@click.option("--defender-submerge", type=click.Choice(SUBMERGE_POLICIES), default="never",
              show_default=True, help="When the defender's submarines submerge (sea battles).")
@click.option("--attacker-level", type=int, default=None,
              help="Formula combat: attacker's military level 1-10.")
@click.option("--defender-level", type=int, default=None,
              help="Formula combat: defender's military level 1-10.")
@click.option("--counter", type=int, default=None,
              help="Formula combat: the attacker's counter points.")
@click.option("--hatred", is_flag=True, default=None,
              help="Formula combat: national hatred, +1 to the attacker's value.")
@click.option("--loss-multiplier", type=int, default=None,
              help="Formula combat: multiply both sides' losses (Kursk: 2).")
@click.option("--exchanges", default=None,
              help="Formula combat: number of exchanges, or until-done.")
@click.option("--exchange-cap", type=int, default=None,
              help="Formula combat: most exchanges for until-done.")
@click.option("--flips", type=click.Choice(("A2", "A1")), default=None,
              help="Formula combat: flip/removal reading (default: the edition's flag).")
@click.option("--attacker-ool", default=None, help="Attacker's order of losses: a preset "
              "(cheapest, weakest, smart), units to lose first ('bomber,tank') or TripleA's "
              "'*^infantry;*^fighter;1^infantry'.")
@click.option("--defender-ool", default=None, help="Defender's order of losses (as above).")
@click.option("--keep-land", type=int, default=0, show_default=True,
              help="The attacker loses its last N land units only after every aircraft.")
@click.option("--aa-last", is_flag=True, help="The defender loses its AAA last (1942 2E).")
@click.option("--retreat-after", type=int, default=None,
              help="The attacker retreats after round R if the battle is undecided.")
@click.option("--retreat-when-left", type=int, default=None,
              help="The attacker retreats when it has N or fewer units left.")
@click.option("--retreat-when-only-air", is_flag=True,
              help="The attacker retreats when no land unit is left.")
@click.option("--retreat-below", type=float, default=None,
              help="The attacker retreats when its chance of winning falls below P.")
@click.option("--strafe", type=int, default=None,
              help="The attacker retreats once the defender has N or fewer units left.")
@format_option
@output_option
def run(rules, attacker, defender, sea, trials, seed, method, attacker_tech, defender_tech,
        distribution, threads, landing, bombard, attacker_submerge, defender_submerge,
        attacker_level, defender_level, counter, hatred, loss_multiplier, exchanges,
        exchange_cap, flips, attacker_ool, defender_ool, keep_land, aa_last, retreat_after,
        retreat_when_left, retreat_when_only_air, retreat_below, strafe, fmt, output):
    """Odds of one battle."""
    if attacker is None and landing is None:
        raise click.UsageError("Missing option '--attacker' (the attacking army).")
    if defender is None:
        raise click.UsageError("Missing option '--defender' (the defending army).")
    if distribution and fmt != "csv":
        raise click.UsageError("--distribution needs --format csv")
    if threads:
        import numba

        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    progress = _Progress()
    try:
        result = api.simulate(
            rules=rules, attacker=attacker, defender=defender, sea=sea, trials=trials,
            seed=seed, method=method, attacker_tech=attacker_tech, defender_tech=defender_tech,
            progress=progress, landing=landing, bombard=bombard,
            attacker_submerge=attacker_submerge, defender_submerge=defender_submerge,
            attacker_level=attacker_level, defender_level=defender_level, counter=counter,
            hatred=hatred or None, loss_multiplier=loss_multiplier, exchanges=exchanges,
            exchange_cap=exchange_cap, flips=flips, attacker_ool=attacker_ool,
            defender_ool=defender_ool, keep_land=keep_land, aa_last=aa_last,
            retreat_after=retreat_after, retreat_when_left=retreat_when_left,
            retreat_when_only_air=retreat_when_only_air, retreat_below=retreat_below,
            strafe=strafe, rounds_distribution=distribution == "rounds",
        )
    except BattleInputError as exc:
        _fail(exc)
    finally:
        progress.close()
    if fmt == "json":
        text = result.to_json()
    elif fmt == "csv":
        if distribution:
            text = result.distribution_csv(distribution)
            if not text:
                raise click.UsageError(
                    f"the {distribution} distribution is not available for this method"
                )
        else:
            text = result.to_csv()
    else:
        text = result.table()
    _emit(text, output)


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
        if unit.support_target:
            abilities.append(f"+{unit.support_bonus} to {unit.support_count} {unit.support_target}")
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
        return json.dumps(rows, indent=2, ensure_ascii=False)
    if fmt == "csv":
        import csv
        import io

        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        return buffer.getvalue()
    widths = {k: max(len(k), *(len(str(r[k])) for r in rows)) for k in rows[0]}
    lines = ["  ".join(k.ljust(widths[k]) for k in rows[0])]
    lines += ["  ".join(str(r[k]).ljust(widths[k]) for k in r).rstrip() for r in rows]
    return "\n".join(lines)


@cli.command()
@rules_option
@format_option
@output_option
def units(rules, fmt, output):
    """Unit table of an edition: names, aliases, cost, attack, defence, abilities."""
    _emit(_rows_text(_unit_rows(load_rules(rules)), fmt), output)


@cli.command(name="rules")
@click.option("--rules", "edition", type=click.Choice(list_editions()), default=None,
              help="Show one edition's rule flags and technologies.")
@format_option
def rules_command(edition, fmt):
    """Editions battlecalc knows, or one edition's rule flags and technologies."""
    if edition is None:
        rows = [{"id": e, "name": load_rules(e).name, "description": load_rules(e).description}
                for e in list_editions()]
        click.echo(_rows_text(rows, fmt))
        return
    ruleset = load_rules(edition)
    formula_model = ruleset.model == "formula"
    rows = [{"kind": "flag", "name": name, "value": str(value),
             "meaning": RULE_FLAGS[name][2]} for name, value in ruleset.flags.items()
            if name.startswith("formula_") == formula_model]
    rows += [{"kind": "tech", "name": tech.name, "value": "", "meaning": tech.description}
             for tech in ruleset.techs.values()]
    click.echo(_rows_text(rows, fmt))


@cli.command()
@click.argument("battles", type=click.Path(dir_okay=False))
@click.option("--output", "-o", type=click.Path(dir_okay=False), default=None,
              help="Write the results to FILE (.csv or .parquet, atomically); default: CSV on "
              "standard output.")
@click.option("--vary", multiple=True, metavar="KEY=VALUES",
              help="Run each battle for every value: attacker.infantry=1..20, trials=1e4,1e5, "
              "attacker_ool=cheapest|weakest (repeatable: every combination).")
@click.option("--seed", "-s", type=int, default=None,
              help="Sweep seed: a row without a seed gets one derived from it and the row "
              "number. Default: random.")
@click.option("--workers", "-w", type=click.IntRange(1, 1024), default=None,
              help="Local worker processes (default: the CPU count; 1 runs in this process).")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="Run on this Dask distributed scheduler (tcp://host:8786) instead.")
@click.option("--chunk-size", type=click.IntRange(1, 100_000), default=None,
              help="Battles per task (default: automatic, at most 32).")
def sweep(battles, output, vary, seed, workers, scheduler, chunk_size):
    """Odds of every battle of a CSV or Parquet table, one result row per battle."""
    # imported when the command runs; its heavy parts (worker processes, dask, pyarrow) load
    # only inside these calls
    from .sweep import check_output, option_lookalikes, read_battles, write_table
    from .sweep import sweep as run_sweep

    progress = _SweepProgress()
    try:
        if output:
            check_output(output)
        frame = read_battles(battles)
        for note in option_lookalikes(frame.columns):
            click.echo(f"Note: {note}", err=True)
        table = run_sweep(frame, vary=vary, seed=seed, workers=workers, scheduler=scheduler,
                          chunk_size=chunk_size, progress=progress)
        progress.close()
        if output:
            write_table(table, output)
        else:
            click.echo(table.to_csv(index=False), nl=False)
    except BattleInputError as exc:
        _fail(exc)
    finally:
        progress.close()
    failed = int(table["error"].notna().sum())
    if failed:
        click.echo(f"{failed} of {len(table)} battles failed (see the error column)", err=True)


class _SweepProgress:
    """Battles done, on stderr when it is a terminal."""

    def __init__(self):
        self.bar = None
        self.shown = 0

    def __call__(self, done: int, total: int) -> None:
        if not sys.stderr.isatty():
            return
        if self.bar is None:
            self.bar = click.progressbar(length=total, label="battles", file=sys.stderr)
            self.bar.__enter__()
        self.bar.update(done - self.shown)
        self.shown = done

    def close(self):
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None


def main():
    cli()
