"""Many battles, one table: :func:`sweep` and ``battlecalc sweep``.

Each input row is a battle: a column per keyword of :func:`battlecalc.simulate` (``rules``,
``attacker``, ``defender``, ``sea``, ``method``, ``trials``, ``seed``, ``attacker_ool``, ...);
other columns are labels, passed through untouched.  Each output row holds the input columns
plus the result columns of ``battlecalc run --format csv`` (:meth:`Result.flat_row`), and an
``error`` column: a bad row gets the message there and the other rows go on.

Grid expansion (``--vary`` / ``vary=``) turns each input row into a series; a column named
``SIDE.UNIT`` (``attacker.infantry``) sets the count of that unit in that side's army.

Rows without a seed get ``derived_seed(sweep_seed, i)`` (``i``: the row's position in the
output), so local runs with any number of workers and Dask runs give the same numbers.
"""

from __future__ import annotations

import contextlib
import csv
import io
import itertools
import math
import os
import re
import sys
import threading
import time
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from multiprocessing import context as _mp
from typing import Any

import numpy as np
import pandas as pd

from . import options as options_module
from .api import simulate
from .army import format_army, parse_army
from .batch import solve_rows
from .batch import typed_column as _typed
from .errors import BattleInputError, quoted
from .files import read_regular_file
from .options import OPTIONS, read, read_whole
from .output import Destination, open_destination
from .rules import load_rules
from .spec import MAX_SEED, check_int, check_progress, fresh_seed

# Every keyword of simulate() (and of the formula editions) a column may set, with the kind
# of value battlecalc.options reads from a cell (a row is one battle: no waves, no progress).
OPTION_TYPES: dict[str, str] = {o.name: o.kind for o in OPTIONS
                                if o.kind not in ("callable", "armies") and o.applies != {"waves"}}


def _option_types() -> dict[str, str]:
    """OPTION_TYPES of the table now (an option added to it is a column too)."""
    table = options_module.OPTIONS
    if table is OPTIONS:
        return OPTION_TYPES
    return {o.name: o.kind for o in table
            if o.kind not in ("callable", "armies") and o.applies != {"waves"}}
ARMY_SIDES = ("attacker", "defender", "landing", "bombard")
SUPPORTED_EXTENSIONS = (".csv", ".parquet", ".pq")
MAX_ROWS = 1_000_000  # after grid expansion: a typo like 1..1000000 x 1..1000 stops early
MAX_TABLE_BYTES = 64 * 1024 * 1024  # a battles file: MAX_ROWS rows of 64 bytes
MAX_CHUNK = 32  # battles per task: small enough to balance, big enough to hide task overhead
# a sweep of at most this many battles runs in this process unless workers are asked for:
# starting worker processes costs more than such a sweep saves (the fork server loads every
# kernel first: minutes of compiling on a first run, where this process solves small battles
# in plain Python and compiles only what its battles need, as `run` does)
SMALL_SWEEP = 64
COMPILING = "compiling kernels (first run only)"  # battlecalc.kernels.jit.COMPILING
CONNECT_TIMEOUT_S = 10  # to reach a Dask scheduler

_RANGE = re.compile(r"^\s*([+-]?\d+)\s*\.\.\s*([+-]?\d+)\s*(?::\s*(\d+)\s*)?$")
_UNIT_COLUMN = re.compile(rf"^({'|'.join(ARMY_SIDES)})\.(\S+)$")


# ----------------------------------------------------------------------------- reading cells

def _is_empty(value: Any) -> bool:
    if value is None or value is pd.NA:
        return True
    if isinstance(value, float | np.floating):
        return math.isnan(value)
    return isinstance(value, str) and not value.strip()


def _whole(name: str, value: Any) -> int:
    return read_whole(name, value, separators=name == "trials")


def convert(name: str, value: Any) -> Any:
    """A cell read as the type of simulate's keyword `name` (:func:`battlecalc.options.read`);
    None when empty (the default).

    Booleans: true/false, yes/no, y/n, t/f, on/off, 1/0 (any case); whole numbers: 12, 12.0,
    1e5 (trials also 100_000 and 100,000); choices with ``-`` or ``_`` alike; anything else is
    text.
    """
    if _is_empty(value):
        return None
    return read(name, value)


def check_arguments(battles: Any, vary: Any, workers: Any, chunk_size: Any, scheduler: Any,
                    progress: Any) -> None:
    """sweep's own arguments (the sweep seed is _sweep_seed's): BattleInputError if bad."""
    if not isinstance(battles, (pd.DataFrame, str, os.PathLike)) and (
            isinstance(battles, (bytes, Mapping)) or not isinstance(battles, Iterable)):
        raise BattleInputError(
            f"battles must be a DataFrame, the path of a .csv or .parquet file or a list of "
            f"{{column: value}} rows, got {quoted(battles)}")
    if not (isinstance(vary, (str, Mapping)) or (
            isinstance(vary, (list, tuple)) and all(isinstance(v, str) for v in vary))):
        raise BattleInputError(
            f"vary must be KEY=VALUES text, a list of them or a {{key: values}} mapping, "
            f"got {quoted(vary)}")
    for name, value in (("workers", workers), ("chunk_size", chunk_size)):
        if value is not None:
            check_int(name, value, 1)
    if scheduler is not None and not isinstance(scheduler, str) \
            and not hasattr(scheduler, "submit"):
        raise BattleInputError(
            f"scheduler must be a Dask scheduler address or a distributed.Client, got "
            f"{quoted(scheduler)}")
    check_progress(progress, "progress(done, total, what)")


# ----------------------------------------------------------------------------- grid expansion

def _vary_key(key: str) -> str:
    key = key.strip()
    match = _UNIT_COLUMN.match(key)
    if match:
        return f"{match.group(1)}.{match.group(2).lower()}"
    name = key.replace("-", "_").lower()
    if name in _option_types():
        return name
    raise BattleInputError(
        f"--vary {key!r}: expected an option of simulate ({', '.join(_option_types())}) "
        f"or SIDE.UNIT with SIDE one of {', '.join(ARMY_SIDES)}, e.g. attacker.infantry"
    )


def parse_vary(spec: str) -> tuple[str, list[Any]]:
    """``"attacker.infantry=1..20"`` -> ``("attacker.infantry", [1, ..., 20])``.

    KEY=VALUES.  KEY is a keyword of simulate (``trials``, ``retreat-below``, ...) or
    SIDE.UNIT.  VALUES are separated by ``|`` if the text has one, else by commas; an item
    ``A..B`` is the whole numbers A to B inclusive, ``A..B:S`` every S-th of them; an empty
    item means the default.  Ranges are counted before they are listed: more than MAX_ROWS
    values is refused at once.
    """
    key, sep, values = spec.partition("=")
    if not sep or not key.strip():
        raise BattleInputError(
            f"--vary {spec!r}: expected KEY=VALUES, e.g. attacker.infantry=1..20")
    column = _vary_key(key)
    pieces: list[range | str] = []
    count = 0
    for item in values.split("|" if "|" in values else ","):
        match = _RANGE.match(item)
        if match:
            low, high, step = int(match.group(1)), int(match.group(2)), int(match.group(3) or 1)
            if high < low or step < 1:
                raise BattleInputError(f"--vary {spec!r}: empty range {item.strip()!r}")
            pieces.append(range(low, high + 1, step))
            count += len(pieces[-1])
        else:
            pieces.append(item.strip())
            count += 1
    _check_count(column, count)
    items = [v for piece in pieces for v in (piece if isinstance(piece, range) else [piece])]
    return column, _typed_values(f"--vary {spec!r}", column, items)


def _check_count(column: str, count: int) -> None:
    if count > MAX_ROWS:
        raise BattleInputError(
            f"--vary {column}: {count:,} values, more than the {MAX_ROWS:,} battles a sweep "
            "may have")


def _typed_values(where: str, column: str, items: Sequence[Any]) -> list[Any]:
    """Each item read as the column's type (convert; a unit count for SIDE.UNIT)."""
    try:
        if column in _option_types():
            return [convert(column, item) for item in items]
        return [_count(column, item) for item in items]
    except BattleInputError as exc:
        raise BattleInputError(f"{where}: {exc}") from None


def _count(column: str, value: Any) -> int:
    if _is_empty(value):
        raise BattleInputError(f"{column}: expected a unit count, got nothing")
    count = _whole(column, value)
    if count < 0:
        raise BattleInputError(f"{column}: a unit count cannot be negative, got {count}")
    return count


def _mapping_values(key: str, values: Any) -> tuple[str, list[Any]]:
    """One entry of the mapping form of vary: a text is KEY=VALUES's VALUES (split as there);
    any other iterable (a list, a range) holds one value per element, never split."""
    if isinstance(values, str):
        return parse_vary(f"{key}={values}")
    column = _vary_key(str(key))
    if isinstance(values, range):
        _check_count(column, len(values))
        items = list(values)
    elif isinstance(values, Iterable) and not isinstance(values, bytes | Mapping):
        items = list(itertools.islice(values, MAX_ROWS + 1))
        _check_count(column, len(items))
    else:
        items = [values]
    return column, _typed_values(f"vary {key!r}", column, items)


def _vary_grid(vary) -> list[tuple[str, list[Any]]]:
    if isinstance(vary, str):
        vary = [vary]
    if isinstance(vary, Mapping):
        grid = [_mapping_values(key, values) for key, values in vary.items()]
    else:
        grid = [parse_vary(spec) for spec in vary]
    keys = [key for key, _ in grid]
    repeated = sorted({key for key in keys if keys.count(key) > 1})
    if repeated:
        raise BattleInputError(f"--vary {', '.join(repeated)} given more than once")
    return grid


# ----------------------------------------------------------------------------- seeds

def derived_seed(sweep_seed: int, index: int) -> int:
    """The seed of output row `index` when the row gives none: the first 64-bit word of
    ``numpy.random.SeedSequence(sweep_seed, spawn_key=(index,))``, shifted right by one bit."""
    word = np.random.SeedSequence(sweep_seed, spawn_key=(index,)).generate_state(1, np.uint64)
    return int(word[0]) >> 1


def _sweep_seed(seed) -> int:
    if seed is None:
        return fresh_seed()
    # an int, not a float (1234567890123456789.0 is another number) nor text
    return check_int("sweep seed", seed, 0, MAX_SEED, "2**63-1")


# ----------------------------------------------------------------------------- preparing rows

def _prepare(row: dict[str, Any], index: int, sweep_seed: int,
             unit_columns: Sequence[tuple[str, str, str]]) -> dict[str, Any]:
    """Turn one expanded input row into simulate's keywords, in place: option cells become
    typed values (None = default), SIDE.UNIT cells are applied to the armies."""
    kwargs: dict[str, Any] = {}
    errors = []
    for name in _option_types():
        if name in row:
            try:
                row[name] = convert(name, row[name])
            except BattleInputError as exc:
                errors.append(str(exc))
                continue
            if row[name] is not None:
                kwargs[name] = row[name]
    units = []
    for unit in unit_columns:
        if _is_empty(row[unit[0]]):
            row[unit[0]] = None
        else:
            units.append(unit)
    if units:
        try:
            _set_unit_counts(row, kwargs, units)
        except BattleInputError as exc:
            errors.append(str(exc))
    if errors:
        raise BattleInputError("; ".join(errors))
    if "seed" not in kwargs:
        kwargs["seed"] = derived_seed(sweep_seed, index)
    return kwargs


def _set_unit_counts(row: dict[str, Any], kwargs: dict[str, Any], units) -> None:
    """Apply the SIDE.UNIT cells of a row to its armies (row and keywords)."""
    if "rules" not in kwargs:
        raise BattleInputError("rules: an edition is needed to set unit counts")
    ruleset = load_rules(kwargs["rules"])
    armies: dict[str, dict[str, int]] = {}
    for column, side, unit in units:
        if side not in armies:
            armies[side] = parse_army(kwargs.get(side) or "", ruleset)
        name = next(iter(parse_army(f"1 {unit}", ruleset)))
        armies[side][name] = row[column] = _count(column, row[column])
    for side, army in armies.items():
        army = {unit: n for unit, n in army.items() if n}
        row[side] = format_army(army) if army else None
        if army:
            kwargs[side] = row[side]
        else:
            kwargs.pop(side, None)


# ----------------------------------------------------------------------------- running

def run_chunk(jobs: Sequence[tuple[int, dict[str, Any]]]) -> list[tuple[int, dict | None,
                                                                         str | None]]:
    """Run a chunk of battles: ``[(index, kwargs)]`` -> ``[(index, flat_row, error)]``.

    Runs on a worker (a local process or a Dask worker); never raises for a bad battle.  The
    chunk's small exact battles are solved together (battlecalc.batch.solve_rows), the others
    one by one, as simulate solves them.
    """
    rows = solve_rows([kwargs for _, kwargs in jobs])
    return [(index, flat, error) for (index, _), (flat, error) in zip(jobs, rows, strict=True)]


WARM_BATTLE = {"rules": "revised", "attacker": "1 infantry", "defender": "1 infantry",
               "method": "exact"}


def _warm_worker(threads: int) -> None:
    """Worker initializer: share the cores among workers, load the compiled kernels once
    (already loaded in a worker forked from battlecalc/_sweep_server.py)."""
    from .api import set_threads

    set_threads(threads)
    simulate(**WARM_BATTLE)
    solve_rows([WARM_BATTLE])  # (the batch kernel: its own compiled code to load)


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@contextlib.contextmanager
def _saying_compiles(progress):
    """While the block runs in this process: progress(0, 0, "compiling kernels (first run
    only): NAME") as numba compiles each kernel of battlecalc's (a cache miss: not when it
    loads one from its cache), at most once a second, as `run` says it.  Nothing without
    progress, or where kernels stay plain Python."""
    from .kernels import jit

    if progress is None or jit.plain_kernels():
        yield
        return
    from numba.core import event

    said = [0.0]

    class Listener(event.Listener):
        def on_start(self, ev):
            function = getattr(ev.data["dispatcher"], "py_func", None)
            now = time.monotonic()
            if function is None or not jit.in_kernels(function.__code__.co_filename) \
                    or now - said[0] < 1.0:
                return
            said[0] = now
            progress(0, 0, f"{COMPILING}: {function.__name__}")

        def on_end(self, ev):
            pass

    with event.install_listener("numba:compile", Listener()):
        yield


def _pool_compiles() -> bool:
    """Whether worker processes would compile kernels before their first battle (the fork
    server loads every kernel: battlecalc/_sweep_server.py)."""
    from .api import kernels_cold
    from .kernels import jit

    return not jit.plain_kernels() and kernels_cold()


def _run_local(chunks, workers: int, on_done, progress=None) -> None:
    if workers == 1 or len(chunks) == 1:
        with _saying_compiles(progress):
            for chunk in chunks:
                on_done(chunk, run_chunk(chunk), None)
        return
    if progress is not None and _pool_compiles():
        progress(0, 0, COMPILING)
    broken = _run_pool(chunks, workers, on_done)
    # a worker that dies breaks its whole pool: the chunks it took down with it run again,
    # each in a pool of its own, so only the chunk that kills its worker is lost
    for chunk in broken:
        for lost in _run_pool([chunk], 1, on_done):
            on_done(lost, None, "worker process died while running this chunk")


_MAIN_LOCK = threading.Lock()


@contextlib.contextmanager
def _main_hidden():
    """While a worker process starts: a blank ``__main__`` in its place, so that the worker
    does not run the caller's script again (multiprocessing's spawn and fork server re-import
    the main module in each worker, which runs a script without an
    ``if __name__ == "__main__":`` guard a second time, and its sweep() again).  Workers need
    nothing of it: they are sent battlecalc's functions and plain cell values."""
    with _MAIN_LOCK:
        main = sys.modules.get("__main__")
        sys.modules["__main__"] = types.ModuleType("__main__")  # no __file__, no __spec__
        try:
            yield
        finally:
            if main is None:
                sys.modules.pop("__main__", None)
            else:
                sys.modules["__main__"] = main


class _SpawnWorker(_mp.SpawnProcess):
    @staticmethod
    def _Popen(process_obj):
        with _main_hidden():
            return _mp.SpawnProcess._Popen(process_obj)


if hasattr(_mp, "ForkServerProcess"):  # not on Windows
    class _ForkServerWorker(_mp.ForkServerProcess):
        @staticmethod
        def _Popen(process_obj):
            with _main_hidden():
                return _mp.ForkServerProcess._Popen(process_obj)


def _worker_context(method: str):
    """A multiprocessing context of `method` ("forkserver" or "spawn") whose processes start
    with _main_hidden (module-level classes: the process object is pickled to the worker)."""
    import multiprocessing

    context = type(multiprocessing.get_context(method))()
    context.Process = _ForkServerWorker if method == "forkserver" else _SpawnWorker
    return context


def _run_pool(chunks, workers: int, on_done) -> list:
    """Run the chunks on a pool of worker processes; returns those lost when the pool broke."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    # fork is unsafe once threads have run in this process; the fork server loads battlecalc
    # and its kernels once and forks warm workers (battlecalc/_sweep_server.py).  spawn where
    # there is no fork server.
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = _worker_context("forkserver")
        context.set_forkserver_preload(["battlecalc._sweep_server"])
    else:
        context = _worker_context("spawn")
    processes = min(workers, len(chunks))
    threads = max(1, _cpu_count() // processes)
    broken = []
    with ProcessPoolExecutor(processes, mp_context=context, initializer=_warm_worker,
                             initargs=(threads,)) as pool:
        futures = {pool.submit(run_chunk, chunk): chunk for chunk in chunks}
        try:
            for future in as_completed(futures):
                try:
                    on_done(futures[future], future.result(), None)
                except BrokenProcessPool:
                    broken.append(futures[future])
        except BaseException:
            for future in futures:
                future.cancel()
            raise
    return broken


def _dask_client(scheduler):
    """(client, whether this sweep opened it) for an address or a ``distributed.Client``."""
    try:
        from distributed import Client
    except ImportError:
        raise BattleInputError(
            "--scheduler needs the dask and distributed packages: "
            "pip install 'battlecalc[cluster]'"
        ) from None
    if isinstance(scheduler, Client):
        return scheduler, False
    try:
        return Client(scheduler, timeout=f"{CONNECT_TIMEOUT_S}s"), True
    except (OSError, TimeoutError, ValueError) as exc:
        raise BattleInputError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") \
            from None


def _run_dask(chunks, client, on_done) -> None:
    from distributed import as_completed

    futures = client.map(run_chunk, chunks, pure=False)
    chunk_of = {future.key: chunk for future, chunk in zip(futures, chunks, strict=True)}
    try:
        for future in as_completed(futures):
            try:
                out = future.result()
            except Exception as exc:  # noqa: BLE001 - a lost task marks its rows, no more
                on_done(chunk_of[future.key], None, f"cluster task failed: {exc}")
            else:
                on_done(chunk_of[future.key], out, None)
    finally:
        client.cancel(futures)


# ----------------------------------------------------------------------------- the table

def read_battles(path: str | os.PathLike) -> pd.DataFrame:
    """A battles table from ``.csv`` (every cell read as text) or ``.parquet``/``.pq``.

    Read through the one reader of input files (:func:`battlecalc.files.read_regular_file`):
    a regular file of at most MAX_TABLE_BYTES, so that a FIFO, a device (``/dev/zero``) or a
    huge file is refused unread; a table of more than MAX_ROWS rows is refused as it is read
    (CSV) or from its metadata (Parquet), before it is built.

    CSV: empty fields past the header's last column are ignored (rows that end in a comma);
    a row with more fields than that gets an error of its own (in
    ``frame.attrs["row_errors"]``, which :func:`sweep` reports in its ``error`` column) and
    the other rows go on; a column named twice is refused.
    """
    path = os.fspath(path)
    extension = os.path.splitext(path)[1].lower()
    if extension not in SUPPORTED_EXTENSIONS:
        raise BattleInputError(
            f"cannot tell the format of {path}: use a .csv or .parquet file")
    try:
        data = read_regular_file(path, MAX_TABLE_BYTES, "a battles table")
    except FileNotFoundError:
        raise BattleInputError(f"no such file: {path}") from None
    except BattleInputError as exc:  # not a regular file, or too large
        raise BattleInputError(f"cannot read {path}: {exc}") from None
    except OSError as exc:
        raise BattleInputError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        frame = _read_csv(data, path) if extension == ".csv" else _read_parquet(data)
    except BattleInputError:  # a message of its own (_check_columns)
        raise
    except ImportError as exc:
        raise BattleInputError(
            f"reading {path} needs pyarrow: pip install 'battlecalc[parquet]' ({exc})") from None
    except (OSError, ValueError, csv.Error, pd.errors.ParserError) as exc:
        raise BattleInputError(f"cannot read {path}: {' '.join(str(exc).split())}") from None
    _check_columns(frame.columns, path)
    return frame


TOO_MANY_ROWS = f"more than {MAX_ROWS:,} rows (a sweep runs at most {MAX_ROWS:,} battles)"


def _read_parquet(data: bytes) -> pd.DataFrame:
    import pyarrow.parquet as pq

    metadata = pq.ParquetFile(io.BytesIO(data)).metadata  # rows and sizes, before the data
    if metadata.num_rows > MAX_ROWS:
        raise ValueError(TOO_MANY_ROWS)
    inflated = sum(metadata.row_group(i).total_byte_size for i in range(metadata.num_row_groups))
    if inflated > MAX_TABLE_BYTES:
        raise ValueError(f"{inflated:,} bytes of data once decompressed, more than a battles "
                         f"table needs ({MAX_TABLE_BYTES:,} at most)")
    return pd.read_parquet(io.BytesIO(data), dtype_backend="numpy_nullable")


def _read_csv(data: bytes, path: str) -> pd.DataFrame:
    def rows():
        text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", newline="")
        return (row for row in csv.reader(text) if row)  # blank lines skipped, as pandas does

    # the header and MAX_ROWS rows at most: counted first, unkept, where the line ends allow
    # more (rows of 20 bytes in MAX_TABLE_BYTES would be 3 million lists of text)
    if data.count(b"\n") + data.count(b"\r") >= MAX_ROWS + 1 and any(
            count > MAX_ROWS + 1 for count, _ in enumerate(rows(), 1)):
        raise ValueError(TOO_MANY_ROWS)
    lines = list(rows())
    if not lines:
        raise ValueError("the file is empty (a header row naming the columns is needed)")
    header = list(lines[0])
    while header and not header[-1].strip():  # a header ending in commas
        header.pop()
    header = [name if name.strip() else f"Unnamed: {i}" for i, name in enumerate(header)]
    _check_columns(header, path)
    width = len(header)
    rows, row_errors = [], {}
    for number, fields in enumerate(lines[1:]):
        extra = fields[width:]
        if any(field.strip() for field in extra):
            row_errors[number] = (
                f"row {number + 1} of {os.path.basename(path)} has {len(fields)} fields, the "
                f"header {width} (extra: {quoted([f for f in extra if f.strip()])})")
        fields = fields[:width]
        rows.append(fields + [""] * (width - len(fields)))  # a short row: the rest empty
    frame = pd.DataFrame(rows, columns=header, dtype=object)
    if row_errors:
        frame.attrs["row_errors"] = row_errors
    return frame


def _check_columns(columns: Iterable[Any], where: str) -> None:
    names = [str(column) for column in columns]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise BattleInputError(
            f"{where}: column {', '.join(repr(name) for name in twice)} "
            f"{'is' if len(twice) == 1 else 'are'} named more than once in the header")


def check_output(path: str | os.PathLike,
                 inputs: Iterable[str | os.PathLike | None] = ()) -> Destination:
    """Fail early (before a long sweep) on an output path that cannot be written, or that is
    one of `inputs` (the battles table); the checked destination (battlecalc.output: a file is
    replaced atomically, its mode kept, a symlink followed, a FIFO or device written to)."""
    path = os.fspath(path)
    destination = open_destination(path, inputs)
    if _table_format(path, destination) is None:
        raise BattleInputError(f"cannot tell the format of {path}: use a .csv or .parquet file")
    return destination


def _table_format(path: str, destination: Destination) -> str | None:
    """".csv" or ".parquet" by the extension; CSV for standard output, a device or a FIFO
    without one (-o -, /dev/stdout, /dev/null); None: unknown."""
    extension = os.path.splitext(path)[1].lower()
    if extension in SUPPORTED_EXTENSIONS:
        return ".csv" if extension == ".csv" else ".parquet"
    return ".csv" if destination.kind in ("stdout", "through") else None


def write_table(frame: pd.DataFrame, path: str | os.PathLike,
                inputs: Iterable[str | os.PathLike | None] = ()) -> None:
    """Write `frame` as ``.csv`` or ``.parquet``/``.pq`` (``-``: CSV on standard output),
    whole or not at all, through the one writer of battlecalc.output."""
    path = os.fspath(path)
    destination = check_output(path, inputs)
    try:
        if _table_format(path, destination) == ".csv":
            destination.write_bytes(frame.to_csv(index=False).encode("utf-8"))
            return
        buffer = io.BytesIO()  # pyarrow may seek: a FIFO or device gets the finished bytes
        _arrow_ready(frame).to_parquet(buffer, index=False)
    except ImportError as exc:
        raise BattleInputError(
            f"writing {path} needs pyarrow: pip install 'battlecalc[parquet]' ({exc})") from None
    except OSError as exc:
        raise BattleInputError(f"cannot write {path}: {exc.strerror or exc}") from None
    destination.write_bytes(buffer.getvalue())


def _arrow_ready(frame: pd.DataFrame) -> pd.DataFrame:
    """Object columns that mix kinds of values (a label column, an input cell that failed to
    convert next to typed ones) are written as text."""
    import pyarrow as pa

    fixed = {}
    for name in frame.columns:
        if frame[name].dtype != object:
            continue
        try:
            pa.array(frame[name], from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError):
            fixed[name] = frame[name].map(lambda v: None if _is_empty(v) and not isinstance(
                v, str) else str(v))
    return frame.assign(**fixed) if fixed else frame


def sweep(
    battles: pd.DataFrame | str | os.PathLike | Iterable[Mapping[str, Any]],
    vary: Sequence[str] | Mapping[str, Iterable[Any]] | str = (),
    *,
    seed: int | None = None,
    workers: int | None = None,
    scheduler: Any = None,
    chunk_size: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> pd.DataFrame:
    """Odds of many battles: one output row per battle, in input order.

    battles: a DataFrame, a ``.csv``/``.parquet`` path or a list of dicts; each row is a
    battle, a column per keyword of :func:`battlecalc.simulate` (empty = default), other
    columns are labels.  A column ``SIDE.UNIT`` (``attacker.infantry``) sets that unit's
    count in that army.  vary: ``["attacker.infantry=1..20", "trials=1e4,1e5"]`` or
    ``{"attacker.infantry": range(1, 21)}``; each input row becomes one row per combination
    (the last key varying fastest).  seed: the sweep seed from which rows without a seed get
    :func:`derived_seed` (default: random, in ``frame.attrs["seed"]``).  workers: local worker
    processes (default: the CPU count, or this process alone for at most SMALL_SWEEP battles;
    1 runs in this process).  scheduler: a Dask scheduler
    address or ``distributed.Client``, instead of local workers.  chunk_size: battles per task.
    progress: called as progress(done, total, "battles") after each chunk, and as
    progress(0, 0, "compiling kernels (first run only)[: kernel]") while kernels compile.

    Returns the input columns (option cells typed; for a battle that ran, the result's value,
    e.g. the army spelled out, the method used, the seed used), the result columns of
    :meth:`Result.flat_row`, and ``error`` (None, or why the row has no result).
    Raises BattleInputError for a bad table, --vary or file.  ``frame.attrs["timing_s"]``
    holds the seconds spent preparing rows, running battles and assembling the table.
    """
    started = time.perf_counter()
    check_arguments(battles, vary, workers, chunk_size, scheduler, progress)
    if isinstance(battles, pd.DataFrame):
        frame = battles
    elif isinstance(battles, str | os.PathLike):
        frame = read_battles(battles)
    else:
        frame = pd.DataFrame(list(battles))
    _check_columns(frame.columns, "battles")
    grid = _vary_grid(vary)
    sweep_seed = _sweep_seed(seed)

    total = len(frame) * math.prod(len(values) for _, values in grid)  # counted, not built
    if total > MAX_ROWS:
        raise BattleInputError(
            f"the sweep has {total:,} battles after --vary, more than {MAX_ROWS:,}")
    base_rows = frame.astype(object).to_dict("records")  # plain values, fast to iterate
    combos = list(itertools.product(*(values for _, values in grid)))
    input_columns = [str(c) for c in frame.columns if str(c) != "error"]
    input_columns += [key for key, _ in grid if key not in input_columns]
    if "rules" not in input_columns:
        raise BattleInputError("battles need a 'rules' column (or --vary rules=...)")
    rows: list[dict[str, Any]] = []
    for base in base_rows:
        base = {str(k): v for k, v in base.items()}
        for combo in combos:
            row = dict(base)
            row.update(zip((key for key, _ in grid), combo, strict=True))
            rows.append(row)

    errors: list[str | None] = [None] * total
    results: list[dict | None] = [None] * total
    jobs = []
    unit_columns = [(column, m.group(1), m.group(2)) for column in input_columns
                    if (m := _UNIT_COLUMN.match(column))]
    row_errors = frame.attrs.get("row_errors", {})  # rows read_battles could not read
    for index, row in enumerate(rows):
        if row_errors and index // len(combos) in row_errors:
            errors[index] = row_errors[index // len(combos)]
            continue
        try:
            jobs.append((index, _prepare(row, index, sweep_seed, unit_columns)))
        except BattleInputError as exc:
            errors[index] = str(exc)

    prepared = time.perf_counter()
    if jobs:
        client = own_client = None
        if scheduler is not None:
            client, own_client = _dask_client(scheduler)
            slots = max(1, sum(client.nthreads().values()))
        else:
            if workers is None:  # a small sweep: in this process (SMALL_SWEEP)
                workers = 1 if len(jobs) <= SMALL_SWEEP else _cpu_count()
            workers = int(workers)
            slots = workers
        size = int(chunk_size) if chunk_size else max(1, min(MAX_CHUNK, -(-len(jobs) // (
            4 * slots))))
        chunks = [jobs[i:i + size] for i in range(0, len(jobs), size)]
        done = total - len(jobs)
        if progress:
            progress(done, total, "battles")

        def on_done(chunk, out, failure):
            nonlocal done
            if failure is not None:
                for index, _ in chunk:
                    errors[index] = failure
            else:
                for index, flat, error in out:
                    results[index], errors[index] = flat, error
            done += len(chunk)
            if progress:
                progress(done, total, "battles")

        if client is None:
            _run_local(chunks, workers, on_done, progress)
        else:
            try:
                _run_dask(chunks, client, on_done)
            finally:
                if own_client:
                    client.close()

    ran = time.perf_counter()
    result_columns: dict[str, None] = {}
    for flat in results:
        if flat is not None:
            result_columns.update(dict.fromkeys(flat))
    columns = input_columns + [c for c in result_columns if c not in input_columns]
    # an input that is an earlier output: a row that fails now keeps no earlier result
    stale = dict.fromkeys(c for c in result_columns if c in input_columns
                          and c not in _option_types())
    merged = [{**row, **flat} if flat is not None else {**row, **stale} if stale else row
              for row, flat in zip(rows, results, strict=True)]
    out = pd.DataFrame(merged, columns=columns, dtype=object)
    out = pd.DataFrame({name: _typed(out[name]) for name in columns})
    out["error"] = pd.Series(errors, dtype=object)
    out.attrs["seed"] = sweep_seed
    out.attrs["timing_s"] = {"prepare": prepared - started, "run": ran - prepared,
                             "assemble": time.perf_counter() - ran}
    return out


def option_lookalikes(columns: Iterable[str]) -> list[str]:
    """Notes for label columns named almost like an option (``atacker_ool``): likely typos."""
    import difflib

    notes = []
    for column in columns:
        name = str(column)
        if name in _option_types() or _UNIT_COLUMN.match(name):
            continue
        close = difflib.get_close_matches(name.replace("-", "_").lower(), list(_option_types()),
                                          n=1, cutoff=0.85)
        if close:
            notes.append(f"column {name!r} is not an option of simulate (did you mean "
                         f"{close[0]!r}?); it is passed through as a label")
    return notes
